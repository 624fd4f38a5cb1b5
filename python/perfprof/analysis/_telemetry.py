"""Telemetry analyses: the counters the sampler read (``host_sys``, ``gpu_telemetry``, ``sys_io``,
``sys_interconnection``) over the run.

One shipped query (``sql/telemetry_statistics.sql``); docs/analysis.md gives its columns.
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
