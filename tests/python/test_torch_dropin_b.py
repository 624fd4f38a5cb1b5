"""Switching a script from torch.profiler to perfprof by its import (issue 32, part B): each test
runs one snippet under torch.profiler and under perfprof and asserts the same behaviour, or the
documented difference (the run directory's layout, post_processing_timeout_s keeping every event)."""
from __future__ import annotations

import collections
import gc
import gzip
import json
import logging
import os
import re
import subprocess
import sys

import pytest

import perfprof
from child_process import child_env

torch = pytest.importorskip("torch")


def small_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))

    def step():
        model(torch.ones(4, 8)).sum().backward()

    step()  # the grads exist before either profiler
    return step


def profiled_steps(profiler, steps, **options):
    """`steps` steps under `profiler` (torch.profiler or perfprof), each cycle waiting one step,
    warming up one and recording two."""
    step = small_step()
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                          schedule=profiler.schedule(wait=1, warmup=1, active=2), **options) as prof:
        for _ in range(steps):
            step()
            prof.step()


# -- gap 5: KinetoStepTracker ----------------------------------------------------------------

# 8 steps under one profiler, in a child (KINETO_USE_DAEMON makes torch's Kineto start a client of
# the dynolog daemon, which must not outlive the test): how far they move torch's global step
# count, and whether the profiler is still a step requester after its with-block.
STEPS_COUNTED = """
import json, sys
import torch, torch.profiler, perfprof
from torch.autograd.profiler import KinetoStepTracker
profiler = torch.profiler if sys.argv[1] == "torch" else perfprof
before = KinetoStepTracker.current_step()
with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                      schedule=profiler.schedule(wait=1, warmup=1, active=2)) as prof:
    for _ in range(8):
        torch.ones(4).sum()
        prof.step()
print(json.dumps([KinetoStepTracker.current_step() - before, "ProfilerStep" in KinetoStepTracker._step_dict]))
"""


def steps_counted(profiler, daemon):
    env = child_env()
    env.pop("KINETO_USE_DAEMON", None)
    if daemon:
        env["KINETO_USE_DAEMON"] = "1"
    child = subprocess.run([sys.executable, "-c", STEPS_COUNTED, profiler], env=env, capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    return json.loads(child.stdout.splitlines()[-1])


@pytest.mark.parametrize("daemon", [True, False], ids=["KINETO_USE_DAEMON", "no-daemon"])
def test_step_advances_kineto_step_tracker_as_torch_does(daemon):
    assert steps_counted("perfprof", daemon) == steps_counted("torch", daemon) == [8 if daemon else 0, False]


# -- gap 11: post_processing_timeout_s -------------------------------------------------------


@pytest.mark.parametrize("profiler", [torch.profiler, perfprof], ids=["torch", "perfprof"])
def test_negative_post_processing_timeout_is_refused_in_torchs_words(profiler):
    with pytest.raises(ValueError, match="post_processing_timeout_s must be non-negative"):
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU], post_processing_timeout_s=-1):
            pass


class Warnings(logging.Handler):
    """The warnings torch.autograd.profiler's logger (which does not propagate to the root
    logger) and perfprof's log while installed."""

    LOGGERS = ("torch.autograd.profiler", "perfprof")

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())

    def __enter__(self):
        for name in self.LOGGERS:
            logging.getLogger(name).addHandler(self)
        return self

    def __exit__(self, *exc_info):
        for name in self.LOGGERS:
            logging.getLogger(name).removeHandler(self)


def test_zero_post_processing_timeout_warns_where_torch_does_and_keeps_every_event():
    step = small_step()
    results = {}
    for name, profiler in (("torch", torch.profiler), ("perfprof", perfprof)):
        for timeout in (None, 0):
            with Warnings() as logged:
                with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                                      post_processing_timeout_s=timeout) as prof:
                    step()
                events = len(prof.events())
                prof.key_averages()  # the same cycle: no second warning
            results[name, timeout] = events, [message for message in logged.messages if "partial results" in message]
    torch_events, torch_warnings = results["torch", 0]
    assert torch_events == 0 and len(torch_warnings) == 1 and "timed out" in torch_warnings[0]
    assert results["torch", None][1] == results["perfprof", None][1] == []
    our_events, our_warnings = results["perfprof", 0]
    assert our_events == results["perfprof", None][0] > 0  # nothing cut
    assert len(our_warnings) == 1
    assert "post_processing_timeout_s=0.000" in our_warnings[0] and "keeps every event" in our_warnings[0]


# -- gap 10: tensorboard_trace_handler's layout ----------------------------------------------


def traces_written(profiler, folder, **handler_options):
    """Two saved cycles written by `profiler`'s tensorboard_trace_handler into `folder`: the trace
    files found by torch's glob, each with its ProfilerStep#N names."""
    profiled_steps(profiler, 8, on_trace_ready=profiler.tensorboard_trace_handler(
        str(folder), worker_name="worker", **handler_options))
    files = sorted(folder.glob("*.pt.trace.json*"))
    return files, [sorted(event["name"] for event in trace_json(path)["traceEvents"]
                          if event["name"].startswith("ProfilerStep#")) for path in files]


