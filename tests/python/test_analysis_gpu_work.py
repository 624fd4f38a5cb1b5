"""The GPU launch, queue and copy analyses on runs made with the CUPTI test double, checked by
hand from the double's timing and against HolisticTraceAnalysis on the same run.

The double's timing (tests/cupti_double/fake_cupti_control.h): a call's runtime record lasts
2 us from the double's clock; its device work starts 1 us after the call ends, or when the
stream's previous work ends if later. Kernels last milliseconds and are launched back to back,
so every launch after a stream's first waits behind the work before it, however slowly a
loaded machine runs the script; the numbers that still depend on when the calls were made are
computed from the calls' recorded times.
"""
import glob
import os
import sqlite3
from pathlib import Path

import pytest

from fake_cupti import run
from perfprof import analysis

MS = 1_000_000
MIB = 1 << 20

SCENARIO = """
import time
import perfprof
config = perfprof.ExperimentalConfig(export_type=["text", "db"])
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      experimental_config=config,
                      on_trace_ready=perfprof.tensorboard_trace_handler(os.environ["TMP"] + "/runs")):
    # Stream 7, the queue: one long kernel, then (once it runs) three more queued behind it.
    kernel("first", stream=7, duration_ns=50_000_000)
    time.sleep(0.001)
    for name in ("second", "third", "fourth"):
        kernel(name, stream=7, duration_ns=10_000_000)
    # Stream 9, the sequences: three operators launching gemm -> relu -> add (relu from a
    # nested one) and one launching two kernels only.
    for _ in range(3):
        with perfprof.record_function("aten::block"):
            kernel("gemm", stream=9, duration_ns=2_000_000)
            with perfprof.record_function("aten::inner"):
                kernel("relu", stream=9, duration_ns=1_000_000)
            kernel("add", stream=9, duration_ns=1_000_000)
    with perfprof.record_function("aten::pair"):
        kernel("gemm", stream=9, duration_ns=1_000_000)
        kernel("gemm", stream=9, duration_ns=1_000_000)
    # Streams 11 and 13, the copies: two HtoD copies one after the other on stream 11 while a
    # larger one runs on stream 13; then a DtoH copy and a memset.
    fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 11, 1_000_000)
    fake.fake_cupti_memcpy(2 << 20, 1, 0, 1, 11, 1_000_000)
    fake.fake_cupti_memcpy(4 << 20, 1, 0, 1, 13, 2_000_000)
    fake.fake_cupti_memcpy(1 << 20, 2, 0, 1, 13, 500_000)
    fake.fake_cupti_memset(4096, 0, 0, 1, 13, 4_000)
print(json.dumps(dict(runs=glob.glob(os.environ["TMP"] + "/runs/*"))))
"""

CPU_ONLY = """
import perfprof
config = perfprof.ExperimentalConfig(export_type=["text", "db"])
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                      on_trace_ready=perfprof.tensorboard_trace_handler(os.environ["TMP"] + "/runs")):
    with perfprof.record_function("aten::block"):
        pass
print(json.dumps(dict(runs=glob.glob(os.environ["TMP"] + "/runs/*"))))
"""


def make_run(script, tmp_path):
    """The one run directory the script's profile wrote."""
    (run_dir,) = run("import glob\n" + script, tmp_path)["runs"]
    return run_dir


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    return make_run(SCENARIO, tmp_path_factory.mktemp("gpu_work"))


@pytest.fixture(params=["database", "imported trace"])
def db(run_dir, request):
    """The run's database as perfprof wrote it, and the one imported from its Chrome trace (the
    file HTA reads): every analysis gives the same numbers on both."""
    (trace,) = glob.glob(os.path.join(run_dir, "PERFPROF_OUTPUT", "*.pt.trace.json*"))
    with analysis.open_run(run_dir if request.param == "database" else trace) as database:
        yield database


def calls(run_dir):
    """correlationId -> (call start, call end, work start, work end) from the run's database."""
    path = analysis.database_of(run_dir)
    with sqlite3.connect(path) as connection:
        rows = connection.execute("""
            SELECT r.correlationId, r.start, r."end", w.start, w."end" FROM CUPTI_ACTIVITY_KIND_RUNTIME r
            JOIN (SELECT correlationId, start, "end" FROM CUPTI_ACTIVITY_KIND_KERNEL UNION ALL
                  SELECT correlationId, start, "end" FROM CUPTI_ACTIVITY_KIND_MEMCPY UNION ALL
                  SELECT correlationId, start, "end" FROM CUPTI_ACTIVITY_KIND_MEMSET) w USING (correlationId)
            ORDER BY r.correlationId""").fetchall()
    return {row[0]: row[1:] for row in rows}


