"""Every file and folder a `perfprof` command writes follows one rule (issue 34): files 0640 and
folders 0750 whatever the umask, PERFPROF_FILE_MODE to choose another mode.

Each subcommand runs as a user's shell runs it, under the umask 022 (which leaves a plain
``open()`` or a library's file 0644, readable by everyone), on small real runs; then every path
under its output folders is walked. The inputs the test writes itself live apart (``inputs/``).
"""
from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from cli_workspace import Workspace, run_dirs

PRIVATE = {("dir", 0o750), ("file", 0o640)}


def modes(*roots: Path) -> Dict[Tuple[str, int], List[str]]:
    """Every path under `roots` (roots included), by (kind, mode)."""
    found: Dict[Tuple[str, int], List[str]] = {}
    for root in roots:
        for folder, _, files in os.walk(root):
            found.setdefault(("dir", stat.S_IMODE(os.lstat(folder).st_mode)), []).append(folder)
            for name in files:
                path = os.path.join(folder, name)
                found.setdefault(("file", stat.S_IMODE(os.lstat(path).st_mode)), []).append(path)
    return found


def assert_private(*roots: Path, expected: Set[Tuple[str, int]] = PRIVATE) -> None:
    """Everything under `roots` has the modes `expected`; none is open to others."""
    assert [root for root in roots if not root.is_dir()] == []
    found = modes(*roots)
    wrong = {kind_mode: paths[:3] for kind_mode, paths in found.items() if kind_mode not in expected}
    assert wrong == {}, "\n".join(f"{kind} {mode:04o}: {paths}" for (kind, mode), paths in wrong.items())


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> Path:
    """The plain runs (a Chrome trace, no database) of a job's two ranks, written under the umask
    022 into one folder (beside `perfprof run`'s log/ folder)."""
    return Workspace(tmp_path_factory.mktemp("runs")).two_rank_job()


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace(tmp_path)


def test_perfprof_run_with_auto_plot_logs_and_its_run_report(workspace):
    config = workspace.inputs / "profiler_config.json"
    config.write_text(json.dumps({"start_step": -1, "active": 2, "prof_dir": str(workspace.root / "out"),
                                  "analyse": True, "activities": ["CPU"], "plot": {"top_n": 3}}))
    workspace.perfprof("run", "-o", "logs", "--steps-on", "explicit", "--config", str(config),
                       "--run-report", "run_report.json", str(workspace.inputs / "job.py"))
    (run_dir,) = (workspace.root / "out").glob("*_perfprof")
    assert (run_dir / "plots" / "perfprof_plot.log").is_file() and (run_dir / ".perfprof-plot-config.yaml").is_file()
    assert stat.S_IMODE((workspace.root / "run_report.json").stat().st_mode) == 0o640
    assert_private(workspace.root / "out", workspace.root / "logs")  # logs/log: dynamic profiling's


def test_perfprof_analyse(workspace):
    out = workspace.run("captures", "--no-analyse")
    workspace.perfprof("analyse", str(out))
    assert list(out.glob("*_perfprof/PERFPROF_OUTPUT/*.pt.trace.json"))
    assert_private(out)


def test_perfprof_summary_of_a_run_and_of_a_trace_file(workspace, runs):
    copy = workspace.copy(runs, "runs")
    run_dir = run_dirs(copy)[0]
    workspace.perfprof("summary", str(run_dir))
    assert list(run_dir.glob("PERFPROF_OUTPUT/perfprof*.db"))  # built from the trace
    (trace,) = (run_dirs(runs)[1] / "PERFPROF_OUTPUT").glob("*.pt.trace.json")
    workspace.perfprof("summary", str(trace))
    assert list(workspace.cache.rglob("*.db"))  # the trace's database, in the import cache
    assert_private(copy, workspace.cache)


def test_perfprof_plot_of_one_run_and_of_several(workspace, runs):
    copy = workspace.copy(runs, "runs")
    run_dir = run_dirs(copy)[0]
    workspace.perfprof("plot", str(run_dir))
    workspace.perfprof("plot", str(copy), "-o", "compared/plots")
    assert list((run_dir / "plots").glob("*.png")) and list((workspace.root / "compared" / "plots").glob("*.png"))
    assert (workspace.home / ".perfprof" / "plot_config.yaml").is_file()
    assert_private(copy, workspace.root / "compared", workspace.home / ".perfprof")


def test_perfprof_compare(workspace, runs):
    copy = workspace.copy(runs, "runs")
    base, new = run_dirs(copy)
    workspace.perfprof("compare", str(base), str(new), "--csv")
    assert list(base.glob("PERFPROF_OUTPUT/perfprof*.db")) and list(new.glob("PERFPROF_OUTPUT/perfprof*.db"))
    assert_private(copy)


def test_perfprof_report(workspace, runs):
    copy = workspace.copy(runs, "runs")
    workspace.perfprof("report", str(run_dirs(copy)[0]), "-o", "reports/run.html")
    assert (workspace.root / "reports" / "run.html").is_file()
    assert_private(copy, workspace.root / "reports")


def test_perfprof_sweep_and_aggregate(workspace):
    workspace.perfprof("sweep", "-g", "N=1,2", "--verify", "--run-options", "--steps-on explicit --activities cpu",
                       "-o", "sweep", str(workspace.inputs / "sweep_job.py"))
    sweep = workspace.root / "sweep"
    assert list(sweep.glob("runs/*/outputs/result.npy")) and list(sweep.glob("logs/*.log"))
    assert list(sweep.glob("runs/*/run_report.json"))
    assert_private(sweep)
    workspace.perfprof("aggregate", str(sweep / "results.jsonl"), "--baseline", "N=1", "--format", "png",
                       "-o", "dashboard/today")
    assert sorted(p.name for p in (workspace.root / "dashboard" / "today").iterdir()) == [
        "metric_report.csv", "speedup.png", "speedups.csv", "verification.csv"]
    assert_private(workspace.root / "dashboard")


def test_perfprof_cluster(workspace, runs):
    copy = workspace.copy(runs, "runs")
    workspace.perfprof("cluster", str(copy), "--merge-trace", "-j", "2")
    output = copy / "cluster_analysis_output"
    assert (output / "cluster_analysis.duckdb").is_file() and list(output.glob("ranks/*/*.parquet"))
    assert (output / "cluster_report.md").is_file() and (output / "cluster_trace.json.gz").is_file()
    assert_private(copy)
    workspace.perfprof("cluster", str(copy), "-o", "elsewhere/cluster")
    assert_private(workspace.root / "elsewhere")


def test_perfprof_file_mode_applies_to_every_command(tmp_path, runs):
    workspace = Workspace(tmp_path, PERFPROF_FILE_MODE="0600")
    copy = workspace.copy(runs, "runs")
    for path in [copy, *copy.rglob("*")]:
        os.chmod(path, 0o700 if path.is_dir() else 0o600)
    workspace.perfprof("cluster", str(copy), "-j", "1")
    workspace.perfprof("plot", str(copy), "-o", "plots")
    workspace.perfprof("sweep", "-g", "N=1,2", "--run-options", "--steps-on explicit --activities cpu",
                       "-o", "sweep", str(workspace.inputs / "sweep_job.py"))
    workspace.perfprof("aggregate", str(workspace.root / "sweep" / "results.jsonl"), "--baseline", "N=1",
                       "--format", "svg")
    assert_private(copy, workspace.root / "plots", workspace.root / "sweep", workspace.home / ".perfprof",
                   expected={("dir", 0o700), ("file", 0o600)})