def trace_json(path):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt") as file:
        return json.load(file)


@pytest.mark.parametrize("use_gzip", [False, True], ids=["json", "gz"])
def test_flat_layout_writes_the_files_torch_writes(tmp_path, use_gzip):
    theirs, their_steps = traces_written(torch.profiler, tmp_path / "torch", use_gzip=use_gzip)
    ours, our_steps = traces_written(perfprof, tmp_path / "perfprof", use_gzip=use_gzip, layout="flat")
    name = re.compile(r"worker\.\d+\.pt\.trace\.json" + (r"\.gz" if use_gzip else "") + "$")
    assert len(ours) == len(theirs) == 2  # wait=1 warmup=1 active=2, 8 steps: two saved cycles
    assert all(name.match(path.name) for path in theirs + ours)
    assert sorted(entry.name for entry in (tmp_path / "perfprof").iterdir()) == [path.name for path in ours]
    assert our_steps == their_steps == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"]]


def test_default_layout_is_still_the_run_directory(tmp_path):
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="worker")
    profiled_steps(perfprof, 4, on_trace_ready=handler)
    (run_dir,) = handler.run_dirs
    assert list(tmp_path.glob("*.pt.trace.json")) == []
    assert len(list((tmp_path / run_dir).glob("PERFPROF_OUTPUT/worker.*.pt.trace.json"))) == 1


def test_flat_traces_are_summarised_as_torchs_are(tmp_path):
    handler = perfprof.tensorboard_trace_handler(str(tmp_path / "log"), worker_name="worker", layout="flat",
                                                 async_mode=True)
    profiled_steps(perfprof, 8, on_trace_ready=handler)
    handler.wait()
    assert [os.path.basename(path) for path in handler.trace_files] == \
        sorted(path.name for path in (tmp_path / "log").iterdir())
    result = subprocess.run([sys.executable, "-m", "perfprof", "summary", "log", "--format", "json",
                             "-a", "step_statistics"], cwd=str(tmp_path), env=child_env(),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    runs = [json.loads(line) for line in result.stdout.splitlines()]  # one JSON line per trace
    assert [run["run"] for run in runs] == [os.path.join("log", os.path.basename(path)) for path in handler.trace_files]
    for run in runs:
        statistics = run["analyses"]["step_statistics"]
        row = dict(zip(statistics["columns"], statistics["rows"][0]))
        steps_us = [event["dur"] for event in trace_json(tmp_path / run["run"])["traceEvents"]
                    if event["name"].startswith("ProfilerStep#")]
        assert row["count"] == len(steps_us) == 2
        assert row["total_ns"] == pytest.approx(sum(steps_us) * 1000, abs=2)  # the trace's us have 3 decimals


def test_flat_layout_refuses_what_needs_a_run_directory(tmp_path):
    for options in ({"analyse_flag": False}, {"auto_plot": True}, {"plot": {}}):
        with pytest.raises(ValueError, match="layout='flat'"):
            perfprof.tensorboard_trace_handler(str(tmp_path), layout="flat", **options)
    with pytest.raises(ValueError, match="'layout' got 'tree'"):
        perfprof.tensorboard_trace_handler(str(tmp_path), layout="tree")
    with pytest.raises(TypeError, match="'layout' must be a str"):
        perfprof.tensorboard_trace_handler(str(tmp_path), layout=None)


# -- gap 1: torch's _ExperimentalConfig ------------------------------------------------------


def collections_profiled(profiler, config):
    """Three explicit collections (the automatic ones off) under `profiler` with torch's `config`
    and with_stack (torch records its GC events with the Python tracer): the key_averages count
    of 'Python GC' and the trace's names of those events."""
    gc.disable()
    try:
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU], with_stack=True,
                              experimental_config=config) as prof:
            torch.ones(4).sum()
            for _ in range(3):
                gc.collect()
    finally:
        gc.enable()
    counts = {row.key: row.count for row in prof.key_averages()}
    return prof, counts.get("Python GC", 0)


def test_torch_config_records_python_gc_as_torch_does(tmp_path):
    config = torch._C._profiler._ExperimentalConfig(record_python_gc_info=True)
    theirs, their_collections = collections_profiled(torch.profiler, config)
    ours, our_collections = collections_profiled(perfprof, config)
    assert our_collections == their_collections == 3
    names = []
    for prof in (theirs, ours):
        prof.export_chrome_trace(str(tmp_path / "t.json"))
        names.append([event["name"] for event in trace_json(tmp_path / "t.json")["traceEvents"]
                      if "GC" in event.get("name", "") and event.get("ph") == "X"])
    assert names[0] == names[1] == ["Python GC"] * 3


def test_torch_config_fields_map_to_perfprofs_options():
    config = torch._C._profiler._ExperimentalConfig(record_python_gc_info=True, enable_cuda_sync_events=True,
                                                    trace_only=True)
    with Warnings() as logged:
        prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config)
    assert prof.experimental_config == perfprof.ExperimentalConfig(
        gc_detect_threshold=0, profiler_level=perfprof.ProfilerLevel.Level1)
    assert logged.messages == []
    assert perfprof.profile(experimental_config=torch._C._profiler._ExperimentalConfig()).experimental_config == \
        perfprof.ExperimentalConfig()


