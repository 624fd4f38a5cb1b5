"""GPU collection through the real CUPTI code path, driven by the CUPTI test double."""
import json

import fake_cupti
from fake_cupti import run

PROFILE_KERNELS = """
import perfprof
config = perfprof.ExperimentalConfig(profiler_level=perfprof.ProfilerLevel.{level})
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      experimental_config=config) as prof:
    with perfprof.record_function("train step"):
        correlations = [kernel("gemm_kernel"), kernel("relu_kernel"), kernel("gemm_kernel", stream=9)]
        correlations.append(fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000))
        correlations.append(fake.fake_cupti_memset(4096, 0, 0, 1, 7, 5_000))
        fake.fake_cupti_synchronize(0, 1, 7, 30_000)
        fake.fake_cupti_malloc(0x7000, 1 << 20, 0, 0)
        correlations.append(fake.fake_cupti_graph_launch(0, 1, 7, 3, 2, 20_000))
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
print(json.dumps(dict(trace=load_trace(path), tid=threading.get_native_id(), correlations=correlations)))
"""


def events(trace, **match):
    return [e for e in trace["traceEvents"] if all(e.get(k) == v for k, v in match.items())]


def test_status_with_the_double(tmp_path):
    result = run("""
import perfprof
print(json.dumps(dict(status=perfprof.cuda_status(), activities=[a.name for a in perfprof.supported_activities()])))
""", tmp_path)
    status = result["status"]
    assert status["available"] and status["library"].endswith(fake_cupti.LIBRARY_NAME)
    assert status["version"] >= 130000 and status["devices"] == 1 and status["reason"] == ""
    assert result["activities"] == ["CPU", "CUDA"]


def test_no_driver_device_means_cpu_only_with_one_clear_warning(tmp_path):
    result = run("""
fake.fake_cupti_set_driver(0, 0)
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    with perfprof.record_function("cpu work"):
        pass
with perfprof.profile(activities=[perfprof.ProfilerActivity.CUDA]):
    pass
print(json.dumps(dict(status=perfprof.cuda_status(), ranges=[r[0] for r in prof.trace.ranges()],
                      activities=[a.name for a in perfprof.supported_activities()])))
""", tmp_path)
    assert not result["status"]["available"] and "no CUDA device is visible" in result["status"]["reason"]
    assert result["activities"] == ["CPU"] and result["ranges"] == ["cpu work"]
    assert result["_stderr"].count("ProfilerActivity.CUDA is not supported here") == 1


def test_without_libcupti_cpu_profiling_goes_on_and_says_why(tmp_path):
    result = run("""
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    with perfprof.record_function("cpu work"):
        pass
print(json.dumps(dict(status=perfprof.cuda_status(), ranges=[r[0] for r in prof.trace.ranges()])))
""", tmp_path, env={"PERFPROF_CUPTI_LIBRARY": str(tmp_path / "missing" / "libcupti.so")})
    status = result["status"]
    assert not status["available"] and status["library"] is None
    assert "missing/libcupti.so" in status["reason"] and "cannot open shared object file" in status["reason"]
    assert result["ranges"] == ["cpu work"]
    assert result["_stderr"].count("ProfilerActivity.CUDA is not supported here") == 1


def test_kernels_copies_and_runtime_calls_are_linked(tmp_path):
    result = run(PROFILE_KERNELS.format(level="Level0"), tmp_path)
    trace, tid = result["trace"], result["tid"]
    kernels = events(trace, cat="kernel")
    assert sorted(k["name"] for k in kernels) == [
        "gemm_kernel", "gemm_kernel", "graph 3 node 1", "graph 3 node 2", "relu_kernel"]
    assert {(k["pid"], k["tid"]) for k in kernels} == {(0, 7), (0, 9)}
    (copy,) = events(trace, cat="gpu_memcpy")
    assert copy["name"] == "Memcpy HtoD" and copy["args"]["bytes"] == 1 << 20
    (fill,) = events(trace, cat="gpu_memset")
    assert fill["args"]["bytes"] == 4096
    runtime = {e["args"]["correlation"]: e for e in events(trace, cat="cuda_runtime")}
    assert {e["name"] for e in runtime.values()} == {
        "cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamSynchronize", "cudaMalloc",
        "cudaGraphLaunch"}
    assert all(e["tid"] == tid for e in runtime.values())
    for gpu_event in kernels + [copy, fill]:
        launch = runtime[gpu_event["args"]["correlation"]]
        assert gpu_event["ts"] >= launch["ts"] + launch["dur"], "GPU work starts after its launch"
    flows_out = {e["id"]: e for e in events(trace, ph="s", cat="ac2g")}
    flows_in = {e["id"]: e for e in events(trace, ph="f", cat="ac2g")}
    assert set(flows_out) == set(flows_in) == set(result["correlations"])
    assert all(flows_in[i]["bp"] == "e" and flows_in[i]["pid"] == 0 for i in flows_in)
    assert not events(trace, cat="cuda_driver") and not events(trace, cat="cuda_sync"), "Level0 only"


