"""One number, read everywhere: each quantity of a run read from every output that shows it, and
from an independent computation over the raw Chrome trace (numpy, HTA with its rounding off,
torch's own event list), must be the same (docs/analysis.md defines each quantity).

Runs: a CPU training loop of a real model (GPT-2 from `transformers`, a small config with random
weights) profiled with shapes, memory and FLOPs and a schedule that ends inside a recorded step
(so the run has a tail), and a GPU run through the CUPTI test double with kernels of repeated
names over two recorded steps. Outputs read: the Chrome trace, the run database (its tables and
the analyses' SQL), the CSV summaries, `perfprof summary --format json`, `perfprof compare --csv`,
the plots' data and the profiler's `key_averages()`.

The sweep's numbers (results.jsonl, aggregate, compare of sweep entries) are checked the same way
in test_sweep.py, the cluster's (per-rank tables, cluster_step_trace_time.csv, its database and
report) in test_cluster_slow_rank.py, the memory peak across the HTML page, summary, database and torch's
memory timeline in test_memory_peak.py, and a torch.profiler trace's operators against torch's
key_averages in test_trace_import.py.
"""
from __future__ import annotations

import csv
import io
import json
import os
from collections import defaultdict
from typing import Any, Dict, List, Tuple

import numpy
import pytest
from click.testing import CliRunner

import perfprof
from analysis_runs import US, Activity, constructed_run
from database_checks import query
from perfprof import analysis
from perfprof.cli import main
from trace_checks import load_trace, trace_file_of
import time_sets

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

# wait 1, warm-up 1, then 5 active steps of which the loop runs 4: the profile stops inside the
# fifth, which is the run's tail, not a step.
SCHEDULE = dict(wait=1, warmup=1, active=5, repeat=1)
LOOP_STEPS = 6
RECORDED_STEPS = 4


def ns(microseconds: float) -> int:
    """A Chrome trace time (us, three decimals) in integer ns."""
    return round(microseconds * 1000)


def cli_json(*args: str) -> Dict[str, Any]:
    result = CliRunner().invoke(main, ["summary", "--format", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def analysis_rows(document: Dict[str, Any], name: str) -> List[Dict[str, Any]]:
    table = document["analyses"][name]
    return [dict(zip(table["columns"], row)) for row in table["rows"]]


def compare_sections(base: str, new: str) -> Dict[str, List[Dict[str, str]]]:
    result = CliRunner().invoke(main, ["compare", base, new, "--csv", "--top", "1000"])
    assert result.exit_code == 0, result.output
    sections = {}
    for block in result.stdout.strip("\n").split("\n\n"):
        heading, _, body = block.partition("\n")
        sections[heading[2:].split(":")[0]] = list(csv.DictReader(io.StringIO(body)))
    return sections


def csv_rows(run_dir: str, name: str) -> List[Dict[str, str]]:
    with open(os.path.join(run_dir, "PERFPROF_OUTPUT", name), newline="") as file:
        return list(csv.DictReader(file))


def database(run_dir: str) -> str:
    return os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")


# --- Independent computations over the raw trace -------------------------------------------------

def trace_steps(trace: Dict[str, Any]) -> Dict[int, Tuple[int, int]]:
    """Step number -> (start, end) ns of the trace's ProfilerStep#N ranges, the tail left out."""
    steps = {}
    for event in trace["traceEvents"]:
        if event.get("ph") == "X" and event["name"].startswith("ProfilerStep#"):
            if not event.get("args", {}).get("step_tail"):
                start = ns(event["ts"])
                steps[int(event["name"].split("#")[1])] = (start, start + ns(event["dur"]))
    return steps


def trace_tail(trace: Dict[str, Any]) -> int:
    (tail,) = [ns(e["dur"]) for e in trace["traceEvents"]
               if e.get("ph") == "X" and e.get("args", {}).get("step_tail")]
    return tail


def trace_operators(trace: Dict[str, Any]) -> Dict[str, Dict[str, int]]:
    """Per operator name: count, total (sum of durations) and self time (total minus the operators
    directly inside it on its thread; other ranges between them are transparent), as
    docs/analysis.md's top_operators defines them, computed from the trace's cpu_op slices."""
    by_thread = defaultdict(list)
    for event in trace["traceEvents"]:
        if event.get("ph") == "X" and event.get("cat") == "cpu_op":
            start = ns(event["ts"])
            by_thread[(event["pid"], event["tid"])].append((start, start + ns(event["dur"]), event["name"]))
    totals: Dict[str, Dict[str, int]] = defaultdict(lambda: dict(count=0, total_ns=0, self_ns=0))
    for slices in by_thread.values():
        slices.sort(key=lambda s: (s[0], -s[1]))
        stack: List[List[Any]] = []  # [end, name, duration, children's durations]

        def close(entry: List[Any]) -> None:
            row = totals[entry[1]]
            row["count"] += 1
            row["total_ns"] += entry[2]
            row["self_ns"] += entry[2] - entry[3]

        for start, end, name in slices:
            while stack and stack[-1][0] <= start:
                close(stack.pop())
            if stack:
                stack[-1][3] += end - start
            stack.append([end, name, end - start, 0])
        while stack:
            close(stack.pop())
    return dict(totals)


def numpy_statistics(durations: List[int]) -> Dict[str, float]:
    values = numpy.array(durations, dtype=float)
    return dict(count=len(values), total_ns=values.sum(), avg_ns=values.mean(), median_ns=numpy.median(values),
                p5_ns=numpy.percentile(values, 5), p95_ns=numpy.percentile(values, 95),
                min_ns=values.min(), max_ns=values.max(), stddev_ns=values.std(ddof=1))


# --- A CPU run of a real model --------------------------------------------------------------------

def gpt2_training_step():
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=2, n_embd=64, n_head=2, vocab_size=1000, n_positions=64,
                                     attn_implementation="eager")
    model = transformers.GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 1000, (2, 32))

    def step() -> None:
        loss = model(tokens, labels=tokens).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


