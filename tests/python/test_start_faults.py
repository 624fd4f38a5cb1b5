"""A start that fails at any stage leaves the process able to profile (issue 34): what the stages
before it did is undone, one line says what failed, the job goes on, and the next profile
records as if nothing had happened. Before, a failure after the session claimed the recorder
kept it claimed: every later profiler of the process raised 'another profiler is already
collecting', and a long-running job's dynamic profiling collected nothing more."""
from __future__ import annotations

import logging
from typing import List

import pytest
import torch

import perfprof
from perfprof import ProfilerActivity, _core, _session, torch_capture
from perfprof._session import start_stages
import fake_cupti

# The stages whose failure leaves the cycle uncollected; every other one degrades the cycle (a
# collector's data, the capture file or the exit notice missing) and it is recorded all the same.
ABANDONING = {"claim", "collectors", "recording limit", "window"}


def perfprof_lines(caplog) -> List[str]:
    return [record.getMessage() for record in caplog.records if record.name.startswith("perfprof")
            and record.levelno >= logging.WARNING]


def recorded_names(prof) -> List[str]:
    return [event.name for event in prof.events()]


def profile_one_step(**options):
    model = torch.nn.Linear(2, 2)
    with perfprof.profile(activities=[ProfilerActivity.CPU], **options) as prof:
        with perfprof.record_function("work"):
            model(torch.ones(2, 2))
    return prof


def test_a_failure_after_the_claim_frees_the_recorder_and_the_next_profile_records(monkeypatch, caplog):
    """The issue's case: the recording limit the core cannot hold (2**80 MiB passed the checks
    once) raised a raw pybind11 TypeError out of start() and left the recorder claimed."""
    monkeypatch.setattr(_session, "_record_limit_bytes", lambda limit_mb: 2 ** 100)
    with caplog.at_level(logging.WARNING, logger="perfprof"):
        failed = profile_one_step()  # does not raise: the job goes on
    assert failed.trace is None and _session._collecting is None and _core.channels() == 0
    (line,) = perfprof_lines(caplog)
    assert line.startswith("perfprof: the collection could not start (recording limit: TypeError(")
    assert line.endswith("this cycle is not collected and the job goes on")
    with pytest.raises(RuntimeError, match="export_chrome_trace"):  # no trace of another cycle stands in for it
        failed.export_chrome_trace("unused.json")
    monkeypatch.undo()
    names = recorded_names(profile_one_step())
    assert "work" in names and "aten::addmm" in names


def test_a_host_capture_that_fails_half_way_is_undone(monkeypatch, caplog):
    """torch's capture had begun when the Python tracer failed: left on, it kept the thread's
    capture taken, and every later profiler of the thread captured no operator."""
    def failing_install(*arguments):
        raise OSError("no tracer today")

    monkeypatch.setattr(torch_capture._core, "python_tracer_install", failing_install)
    with caplog.at_level(logging.WARNING, logger="perfprof"):
        degraded = profile_one_step(with_stack=True)
    assert "work" in recorded_names(degraded)  # the rest of the cycle is recorded
    assert [line for line in perfprof_lines(caplog) if "no tracer today" in line] == [
        "perfprof: PyTorch host capture could not start: OSError('no tracer today')"]
    monkeypatch.undo()
    prof = profile_one_step(with_stack=True)
    names = recorded_names(prof)
    assert "aten::addmm" in names
    assert any(name.endswith(": profile_one_step") for name in names), names  # the Python tracer too


def test_a_profile_refused_while_another_collects_can_start_once_it_stops():
    first, second = perfprof.profile(), perfprof.profile()
    first.start()
    with pytest.raises(RuntimeError, match="another profiler is already collecting"):
        second.start()
    first.stop()
    second.start()  # was 'the profiler is already started': the refused start had marked it started
    with perfprof.record_function("second"):
        pass
    second.stop()
    assert "second" in recorded_names(second)


# Runs under the CUPTI test double: for each stage of a start, a collection whose start fails
# there, then one with nothing failing. Each collection asks for every data source (GPU, torch
# operators, Python calls, memory, GC pauses, telemetry) and writes a run directory.
STAGE_SWEEP = """
import gc, logging, torch
import perfprof
from perfprof import ProfilerActivity, _core, _session, _start_faults, torch_capture
from perfprof._session import start_stages

lines = []
class Keep(logging.Handler):
    def emit(self, record):
        lines.append(record.getMessage())
logging.getLogger("perfprof").addHandler(Keep(logging.INFO))
logging.getLogger("perfprof").setLevel(logging.INFO)  # a run directory not made at once is said at its end
model = torch.nn.Linear(2, 2)

def categories(prof):
    path = os.path.join(os.environ["TMP"], "last.json")
    prof.export_chrome_trace(path)
    return sorted({event.get("cat") or "" for event in load_trace(path)["traceEvents"]})

def collect(folder):
    handler = perfprof.tensorboard_trace_handler(folder, worker_name="w")
    config = perfprof.ExperimentalConfig(gc_detect_threshold=0.0, host_sys=["cpu"])
    with perfprof.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], profile_memory=True,
                          with_stack=True, experimental_config=config, on_trace_ready=handler,
                          schedule=perfprof.schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(3):
            with perfprof.record_function("work"):
                model(torch.ones(2, 2))
                kernel("gemm_kernel")
                gc.collect()
            prof.step()
    kinds = categories(prof) if prof.trace is not None else None
    left = sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    return dict(kinds=kinds, run_dirs=list(handler.run_dirs), left=left)

results = {}
for stage in start_stages():
    del lines[:]
    with _start_faults.failing_at(stage):
        failing = collect(os.path.join(os.environ["TMP"], stage.replace(" ", "_") + "_failing"))
    failing["lines"] = list(lines)
    freed = _session._collecting is None and _core.channels() == 0 and torch_capture._thread.options is None
    after = collect(os.path.join(os.environ["TMP"], stage.replace(" ", "_") + "_after"))
    results[stage] = dict(failing=failing, freed=freed, after=after)
print(json.dumps(results))
"""


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Each stage's two collections, as the child saw them."""
    return fake_cupti.run(STAGE_SWEEP, tmp_path_factory.mktemp("sweep"))


# What a collection that asks for everything records, by the Chrome trace's categories.
EVERY_KIND = {"user_annotation", "cpu_op", "python_function", "cpu_instant_event", "kernel", "cuda_runtime", "gc"}


def test_the_stages_are_those_of_every_collector():
    stages = start_stages()
    for kind in perfprof._collectors.KINDS:
        assert f"{kind.name} start" in stages
    assert stages[0] == "claim" and len(set(stages)) == len(stages)


@pytest.mark.parametrize("stage", start_stages())
def test_a_start_failing_at_each_stage_is_undone_and_the_next_profile_records(sweep, stage):
    result = sweep[stage]
    failing, after = result["failing"], result["after"]
    injected = [line for line in failing["lines"] if f"failure injected at {stage}" in line]
    assert len(injected) == 1, failing["lines"]  # the fault fired, and was said once
    assert result["freed"], "the recorder, its channels and the thread's capture are free again"
    if stage in ABANDONING:
        assert injected[0].startswith(f"perfprof: the collection could not start ({stage}: InjectedFault(")
        assert failing["kinds"] is None and failing["run_dirs"] == [] and failing["left"] == []
    else:
        assert "user_annotation" in failing["kinds"] and len(failing["run_dirs"]) == 1
    assert EVERY_KIND <= set(after["kinds"]), after["kinds"]
    assert len(after["run_dirs"]) == 1
