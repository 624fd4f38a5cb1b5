"""Telemetry analyses: the counters the sampler read (``host_sys``, ``gpu_telemetry``, ``sys_io``,
``sys_interconnection``) over the run.

Shipped queries (``sql/telemetry_statistics.sql``, ``sql/host_telemetry_over_time.sql``,
``sql/gpu_telemetry_over_time.sql``); docs/analysis.md gives their columns.
"""
from __future__ import annotations

from ._registry import analysis, shipped_query
from ._run_database import RunDatabase
from ._table import Table


@analysis("telemetry_statistics", "Telemetry", "telemetry")
def telemetry_statistics(run: RunDatabase) -> Table:
    """Each sampled counter per instance (a CPU, ``process``, a disk, an interface, ``GPU N``, an
    NVLink): counter (its unit in the name), instance, samples, mean, minimum and maximum over
    the run. Empty without telemetry."""
    return shipped_query(run, "telemetry_statistics")


@analysis("host_telemetry_over_time", "Host telemetry over time", "telemetry", in_summary=False)
def host_telemetry_over_time(run: RunDatabase) -> Table:
    """The host counters over the run, for a plot: panel (cpu, memory, disk, network), series,
    timestamp_ns, value (the host's and the process's CPU use in % of one CPU; bytes; bytes/s
    summed over devices and interfaces).
    Empty without ``host_sys`` telemetry."""
    return shipped_query(run, "host_telemetry_over_time")


@analysis("gpu_telemetry_over_time", "GPU telemetry over time", "telemetry", in_summary=False)
def gpu_telemetry_over_time(run: RunDatabase) -> Table:
    """Each GPU's NVML readings over the run, for a plot: gpu, timestamp_ns, utilization_pct,
    memory_used_bytes, power_watts, sm_clock_mhz. Empty without GPU telemetry."""
    return shipped_query(run, "gpu_telemetry_over_time")