def by_name(table, key):
    return {row[key]: row for row in table}


# --- kernel_launches and kernel_launch_stats ------------------------------------------------

def test_launch_delays_follow_the_stream_queue(db, run_dir):
    launches = analysis.kernel_launches(db).to_dicts()
    assert len(launches) == 4 + 11 + 5, "every kernel, copy and memset, each launched asynchronously"
    assert all(launch["cpu_duration_ns"] == 2_000 for launch in launches), "the double's 2 us calls"
    first, second, third, fourth = [launch for launch in launches
                                    if launch["name"] in ("first", "second", "third", "fourth")]
    # The first kernel of stream 7 starts 1 us after its call ends.
    assert first["launch_delay_ns"] == 1_000 and first["gpu_duration_ns"] == 50 * MS
    # The others wait for the work ahead: "second" starts when "first" ends, 50 ms after it
    # started, i.e. first.call_end + 1 us + 50 ms; its delay is that minus its own call's end.
    timing = calls(run_dir)
    first_end = timing[first["correlationId"]][1]
    for ahead_ns, launch in ((50 * MS, second), (60 * MS, third), (70 * MS, fourth)):
        call_end = timing[launch["correlationId"]][1]
        assert launch["launch_delay_ns"] == first_end + 1_000 + ahead_ns - call_end
        assert launch["launch_delay_ns"] > 40 * MS, "queued: made within 10 ms of the first kernel"


def test_launch_stats_summarise_the_launches(db):
    launches = analysis.kernel_launches(db)
    delays = sorted(launches.column("launch_delay_ns"))
    (stats,) = analysis.kernel_launch_stats(db).to_dicts()
    assert stats["deviceId"] == 0 and stats["kernels"] == 20
    assert stats["avg_launch_delay_ns"] == pytest.approx(sum(delays) / 20)
    assert stats["median_launch_delay_ns"] == (delays[9] + delays[10]) / 2, "20 launches: mean of the 10th and 11th"
    assert stats["max_launch_delay_ns"] == delays[-1]
    # Every call lasts 2 us (within the 50 us cut-off): the 4 us memset is the only work
    # shorter than its call; the stream 7 and 9 kernels queued behind others wait > 100 us.
    assert stats["short_kernels"] == 0 and stats["runtime_outliers"] == 0
    assert stats["launch_delay_outliers"] == sum(delay > 100_000 for delay in delays)
    (strict,) = analysis.kernel_launch_stats(db, runtime_cutoff_ns=1_000, launch_delay_cutoff_ns=0).to_dicts()
    assert strict["runtime_outliers"] == 20 and strict["short_kernels"] == 0, "short kernels exclude runtime outliers"
    assert strict["launch_delay_outliers"] == 20
    (kernels_only,) = analysis.kernel_launch_stats(db, include_memory=False).to_dicts()
    assert kernels_only["kernels"] == 15


# --- frequent_kernel_sequences --------------------------------------------------------------

def test_frequent_sequences_of_the_outermost_ranges(db):
    table = analysis.frequent_kernel_sequences(db, operator="aten::")
    # aten::block three times: gemm (2 ms) -> relu (1 ms, launched in aten::inner, nested, so
    # part of aten::block's sequence) -> add (1 ms): 3 x 4 ms. aten::pair launches two only,
    # fewer than the default minimum of 3.
    assert table.to_dicts() == [dict(operator="aten::block", sequence="gemm -> relu -> add", length=3,
                                     count=3, total_ns=12 * MS)]
    pairs = analysis.frequent_kernel_sequences(db, operator="aten::", min_length=2).to_dicts()
    assert [(row["operator"], row["sequence"], row["count"], row["total_ns"]) for row in pairs] == [
        ("aten::block", "gemm -> relu -> add", 3, 12 * MS), ("aten::pair", "gemm -> gemm", 1, 2 * MS)]
    inner = analysis.frequent_kernel_sequences(db, operator="inner", min_length=1).to_dicts()
    assert [(row["sequence"], row["count"]) for row in inner] == [("relu", 3)]
    assert len(analysis.frequent_kernel_sequences(db, top=1, operator="aten::", min_length=2)) == 1


def test_without_an_operator_name_only_pytorch_operators_count(db):
    assert len(analysis.frequent_kernel_sequences(db)) == 0, "record_function ranges are annotations, not ops"


# --- queue_length ---------------------------------------------------------------------------

