"""What perfprof leaves on disk (issue 20's file faults): files 0640 and directories 0750 whatever
the umask, PERFPROF_FILE_MODE to choose another mode, and the temporary files of writers killed
while writing removed by the next handler or analyse."""
from __future__ import annotations

import os
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from child_process import child_env, perfprof_lines

# Writes one cycle's run directory under argv[1], its capture kept, with the umask 0 (most permissive).
SCRIPT = textwrap.dedent("""
    import os, sys
    import perfprof
    os.umask(0)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                          experimental_config=perfprof.ExperimentalConfig(data_simplification=False),
                          on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[1])) as prof:
        with perfprof.record_function("work"):
            pass
""")


def write_run(out: Path, **environment: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], env={**child_env(), **environment},
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


def modes(root: Path) -> set:
    """The (kind, mode) pairs of everything under `root`, root included."""
    found = {("dir", stat.S_IMODE(root.stat().st_mode))}
    for path in root.rglob("*"):
        found.add(("dir" if path.is_dir() else "file", stat.S_IMODE(path.stat().st_mode)))
    return found


def test_files_are_0640_and_directories_0750_whatever_the_umask(tmp_path):
    result = write_run(tmp_path / "out")
    assert perfprof_lines(result.stderr) == []
    assert modes(tmp_path / "out") == {("dir", 0o750), ("file", 0o640)}


def test_perfprof_file_mode_sets_the_mode_of_files_and_directories(tmp_path):
    write_run(tmp_path / "out", PERFPROF_FILE_MODE="0644")
    assert modes(tmp_path / "out") == {("dir", 0o755), ("file", 0o644)}


def test_a_perfprof_file_mode_the_owner_cannot_write_with_is_refused_once(tmp_path):
    result = write_run(tmp_path / "out", PERFPROF_FILE_MODE="0444")
    assert perfprof_lines(result.stderr) == [
        "perfprof: PERFPROF_FILE_MODE='0444' is not an octal mode the owner can read and write with (e.g. 0644); "
        "files are written with 0640"]
    assert modes(tmp_path / "out") == {("dir", 0o750), ("file", 0o640)}


def dead_pid() -> int:
    child = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(child.stdout)


def test_temporary_files_of_killed_writers_are_removed_by_the_next_handler_and_analyse(tmp_path, caplog):
    import perfprof

    out = tmp_path / "out"
    write_run(out)
    (run_dir,) = out.iterdir()
    output_dir = run_dir / "PERFPROF_OUTPUT"
    killed = dead_pid()
    # What SIGKILL during an export leaves: C++ writers' names (6 random characters) and Python's (8).
    stale = [output_dir / f"w.pt.trace.json.tmp{killed}-AbC123", run_dir / f"profiler_info.json.tmp{killed}-abcd_123"]
    alive = [output_dir / f"w.pt.trace.json.tmp{os.getppid()}-XyZ789"]  # a writer still running
    unrelated = [run_dir / "notes.tmp", run_dir / f"data.tmp{killed}"]
    for path in stale + alive + unrelated:
        path.write_text("half a file")
    link = output_dir / f"x.tmp{killed}-Link00"
    link.symlink_to(tmp_path / "elsewhere")

    perfprof.tensorboard_trace_handler(str(out))
    assert [p for p in stale if p.exists()] == []
    assert all(p.exists() for p in alive + unrelated) and link.is_symlink()
    assert [r.getMessage() for r in caplog.records if r.name == "perfprof"] == [
        f"perfprof: removed 2 temporary files that writers killed while writing left in {out}"]

    stale[0].write_text("half a file")  # a killed `perfprof analyse` of that run directory
    analysed = subprocess.run([sys.executable, "-m", "perfprof", "analyse", str(run_dir)], env=child_env(),
                              capture_output=True, text=True, timeout=120)
    assert analysed.returncode == 0, analysed.stderr
    assert not stale[0].exists() and alive[0].exists()


def test_an_export_killed_while_writing_leaves_a_temporary_file_the_next_handler_removes(tmp_path):
    out = tmp_path / "out"
    write_run(out)
    (run_dir,) = out.iterdir()
    # A writer that dies (os._exit: as SIGKILL, nothing runs after) in the middle of a file.
    script = textwrap.dedent("""
        import os, sys
        from perfprof._files import replaced_whole
        with replaced_whole(sys.argv[1]) as file:
            file.write("half")
            file.flush()
            os._exit(9)
    """)
    subprocess.run([sys.executable, "-c", script, str(run_dir / "profiler_info.json")], env=child_env(), timeout=60)
    leftovers = [p for p in run_dir.iterdir() if ".tmp" in p.name]
    assert len(leftovers) == 1
    write_run(out)  # the next run's handler
    assert not leftovers[0].exists()


def test_the_writers_of_library_files_logs_and_appended_lines_give_the_mode_whatever_the_umask(tmp_path):
    from perfprof._files import appended, replaced_at_start, written_by_library

    previous = os.umask(0)  # the most permissive: only perfprof's own mode can make these 0640
    try:
        with written_by_library(str(tmp_path / "table.csv")) as written:
            with open(written, "w") as file:  # as DuckDB or matplotlib create their files
                file.write("a\n")
            assert os.path.dirname(written) != str(tmp_path)  # written privately first
        with replaced_at_start(str(tmp_path / "job.log")) as log:
            log.write("started\n")
            log.flush()
            assert (tmp_path / "job.log").read_text() == "started\n"  # readable while written
        with appended(str(tmp_path / "results.jsonl")) as lines:
            lines.write("{}\n")
    finally:
        os.umask(previous)
    assert modes(tmp_path) == {("dir", stat.S_IMODE(tmp_path.stat().st_mode)), ("file", 0o640)}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["job.log", "results.jsonl", "table.csv"]


def test_a_library_file_that_fails_leaves_the_earlier_file_and_nothing_else(tmp_path):
    from perfprof._files import written_by_library

    target = tmp_path / "cluster_analysis.duckdb"
    target.write_text("the earlier analysis")
    try:
        with written_by_library(str(target)) as written:
            Path(written).write_text("half")
            Path(f"{written}.wal").write_text("its log")
            raise RuntimeError("the query failed")
    except RuntimeError:
        pass
    assert [p.name for p in tmp_path.iterdir()] == ["cluster_analysis.duckdb"]
    assert target.read_text() == "the earlier analysis"


def test_appending_keeps_the_mode_of_a_file_already_there_and_never_follows_a_link(tmp_path):
    from perfprof._files import appended

    users = tmp_path / "results.jsonl"
    users.write_text("{}\n")
    os.chmod(users, 0o664)  # the user's choice
    with appended(str(users)) as lines:
        lines.write("{}\n")
    assert users.read_text() == "{}\n{}\n" and stat.S_IMODE(users.stat().st_mode) == 0o664
    victim = tmp_path / "victim"
    victim.write_text("not perfprof's\n")
    (tmp_path / "planted.jsonl").symlink_to(victim)
    with pytest.raises(OSError):
        with appended(str(tmp_path / "planted.jsonl")) as lines:
            lines.write("{}\n")
    assert victim.read_text() == "not perfprof's\n"