def test_gpu_work_links_to_the_enclosing_host_range(tmp_path):
    trace = run(PROFILE_KERNELS.format(level="Level0"), tmp_path)["trace"]
    (step,) = events(trace, name="train step")
    external = step["args"]["External id"]
    for event in events(trace, cat="kernel") + events(trace, cat="cuda_runtime"):
        assert event["args"]["External id"] == external
    launch = events(trace, cat="cuda_runtime")[0]
    assert step["ts"] <= launch["ts"] and launch["ts"] + launch["dur"] <= step["ts"] + step["dur"]


def test_the_innermost_host_range_is_the_external_id(tmp_path):
    trace = run("""
import perfprof
config = perfprof.ExperimentalConfig(mstx=True)
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      experimental_config=config) as prof:
    with perfprof.record_function("outer"):
        kernel("in outer")
        range_id = perfprof.mstx.range_start("inner mstx range")
        kernel("in mstx range")
        perfprof.mstx.range_end(range_id)
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
print(json.dumps(load_trace(path)))
""", tmp_path)
    (outer,) = events(trace, name="outer")
    (inner,) = events(trace, name="inner mstx range")
    (first,) = events(trace, name="in outer")
    (second,) = events(trace, name="in mstx range")
    assert first["args"]["External id"] == outer["args"]["External id"]
    assert second["args"]["External id"] == inner["args"]["External id"] != outer["args"]["External id"]


def test_level1_adds_synchronization_and_memory(tmp_path):
    # Issue 33: Level1 enabled CUPTI_ACTIVITY_KIND_GRAPH_TRACE and the graph launch was one
    # "cuda_graph" slice; that kind hides the graph's kernels for good, so it is never enabled
    # and the graph's nodes are kernels (test_cuda_graph_nodes_are_kernels_... below).
    trace = run(PROFILE_KERNELS.format(level="Level1"), tmp_path)["trace"]
    (sync,) = events(trace, cat="cuda_sync")
    assert sync["tid"] != 7, "synchronisation waits get their own track"
    (alloc,) = events(trace, cat="gpu_memory")
    assert alloc["name"] == "Memory Allocation" and alloc["args"]["bytes"] == 1 << 20
    assert not events(trace, cat="cuda_graph")


def test_cuda_graph_nodes_are_kernels_linked_to_their_launch_at_every_level(tmp_path):
    result = run("""
import sqlite3
import perfprof
out = {}
for level in ["Level2", "Level1", "Level0"]:  # Level0 last: a graph-level selection would outlive Level1
    config = perfprof.ExperimentalConfig(profiler_level=getattr(perfprof.ProfilerLevel, level))
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                          experimental_config=config) as prof:
        launch = fake.fake_cupti_graph_launch(0, 1, 7, 5, 3, 10_000)
    path = os.path.join(os.environ["TMP"], level + ".json")
    prof.export_chrome_trace(path)
    database = os.path.join(os.environ["TMP"], level + ".sqlite")
    prof.trace.export_database(database, [])
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT k.correlationId, k.graphId, r.correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL k "
                          "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId").fetchall()
    out[level] = dict(launch=launch, trace=load_trace(path), rows=rows)
print(json.dumps(out))
""", tmp_path)
    for level in ("Level2", "Level1", "Level0"):
        session = result[level]
        trace, launch = session["trace"], session["launch"]
        kernels = events(trace, cat="kernel")
        assert sorted(k["name"] for k in kernels) == ["graph 5 node 1", "graph 5 node 2", "graph 5 node 3"], level
        assert all(k["args"]["correlation"] == launch and k["args"]["graph id"] == 5 for k in kernels), level
        (graph_launch,) = events(trace, cat="cuda_runtime", name="cudaGraphLaunch")
        assert graph_launch["args"]["correlation"] == launch
        assert session["rows"] == [[launch, 5, launch]] * 3, level


