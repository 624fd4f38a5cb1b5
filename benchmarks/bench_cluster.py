"""perfprof cluster at scale: 16 and 64 ranks of ~200k events each, beside HolisticTraceAnalysis
loading the same ranks' traces.

    python benchmarks/bench_cluster.py [--ranks 16,64] [--events 200000] [--hta-ranks 16] [--keep DIR]

The ranks: one GPU run recorded through the CUPTI test double (bench_analysis.record_run: PyTorch
operators each launching a kernel, a memory copy every 16th, an NCCL all-reduce every 64th;
events are the run's slices, ~3.16 per operator), then cloned into N rank run directories, each
with its database (perfprof_<rank>.db, META_DATA rank and world size rewritten) and
profiler_info.json. The clones differ as ranks of a job would: rank N/2 is made slow (20% more
Free time in each step, and every other rank waits 50 us longer in each all-reduce), so the
analysis has a rank to find; each rank's computing time carries a small jitter.

Each side runs in a fresh process, timed from its start to its exit, the resident set of the
process and all its children sampled every 20 ms (psutil):
- perfprof: `perfprof.cluster.analyse_cluster` in local mode with 2 worker processes (as
  `perfprof cluster DIR -j 2`), printing when its map step ends, so the map and reduce times are
  told apart.
- HTA: TraceAnalysis over the ranks' Chrome traces (distributedInfo.rank set per rank), then its
  temporal breakdown and communication/computation overlap over all ranks: its multi-rank view.
  Stopped past --hta-memory-cap (default 18 GB of this machine's 24).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from typing import List, Optional

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
from _process import Measured, measured  # noqa: E402
from bench_analysis import record_run, trace_events  # noqa: E402

SLOW_EXTRA_FREE = 0.2  # of each step, on the slow rank
WAIT_FOR_SLOW_NS = 50_000  # more in each of the other ranks' all-reduces

PERFPROF_CLUSTER = """
import sys, time
from perfprof.cluster import Progress, analyse_cluster
start = time.perf_counter()
marks = {}
progress = Progress(on_stage=lambda stage: marks.setdefault(stage, time.perf_counter() - start))
result = analyse_cluster(sys.argv[1], sys.argv[2], jobs=2, progress=progress)
named = sorted({finding.rank for finding in result.slow_ranks})
map_seconds = min(marks.values())
print(f"map {map_seconds:.2f} s, reduce {time.perf_counter() - start - map_seconds:.2f} s; "
      f"{len(result.ranks)} ranks; slow ranks named: {named}")
"""

HTA_CLUSTER = """
import sys
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
analysis.get_temporal_breakdown(visualize=False)
analysis.get_comm_comp_overlap(visualize=False)
print("hta: ranks", len(analysis.t.traces))
"""


def template(events: int, keep: str) -> str:
    """The recorded run every rank is cloned from (made once per event count, kept in `keep`)."""
    folder = os.path.join(keep, f"template_{events}")
    if not os.path.isdir(folder):
        os.makedirs(folder)
        record_run(events, folder)
    (run_dir,) = [os.path.join(folder, name) for name in os.listdir(folder)]
    return run_dir


def make_ranks(run_dir: str, ranks: int, out: str) -> None:
    """`ranks` rank run directories under `out`, cloned from `run_dir`'s database."""
    database = os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")
    with open(os.path.join(run_dir, "profiler_info.json")) as file:
        info = json.load(file)
    slow = ranks // 2
    for rank in range(ranks):
        clone = os.path.join(out, f"bench_{rank}_perfprof")
        os.makedirs(os.path.join(clone, "PERFPROF_OUTPUT"))
        copy = os.path.join(clone, "PERFPROF_OUTPUT", f"perfprof_{rank}.db")
        shutil.copyfile(database, copy)
        with sqlite3.connect(copy) as connection:
            connection.executemany("UPDATE META_DATA SET value = ? WHERE name = ?",
                                   [(str(rank), "rank"), (str(ranks), "world_size"), ("nccl", "distributed_backend")])
            connection.execute("UPDATE STEP_TRACE_TIME SET computing = computing + ?", (rank * 7919 % 1000 * 100,))
            if rank == slow:
                connection.execute("UPDATE STEP_TRACE_TIME SET free = free + (endNs - startNs) * ?",
                                   (SLOW_EXTRA_FREE,))
            else:
                connection.execute("UPDATE COMMUNICATION_OP SET endNs = endNs + ?", (WAIT_FOR_SLOW_NS,))
        with open(os.path.join(clone, "profiler_info.json"), "w") as file:
            json.dump(dict(info, rank=rank, world_size=ranks), file)


