"""perfprof sweep: a grid of configurations run under perfprof run, one results.jsonl line per run,
failures recorded while the sweep goes on, resume, timeouts, skips and filters."""
from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import pytest

from perfprof import analysis
from perfprof.analysis._run_labels import run_labels
from perfprof.experiments import FAIL, PASS, SKIP, TIMEOUT, RunRecord, aggregate, parse_baseline, read_results
from perfprof.plots._catalogue import step_times_with_median
from perfprof.experiments._grid import configurations, parse_grid, substituted

# A small CPU training loop: BATCH from {BATCH} in its arguments, COMPILE from the environment;
# batch 0 raises (a configuration that fails).
TRAIN = textwrap.dedent("""
    import argparse, os
    import torch

    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, required=True)
    args = parser.parse_args()
    if args.batch == 0:
        raise RuntimeError("batch 0 is not supported")
    print("config", os.environ["BATCH"], os.environ["COMPILE"], flush=True)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 1))
    if os.environ["COMPILE"] == "1":
        model = torch.compile(model, backend="aot_eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        model(torch.randn(args.batch, 16)).pow(2).mean().backward()
        optimizer.step()
        optimizer.zero_grad()
""")


def perfprof(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perfprof", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def gone_within(pid: int, seconds: float) -> bool:
    """Whether process `pid` has ended (no such process, or a zombie) within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def lines_of(path: Path) -> list:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_a_2x2_grid_with_two_repeats_passes_eight_runs_then_resume_runs_nothing(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    args = ("sweep", "--grid", "BATCH=4,8", "--grid", "COMPILE=0,1", "--repeat", "2", "-o", "out",
            "train.py", "--batch", "{BATCH}")
    result = perfprof(*args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    results = tmp_path / "out" / "results.jsonl"
    records = read_results([str(results)])
    assert [(r.config, r.repeat, r.status) for r in records] == [
        ({"BATCH": batch, "COMPILE": compile_}, repeat, PASS)
        for batch in ("4", "8") for compile_ in ("0", "1") for repeat in (0, 1)]
    assert "8 run(s): 8 PASS, 0 FAIL, 0 TIMEOUT, 0 SKIP" in result.stderr
    for record in records:
        assert record.workload == "train.py --batch {BATCH}"
        assert len({r.timestamp for r in records}) == 1  # one sweep, one timestamp
        # A run directory per run, its steps: three optimizer steps, the first (--warmup 1, the
        # default) counted as start-up; the statistics are the run's step_statistics.
        assert record.run_dir and os.path.isdir(tmp_path / record.run_dir)
        assert len(record.step_times_ns) == 2 and record.warmup_steps == 1
        with analysis.open_run(str(tmp_path / record.run_dir)) as run:
            assert record.step_times_ns == [row["duration_ns"] for row in analysis.step_times(run)]
            (statistics,) = analysis.step_statistics(run).to_dicts()
        assert (record.mean_step_ns, record.median_step_ns, record.p5_step_ns, record.p95_step_ns,
                record.std_step_ns, record.startup_ns, record.tail_ns, record.compile_time_ns) == (
            statistics["avg_ns"], statistics["median_ns"], statistics["p5_ns"], statistics["p95_ns"],
            statistics["stddev_ns"], statistics["startup_ns"], statistics["tail_ns"], statistics["compile_ns"])
        assert record.mean_step_ns == pytest.approx(sum(record.step_times_ns) / 2)
        assert record.peak_host_bytes > 10 << 20
        # TorchDynamo's compile time when it compiled, else the labelled first-step excess.
        assert record.compile_source == ("dynamo" if record.config["COMPILE"] == "1" else "first_step_excess")
        # The configuration reached the script: environment and {BATCH}.
        log = tmp_path / "out" / "logs" / f"{record.fingerprint}-r{record.repeat}.log"
        assert f"config {record.config['BATCH']} {record.config['COMPILE']}" in log.read_text()
    assert len({r.fingerprint for r in records}) == 4

    # The sweep's lines are what aggregate and compare read.
    table = perfprof("aggregate", "out/results.jsonl", "--baseline", "COMPILE=0", "--report", "table",
                     "--min-speedup", "0", "--min-compression", "0", cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert table.stdout.count("100%, 4/4") == 2  # both series, every run passed
    metrics = (tmp_path / "out" / "metric_report.csv").read_text().splitlines()
    assert [line.split(",")[:4] for line in metrics[1:]] == [["COMPILE=0", records[0].timestamp, "2", "0"],
                                                             ["COMPILE=1", records[0].timestamp, "2", "0"]]
    eager, compiled = (f"out/results.jsonl:{r.fingerprint}" for r in records if r.config["BATCH"] == "4"
                       and r.repeat == 0)
    compared = perfprof("compare", eager, compiled, "--csv", "--top", "1000", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    assert records[0].run_dir in compared.stdout and "\naten::addmm," in compared.stdout
    # torch.compile's own ranges are operators of the compiled run only.
    assert "\n_compile.compile_inner (dynamo_timed),,,," in compared.stdout
    same_everywhere(tmp_path, compared.stdout, [r for r in records if r.config["BATCH"] == "4" and r.repeat == 0])

    again = perfprof(*args, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "resume: 8 run(s) already in" in again.stderr and "0 run(s)" in again.stderr
    assert len(lines_of(results)) == 8

    fresh = perfprof(*args[:-3], "--no-resume", "--filter", "BATCH=4,COMPILE=0", *args[-3:], cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    appended = read_results([str(results)])[8:]
    assert [(r.config, r.status) for r in appended] == [({"BATCH": "4", "COMPILE": "0"}, PASS)] * 2
    assert appended[0].timestamp >= records[0].timestamp


def test_a_configuration_that_raises_is_recorded_fail_and_the_sweep_goes_on(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN)
    result = perfprof("sweep", "--grid", "BATCH=0,4", "--grid", "COMPILE=0", "-o", "out", "train.py",
                      "--batch", "{BATCH}", cwd=tmp_path)
    assert result.returncode == 1  # a run failed
    failed, passed = read_results([str(tmp_path / "out" / "results.jsonl")])
    assert failed.status == FAIL and failed.config == {"BATCH": "0", "COMPILE": "0"}
    assert failed.error.startswith("exit code 1:") and "RuntimeError: batch 0 is not supported" in failed.error
    assert failed.step_times_ns == [] and failed.mean_step_ns is None
    assert passed.status == PASS and passed.config["BATCH"] == "4"
    assert "1 FAIL" in result.stderr


def test_a_failed_runs_long_output_is_cut_in_its_record_and_kept_whole_in_its_log(tmp_path):
    (tmp_path / "noisy.py").write_text("import sys\nprint('x' * 100_000)\nsys.exit(3)\n")
    result = perfprof("sweep", "-o", "out", "noisy.py", cwd=tmp_path)
    assert result.returncode == 1
    (failed,) = read_results([str(tmp_path / "out" / "results.jsonl")])
    # The line cut to 300 characters: its first 278, then what says how long it was.
    assert failed.error == "exit code 3:\n" + "x" * 278 + "… (100,000 characters)"
    (log,) = (tmp_path / "out" / "logs").iterdir()
    assert "x" * 100_000 + "\n" in log.read_text()
    assert f"FAIL (no grid) #1: {'x' * 278}… (100,000 characters)" in " ".join(result.stderr.split())
    assert len(result.stderr) < 1_000


def test_timeout_kills_the_run_and_exit_77_skips_it(tmp_path):
    (tmp_path / "slow.py").write_text(textwrap.dedent("""
        import os, subprocess, sys, time
        if os.environ["MODE"] == "skip":
            print("needs a GPU")
            sys.exit(77)
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        open("child.pid", "w").write(str(child.pid))
        time.sleep(600)
    """))
    result = perfprof("sweep", "--grid", "MODE=skip,hang", "--timeout", "5", "-o", "out", "slow.py", cwd=tmp_path,
                      timeout=120)
    assert result.returncode == 1
    skipped, hung = read_results([str(tmp_path / "out" / "results.jsonl")])
    assert skipped.status == SKIP and "exit code 77" in skipped.error and "needs a GPU" in skipped.error
    assert hung.status == TIMEOUT and hung.error.startswith("timed out after 5 s")
    # What the run started went with it (killed with its process group: gone, or a zombie
    # waiting for init to reap it, within moments).
    assert gone_within(int((tmp_path / "child.pid").read_text()), seconds=10)


def test_bad_options_are_usage_errors_naming_the_problem(tmp_path):
    for grid, message in (("BATCH", "is not NAME=VALUE"), ("1X=1,2", "environment variable's name"),
                          ("B=1,,2", "empty value"), ("B=1,1", "repeats a value")):
        result = perfprof("sweep", "--grid", grid, "-o", "out", "train.py", cwd=tmp_path)
        assert result.returncode == 2 and message in result.stderr, (grid, result.stderr)
    result = perfprof("sweep", "--filter", "(", "train.py", cwd=tmp_path)
    assert result.returncode == 2 and "--filter '(' is not a regular expression" in result.stderr


def csv_block(text: str, name: str) -> List[Dict[str, str]]:
    """The rows of block `name` of perfprof compare --csv's output."""
    lines = text.split(f"# {name}\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return list(csv.DictReader(lines))


def same_everywhere(tmp_path: Path, compare_csv: str, records: List[RunRecord]) -> None:
    """One run's step statistics read the same in results.jsonl, compare, aggregate, summary
    --format json and the step_times plot's data; runs are named by their configuration."""
    eager, compiled = records
    steps = {row["step"]: row for row in csv_block(compare_csv, "steps")}
    for record, column in ((eager, "base_duration_ns"), (compiled, "new_duration_ns")):
        for row, value in (("mean", record.mean_step_ns), ("median", record.median_step_ns),
                           ("p5", record.p5_step_ns), ("p95", record.p95_step_ns)):
            assert float(steps[row][column]) == pytest.approx(value, rel=1e-12), (row, column)
    assert [row["name"] for row in csv_block(compare_csv, "runs")] == ["BATCH=4,COMPILE=0", "BATCH=4,COMPILE=1"]
    (baseline_speedup, speedup) = aggregate(records, parse_baseline("COMPILE=0")).speedups
    assert (speedup.baseline_mean_ns, speedup.mean_ns) == pytest.approx((eager.mean_step_ns, compiled.mean_step_ns),
                                                                        rel=1e-12)
    summary = perfprof("summary", eager.run_dir, "--format", "json", "--analysis", "step_statistics", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    table = json.loads(summary.stdout)["analyses"]["step_statistics"]
    (row,) = [dict(zip(table["columns"], values)) for values in table["rows"]]
    assert (row["avg_ns"], row["median_ns"], row["p5_ns"], row["p95_ns"], row["stddev_ns"]) == (
        eager.mean_step_ns, eager.median_step_ns, eager.p5_step_ns, eager.p95_step_ns, eager.std_step_ns)
    with analysis.open_run(str(tmp_path / eager.run_dir)) as run:
        assert set(step_times_with_median(run).column("median_ns")) == {eager.median_step_ns}
        assert run_labels([run]) == ["BATCH=4,COMPILE=0, repeat 0"]


def test_grid_expansion_and_substitution():
    dimensions = parse_grid(["A=1,2", "B=x,y,z"])
    assert configurations(dimensions) == [{"A": a, "B": b} for a in "12" for b in "xyz"]
    assert configurations([]) == [{}]
    with pytest.raises(ValueError, match="given twice"):
        parse_grid(["A=1", "A=2"])
    assert substituted(["--a", "{A}", "{A}-{B}", "{C}", "{{A}}"], {"A": "1", "B": "x"}) == [
        "--a", "1", "1-x", "{C}", "{1}"]
