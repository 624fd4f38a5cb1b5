"""The telemetry sampler's cost, beside a psutil sampler thread reading the same counters.

    python benchmarks/bench_telemetry.py [--seconds 10] [--interval-ms 20]

Each side samples the host's CPUs (per CPU and in all), memory (used, available, this process's
RSS), disks and network interfaces every --interval-ms for --seconds, in a fresh process whose
main thread sleeps, and reports the CPU time its sampling thread used as a percentage of one core
(perfprof's from the sampler thread's own clock, psutil's from time.thread_time() in its thread),
the samples taken, and how long stop took (perfprof: telemetry_stop, which takes a last sample
and joins the thread). psutil is what Python tools commonly sample these counters with
(W&B's and MLflow's system metrics).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys

PERFPROF = r"""
import json, sys, time
from perfprof import _core
seconds, interval_ns = float(sys.argv[1]), int(sys.argv[2])
_core.set_channels(_core.CHANNEL_COUNTERS)
messages = _core.telemetry_start(interval_ns, ["cpu", "mem", "disk", "network"], False, False, False, "")
assert not messages, messages
time.sleep(seconds)
stop_began = time.perf_counter()
report = _core.telemetry_stop()
stop_s = time.perf_counter() - stop_began
_core.set_channels(0)
_core.discard()
print(json.dumps({"cpu_s": report["cpu_ns"] / 1e9, "wall_s": report["wall_ns"] / 1e9, "samples": report["samples"],
                  "readings": report["readings"], "late": report["late_samples"], "stop_ms": stop_s * 1e3}))
"""

PSUTIL = r"""
import json, sys, threading, time
import psutil
seconds, interval = float(sys.argv[1]), int(sys.argv[2]) / 1e9
process = psutil.Process()
stopping = threading.Event()
result = {}

def sample():
    readings = 0
    samples = 0
    began = time.perf_counter()
    next_slot = began
    while True:
        readings += len(psutil.cpu_percent(percpu=True)) + 1
        psutil.cpu_percent()
        psutil.virtual_memory()  # used, available
        process.memory_info()  # RSS
        process.cpu_times()  # the process's CPU usage
        readings += 4
        readings += 2 * len(psutil.disk_io_counters(perdisk=True))
        readings += 2 * len(psutil.net_io_counters(pernic=True))
        samples += 1
        next_slot += interval
        if stopping.wait(max(0.0, next_slot - time.perf_counter())):
            break
    result.update(cpu_s=time.thread_time(), wall_s=time.perf_counter() - began, samples=samples, readings=readings)

thread = threading.Thread(target=sample)
thread.start()
time.sleep(seconds)
stop_began = time.perf_counter()
stopping.set()
thread.join()
result["stop_ms"] = (time.perf_counter() - stop_began) * 1e3
result["late"] = 0
print(json.dumps(result))
"""


def run(code: str, seconds: float, interval_ns: int) -> dict:
    output = subprocess.run([sys.executable, "-c", code, str(seconds), str(interval_ns)], capture_output=True,
                            text=True, check=True, timeout=seconds * 4 + 60)
    return json.loads(output.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--interval-ms", type=float, default=20.0)
    args = parser.parse_args()
    interval_ns = round(args.interval_ms * 1e6)
    results = {"perfprof": run(PERFPROF, args.seconds, interval_ns), "psutil": run(PSUTIL, args.seconds, interval_ns)}
    print(f"{args.seconds:g} s at {args.interval_ms:g} ms, host groups cpu, mem, disk, network")
    print(f"{'sampler':<10} {'% of a core':>12} {'us/sample':>10} "
          f"{'samples':>8} {'readings':>9} {'late':>5} {'stop ms':>8}")
    for name, r in results.items():
        print(f"{name:<10} {100 * r['cpu_s'] / r['wall_s']:>12.3f} {1e6 * r['cpu_s'] / r['samples']:>10.1f} "
              f"{r['samples']:>8} {r['readings']:>9} {r['late']:>5} {r['stop_ms']:>8.2f}")
    ratio = (results["psutil"]["cpu_s"] / results["psutil"]["samples"]) / (
        results["perfprof"]["cpu_s"] / results["perfprof"]["samples"])
    print(f"CPU per sample, psutil / perfprof: {ratio:.1f}x")


if __name__ == "__main__":
    main()
