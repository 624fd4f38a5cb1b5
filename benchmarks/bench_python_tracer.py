"""Added cost per call of perfprof's with_stack tracing, on the running Python (no torch).

    python benchmarks/bench_python_tracer.py [--depth 22] [--rounds 5]

Times a recursive function (Python calls) and a loop of built-in method calls un-profiled and
under perfprof.profile(with_stack=True) (best of the rounds each) and prints the added
nanoseconds per call. Python 3.12+ uses sys.monitoring, older versions the profile hook; run it
under each interpreter to compare. bench_host_capture.py compares with VizTracer.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, List, Tuple

import perfprof


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def calls_of(depth: int) -> int:
    return 1 if depth < 2 else 1 + calls_of(depth - 1) + calls_of(depth - 2)


def appends(calls: int) -> None:
    items: List[int] = []
    for i in range(calls):
        items.append(i)


def best_seconds(work: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def added_ns_per_call(work: Callable[[], object], calls: int, rounds: int) -> Tuple[float, float]:
    """(un-profiled, added by with_stack) nanoseconds per call."""
    plain = best_seconds(work, rounds)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True):
        traced = best_seconds(work, rounds)
    return plain / calls * 1e9, (traced - plain) / calls * 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=22)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    mechanism = "sys.monitoring" if sys.version_info >= (3, 12) else "profile hook"
    print(f"Python {sys.version.split()[0]} ({mechanism})")
    calls = calls_of(args.depth)
    plain, added = added_ns_per_call(lambda: fib(args.depth), calls, args.rounds)
    print(f"  Python calls ({calls} per round): un-profiled {plain:.0f} ns/call, "
          f"added by with_stack {added:.0f} ns/call")
    plain, added = added_ns_per_call(lambda: appends(calls), calls, args.rounds)
    print(f"  built-in calls ({calls} per round): un-profiled {plain:.0f} ns/call, added by with_stack "
          f"{added:.0f} ns/call")


if __name__ == "__main__":
    main()
