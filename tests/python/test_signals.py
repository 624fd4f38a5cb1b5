"""SIGTERM while perfprof records (issue 20's signal faults): the process ends as SIGTERM demands,
one line says where the recording is, and every complete step is recoverable with perfprof
analyse; a script's own SIGTERM handler is left alone."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from child_process import analyse, child_env, perfprof_lines, trace_events

# Records steps 1..10 (step 0 warms up); `terminate` picks how the script is stopped in step 5.
SCRIPT = """
import os, signal, sys, time
import perfprof

stop = []
{setup}
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                      schedule=perfprof.schedule(wait=0, warmup=1, active=10, repeat=1),
                      on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[1])) as prof:
    for step in range(12):
        if stop:
            break
        with perfprof.record_function(f"work {{step}}"):
            time.sleep(0.005)
        if step == 5:
            os.kill(os.getpid(), signal.SIGTERM)
        prof.step()
print("handler after stop:", signal.getsignal(signal.SIGTERM) is signal.SIG_DFL, flush=True)
"""


def run_script(tmp_path: Path, setup: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT.format(setup=setup)), str(tmp_path / "out")],
                          env=child_env(), capture_output=True, text=True, timeout=120)


def test_sigterm_while_recording_ends_the_process_and_leaves_the_steps_recoverable(tmp_path):
    result = run_script(tmp_path)
    assert result.returncode == -signal.SIGTERM
    (run_dir,) = (tmp_path / "out").iterdir()
    assert perfprof_lines(result.stderr) == [
        f"perfprof: SIGTERM while recording; the capture in {run_dir} holds what was recorded: "
        f"`perfprof analyse {run_dir}` writes the trace of its complete steps"]
    analyse(run_dir)
    names = {event["name"] for event in trace_events(run_dir)}
    assert {f"ProfilerStep#{step}" for step in range(1, 5)} <= names  # the steps before the signal
    assert {f"work {step}" for step in range(1, 6)} <= names  # and what step 5 recorded before it


def test_a_scripts_own_sigterm_handler_is_kept_and_its_cycle_saved(tmp_path):
    result = run_script(tmp_path, setup="signal.signal(signal.SIGTERM, lambda signum, frame: stop.append(signum))")
    assert result.returncode == 0, result.stderr
    assert perfprof_lines(result.stderr) == []
    assert "handler after stop: False" in result.stdout  # still the script's
    (run_dir,) = (tmp_path / "out").iterdir()
    names = {event["name"] for event in trace_events(run_dir)}  # written at the with-block's exit
    assert {f"ProfilerStep#{step}" for step in range(1, 7)} <= names


def test_sigterm_is_the_defaults_again_once_the_profiler_stops(tmp_path):
    script = textwrap.dedent(SCRIPT.format(setup="")).replace("if step == 5:", "if False:")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], env=child_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "handler after stop: True" in result.stdout
    assert os.listdir(tmp_path / "out")


def test_a_forked_child_terminated_leaves_the_parents_recording_alone(tmp_path):
    """A DataLoader-style worker forked while recording and stopped with SIGTERM by its parent."""
    setup = textwrap.dedent("""
        import time
        def fork_and_terminate_a_worker():
            ready, started = os.pipe()
            pid = os.fork()
            if pid == 0:
                os.write(started, b"1")
                time.sleep(30)
                os._exit(0)
            os.read(ready, 1)
            os.kill(pid, signal.SIGTERM)
            return os.waitpid(pid, 0)[1]
    """)
    script = textwrap.dedent(SCRIPT.format(setup=setup)).replace(
        "os.kill(os.getpid(), signal.SIGTERM)", "print('worker status', fork_and_terminate_a_worker(), flush=True)")
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "out")], env=child_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"worker status {signal.SIGTERM}" in result.stdout  # the worker ended by SIGTERM
    assert perfprof_lines(result.stderr) == []
    (run_dir,) = (tmp_path / "out").iterdir()
    names = {event["name"] for event in trace_events(run_dir)}
    assert {f"ProfilerStep#{step}" for step in range(1, 11)} <= names


SIGINT_SCRIPT = textwrap.dedent("""
    import os, signal, sys, time
    import perfprof

    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                            schedule=perfprof.schedule(wait=0, warmup=1, active=10, repeat=1),
                            on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[1]))
    def record(prof):
        for step in range(12):
            with perfprof.record_function(f"work {step}"):
                time.sleep(0.005)
            if step == 5:
                os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C
            prof.step()
    if sys.argv[2] == "with":
        with prof:
            record(prof)
    else:
        prof.start()
        record(prof)
""")


def run_sigint(tmp_path: Path, style: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SIGINT_SCRIPT, str(tmp_path / "out"), style], env=child_env(),
                          capture_output=True, text=True, timeout=120)


def test_ctrl_c_with_the_profiler_started_by_start_says_where_the_capture_is(tmp_path):
    result = run_sigint(tmp_path, "start")
    assert result.returncode == -signal.SIGINT  # KeyboardInterrupt, as without perfprof
    assert "KeyboardInterrupt" in result.stderr
    (run_dir,) = (tmp_path / "out").iterdir()
    assert perfprof_lines(result.stderr) == [
        f"perfprof: the process exits while recording; the capture in {run_dir} holds what was recorded: "
        f"`perfprof analyse {run_dir}` writes the trace of its complete steps"]
    analyse(run_dir)
    names = {event["name"] for event in trace_events(run_dir)}
    assert {f"ProfilerStep#{step}" for step in range(1, 5)} <= names


def test_ctrl_c_inside_the_with_block_saves_the_cycle_as_the_block_exits(tmp_path):
    result = run_sigint(tmp_path, "with")
    assert result.returncode == -signal.SIGINT
    assert perfprof_lines(result.stderr) == []  # nothing to report: the block's exit wrote the cycle
    (run_dir,) = (tmp_path / "out").iterdir()
    names = {event["name"] for event in trace_events(run_dir)}
    assert {f"ProfilerStep#{step}" for step in range(1, 6)} <= names
