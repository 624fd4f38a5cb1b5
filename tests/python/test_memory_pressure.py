"""Memory pressure while perfprof records (issue 20): a cycle's recording is capped, events beyond
the cap are dropped and counted in one line, and a trace that cannot be built at stop is logged,
never raised out of step(); with a run directory its capture keeps everything for perfprof
analyse. Each case runs in a child under an address-space limit (ulimit -v) set just above what
the child uses when it starts recording."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Optional

import pytest

from child_process import child_env, perfprof_lines

# argv: ranges, headroom MiB (0: no address-space limit), "dir" or "memory", record_limit_mb
# ("auto": the default), output directory. One cycle records `ranges` mstx ranges in one step;
# the job then goes on recording and prints what its trace holds.
SCRIPT = textwrap.dedent("""
    import os, resource, sys
    import perfprof
    from perfprof import mstx

    ranges, headroom_mb, mode, limit, out = sys.argv[1:]
    config = perfprof.ExperimentalConfig(mstx=True, capture_buffer_mb=16,
                                         record_limit_mb=None if limit == "auto" else int(limit))
    handler = perfprof.tensorboard_trace_handler(out) if mode == "dir" else None
    if int(headroom_mb):
        virtual = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (virtual + (int(headroom_mb) << 20), resource.RLIM_INFINITY))
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], on_trace_ready=handler,
                          schedule=perfprof.schedule(wait=0, warmup=0, active=1, repeat=1),
                          experimental_config=config) as prof:
        for _ in range(int(ranges)):
            mstx.range_end(mstx.range_start("r"))
        prof.step()
        for _ in range(1000):  # the job goes on
            mstx.range_end(mstx.range_start("after"))
    if prof.trace is not None:
        counts = {row.key: row.count for row in prof.key_averages()}
        print("trace", counts.get("r", 0), prof.trace.stats["dropped_events"],
              prof.trace.stats["unfinished_ranges"], flush=True)
    if handler is not None:
        print("run dirs", *handler.run_dirs, flush=True)
    print("finished", flush=True)
""")


def run_job(tmp_path: Path, ranges: int, headroom_mb: int, mode: str, limit: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(ranges), str(headroom_mb), mode, limit,
                             str(tmp_path / "out")], env=child_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.rstrip().endswith("finished"), result.stdout  # the job went on to its end
    return result


def trace_line(stdout: str) -> Optional[tuple]:
    """(complete "r" ranges, dropped events, unfinished ranges) of the child's trace, if built."""
    match = re.search(r"^trace (\d+) (\d+) (\d+)$", stdout, re.MULTILINE)
    return tuple(int(group) for group in match.groups()) if match else None


def recorded_events(ranges: int) -> int:
    """What the child records in its cycle: the ranges and its ProfilerStep range."""
    return 2 * ranges + 2


def test_events_beyond_the_recording_limit_are_dropped_counted_and_reported_once(tmp_path):
    ranges = 100_000
    result = run_job(tmp_path, ranges, headroom_mb=0, mode="memory", limit="1")
    kept_ranges, dropped, _ = trace_line(result.stdout)
    # 1 MiB holds 32768 events of 32 bytes, the first ones: everything after was dropped, and counted.
    assert dropped == recorded_events(ranges) - 32768
    assert kept_ranges == 32768 // 2 - 1 + 1  # the step's begin took a place; the last range is unfinished
    assert perfprof_lines(result.stderr) == [
        f"perfprof: {dropped} events were dropped: the cycle reached its recording limit of 1 MiB "
        "(ExperimentalConfig.record_limit_mb; by default a quarter of the memory free when the cycle began); "
        "the trace lacks them"]


def test_under_ulimit_v_the_default_limit_keeps_the_job_alive_and_the_trace_built(tmp_path):
    # 8M events (256 MiB) with 300 MiB of address space left: without a limit, the build at stop
    # raised MemoryError out of step(). The default limit, a quarter of the room, drops the rest.
    ranges = 4_000_000
    result = run_job(tmp_path, ranges, headroom_mb=300, mode="memory", limit="auto")
    _, dropped, _ = trace_line(result.stdout)
    (line,) = perfprof_lines(result.stderr)
    match = re.fullmatch(rf"perfprof: {dropped} events were dropped: the cycle reached its recording limit of "
                         r"(\d+) MiB .*", line)
    assert match, line
    limit_mib = int(match.group(1))
    assert 0 < limit_mib <= 300 // 4
    kept_bytes = (recorded_events(ranges) - dropped) * 32
    assert (limit_mib << 20) - 4096 <= kept_bytes < (limit_mib + 1) << 20  # the limit filled, not passed