def test_torch_config_fields_perfprof_does_not_collect_are_named_in_one_warning():
    config = torch._C._profiler._ExperimentalConfig(verbose=True, capture_overload_names=True, profile_all_threads=True,
                                                    profiler_metrics=["kineto__cuda_core_flops"])
    with Warnings() as logged:
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config) as prof:
            torch.ones(4).sum()
    assert any(row.key == "aten::sum" for row in prof.key_averages())  # it profiled
    (warning,) = [message for message in logged.messages if "_ExperimentalConfig" in message]
    assert "profiler_metrics, verbose, profile_all_threads, capture_overload_names are not collected" in warning


def test_anything_else_is_refused_naming_the_field():
    with pytest.raises(TypeError, match="'experimental_config' must be a perfprof.ExperimentalConfig"):
        perfprof.profile(experimental_config={"verbose": True})


# -- gap 4: per-activity filters -------------------------------------------------------------


def categories_recorded(profiler, activity_types, tmp_path):
    """The trace's complete events by category, under `profiler` with CPU filtered to
    `activity_types` (torch's own 'Trace' span left out)."""
    with profiler.profile(activities=[{profiler.ProfilerActivity.CPU: activity_types}], with_stack=True) as prof:
        with profiler.record_function("annotated"):
            torch.ones(3).add(1)
    prof.export_chrome_trace(str(tmp_path / "filtered.json"))
    events = trace_json(tmp_path / "filtered.json")["traceEvents"]
    return collections.Counter(event["cat"] for event in events if event.get("ph") == "X" and event["cat"] != "Trace")


@pytest.mark.parametrize("activity_types", [["CPU_OP"], ["USER_ANNOTATION"], ["CPU_OP", "USER_ANNOTATION"], []],
                         ids=["ops", "annotations", "both", "none"])
def test_cpu_filter_records_what_torch_records(tmp_path, activity_types):
    theirs = categories_recorded(torch.profiler, activity_types, tmp_path)
    ours = categories_recorded(perfprof, activity_types, tmp_path)
    assert ours == theirs
    assert set(ours) == {{"CPU_OP": "cpu_op", "USER_ANNOTATION": "user_annotation"}[name] for name in activity_types}


def test_cpu_filter_of_python_functions_keeps_them_alone(tmp_path):
    for profiler in (torch.profiler, perfprof):
        recorded = categories_recorded(profiler, ["PYTHON_FUNCTION"], tmp_path)
        assert set(recorded) == {"python_function"}, profiler.__name__


def test_filters_are_checked_and_recorded_with_the_run(tmp_path):
    cpu = perfprof.ProfilerActivity.CPU
    with pytest.raises(ValueError, match="unknown activity type 'KERNEL' for CPU"):
        perfprof.profile(activities=[{cpu: ["KERNEL"]}])
    with pytest.raises(ValueError, match="CPU is given more than once, with a filter"):
        perfprof.profile(activities=[cpu, {cpu: ["CPU_OP"]}])
    with pytest.raises(TypeError, match="the filter of CPU must be a list"):
        perfprof.profile(activities=[{cpu: "CPU_OP"}])
    handler = perfprof.tensorboard_trace_handler(str(tmp_path))
    prof = perfprof.profile(activities=[{torch.profiler.ProfilerActivity.CPU: ["USER_ANNOTATION", "CPU_OP"]}],
                            on_trace_ready=handler)
    assert prof.activities == [cpu]
    with prof:
        torch.ones(2).sum()
    (run_dir,) = handler.run_dirs
    config = json.loads((tmp_path / run_dir / "profiler_info.json").read_text())["config"]
    assert config["activities"] == ["CPU"] and config["activity_filters"] == {"CPU": ["CPU_OP", "USER_ANNOTATION"]}


GPU_FILTERED = """
import perfprof
cuda = perfprof.ProfilerActivity.CUDA
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, {cuda: %r}]) as prof:
    kernel("gemm_kernel")
    fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000)
    fake.fake_cupti_memset(4096, 0, 0, 1, 7, 5_000)
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
events = load_trace(path)["traceEvents"]
# The run's slices: Kineto's window markers ("PyTorch Profiler (0)" on its "Spans" track) left out.
print(json.dumps(dict(categories=sorted({e["cat"] for e in events if e.get("ph") == "X" and e.get("pid") != "Spans"}))))
"""


@pytest.mark.parametrize("activity_types, categories", [
    (["CONCURRENT_KERNEL"], ["cuda_runtime", "kernel"]),  # CPU's group has CUDA_RUNTIME: launches stay
    (["GPU_MEMCPY", "GPU_MEMSET"], ["cuda_runtime", "gpu_memcpy", "gpu_memset"]),
    ([], ["cuda_runtime"]),
])
def test_cuda_filter_collects_the_kinds_it_names(tmp_path, activity_types, categories):
    from fake_cupti import run

    assert run(GPU_FILTERED % activity_types, tmp_path)["categories"] == categories
