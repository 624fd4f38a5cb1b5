"""Timing shared by the micro-benchmarks: the best time per iteration of a loop."""
from __future__ import annotations

import gc
import time
from typing import Callable


def best_ns_per_iteration(loop: Callable[[int], None], iterations: int, repeats: int) -> float:
    """The best nanoseconds per iteration of `loop(iterations)` over `repeats` runs, with the
    garbage collector off during each run (a collection would land in one run at random)."""
    best = float("inf")
    for _ in range(repeats):
        gc.collect()
        gc.disable()
        start = time.perf_counter_ns()
        loop(iterations)
        elapsed = time.perf_counter_ns() - start
        gc.enable()
        best = min(best, elapsed / iterations)
    return best
