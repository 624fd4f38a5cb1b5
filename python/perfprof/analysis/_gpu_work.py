"""GPU launches, queues and copies: how long launches take and wait, which kernel sequences
operators repeat, how full the streams' launch queues run and how fast copies move data.

Each function runs the query of the same name in ``sql/`` (docs/analysis.md, "Launches, queues
and copies"); HolisticTraceAnalysis's analyses of the same ideas give the same numbers.
"""
from __future__ import annotations

from typing import Optional

from ._registry import analysis, shipped_query
from ._run_database import RunDatabase
from ._table import Table

#: HolisticTraceAnalysis's cut-offs for outliers: runtime calls over 50 us, delays over 100 us.
RUNTIME_CUTOFF_NS = 50_000
LAUNCH_DELAY_CUTOFF_NS = 100_000


@analysis("kernel_launch_stats", "Kernel launches", "gpu")
def kernel_launch_stats(run: RunDatabase, runtime_cutoff_ns: int = RUNTIME_CUTOFF_NS,
                        launch_delay_cutoff_ns: int = LAUNCH_DELAY_CUTOFF_NS,
                        include_memory: bool = True) -> Table:
    """Per device: launches, their delay (avg, median, max) and HTA's three kinds of outliers.

    Columns: deviceId, kernels, avg_launch_delay_ns, median_launch_delay_ns,
    max_launch_delay_ns, short_kernels (GPU time below the launching call's CPU time, among
    calls within `runtime_cutoff_ns`), runtime_outliers (calls longer than
    `runtime_cutoff_ns`), launch_delay_outliers (delays above `launch_delay_cutoff_ns`).
    `include_memory` counts cudaMemcpyAsync/cudaMemsetAsync launches too, as HTA does by default.
    """
    return shipped_query(run, "kernel_launch_stats", runtime_cutoff_ns=runtime_cutoff_ns,
                         launch_delay_cutoff_ns=launch_delay_cutoff_ns, include_memory=int(include_memory))


@analysis("kernel_launch_configs", "Kernels by launching operator and configuration", "gpu", takes_top=True,
          in_summary=False)
def kernel_launch_configs(run: RunDatabase, top: int = 10) -> Table:
    """The kernels (not copies or sets) grouped by name, the operator that launched them and their
    launch configuration, the `top` groups (-1: every group) with the largest total device time.

    Columns: name, operator (the innermost PyTorch operator around the launch; NULL: none), grid,
    block ('132x1x1'), registers_per_thread, shared_memory_bytes (static + dynamic, per block),
    occupancy_pct (mean theoretical occupancy), count, total_ns, avg_ns, min_ns, max_ns.
    """
    return shipped_query(run, "kernel_launch_configs", top=top)


def kernel_launches(run: RunDatabase, include_memory: bool = True) -> Table:
    """Every launch of GPU work with its runtime call, in device start order (HTA's per-kernel frame).

    Columns: deviceId, correlationId, name, cpu_duration_ns (the runtime call),
    gpu_duration_ns (the work), launch_delay_ns (call end to work start, at least 0).
    """
    return run.query("kernel_launches", "Kernel launches, one by one",
                     {"include_memory": int(include_memory)})


@analysis("frequent_kernel_sequences", "Frequent kernel sequences", "gpu", takes_top=True)
def frequent_kernel_sequences(run: RunDatabase, top: int = 5, operator: Optional[str] = None,
                              min_length: int = 3) -> Table:
    """The `top` sequences of GPU work that one operator launches most often.

    Columns: operator, sequence (names joined with ' -> ', in device start order), length,
    count, total_ns (device time of all occurrences). The operators are PyTorch operators, or
    with `operator` every host range whose name contains it (record_function ranges too); only
    the outermost such range counts, and one launching fewer than `min_length` is left out.
    """
    return shipped_query(run, "frequent_kernel_sequences", top=top, operator=operator, min_length=min_length)


@analysis("memory_bandwidth", "Memory copy bandwidth", "gpu")
def memory_bandwidth(run: RunDatabase) -> Table:
    """Per device and copy kind (HtoD, DtoH, DtoD, PtoP, ..., Memset): what moved and how fast.

    Columns: deviceId, kind, copies, bytes, busy_ns (time with a copy of the kind in
    progress), avg_gbps (bytes / busy_ns), peak_gbps (most bandwidth in use at once).
    """
    return shipped_query(run, "memory_bandwidth")


def memory_bandwidth_over_time(run: RunDatabase) -> Table:
    """The bandwidth copies use over time, per device and copy kind: a step function to plot.

    Columns: deviceId, kind, start_ns, gbps (in use from start_ns until the next row of the
    same device and kind).
    """
    return run.query("memory_bandwidth_over_time", "Memory copy bandwidth over time")


@analysis("queue_length", "Launch queue length", "gpu")
def queue_length(run: RunDatabase) -> Table:
    """Per device and stream: the longest and the time-weighted average launch queue.

    The queue holds work launched (its runtime call started) and not yet started on the device.
    Columns: deviceId, streamId, max_queue_length, avg_queue_length.
    """
    return shipped_query(run, "queue_length")


def queue_length_over_time(run: RunDatabase) -> Table:
    """The launch queue's length over time, per device and stream: a step function to plot.

    Columns: deviceId, streamId, start_ns, queue_length (from start_ns until the stream's next row).
    """
    return run.query("queue_length_over_time", "Launch queue length over time")
