"""Where device time goes: busy, idle and overlapped GPU time, and the activities that take it.

The temporal, kernel-type and overlap breakdowns are arithmetic on one query,
``sql/gpu_busy_time.sql`` (the unions of each kind of activity per device), run once per
database however many of them are asked for. The other functions each run the query of ``sql/``
of their own name over the run's ``KERNEL_DETAILS`` (and, for the idle breakdown, the CUPTI
activity and API tables). Where HolisticTraceAnalysis has the same analysis, the meaning is
HTA's, per device instead of per rank; docs/analysis.md gives each formula and any difference.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional

from ._registry import ANALYSES, analysis, shipped_query
from ._run_database import RunDatabase
from ._table import Table

#: The kinds of GPU activity (KERNEL_DETAILS.type, lower case), in the order reports list them.
ACTIVITY_TYPES = ("compute", "communication", "memory")


def _busy_time(run: RunDatabase) -> List[Dict[str, Any]]:
    """Per device: span_ns, busy_ns and the union of each kind of activity (gpu_busy_time.sql)."""
    return run.shared_query("gpu_busy_time", "GPU busy time by kind of activity").to_dicts()


def _percent(part: Optional[int], whole: Optional[int]) -> Optional[float]:
    return 100.0 * part / whole if part is not None and whole else None


def _derived(name: str, columns: List[str], rows: List[List[Any]]) -> Table:
    return Table.of(name, ANALYSES[name].title, columns, rows)


@analysis("temporal_breakdown", "GPU time: compute, non-compute and idle", "gpu")
def temporal_breakdown(run: RunDatabase) -> Table:
    """Per device: of the span from the first GPU activity to the last, the time some compute
    kernel ran, the time only communication or memory work ran, and the idle time.

    Columns: deviceId, compute_ns, non_compute_ns, idle_ns, total_ns, compute_pct,
    non_compute_pct, idle_pct (of total_ns).
    """
    rows = []
    for device in _busy_time(run):
        compute, busy, total = device["compute_ns"] or 0, device["busy_ns"], device["span_ns"]
        rows.append([device["deviceId"], compute, busy - compute, total - busy, total, _percent(compute, total),
                     _percent(busy - compute, total), _percent(total - busy, total)])
    return _derived("temporal_breakdown", ["deviceId", "compute_ns", "non_compute_ns", "idle_ns", "total_ns",
                                           "compute_pct", "non_compute_pct", "idle_pct"], rows)


@analysis("idle_time_breakdown", "Why streams were idle", "gpu")
def idle_time_breakdown(run: RunDatabase, kernel_wait_threshold_ns: int = 30_000) -> Table:
    """Per stream: its idle gaps split into host wait (launched after the previous work ended),
    kernel wait (gaps under `kernel_wait_threshold_ns`) and other.

    Columns: deviceId, streamId, category ('host_wait', 'kernel_wait', 'other'), idle_ns,
    idle_pct (of the stream's idle time; NULL when it had none).
    """
    return shipped_query(run, "idle_time_breakdown", kernel_wait_threshold_ns=kernel_wait_threshold_ns)


@analysis("kernel_breakdown", "GPU time by kind of activity", "gpu")
def kernel_breakdown(run: RunDatabase) -> Table:
    """The time compute, communication and memory work ran (concurrent work of one kind counted
    once), summed over devices, and its share of the devices' busy time.

    Columns: type ('compute', 'communication', 'memory'; those that ran), total_ns, pct, largest
    first.
    """
    devices = _busy_time(run)
    busy = sum(device["busy_ns"] for device in devices)
    totals = {kind: [device[f"{kind}_ns"] for device in devices if device[f"{kind}_ns"] is not None]
              for kind in ACTIVITY_TYPES}
    rows = [[kind, sum(values), _percent(sum(values), busy)] for kind, values in totals.items() if values]
    rows.sort(key=lambda row: (-row[1], row[0]))
    return _derived("kernel_breakdown", ["type", "total_ns", "pct"], rows)


@analysis("top_kernels", "Top GPU kernels", "gpu", takes_top=True)
def top_kernels(run: RunDatabase, top: int = 10) -> Table:
    """The `top` kernels, copies and sets (-1: every name) with the largest total device time, by name.

    Columns: name, type, count, total_ns, avg_ns, median_ns, min_ns, max_ns, stddev_ns (sample
    standard deviation, NULL for one instance), pct (of all GPU activity time).
    """
    return shipped_query(run, "top_kernels", top=top)


@analysis("kernel_metrics", "Kernel hardware metrics", "gpu", takes_top=True)
def kernel_metrics(run: RunDatabase, top: int = 10) -> Table:
    """The hardware metrics measured per kernel (``ExperimentalConfig.gpu_metrics``, ``l2_cache``)
    for the `top` kernel names (-1: every name) with the most device time among their measured
    kernels.

    Columns: name, metric (its unit in the name), kernels (measured kernels of that name with a
    value), mean, minimum, maximum. Empty when no metric was measured.
    """
    return shipped_query(run, "kernel_metrics", top=top)


@analysis("comm_comp_overlap", "Communication overlapped by computation", "gpu")
def comm_comp_overlap(run: RunDatabase) -> Table:
    """Per device with communication kernels: how much of their time compute kernels ran too.

    Columns: deviceId, communication_ns, overlapped_ns, overlap_pct (of communication_ns).
    """
    rows = []
    for device in _busy_time(run):
        communication = device["communication_ns"]
        if communication:
            # |comm ∩ compute| = |comm| + |compute| - |comm ∪ compute|
            overlapped = communication + (device["compute_ns"] or 0) - device["compute_or_communication_ns"]
            rows.append([device["deviceId"], communication, overlapped, _percent(overlapped, communication)])
    return _derived("comm_comp_overlap", ["deviceId", "communication_ns", "overlapped_ns", "overlap_pct"], rows)


@analysis("gpu_utilization", "GPU utilisation and idle over time", "gpu", in_summary=False)
def gpu_utilization(run: RunDatabase, bins: int = 100) -> Table:
    """Per device: its span cut into `bins` equal bins, and the busy time in each.

    Columns: deviceId, bin_start_ns, bin_end_ns, busy_ns, utilization_pct (of the bin).
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, not {bins}")
    return shipped_query(run, "gpu_utilization", bins=bins)
