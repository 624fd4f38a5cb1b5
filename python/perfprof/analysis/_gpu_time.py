"""Where device time goes: busy, idle and overlapped GPU time, and the activities that take it.

Each function runs one query of ``sql/`` (the file of the same name) over the run's
``KERNEL_DETAILS`` (and, for the idle breakdown, the CUPTI activity and API tables). Where
HolisticTraceAnalysis has the same analysis, the meaning is HTA's, per device instead of per
rank; docs/analysis.md gives each formula and any difference.
"""
from __future__ import annotations

from ._registry import analysis, shipped_query
from ._run_database import RunDatabase
from ._table import Table


@analysis("temporal_breakdown", "GPU time: compute, non-compute and idle", "gpu")
def temporal_breakdown(run: RunDatabase) -> Table:
    """Per device: of the span from the first GPU activity to the last, the time some compute
    kernel ran, the time only communication or memory work ran, and the idle time.

    Columns: deviceId, compute_ns, non_compute_ns, idle_ns, total_ns, compute_pct,
    non_compute_pct, idle_pct (of total_ns).
    """
    return shipped_query(run, "temporal_breakdown")


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

    Columns: type ('compute', 'communication', 'memory'), total_ns, pct.
    """
    return shipped_query(run, "kernel_breakdown")


@analysis("top_kernels", "Top GPU kernels", "gpu", takes_top=True)
def top_kernels(run: RunDatabase, top: int = 10) -> Table:
    """The `top` kernels, copies and sets with the largest total device time, by name.

    Columns: name, type, count, total_ns, avg_ns, median_ns, min_ns, max_ns, stddev_ns (sample
    standard deviation, NULL for one instance), pct (of all GPU activity time).
    """
    return shipped_query(run, "top_kernels", top=top)


@analysis("comm_comp_overlap", "Communication overlapped by computation", "gpu")
def comm_comp_overlap(run: RunDatabase) -> Table:
    """Per device with communication kernels: how much of their time compute kernels ran too.

    Columns: deviceId, communication_ns, overlapped_ns, overlap_pct (of communication_ns).
    """
    return shipped_query(run, "comm_comp_overlap")


@analysis("gpu_utilization", "GPU utilisation and idle over time", "gpu", in_summary=False)
def gpu_utilization(run: RunDatabase, bins: int = 100) -> Table:
    """Per device: its span cut into `bins` equal bins, and the busy time in each.

    Columns: deviceId, bin_start_ns, bin_end_ns, busy_ns, utilization_pct (of the bin).
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, not {bins}")
    return shipped_query(run, "gpu_utilization", bins=bins)
