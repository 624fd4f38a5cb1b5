"""torch.profiler and perfprof in one process (issue 20): torch.profiler inside a perfprof cycle, on
the same thread, gets its operators and perfprof keeps those before and after it; perfprof inside a
torch.profiler session says once why it captures nothing until torch.profiler stops; torch.profiler
on another thread while perfprof records shapes runs beside it. Each in a child: torch's profiler
state is process-wide."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from child_process import child_env, perfprof_lines

pytest.importorskip("torch")

PRELUDE = textwrap.dedent("""
    import json, sys, threading
    import torch, perfprof

    def model_step():
        x = torch.ones(32, 32)
        for _ in range(5):
            x = torch.relu(x @ x)

    def relu_count(prof):
        return sum(row.count for row in prof.key_averages() if row.key == "aten::relu")

    record_shapes = sys.argv[1] == "shapes"
""")


def run(body: str, shapes: bool) -> tuple:
    script = PRELUDE + textwrap.dedent(body)
    result = subprocess.run([sys.executable, "-c", script, "shapes" if shapes else "plain"], env=child_env(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1]), perfprof_lines(result.stderr)


@pytest.mark.parametrize("shapes", [False, True], ids=["default", "record_shapes"])
def test_torch_profiler_inside_a_perfprof_cycle_gets_its_operators_and_perfprof_keeps_the_rest(shapes):
    counts, lines = run("""
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=record_shapes) as prof:
            model_step()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                        record_shapes=record_shapes) as inner:
                model_step()
            model_step()
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as again:
                model_step()
            model_step()
        print(json.dumps({"perfprof": relu_count(prof), "torch": relu_count(inner), "again": relu_count(again)}))
    """, shapes)
    # Before: torch.profiler raised "Profiler is already enabled on this thread" (default), or took
    # torch's state over and left perfprof's cycle with 0 operators (record_shapes).
    assert counts == {"perfprof": 15, "torch": 5, "again": 5}
    assert lines == ["perfprof: torch.profiler started on a thread whose operators perfprof captures; perfprof "
                     "steps aside while it runs: the operators it records are in torch.profiler's results, not in "
                     "perfprof's trace"]


def test_perfprof_started_inside_torch_profiler_says_so_and_takes_over_when_it_stops():
    counts, lines = run("""
        profiler = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])
        profiler.start()
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU]) as prof:
            model_step()
            profiler.stop()
            model_step()
        print(json.dumps({"torch": relu_count(profiler), "perfprof": relu_count(prof)}))
    """, shapes=False)
    assert counts == {"torch": 5, "perfprof": 5}
    assert lines == ["perfprof: torch.profiler holds torch's profiler state on this thread; perfprof captures this "
                     "thread's operators only once it stops (Profiler is already enabled on this thread.)"]


def test_torch_profiler_on_another_thread_runs_beside_a_perfprof_cycle_recording_shapes():
    counts, _ = run("""
        started, done, steps = threading.Event(), threading.Event(), []
        def torch_profiled():
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as tp:
                started.set()
                while not done.is_set() or not steps:
                    model_step()
                    steps.append(1)
            result["torch"] = relu_count(tp)
        result = {}
        thread = threading.Thread(target=torch_profiled)
        thread.start()
        started.wait()
        for _ in range(3):
            with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True) as prof:
                model_step()
            result.setdefault("perfprof", []).append(relu_count(prof))
        done.set()
        thread.join()
        result["steps"] = len(steps)
        print(json.dumps(result))
    """, shapes=True)
    assert counts["perfprof"] == [5, 5, 5]
    assert counts["torch"] == 5 * counts["steps"]


def test_torch_profiler_on_another_thread_while_perfprof_holds_torchs_collection_is_refused_not_a_crash():
    counts, lines = run("""
        result = {}
        def torch_profiled():
            try:
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as tp:
                    model_step()
            except RuntimeError as error:
                result["error"] = str(error)
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True) as prof:
            model_step()
            thread = threading.Thread(target=torch_profiled)
            thread.start()
            thread.join()
            model_step()
        result["perfprof"] = relu_count(prof)
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as after:  # free again
            model_step()
        result["after"] = relu_count(after)
        print(json.dumps(result))
    """, shapes=True)
    # Before: the process died of SIGSEGV when perfprof's cycle ended.
    assert counts["error"] == (
        "torch.profiler cannot start: perfprof.profile holds torch's profiler collection on thread 'MainThread' (it "
        "records input types and values there: record_shapes, with_flops, record_op_args or profile_memory), and "
        "torch runs one at a time in a process; stop that perfprof profiler first, or start torch.profiler on that "
        "thread (perfprof then steps aside)")
    assert counts["perfprof"] == 10
    assert counts["after"] == 5


def test_torchs_profiler_flag_stays_set_for_perfprof_after_a_torch_profiler_session_inside_its_cycle():
    # torch.compile's graph ranges are emitted only while the flag is set; torch.profiler's stop
    # cleared it for the rest of perfprof's cycle.
    counts, _ = run("""
        import torch.autograd.profiler as autograd_profiler
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU]) as prof:
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
                model_step()
            during = autograd_profiler._is_profiler_enabled
        print(json.dumps({"during": during, "after": autograd_profiler._is_profiler_enabled}))
    """, shapes=False)
    assert counts == {"during": True, "after": False}
