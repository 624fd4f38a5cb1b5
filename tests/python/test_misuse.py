"""Misuse of the profiler's controls (issue 20's misuse, handler and fork faults): a clear error at
the call, a documented no-op, or a schedule that goes on, never a silent extra or lost cycle."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
from typing import List

import pytest

import perfprof
from child_process import child_env


def scheduled(handler, **schedule) -> perfprof.profile:
    return perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], on_trace_ready=handler,
                            schedule=perfprof.schedule(**schedule))


def steps_of(prof: perfprof.profile) -> List[str]:
    """The step ranges of the profiler's trace, sorted by name."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "trace.json")
        prof.export_chrome_trace(path)
        with open(path) as file:
            names = [event["name"] for event in json.load(file)["traceEvents"]]
    return sorted({name for name in names if name.startswith("ProfilerStep#")})  # a range across threads: b and e


def test_step_before_start_and_after_stop_are_errors_that_say_what_to_do():
    prof = scheduled(None, wait=0, active=1)
    with pytest.raises(RuntimeError, match=r"step\(\) called before start\(\); call start\(\) first"):
        prof.step()
    prof.start()
    prof.step()
    prof.stop()
    with pytest.raises(RuntimeError, match=r"step\(\) called after stop\(\); start\(\) it again first"):
        prof.step()
    prof.stop()  # a second stop is a no-op


def test_start_twice_is_an_error_and_saves_nothing_extra():
    cycles: List[List[str]] = []
    prof = scheduled(lambda p: cycles.append(steps_of(p)), wait=0, active=2, repeat=1)
    prof.start()
    with pytest.raises(RuntimeError, match=r"already started; stop\(\) it before starting it again"):
        prof.start()
    for _ in range(3):
        prof.step()
    prof.stop()
    assert cycles == [["ProfilerStep#0", "ProfilerStep#1"]]
    prof.start()  # a stopped profiler starts again
    prof.stop()


def test_two_threads_stepping_one_profiler_count_every_step_once():
    cycles: List[List[str]] = []
    prof = scheduled(lambda p: cycles.append(steps_of(p)), wait=0, warmup=0, active=5)
    barrier = threading.Barrier(2)

    def steps() -> None:
        barrier.wait()
        for _ in range(50):
            prof.step()

    with prof:
        threads = [threading.Thread(target=steps) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert prof.step_num == 100
    # 100 steps in cycles of 5: twenty cycles, each handed over once with its own five steps, and
    # step 100's, which stop() ends while it records (as torch.profiler does).
    expected = [sorted(f"ProfilerStep#{n}" for n in range(5 * c, 5 * c + 5)) for c in range(20)]
    assert cycles == expected + [["ProfilerStep#100"]]
    # Cycles started on one thread and stopped on another leave nothing on: not torch's profiler
    # flag, and not the main thread's capture (torch's own profiler starts on it again).
    torch = pytest.importorskip("torch")
    assert torch.autograd.profiler._is_profiler_enabled is False
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as own:
        torch.ones(2).add(1)
    assert any(event.name == "aten::add" for event in own.events())


def test_a_handler_that_raises_reaches_the_caller_and_the_next_cycle_is_still_recorded():
    cycles: List[List[str]] = []

    def handler(prof: perfprof.profile) -> None:
        cycles.append(steps_of(prof))
        if len(cycles) == 1:
            raise ValueError("disk on fire")

    with scheduled(handler, wait=0, warmup=0, active=2, repeat=2) as prof:  # cycles back to back
        prof.step()
        with pytest.raises(ValueError, match="disk on fire"):  # as torch.profiler raises it
            prof.step()
        prof.step()
        prof.step()
    assert cycles == [["ProfilerStep#0", "ProfilerStep#1"], ["ProfilerStep#2", "ProfilerStep#3"]]


@pytest.mark.parametrize("exit_style", ["sys.exit", "os._exit", "return"])
def test_a_forked_child_never_runs_the_parents_handler(tmp_path, exit_style):
    """The child leaves through the profiler's with-block (sys.exit unwinds it, so does falling
    off the end) or not at all (os._exit); only the parent hands its cycle over."""
    leave = {"sys.exit": "sys.exit(0)", "os._exit": "os._exit(0)", "return": "pass"}[exit_style]
    script = textwrap.dedent(f"""
        import os, sys
        import perfprof
        out = sys.argv[1]
        write = perfprof.tensorboard_trace_handler(out, worker_name="parent")

        def handler(prof):
            open(os.path.join(out, f"handed_over_in_{{os.getpid()}}"), "w").close()
            write(prof)

        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                              schedule=perfprof.schedule(wait=0, active=2, repeat=1), on_trace_ready=handler) as prof:
            prof.step()
            pid = os.fork()
            if pid == 0:
                with perfprof.record_function("in the child"):
                    pass
                {leave}
            else:
                os.waitpid(pid, 0)
                prof.step()
        print(os.getpid(), flush=True)
    """)
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path)], env=child_env(), capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    parent = result.stdout.split()[-1]
    handed_over = sorted(name for name in os.listdir(tmp_path) if name.startswith("handed_over"))
    assert handed_over == [f"handed_over_in_{parent}"]
    assert len([name for name in os.listdir(tmp_path) if name.endswith("_perfprof")]) == 1
    assert "Traceback" not in result.stderr
