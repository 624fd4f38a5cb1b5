"""One definition of a step, of step statistics and of compile time (docs/analysis.md, "Steps"),
checked against numpy over the trace's ProfilerStep ranges and read the same by every output."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Dict, List

import numpy
import pytest
import torch

import perfprof
from child_process import child_env, trace_events
from database_checks import query
from perfprof import analysis

STEPS = 10
TAIL_S = 0.05  # slept after the last step: the tail is at least this long
STARTUP_S = 0.3  # slept before the model is built under `perfprof run`


def profiled_loop(directory: Path, compile_model: bool = False) -> Path:
    """A with-profile loop of STEPS prof.step() calls, then a pause before the profiler stops."""
    model = torch.nn.Linear(32, 32)
    if compile_model:
        model = torch.compile(model, backend="eager")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          schedule=perfprof.schedule(wait=0, warmup=0, active=STEPS + 5, repeat=1),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(directory))) as prof:
        for _ in range(STEPS):
            model(torch.randn(16, 32)).sum().backward()
            optimizer.step()
            optimizer.zero_grad()
            prof.step()
        time.sleep(TAIL_S)
    (run_dir,) = [path for path in directory.iterdir() if path.is_dir()]
    return run_dir


def trace_step_durations_ns(run_dir: Path) -> Dict[str, int]:
    """ProfilerStep#N -> its duration in the Chrome trace (µs with three decimals: whole ns)."""
    return {event["name"]: round(event["dur"] * 1000) for event in trace_events(run_dir)
            if event.get("name", "").startswith("ProfilerStep#")}


def statistics_of(run_dir: Path) -> Dict[str, object]:
    with analysis.open_run(str(run_dir)) as run:
        (row,) = analysis.step_statistics(run).to_dicts()
    return row


def numpy_statistics(durations: List[int]) -> Dict[str, float]:
    values = numpy.array(durations, dtype=float)
    return {"count": len(values), "avg_ns": values.mean(), "median_ns": numpy.median(values),
            "p5_ns": numpy.percentile(values, 5), "p95_ns": numpy.percentile(values, 95),
            "min_ns": values.min(), "max_ns": values.max(), "stddev_ns": values.std(ddof=1)}


@pytest.fixture(scope="module")
def loop_run(tmp_path_factory) -> Path:
    return profiled_loop(tmp_path_factory.mktemp("loop"))


def test_a_ten_step_loop_has_ten_steps_and_its_tail_apart(loop_run):
    # torch.profiler records the range the profiler stopped in as ProfilerStep#10; it stays in
    # the trace but is the tail, not an 11th step.
    assert sorted(trace_step_durations_ns(loop_run), key=lambda name: int(name.split("#")[1])) == \
        [f"ProfilerStep#{n}" for n in range(STEPS + 1)]
    assert query(str(loop_run / "PERFPROF_OUTPUT" / "perfprof.db"), "SELECT id FROM STEP_TIME ORDER BY id") == \
        [(n,) for n in range(STEPS)]
    with analysis.open_run(str(loop_run)) as run:
        assert [row["step"] for row in analysis.step_times(run)] == list(range(STEPS))
        assert [row["step"] for row in analysis.step_time_breakdown(run)] == list(range(STEPS))
        assert dict(analysis.run_info(run).rows)["steps"] == str(STEPS)
    with open(loop_run / "PERFPROF_OUTPUT" / "step_trace_time.csv", newline="") as file:
        assert [row["Step"] for row in csv.DictReader(file)] == [str(n) for n in range(STEPS)]
    row = statistics_of(loop_run)
    assert row["count"] == STEPS
    assert row["tail_ns"] >= TAIL_S * 1e9
    tail_range = trace_step_durations_ns(loop_run)[f"ProfilerStep#{STEPS}"]
    assert row["tail_ns"] >= tail_range  # the range, and the profiler's own stop after it
    # Start-up: from the window's start to the first step's start (here, the profiler's own start).
    ((window_begin,),) = query(str(loop_run / "PERFPROF_OUTPUT" / "perfprof.db"),
                               "SELECT CAST(value AS INTEGER) FROM META_DATA WHERE name = 'window_begin_ns'")
    ((first_start,),) = query(str(loop_run / "PERFPROF_OUTPUT" / "perfprof.db"), "SELECT min(startNs) FROM STEP_TIME")
    assert row["startup_ns"] == first_start - window_begin >= 0


