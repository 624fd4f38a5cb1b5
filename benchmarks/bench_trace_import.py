"""Importing a Chrome trace: perfprof's streaming importer beside HolisticTraceAnalysis loading
the same file, and perfprof alone on a large trace (peak memory against trace size).

    python benchmarks/bench_trace_import.py [--events 1000000] [--gigabytes 0] [--keep DIR]

The trace is written by this script in torch.profiler's Kineto layout (the keys, categories and
args torch 2.x writes; tests/python/data/kineto_gpu_nccl_rank1.pt.trace.json is a small one by
hand): per operator a `cpu_op` range with its input shapes and types, the `cudaLaunchKernel` it
makes, the kernel on one of two streams, and the `ac2g` flow's two ends; a ProfilerStep every
20,000 operators, an NCCL kernel every 64th operator. --events counts traceEvents entries (5.03
per operator). With --gigabytes N, a second trace of about N GB is written and perfprof alone
imports it (HTA would need several times the machine's memory).

Each side runs in a fresh process, timed from its start to its exit, its peak memory sampled
(resident set of the process tree, every 20 ms, psutil):
- perfprof, import: `_core.import_trace` (the streaming read and the trace model, nothing else);
- perfprof, import + database: what `perfprof summary trace.json` does before its queries
  (perfprof.analysis.open_run on the file: the import, then the run database in the cache);
- HTA: `TraceAnalysis(trace_dir)`, which parses the trace into pandas frames.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _process import Measured, measured  # noqa: E402

ENTRIES_PER_OPERATOR = 5 + 4 / 64  # range, launch, kernel, flow start and end; an NCCL kernel every 64th
OPERATORS_PER_STEP = 20_000
PID, TID = 4242, 4242

HEADER = """{
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
    "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
    "regsPerBlock": 65536, "warpSize": 32, "sharedMemPerBlock": 49152, "numSms": 132,
    "sharedMemPerBlockOptin": 232448, "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 233472}],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},
  "record_shapes": 1,
  "trace_id": "B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0B0",
  "displayTimeUnit": "ms",
  "baseTimeNanoseconds": 1700000000000000000,
  "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 4242, "tid": 0, "ts": 0, "args": {"name": "python3"}},
  {"ph": "M", "name": "process_labels", "pid": 4242, "tid": 0, "ts": 0, "args": {"labels": "CPU"}},
  {"ph": "M", "name": "thread_name", "pid": 4242, "tid": 4242, "ts": 0, "args": {"name": "thread 4242 (python3)"}}"""

FOOTER = """
  ],
  "traceName": "bench.pt.trace.json"
}
"""


def operator_entries(i: int, ts: float) -> str:
    """The trace entries of operator i, beginning at `ts` (µs): 5, or 9 with an NCCL kernel."""
    stream = 7 + i % 2
    duration = 2.0 + (i % 7) * 0.5
    text = (
        f',\n  {{"ph": "X", "cat": "cpu_op", "name": "aten::op_{i % 40}", "pid": {PID}, "tid": {TID}, '
        f'"ts": {ts:.3f}, "dur": 8.250, "args": {{"External id": {i + 1}, "Record function id": 0, '
        f'"Sequence number": {i}, "Fwd thread id": 0, "Input Dims": [[64, 128], [128]], '
        f'"Input type": ["float", "float"], "Input Strides": [[128, 1], [1]], "Concrete Inputs": ["", ""], '
        f'"Ev Idx": {i}}}}}'
        f',\n  {{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {PID}, "tid": {TID}, '
        f'"ts": {ts + 1:.3f}, "dur": 4.125, "args": {{"External id": {i + 1}, "cbid": 211, "correlation": {i + 1}}}}}'
        f',\n  {{"ph": "X", "cat": "kernel", "name": "compute_kernel_{i % 25}", "pid": 0, "tid": {stream}, '
        f'"ts": {ts + 6:.3f}, "dur": {duration:.3f}, "args": {{"External id": {i + 1}, "queued": 0, "device": 0, '
        f'"context": 1, "stream": {stream}, "correlation": {i + 1}, "registers per thread": 32, '
        f'"shared memory": 0, "blocks per SM": 0.97, "warps per SM": 3.88, "grid": [128, 1, 1], '
        f'"block": [128, 1, 1], "est. achieved occupancy %": 6}}}}'
        f',\n  {{"ph": "s", "id": {i + 1}, "pid": {PID}, "tid": {TID}, "ts": {ts + 1:.3f}, "cat": "ac2g", '
        f'"name": "ac2g"}}'
        f',\n  {{"ph": "f", "id": {i + 1}, "pid": 0, "tid": {stream}, "ts": {ts + 6:.3f}, "cat": "ac2g", '
        f'"name": "ac2g", "bp": "e"}}')
    if i % 64 == 0:
        correlation = 10_000_000 + i
        text += (
            f',\n  {{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": {PID}, "tid": {TID}, '
            f'"ts": {ts + 5.5:.3f}, "dur": 1.000, "args": {{"cbid": 211, "correlation": {correlation}}}}}'
            f',\n  {{"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0, '
            f'"tid": 9, "ts": {ts + 7:.3f}, "dur": 20.000, "args": {{"device": 0, "context": 1, "stream": 9, '
            f'"correlation": {correlation}, "Collective name": "allreduce", "In msg nelems": 1048576, '
            f'"Out msg nelems": 1048576, "Group size": 1, "dtype": "Float", "Process Group Ranks": "[0]"}}}}'
            f',\n  {{"ph": "s", "id": {correlation}, "pid": {PID}, "tid": {TID}, "ts": {ts + 5.5:.3f}, '
            f'"cat": "ac2g", "name": "ac2g"}}'
            f',\n  {{"ph": "f", "id": {correlation}, "pid": 0, "tid": 9, "ts": {ts + 7:.3f}, "cat": "ac2g", '
            f'"name": "ac2g", "bp": "e"}}')
    return text


def write_trace(path: str, operators: int) -> int:
    """Write the trace of `operators` operators; returns its traceEvents entries."""
    entries = 3
    with open(path, "w", buffering=1 << 20) as file:
        file.write(HEADER)
        for step_start in range(0, operators, OPERATORS_PER_STEP):
            count = min(OPERATORS_PER_STEP, operators - step_start)
            ts0 = 1000.0 + step_start * 10.0
            file.write(f',\n  {{"ph": "X", "cat": "user_annotation", '
                       f'"name": "ProfilerStep#{step_start // OPERATORS_PER_STEP}", '
                       f'"pid": {PID}, "tid": {TID}, "ts": {ts0:.3f}, "dur": {count * 10.0:.3f}, '
                       f'"args": {{"External id": 0, "Record function id": 0}}}}')
            entries += 1
            for i in range(step_start, step_start + count):
                file.write(operator_entries(i, 1000.5 + i * 10.0))
                entries += 9 if i % 64 == 0 else 5
        file.write(FOOTER)
    return entries


PERFPROF_IMPORT = """
import sys
from perfprof import _core
trace = _core.import_trace(sys.argv[1])[0]
print(trace.num_ranges, "ranges")
"""

PERFPROF_DATABASE = """
import os, sys
os.environ["PERFPROF_CACHE_DIR"] = sys.argv[2]
from perfprof.analysis import open_run
with open_run(sys.argv[1]) as run:
    print(os.path.getsize(run.path) // 1_000_000, "MB database")
"""

HTA_LOAD = """
import sys
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
print(len(analysis.t.get_trace(0)), "rows in HTA's frame")
"""


def show(rows: "list[tuple[str, Measured]]", reference: Measured) -> None:
    print(f"{'':36} {'wall s':>8} {'peak MB':>8} {'HTA/this time':>14} {'this/HTA memory':>16}")
    for name, side in rows:
        print(f"{name:36} {side.seconds:8.2f} {side.peak_bytes / 1e6:8.0f} {reference.seconds / side.seconds:14.1f} "
              f"{side.peak_bytes / reference.peak_bytes:16.3f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="traceEvents entries of the trace HTA loads too")
    parser.add_argument("--gigabytes", type=float, default=0, help="also import a trace of this size, perfprof alone")
    parser.add_argument("--keep", help="write the traces here and keep them (default: a temporary folder)")
    args = parser.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="perfprof-bench-import-")
    python = [sys.executable, "-c"]
    try:
        folder = os.path.join(out, "hta")
        os.makedirs(folder, exist_ok=True)
        trace = os.path.join(folder, "bench.pt.trace.json")
        entries = write_trace(trace, int(args.events / ENTRIES_PER_OPERATOR))
        size = os.path.getsize(trace)
        print(f"trace: {entries:,} entries, {size / 1e6:.0f} MB")
        imported = measured(python + [PERFPROF_IMPORT, trace])
        database = measured(python + [PERFPROF_DATABASE, trace, os.path.join(out, "cache")])
        hta = measured(python + [HTA_LOAD, folder])
        show([("perfprof: import", imported), ("perfprof: import + database", database),
              ("HTA: TraceAnalysis load", hta)], hta)
        print(f"perfprof: {imported.stdout}; {database.stdout}; HTA: {hta.stdout.splitlines()[-1]}")
        if args.gigabytes:
            large = os.path.join(out, "large.pt.trace.json")
            operators = int(args.gigabytes * 1e9 / (size / (entries / ENTRIES_PER_OPERATOR)))
            large_entries = write_trace(large, operators)
            large_size = os.path.getsize(large)
            side = measured(python + [PERFPROF_IMPORT, large])
            print(f"large trace: {large_entries:,} entries, {large_size / 1e9:.2f} GB: import {side.seconds:.1f} s, "
                  f"peak {side.peak_bytes / 1e6:.0f} MB ({side.peak_bytes / large_size:.2f} bytes per trace byte, "
                  f"{side.peak_bytes / large_entries:.0f} bytes per entry); {side.stdout}")
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
