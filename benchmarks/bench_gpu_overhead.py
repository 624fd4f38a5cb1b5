"""Step-time overhead of GPU profiling: perfprof beside torch.profiler, in one process.

    python benchmarks/bench_gpu_overhead.py [--steps 50] [--kernels 200]

Each step launches --kernels small elementwise kernels (the case where per-launch profiling cost
dominates) and synchronises. The loop runs unprofiled, under torch.profiler and under perfprof,
both with activities CPU + CUDA (perfprof: CUPTI kernels, copies, runtime API; torch.profiler:
the same plus its operator events), after warm-up steps. Reports the median step time and each
profiler's added overhead per step, and the ratio. Needs a CUDA GPU; exits with a message
otherwise.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from typing import Callable, List


def step_times(run_step: Callable[[], None], steps: int, on_step: Callable[[], None] = lambda: None) -> List[float]:
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        run_step()
        times.append(time.perf_counter() - start)
        on_step()
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--kernels", type=int, default=200)
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        print("bench_gpu_overhead: no CUDA device; nothing measured")
        return 0
    import perfprof

    x = torch.randn(1024, device="cuda")

    def run_step() -> None:
        for _ in range(args.kernels):
            x.add_(1.0)
        torch.cuda.synchronize()

    for _ in range(10):
        run_step()
    baseline = statistics.median(step_times(run_step, args.steps))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        with torch.profiler.profile(activities=activities,
                                    schedule=torch.profiler.schedule(wait=0, warmup=2, active=args.steps)) as prof:
            torch_times = step_times(run_step, args.steps + 2, prof.step)[2:]

    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                          schedule=perfprof.schedule(wait=0, warmup=2, active=args.steps)) as prof:
        perfprof_times = step_times(run_step, args.steps + 2, prof.step)[2:]
    kernels = sum(1 for a in prof.trace.gpu_activities() if a["kind"] == "kernel")

    torch_step, perfprof_step = statistics.median(torch_times), statistics.median(perfprof_times)
    print(f"device: {torch.cuda.get_device_name()}  kernels per step: {args.kernels}  steps: {args.steps}")
    print(f"perfprof recorded {kernels} kernels")
    print(f"{'run':16} {'step ms':>9} {'added ms':>9} {'added us/kernel':>16}")
    for name, value in (("unprofiled", baseline), ("torch.profiler", torch_step), ("perfprof", perfprof_step)):
        added = value - baseline
        print(f"{name:16} {value * 1e3:9.3f} {added * 1e3:9.3f} {added * 1e6 / args.kernels:16.2f}")
    ratio = (perfprof_step - baseline) / max(torch_step - baseline, 1e-9)
    print(f"perfprof added overhead / torch.profiler added overhead: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
