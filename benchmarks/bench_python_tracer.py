"""Added cost per Python call of perfprof's with_stack tracing, on the running Python (no torch).

    python benchmarks/bench_python_tracer.py [--depth 22] [--rounds 5]

Times a recursive function un-profiled and under perfprof.profile(with_stack=True) (best of the
rounds each) and prints the added nanoseconds per call. Python 3.12+ uses sys.monitoring, older
versions the profile hook; run it under each interpreter to compare. bench_host_capture.py
compares with VizTracer.
"""
from __future__ import annotations

import argparse
import sys
import time

import perfprof


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def calls_of(depth: int) -> int:
    return 1 if depth < 2 else 1 + calls_of(depth - 1) + calls_of(depth - 2)


def best_seconds(depth: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        fib(depth)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=22)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    calls = calls_of(args.depth)
    plain = best_seconds(args.depth, args.rounds)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True):
        traced = best_seconds(args.depth, args.rounds)
    mechanism = "sys.monitoring" if sys.version_info >= (3, 12) else "profile hook"
    print(f"Python {sys.version.split()[0]} ({mechanism}), {calls} calls per round: un-profiled "
          f"{plain / calls * 1e9:.0f} ns/call, added by with_stack {(traced - plain) / calls * 1e9:.0f} ns/call")


if __name__ == "__main__":
    main()