def test_step_statistics_are_numpys_over_the_traces_steps(loop_run):
    durations = trace_step_durations_ns(loop_run)
    steps = [durations[f"ProfilerStep#{n}"] for n in range(STEPS)]
    row = statistics_of(loop_run)
    for name, value in numpy_statistics(steps).items():
        assert row[name] == pytest.approx(value, rel=1e-12), name
    assert row["total_ns"] == sum(steps)


def test_an_even_count_has_the_mean_of_the_middle_two_as_median(loop_run):
    row = statistics_of(loop_run)
    with analysis.open_run(str(loop_run)) as run:
        ordered = sorted(r["duration_ns"] for r in analysis.step_times(run))
    assert row["median_ns"] == (ordered[STEPS // 2 - 1] + ordered[STEPS // 2]) / 2


def test_an_eager_run_has_the_labelled_first_step_excess_as_compile_time(loop_run):
    with analysis.open_run(str(loop_run)) as run:
        durations = [r["duration_ns"] for r in analysis.step_times(run)]
    row = statistics_of(loop_run)
    assert row["compile_source"] == "first_step_excess"
    assert row["compile_ns"] == max(0.0, durations[0] - numpy.median(durations[1:]))


def test_a_compiled_run_has_torchdynamos_compile_time(tmp_path):
    torch._dynamo.reset()
    torch._dynamo.utils.compilation_time_metrics.clear()
    run_dir = profiled_loop(tmp_path, compile_model=True)
    dynamo_s = sum(torch._dynamo.utils.compilation_time_metrics["_compile.compile_inner"])
    ranges = [round(event["dur"] * 1000) for event in trace_events(run_dir)
              if event.get("name") == "_compile.compile_inner (dynamo_timed)"]
    row = statistics_of(run_dir)
    assert row["compile_source"] == "dynamo"
    assert ranges and row["compile_ns"] == sum(ranges)
    # TorchDynamo times each compilation around the range it records.
    assert row["compile_ns"] <= dynamo_s * 1e9 * 1.001


TRAIN = textwrap.dedent(f"""
    import time
    import torch

    time.sleep({STARTUP_S})  # the script's start-up
    model = torch.nn.Linear(32, 32)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range({STEPS}):
        model(torch.randn(16, 32)).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    time.sleep({TAIL_S})  # its tail
""")


def perfprof_run(tmp_path: Path, *options: str) -> Path:
    script = tmp_path / "train.py"
    script.write_text(TRAIN)
    output = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "perfprof", "run", "--export-type", "text,db", "-o", str(output),
                           *options, str(script)], env=child_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (run_dir,) = output.glob("*_perfprof")
    return run_dir


def test_perfprof_run_on_ten_optimizer_steps_has_ten_steps_start_up_and_tail_apart(tmp_path):
    run_dir = perfprof_run(tmp_path)
    with analysis.open_run(str(run_dir)) as run:
        assert [row["step"] for row in analysis.step_times(run)] == list(range(STEPS))
    row = statistics_of(run_dir)
    assert row["count"] == STEPS
    assert row["startup_ns"] >= STARTUP_S * 1e9  # the sleep before the model is built is no step
    assert row["tail_ns"] >= TAIL_S * 1e9
    # The first step begins at the first forward pass: the model's first call, after start-up.
    events = trace_events(run_dir)
    (step0,) = [event for event in events if event.get("name") == "ProfilerStep#0"]
    first_op = min(event["ts"] for event in events if event.get("name") == "aten::linear")
    assert step0["ts"] <= first_op


def test_perfprof_run_warmup_steps_are_start_up(tmp_path):
    run_dir = perfprof_run(tmp_path, "--warmup-steps", "2")
    with analysis.open_run(str(run_dir)) as run:
        assert [row["step"] for row in analysis.step_times(run)] == list(range(2, STEPS))
    row = statistics_of(run_dir)
    assert row["count"] == STEPS - 2 and row["startup_ns"] >= STARTUP_S * 1e9


def test_summary_json_reports_the_same_statistics(loop_run):
    done = subprocess.run([sys.executable, "-m", "perfprof", "summary", str(loop_run), "--format", "json",
                           "--analysis", "step_statistics"], env=child_env(), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert json_rows(done.stdout, "step_statistics") == [statistics_of(loop_run)]


def json_rows(text: str, name: str) -> List[Dict[str, object]]:
    """The rows of analysis `name` in `perfprof summary --format json`'s output."""
    table = json.loads(text)["analyses"][name]
    return [dict(zip(table["columns"], row)) for row in table["rows"]]
