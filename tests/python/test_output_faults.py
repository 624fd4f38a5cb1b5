"""Output directories that fail while perfprof writes (issue 20): a disk that fills up, a run
directory removed while recording, an output path that cannot be made. The job always finishes,
one line names each problem, and what was recorded is on disk, recoverable with perfprof
analyse, or reported lost with a count."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from child_process import analyse, child_env, perfprof_lines, trace_events

STEPS, RANGES_PER_STEP = 10, 20_000
EVENTS_PER_STEP = 2 * RANGES_PER_STEP + 2  # the ranges and the ProfilerStep range

# argv: output directory, the fault ("disk-full", "no-room", "removed" or "none"). Records STEPS steps of
# RANGES_PER_STEP mstx ranges into a tensorboard_trace_handler run directory.
SCRIPT = textwrap.dedent(f"""
    import os, resource, shutil, sys
    import perfprof
    from perfprof import mstx

    out, fault = sys.argv[1:]
    handler = perfprof.tensorboard_trace_handler(out)
    config = perfprof.ExperimentalConfig(mstx=True, data_simplification=False)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], on_trace_ready=handler,
                          experimental_config=config,
                          schedule=perfprof.schedule(wait=0, warmup=0, active={STEPS}, repeat=1)) as prof:
        for step in range({STEPS}):
            for _ in range({RANGES_PER_STEP}):
                mstx.range_end(mstx.range_start("r"))
            if step == 1 and fault == "disk-full":  # the file system has room for little more
                resource.setrlimit(resource.RLIMIT_FSIZE, (3_000_000, resource.RLIM_INFINITY))
            if step == 0 and fault == "no-room":  # nor for anything at all
                resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))
            if step == 4 and fault == "removed":
                shutil.rmtree(out)
            prof.step()
        for _ in range(1000):  # the job goes on
            mstx.range_end(mstx.range_start("after"))
    print("trace", prof.trace is not None and prof.trace.stats["dropped_events"], flush=True)
    print("run dirs", *handler.run_dirs, flush=True)
    print("finished", flush=True)
""")


def run_job(out: Path, fault: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(out), fault], env=child_env(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("finished"), result.stdout
    return result


def range_counts(run_dir: Path) -> dict:
    """How many ranges of each name the trace `perfprof analyse RUN_DIR` writes holds."""
    analyse(run_dir)
    return Counter(event["name"] for event in trace_events(run_dir) if event.get("ph") == "X")


@pytest.fixture
def small_file_system(tmp_path):
    """A 3 MiB tmpfs (root only: skipped where it cannot be mounted)."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"a tmpfs cannot be mounted here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", str(mount_point)], check=True)


@pytest.mark.parametrize("full_by", ["file-size limit", "small tmpfs"])
def test_a_full_disk_keeps_the_steps_written_and_counts_the_rest(tmp_path, request, full_by):
    if full_by == "small tmpfs":
        out, fault, error = request.getfixturevalue("small_file_system") / "out", "none", "No space left on device"
    else:
        out, fault, error = tmp_path / "out", "disk-full", "File too large"
    result = run_job(out, fault)
    (run_dir,) = out.iterdir()
    capture_line, writing_line = perfprof_lines(result.stderr)
    assert re.fullmatch(rf"perfprof: the capture cannot be written \(cannot write {run_dir}/capture.ppcap: "
                        rf"{error}\); the rest of the session is kept in memory", capture_line), capture_line
    match = re.fullmatch(rf"perfprof: writing run directory {run_dir} failed: .*{error}; its capture keeps "
                         rf"all but the last (\d+) events, which are lost \(`perfprof analyse {run_dir}` writes the "
                         r"rest\)", writing_line)
    assert match, writing_line
    assert "trace 0" in result.stdout  # the trace in memory lacked nothing

    copy = tmp_path / "room" / run_dir.name  # analysed where there is room
    shutil.copytree(run_dir, copy)
    counts = range_counts(copy)  # the capture holds whole steps, up to the one the disk filled in
    steps_kept = sum(1 for name in counts if name.startswith("ProfilerStep#"))
    assert 1 <= steps_kept < STEPS
    assert counts["r"] == steps_kept * RANGES_PER_STEP
    assert int(match.group(1)) == (STEPS - steps_kept) * EVENTS_PER_STEP


def test_a_disk_with_no_room_at_all_loses_the_cycle_with_its_count_and_leaves_no_directory(tmp_path):
    result = run_job(tmp_path / "out", "no-room")
    capture_line, writing_line = perfprof_lines(result.stderr)
    run_dir = re.fullmatch(r"perfprof: the capture cannot be written \(cannot write (\S+)/capture.ppcap: File too "
                           r"large\); the rest of the session is kept in memory", capture_line).group(1)
    assert re.fullmatch(rf"perfprof: writing run directory {run_dir} failed: .*File too large; the cycle's trace "
                        rf"\({STEPS * (RANGES_PER_STEP + 1)} ranges\) is lost", writing_line), writing_line
    assert "trace 0" in result.stdout  # nothing was missing from the trace in memory
    assert result.stdout.splitlines()[1] == "run dirs"  # not listed: nothing of the cycle is there
    assert list((tmp_path / "out").iterdir()) == []  # no empty directory left behind


def test_a_run_directory_removed_while_recording_is_written_again_whole(tmp_path):
    result = run_job(tmp_path / "out", "removed")
    (run_dir,) = (tmp_path / "out").iterdir()
    assert perfprof_lines(result.stderr) == [
        f"perfprof: the capture {run_dir}/capture.ppcap was removed while recording; the trace was built from "
        "the open file"]
    assert "trace 0" in result.stdout
    assert f"run dirs {run_dir}" in result.stdout
    names = [event["name"] for event in trace_events(run_dir) if event.get("ph") == "X"]
    assert names.count("r") == STEPS * RANGES_PER_STEP  # the steps written before the removal too
    assert {f"ProfilerStep#{step}" for step in range(STEPS)} <= set(names)


def test_an_output_directory_that_cannot_be_made_is_one_line_and_the_trace_stays_in_memory(tmp_path):
    blocker = tmp_path / "a file"
    blocker.write_text("")
    result = run_job(blocker / "out", "none")
    assert perfprof_lines(result.stderr) == [
        f"perfprof: cannot create a run directory in '{blocker / 'out'}': [Errno 20] Not a directory: "
        f"'{blocker / 'out'}'; this cycle's trace is not written (prof.trace holds it until the next cycle)"]
    assert "trace 0" in result.stdout
    assert result.stdout.splitlines()[1] == "run dirs"
