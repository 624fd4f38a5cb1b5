"""Soak: memory over a long run recording more than a million events a second, perfprof beside
torch.profiler.

    python benchmarks/bench_soak.py [--minutes 10] [--torch-minutes 1] [--modes window,cycles,torch]
                                    [--limit-mb 128]

Each mode runs in a fresh process for --minutes, recording steps of mstx ranges (two events each)
as fast as one thread can, while a thread samples the process's RSS every second. Printed per
mode and minute: the events recorded per second and the highest RSS of that minute.
  window   perfprof, one active window the whole run, with a run directory (the capture is
           written while recording) and ExperimentalConfig(record_limit_mb=--limit-mb): memory
           must stay flat once the limit is reached, the rest being dropped and counted
  cycles   perfprof, back-to-back cycles of 50 steps (wait=0, warmup=0, repeat=0), each trace
           built and replaced by the next: memory must not grow from cycle to cycle
  torch    torch.profiler, one window, torch.profiler.record_function ranges (mstx ranges are
           perfprof's): what holding every event does, at torch's own rate, for --torch-minutes
           (its memory grows about 9 GB a minute: ten would not fit)
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from typing import Dict, List

CHILD = r"""
import json, os, sys, tempfile, threading, time

mode, seconds, limit_mb, out = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
page = os.sysconf("SC_PAGE_SIZE")
RANGES_PER_STEP = 20_000
samples = []  # (seconds since start, RSS bytes, events so far)
events = [0]
start = time.perf_counter()
finished = threading.Event()

def rss():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * page

def sample():
    while not finished.wait(1.0):
        samples.append((time.perf_counter() - start, rss(), events[0]))

if mode == "torch":
    import torch
    from torch.profiler import profile, ProfilerActivity, record_function
    profiler = profile(activities=[ProfilerActivity.CPU])
    def one_range():
        with record_function("r"):
            pass
    step = profiler.step
else:
    import perfprof
    from perfprof import mstx
    config = perfprof.ExperimentalConfig(mstx=True, record_limit_mb=limit_mb)
    if mode == "window":
        profiler = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                                    schedule=perfprof.schedule(wait=0, warmup=0, active=10**9, repeat=1),
                                    on_trace_ready=perfprof.tensorboard_trace_handler(out))
    else:
        profiler = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                                    schedule=perfprof.schedule(wait=0, warmup=0, active=50, repeat=0))
    range_start, range_end = mstx.range_start, mstx.range_end
    def one_range():
        range_end(range_start("r"))
    step = profiler.step

sampler = threading.Thread(target=sample, daemon=True)
profiler.start()
sampler.start()
while time.perf_counter() - start < seconds:
    for _ in range(RANGES_PER_STEP):
        one_range()
    events[0] += 2 * RANGES_PER_STEP + 2
    step()
stop_begin = time.perf_counter()
profiler.stop()
finished.set()
sampler.join()
dropped = getattr(getattr(profiler, "trace", None), "stats", {}).get("dropped_events") if mode != "torch" else None
print(json.dumps({"samples": samples, "stop_s": time.perf_counter() - stop_begin, "rss_after_stop": rss(),
                  "dropped": dropped}))
"""


def run_mode(mode: str, minutes: float, limit_mb: int) -> Dict:
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run([sys.executable, "-c", CHILD, mode, str(minutes * 60), str(limit_mb), out],
                                capture_output=True, text=True, check=True)
    return json.loads(result.stdout.splitlines()[-1])


def per_minute(samples: List[List[float]]) -> List[Dict]:
    rows, previous_events, previous_time = [], 0, 0.0
    for minute in range(int(samples[-1][0] // 60) + 1):
        inside = [s for s in samples if minute * 60 <= s[0] < (minute + 1) * 60]
        if not inside:
            continue
        last_time, _, last_events = inside[-1]
        rows.append({"minute": minute + 1,
                     "events_per_s": (last_events - previous_events) / (last_time - previous_time),
                     "peak_rss_mib": max(s[1] for s in inside) / 2**20})
        previous_events, previous_time = last_events, last_time
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--torch-minutes", type=float, default=1.0)
    parser.add_argument("--modes", default="window,cycles,torch")
    parser.add_argument("--limit-mb", type=int, default=128, help="record_limit_mb of the perfprof modes")
    args = parser.parse_args()
    for mode in args.modes.split(","):
        result = run_mode(mode, args.torch_minutes if mode == "torch" else args.minutes, args.limit_mb)
        rows = per_minute(result["samples"])
        print(f"\n{mode}: stop {result['stop_s']:.1f} s, RSS after stop {result['rss_after_stop'] / 2**20:.0f} MiB"
              + (f", {result['dropped']} events dropped at the limit" if result["dropped"] is not None else ""))
        print("| minute | events/s | peak RSS |\n| ---: | ---: | ---: |")
        for row in rows:
            print(f"| {row['minute']} | {row['events_per_s'] / 1e6:.2f}M | {row['peak_rss_mib']:.0f} MiB |")


if __name__ == "__main__":
    main()
