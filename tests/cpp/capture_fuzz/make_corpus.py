"""Makes the capture fuzz test's corpus (corpus/*.ppcap): real captures perfprof writes of a
small torch loop, kept small so that 20,000 mutations of them run in well under a minute.

    PYTHONPATH=python python3 tests/cpp/capture_fuzz/make_corpus.py

cpu_ops.ppcap: operators with shapes, memory, modules, mstx marks and ranges, host telemetry
counters, GC pauses, a few steps. gpu.ppcap: kernels, copies, a memset, synchronisation, CUDA API
calls and an mstx range given a stream, through the CUPTI test double (tests/cupti_double, built
by tests/python/fake_cupti.py when it is missing). The files are written over (the defect tests'
expected offsets and counts follow cpu_ops.ppcap: check them after remaking it). The cases the
fuzz test saved (capture-fuzz-seed<S>-case<N>.ppcap) go to corpus/found/ by hand, under a name
that says what they hold; they are replayed, not mutated.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
sys.path.insert(0, str(HERE.parents[1] / "python"))  # tests/python: fake_cupti

CPU_RUN = """
import gc, sys
import torch
import perfprof
handler = perfprof.tensorboard_trace_handler(sys.argv[1], worker_name="cpu", analyse_flag=False)
config = perfprof.ExperimentalConfig(mstx=True, data_simplification=False, host_sys=["cpu", "mem"],
                                     sample_interval_ms=5, gc_detect_threshold=0)
model = torch.nn.Sequential(torch.nn.Linear(16, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
with perfprof.profile(schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1), on_trace_ready=handler,
                      record_shapes=True, profile_memory=True, with_modules=True,
                      experimental_config=config) as prof:
    for step in range(3):
        with perfprof.mstx.mstx_range("step body", domain="train"):
            loss = model(torch.randn(4, 16)).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        perfprof.mstx.mark(f"step {step} done")
        gc.collect()
        prof.step()
"""

GPU_RUN = """
import perfprof
handler = perfprof.tensorboard_trace_handler(os.environ["TMP"] + "/runs", worker_name="gpu", analyse_flag=False)
config = perfprof.ExperimentalConfig(data_simplification=False, mstx=True)
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1),
                      on_trace_ready=handler, experimental_config=config) as prof:
    for step in range(3):
        with perfprof.record_function("train step"):
            kernel("gemm_kernel")
            range_id = perfprof.mstx.range_start("on stream", stream=7)
            kernel("relu_kernel", stream=7)
            perfprof.mstx.range_end(range_id)
            fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000)
            fake.fake_cupti_memset(4096, 0, 0, 1, 7, 5_000)
            fake.fake_cupti_synchronize(0, 1, 7, 10_000)
        prof.step()
print(json.dumps(dict(run_dir=handler.run_dirs[-1])))
"""


def capture_in(run_dir: Path) -> Path:
    (capture,) = run_dir.rglob("capture.ppcap")
    return capture


def cpu_capture(work: Path) -> Path:
    import subprocess

    subprocess.run([sys.executable, "-c", CPU_RUN, str(work)], check=True)
    return capture_in(work)


def gpu_capture(work: Path) -> Path:
    import fake_cupti

    return capture_in(Path(fake_cupti.run(GPU_RUN, work)["run_dir"]))


def main() -> None:
    CORPUS.mkdir(exist_ok=True)
    for name, make in (("cpu_ops.ppcap", cpu_capture), ("gpu.ppcap", gpu_capture)):
        with tempfile.TemporaryDirectory() as work:
            capture = make(Path(work))
            shutil.copyfile(capture, CORPUS / name)
            print(f"{CORPUS / name}: {capture.stat().st_size} bytes")


if __name__ == "__main__":
    main()