def make_hta_traces(run_dir: str, ranks: int, out: str) -> None:
    """The ranks' Chrome traces in one folder, as HTA reads a job (distributedInfo.rank each)."""
    output = os.path.join(run_dir, "PERFPROF_OUTPUT")
    (name,) = [name for name in os.listdir(output) if name.endswith(".pt.trace.json")]
    with open(os.path.join(output, name)) as file:
        trace = json.load(file)
    os.makedirs(out)
    for rank in range(ranks):
        trace["distributedInfo"] = dict(trace.get("distributedInfo") or {}, rank=rank, world_size=ranks)
        with open(os.path.join(out, f"rank_{rank}.pt.trace.json"), "w") as file:
            json.dump(trace, file)


def side(name: str, ranks: int, events: int, result: Measured, hta: Optional[Measured] = None) -> str:
    ratio = f"{hta.seconds / result.seconds:10.1f} {result.peak_bytes / hta.peak_bytes:10.3f}" if hta else ""
    return (f"{name:22} {ranks:6} {ranks * events / 1e6:8.2f} {result.seconds:8.1f} {result.peak_bytes / 1e6:9.0f} "
            f"{result.largest_process_bytes / 1e6:9.0f} {ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ranks", default="16,64", help="rank counts to measure, comma-separated")
    parser.add_argument("--events", type=int, default=200_000, help="events per rank")
    parser.add_argument("--hta-ranks", type=int, default=16, help="ranks for HTA's side (0: none)")
    parser.add_argument("--hta-memory-cap", type=float, default=18.0, help="GB at which HTA is stopped")
    parser.add_argument("--keep", help="keep the runs here (the template is reused) [default: a temporary folder]")
    args = parser.parse_args()
    keep = args.keep or tempfile.mkdtemp(prefix="perfprof-bench-cluster-")
    rank_counts: List[int] = [int(count) for count in args.ranks.split(",")]
    try:
        started = time.perf_counter()
        run_dir = template(args.events, keep)
        events = trace_events(run_dir)
        print(f"template rank: {run_dir} ({events:,} trace events; {time.perf_counter() - started:.0f} s)")
        print(f"{'side':22} {'ranks':>6} {'M events':>8} {'wall s':>8} {'peak MB':>9} {'1 proc MB':>9} "
              f"{'HTA/this':>10} {'mem ratio':>10}")
        hta: Optional[Measured] = None
        if args.hta_ranks:
            traces = os.path.join(keep, f"hta_{args.hta_ranks}")
            shutil.rmtree(traces, ignore_errors=True)
            make_hta_traces(run_dir, args.hta_ranks, traces)
            hta = measured([sys.executable, "-c", HTA_CLUSTER, traces], int(args.hta_memory_cap * 1e9))
            print(side("HolisticTraceAnalysis", args.hta_ranks, events, hta)
                  + ("  (stopped at the memory cap)" if hta.killed else ""))
            shutil.rmtree(traces)
        for ranks in rank_counts:
            job = os.path.join(keep, f"job_{ranks}")
            shutil.rmtree(job, ignore_errors=True)
            make_ranks(run_dir, ranks, job)
            result = measured([sys.executable, "-c", PERFPROF_CLUSTER, job, os.path.join(job, "out")])
            compared = hta if hta is not None and not hta.killed and ranks == args.hta_ranks else None
            print(side("perfprof cluster", ranks, events, result, compared) + f"  {result.stdout}")
            shutil.rmtree(job)
    finally:
        if not args.keep:
            shutil.rmtree(keep, ignore_errors=True)


if __name__ == "__main__":
    main()
