"""Runs named by what tells them apart (a sweep's configuration and repeat, the rank, the folder),
not by their vm_PID_timestamp directory names, in multi-run plots and perfprof compare."""
from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Dict, List

import perfprof
from perfprof.analysis import open_run
from perfprof.analysis._run_labels import SWEEP_CONFIG_KEY, SWEEP_REPEAT_KEY, run_labels
from perfprof.experiments import compare_runs


def profiled(directory: Path, metadata: Dict[str, str]) -> str:
    """Two profiled steps into a run directory of `directory`, with `metadata` added."""
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    handler = perfprof.tensorboard_trace_handler(str(directory), worker_name="vm_1")
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          schedule=perfprof.schedule(wait=0, active=2, repeat=1), on_trace_ready=handler) as prof:
        for key, value in metadata.items():
            prof.add_metadata(key, value)
        for _ in range(2):
            with perfprof.record_function("work"):
                pass
            prof.step()
    (run_dir,) = directory.glob("*_perfprof")
    return str(run_dir)


def labels_of(run_dirs: List[str]) -> List[str]:
    with contextlib.ExitStack() as opened:
        return run_labels([opened.enter_context(open_run(path)) for path in run_dirs])


def sweep_run(root: Path, fingerprint: str, config: str, repeat: int) -> str:
    return profiled(root / "runs" / f"{fingerprint}-r{repeat}",
                    {SWEEP_CONFIG_KEY: config, SWEEP_REPEAT_KEY: str(repeat)})


def test_sweep_runs_are_named_by_their_configuration_then_repeat(tmp_path):
    runs = [sweep_run(tmp_path, "a1", "batch=8,compile=0", 0), sweep_run(tmp_path, "b2", "batch=8,compile=1", 0)]
    assert labels_of(runs) == ["batch=8,compile=0", "batch=8,compile=1"]
    runs.append(sweep_run(tmp_path, "b2", "batch=8,compile=1", 1))
    assert labels_of(runs) == ["batch=8,compile=0, repeat 0", "batch=8,compile=1, repeat 0",
                               "batch=8,compile=1, repeat 1"]


def test_runs_without_facts_are_named_by_their_folder_then_their_directory(tmp_path):
    runs = [profiled(tmp_path / "baseline", {}), profiled(tmp_path / "fused" / "attempt", {})]
    assert labels_of(runs) == ["baseline", "fused/attempt"]


def test_runs_of_one_folder_keep_their_directory_names(tmp_path):
    (tmp_path / "one").mkdir()
    runs = []
    for worker in ("vm_1_2026", "vm_2_2026"):
        run = tmp_path / "one" / f"{worker}_perfprof"
        Path(profiled(tmp_path / worker, {})).rename(run)
        runs.append(str(run))
    assert labels_of(runs) == ["vm_1_2026", "vm_2_2026"]


def test_compare_names_the_runs_by_their_configuration(tmp_path):
    base = sweep_run(tmp_path, "a1", "compile=0", 0)
    new = sweep_run(tmp_path, "b2", "compile=1", 0)
    comparison = compare_runs(base, [new])
    assert [(run.label, run.name) for run in comparison.runs] == [("base", "compile=0"), ("new", "compile=1")]
    assert comparison.runs_table().column("name") == ["compile=0", "compile=1"]
    assert "- **new** (compile=1): `" in comparison.to_markdown()


def test_ranks_of_one_job_are_named_by_rank(tmp_path, monkeypatch):
    runs = []
    for rank in range(2):
        monkeypatch.setenv("RANK", str(rank))
        monkeypatch.setenv("WORLD_SIZE", "2")
        runs.append(profiled(tmp_path / f"rank{rank}", {}))
    assert labels_of(runs) == ["rank 0", "rank 1"]