def test_a_trace_too_big_to_build_leaves_its_capture_to_perfprof_analyse(tmp_path):
    # The limit raised past the memory there is: recording streams to the capture (16 MiB held at
    # most), and building the trace of 4M events at stop runs out of memory.
    ranges = 2_000_000
    result = run_job(tmp_path, ranges, headroom_mb=100, mode="dir", limit="100000")
    assert trace_line(result.stdout) is None
    (run_dir,) = (tmp_path / "out").iterdir()
    assert f"run dirs {run_dir}" in result.stdout  # the handler lists it
    assert perfprof_lines(result.stderr) == [
        f"perfprof: the trace could not be built at stop (out of memory); the capture in {run_dir} keeps what "
        f"was recorded: `perfprof analyse {run_dir}` builds it"]

    analysed = subprocess.run([sys.executable, "-m", "perfprof", "analyse", str(run_dir)], env=child_env(),
                              capture_output=True, text=True, timeout=300)
    assert analysed.returncode == 0, analysed.stderr
    stats = json.loads((run_dir / "profiler_info.json").read_text())["trace_stats"]
    (trace,) = (run_dir / "PERFPROF_OUTPUT").glob("*.pt.trace.json")
    # Every event recorded is in the trace, or counted as dropped: on a loaded machine the thread
    # moving events to the capture can fall behind, and allocations fail while recording too.
    text = trace.read_bytes()
    # A range is one line of the trace, or two when it is an async slice ("b" and "e"): a range
    # whose end was dropped is unfinished, ends with the window and so crosses its step.
    async_ends = len(re.findall(rb'\{"ph":"e","ts":[^,]*,"cat":"[^"]*","name":"(?:r|ProfilerStep#\d+)"', text))
    kept_ranges = text.count(b'"name":"r"') + text.count(b'"name":"ProfilerStep#') - async_ends
    assert kept_ranges > ranges // 2
    # Nothing lost without a count, nothing counted twice: every event is kept (a range's two, an
    # unfinished range's begin, an unmatched end) or counted as dropped.
    kept_events = 2 * kept_ranges - stats["unfinished_ranges"] + stats["unmatched_range_ends"]
    assert kept_events + stats["dropped_events"] == recorded_events(ranges)


def test_events_that_cannot_be_copied_out_at_stop_are_dropped_and_counted(tmp_path):
    # 4M events held in memory with 150 MiB of address space left: the copy the trace is built
    # from cannot be had, so the events are dropped, counted, and the job goes on.
    ranges = 2_000_000
    result = run_job(tmp_path, ranges, headroom_mb=150, mode="memory", limit="100000")
    kept_ranges, dropped, unfinished = trace_line(result.stdout)
    assert dropped > 0
    assert 2 * kept_ranges + unfinished + dropped == recorded_events(ranges)
    assert perfprof_lines(result.stderr) == [
        f"perfprof: {dropped} events were lost (no memory could be had for them, or their capture could not be "
        "read back) and are missing from the trace"]


def test_a_trace_that_cannot_be_built_in_memory_is_reported_lost_with_its_count(monkeypatch, caplog):
    import perfprof
    from perfprof import _session, mstx

    def out_of_memory(*args, **kwargs):
        raise MemoryError("std::bad_alloc")

    monkeypatch.setattr(_session._core, "collect", out_of_memory)
    config = perfprof.ExperimentalConfig(mstx=True)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          schedule=perfprof.schedule(wait=0, warmup=0, active=1, repeat=1)) as prof:
        for _ in range(10):
            mstx.range_end(mstx.range_start("r"))
        prof.step()  # the cycle ends here: no exception reaches the job
        prof.step()
    assert [record.getMessage() for record in caplog.records if record.name == "perfprof"] == [
        "perfprof: the trace could not be built at stop (out of memory); the 22 events held in memory are lost"]
    assert perfprof._core.buffered_events() == 0  # freed at once, not at the next start
    with pytest.raises(RuntimeError,
                       match=r"key_averages: the last cycle's trace could not be built \(out of memory\)"):
        prof.key_averages()


def test_thousands_of_short_lived_threads_take_a_few_kilobytes_each(tmp_path):
    # Each thread's buffer took a 256 KiB chunk: 3000 threads needed 750 MiB of address space
    # until collected, so under ulimit -v the job's own threads failed to start.
    script = textwrap.dedent("""
        import os, resource, threading
        import perfprof
        from perfprof import mstx

        virtual = int(open("/proc/self/statm").read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
        resource.setrlimit(resource.RLIMIT_AS, (virtual + (200 << 20), resource.RLIM_INFINITY))
        def work():
            mstx.range_end(mstx.range_start("t"))
        config = perfprof.ExperimentalConfig(mstx=True)
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config) as prof:
            for _ in range(3000):
                thread = threading.Thread(target=work)
                thread.start()
                thread.join()
        print(sum(row.count for row in prof.key_averages() if row.key == "t"), prof.trace.stats["dropped_events"])
    """)
    result = subprocess.run([sys.executable, "-c", script], env=child_env(), capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["3000", "0"]
    assert perfprof_lines(result.stderr) == []
