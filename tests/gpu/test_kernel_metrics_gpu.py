"""Per-kernel GPU metrics on a real GPU (docs/gpu_metrics.md, "what a GPU session must check"):
what the chip measures, known values on known kernels, and every measured kernel paired."""
import pytest

import perfprof
from perfprof import ExperimentalConfig, GpuMetrics, ProfilerActivity


def measure(work, group: str, l2_cache: bool = False):
    """`work` run in a profile measuring `group`: its kernels' activities and the trace's stats."""
    import torch

    config = ExperimentalConfig(gpu_metrics=group, l2_cache=l2_cache)
    torch.cuda.synchronize()  # the context exists and is current before the window begins
    with perfprof.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], experimental_config=config) as prof:
        work()
        torch.cuda.synchronize()
    kernels = [a for a in prof.trace.gpu_activities() if a["kind"] == "kernel"]
    return kernels, prof.trace.stats


def test_the_chip_measures_every_group():
    assert perfprof.supported_gpu_metrics() == list(GpuMetrics)


def test_a_copy_reads_and_writes_its_bytes_in_dram():
    import torch

    source = torch.randn(64 << 20, device="cuda")  # 256 MiB: far beyond L2
    target = torch.empty_like(source)
    kernels, stats = measure(lambda: target.copy_(source), "Memory")
    assert stats["kernel_metrics_unmatched"] == 0 and stats["kernel_metrics_left_out"] == 0
    (copy,) = kernels
    nbytes = source.numel() * source.element_size()
    assert copy["metrics"]["DRAM Read (bytes)"] == pytest.approx(nbytes, rel=0.05)
    assert copy["metrics"]["DRAM Write (bytes)"] == pytest.approx(nbytes, rel=0.05)


def test_every_kernel_of_a_model_step_is_paired_across_streams():
    import torch

    model = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.ReLU(), torch.nn.Linear(1024, 10)).cuda()
    data = torch.randn(256, 1024, device="cuda")
    side = torch.cuda.Stream()

    def step():
        model(data).sum().backward()
        with torch.cuda.stream(side):
            data.mul(2.0)

    kernels, stats = measure(step, "PipeUtilization", l2_cache=True)
    assert stats["kernel_metrics_unmatched"] == 0, stats
    assert kernels and all("SM Throughput (%)" in k["metrics"] for k in kernels), kernels
    assert all(0 <= k["metrics"]["L2 Hit Rate (%)"] <= 100 for k in kernels)


def test_a_cuda_graphs_kernels_are_each_paired():
    import torch

    x = torch.randn(1 << 20, device="cuda")
    graph = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        x.mul_(1.0)  # warm-up outside the graph
        with torch.cuda.graph(graph):
            x.mul_(1.5)
            x.add_(1.0)
    torch.cuda.current_stream().wait_stream(side)
    kernels, stats = measure(graph.replay, "Memory")
    assert stats["kernel_metrics_unmatched"] == 0, stats
    assert len(kernels) == 2 and all(k["metrics"].get("DRAM Read (bytes)", 0) > 0 for k in kernels), kernels