def test_a_kernel_launched_through_the_driver_has_its_launch_at_level0(tmp_path):
    # Triton's kernels (torch.compile) are launched with cuLaunchKernel: no runtime record. Level0
    # did not enable the driver kind, so they had no launch row and no link to their operator.
    trace = run("""
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    with perfprof.record_function("aten::add"):
        fake.fake_cupti_driver_launch_kernel(b"triton_poi_fused_add_0", 0, 1, 7, 5_000)
    fake.fake_cupti_driver_call(304, 1_000)  # cuCtxGetCurrent: not a launch, Level1 and up only
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
print(json.dumps(load_trace(path)))
""", tmp_path)
    (kernel,) = events(trace, cat="kernel")
    (launch,) = events(trace, cat="cuda_driver")
    assert launch["name"] == "cuLaunchKernel" and launch["args"]["correlation"] == kernel["args"]["correlation"]
    (operator,) = events(trace, name="aten::add")
    assert kernel["args"]["External id"] == launch["args"]["External id"] == operator["args"]["External id"]
    (flow_out,) = events(trace, ph="s", cat="ac2g")
    assert flow_out["id"] == kernel["args"]["correlation"]


def test_level_none_collects_no_gpu_activity(tmp_path):
    trace = run(PROFILE_KERNELS.format(level="Level_none"), tmp_path)["trace"]
    assert not events(trace, cat="kernel") and not events(trace, cat="cuda_runtime")


def test_device_properties_and_gpu_track_names(tmp_path):
    trace = run(PROFILE_KERNELS.format(level="Level0"), tmp_path)["trace"]
    (device,) = trace["deviceProperties"]
    assert device["name"] == "Fake GPU" and device["numSms"] == 132 and device["computeMajor"] == 9
    assert device["totalGlobalMem"] == 80 << 30
    names = {(e["pid"], e.get("tid")): e["args"]["name"] for e in events(trace, ph="M")
             if e["name"] in ("process_name", "thread_name")}
    assert names[(0, 0)] == "GPU 0" and names[(0, 7)] == "stream 7" and names[(0, 9)] == "stream 9"
    (kernel,) = [k for k in events(trace, cat="kernel") if k["tid"] == 9]
    assert kernel["args"]["grid"] == [128, 1, 1] and kernel["args"]["block"] == [256, 1, 1]
    assert kernel["args"]["blocks per SM"] == round(128 / 132, 3)
    # 256 threads x 32 registers: 8 blocks of 8 warps fill the 64 warp slots of the device.
    assert kernel["args"]["theoretical occupancy %"] == 100.0


def test_clock_alignment_without_the_timestamp_callback(tmp_path):
    # The double then stamps records with CLOCK_REALTIME, as CUPTI does by default; perfprof must
    # shift them onto its monotonic clock.
    result = run(f"""
fake.fake_cupti_fail(b"cuptiActivityRegisterTimestampCallback", {fake_cupti.CUPTI_ERROR_NOT_SUPPORTED})
{PROFILE_KERNELS.format(level="Level0")}
""", tmp_path)
    trace = result["trace"]
    (step,) = events(trace, name="train step")
    for launch in events(trace, cat="cuda_runtime"):
        assert step["ts"] - 5 <= launch["ts"] <= step["ts"] + step["dur"] + 5, "within 5 us of the host range"


def test_dropped_records_are_counted_and_reported(tmp_path):
    result = run("""
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CUDA]) as prof:
    fake.fake_cupti_drop_next(4)  # in the recorded window: drops in warm-up go with the warm-up
    for _ in range(3):
        kernel("k")
print(json.dumps(dict(stats=prof.trace.stats, kernels=[a["name"] for a in prof.trace.gpu_activities()])))
""", tmp_path)
    assert result["stats"]["gpu_dropped_records"] == 4
    assert "CUPTI dropped 4 GPU activity records" in result["_stderr"]


