"""The "where does device time go" analyses on a constructed run: hand-computed values, and
parity with HolisticTraceAnalysis on the same run's Chrome trace."""
from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Dict, List

import pytest

import perfprof
from analysis_runs import US, Activity, constructed_run
from perfprof import analysis

NCCL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"

# Device 0, times in us after the scenario's base (API calls last 2 us):
#
#   stream 7   gemm [10,110)  gemm [120,240)        relu [330,380)            gemm [480,540)
#              launched at 0, 5                     launched at 320           launched at 325
#   stream 9   softmax [60,160)
#   stream 13  NCCL all-reduce [210,350)
#   stream 20                                       Memcpy HtoD [400,440)  Memset [450,460)
#                                                   launched at 380        launched at 430
SCENARIO = [
    Activity("kernel", 7, 0, 10 * US, 100 * US, name="gemm"),
    Activity("kernel", 7, 5 * US, 120 * US, 120 * US, name="gemm"),
    Activity("kernel", 7, 320 * US, 330 * US, 50 * US, name="relu"),
    Activity("kernel", 7, 325 * US, 480 * US, 60 * US, name="gemm"),
    Activity("kernel", 9, 50 * US, 60 * US, 100 * US, name="softmax"),
    Activity("kernel", 13, 200 * US, 210 * US, 140 * US, name=NCCL),
    Activity("memcpy", 20, 380 * US, 400 * US, 40 * US, bytes=1 << 20),
    Activity("memset", 20, 430 * US, 450 * US, 10 * US, bytes=4096),
]
# Compute merged: [10,240) 230 + [330,380) 50 + [480,540) 60 = 340 us.
# Any activity merged: [10,380) 370 (the all-reduce bridges 240-330) + [400,440) 40 + [450,460) 10
# + [480,540) 60 = 480 us busy. Span 540 - 10 = 530 us, so idle 530 - 480 = 50 us.
COMPUTE, BUSY, SPAN = 340 * US, 480 * US, 530 * US


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return constructed_run(SCENARIO, tmp_path_factory.mktemp("constructed"))


