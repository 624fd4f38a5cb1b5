"""What `perfprof cluster` leaves when it fails, and how it says so (issue 34): an analysis that
fails at any stage leaves no part of itself and an earlier analysis's outputs as they were; a
thousand run directories that cannot be read make a message of a few lines, not one line of
100 KB."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Dict

import pytest

from cli_workspace import Workspace, run_dirs

pytest.importorskip("duckdb")

BROKEN_RUNS = 300


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """A two-rank job, read-only for the tests: each copies it."""
    return Workspace(tmp_path_factory.mktemp("job")).two_rank_job()


@pytest.fixture
def workspace(tmp_path) -> Workspace:
    return Workspace(tmp_path)


def contents(folder: Path) -> Dict[str, bytes]:
    """Every file under `folder` by its relative path, with its bytes."""
    return {str(path.relative_to(folder)): path.read_bytes() for path in sorted(folder.rglob("*")) if path.is_file()}


def temporaries(folder: Path) -> list:
    return [path.name for path in folder.iterdir() if ".tmp" in path.name]


def break_runs(folder: Path, count: int) -> None:
    """`count` run directories under `folder` whose database is not one."""
    for index in range(count):
        output = folder / f"broken{index:04d}_perfprof" / "PERFPROF_OUTPUT"
        output.mkdir(parents=True)
        (output / "perfprof.db").write_bytes(b"not a database")


def test_a_failure_in_the_reduce_step_leaves_the_earlier_outputs_as_they_were(workspace, job):
    copy = workspace.copy(job, "job")
    workspace.perfprof("cluster", str(copy), "-j", "1")
    output = copy / "cluster_analysis_output"
    before = contents(output)
    assert {"cluster_analysis.duckdb", "cluster_report.md", "cluster_step_trace_time.csv"} <= set(before)
    # A second copy of rank 0's run: the map step reads it, the reduce step refuses the clash.
    shutil.copytree(run_dirs(copy)[0], copy / "again_perfprof")
    failed = workspace.perfprof("cluster", str(copy), "-j", "1", expect=1)
    assert "rank 0 has step 1 in 2 run directories" in failed.stderr
    assert contents(output) == before
    assert temporaries(copy) == []


def test_a_failed_analysis_into_a_new_folder_leaves_no_folder(workspace, job):
    copy = workspace.copy(job, "job")
    shutil.copytree(run_dirs(copy)[0], copy / "again_perfprof")
    workspace.perfprof("cluster", str(copy), "-o", "analysis", expect=1)
    assert not (workspace.root / "analysis").exists() and temporaries(workspace.root) == []


def test_a_failure_in_the_last_stage_leaves_the_earlier_outputs_as_they_were(workspace, job, monkeypatch):
    from perfprof.cluster import _merged_trace, analyse_cluster

    copy = workspace.copy(job, "job")
    first = analyse_cluster(copy, jobs=1, merge_trace=True)
    before = contents(Path(first.output_dir))
    assert "cluster_trace.json.gz" in before

    def full_disk(*arguments: object, **keywords: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_merged_trace, "write_merged_trace", full_disk)
    with pytest.raises(OSError, match="No space left"):
        analyse_cluster(copy, jobs=1, merge_trace=True)
    assert contents(Path(first.output_dir)) == before and temporaries(copy) == []


def test_an_analysis_replaces_only_its_own_outputs(workspace, job):
    copy = workspace.copy(job, "job")
    output = workspace.root / "analysis"
    output.mkdir()
    (output / "notes.txt").write_text("the user's")
    workspace.perfprof("cluster", str(copy), "-o", str(output), "--merge-trace")
    workspace.perfprof("cluster", str(copy), "-o", str(output))  # no merged trace this time
    assert sorted(path.name for path in output.iterdir()) == [
        "cluster_analysis.duckdb", "cluster_communication.json", "cluster_communication_matrix.json",
        "cluster_report.md", "cluster_step_trace_time.csv", "notes.txt", "ranks"]
    assert (output / "notes.txt").read_text() == "the user's"


def test_the_folder_an_analysis_killed_while_writing_left_is_removed_by_the_next(workspace, job):
    copy = workspace.copy(job, "job")
    killed = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = copy / f"cluster_analysis_output.tmp{int(killed.stdout)}-abcd1234"
    (left / "ranks").mkdir(parents=True)
    (left / "ranks" / "run_00000.parquet").write_bytes(b"half")
    workspace.perfprof("cluster", str(copy))
    assert not left.exists() and temporaries(copy) == []


def test_a_thousand_unreadable_runs_fail_in_a_few_lines(workspace):
    folder = workspace.root / "broken"
    break_runs(folder, BROKEN_RUNS)
    result = workspace.perfprof("cluster", str(folder), "-j", "1", expect=1)
    lines = result.stderr.strip().splitlines()
    first = sorted(str(path) for path in folder.iterdir())[:5]
    assert lines[:5] == [f"failed {path}: file is not a database" for path in first]
    assert lines[5] == "failed more run directories: counted at the end"
    error = " ".join(" ".join(lines[6:]).split())  # the terminal wraps it
    assert error == (f"Error: no run directory with recorded steps could be read ({BROKEN_RUNS} found): "
                     + "; ".join(f"left out {path}: file is not a database" for path in first)
                     + f"; … and {BROKEN_RUNS - 5} more")
    assert not (folder / "cluster_analysis_output").exists() and temporaries(folder) == []


def test_the_runs_left_out_are_counted_on_the_terminal_and_listed_in_the_report(workspace, job):
    copy = workspace.copy(job, "job")
    break_runs(copy, BROKEN_RUNS)
    result = workspace.perfprof("cluster", str(copy), "-j", "1", expect=1)
    left_out = [line for line in result.stdout.splitlines() if line.lstrip(" •-").startswith("left out")]
    assert len(left_out) == 5
    assert f"… and {BROKEN_RUNS - 5} more: cluster_report.md lists every one" in result.stdout
    report = (copy / "cluster_analysis_output" / "cluster_report.md").read_text()
    assert sum(line.startswith("- left out ") for line in report.splitlines()) == BROKEN_RUNS
    assert "2 ranks (world size 2)" in report


def test_the_ranks_missing_from_a_large_job_are_counted(workspace):
    job = workspace.run("job", RANK="0", WORLD_SIZE="1000")
    result = workspace.perfprof("cluster", str(job))
    missing = ", ".join(str(rank) for rank in range(1, 21))
    note = f"no run directory for ranks {missing}, … and 979 more of the world size 1000"
    assert note in " ".join(result.stdout.split())
    assert f"- {note}" in (job / "cluster_analysis_output" / "cluster_report.md").read_text()