def test_queue_length_of_the_queued_stream(db, run_dir):
    queues = {(row["deviceId"], row["streamId"]): row for row in analysis.queue_length(db)}
    assert set(queues) == {(0, 7), (0, 9), (0, 11), (0, 13)}
    # Stream 7: "first" waits 3 us (its 2 us call + 1 us), then runs; "second" to "fourth" are
    # launched while it runs and wait until it and those ahead of them end: 3 at most.
    assert queues[(0, 7)]["max_queue_length"] == 3
    timing = [timing for _, timing in sorted(calls(run_dir).items())[:4]]
    (launch1, _, start1, _), (launch2, _, start2, end2), (launch3, _, start3, end3), (launch4, _, start4, _) = timing
    waiting_ns = (1 * (start1 - launch1)                      # first launched, not started: 3 us
                  + 1 * (launch3 - launch2) + 2 * (launch4 - launch3) + 3 * (start2 - launch4)
                  + 2 * (start3 - start2) + 1 * (start4 - start3))  # 10 ms each
    assert start1 - launch1 == 3_000 and start3 - start2 == start4 - start3 == 10 * MS
    assert queues[(0, 7)]["avg_queue_length"] == pytest.approx(waiting_ns / (start4 - launch1), rel=1e-12)
    series = analysis.queue_length_over_time(db)
    stream7 = [row["queue_length"] for row in series if row["streamId"] == 7]
    assert stream7 == [1, 0, 1, 2, 3, 2, 1, 0]


# --- memory_bandwidth -----------------------------------------------------------------------

def test_memory_bandwidth_by_kind(db, run_dir):
    kinds = by_name(analysis.memory_bandwidth(db), "kind")
    assert list(kinds) == ["HtoD", "DtoH", "Memset"], "most bytes first"
    htod = kinds["HtoD"]
    assert htod["copies"] == 3 and htod["bytes"] == 7 * MIB
    # Stream 11: 1 MiB in 1 ms (1.048576 GB/s) then 2 MiB in 1 ms (2.097152 GB/s); stream 13's
    # 4 MiB in 2 ms (2.097152 GB/s) starts a few us after the first and overlaps both: the most
    # in use at once is 2.097152 + 2.097152.
    assert htod["peak_gbps"] == pytest.approx(4.194304)
    copies = [timing for _, timing in sorted(calls(run_dir).items())[-5:]]
    first_start, last_end = copies[0][2], copies[2][3]
    assert htod["busy_ns"] == last_end - first_start, "one stretch: stream 13's copy ends last"
    assert htod["avg_gbps"] == pytest.approx(7 * MIB / htod["busy_ns"])
    assert kinds["DtoH"]["busy_ns"] == MS // 2 and kinds["DtoH"]["avg_gbps"] == pytest.approx(2.097152)
    assert kinds["Memset"]["bytes"] == 4096 and kinds["Memset"]["peak_gbps"] == pytest.approx(4096 / 4_000)


def test_memory_bandwidth_over_time_steps(db):
    htod = [row["gbps"] for row in analysis.memory_bandwidth_over_time(db) if row["kind"] == "HtoD"]
    # copy 1 starts, copy 3 joins, copy 1 ends as copy 2 starts (one change), copy 2 ends, copy 3 ends.
    assert htod == pytest.approx([1.048576, 1.048576 + 2.097152, 2 * 2.097152, 2.097152, 0.0])


# --- no GPU data ----------------------------------------------------------------------------

def test_a_cpu_only_run_gives_empty_tables(tmp_path):
    run_dir = make_run(CPU_ONLY, tmp_path)
    with analysis.open_run(run_dir) as database:
        for function in (analysis.kernel_launches, analysis.memory_bandwidth_over_time,
                         analysis.queue_length_over_time):
            assert len(function(database)) == 0
        for name in ("kernel_launch_stats", "frequent_kernel_sequences", "memory_bandwidth", "queue_length"):
            table = analysis.ANALYSES[name](database, top=5)
            assert len(table) == 0 and table.columns
        assert len(analysis.frequent_kernel_sequences(database, operator="aten::", min_length=0)) == 0


# --- HolisticTraceAnalysis on the same run --------------------------------------------------

@pytest.fixture()
def hta(run_dir, monkeypatch):
    trace_analysis = pytest.importorskip("hta.trace_analysis")
    # HTA floors its timestamps to whole microseconds unless told not to; the trace has ns.
    monkeypatch.setenv("HTA_DISABLE_NS_ROUNDING", "1")
    return trace_analysis.TraceAnalysis(trace_dir=os.path.join(run_dir, "PERFPROF_OUTPUT"))


def test_launches_agree_with_hta(db, hta):
    theirs = hta.get_cuda_kernel_launch_stats(visualize=False)[0].set_index("correlation")
    ours = by_name(analysis.kernel_launches(db), "correlationId")
    assert set(theirs.index) == set(ours)
    for correlation, row in theirs.iterrows():
        mine = ours[correlation]
        assert mine["cpu_duration_ns"] == pytest.approx(row["cpu_duration"] * 1000, rel=0.01)
        assert mine["gpu_duration_ns"] == pytest.approx(row["gpu_duration"] * 1000, rel=0.01)
        assert mine["launch_delay_ns"] == pytest.approx(row["launch_delay"] * 1000, rel=0.01)