@pytest.fixture(scope="module")
def cpu_run(tmp_path_factory: pytest.TempPathFactory):
    """(run directory, the profiler after the run) of GPT-2 training steps."""
    step = gpt2_training_step()
    step()  # the first call's one-off work outside the recording
    folder = tmp_path_factory.mktemp("cpu_run")
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], schedule=perfprof.schedule(**SCHEDULE),
                            record_shapes=True, profile_memory=True, with_flops=True,
                            on_trace_ready=perfprof.tensorboard_trace_handler(str(folder)),
                            experimental_config=perfprof.ExperimentalConfig(export_type=["text", "db"]))
    with prof:
        for _ in range(LOOP_STEPS):
            step()
            prof.step()
    (run_dir,) = [str(path) for path in folder.iterdir() if path.is_dir()]
    return run_dir, prof


@pytest.fixture(scope="module")
def cpu_trace(cpu_run):
    return load_trace(trace_file_of(cpu_run[0]))


@pytest.fixture(scope="module")
def cpu_summary(cpu_run):
    return cli_json(cpu_run[0], "--top", "100000", "-a", "step_times", "-a", "step_statistics",
                    "-a", "top_operators", "-a", "step_time_breakdown", "-a", "memory_peaks")


@pytest.fixture(scope="module")
def cpu_compare(cpu_run):
    return compare_sections(cpu_run[0], cpu_run[0])


def test_steps_read_the_same_everywhere(cpu_run, cpu_trace, cpu_summary, cpu_compare):
    run_dir, _ = cpu_run
    from_trace = {step: end - start for step, (start, end) in trace_steps(cpu_trace).items()}
    assert len(from_trace) == RECORDED_STEPS
    outputs = {
        "STEP_TIME": {step: end - start for step, start, end in
                      query(database(run_dir), "SELECT id, startNs, endNs FROM STEP_TIME")},
        "summary step_times": {row["step"]: row["duration_ns"] for row in analysis_rows(cpu_summary, "step_times")},
        "step_trace_time.csv": {int(row["Step"]): ns(float(row["Stage"]))
                                for row in csv_rows(run_dir, "step_trace_time.csv")},
        "compare": {int(row["step"]): int(row["base_duration_ns"]) for row in cpu_compare["steps"]
                    if row["step"].isdigit()},
    }
    with analysis.open_run(run_dir) as run:
        outputs["step_time_breakdown"] = {row["step"]: row["duration_ns"]
                                          for row in analysis.step_time_breakdown(run).to_dicts()}
    for output, steps in outputs.items():
        assert steps == from_trace, output


