"""mstx ranges given a real CUDA stream record that stream's handle, on a real GPU."""
import json

import perfprof


def test_range_on_a_torch_cuda_stream_records_its_handle(tmp_path):
    import torch

    stream = torch.cuda.Stream()
    config = perfprof.ExperimentalConfig(mstx=True)
    with perfprof.profile(experimental_config=config) as prof:
        with torch.cuda.stream(stream):
            range_id = perfprof.mstx.range_start("matmul", stream)
            a = torch.randn(512, 512, device="cuda")
            (a @ a).sum().item()
            perfprof.mstx.range_end(range_id)
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())["traceEvents"]
    (matmul,) = [e for e in events if e.get("name") == "matmul"]
    assert matmul["args"] == {"domain": "default", "stream": stream.cuda_stream}