@pytest.fixture(scope="module", params=["database", "imported trace"])
def run(run_dir: Path, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    """The run's database as perfprof wrote it, and the one imported from its Chrome trace (the
    file HTA reads): every analysis gives the same numbers on both."""
    (trace,) = Path(perfprof.trace_dir_of(str(run_dir))).glob("*.pt.trace.json*")
    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("PERFPROF_CACHE_DIR", str(tmp_path_factory.mktemp("imported")))
        with analysis.open_run(run_dir if request.param == "database" else trace) as opened:
            yield opened


@pytest.fixture(scope="module")
def hta(run_dir: Path):
    from hta.trace_analysis import TraceAnalysis

    return TraceAnalysis(trace_dir=perfprof.trace_dir_of(str(run_dir)))


def by(table: analysis.Table, *keys: str) -> Dict[object, Dict[str, object]]:
    """The table's rows keyed by the values of `keys`."""
    rows = table.to_dicts()
    return {tuple(row[key] for key in keys) if len(keys) > 1 else row[keys[0]]: row for row in rows}


def test_temporal_breakdown(run):
    (row,) = analysis.temporal_breakdown(run).to_dicts()
    assert row == pytest.approx(dict(
        deviceId=0, compute_ns=COMPUTE, non_compute_ns=BUSY - COMPUTE,  # 90 us all-reduce alone + 50 us memory
        idle_ns=SPAN - BUSY, total_ns=SPAN, compute_pct=100 * 340 / 530, non_compute_pct=100 * 140 / 530,
        idle_pct=100 * 50 / 530))


def test_idle_time_breakdown(run):
    rows = by(analysis.idle_time_breakdown(run), "streamId", "category")
    # Stream 7: 110->120 launched at 5 (before 110), 10 us < 30 us: kernel wait; 240->330 launched
    # at 320 (after 240): host wait 90; 380->480 launched at 325, 100 us: other.
    assert {category: (row["idle_ns"], row["idle_pct"]) for (stream, category), row in rows.items() if stream == 7} \
        == {"host_wait": (90 * US, 45.0), "kernel_wait": (10 * US, 5.0), "other": (100 * US, 50.0)}
    # Stream 20: 440->450, the memset launched at 430 (before 440): kernel wait.
    assert [rows[20, c]["idle_ns"] for c in ("host_wait", "kernel_wait", "other")] == [0, 10 * US, 0]
    assert rows[20, "kernel_wait"]["idle_pct"] == 100.0
    # One activity each on streams 9 and 13: no gap, no share.
    assert {(rows[s, c]["idle_ns"], rows[s, c]["idle_pct"]) for s in (9, 13) for c in ("host_wait", "other")} \
        == {(0, None)}


def test_a_lower_kernel_wait_threshold_makes_short_gaps_other(run):
    rows = by(analysis.idle_time_breakdown(run, kernel_wait_threshold_ns=10 * US), "streamId", "category")
    assert rows[7, "kernel_wait"]["idle_ns"] == 0 and rows[7, "other"]["idle_ns"] == 110 * US


def test_kernel_breakdown(run):
    rows = by(analysis.kernel_breakdown(run), "type")
    # Merged per type: compute 340, all-reduce 140, memory 40 + 10; shares of the 480 us busy.
    assert {t: (row["total_ns"], row["pct"]) for t, row in rows.items()} == pytest.approx({
        "compute": (COMPUTE, 100 * 340 / 480), "communication": (140 * US, 100 * 140 / 480),
        "memory": (50 * US, 100 * 50 / 480)})


def test_top_kernels(run):
    table = analysis.top_kernels(run)
    # All activity: gemm 100+120+60 = 280, all-reduce 140, softmax 100, relu 50, copy 40, set 10 = 620 us.
    assert table.column("name") == ["gemm", NCCL, "softmax", "relu", "Memcpy HtoD", "Memset (Device)"]
    assert table.column("type") == ["compute", "communication", "compute", "compute", "memory", "memory"]
    gemm, nccl = table.to_dicts()[:2]
    # gemm: mean 280/3; deviations 20/3, 80/3, -100/3 us; sample variance (400+6400+10000)/9/2 us^2.
    assert gemm == pytest.approx(dict(
        name="gemm", type="compute", count=3, total_ns=280 * US, avg_ns=280 * US / 3, median_ns=100 * US,
        min_ns=60 * US, max_ns=120 * US, stddev_ns=math.sqrt(16800 / 18) * US, pct=100 * 280 / 620))
    assert nccl["count"] == 1 and nccl["stddev_ns"] is None and nccl["median_ns"] == 140 * US
    assert nccl["pct"] == pytest.approx(100 * 140 / 620)
    assert analysis.top_kernels(run, top=2).column("name") == ["gemm", NCCL]


def test_comm_comp_overlap(run):
    # The all-reduce [210,350) overlaps gemm [120,240) for 30 us and relu [330,380) for 20 us.
    assert analysis.comm_comp_overlap(run).to_dicts() == [pytest.approx(dict(
        deviceId=0, communication_ns=140 * US, overlapped_ns=50 * US, overlap_pct=100 * 50 / 140))]


def test_gpu_utilization(run):
    table = analysis.gpu_utilization(run, bins=5)
    start = table.column("bin_start_ns")[0]
    # 530 us in 5 bins of 106 us from 10: [10,116) [116,222) [222,328) busy throughout (in [10,380));
    # [328,434): 328-380 and 400-434 = 86; [434,540): 434-440, 450-460, 480-540 = 76.
    assert [(row["bin_start_ns"] - start, row["bin_end_ns"] - start, row["busy_ns"]) for row in table] == [
        (0, 106 * US, 106 * US), (106 * US, 212 * US, 106 * US), (212 * US, 318 * US, 106 * US),
        (318 * US, 424 * US, 86 * US), (424 * US, 530 * US, 76 * US)]
    assert table.column("utilization_pct") == pytest.approx([100, 100, 100, 100 * 86 / 106, 100 * 76 / 106])
    default = analysis.gpu_utilization(run)
    assert len(default) == 100 and sum(default.column("busy_ns")) == BUSY
    assert default.column("bin_end_ns")[-1] - default.column("bin_start_ns")[0] == SPAN


def test_every_analysis_is_registered_in_the_gpu_section(run):
    names = ["temporal_breakdown", "idle_time_breakdown", "kernel_breakdown", "top_kernels", "comm_comp_overlap",
             "gpu_utilization"]
    assert all(analysis.ANALYSES[name].section == "gpu" for name in names)
    assert len(analysis.ANALYSES["top_kernels"](run, top=1)) == 1


# --- Parity with HolisticTraceAnalysis, on the same run's Chrome trace ---------------------------
# HTA works in the trace's microseconds; every time here is whole microseconds, so HTA's rounding
# (below) changes nothing and its numbers are perfprof's exactly, but for the percentages HTA
# rounds (to 2 decimals, the kernel types' to 1). HTA leaves out work launched in the last
# profiler step: the constructed run's last step is empty, so both see the same activity.

def exact(perfprof_ns: float, hta_us: float) -> bool:
    """Equal but for floating point: HTA's microseconds are floats, in some runs float32 (19.15 us
    read 19.150001525878906 once under load), so the bound is float32's precision, far below 1 ns."""
    return perfprof_ns == pytest.approx(hta_us * US, rel=1e-6, abs=1e-3)


def hta_kernel_types(types) -> Dict[str, float]:
    """HTA's exclusive kernel-type rows ("COMPUTATION", "COMPUTATION overlapping COMMUNICATION",
    ...) summed per type they name, in us: perfprof's kernel_breakdown totals."""
    summed: Dict[str, float] = {}
    for row in types.to_dict("records"):
        for hta_type, ours_type in (("COMPUTATION", "compute"), ("COMMUNICATION", "communication"),
                                    ("MEMORY", "memory")):
            if hta_type in row["kernel_type"]:
                summed[ours_type] = summed.get(ours_type, 0) + row["sum"]
    return summed


def test_temporal_breakdown_matches_hta(run, hta):
    (theirs,) = hta.get_temporal_breakdown(visualize=False).to_dict("records")
    (ours,) = analysis.temporal_breakdown(run).to_dicts()
    assert exact(ours["total_ns"], theirs["kernel_time(us)"])
    assert exact(ours["compute_ns"], theirs["compute_time(us)"])
    assert exact(ours["non_compute_ns"], theirs["non_compute_time(us)"])
    assert exact(ours["idle_ns"], theirs["idle_time(us)"])
    assert round(ours["compute_pct"], 2) == theirs["compute_time_pctg"]


def test_idle_time_breakdown_matches_hta(run, hta):
    theirs = hta.get_idle_time_breakdown(visualize=False)[0].to_dict("records")
    ours = by(analysis.idle_time_breakdown(run), "streamId", "category")
    # HTA lists the categories a stream has gaps in (and "other" for its first activity, with 0);
    # perfprof lists all three.
    for row in theirs:
        assert exact(ours[row["stream"], row["idle_category"]]["idle_ns"], row["idle_time"]), row
    assert exact(sum(row["idle_ns"] for row in ours.values()), sum(r["idle_time"] for r in theirs))


def test_kernel_breakdown_matches_hta(run, hta):
    types, kernels = hta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
    ours = by(analysis.kernel_breakdown(run), "type")
    theirs = hta_kernel_types(types)
    assert set(ours) == set(theirs)
    for kind in ours:
        assert exact(ours[kind]["total_ns"], theirs[kind])
        assert ours[kind]["pct"] == pytest.approx(100 * theirs[kind] / types["sum"].sum(), rel=1e-9)
    # Per kernel: HTA's sums, means, extremes and (sample) standard deviations by name.
    assert_per_kernel_equal(analysis.top_kernels(run), kernels)


def assert_per_kernel_equal(top: analysis.Table, kernels) -> None:
    mine = by(top, "name")
    per_name: List[dict] = kernels.to_dict("records")
    assert {row["name"] for row in per_name} == set(mine)
    for row in per_name:
        ours = mine[row["name"]]
        assert exact(ours["total_ns"], row["sum (us)"]) and exact(ours["avg_ns"], row["mean (us)"]), row
        assert exact(ours["min_ns"], row["min (us)"]) and exact(ours["max_ns"], row["max (us)"]), row
        assert exact(ours["stddev_ns"] or 0, row["stddev"]), row  # HTA writes 0 for a single instance


def test_comm_comp_overlap_matches_hta(run, hta):
    (theirs,) = hta.get_comm_comp_overlap(visualize=False).to_dict("records")
    (ours,) = analysis.comm_comp_overlap(run).to_dicts()
    assert round(ours["overlap_pct"], 2) == theirs["comp_comm_overlap_pctg"]


# --- Short activities at nanosecond times: what HTA's rounding does -----------------------------
# Kernels of 1.2 to 12.3 us at times with fractions of a microsecond (API calls 3 us apart).
# Device 0, us after the base:
#   stream 7   gemm [10.3,12.8) gemm [13.1,16.8) relu [17.45,19.25) gemm [24.25,30.65) relu [40.25,44.65)
#   stream 9   softmax [11.7,16.85)
#   stream 13  NCCL all-reduce [20.6,32.9)
#   stream 20  Memcpy HtoD [34.9,37.25) Memset [38.05,39.25)
SHORT = [Activity(kind, stream, 3 * US * index, start, duration, name=name, bytes=size)
         for index, (kind, stream, start, duration, name, size) in enumerate([
             ("kernel", 7, 10_300, 2_500, "gemm", 0), ("kernel", 7, 13_100, 3_700, "gemm", 0),
             ("kernel", 7, 17_450, 1_800, "relu", 0), ("kernel", 9, 11_700, 5_150, "softmax", 0),
             ("kernel", 13, 20_600, 12_300, NCCL, 0), ("kernel", 7, 24_250, 6_400, "gemm", 0),
             ("memcpy", 20, 34_900, 2_350, "", 1 << 16), ("memset", 20, 38_050, 1_200, "", 4096),
             ("kernel", 7, 40_250, 4_400, "relu", 0)])]
# The stretches in which the set of kinds running does not change (ns), and the kinds running:
# [10.3,16.85) compute, [17.45,19.25) compute, [20.6,24.25) communication, [24.25,30.65) both,
# [30.65,32.9) communication, [34.9,37.25) and [38.05,39.25) memory, [40.25,44.65) compute.
STRETCHES = [(6_550, "C"), (1_800, "C"), (3_650, "N"), (6_400, "CN"), (2_250, "N"), (2_350, "M"), (1_200, "M"),
             (4_400, "C")]
KINDS = {"compute": "C", "communication": "N", "memory": "M"}


def rounded_inward(activity: Activity) -> Activity:
    """`activity` as HTA reads it by default: start rounded up, end down, to whole microseconds."""
    start = -(-activity.gpu_start_ns // US) * US
    end = (activity.gpu_start_ns + activity.duration_ns) // US * US
    return dataclasses.replace(activity, gpu_start_ns=start, duration_ns=end - start)


@pytest.fixture(scope="module")
def short_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return constructed_run(SHORT, tmp_path_factory.mktemp("short"))


def hta_of(run_dir: Path, ns_rounding: bool):
    """HTA on the run's trace, rounding its nanosecond times (HTA's default) or not."""
    from hta.trace_analysis import TraceAnalysis

    with pytest.MonkeyPatch.context() as environment:  # HTA reads it while it parses, in TraceAnalysis()
        if ns_rounding:
            environment.delenv("HTA_DISABLE_NS_ROUNDING", raising=False)
        else:
            environment.setenv("HTA_DISABLE_NS_ROUNDING", "1")
        return TraceAnalysis(trace_dir=perfprof.trace_dir_of(str(run_dir)))


def test_without_ns_rounding_hta_gives_perfprofs_numbers_on_short_kernels(short_run_dir):
    hta = hta_of(short_run_dir, ns_rounding=False)
    with analysis.open_run(short_run_dir) as short:
        (ours,) = analysis.temporal_breakdown(short).to_dicts()
        (theirs,) = hta.get_temporal_breakdown(visualize=False).to_dict("records")
        assert ours["compute_ns"] == sum(ns for ns, kinds in STRETCHES if "C" in kinds) == 19_150
        assert exact(ours["compute_ns"], theirs["compute_time(us)"])
        assert exact(ours["idle_ns"], theirs["idle_time(us)"]) and exact(ours["total_ns"], theirs["kernel_time(us)"])
        for row in hta.get_idle_time_breakdown(visualize=False)[0].to_dict("records"):
            assert exact(by(analysis.idle_time_breakdown(short), "streamId", "category")[
                row["stream"], row["idle_category"]]["idle_ns"], row["idle_time"]), row
        (overlap,) = analysis.comm_comp_overlap(short).to_dicts()
        assert round(overlap["overlap_pct"], 2) == hta.get_comm_comp_overlap(visualize=False)[
            "comp_comm_overlap_pctg"][0]
        types, kernels = hta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
        assert_per_kernel_equal(analysis.top_kernels(short), kernels)
        # HTA's kernel-type rows alone differ: it cuts each stretch to whole microseconds
        # (astype(int)), so they fall short by up to 1 us a stretch: 11 + 6 = 17 us of the 19.15
        # us of computation (-11%), 6 + 5 = 11 of 12.3 us of communication, 3 of 3.55 us of memory.
        breakdown = by(analysis.kernel_breakdown(short), "type")
        for kind, letter in KINDS.items():
            stretches = [ns for ns, kinds in STRETCHES if letter in kinds]
            assert breakdown[kind]["total_ns"] == sum(stretches)
            assert hta_kernel_types(types)[kind] == sum(ns // US for ns in stretches)


def test_by_default_hta_reads_each_activity_rounded_inward_to_whole_microseconds(short_run_dir, tmp_path):
    hta = hta_of(short_run_dir, ns_rounding=True)
    # perfprof on the same activities rounded inward gives HTA's default numbers exactly.
    with analysis.open_run(constructed_run([rounded_inward(a) for a in SHORT], tmp_path)) as inward:
        (ours,) = analysis.temporal_breakdown(inward).to_dicts()
        (theirs,) = hta.get_temporal_breakdown(visualize=False).to_dict("records")
        assert exact(ours["compute_ns"], theirs["compute_time(us)"]) and ours["compute_ns"] == 14 * US
        assert exact(ours["total_ns"], theirs["kernel_time(us)"]) and exact(ours["idle_ns"], theirs["idle_time(us)"])
        types, kernels = hta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
        assert_per_kernel_equal(analysis.top_kernels(inward), kernels)
        breakdown = by(analysis.kernel_breakdown(inward), "type")
        assert {kind: exact(breakdown[kind]["total_ns"], us) for kind, us in hta_kernel_types(types).items()} \
            == {kind: True for kind in KINDS}
    # On the nanosecond run that is 14 of 19.15 us of computation (-27%): gemm's 2.5 us becomes 1 us.
    with analysis.open_run(short_run_dir) as short:
        assert analysis.temporal_breakdown(short).column("compute_ns") == [19_150]


# --- Runs without GPU activity ------------------------------------------------------------------

def test_a_cpu_only_run_gives_empty_tables(tmp_path):
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="cpu")
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], schedule=perfprof.schedule(wait=0, active=1),
                          on_trace_ready=handler, experimental_config=config) as prof:
        with perfprof.record_function("cpu work"):
            sum(range(1000))
        prof.step()
    with analysis.open_run(handler.run_dirs[-1]) as cpu_run:
        for function in (analysis.temporal_breakdown, analysis.idle_time_breakdown, analysis.kernel_breakdown,
                         analysis.top_kernels, analysis.comm_comp_overlap, analysis.gpu_utilization):
            table = function(cpu_run)
            assert table.rows == () and table.columns, table.name