def test_step_statistics_read_the_same_everywhere(cpu_run, cpu_trace, cpu_summary, cpu_compare):
    run_dir, _ = cpu_run
    expected = numpy_statistics([end - start for start, end in trace_steps(cpu_trace).values()])
    (summary,) = analysis_rows(cpu_summary, "step_statistics")
    for column, value in expected.items():
        assert summary[column] == pytest.approx(value, rel=1e-9), column
    assert summary["tail_ns"] == trace_tail(cpu_trace)
    compared = {row["step"]: float(row["base_duration_ns"]) for row in cpu_compare["steps"]}
    for statistic in ("mean", "median", "p5", "p95"):
        column = "avg_ns" if statistic == "mean" else f"{statistic}_ns"
        assert compared[statistic] == pytest.approx(expected[column], rel=1e-9), statistic
    from perfprof.plots._catalogue import step_times_with_median  # what the step_times plot draws
    with analysis.open_run(run_dir) as run:
        plotted = step_times_with_median(run)
    assert dict(zip(plotted.column("step"), plotted.column("duration_ns"))) == {
        step: end - start for step, (start, end) in trace_steps(cpu_trace).items()}
    assert plotted.column("median_ns") == [pytest.approx(expected["median_ns"], rel=1e-9)] * RECORDED_STEPS


def test_operator_times_read_the_same_everywhere(cpu_run, cpu_trace, cpu_summary, cpu_compare):
    run_dir, prof = cpu_run
    expected = trace_operators(cpu_trace)
    assert len(expected) > 30  # GPT-2's forward, backward and AdamW operators
    summary = {row["name"]: {key: row[key] for key in ("count", "total_ns", "self_ns")}
               for row in analysis_rows(cpu_summary, "top_operators")}
    assert summary == expected
    compared = {row["name"]: int(row["base_total_ns"]) for row in cpu_compare["operators"]}
    assert compared == {name: row["total_ns"] for name, row in expected.items()}

    # operator_details.csv and key_averages() are torch's function events, which merge a nested
    # call of the same operator into its caller: they agree with the trace on the other operators.
    recursive = {name for name, row in expected.items()
                 if row["count"] != sum(1 for e in cpu_trace["traceEvents"]
                                        if e.get("cat") == "cpu_op" and e["name"] == name)}
    assert not recursive  # the trace's own count is the definition
    details: Dict[str, Dict[str, int]] = defaultdict(lambda: dict(count=0, total_ns=0))
    for row in csv_rows(run_dir, "operator_details.csv"):  # one row per name and input shapes
        details[row["Name"]]["count"] += int(row["Count"])
        details[row["Name"]]["total_ns"] += ns(float(row["Host Total Duration(us)"]))
    averages = {row.key: dict(count=row.count, total_ns=round(row.cpu_time_total * 1000))
                for row in prof.key_averages()}
    merged = {name for name, row in details.items() if row["count"] != expected.get(name, {}).get("count")}
    for name, row in expected.items():
        if name in merged or name not in details:
            continue
        assert details[name]["count"] == row["count"], name
        assert abs(details[name]["total_ns"] - row["total_ns"]) <= row["count"], name  # us, 3 decimals per row
        assert averages[name]["count"] == row["count"], name
        assert abs(averages[name]["total_ns"] - row["total_ns"]) <= row["count"], name
    # What torch merges is a nested call of the same name: its count is below the trace's.
    assert all(details[name]["count"] < expected[name]["count"] for name in merged if name in expected)


