"""`perfprof analyse` analyses each run directory in a process of its own: one whose analysis
crashes, hangs or blows up its memory fails alone, named with what ended it, and the others
complete. A capture a live process is still writing is skipped, left untouched, and analysed
once that process has stopped."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import List, Tuple

import pytest

import perfprof
from perfprof import _analyse
from perfprof._isolated import Limits
from perfprof._run_directory import CAPTURE_FILE, OUTPUT_DIR
from analyse_faults import reader_failing_on
from child_process import child_env
from trace_checks import load_trace

HERE = Path(__file__).resolve().parent
GOOD_RUNS = 10
TIMEOUT_S = 20  # a good run directory takes well under a second, even on a loaded machine
MEMORY_LIMIT_MB = 256  # a good one takes a few MiB

# What ends the bad directory's analysing process, as its one line says it.
FAILURES = {
    "segfault": "the analysing process was killed by signal 11 (SIGSEGV)",
    "exit": "the analysing process exited with code 3 before it finished",
    "hang": f"the analysing process exceeded the {TIMEOUT_S} s timeout",
    "memory": f"the analysing process exceeded the {MEMORY_LIMIT_MB} MiB memory limit",
    "raise": "the analysing process raised RuntimeError: a planted defect (analyse_faults.py:",
}


@pytest.fixture(scope="module")
def unanalysed_run(tmp_path_factory) -> Path:
    """A run directory of 3 recorded steps, kept unanalysed (its capture and JSON files only)."""
    root = tmp_path_factory.mktemp("unanalysed")
    handler = perfprof.tensorboard_trace_handler(str(root), worker_name="worker", analyse_flag=False)
    with perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=1, active=3, repeat=1),
                          on_trace_ready=handler) as prof:
        for step in range(4):
            with perfprof.record_function(f"work {step}"):
                pass
            prof.step()
    (run_dir,) = root.iterdir()
    return run_dir


def folder_of_runs(root: Path, run: Path) -> Tuple[List[Path], Path]:
    """`root` holding GOOD_RUNS copies of `run` and one more, the bad one: (good ones, bad one)."""
    good = [Path(shutil.copytree(run, root / f"good_{number:02d}" / run.name)) for number in range(GOOD_RUNS)]
    return good, Path(shutil.copytree(run, root / "bad" / run.name))


def step_names(run_dir: Path) -> List[str]:
    (trace_file,) = (run_dir / OUTPUT_DIR).glob("*.pt.trace.json")
    return [event["name"] for event in load_trace(str(trace_file))["traceEvents"]
            if event.get("name", "").startswith("ProfilerStep#")]


def analyse_command(*args: str, fault: str = "", bad: Path = Path()) -> subprocess.CompletedProcess:
    """`perfprof analyse ARGS` in a child; with `fault`, planted in the analysis of `bad`."""
    command = [str(HERE / "analyse_faults.py"), fault, str(bad)] if fault else ["-m", "perfprof"]
    return subprocess.run([sys.executable, *command, "analyse", *args], capture_output=True, text=True,
                          env=child_env(), timeout=300)


@pytest.mark.parametrize("fault", sorted(FAILURES))
def test_one_bad_directory_among_ten_fails_alone_by_name(tmp_path, unanalysed_run, fault):
    good, bad = folder_of_runs(tmp_path, unanalysed_run)
    result = analyse_command("-j", "4", "--timeout", str(TIMEOUT_S), "--memory-limit", str(MEMORY_LIMIT_MB),
                             str(tmp_path), fault=fault, bad=bad)
    assert result.returncode == 1, result.stderr
    lines = " ".join(result.stderr.split()).replace(" ok ", "\nok ").replace(" failed ", "\nfailed ").splitlines()
    assert sorted(line.split(":")[0] for line in lines if line.startswith("ok ")) == [f"ok {run}" for run in good]
    (failed,) = [line for line in lines if line.startswith("failed ")]
    assert failed.startswith(f"failed {bad}: {FAILURES[fault]}"), result.stderr
    for run_dir in good:
        assert step_names(run_dir) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    assert not (bad / OUTPUT_DIR).exists() and (bad / CAPTURE_FILE).is_file()


def test_the_api_isolates_too_even_one_directory_at_a_time(tmp_path, unanalysed_run, monkeypatch):
    good, bad = folder_of_runs(tmp_path, unanalysed_run)
    monkeypatch.setattr(perfprof._analyse, "_read_captured_run",
                        reader_failing_on(str(bad), "segfault", perfprof._analyse._read_captured_run))
    reported = []
    results = perfprof.analyse(str(tmp_path), max_process_number=1, on_result=reported.append)
    assert reported == results
    assert [(Path(result.run_dir), result.ok) for result in results] == \
        [(bad, False)] + [(run_dir, True) for run_dir in good]
    assert results[0].message == FAILURES["segfault"] and not results[0].skipped
    assert all(step_names(run_dir) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"] for run_dir in good)


@pytest.mark.parametrize("argument, value, error", [
    ("timeout_s", 0, ValueError), ("timeout_s", -1.5, ValueError), ("timeout_s", float("inf"), ValueError),
    ("timeout_s", float("nan"), ValueError), ("timeout_s", "60", TypeError), ("timeout_s", True, TypeError),
    ("memory_limit_mb", 0, ValueError), ("memory_limit_mb", 2**30 + 1, ValueError),
    ("memory_limit_mb", 512.0, TypeError), ("memory_limit_mb", False, TypeError),
])
def test_bad_limits_are_refused_by_name(tmp_path, unanalysed_run, argument, value, error):
    with pytest.raises(error, match=f"'{argument}'"):
        perfprof.analyse(str(unanalysed_run), **{argument: value})
    assert not (unanalysed_run / OUTPUT_DIR).exists()  # refused before anything was analysed


@pytest.mark.parametrize("option, value", [("--timeout", "0"), ("--timeout", "soon"), ("--memory-limit", "0"),
                                           ("--memory-limit", "1.5")])
def test_bad_limits_are_a_usage_error_of_the_command(unanalysed_run, option, value):
    result = analyse_command(option, value, str(unanalysed_run))
    assert result.returncode == 2 and f"Invalid value for '{option}'" in result.stderr, result.stderr


LIVE = """
import sys
import perfprof
handler = perfprof.tensorboard_trace_handler(sys.argv[1], worker_name="live", analyse_flag=False)
config = perfprof.ExperimentalConfig(data_simplification=True)
with perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=1, active=3, repeat=1), on_trace_ready=handler,
                      experimental_config=config) as prof:
    for step in range(4):
        with perfprof.record_function(f"work {step}"):
            pass
        if step == 2:  # recording, its capture written a step at a time: until the test says go on
            print("recording", flush=True)
            sys.stdin.readline()
        prof.step()
