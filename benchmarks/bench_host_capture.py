"""Added cost of host capture on a PyTorch training loop: perfprof beside torch.profiler and VizTracer.

    python benchmarks/bench_host_capture.py [--steps 200] [--rounds 5] [--no-viztracer]

Part 1 runs one small CPU training loop (MLP, SGD, torch.set_num_threads(1)) un-profiled, under
torch.profiler and under perfprof with matching options, in one process:
  ops            CPU activity only
  +shapes        record_shapes=True
  +stack         with_stack=True
  +modules       with_modules=True
The rounds interleave the variants so drift hits all alike, and alternate which profiler runs
first; each figure is the median over the rounds of the time per step minus the un-profiled time
per step, divided by the number of aten operators per step (counted from torch.profiler's
events). Ratio = torch / perfprof (> 1: perfprof adds less).

Part 2 compares Python call tracing with VizTracer (``pip install viztracer``) on a function-call
heavy workload (recursive calls, no torch): added ns per Python call, VizTracer / perfprof.
"""
from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from typing import Callable, Dict, List

import torch
from torch import nn

import perfprof

OPTION_SETS: Dict[str, Dict[str, bool]] = {
    "ops": {},
    "+shapes": {"record_shapes": True},
    "+stack": {"with_stack": True},
    "+modules": {"with_modules": True},
}


def make_training_step() -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(8, 64), torch.randint(0, 10, (8,))

    def step() -> None:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def seconds_per_step(step: Callable[[], None], steps: int) -> float:
    gc.collect()
    start = time.perf_counter()
    for _ in range(steps):
        step()
    return (time.perf_counter() - start) / steps


def under_torch(step: Callable[[], None], steps: int, options: Dict[str, bool]) -> float:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], **options):
        return seconds_per_step(step, steps)


def under_perfprof(step: Callable[[], None], steps: int, options: Dict[str, bool]) -> float:
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], **options):
        return seconds_per_step(step, steps)


def aten_ops_per_step(step: Callable[[], None]) -> int:
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        step()
    return sum(1 for event in prof.events() if event.name.startswith("aten::"))


def training_loop_overhead(steps: int, rounds: int) -> None:
    torch.set_num_threads(1)
    step = make_training_step()
    for _ in range(50):
        step()
    ops = aten_ops_per_step(step)
    samples: Dict[str, List[float]] = {"base": []}
    profilers = [("torch", under_torch), ("perfprof", under_perfprof)]
    for round_index in range(rounds):
        samples["base"].append(seconds_per_step(step, steps))
        for name, options in OPTION_SETS.items():
            # Who runs first alternates: the second run inherits the heap the first one left.
            for profiler, run in profilers[::1 if round_index % 2 == 0 else -1]:
                samples.setdefault(f"{profiler} {name}", []).append(run(step, steps, options))
    base = statistics.median(samples["base"])
    print(f"training loop: {ops} aten ops/step, un-profiled {base * 1e6:.1f} us/step "
          f"(median of {rounds} rounds x {steps} steps)")
    print(f"{'options':<10} {'torch.profiler':>16} {'perfprof':>12} {'ratio':>8}")
    for name in OPTION_SETS:
        torch_added = (statistics.median(samples[f"torch {name}"]) - base) / ops * 1e6
        ours_added = (statistics.median(samples[f"perfprof {name}"]) - base) / ops * 1e6
        ratio = torch_added / ours_added if ours_added > 0 else float("inf")
        print(f"{name:<10} {torch_added:>11.3f} us/op {ours_added:>7.3f} us/op {ratio:>7.2f}x")


def call_heavy(n: int) -> int:
    return n if n < 2 else call_heavy(n - 1) + call_heavy(n - 2)


CALLS = 21891  # Python calls made by call_heavy(20)


def seconds_for_calls() -> float:
    gc.collect()
    start = time.perf_counter()
    call_heavy(20)
    return time.perf_counter() - start


def python_tracing_overhead(rounds: int) -> None:
    try:
        from viztracer import VizTracer
    except ImportError:
        print("viztracer is not installed (pip install viztracer): Python tracing comparison skipped")
        return
    samples: Dict[str, List[float]] = {"base": [], "viztracer": [], "perfprof": []}
    for _ in range(rounds * 4):
        samples["base"].append(seconds_for_calls())
        tracer = VizTracer(verbose=0, tracer_entries=2_000_000)
        tracer.start()
        samples["viztracer"].append(seconds_for_calls())
        tracer.stop()
        tracer.clear()
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True):
            samples["perfprof"].append(seconds_for_calls())
    base = statistics.median(samples["base"])
    viz = (statistics.median(samples["viztracer"]) - base) / CALLS * 1e9
    ours = (statistics.median(samples["perfprof"]) - base) / CALLS * 1e9
    print(f"python calls: un-profiled {base / CALLS * 1e9:.0f} ns/call; added: VizTracer {viz:.0f} ns/call, "
          f"perfprof with_stack {ours:.0f} ns/call, ratio {viz / ours:.2f}x")


def main(argv: List[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--no-viztracer", action="store_true")
    args = parser.parse_args(argv)
    print(f"torch {torch.__version__}, perfprof {perfprof.__version__}, Python {sys.version.split()[0]}")
    training_loop_overhead(args.steps, args.rounds)
    if not args.no_viztracer:
        python_tracing_overhead(args.rounds)


if __name__ == "__main__":
    main(sys.argv[1:])