def test_another_cupti_client_falls_back_to_cpu(tmp_path):
    result = run(f"""
import perfprof
fake.fake_cupti_fail(b"cuptiActivityEnable", {fake_cupti.CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED})
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    with perfprof.record_function("still profiled"):
        kernel("k")
print(json.dumps(dict(ranges=[r[0] for r in prof.trace.ranges()], gpu=prof.trace.gpu_activities())))
""", tmp_path)
    assert result["ranges"] == ["still profiled"] and result["gpu"] == []
    assert "another CUPTI client is active" in result["_stderr"]


def test_a_cupti_flush_that_fails_at_stop_is_said_and_the_cycle_saved(tmp_path):
    result = run(f"""
import perfprof
fake.fake_cupti_fail(b"cuptiActivityFlushAll", {fake_cupti.CUPTI_ERROR_NOT_SUPPORTED})
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    with perfprof.record_function("still profiled"):
        kernel("k")
print(json.dumps(dict(ranges=[r[0] for r in prof.trace.ranges()], gpu=prof.trace.gpu_activities())))
""", tmp_path)
    # The GPU records in the buffer CUPTI did not hand over are missing: said, not silent.
    assert result["ranges"] == ["still profiled"] and result["gpu"] == []
    assert [line for line in result["_stderr"].splitlines() if line.startswith("perfprof:")] == [
        "perfprof: CUPTI could not hand over its GPU activity buffers (CUPTI_ERROR_NOT_SUPPORTED (27)); GPU activity "
        "recorded after the last buffer it completed is missing from this cycle"]


def test_a_refused_activity_kind_is_skipped_and_named(tmp_path):
    result = run(f"""
import perfprof
fake.fake_cupti_fail(b"cuptiActivityEnable:8", {fake_cupti.CUPTI_ERROR_NOT_SUPPORTED})  # DEVICE
with perfprof.profile(activities=[perfprof.ProfilerActivity.CUDA]) as prof:
    kernel("_ZN2at6native13reduce_kernelILi512EEEvPf")
print(json.dumps(dict(kernels=[a["name"] for a in prof.trace.gpu_activities()], devices=prof.trace.gpu_devices)))
""", tmp_path)
    assert result["kernels"] == ["void at::native::reduce_kernel<512>(float*)"], "demangled, as torch shows it"
    assert result["devices"] == []
    assert ("refused some activity kinds, which are not collected: device (CUPTI_ERROR_NOT_SUPPORTED"
            in result["_stderr"])


def test_gpu_records_with_timestamps_outside_the_window_are_dropped_counted_and_said(tmp_path):
    result = run("""
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CUDA]) as prof:
    kernel("timed")
    now = fake.fake_cupti_now()
    fake.fake_cupti_launch_kernel_at(b"not timed", 0, 1, 7, now, 2_000, 0, 0)  # CUPTI had no device memory
    fake.fake_cupti_launch_kernel_at(b"another clock", 0, 1, 7, 1 << 61, 2_000, (1 << 61) + 3_000, 5_000)
print(json.dumps(dict(stats=prof.trace.stats, kernels=[a["name"] for a in prof.trace.gpu_activities()])))
""", tmp_path)
    assert result["kernels"] == ["timed"]
    assert result["stats"]["gpu_records_outside_window"] == 3  # both of another clock, the kernel not timed
    assert "perfprof: 3 GPU activity records had timestamps that cannot be of work in the profiled window" in \
        result["_stderr"]


def test_gpu_work_still_running_at_stop_is_waited_for_or_said(tmp_path):
    result = run("""
import perfprof
kernels = {}
for context in (0, 1):  # no CUDA context current on the stopping thread, then one
    fake.fake_cupti_set_current_context(context, 0)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CUDA]) as prof:
        kernel("done")
        fake.fake_cupti_set_in_flight(1)
        kernel("running")
        kernel("queued after it")
    kernels[context] = sorted(a["name"] for a in prof.trace.gpu_activities())
print(json.dumps(kernels))
""", tmp_path)
    assert result["0"] == ["done"] and result["1"] == ["done", "queued after it", "running"]
    assert result["_stderr"].count("perfprof: 1 CUPTI buffers held GPU work still running when the profiler "
                                   "stopped") == 1


