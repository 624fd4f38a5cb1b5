"""Run directories hold their session's capture, written while it records; `perfprof analyse`
(and perfprof.analyse) builds from it exactly what the profiled process would have written, for a
finished run, a run kept unanalysed (analyse_flag=False) and a run whose process was killed."""
from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

import pytest

import perfprof
from perfprof import _core, memory
from perfprof._run_directory import CAPTURE_FILE, OUTPUT_DIR
from child_process import child_env
from trace_checks import load_trace

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "train_demo.py"


def run_dirs(root: Path) -> List[Path]:
    return sorted(path for path in root.iterdir() if path.is_dir())


def outputs(run_dir: Path) -> Dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted((run_dir / OUTPUT_DIR).iterdir())}


def assert_same_outputs(offline: Dict[str, bytes], in_process: Dict[str, bytes]) -> None:
    """Equal bytes, or the first line that differs in each file that does."""
    assert sorted(offline) == sorted(in_process)
    for name, expected in in_process.items():
        if offline[name] == expected:
            continue
        pairs = zip(offline[name].decode().splitlines(), expected.decode().splitlines())
        line, (got, want) = next((n, pair) for n, pair in enumerate(pairs, 1) if pair[0] != pair[1])
        raise AssertionError(f"{name} line {line}:\n offline:    {got[:400]}\n in process: {want[:400]}")


def perfprof_command(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perfprof", *args], capture_output=True, text=True, env=child_env(),
                          timeout=300, **kwargs)


def loop(tmp_path: Path, steps: int = 6, **handler_options) -> Path:
    """A profiled loop (record_function ranges, mstx, counters) into one run directory."""
    config = perfprof.ExperimentalConfig(mstx=True, data_simplification=handler_options.pop("simplify", False))
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="worker", **handler_options)
    with perfprof.profile(schedule=perfprof.schedule(wait=1, warmup=1, active=steps - 2, repeat=1),
                          on_trace_ready=handler, experimental_config=config) as prof:
        prof.add_metadata("model", "toy")
        for step in range(steps):
            with perfprof.record_function("forward"):
                perfprof.mstx.mark(f"step {step}")
            prof.step()
    (run_dir,) = run_dirs(tmp_path)
    return run_dir


def test_a_run_directory_gets_its_capture_and_analysing_it_rewrites_the_same_outputs(tmp_path):
    run_dir = loop(tmp_path)
    in_process = outputs(run_dir)
    assert (run_dir / CAPTURE_FILE).is_file()
    shutil.rmtree(run_dir / OUTPUT_DIR)
    (result,) = perfprof.analyse(str(tmp_path), data_simplification=False)
    assert result.ok and result.warning == "", result
    assert_same_outputs(outputs(run_dir), in_process)
    assert (run_dir / CAPTURE_FILE).is_file()  # kept, as asked


