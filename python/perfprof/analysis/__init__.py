"""Built-in analyses of a profiled run, read from its database with SQL.

Each analysis is a query in ``perfprof/analysis/sql/`` (runnable unchanged in any SQLite
client; the temporal, kernel-type and overlap breakdowns are arithmetic on one shared query)
behind a function that takes a :class:`RunDatabase` and returns a :class:`Table`::

    from perfprof import analysis
    with analysis.open_run("result/host_1234_20261123_perfprof") as run:
        print(analysis.temporal_breakdown(run).to_dicts())
        tables = analysis.run_analyses(run, top=5)   # every analysis, side by side on all cores

docs/analysis.md gives each analysis' meaning and formula; where HolisticTraceAnalysis has an
analysis of the same name, the numbers agree with it.
"""
from __future__ import annotations

# Within a section (registry.SECTIONS) reports list analyses as their modules register them.
from ._gpu_time import (comm_comp_overlap, gpu_utilization, idle_time_breakdown, kernel_breakdown, kernel_metrics,
                        temporal_breakdown, top_kernels)
from ._gpu_work import (frequent_kernel_sequences, kernel_launch_configs, kernel_launch_stats, kernel_launches,
                        memory_bandwidth, memory_bandwidth_over_time, queue_length, queue_length_over_time)
from ._host import (module_tree, nvtx_ranges, operator_details, python_hot_spots, run_info, step_statistics,
                    step_time_breakdown, step_times, top_operators)
from ._memory import memory_allocations, memory_by_operator, memory_over_time, memory_peaks
from ._registry import ANALYSES, Analysis
from ._run_database import OutdatedDatabaseError, RunDatabase, database_of, open_run
from ._summary import run_analyses
from ._table import UNIT_SUFFIXES, Table
from ._telemetry import gpu_telemetry_over_time, host_telemetry_over_time, telemetry_statistics

__all__ = [
    "ANALYSES", "Analysis", "OutdatedDatabaseError", "RunDatabase", "Table", "UNIT_SUFFIXES", "database_of",
    "open_run", "run_analyses",
    "comm_comp_overlap", "gpu_utilization", "idle_time_breakdown", "kernel_breakdown", "temporal_breakdown",
    "top_kernels", "kernel_metrics",
    "frequent_kernel_sequences", "kernel_launch_configs", "kernel_launch_stats", "kernel_launches",
    "memory_bandwidth", "memory_bandwidth_over_time", "queue_length", "queue_length_over_time",
    "memory_allocations", "memory_by_operator", "memory_over_time", "memory_peaks", "module_tree", "nvtx_ranges",
    "operator_details", "python_hot_spots", "run_info", "step_statistics", "step_time_breakdown", "step_times",
    "telemetry_statistics", "top_operators", "host_telemetry_over_time", "gpu_telemetry_over_time",
]