"""


def test_a_capture_being_written_is_skipped_untouched_then_analysed_once_its_writer_stops(tmp_path):
    writer = subprocess.Popen([sys.executable, "-c", LIVE, str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=child_env())
    try:
        assert writer.stdout.readline() == "recording\n"
        (run_dir,) = tmp_path.iterdir()
        capture = (run_dir / CAPTURE_FILE).read_bytes()
        assert capture  # steps 1 and 2 are in it
        # --data-simplification: analysing it would remove the capture the process is writing.
        result = analyse_command("--data-simplification", str(tmp_path))
        assert result.returncode == 0, result.stderr
        assert " ".join(result.stderr.split()) == \
            f"skipped {run_dir}: {CAPTURE_FILE} is being written by pid {writer.pid}; analyse it once that " \
            "process has stopped recording"
        assert (run_dir / CAPTURE_FILE).read_bytes() == capture and not (run_dir / OUTPUT_DIR).exists()
        writer.stdin.write("go on\n")
        writer.stdin.flush()
    finally:
        writer.stdin.close()
        writer.wait(timeout=120)
    assert writer.returncode == 0
    result = analyse_command(str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert step_names(run_dir) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    assert not (run_dir / CAPTURE_FILE).exists()  # as the run was configured (data_simplification)


def test_a_process_analysing_its_own_live_run_skips_it_and_keeps_its_lock(tmp_path):
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="self", analyse_flag=False)
    with perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1),
                          on_trace_ready=handler) as prof:
        for step in range(3):
            if step == 2:  # recording into its capture
                (run_dir,) = tmp_path.iterdir()
                (result,) = perfprof.analyse(str(run_dir), data_simplification=True)
                assert result.skipped and not result.ok
                assert result.message.startswith(f"{CAPTURE_FILE} is being written by pid {os.getpid()};")
                # The analysing process did not make this one give its lock up: another still sees it.
                asked = subprocess.run([sys.executable, "-c", "import sys; from perfprof import _core; "
                                        "print(_core.capture_writer_pid(sys.argv[1]))", str(run_dir / CAPTURE_FILE)],
                                       capture_output=True, text=True, env=child_env(), timeout=120)
                assert asked.stdout == f"{os.getpid()}\n", asked.stderr
            with perfprof.record_function(f"work {step}"):
                pass
            prof.step()
    (result,) = perfprof.analyse(str(run_dir))
    assert result.ok, result
    assert step_names(run_dir) == ["ProfilerStep#1", "ProfilerStep#2"]


def test_the_default_limits_grow_with_the_capture(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    with open(run_dir / CAPTURE_FILE, "wb") as capture:
        capture.truncate(3 << 20)
    defaults = _analyse._LimitChoice(None, None).of_run_dir(str(run_dir))
    assert defaults.timeout_s == 600 + 3  # 600 s and 1 s per MiB
    machine = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    assert defaults.memory_bytes == min((1024 + 8 * 3) << 20, machine)  # 1 GiB and 8 times the capture
    assert _analyse._LimitChoice(7.5, 300).of_run_dir(str(run_dir)) == Limits(7.5, 300 << 20)
