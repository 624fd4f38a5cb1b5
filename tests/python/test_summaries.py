"""The summary tables of a run directory (docs/formats/summaries.md), from a GPU run through the
CUPTI test double: each file's numbers equal what the Chrome trace beside it shows."""
from __future__ import annotations

import csv
import json
from collections import defaultdict
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from database_checks import query
from fake_cupti import run
from time_sets import inside, union

# The all-reduces (2 ms each, queued on stream 9) outlast the compute kernels by far, however
# fast the host goes: some communication is exposed in every run.
SCRIPT = """
import torch
import perfprof
handler = perfprof.tensorboard_trace_handler(os.environ["TMP"], worker_name="worker")
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      schedule=perfprof.schedule(wait=0, warmup=0, active=3, repeat=1), on_trace_ready=handler,
                      record_shapes=True, experimental_config=perfprof.ExperimentalConfig(
                          export_type=[perfprof.ExportType.Text, perfprof.ExportType.Db])) as prof:
    for step in range(3):
        x = torch.ones(8, 8)
        torch.mm(x, x)
        kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", stream=9, duration_ns=2_000_000)
        kernel("gemm_kernel", duration_ns=40_000)
        kernel("gemm_kernel", duration_ns=20_000 + 10_000 * step)
        fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000)
        prof.step()
print(json.dumps({}))
"""


def ns(us: float) -> int:
    return round(us * 1000)


def read_csv(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def run_output(tmp_path_factory) -> Tuple[Path, dict]:
    tmp_path = tmp_path_factory.mktemp("summaries")
    run(SCRIPT, tmp_path)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    output = run_dir / "PERFPROF_OUTPUT"
    (trace_file,) = output.glob("*.pt.trace.json")
    return output, json.loads(trace_file.read_text())


def trace_events(trace: dict, cat: str) -> List[dict]:
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat]


def test_every_table_with_data_is_written(run_output):
    output, _ = run_output
    names = {p.name for p in output.iterdir()}
    assert {"kernel_details.csv", "op_statistic.csv", "api_statistic.csv", "operator_details.csv",
            "step_trace_time.csv"} <= names
    assert "data_preprocess.csv" not in names  # no DataLoader in the loop


def test_op_statistic_totals_equal_the_kernels_of_the_chrome_trace(run_output):
    output, trace = run_output
    durations: Dict[str, List[int]] = defaultdict(list)
    for kernel in trace_events(trace, "kernel"):
        durations[kernel["name"]].append(ns(kernel["dur"]))
    rows = read_csv(output / "op_statistic.csv")
    assert {row["Name"] for row in rows} == set(durations)
    for row in rows:
        mine = durations[row["Name"]]
        assert int(row["Total Time (ns)"]) == sum(mine)
        assert int(row["Instances"]) == len(mine)
        assert (int(row["Min (ns)"]), int(row["Max (ns)"])) == (min(mine), max(mine))
    gemm = next(row for row in rows if row["Name"] == "gemm_kernel")
    assert gemm["Instances"] == "6" and gemm["Total Time (ns)"] == str(3 * 40_000 + 20_000 + 30_000 + 40_000)
    assert sum(float(row["Time (%)"]) for row in rows) == pytest.approx(100, abs=0.2)


def test_kernel_details_lists_each_kernel_and_copy_with_the_trace_times(run_output):
    output, trace = run_output
    rows = read_csv(output / "kernel_details.csv")
    # The trace's times are on the monotonic clock; Unix time is baseTimeNanoseconds later.
    in_trace = sorted((e["name"], ns(e["ts"]) + trace["baseTimeNanoseconds"], ns(e["dur"]))
                      for e in trace_events(trace, "kernel") + trace_events(trace, "gpu_memcpy"))
    in_csv = sorted((r["Name"], int(r["Start Time(us)"].replace(".", "")), ns(float(r["Duration(us)"]))) for r in rows)
    assert in_csv == in_trace
    types = {r["Name"]: r["Type"] for r in rows}
    assert types == {"gemm_kernel": "Compute", "ncclDevKernel_AllReduce_Sum_f32_RING_LL": "Communication",
                     "Memcpy HtoD": "Memory"}
    assert all(None not in r and None not in r.values() for r in rows)  # every row has every column
    assert all(r["Grid"] == "[128, 1, 1]" and r["Theoretical Occupancy(%)"] for r in rows if r["Type"] != "Memory")
    assert all(r["Grid"] == r["Block"] == r["Theoretical Occupancy(%)"] == "" for r in rows if r["Type"] == "Memory")


def test_api_statistic_totals_equal_the_runtime_calls_of_the_chrome_trace(run_output):
    output, trace = run_output
    totals: Dict[str, int] = defaultdict(int)
    for call in trace_events(trace, "cuda_runtime") + trace_events(trace, "cuda_driver"):
        totals[call["name"]] += ns(call["dur"])
    rows = read_csv(output / "api_statistic.csv")
    assert {row["Name"]: int(row["Total Time (ns)"]) for row in rows} == totals


