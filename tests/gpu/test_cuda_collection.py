"""GPU collection on a real GPU (PyTorch): kernels, streams, launch links, durations."""
import json

import pytest

import perfprof


def profile_cuda(work, tmp_path, name="trace.json"):
    import torch

    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
        work()
        torch.cuda.synchronize()
    path = tmp_path / name
    prof.export_chrome_trace(str(path))
    return prof, json.loads(path.read_text())


def test_cupti_is_available_on_this_machine():
    status = perfprof.cuda_status()
    assert status["available"], status
    assert perfprof.ProfilerActivity.CUDA in perfprof.supported_activities()


def test_every_kernel_appears_on_its_stream_and_links_to_its_launch(tmp_path):
    import torch

    side = torch.cuda.Stream()
    x = torch.randn(1024, 1024, device="cuda")
    torch.cuda.synchronize()

    def work():
        with torch.cuda.stream(side):
            for _ in range(5):
                x.mul_(1.0001)

    prof, trace = profile_cuda(work, tmp_path)
    events = trace["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert len(kernels) == 5, [k["name"] for k in kernels]
    assert len({k["tid"] for k in kernels}) == 1, "all on the side stream"
    assert all("mul" in k["name"].lower() or "elementwise" in k["name"].lower() for k in kernels)
    launches = {e["args"]["correlation"]: e for e in events if e.get("cat") in ("cuda_runtime", "cuda_driver")
                and e["ph"] == "X"}
    flows = {e["id"] for e in events if e["ph"] == "f"}
    for kernel in kernels:
        launch = launches[kernel["args"]["correlation"]]
        assert kernel["ts"] >= launch["ts"], "a kernel starts after the call that launched it"
        assert kernel["args"]["correlation"] in flows
    assert trace["deviceProperties"] and trace["deviceProperties"][0]["numSms"] > 0


def test_kernel_durations_agree_with_cuda_events(tmp_path):
    import torch

    a = torch.randn(4096, 4096, device="cuda")
    b = torch.randn(4096, 4096, device="cuda")
    torch.cuda.synchronize()
    event_ms = []
    for _ in range(5):  # reference: CUDA events around each matmul
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        a @ b
        end.record()
        torch.cuda.synchronize()
        event_ms.append(start.elapsed_time(end))

    def work():
        for _ in range(5):
            a @ b

    prof, trace = profile_cuda(work, tmp_path)
    kernel_us = [e["dur"] for e in trace["traceEvents"] if e.get("cat") == "kernel" and e["dur"] >= 50]
    assert len(kernel_us) == 5
    reference_us = sorted(event_ms)[len(event_ms) // 2] * 1000
    for duration in kernel_us:
        assert duration == pytest.approx(reference_us, rel=0.05)


def test_record_function_links_to_the_kernels_launched_inside(tmp_path):
    import torch

    x = torch.randn(256, 256, device="cuda")

    def work():
        with perfprof.record_function("scaled"):
            x.mul_(2.0)

    prof, trace = profile_cuda(work, tmp_path)
    events = trace["traceEvents"]
    (scaled,) = [e for e in events if e.get("name") == "scaled"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert kernels and all(k["args"]["External id"] == scaled["args"]["External id"] for k in kernels)


def test_a_cuda_pause_leaves_out_the_kernels_launched_in_it(tmp_path):
    """toggle_collection_dynamic on real CUPTI: kernels launched while CUDA is paused are not
    recorded; those before and after are, with their launches."""
    import torch

    x = torch.randn(1024, 1024, device="cuda")
    torch.cuda.synchronize()
    cuda = [perfprof.ProfilerActivity.CUDA]
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
        x.mul_(1.0001)
        prof.toggle_collection_dynamic(False, cuda)
        for _ in range(3):
            x.add_(1.0)
        torch.cuda.synchronize()
        prof.toggle_collection_dynamic(True, cuda)
        x.mul_(1.0001)
        torch.cuda.synchronize()
    path = tmp_path / "paused.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    kernels = [e["name"].lower() for e in events if e.get("cat") == "kernel"]
    assert len(kernels) == 2 and all("mul" in k or "elementwise" in k for k in kernels), kernels
    assert sum(e["name"] == "aten::add_" for e in events) == 3  # the host went on recording
