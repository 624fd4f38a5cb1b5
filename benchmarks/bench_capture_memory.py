"""Memory while recording a long window: with the run directory's capture (bounded buffer) and
without (everything held until stop), side by side.

    python benchmarks/bench_capture_memory.py [--events 20000000] [--cap-mb 256] [--cpu N] [--runs 1]

Each mode runs in a fresh process that records --events host events (mstx ranges: two events
each) in one window on one thread, then stops and writes the Chrome trace; a thread samples the
process's RSS every 20 ms. With --cpu the process (all its threads) runs on that CPU alone. With
--runs the modes alternate and each figure is the median of the runs. Modes:
  capture   tensorboard_trace_handler run directory: the capture is written while recording,
            events beyond half of --cap-mb go to it at once (ExperimentalConfig.capture_buffer_mb)
  memory    no run directory: every event stays in memory until stop (export_chrome_trace after)
Printed per mode: RSS before recording, peak RSS while recording and at stop + export, the
capture's size, the seconds stop() and the export took, and the CPU seconds (user + system) and
minor page faults of stop + export.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from typing import Dict, List

CHILD = r"""
import json, os, resource, sys, tempfile, threading, time

events, cap_mb, mode, out, cpu = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
if cpu >= 0:
    os.sched_setaffinity(0, {cpu})  # threads started from now on inherit it
import perfprof

page = os.sysconf("SC_PAGE_SIZE")

def rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * page

phase = {"name": "before"}
peaks = {"before": rss(), "recording": 0, "stop+export": 0}
done = threading.Event()

def sample() -> None:
    while not done.wait(0.02):
        peaks[phase["name"]] = max(peaks[phase["name"]], rss())

sampler = threading.Thread(target=sample, daemon=True)
sampler.start()
config = perfprof.ExperimentalConfig(mstx=True, capture_buffer_mb=cap_mb)
handler = perfprof.tensorboard_trace_handler(out, analyse_flag=False) if mode == "capture" else None
prof = perfprof.profile(on_trace_ready=handler, experimental_config=config)
prof.start()
phase["name"] = "recording"
range_start, range_end = perfprof.mstx.range_start, perfprof.mstx.range_end
for _ in range(events // 2):
    range_end(range_start("r"))
phase["name"] = "stop+export"
usage = resource.getrusage(resource.RUSAGE_SELF)
begin = time.perf_counter()
prof.stop()
stop_s = time.perf_counter() - begin
begin = time.perf_counter()
prof.export_chrome_trace(os.path.join(out, "trace.json"))
export_s = time.perf_counter() - begin
after = resource.getrusage(resource.RUSAGE_SELF)
done.set()
sampler.join()
peaks[phase["name"]] = max(peaks[phase["name"]], rss())
captures = [os.path.join(root, name) for root, _, names in os.walk(out) for name in names if name.endswith(".ppcap")]
print(json.dumps(dict(peaks=peaks, stop_s=stop_s, export_s=export_s,
                      cpu_s=after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime,
                      system_s=after.ru_stime - usage.ru_stime, faults=after.ru_minflt - usage.ru_minflt,
                      capture_bytes=sum(os.path.getsize(path) for path in captures))))
"""


def run(mode: str, events: int, cap_mb: int, cpu: int) -> Dict[str, float]:
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run([sys.executable, "-c", CHILD, str(events), str(cap_mb), mode, out, str(cpu)],
                                capture_output=True, text=True, check=True)
    r = json.loads(result.stdout.strip().splitlines()[-1])
    flat = {f"rss_{phase}": value for phase, value in r.pop("peaks").items()}
    return {**flat, **r}


def medians(runs: List[Dict[str, float]]) -> Dict[str, float]:
    return {key: statistics.median(run[key] for run in runs) for key in runs[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000_000)
    parser.add_argument("--cap-mb", type=int, default=256)
    parser.add_argument("--cpu", type=int, default=-1, help="run each measured process on this CPU only")
    parser.add_argument("--runs", type=int, default=1, help="runs per mode (alternating); medians printed")
    args = parser.parse_args()
    mib = 1 << 20
    where = f"on CPU {args.cpu} only" if args.cpu >= 0 else f"{os.cpu_count()} CPUs"
    print(f"{args.events:,} events (mstx ranges), capture_buffer_mb={args.cap_mb}, {where}, "
          f"median of {args.runs} run(s)")
    print(f"{'mode':<8} {'RSS before':>11} {'recording':>11} {'stop+export':>12} {'capture':>10} {'stop':>8} "
          f"{'export':>8} {'total':>8} {'CPU (sys)':>14} {'faults':>8}")
    modes = ("capture", "memory")
    runs: Dict[str, List[Dict[str, float]]] = {mode: [] for mode in modes}
    for _ in range(args.runs):
        for mode in modes:
            runs[mode].append(run(mode, args.events, args.cap_mb, args.cpu))
    for mode in modes:
        r = medians(runs[mode])
        totals = sorted(run["stop_s"] + run["export_s"] for run in runs[mode])
        spread = f"   totals {totals[0]:.2f}-{totals[-1]:.2f}s" if len(totals) > 1 else ""
        print(f"{mode:<8} {r['rss_before'] / mib:>8.0f} MiB {r['rss_recording'] / mib:>7.0f} MiB "
              f"{r['rss_stop+export'] / mib:>8.0f} MiB {r['capture_bytes'] / mib:>6.0f} MiB "
              f"{r['stop_s']:>7.2f}s {r['export_s']:>7.2f}s {statistics.median(totals):>7.2f}s "
              f"{r['cpu_s']:>6.2f}s ({r['system_s']:.2f}s) {r['faults'] / 1000:>7.0f}k{spread}")


if __name__ == "__main__":
    main()
