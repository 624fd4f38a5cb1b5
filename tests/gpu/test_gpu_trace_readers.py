"""A real GPU trace from perfprof in the tools users open it with (issue 11, item 5):
HolisticTraceAnalysis (kernel and temporal breakdowns, idle time) and TensorBoard's profiler plugin
(the GPU kernel view). Each reader skips when it is not installed."""
import json
import os
import sys

import pytest

import perfprof

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "python"))


def profile_two_streams(directory):
    """A matmul + relu loop on two streams, exported as `directory`/worker.1.pt.trace.json."""
    import torch

    side = torch.cuda.Stream()
    a = torch.randn(2048, 2048, device="cuda")
    b = torch.randn(2048, 2048, device="cuda")
    torch.cuda.synchronize()
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            torch.relu(a @ b)
            with torch.cuda.stream(side):
                torch.sigmoid(b @ a)
        torch.cuda.synchronize()
    path = directory / "worker.1.pt.trace.json"
    prof.export_chrome_trace(str(path))
    return json.loads(path.read_text())


def test_holistic_trace_analysis_reads_the_breakdowns(tmp_path):
    trace_analysis = pytest.importorskip("hta.trace_analysis")
    trace = profile_two_streams(tmp_path)
    kernels_in_trace = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "kernel"}

    analysis = trace_analysis.TraceAnalysis(trace_dir=str(tmp_path))
    _, kernels = analysis.get_gpu_kernel_breakdown(visualize=False)
    assert set(kernels["name"]) - {"others"} <= kernels_in_trace and len(kernels) > 0
    temporal = analysis.get_temporal_breakdown(visualize=False)
    shares = temporal[["idle_time_pctg", "compute_time_pctg", "non_compute_time_pctg"]].iloc[0]
    assert sum(shares) == pytest.approx(100, abs=1) and shares["compute_time_pctg"] > 0
    idle = analysis.get_idle_time_breakdown(visualize=False)[0]
    streams = {e["tid"] for e in trace["traceEvents"] if e.get("cat") == "kernel"}
    assert len(streams) == 2 and set(idle["stream"]) <= streams


def test_tensorboard_plugin_shows_the_kernel_view(tmp_path):
    pytest.importorskip("torch_tb_profiler")
    from trace_checks import tensorboard_views

    profile_two_streams(tmp_path)
    assert "kernel" in tensorboard_views(str(tmp_path / "worker.1.pt.trace.json"))["views"]