def test_host_step_breakdown_reads_the_same_everywhere(cpu_run, cpu_trace, cpu_summary):
    run_dir, _ = cpu_run
    # Operators' union inside each step, over every thread (docs/analysis.md, step_time_breakdown).
    operators = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in cpu_trace["traceEvents"]
                 if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    merged = time_sets.union(operators)
    expected = {step: time_sets.inside(merged, start, end) for step, (start, end) in trace_steps(cpu_trace).items()}
    summary = {row["step"]: row["operators_ns"] for row in analysis_rows(cpu_summary, "step_time_breakdown")}
    assert summary == expected
    database_rows = {int(step): value for step, value in
                     query(database(run_dir), "SELECT step, hostOperators FROM STEP_TRACE_TIME")}
    assert database_rows == expected


def test_memory_peak_reads_the_same_in_summary_compare_and_the_database(cpu_run, cpu_summary, cpu_compare):
    run_dir, _ = cpu_run
    peaks = {(row["deviceType"], row["category"]): row["peak_bytes"]
             for row in analysis_rows(cpu_summary, "memory_peaks")}
    assert peaks[("CPU", "TOTAL")] > 0
    compared = {row["category"]: int(row["base_peak_bytes"]) for row in cpu_compare["memory"] if row["device"] == "CPU"}
    assert compared == {category: value for (device, category), value in peaks.items() if device == "CPU"}
    # The timeline's rows, summed per point: its largest total is the TOTAL peak.
    totals = query(database(run_dir), "SELECT max(total) FROM (SELECT sum(m.bytes) AS total FROM MEMORY_CATEGORIES m "
                                      "JOIN StringIds s ON s.id = m.deviceType WHERE s.value = 'CPU' "
                                      "GROUP BY m.timestamp)")
    assert totals == [(peaks[("CPU", "TOTAL")],)]


def test_the_runs_trace_alone_reads_as_the_run(cpu_run, cpu_summary):
    """The run's Chrome trace, imported without its run directory (perfprof summary TRACE), gives
    the steps, their statistics (the tail marked step_tail left out) and the operators of the run."""
    run_dir, _ = cpu_run
    imported = cli_json(trace_file_of(run_dir), "--top", "100000", "-a", "step_times", "-a", "step_statistics",
                        "-a", "top_operators")
    for name in ("step_times", "step_statistics", "top_operators"):
        assert analysis_rows(imported, name) == analysis_rows(cpu_summary, name), name


# --- A GPU run through the CUPTI test double ------------------------------------------------------

# Kernels of three names with different durations on two streams, a copy and a memset.
GPU_SCENARIO = [
    Activity("kernel", 7, 0, 10 * US, 100 * US, name="gemm"),
    Activity("kernel", 7, 5 * US, 120 * US, 37 * US, name="gemm"),
    Activity("kernel", 7, 20 * US, 170 * US, 13 * US, name="relu"),
    Activity("kernel", 9, 30 * US, 60 * US, 81 * US, name="softmax"),
    Activity("kernel", 9, 40 * US, 200 * US, 7 * US, name="relu"),
    Activity("kernel", 7, 300 * US, 310 * US, 55 * US, name="gemm"),
    Activity("memcpy", 20, 380 * US, 400 * US, 40 * US, bytes=1 << 20),
    Activity("memset", 20, 430 * US, 450 * US, 10 * US, bytes=4096),
]


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(constructed_run(GPU_SCENARIO, tmp_path_factory.mktemp("gpu_run")))


