"""Chrome trace export throughput: a 1M-event trace to .json and .json.gz, beside torch.profiler.

    python benchmarks/bench_export.py [--events 1000000] [--torch-events 200000]

The perfprof trace is recorded through the public API by 16 threads: 60% ranges (mstx ranges
and record_function), 20% mstx marks (instant events), 20% counter samples. Export is timed
on one thread, best of --repeats, and reported as events/s and bytes/event. torch.profiler
records --torch-events record_function ranges on one thread (its collection is too slow for
1M in a benchmark) and its export_chrome_trace is timed once (torch.profiler saves a trace only once).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
import warnings
from typing import Callable, List, Tuple

import perfprof
from perfprof import _core

THREADS = 16


def record_mixed_trace(total_events: int) -> Tuple[perfprof.profile, float]:
    """Returns the stopped profiler and the seconds its stop() took (building the trace)."""
    per_thread = total_events // THREADS

    def work(index: int) -> None:
        start, end, mark = perfprof.mstx.range_start, perfprof.mstx.range_end, perfprof.mstx.mark
        counter = _core.record_counter
        names = [f"layer{i % 64}" for i in range(32)]
        written = 0
        i = 0
        while written < per_thread:
            name = names[i % 32]
            if i % 5 == 0:
                mark(f"iteration {i}")
            elif i % 5 == 1:
                counter("queue depth", float(i % 17))
            elif i % 2:
                end(start(name))
            else:
                with perfprof.record_function(name):
                    pass
            written += 1
            i += 1

    prof = perfprof.profile(experimental_config=perfprof.ExperimentalConfig(mstx=True))
    prof.start()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    start = time.perf_counter()
    prof.stop()
    return prof, time.perf_counter() - start


def record_torch_trace(ranges: int):
    import torch.profiler

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for i in range(ranges):
                with torch.profiler.record_function(f"layer{i % 64}"):
                    pass
    return prof


def best_time(export: Callable[[str], object], path: str, repeats: int) -> Tuple[float, int]:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        export(path)
        best = min(best, time.perf_counter() - start)
    return best, os.path.getsize(path)


def count_events(path: str) -> int:
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as file:
        return sum(1 for e in json.load(file)["traceEvents"] if e["ph"] != "M")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--torch-events", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    rows: List[Tuple[str, int, float, int]] = []
    with tempfile.TemporaryDirectory() as folder:
        prof, stop_seconds = record_mixed_trace(args.events)
        for suffix in (".json", ".json.gz"):
            path = os.path.join(folder, "perfprof" + suffix)
            seconds, size = best_time(prof.export_chrome_trace, path, args.repeats)
            rows.append((f"perfprof {suffix}", count_events(path), seconds, size))
        for suffix in (".json", ".json.gz"):
            # torch.profiler saves a trace once only: a fresh one per format, timed once.
            torch_prof = record_torch_trace(args.torch_events)
            path = os.path.join(folder, "torch" + suffix)
            seconds, size = best_time(torch_prof.export_chrome_trace, path, 1)
            rows.append((f"torch.profiler {suffix}", count_events(path), seconds, size))

    print(f"{'exporter':24} {'events':>9} {'seconds':>8} {'Mevents/s':>10} {'bytes/event':>12}")
    for name, events, seconds, size in rows:
        print(f"{name:24} {events:9d} {seconds:8.3f} {events / seconds / 1e6:10.2f} {size / events:12.1f}")
    print(f"perfprof stop() building the {args.events}-event trace model: {stop_seconds:.3f} s")
    rates = {name: events / seconds for name, events, seconds, _ in rows}
    for suffix in (".json", ".json.gz"):
        ratio = rates[f"perfprof {suffix}"] / rates[f"torch.profiler {suffix}"]
        print(f"perfprof / torch.profiler events/s, {suffix}: {ratio:.1f}x")


if __name__ == "__main__":
    main()
