"""Two builds of perfprof side by side: recording cost per event and Chrome export throughput.

    python benchmarks/bench_builds.py BASE_PYTHON_DIR NEW_PYTHON_DIR [--rounds 5]

Each PYTHON_DIR holds a `perfprof` package with its built `_core` (a checkout's `python/` after a
development build). Rounds alternate which build runs first; each figure runs in a fresh process
and is the median over the rounds:
  mstx range     ns per perfprof.mstx.range_start + range_end pair while recording (best of 5
                 runs of 200,000 pairs, minus the empty loop)
  record_function ns per `with perfprof.record_function(...)` while recording (same)
  export         Chrome-trace export of 1M events (16 threads: ranges, marks, counters), M events/s
The ratio is new / base for every figure: for the two costs below 1 means the new build records
cheaper; for the export rate above 1 means it exports faster.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Dict, List

CHILD = r"""
import gc, json, os, sys, tempfile, threading, time
import perfprof

def per_pair(body, pairs=200_000, repeats=5):
    def best(loop):
        fastest = float("inf")
        for _ in range(repeats):
            gc.collect(); gc.disable()
            start = time.perf_counter_ns(); loop(pairs); elapsed = time.perf_counter_ns() - start
            gc.enable()
            fastest = min(fastest, elapsed)
        return fastest / pairs
    def empty(n):
        for _ in range(n):
            pass
    return best(body) - best(empty)

def mstx_pairs(n):
    start, end = perfprof.mstx.range_start, perfprof.mstx.range_end
    for _ in range(n):
        end(start("r"))

def record_function_pairs(n):
    rf = perfprof.record_function
    for _ in range(n):
        with rf("r"):
            pass

config = perfprof.ExperimentalConfig(mstx=True)
with perfprof.profile(experimental_config=config):
    mstx_ns = per_pair(mstx_pairs)
    record_function_ns = per_pair(record_function_pairs)

def record(events_per_thread):
    for i in range(events_per_thread // 5):
        with perfprof.record_function("range"):
            perfprof.mstx.mark("mark")
        perfprof.mstx.range_end(perfprof.mstx.range_start("mstx"))
        perfprof.mstx.mark("counter-like mark")

prof = perfprof.profile(experimental_config=config)
prof.start()
threads = [threading.Thread(target=record, args=(1_000_000 // 16,)) for _ in range(16)]
for t in threads: t.start()
for t in threads: t.join()
prof.stop()
events = prof.trace.num_ranges * 2 + prof.trace.num_instants + prof.trace.num_counters
with tempfile.TemporaryDirectory() as out:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        prof.export_chrome_trace(os.path.join(out, "t.json"))
        best = min(best, time.perf_counter() - start)
print(json.dumps({"mstx range": mstx_ns, "record_function": record_function_ns, "export": events / best / 1e6}))
"""

UNITS = {"mstx range": "ns", "record_function": "ns", "export": "M events/s"}


def measure(python_dir: str) -> Dict[str, float]:
    env = dict(os.environ, PYTHONPATH=python_dir)
    result = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", help="python/ directory of the base build")
    parser.add_argument("new", help="python/ directory of the new build")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    runs: Dict[str, List[Dict[str, float]]] = {"base": [], "new": []}
    for round_ in range(args.rounds):
        order = ("base", "new") if round_ % 2 == 0 else ("new", "base")
        for name in order:
            runs[name].append(measure(getattr(args, name)))
    print(f"medians of {args.rounds} rounds, alternating; {os.cpu_count()} CPUs")
    print(f"{'figure':<16} {'base':>14} {'new':>14} {'new / base':>11}")
    for figure, unit in UNITS.items():
        base = statistics.median(r[figure] for r in runs["base"])
        new = statistics.median(r[figure] for r in runs["new"])
        print(f"{figure:<16} {base:>9.1f} {unit:<4} {new:>9.1f} {unit:<4} {new / base:>10.2f}x")


if __name__ == "__main__":
    main()
