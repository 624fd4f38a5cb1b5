"""Memory while recording a long window: with the run directory's capture (bounded buffer) and
without (everything held until stop), side by side.

    python benchmarks/bench_capture_memory.py [--events 20000000] [--cap-mb 256]

Each mode runs in a fresh process that records --events host events (mstx ranges: two events
each) in one window on one thread, then stops and writes the Chrome trace; a thread samples the
process's RSS every 20 ms. Modes:
  capture   tensorboard_trace_handler run directory: the capture is written while recording,
            events beyond half of --cap-mb go to it at once (ExperimentalConfig.capture_buffer_mb)
  memory    no run directory: every event stays in memory until stop (export_chrome_trace after)
Printed per mode: RSS before recording, peak RSS while recording and at stop + export, the
capture's size, and the seconds stop() and the export took.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from typing import Dict

CHILD = r"""
import json, os, sys, tempfile, threading, time
import perfprof

events, cap_mb, mode, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
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
begin = time.perf_counter()
prof.stop()
stop_s = time.perf_counter() - begin
begin = time.perf_counter()
prof.export_chrome_trace(os.path.join(out, "trace.json"))
export_s = time.perf_counter() - begin
done.set()
sampler.join()
peaks[phase["name"]] = max(peaks[phase["name"]], rss())
captures = [os.path.join(root, name) for root, _, names in os.walk(out) for name in names if name.endswith(".ppcap")]
print(json.dumps(dict(peaks=peaks, stop_s=stop_s, export_s=export_s,
                      capture_bytes=sum(os.path.getsize(path) for path in captures))))
"""


def run(mode: str, events: int, cap_mb: int) -> Dict[str, object]:
    with tempfile.TemporaryDirectory() as out:
        result = subprocess.run([sys.executable, "-c", CHILD, str(events), str(cap_mb), mode, out],
                                capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000_000)
    parser.add_argument("--cap-mb", type=int, default=256)
    args = parser.parse_args()
    mib = 1 << 20
    print(f"{args.events:,} events (mstx ranges), capture_buffer_mb={args.cap_mb}, {os.cpu_count()} CPUs")
    print(f"{'mode':<8} {'RSS before':>11} {'recording':>11} {'stop+export':>12} {'capture':>10} {'stop':>8} {'export':>8}")
    for mode in ("capture", "memory"):
        r = run(mode, args.events, args.cap_mb)
        peaks = r["peaks"]
        print(f"{mode:<8} {peaks['before'] / mib:>8.0f} MiB {peaks['recording'] / mib:>7.0f} MiB "
              f"{peaks['stop+export'] / mib:>8.0f} MiB {r['capture_bytes'] / mib:>6.0f} MiB "
              f"{r['stop_s']:>7.2f}s {r['export_s']:>7.2f}s")


if __name__ == "__main__":
    main()
