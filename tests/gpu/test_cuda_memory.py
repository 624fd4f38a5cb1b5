"""Memory profiling of CUDA tensors on a real GPU, against torch.profiler's own timeline."""
import json
import warnings

import pytest

import perfprof

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

CATEGORIES = perfprof.memory.CATEGORIES


def cuda_training_loop():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 10)).cuda()
    optimizer = torch.optim.Adam(model.parameters())

    def run() -> None:
        for _ in range(3):
            x, y = torch.randn(256, 1024, device="cuda"), torch.randn(256, 10, device="cuda")
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
            optimizer.zero_grad()
        torch.cuda.synchronize()

    return run


def torch_timeline(path):
    """torch.profiler's memory timeline of the training loop on cuda:0, written to `path`."""
    run = cuda_training_loop()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
                                record_shapes=True, profile_memory=True, with_stack=True) as reference:
        run()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        reference.export_memory_timeline(str(path), device="cuda:0")


def peaks(sizes):
    return [max(point[i + 1] for point in sizes) for i in range(len(CATEGORIES))]


def test_cuda_category_peaks_agree_with_torch_profiler(tmp_path):
    torch_timeline(tmp_path / "torch.json")

    run = cuda_training_loop()
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                          profile_memory=True) as ours:
        run()
    ours.export_memory_timeline(str(tmp_path / "perfprof.json"))  # default device: the first GPU

    expected = peaks(json.loads((tmp_path / "torch.json").read_text())[1])
    got = peaks(json.loads((tmp_path / "perfprof.json").read_text())[1])
    for name, want, have in zip(CATEGORIES, expected, got):
        if want:
            assert have == pytest.approx(want, rel=0.10), name
    assert got[CATEGORIES.index("PARAMETER")] >= (1024 * 2048 + 2048 + 2048 * 10 + 10) * 4


def test_cuda_memory_events_carry_the_device(tmp_path):
    run = cuda_training_loop()
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                          profile_memory=True) as prof:
        run()
    assert ("cuda:0", 1, 0) in prof.trace.memory_devices()
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    events = [e for e in json.loads((tmp_path / "trace.json").read_text())["traceEvents"]
              if e.get("name") == "[memory]"]
    cuda = [e for e in events if e["args"]["Device Type"] == 1]
    assert cuda and all(e["args"]["Device Id"] == 0 and e["args"]["Total Reserved"] >= e["args"]["Total Allocated"]
                        for e in cuda)
    page = (tmp_path / "memory.html")
    prof.export_memory_timeline(str(page), device="cuda")
    assert "cuda:0" in page.read_text()


def test_cuda_peak_reads_the_same_in_the_html_the_database_and_torch(tmp_path):
    """docs/memory.md "Two peaks" on CUDA: the peak total of the categories is one number in the
    HTML legend, memory_peaks and torch.profiler's timeline; the allocator's maximum (the
    caching allocator's count) is memory_record's, named apart."""
    import re

    from perfprof import analysis

    torch_timeline(tmp_path / "torch.json")

    run = cuda_training_loop()
    handler = perfprof.tensorboard_trace_handler(str(tmp_path / "runs"))
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                          profile_memory=True, on_trace_ready=handler,
                          experimental_config=perfprof.ExperimentalConfig(export_type=["text", "db"])) as ours:
        run()
    html = (tmp_path / "memory.html")
    ours.export_memory_timeline(str(html), device="cuda:0")

    def legend(label: str) -> int:
        return int(re.search(re.escape(label) + r": [^(]+\((\d+) bytes\)", html.read_text())[1])

    with analysis.open_run(handler.run_dirs[-1]) as database:
        peak = {row["category"]: row["peak_bytes"] for row in analysis.memory_peaks(database)
                if row["deviceType"] == "CUDA:0"}["TOTAL"]
        (allocator,) = database.execute("SELECT max(totalAllocated) FROM MEMORY_RECORD m JOIN StringIds d "
                                        "ON d.id = m.deviceType WHERE d.value = 'CUDA:0'", "max", "max").rows[0]
    assert legend("Peak total of the categories (the chart's top)") == peak
    assert legend("Allocator's max allocated (torch's own count; for the CPU, only of memory allocated while "
                  "recording)") == allocator
    torch_peak = max(sum(point[1:]) for point in json.loads((tmp_path / "torch.json").read_text())[1])
    assert peak == pytest.approx(torch_peak, rel=0.05)  # the category peaks' bound above: two runs of one loop
