"""Cost of annotating code from Python, perfprof beside torch.profiler, in one process.

    python benchmarks/bench_annotations.py [--pairs 200000] [--repeats 5]

Measures, while each profiler is recording, the cost of one begin+end pair of:
  perfprof.mstx.range_start / range_end          (ExperimentalConfig(mstx=True))
  perfprof.record_function enter / exit          (with-statement)
  torch.profiler.record_function enter / exit    (under torch.profiler.profile, CPU activity)
and the same perfprof calls when no profiler runs. Each figure is the best of --repeats runs of
--pairs pairs, minus the cost of the same loop with an empty body; ratios are torch / perfprof.
"""
from __future__ import annotations

import argparse
import warnings
from typing import Callable, Dict

from _timing import best_ns_per_iteration
import perfprof


def empty_loop(n: int) -> None:
    for _ in range(n):
        pass


def mstx_loop(n: int) -> None:
    start, end = perfprof.mstx.range_start, perfprof.mstx.range_end
    for _ in range(n):
        end(start("step"))


def perfprof_record_function_loop(n: int) -> None:
    record_function = perfprof.record_function
    for _ in range(n):
        with record_function("step"):
            pass


def torch_record_function_loop(n: int) -> None:
    import torch.profiler

    record_function = torch.profiler.record_function
    for _ in range(n):
        with record_function("step"):
            pass


def measure(pairs: int, repeats: int) -> Dict[str, float]:
    import torch.profiler

    results: Dict[str, float] = {}
    loop_cost = best_ns_per_iteration(empty_loop, pairs, repeats)

    def added_ns(loop: Callable[[int], None]) -> float:
        return best_ns_per_iteration(loop, pairs, repeats) - loop_cost

    results["perfprof mstx pair, idle"] = added_ns(mstx_loop)
    results["perfprof record_function, idle"] = added_ns(perfprof_record_function_loop)
    config = perfprof.ExperimentalConfig(mstx=True)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config):
        results["perfprof mstx pair"] = added_ns(mstx_loop)
        results["perfprof record_function"] = added_ns(perfprof_record_function_loop)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            results["torch record_function"] = added_ns(torch_record_function_loop)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    results = measure(args.pairs, args.repeats)
    torch_cost = results["torch record_function"]
    print(f"{'annotation (begin + end)':36} {'ns/pair':>10} {'torch/this':>11}")
    for name, cost in results.items():
        print(f"{name:36} {cost:10.0f} {torch_cost / cost:10.1f}x")


if __name__ == "__main__":
    main()