def test_step_trace_time_follows_the_documented_formulas_over_the_chrome_trace(run_output):
    output, trace = run_output
    work = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e) for e in trace_events(trace, "kernel")]
    copies = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in trace_events(trace, "gpu_memcpy")]
    communication = union([(b, e) for b, e, k in work if k["name"].startswith("nccl")])
    compute = union([(b, e) for b, e, k in work if not k["name"].startswith("nccl")])
    both = union([(max(b1, b2), min(e1, e2)) for b1, e1 in compute for b2, e2 in communication
                  if max(b1, b2) < min(e1, e2)])
    anything = union([(b, e) for b, e, _ in work] + copies)
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in trace_events(trace, "user_annotation")
                   if e["name"].startswith("ProfilerStep#"))
    rows = read_csv(output / "step_trace_time.csv")
    assert [row["Step"] for row in rows] == [name.split("#")[1] for _, _, name in steps]
    for row, (begin, end, _) in zip(rows, steps):
        col = {key: ns(float(value)) for key, value in row.items() if key != "Step"}
        assert col["Computing"] == inside(compute, begin, end)
        assert col["Communication"] == inside(communication, begin, end)
        assert col["Overlapped"] == inside(both, begin, end)
        assert col["Communication(Not Overlapped)"] == col["Communication"] - col["Overlapped"]
        assert col["Free"] == (end - begin) - inside(anything, begin, end)
        first = min((max(b, begin) for b, e in anything if b < end and e > begin), default=end)
        assert col["Preparing"] == first - begin
        assert (col["Stage"], col["Bubble"]) == (end - begin, 0)
    assert sum(ns(float(row["Computing"])) for row in rows) > 0
    assert sum(ns(float(row["Communication(Not Overlapped)"])) for row in rows) > 0


def test_the_database_holds_the_same_numbers_as_each_summary_csv(run_output):
    output, _ = run_output
    db = str(output / "perfprof.db")

    def table(sql: str) -> List[tuple]:
        return query(db, sql)

    steps = read_csv(output / "step_trace_time.csv")
    columns = ["Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Stage", "Bubble",
               "Preparing"]
    assert table("""SELECT step, computing, communicationNotOverlapped, overlapped, communication, free, stage, bubble,
                    preparing FROM STEP_TRACE_TIME ORDER BY startNs""") == [
        (row["Step"], *(ns(float(row[c])) for c in columns)) for row in steps]
    for name, sql in (("op_statistic.csv", "OP_STATISTIC"), ("api_statistic.csv", "API_STATISTIC")):
        count_column = "Instances" if sql == "OP_STATISTIC" else "Num Calls"
        assert sorted(table(f"""SELECT s.value, t.instances, t.totalTime, t.min, t.max FROM {sql} t
                                JOIN StringIds s ON s.id = t.nameId""")) == sorted(
            (row["Name"], int(row[count_column]), int(row["Total Time (ns)"]), int(row["Min (ns)"]),
             int(row["Max (ns)"])) for row in read_csv(output / name)), name
    assert sorted(table("""SELECT s.value, k.duration, k.waitTime FROM KERNEL_DETAILS k
                           JOIN StringIds s ON s.id = k.nameId""")) == sorted(
        (row["Name"], ns(float(row["Duration(us)"])), ns(float(row["Wait Time(us)"])))
        for row in read_csv(output / "kernel_details.csv"))
    assert sorted(table("""SELECT s.value, o.count, o.hostTotalDuration FROM OPERATOR_DETAILS o
                           JOIN StringIds s ON s.id = o.nameId""")) == sorted(
        (row["Name"], int(row["Count"]), ns(float(row["Host Total Duration(us)"])))
        for row in read_csv(output / "operator_details.csv"))


def test_operator_details_counts_the_operators_of_each_step(run_output):
    output, trace = run_output
    rows = read_csv(output / "operator_details.csv")
    mm = [row for row in rows if row["Name"] == "aten::mm"]
    assert [(row["Input Shapes"], row["Count"]) for row in mm] == [("[[8, 8], [8, 8]]", "3")]
    in_trace = [e for e in trace_events(trace, "cpu_op") if e["name"] == "aten::mm"]
    assert ns(float(mm[0]["Host Total Duration(us)"])) == sum(ns(e["dur"]) for e in in_trace)


def test_data_preprocess_sums_each_steps_dataloader_fetches(tmp_path):
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    import perfprof

    loader = DataLoader(TensorDataset(torch.arange(32.0).reshape(16, 2)), batch_size=4)
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="worker")
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], on_trace_ready=handler,
                          schedule=perfprof.schedule(wait=0, warmup=0, active=3, repeat=1)) as prof:
        for (batch,) in loader:
            batch.sum()
            prof.step()
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    output = Path(perfprof.trace_dir_of(str(run_dir)))
    (trace_file,) = output.glob("*.pt.trace.json")
    trace = json.loads(trace_file.read_text())
    annotations = trace_events(trace, "user_annotation")
    fetches = [(ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in annotations
               if e["name"].startswith("enumerate(DataLoader)#")]
    steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"].split("#")[1]) for e in annotations
                   if e["name"].startswith("ProfilerStep#"))
    rows = read_csv(output / "data_preprocess.csv")
    assert [row["Step"] for row in rows] == [step for _, _, step in steps] == ["0", "1", "2"]
    for row, (begin, end, _) in zip(rows, steps):
        assert int(row["Count"]) == sum(1 for b, _ in fetches if begin <= b < end) == 1
        assert ns(float(row["Total Time(us)"])) == inside(fetches, begin, end) > 0
