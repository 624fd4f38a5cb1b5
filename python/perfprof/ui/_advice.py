"""Recommendations for a run, each a rule over the analyses' numbers with the evidence that
triggered it. docs/ui.md lists the rules and their thresholds; the numbers are the analyses'
(the same tables `perfprof summary` prints), never computed again here."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional

from ..analysis import Table
from ._run_data import RunData

#: A device idle for at least this share of its span (temporal_breakdown.idle_pct).
IDLE_GPU_PCT = 20.0
#: A stream's idle time spent waiting for the host to launch work, at least this share
#: (idle_time_breakdown, category host_wait): the steps are launch-bound.
HOST_WAIT_PCT = 50.0
#: Kernels shorter than their launch call, at least this share of the launches (kernel_launch_stats).
SHORT_KERNELS_PCT = 20.0
#: Copies and sets running at least this share of the device's busy time (kernel_breakdown, memory).
COPIES_PCT = 10.0
#: Communication overlapped by computation below this share (comm_comp_overlap.overlap_pct).
OVERLAP_PCT = 50.0
#: Garbage collection taking at least this share of the steps' time (step_time_breakdown gc_ns).
GC_PCT = 5.0


@dataclass(frozen=True)
class Advice:
    title: str        # what to look at
    evidence: str     # the numbers that triggered it, and from which analysis
    suggestion: str   # what usually helps


def recommendations(data: RunData) -> List[Advice]:
    """The rules that fire on the run, in the order of RULES."""
    found = []
    for rule in RULES:
        advice = rule(data)
        if advice is not None:
            found.append(advice)
    return found


def _idle_gpu(data: RunData) -> Optional[Advice]:
    idle = [row for row in data.table("temporal_breakdown") if (row["idle_pct"] or 0) >= IDLE_GPU_PCT]
    if not idle:
        return None
    evidence = "; ".join(f"GPU {row['deviceId']} idle {row['idle_pct']:.1f}% of its span "
                         f"({row['idle_ns'] / 1e6:,.3f} of {row['total_ns'] / 1e6:,.3f} ms)" for row in idle)
    return Advice("The GPU sits idle", f"{evidence} (temporal_breakdown, threshold {IDLE_GPU_PCT:g}%)",
                  "Find what the host does meanwhile (Operators view): data loading, synchronisations "
                  "(.item(), .cpu()), Python overhead between steps.")


def _launch_bound(data: RunData) -> Optional[Advice]:
    waits = [row for row in data.table("idle_time_breakdown")
             if row["category"] == "host_wait" and (row["idle_pct"] or 0) >= HOST_WAIT_PCT and row["idle_ns"]]
    if not waits:
        return None
    evidence = "; ".join(f"GPU {row['deviceId']} stream {row['streamId']}: {row['idle_pct']:.1f}% of its idle time "
                         f"({row['idle_ns'] / 1e6:,.3f} ms) waiting for the host to launch work" for row in waits)
    return Advice("Steps are launch-bound", f"{evidence} (idle_time_breakdown, threshold {HOST_WAIT_PCT:g}%)",
                  "Launch fewer, larger kernels: CUDA graphs, torch.compile, fused operators, larger batches.")


def _short_kernels(data: RunData) -> Optional[Advice]:
    short = [row for row in data.table("kernel_launch_stats")
             if row["kernels"] and 100.0 * row["short_kernels"] / row["kernels"] >= SHORT_KERNELS_PCT]
    if not short:
        return None
    evidence = "; ".join(f"GPU {row['deviceId']}: {row['short_kernels']:,} of {row['kernels']:,} launches "
                         f"({100.0 * row['short_kernels'] / row['kernels']:.1f}%) ran shorter than their launch call"
                         for row in short)
    return Advice("Many small kernels", f"{evidence} (kernel_launch_stats, threshold {SHORT_KERNELS_PCT:g}%)",
                  "Fuse small operators (torch.compile) or batch the work they do.")


def _copies(data: RunData) -> Optional[Advice]:
    memory = [row for row in data.table("kernel_breakdown")
              if row["type"] == "memory" and (row["pct"] or 0) >= COPIES_PCT]
    if not memory:
        return None
    row = memory[0]
    return Advice("Memory copies take device time",
                  f"copies and sets ran {row['pct']:.1f}% of the GPUs' busy time ({row['total_ns'] / 1e6:,.3f} ms) "
                  f"(kernel_breakdown, threshold {COPIES_PCT:g}%)",
                  "Keep tensors on the device; use pinned memory and non_blocking copies; see memory_bandwidth.")


def _communication(data: RunData) -> Optional[Advice]:
    exposed = [row for row in data.table("comm_comp_overlap") if (row["overlap_pct"] or 0) < OVERLAP_PCT]
    if not exposed:
        return None
    evidence = "; ".join(f"GPU {row['deviceId']}: {row['overlap_pct'] or 0:.1f}% of "
                         f"{row['communication_ns'] / 1e6:,.3f} ms of communication overlapped by computation"
                         for row in exposed)
    return Advice("Communication is not overlapped", f"{evidence} (comm_comp_overlap, threshold {OVERLAP_PCT:g}%)",
                  "Overlap gradients' all-reduce with the backward pass (DDP buckets, FSDP prefetch).")


def _garbage_collection(data: RunData) -> Optional[Advice]:
    steps = data.table("step_time_breakdown")
    total, gc = _sum(steps, "duration_ns"), _sum(steps, "gc_ns")
    if not total or 100.0 * gc / total < GC_PCT:
        return None
    return Advice("Garbage collection pauses the steps",
                  f"GC ran {100.0 * gc / total:.1f}% of the steps' time ({gc / 1e6:,.3f} of {total / 1e6:,.3f} ms) "
                  f"(step_time_breakdown, threshold {GC_PCT:g}%)",
                  "Create fewer short-lived Python objects per step, or gc.freeze() after start-up.")


def _sum(table: Table, column: str) -> int:
    return sum(value or 0 for value in table.column(column)) if table.rows else 0


#: Every rule, in the order the Overview lists what fires.
RULES: List[Callable[[RunData], Optional[Advice]]] = [
    _idle_gpu, _launch_bound, _short_kernels, _copies, _communication, _garbage_collection]
