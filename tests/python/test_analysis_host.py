"""The host, step and memory analyses of perfprof.analysis on small runs, against numbers the
tests work out themselves from the raw tables and against their peers (key_averages,
operator_details, export_memory_timeline). Never against wall-clock durations: only against
what the run recorded."""
from __future__ import annotations

import collections
import csv
import gc
import json
import statistics
from pathlib import Path
from typing import Dict, Iterable, List, Tuple

import pytest
import torch

import perfprof
from database_checks import query
from perfprof import analysis, mstx

STEPS = 3
MSTX_RANGES = {("default", "load"): 2 * STEPS, ("model", "forward"): STEPS}


def run_database(tmp_path, **options) -> Tuple[str, perfprof.profile]:
    """Profile three steps of a small training loop into a run directory with a database."""
    config = perfprof.ExperimentalConfig(export_type=["text", "db"], mstx=True, gc_detect_threshold=0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    optimizer = torch.optim.Adam(model.parameters())
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          schedule=perfprof.schedule(wait=0, warmup=1, active=STEPS, repeat=1),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path)), **options) as prof:
        prof.add_metadata("model", "mlp")
        for _ in range(1 + STEPS):
            for _ in range(2):
                mstx.range_end(mstx.range_start("load"))
            with perfprof.record_function("train"):
                forward = mstx.range_start("forward", domain="model")
                loss = model(torch.randn(8, 16)).sum()
                mstx.range_end(forward, domain="model")
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
            gc.collect()
            prof.step()
    (run_dir,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    return str(run_dir), prof


@pytest.fixture(scope="module")
def rich_run(tmp_path_factory):
    """A run with every host feature: shapes, memory, Python stacks, modules, mstx, GC pauses."""
    run_dir, prof = run_database(tmp_path_factory.mktemp("rich"), record_shapes=True, profile_memory=True,
                                 with_stack=True, with_modules=True)
    timeline = tmp_path_factory.mktemp("timeline") / "memory.json"
    prof.export_memory_timeline(str(timeline), "cpu")
    with analysis.open_run(run_dir) as run:
        yield run, prof, json.loads(timeline.read_text())


def ranges_of(run, kind: str) -> List[Tuple[str, int, int, int]]:
    """(name, thread, start, end) of the PYTORCH_API ranges of one kind."""
    return query(run.path, """SELECT s.value, a.globalTid, a.startNs, a.endNs FROM PYTORCH_API a
                              JOIN StringIds s ON s.id = a.name JOIN ENUM_API_TYPE t ON t.id = a.type
                              WHERE t.name = ? ORDER BY a.globalTid, a.startNs, a.endNs DESC""", kind)


def self_times(ranges: Iterable[Tuple[str, int, int, int]]) -> Dict[str, int]:
    """Self time per name, with a stack per thread: each range loses its direct children's time."""
    totals: Dict[str, int] = collections.Counter()
    stack: List[Tuple[str, int, int, int]] = []
    for name, tid, start, end in ranges:  # in (thread, start, longest first) order
        while stack and (stack[-1][1] != tid or stack[-1][3] <= start):
            stack.pop()
        if stack:
            totals[stack[-1][0]] -= end - start
        totals[name] += end - start
        stack.append((name, tid, start, end))
    return totals


def union_ns(intervals: Iterable[Tuple[int, int]]) -> int:
    covered, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            covered, reach = covered + end - start, end
        elif end > reach:
            covered, reach = covered + end - reach, end
    return covered


def clipped(intervals: Iterable[Tuple[int, int]], begin: int, end: int) -> List[Tuple[int, int]]:
    return [(max(s, begin), min(e, end)) for s, e in intervals if s < end and e > begin]


def test_top_operators_match_key_averages_operator_details_and_a_stack_by_hand(rich_run):
    run, prof, _ = rich_run
    table = analysis.top_operators(run, top=-1).to_dicts()
    rows = {row["name"]: row for row in table}
    ops = ranges_of(run, "op")
    by_name = collections.defaultdict(list)
    for name, _, start, end in ops:
        by_name[name].append(end - start)
    assert set(rows) == set(by_name)
    for name, durations in by_name.items():
        row = rows[name]
        assert (row["count"], row["total_ns"], row["min_ns"], row["max_ns"]) == (
            len(durations), sum(durations), min(durations), max(durations))
        assert row["median_ns"] == statistics.median(durations)
        assert row["stddev_ns"] == (pytest.approx(statistics.stdev(durations)) if len(durations) > 1 else None)
    assert {name: row["self_ns"] for name, row in rows.items()} == self_times(ops)
    assert [row["self_ns"] for row in table] == sorted((row["self_ns"] for row in table), reverse=True)
    assert sum(row["pct"] for row in table) == pytest.approx(100)
    assert len(analysis.top_operators(run, top=3)) == 3

    # The peers: operator_details (key_averages' function events) and key_averages' counts. Names
    # torch merges into a same-named caller count differently: compared where the counts agree.
    details = {name: (count, total, self_ns) for name, count, total, self_ns in query(run.path, """
        SELECT s.value, sum(count), sum(hostTotalDuration), sum(hostSelfDuration) FROM OPERATOR_DETAILS o
        JOIN StringIds s ON s.id = o.nameId GROUP BY s.value""")}
    averages = {row.key: row.count for row in prof.key_averages()}
    same = [name for name in rows if details.get(name, (None,))[0] == rows[name]["count"]]
    assert len(same) > 0.8 * len(rows) and "aten::addmm" in same
    for name in same:
        assert details[name] == (rows[name]["count"], rows[name]["total_ns"], rows[name]["self_ns"]), name
        assert averages[name] == rows[name]["count"]


def test_nested_record_functions_and_operators_give_known_counts_and_self_times(tmp_path):
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    x = torch.ones(4)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path))):
        for _ in range(5):
            with perfprof.record_function("outer"):
                for _ in range(3):
                    with perfprof.record_function("inner"):
                        torch.add(x, 1)
    (run_dir,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    with analysis.open_run(str(run_dir)) as run:
        ranges = {row["name"]: row for row in analysis.nvtx_ranges(run, top=-1)}
        assert {name: (row["domain"], row["count"]) for name, row in ranges.items()} == {
            "outer": ("record_function", 5), "inner": ("record_function", 15)}
        operators = {row["name"]: row for row in analysis.top_operators(run, top=-1)}
        assert operators["aten::add"]["count"] == 15
        # One thread: the self times of all operators tile the time some operator ran.
        covered = union_ns((start, end) for _, _, start, end in ranges_of(run, "op"))
        assert sum(row["self_ns"] for row in operators.values()) == covered
        assert analysis.python_hot_spots(run).rows == ()  # no with_stack


def test_nvtx_ranges_summarise_mstx_ranges_per_domain_and_record_functions(rich_run):
    run, _, _ = rich_run
    rows = {(row["domain"], row["name"]): row for row in analysis.nvtx_ranges(run, top=-1)}
    raw = collections.defaultdict(list)
    for domain, name, ns in query(run.path, """
            SELECT coalesce(d.text, 'default'), e.text, e.end - e.start FROM NVTX_EVENTS e
            LEFT JOIN NVTX_EVENTS d ON d.eventType = 75 AND d.domainId = e.domainId WHERE e.eventType = 60"""):
        raw[(domain, name)].append(ns)
    for name, _, start, end in ranges_of(run, "annotation"):
        raw[("record_function", name)].append(end - start)
    assert {key: row["count"] for key, row in rows.items() if key[0] != "record_function"} == MSTX_RANGES
    assert rows[("record_function", "train")]["count"] == STEPS
    for key, durations in raw.items():
        assert (rows[key]["total_ns"], rows[key]["median_ns"], rows[key]["min_ns"]) == (
            sum(durations), statistics.median(durations), min(durations))
        assert rows[key]["stddev_ns"] == pytest.approx(statistics.stdev(durations))


def test_steps_and_their_statistics_are_the_profiler_steps(rich_run):
    run, _, _ = rich_run
    steps = query(run.path, """SELECT s.value, a.startNs, a.endNs FROM PYTORCH_API a JOIN StringIds s ON s.id = a.name
                               WHERE s.value LIKE 'ProfilerStep#%' ORDER BY a.startNs""")
    assert [(f"ProfilerStep#{row['step']}", row["start_ns"], row["end_ns"]) for row in analysis.step_times(run)] \
        == steps
    durations = [end - start for _, start, end in steps]
    assert len(durations) == STEPS
    (row,) = analysis.step_statistics(run).to_dicts()
    assert (row["count"], row["total_ns"], row["median_ns"], row["min_ns"], row["max_ns"]) == (
        STEPS, sum(durations), statistics.median(durations), min(durations), max(durations))
    assert row["stddev_ns"] == pytest.approx(statistics.stdev(durations))


def test_step_time_breakdown_adds_up_and_matches_the_union_of_operators_and_gc_pauses(rich_run):
    run, _, _ = rich_run
    ops = [(start, end) for _, _, start, end in ranges_of(run, "op")]
    pauses = query(run.path, "SELECT startNs, endNs FROM GC_RECORD")
    assert pauses  # gc.collect() in every step
    for row, step in zip(analysis.step_time_breakdown(run), analysis.step_times(run)):
        begin, end = step["start_ns"], step["end_ns"]
        operators = union_ns(clipped(ops, begin, end))
        busy = union_ns(clipped(ops + pauses, begin, end))
        assert (row["step"], row["duration_ns"], row["operators_ns"], row["gc_ns"]) == (
            step["step"], end - begin, operators, busy - operators)
        assert row["operators_ns"] + row["gc_ns"] + row["other_ns"] == row["duration_ns"]
        assert row["gc_ns"] > 0 and row["other_ns"] >= 0
        # No device work: the GPU columns say nothing rather than "all free".
        assert row["computing_ns"] is row["free_ns"] is row["copy_only_ns"] is None


def test_python_hot_spots_are_self_times_of_the_python_calls(rich_run):
    run, _, _ = rich_run
    table = analysis.python_hot_spots(run, top=-1)
    assert table.columns[:4] == ("function", "count", "total_ns", "self_ns")
    calls = ranges_of(run, "python_function")
    expected = self_times(calls)
    assert {row["function"]: row["self_ns"] for row in table} == expected
    assert {row["function"]: row["count"] for row in table} == collections.Counter(name for name, *_ in calls)
    # gc.collect() ran in every step and took its pause inside the built-in's call.
    assert any("collect" in row["function"] for row in analysis.python_hot_spots(run, top=5))


def test_memory_peaks_and_series_are_the_memory_timeline(rich_run):
    run, _, (times, sizes) = rich_run
    categories = ["PARAMETER", "OPTIMIZER_STATE", "INPUT", "TEMPORARY", "ACTIVATION", "GRADIENT",
                  "AUTOGRAD_DETAIL", "UNKNOWN"]
    expected = []
    for k, category in enumerate(categories, start=1):
        peak = max(size[k] for size in sizes)
        expected.append(("CPU", category, peak, times[[size[k] for size in sizes].index(peak)] * 1000))
    totals = [sum(size) for size in sizes]
    expected.append(("CPU", "TOTAL", max(totals), times[totals.index(max(totals))] * 1000))
    assert analysis.memory_peaks(run).rows == tuple(expected)

    series = analysis.memory_over_time(run)
    assert series.rows == tuple(("CPU", t * 1000, category, size[k]) for t, size in zip(times, sizes)
                                for k, category in enumerate(categories, start=1))
    # Thinned to 10 buckets: every point kept is a timeline point, and the total's peak is one.
    thinned = analysis.memory_over_time(run, points=10)
    kept = collections.defaultdict(int)
    for _, t, _, size in thinned.rows:
        kept[t] += size
    assert 1 < len(kept) <= 10
    assert all(kept[t] == sum(sizes[times.index(t // 1000)]) for t in kept)
    assert max(kept.values()) == max(totals)


def test_run_info_names_the_run(rich_run):
    run, prof, _ = rich_run
    info = dict(analysis.run_info(run).rows)
    assert (info["rank"], info["world_size"], info["steps"]) == ("0", "1", str(STEPS))
    assert info["operators"] == str(len(ranges_of(run, "op")))
    assert info["mstx_ranges"] == str(sum(MSTX_RANGES.values()))
    assert info["config.with_stack"] == "true" and info["config.profile_memory"] == "true"
    # Lists as their items and the schedule by its parameters, not JSON or a repr.
    assert info["config.activities"] == "CPU" and info["config.export_type"] == "text, db"
    assert info["config.schedule"] == f"wait=0 warmup=1 active={STEPS} repeat=1 skip_first=0"
    assert json.loads(info["metadata.model"]) == "mlp"
    assert info["window_start"].endswith(" UTC") and int(info["window_duration_ns"]) > 0
    assert "gpus" not in info and "backend" not in info  # no GPU, not distributed
    assert all(isinstance(value, str) for value in info.values())


def test_a_run_without_the_data_gives_empty_tables(tmp_path):
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path))):
        torch.ones(2) + 1
    (run_dir,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    with analysis.open_run(str(run_dir)) as run:
        for name, entry in analysis.ANALYSES.items():
            if entry.section in ("host", "memory") and name not in ("top_operators", "operator_details"):
                assert entry(run).rows == (), name
        assert len(analysis.top_operators(run)) > 0 and len(analysis.operator_details(run)) > 0
        assert dict(analysis.run_info(run).rows)["steps"] == "0"


def test_operator_details_are_the_csv_rows(tmp_path):
    """operator_details reads OPERATOR_DETAILS: the rows of the run's operator_details.csv (µs
    there, ns here), every name and input shapes of a record_shapes run."""
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True, experimental_config=config,
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path))):
        a = torch.ones(8, 4)
        torch.mm(a, torch.ones(4, 2))
        torch.mm(a, torch.ones(4, 3))
        torch.mm(a, torch.ones(4, 3))
    (run_dir,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    with open(run_dir / "PERFPROF_OUTPUT" / "operator_details.csv", newline="") as file:
        expected = {(row["Name"], row["Input Shapes"]): [int(row["Count"])] + [
            round(float(row[column]) * 1000) for column in ("Host Self Duration(us)", "Host Total Duration(us)",
                                                            "Device Self Duration(us)", "Device Total Duration(us)")]
            for row in csv.DictReader(file)}
    with analysis.open_run(str(run_dir)) as run:
        rows = analysis.operator_details(run, top=-1).to_dicts()
    columns = ("count", "host_self_ns", "host_total_ns", "device_self_ns", "device_total_ns")
    assert {(row["name"], row["input_shapes"]): [row[column] for column in columns] for row in rows} == expected
    # One row per shape: torch.mm on [8, 4] x [4, 2] once and on [8, 4] x [4, 3] twice.
    assert {row["input_shapes"]: row["count"] for row in rows if row["name"] == "aten::mm"} == \
        {"[[8, 4], [4, 2]]": 1, "[[8, 4], [4, 3]]": 2}
    assert [row["host_self_ns"] for row in rows] == sorted((row["host_self_ns"] for row in rows), reverse=True)


def test_module_tree_of_a_trace(tmp_path):
    """The Kineto test trace with nn.Module calls added on its thread (µs): Net_0 [1005, 1100)
    holding Linear_0 [1008, 1035) (aten::mm's launch at 1015: the 60 us sgemm) and Comm_0
    [1045, 1075) (the all-reduce launched at 1060: 80 us); Net_0 [1205, 1235) holding Linear_0
    [1208, 1231) (launches at 1215 and 1225: sgemm 60 us, softmax 30 us)."""
    trace = json.loads((Path(__file__).parent / "data" / "kineto_gpu_nccl_rank1.pt.trace.json").read_text())
    trace["traceEvents"] += [
        {"ph": "X", "cat": "python_function", "name": f"nn.Module: {name}", "pid": 4242, "tid": 4242, "ts": ts,
         "dur": dur, "args": {}}
        for name, ts, dur in (("Net_0", 1005, 95), ("Linear_0", 1008, 27), ("Comm_0", 1045, 30), ("Net_0", 1205, 30),
                              ("Linear_0", 1208, 23))]
    path = tmp_path / "modules.pt.trace.json"
    path.write_text(json.dumps(trace))
    with analysis.open_run(str(path)) as run:
        rows = analysis.module_tree(run).to_dicts()
    us = 1000
    assert rows == [
        dict(module="Net_0", depth=0, calls=2, host_total_ns=125 * us, host_self_ns=(125 - 27 - 30 - 23) * us,
             device_total_ns=(60 + 80 + 60 + 30) * us, device_self_ns=0),
        dict(module="Net_0 > Comm_0", depth=1, calls=1, host_total_ns=30 * us, host_self_ns=30 * us,
             device_total_ns=80 * us, device_self_ns=80 * us),
        dict(module="Net_0 > Linear_0", depth=1, calls=2, host_total_ns=50 * us, host_self_ns=50 * us,
             device_total_ns=(60 + 60 + 30) * us, device_self_ns=(60 + 60 + 30) * us),
    ]