def test_queue_length_agrees_with_hta(db, hta):
    series = next(iter(hta.get_queue_length_time_series().values()))
    summary = hta.get_queue_length_summary()
    queues = {row["streamId"]: row for row in analysis.queue_length(db)}
    assert set(series["stream"]) == set(queues)
    for stream, points in series.groupby("stream"):
        assert queues[stream]["max_queue_length"] == summary.loc[(0, stream), ("queue_length", "max")]
        # HTA's summary mean is over its change points; weighted by how long each held, its
        # series gives our average.
        held = points["ts"].shift(-1) - points["ts"]
        weighted = (points["queue_length"] * held).sum() / held.sum()
        assert queues[stream]["avg_queue_length"] == pytest.approx(weighted, rel=0.01)


def test_memory_bandwidth_agrees_with_hta(db, hta):
    summary = hta.get_memory_bw_summary()
    kinds = by_name(analysis.memory_bandwidth(db), "kind")
    # HTA reads the Chrome trace's "memory bandwidth (GB/s)", which copies have and memsets lack.
    assert {name for _, name in summary.index} == {"Memcpy HtoD", "Memcpy DtoH"}
    peak = summary[("memory_bw_gbps", "max")]
    assert kinds["DtoH"]["peak_gbps"] == pytest.approx(peak[(0, "Memcpy DtoH")], rel=0.01)
    # Stream 11's second copy starts in the nanosecond its first ends. HTA adds and removes
    # bandwidth one trace event at a time, in pandas' sort order for equal times, so it may see
    # both at once (+1.048576 GB/s); perfprof nets the changes of one instant.
    assert peak[(0, "Memcpy HtoD")] in (pytest.approx(kinds["HtoD"]["peak_gbps"], rel=0.01),
                                        pytest.approx(kinds["HtoD"]["peak_gbps"] + 1.048576, rel=0.01))


def test_frequent_sequences_agree_with_hta(db, hta, tmp_path):
    try:
        theirs = hta.get_frequent_cuda_kernel_sequences("aten::", output_dir=str(tmp_path), min_pattern_len=2,
                                                        visualize=False)
    except TypeError as error:
        # HTA 0.5's call graph builds an object array that numpy refuses under pandas 3.
        pytest.skip(f"HolisticTraceAnalysis cannot build its call graph here: {error}")
    ours = analysis.frequent_kernel_sequences(db, operator="aten::", min_length=2)
    assert [(f"{row['operator']}|{row['sequence'].replace(' -> ', '|')}", row["count"]) for row in ours] == \
        list(zip(theirs["pattern"], theirs["count"]))
    assert ours.column("total_ns") == pytest.approx([us * 1000 for us in theirs["GPU kernel duration (us)"]], rel=0.01)


# --- kernels by launching operator and configuration ------------------------------------------

KINETO_TRACE = Path(__file__).parent / "data" / "kineto_gpu_nccl_rank1.pt.trace.json"


def test_kernel_launch_configs_of_a_kineto_trace():
    """The trace's kernels (its args: grid, block, registers per thread, shared memory), each
    under the operator whose launch call (External id) queued it; the DtoH copy is no kernel."""
    with analysis.open_run(KINETO_TRACE) as run:
        rows = analysis.kernel_launch_configs(run, top=-1).to_dicts()
        kernels = {row["name"]: row for row in analysis.top_kernels(run, top=-1).to_dicts()}
    launch = dict(grid="132x1x1", block="128x1x1", registers_per_thread=32, shared_memory_bytes=0, occupancy_pct=None)
    assert rows == [
        dict(name="ampere_sgemm_128x64_nn", operator="aten::mm", **launch, count=2, total_ns=120_000, avg_ns=60_000,
             min_ns=60_000, max_ns=60_000),
        dict(name="ncclDevKernel_AllReduce_Sum_f32_RING_LL", operator="record_param_comms", **launch, count=1,
             total_ns=80_000, avg_ns=80_000, min_ns=80_000, max_ns=80_000),
        dict(name="softmax_warp_forward", operator="aten::softmax", **launch, count=1, total_ns=30_000, avg_ns=30_000,
             min_ns=30_000, max_ns=30_000),
    ]
    # One group per name here: each equals the name's top_kernels row.
    for row in rows:
        assert (row["count"], row["total_ns"]) == (kernels[row["name"]]["count"], kernels[row["name"]]["total_ns"])
