"""Host analyses: the run at a glance, steps, operators, annotated ranges and Python hot spots.

Each is one shipped query (``sql/<name>.sql``); docs/analysis.md gives every column's formula.
"""
from __future__ import annotations

import dataclasses

from ._registry import analysis, shipped_query
from ._run_database import RunDatabase
from ._table import Table


@analysis("run_info", "Run", "run")
def run_info(run: RunDatabase) -> Table:
    """What the run is, as (name, value) text rows: rank and world size, the collection window
    (UTC), counts of steps, operators, kernels and mstx ranges, the GPUs, the profile() options
    (``config.*``), the trace's non-zero loss counters (``stats.*``) and the user's metadata
    (``metadata.*``)."""
    return shipped_query(run, "run_info")


@analysis("step_times", "Step times", "host", in_summary=False)
def step_times(run: RunDatabase) -> Table:
    """Each ProfilerStep#N of the schedule: step, start_ns, end_ns, duration_ns, in step order."""
    return shipped_query(run, "step_times")


@analysis("step_statistics", "Step time statistics", "run")
def step_statistics(run: RunDatabase) -> Table:
    """The steps' durations in one row: count, total_ns, avg_ns, median_ns, min_ns, max_ns and
    stddev_ns (sample; NULL for a single step). Empty without steps."""
    return shipped_query(run, "step_statistics")


@analysis("step_time_breakdown", "Step time breakdown", "host")
def step_time_breakdown(run: RunDatabase) -> Table:
    """Where each step's time went. Host parts operators_ns + gc_ns + other_ns and GPU parts
    computing_ns + communication_not_overlapped_ns + copy_only_ns + free_ns each add up to
    duration_ns; overlapped_ns and preparing_ns are GPU details. GPU columns are NULL in a run
    without device work."""
    return shipped_query(run, "step_time_breakdown")


@analysis("top_operators", "Top operators", "host", takes_top=True)
def top_operators(run: RunDatabase, top: int = 10) -> Table:
    """The `top` operators (-1: every one) with the most self time (their time minus that of the
    operators they called): count, total_ns, self_ns, avg/median/min/max/stddev of their
    durations and pct, their share of all operators' self time."""
    return shipped_query(run, "top_operators", top=top, type="op")


@analysis("operator_details", "Operators by input shapes", "host", takes_top=True, in_summary=False)
def operator_details(run: RunDatabase, top: int = 10) -> Table:
    """The `top` operators (-1: every one) per name and input shapes with the most host self
    time, with torch.profiler's key_averages(group_by_input_shape=True) times (operator_details.csv):
    name, input_shapes (NULL without record_shapes), count, host_self_ns, host_total_ns,
    device_self_ns, device_total_ns."""
    return shipped_query(run, "operator_details", top=top)


@analysis("module_tree", "Modules", "host", in_summary=False)
def module_tree(run: RunDatabase) -> Table:
    """The nn.Module calls as a tree of module paths ('Net_0 > Linear_0'), a module before its
    children: module, depth, calls, host_total_ns, host_self_ns (without the module calls inside),
    device_total_ns and device_self_ns (the GPU work launched inside the calls, on their thread).
    Empty without with_modules or with_stack."""
    return shipped_query(run, "module_tree")


@analysis("nvtx_ranges", "Annotated ranges", "host", takes_top=True)
def nvtx_ranges(run: RunDatabase, top: int = 10) -> Table:
    """The `top` annotated ranges by total time, per domain and name: mstx ranges under their
    domain and record_function annotations under the domain ``record_function``; count, total_ns
    and avg/median/min/max/stddev of their durations."""
    return shipped_query(run, "nvtx_ranges", top=top)


@analysis("python_hot_spots", "Python hot spots", "host", takes_top=True)
def python_hot_spots(run: RunDatabase, top: int = 10) -> Table:
    """The `top` Python functions with the most self time (their time minus that of the Python
    calls they made; operators they ran count as theirs), from a ``with_stack`` run: function,
    then top_operators' columns. Empty without Python stacks."""
    table = shipped_query(run, "python_hot_spots", sql_name="top_operators", top=top, type="python_function")
    # The shared query names its rows' ranges "name"; here they are Python functions.
    return dataclasses.replace(table, columns=("function",) + table.columns[1:])
