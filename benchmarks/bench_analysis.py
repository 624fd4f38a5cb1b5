"""Full analysis of a 1M-event GPU run: perfprof (summary + every analysis, from SQL) beside
HolisticTraceAnalysis loading the same run's Chrome trace and running its analyses.

    python benchmarks/bench_analysis.py [--events 1000000] [--keep DIR]

The run is made on this machine through the CUPTI test double (tests/cupti_double; built on
first use) and torch (CPU): PyTorch operators (40 custom ops, bench::op_0..39, called through
the dispatcher as aten ops are) that each launch a kernel on one of two compute streams, with
a memory copy every 16th operator and an NCCL kernel on a third stream every 64th,
a ProfilerStep every 20,000 operators. Events are the run's slices: an operator is three (its
range, the runtime call, the kernel) and a copy or NCCL kernel adds two (call and activity),
~3.16 per operator, so --events 1000000 makes ~316k operators (the Chrome trace has more
entries: flow arrows, track names). The run directory gets the Chrome trace, the database
(ExportType.Db) and the capture.

Each side runs in a fresh process, timed from its start to its exit, its peak memory sampled
(resident set of the process and all its children, every 20 ms, with psutil):
- perfprof, database present: every analysis of perfprof.analysis.ANALYSES on the database
  (run_analyses: one thread per CPU, as `perfprof summary` runs them).
- perfprof, from the capture: the same after building the database from the capture (a run
  written without ExportType.Db).
- HTA: TraceAnalysis(trace_dir) (parsing the trace), then temporal breakdown, idle time
  breakdown, kernel breakdown, comm/comp overlap, kernel launch statistics, queue length and
  memory bandwidth summaries. Not its frequent kernel sequences: HTA 0.5.0's
  get_frequent_cuda_kernel_sequences raises TypeError under numpy 2 (np.unique with axis on an
  object array), so HTA's side does less work than perfprof's.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "tests", "python"))
import fake_cupti  # noqa: E402  (the test double's loader and its ctypes prelude)
from _process import measured  # noqa: E402

EVENTS_PER_OPERATOR = 3 + 2 / 16 + 2 / 64
OPERATORS_PER_STEP = 20_000

RECORD = """
import perfprof
import torch

def define(index):
    @torch.library.custom_op(f"bench::op_{{index}}", mutates_args=())
    def operator(x: torch.Tensor, i: int) -> None:
        kernel(f"compute_kernel_{{i % 25}}", stream=7 + i % 2, duration_ns=2_000 + (i % 7) * 500)
        if i % 16 == 0:
            fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 3_000)
        if i % 64 == 0:
            kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", stream=9, duration_ns=20_000)
    return getattr(torch.ops.bench, f"op_{{index}}")

ops = [define(index) for index in range(40)]
x = torch.zeros(1)
operators = {operators}
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      schedule=perfprof.schedule(wait=0, active={steps}, repeat=1),
                      on_trace_ready=perfprof.tensorboard_trace_handler({out!r}, worker_name="bench"),
                      experimental_config=perfprof.ExperimentalConfig(
                          export_type=["text", "db"], data_simplification=False)) as prof:
    for i in range(operators):
        ops[i % 40](x, i)
        if (i + 1) % {per_step} == 0:
            prof.step()
print(json.dumps({{"ok": True}}))
"""

PERFPROF_ANALYSES = """
import sys
from perfprof.analysis import ANALYSES, open_run, run_analyses
with open_run(sys.argv[1]) as run:
    rows = sum(len(table) for table in run_analyses(run, top=10))
print(rows, "rows from", len(ANALYSES), "analyses")
"""

HTA_ANALYSES = """
import sys
from hta.trace_analysis import TraceAnalysis
analysis = TraceAnalysis(trace_dir=sys.argv[1])
analysis.get_temporal_breakdown(visualize=False)
analysis.get_idle_time_breakdown(visualize=False)
analysis.get_gpu_kernel_breakdown(visualize=False)
analysis.get_comm_comp_overlap(visualize=False)
analysis.get_cuda_kernel_launch_stats(visualize=False)
analysis.get_queue_length_summary(ranks=[0])
analysis.get_memory_bw_summary(ranks=[0])
print("hta done")
"""


def record_run(events: int, out: str) -> str:
    """Make the run (in a child process, with the double); returns its run directory."""
    operators = int(events / EVENTS_PER_OPERATOR)
    steps = max(1, -(-operators // OPERATORS_PER_STEP))
    script = RECORD.format(operators=operators, steps=steps, out=out, per_step=OPERATORS_PER_STEP)
    library = fake_cupti.library_path()
    environment = dict(os.environ, PERFPROF_FAKE_CUPTI=library, PERFPROF_CUPTI_LIBRARY=library,
                       PERFPROF_CUDA_DRIVER_LIBRARY=library)
    subprocess.run([sys.executable, "-c", fake_cupti.PRELUDE + textwrap.dedent(script)], env=environment,
                   check=True, capture_output=True, text=True)
    (run_dir,) = [os.path.join(out, name) for name in os.listdir(out)]
    return run_dir


def trace_events(run_dir: str) -> int:
    output = os.path.join(run_dir, "PERFPROF_OUTPUT")
    (trace,) = [name for name in os.listdir(output) if name.endswith(".pt.trace.json")]
    with open(os.path.join(output, trace)) as file:
        return len(json.load(file)["traceEvents"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--keep", help="make the run here and keep it (default: a temporary folder)")
    args = parser.parse_args()
    out = args.keep or tempfile.mkdtemp(prefix="perfprof-bench-analysis-")
    try:
        started = time.perf_counter()
        run_dir = record_run(args.events, out)
        print(f"run: {run_dir} ({trace_events(run_dir):,} trace events, recorded and written in "
              f"{time.perf_counter() - started:.1f} s)")
        database = os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")
        print(f"database: {os.path.getsize(database) / 1e6:.0f} MB")

        with_db = measured([sys.executable, "-c", PERFPROF_ANALYSES, run_dir])
        shutil.move(database, database + ".moved")  # the run as written without ExportType.Db
        from_capture = measured([sys.executable, "-c", PERFPROF_ANALYSES, run_dir])
        os.replace(database + ".moved", database)
        hta = measured([sys.executable, "-c", HTA_ANALYSES, os.path.join(run_dir, "PERFPROF_OUTPUT")])

        print(f"{'':34} {'wall s':>8} {'peak MB':>8} {'HTA/this time':>14} {'this/HTA memory':>16}")
        for name, side in (("perfprof, database present", with_db), ("perfprof, built from the capture", from_capture),
                           ("HolisticTraceAnalysis", hta)):
            print(f"{name:34} {side.seconds:8.2f} {side.peak_bytes / 1e6:8.0f} {hta.seconds / side.seconds:14.1f} "
                  f"{side.peak_bytes / hta.peak_bytes:16.2f}")
        print(f"perfprof: {with_db.stdout}")
    finally:
        if not args.keep:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