def test_torch_profiler_then_perfprof_then_torch_profiler_again(tmp_path):
    # Another CUPTI client (Kineto, in a torch.profiler CUDA session) registers its own buffer
    # and timestamp callbacks and may finalize CUPTI: perfprof's next sessions got no GPU records.
    result = run("""
import perfprof
sessions = []
for finalize in (0, 1):
    fake.fake_cupti_other_client_session(finalize)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
        with perfprof.record_function("step"):
            kernel("k")
    path = os.path.join(os.environ["TMP"], f"trace{finalize}.json")
    prof.export_chrome_trace(path)
    sessions.append(load_trace(path))
print(json.dumps(dict(sessions=sessions)))
""", tmp_path)
    for trace in result["sessions"]:
        (step,) = events(trace, name="step")
        (kernel,) = events(trace, cat="kernel")
        # Launched inside the step, it starts within a millisecond of it on perfprof's clock (on
        # the other client's, CLOCK_REALTIME, it would be decades away).
        assert step["ts"] <= kernel["ts"] <= step["ts"] + step["dur"] + 1000
    assert "GPU activity is not collected" not in result["_stderr"]


def test_torch_profiler_taking_cupti_over_during_a_cycle_is_said(tmp_path):
    # A torch.profiler CUDA session started inside perfprof's registers its own CUPTI callbacks,
    # and is handed the buffers with perfprof's records: never silence.
    result = run("""
import perfprof
kernels = []
for takeover in (True, False):
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
        kernel("k")
        if takeover:
            fake.fake_cupti_other_client_session(0)
    kernels.append([a["name"] for a in prof.trace.gpu_activities()])
print(json.dumps(dict(kernels=kernels)))
""", tmp_path)
    assert result["kernels"] == [[], ["k"]]
    assert result["_stderr"].count("perfprof: another CUPTI client (torch.profiler collecting CUDA, Nsight?) took "
                                   "CUPTI over during this cycle and was handed 1 of perfprof's GPU activity "
                                   "buffers") == 1


def test_warmup_gpu_activity_is_discarded(tmp_path):
    result = run("""
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      schedule=perfprof.schedule(wait=0, warmup=1, active=1, repeat=1)) as prof:
    for step in range(3):
        kernel(f"kernel of step {step}")
        prof.step()
print(json.dumps(dict(kernels=[a["name"] for a in prof.trace.gpu_activities()])))
""", tmp_path)
    assert result["kernels"] == ["kernel of step 1"]


def test_mstx_range_on_a_stream_spans_its_gpu_work(tmp_path):
    result = run("""
import perfprof
config = perfprof.ExperimentalConfig(mstx=True)
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      experimental_config=config) as prof:
    kernel("before", stream=7)
    range_id = perfprof.mstx.range_start("matmul block", 7)
    kernel("inside 1", stream=7)
    kernel("inside 2", stream=7)
    perfprof.mstx.range_end(range_id)
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
print(json.dumps(load_trace(path)))
""", tmp_path)
    (span,) = events(result, cat="gpu_user_annotation")
    assert span["name"] == "matmul block" and (span["pid"], span["tid"]) == (0, 7)
    inside = [k for k in events(result, cat="kernel") if k["name"].startswith("inside")]
    assert span["ts"] == min(k["ts"] for k in inside)
    assert abs(span["ts"] + span["dur"] - max(k["ts"] + k["dur"] for k in inside)) < 0.002
    (before,) = events(result, name="before")
    assert before["ts"] + before["dur"] <= span["ts"]


def test_gpu_trace_nests_and_loads_in_holistic_trace_analysis(tmp_path):
    from trace_checks import assert_slices_nest

    trace = run(PROFILE_KERNELS.format(level="Level1"), tmp_path)["trace"]
    assert_slices_nest(trace)
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=str(tmp_path))
    kernel_types, kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
    assert set(kernels["name"]) >= {"gemm_kernel", "relu_kernel"}


def test_tensorboard_plugin_shows_the_kernel_view(tmp_path):
    from trace_checks import tensorboard_views

    trace = run(PROFILE_KERNELS.format(level="Level0"), tmp_path)["trace"]
    path = tmp_path / "worker.1.pt.trace.json"
    path.write_text(json.dumps(trace))
    assert "kernel" in tensorboard_views(str(path))["views"]