def test_the_example_analysed_offline_gives_the_bytes_it_wrote(tmp_path):
    subprocess.run([sys.executable, str(EXAMPLE), "--out", str(tmp_path), "--keep-capture"], check=True, timeout=300,
                   capture_output=True, env=child_env())
    (run_dir,) = run_dirs(tmp_path)
    in_process = outputs(run_dir)
    assert {"memory_record.csv", "operator_memory.csv"} <= set(in_process)
    shutil.rmtree(run_dir / OUTPUT_DIR)
    result = perfprof_command("analyse", "--keep-capture", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert_same_outputs(outputs(run_dir), in_process)
    # The memory timeline too, from the capture, as the example wrote it in the process.
    in_process_plot = (run_dir / "memory_timeline.html").read_bytes()
    trace, complete, problem, _ = _core.read_capture(str(run_dir / CAPTURE_FILE))
    assert complete and problem == ""
    memory.export_timeline(trace, str(run_dir / "memory_timeline.html"), None)
    assert (run_dir / "memory_timeline.html").read_bytes() == in_process_plot


def test_analyse_flag_false_writes_the_capture_only_and_the_command_writes_the_rest(tmp_path):
    run_dir = loop(tmp_path, analyse_flag=False)
    assert sorted(p.name for p in run_dir.iterdir()) == [CAPTURE_FILE, "profiler_info.json", "profiler_metadata.json"]
    assert json.loads((run_dir / "profiler_info.json").read_text())["trace_file"] is None
    result = perfprof_command("analyse", str(tmp_path))
    assert result.returncode == 0, result.stderr
    (trace_file,) = (run_dir / OUTPUT_DIR).glob("*.pt.trace.json")
    trace = load_trace(str(trace_file))
    assert [e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")] == \
        ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4", "ProfilerStep#5"]
    assert trace["model"] == "toy"  # the metadata the run recorded
    info = json.loads((run_dir / "profiler_info.json").read_text())
    assert info["trace_file"] == f"{OUTPUT_DIR}/{trace_file.name}" and info["capture_complete"] is True
    assert info["capture_file"] == CAPTURE_FILE and (run_dir / CAPTURE_FILE).is_file()  # data_simplification=False


@pytest.mark.parametrize("analyse_flag", [True, False])
def test_data_simplification_removes_the_capture_once_the_outputs_are_written(tmp_path, analyse_flag):
    run_dir = loop(tmp_path, analyse_flag=analyse_flag, simplify=True)
    if not analyse_flag:  # written later, then removed as the run was configured
        assert (run_dir / CAPTURE_FILE).is_file()
        assert perfprof_command("analyse", str(run_dir)).returncode == 0
    assert not (run_dir / CAPTURE_FILE).exists() and any((run_dir / OUTPUT_DIR).iterdir())
    assert json.loads((run_dir / "profiler_info.json").read_text())["capture_file"] is None


KILLED = """
import os, sys, time
import perfprof
handler = perfprof.tensorboard_trace_handler(sys.argv[1], worker_name="killed", analyse_flag=False)
config = perfprof.ExperimentalConfig(data_simplification=False)
with perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=0, active=8, repeat=1), on_trace_ready=handler,
                      experimental_config=config) as prof:
    prof.add_metadata_json("run", '{"lr": 0.5}')
    for step in range(8):
        if step == 2:
            prof.add_metadata("phase", "steady")
        with perfprof.record_function(f"work {step}"):
            pass
        if step == 3:  # inside the 4th step
            print("step 4", flush=True)
            time.sleep(600)
        prof.step()
"""


def test_a_run_killed_during_step_4_is_analysed_up_to_step_3(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path)], stdout=subprocess.PIPE, text=True,
                             env={**child_env(), "RANK": "3", "WORLD_SIZE": "4"})
    try:
        assert child.stdout.readline() == "step 4\n"
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(timeout=60)
    (run_dir,) = run_dirs(tmp_path)
    assert sorted(p.name for p in run_dir.iterdir()) == [CAPTURE_FILE]  # the process never got further
    (result,) = perfprof.analyse(str(run_dir))
    assert result.ok, result
    assert "the last complete step is ProfilerStep#2" in result.warning
    trace = load_trace(result.trace_file)
    steps = [e for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")]
    assert [e["name"] for e in steps] == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2"]
    # What the 4th step recorded before the kill was still in memory (a step reaches the file as it ends).
    assert sorted(e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("work ")) == \
        ["work 0", "work 1", "work 2"]
    # How the run was configured, and the metadata added before and during it, came from the
    # capture: the process wrote no run directory files.
    assert trace["run"] == {"lr": 0.5} and trace["phase"] == "steady"
    assert trace["distributedInfo"]["rank"] == 3 and trace["distributedInfo"]["world_size"] == 4
    info = json.loads((run_dir / "profiler_info.json").read_text())
    assert info["rank"] == 3 and info["config"]["experimental_config"]["data_simplification"] is False
    assert (run_dir / CAPTURE_FILE).is_file()  # kept, as the run was configured


def test_a_bad_directory_is_named_and_the_others_are_analysed(tmp_path):
    good = loop(tmp_path / "good", analyse_flag=False)
    bad = tmp_path / "bad" / "worker_1_perfprof"
    bad.mkdir(parents=True)
    (bad / CAPTURE_FILE).write_bytes(b"not a capture at all")
    result = perfprof_command("analyse", "-j", "2", str(tmp_path))
    assert result.returncode == 1
    assert f"failed {bad}: {bad / CAPTURE_FILE}: not a perfprof capture" in " ".join(result.stderr.split())
    assert (good / OUTPUT_DIR).is_dir()


def test_a_path_without_capture_and_bad_arguments_are_refused(tmp_path):
    result = perfprof_command("analyse", str(tmp_path))
    assert result.returncode == 1 and "no capture (capture.ppcap) at or under" in result.stderr
    assert perfprof_command("analyse", str(tmp_path / "missing")).returncode == 2
    with pytest.raises(FileNotFoundError):
        perfprof.analyse(str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="max_process_number"):
        perfprof.analyse(str(tmp_path), max_process_number=0)


def test_the_command_has_help_for_every_subcommand():
    for args in (["--help"], ["analyse", "--help"]):
        result = perfprof_command(*args)
        assert result.returncode == 0 and "Usage:" in result.stdout


GPU_RUN = """
import perfprof
handler = perfprof.tensorboard_trace_handler(os.environ["TMP"] + "/runs", worker_name="gpu")
config = perfprof.ExperimentalConfig(data_simplification=False, mstx=True)
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      schedule=perfprof.schedule(wait=0, warmup=1, active=3, repeat=1),
                      on_trace_ready=handler, experimental_config=config) as prof:
    for step in range(4):
        with perfprof.record_function("train step"):
            kernel("gemm_kernel")
            range_id = perfprof.mstx.range_start("on stream", stream=7)
            kernel("relu_kernel", stream=7)
            perfprof.mstx.range_end(range_id)
            fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000)
        prof.step()
print(json.dumps(dict(run_dir=handler.run_dirs[-1])))
"""


def test_a_gpu_run_analysed_offline_gives_the_bytes_it_wrote(tmp_path):
    import fake_cupti

    run_dir = Path(fake_cupti.run(GPU_RUN, tmp_path)["run_dir"])
    in_process = outputs(run_dir)
    # The summary tables are compared too: offline they are written from the capture alone.
    (trace_name,) = [name for name in in_process if name.endswith(".pt.trace.json")]
    assert {"kernel_details.csv", "op_statistic.csv", "api_statistic.csv"} <= set(in_process)
    trace = json.loads(in_process[trace_name])
    assert {"gemm_kernel", "relu_kernel"} <= {e.get("name") for e in trace["traceEvents"] if e.get("cat") == "kernel"}
    assert any(e.get("cat") == "gpu_user_annotation" for e in trace["traceEvents"])
    shutil.rmtree(run_dir / OUTPUT_DIR)
    (result,) = perfprof.analyse(str(run_dir))
    assert result.ok and result.warning == "", result
    assert_same_outputs(outputs(run_dir), in_process)


CAPPED = """
import os, resource, sys, threading
import perfprof
from perfprof import _core
config = perfprof.ExperimentalConfig(mstx=True, capture_buffer_mb=8, data_simplification=False)
handler = perfprof.tensorboard_trace_handler(sys.argv[1], worker_name="capped", analyse_flag=False)
with perfprof.profile(on_trace_ready=handler, experimental_config=config) as prof:  # one step, no schedule
    for _ in range(600_000):  # 19 MB of events, more than twice the cap
        perfprof.mstx.mark("m")
    session = prof._session
    buffered = _core.buffered_events()
print(session._stream.cap_flushes, buffered, session._stream.events_appended)
"""


def test_events_beyond_the_buffer_cap_go_to_the_capture_before_the_step_ends(tmp_path):
    result = subprocess.run([sys.executable, "-c", CAPPED, str(tmp_path)], capture_output=True, text=True, timeout=300,
                            env=child_env(), check=True)
    cap_flushes, buffered, appended = map(int, result.stdout.split())
    assert cap_flushes >= 1 and appended >= 8 << 20 >> 1 >> 5  # at least one cap's half moved out
    assert buffered < 600_000  # not everything was held in memory at the end of the step
    (run_dir,) = run_dirs(tmp_path)
    (result,) = perfprof.analyse(str(run_dir))
    trace = load_trace(result.trace_file)
    assert sum(1 for e in trace["traceEvents"] if e.get("name") == "m") == 600_000  # nothing lost on the way


FORK_WHILE_STREAMING = """
import gc, os, sys
import perfprof
handler = perfprof.tensorboard_trace_handler(sys.argv[1], worker_name="forked")
with perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=0, active=3, repeat=1), on_trace_ready=handler) as prof:
    for step in range(3):
        with perfprof.record_function(f"work {step}"):
            if step == 1:  # a worker forked while the capture is written (a DataLoader worker)
                child = os.fork()
                if child == 0:
                    del prof
                    gc.collect()  # the child's copy of the session, and of its capture stream, goes
                    sys.exit(0)
                assert os.waitpid(child, 0)[1] == 0
        prof.step()
print(handler.run_dirs[-1])
"""


def test_a_child_forked_while_the_capture_is_written_leaves_it_alone(tmp_path):
    result = subprocess.run([sys.executable, "-c", FORK_WHILE_STREAMING, str(tmp_path)], capture_output=True, text=True,
                            timeout=120, env=child_env())
    assert result.returncode == 0, result.stderr
    trace = load_trace(str(next((Path(result.stdout.strip()) / OUTPUT_DIR).glob("*.pt.trace.json"))))
    assert sorted(e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("work ")) == \
        ["work 0", "work 1", "work 2"]
