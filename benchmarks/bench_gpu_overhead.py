"""Step-time overhead of GPU profiling: perfprof beside torch.profiler, in one process.

    python benchmarks/bench_gpu_overhead.py [--steps 50] [--kernels 200]

Each step launches --kernels small elementwise kernels (the case where per-launch profiling cost
dominates) and synchronises. The loop runs unprofiled, under torch.profiler and under perfprof,
both with activities CPU + CUDA (perfprof: CUPTI kernels, copies, runtime API; torch.profiler:
the same plus its operator events), after warm-up steps, with activities only, with
record_shapes and with profile_memory; then perfprof measuring every kernel's PipeUtilization
metrics (its cost: CUPTI serialises and measures the kernels). Reports the median step time, each
profiler's added time per kernel and the ratio. Needs a CUDA GPU; exits with a message otherwise.
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

    def torch_profiler(**options):
        activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        return torch.profiler.profile(activities=activities, **options,
                                      schedule=torch.profiler.schedule(wait=0, warmup=2, active=args.steps))

    def perfprof_profiler(**options):
        return perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA], **options,
                                schedule=perfprof.schedule(wait=0, warmup=2, active=args.steps))

    def profiled(profiler) -> float:
        """The median step time under `profiler` (its warm-up steps left out)."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with profiler as prof:
                return statistics.median(step_times(run_step, args.steps + 2, prof.step)[2:])

    # Each option set under both profilers, in one process, one after the other.
    option_sets = {"activities only": {}, "+ record_shapes": {"record_shapes": True},
                   "+ profile_memory": {"profile_memory": True}}
    times = {name: (profiled(torch_profiler(**options)), profiled(perfprof_profiler(**options)))
             for name, options in option_sets.items()}
    metrics_config = perfprof.ExperimentalConfig(gpu_metrics=perfprof.GpuMetrics.PipeUtilization)
    with_metrics = profiled(perfprof_profiler(experimental_config=metrics_config))

    print(f"device: {torch.cuda.get_device_name()}  torch {torch.__version__}  kernels per step: {args.kernels}  "
          f"steps: {args.steps}")
    print(f"unprofiled step: {baseline * 1e3:.3f} ms")
    print(f"{'options':18} {'torch ms':>9} {'perfprof ms':>12} {'torch added us/kernel':>22} "
          f"{'perfprof added us/kernel':>25} {'ratio':>6}")
    for name, (torch_step, perfprof_step) in times.items():
        torch_added, perfprof_added = torch_step - baseline, perfprof_step - baseline
        print(f"{name:18} {torch_step * 1e3:9.3f} {perfprof_step * 1e3:12.3f} "
              f"{torch_added * 1e6 / args.kernels:22.2f} {perfprof_added * 1e6 / args.kernels:25.2f} "
              f"{perfprof_added / max(torch_added, 1e-9):6.2f}")
    print(f"perfprof with gpu_metrics=PipeUtilization: {with_metrics * 1e3:.3f} ms a step "
          f"({with_metrics / max(times['activities only'][1], 1e-9):.2f}x perfprof's step without metrics)")
    print("ratio: perfprof's added overhead / torch.profiler's (the goal is 0.5 or less)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