def test_kernel_times_read_the_same_everywhere(gpu_run):
    trace = load_trace(trace_file_of(gpu_run))
    durations: Dict[str, List[int]] = defaultdict(list)
    for event in trace["traceEvents"]:
        if event.get("ph") == "X" and event.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            durations[event["name"]].append(ns(event["dur"]))
    assert sorted(len(values) for values in durations.values()) == [1, 1, 1, 2, 3]
    expected = {name: (len(values), sum(values)) for name, values in durations.items()}

    summary = cli_json(gpu_run, "--top", "1000", "-a", "top_kernels")
    outputs = {
        "summary top_kernels": {row["name"]: (row["count"], row["total_ns"])
                                for row in analysis_rows(summary, "top_kernels")},
        "KERNEL_DETAILS": {name: (count, total) for name, count, total in query(
            database(gpu_run), "SELECT s.value, count(*), sum(k.duration) FROM KERNEL_DETAILS k "
                               "JOIN StringIds s ON s.id = k.nameId GROUP BY s.value")},
        "compare": {row["name"]: (int(row["base_count"]), int(row["base_total_ns"]))
                    for row in compare_sections(gpu_run, gpu_run)["kernels"]},
    }
    details: Dict[str, List[int]] = defaultdict(list)
    for row in csv_rows(gpu_run, "kernel_details.csv"):
        details[row["Name"]].append(ns(float(row["Duration(us)"])))
    outputs["kernel_details.csv"] = {name: (len(values), sum(values)) for name, values in details.items()}
    for output, rows in outputs.items():
        assert rows == expected, output

    # op_statistic.csv: kernels only, nsys's cuda_gpu_kern_sum columns.
    statistic = {row["Name"]: (int(row["Instances"]), int(row["Total Time (ns)"]))
                 for row in csv_rows(gpu_run, "op_statistic.csv")}
    assert statistic == {name: value for name, value in expected.items() if name in ("gemm", "relu", "softmax")}


def test_kernel_statistics_equal_numpy_and_hta(gpu_run, monkeypatch):
    trace = load_trace(trace_file_of(gpu_run))
    durations: Dict[str, List[int]] = defaultdict(list)
    for event in trace["traceEvents"]:
        if event.get("ph") == "X" and event.get("cat") == "kernel":
            durations[event["name"]].append(ns(event["dur"]))
    with analysis.open_run(gpu_run) as run:
        rows = {row["name"]: row for row in analysis.top_kernels(run, top=100).to_dicts()}
    for name, values in durations.items():
        expected = numpy_statistics(values)
        for column in ("count", "total_ns", "avg_ns", "median_ns", "min_ns", "max_ns"):
            assert rows[name][column] == pytest.approx(expected[column]), (name, column)
        if len(values) > 1:
            assert rows[name]["stddev_ns"] == pytest.approx(expected["stddev_ns"]), name

    # HTA's per-kernel table, its nanosecond rounding off (docs/analysis.md says why it matters).
    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    from hta.trace_analysis import TraceAnalysis

    hta = TraceAnalysis(trace_dir=perfprof.trace_dir_of(gpu_run))
    _, kernels = hta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
    by_name = {row["name"]: row for row in kernels.to_dict("records")}
    for name, values in durations.items():
        # HTA's durations are the trace's microseconds.
        assert by_name[name]["sum (us)"] * 1000 == pytest.approx(sum(values)), name
        assert by_name[name]["mean (us)"] * 1000 == pytest.approx(numpy.mean(values)), name
        assert by_name[name]["max (us)"] * 1000 == pytest.approx(max(values)), name


def test_device_step_breakdown_reads_the_same_everywhere(gpu_run):
    trace = load_trace(trace_file_of(gpu_run))
    work = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["cat"]) for e in trace["traceEvents"]
            if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    compute = time_sets.union([(start, end) for start, end, cat in work if cat == "kernel"])
    busy = time_sets.union([(start, end) for start, end, _ in work])
    expected = {step: dict(computing_ns=time_sets.inside(compute, start, end),
                           free_ns=(end - start) - time_sets.inside(busy, start, end))
                for step, (start, end) in trace_steps(trace).items()}
    # [10,157) [170,183) [200,207) [310,365)
    assert sum(row["computing_ns"] for row in expected.values()) == (147 + 13 + 7 + 55) * US
    summary = {row["step"]: {key: row[key] for key in ("computing_ns", "free_ns")}
               for row in analysis_rows(cli_json(gpu_run, "-a", "step_time_breakdown"), "step_time_breakdown")}
    assert summary == expected
    from_csv = {int(row["Step"]): dict(computing_ns=ns(float(row["Computing"])), free_ns=ns(float(row["Free"])))
                for row in csv_rows(gpu_run, "step_trace_time.csv")}
    assert from_csv == expected
