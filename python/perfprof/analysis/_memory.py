"""Memory analyses: the memory timeline's peaks and its course, and the allocations by operator,
from a ``profile_memory`` run.

Each is one shipped query (``sql/<name>.sql``); docs/analysis.md gives every column's formula.
"""
from __future__ import annotations

from typing import Optional

from ._registry import analysis, shipped_query
from ._run_database import RunDatabase
from ._table import Table


@analysis("memory_peaks", "Memory peaks", "memory")
def memory_peaks(run: RunDatabase) -> Table:
    """Per device (deviceType), the peak of each memory category and, as category ``TOTAL``, of
    their sum: peak_bytes and peak_time_ns, the first time it is reached. The numbers of
    ``export_memory_timeline``. Empty without memory events."""
    return shipped_query(run, "memory_peaks")


@analysis("memory_over_time", "Memory over time", "memory", in_summary=False)
def memory_over_time(run: RunDatabase, points: int = 2000) -> Table:
    """The memory timeline per device: deviceType, timestamp_ns, category, bytes (live from that
    point on), for a stacked-area plot. A device with more than `points` points keeps, of each of
    `points` equal time buckets, the point of largest total, so the total's peak stays in it."""
    return shipped_query(run, "memory_over_time", points=points)


@analysis("memory_by_operator", "Memory by operator", "memory", takes_top=True, in_summary=False)
def memory_by_operator(run: RunDatabase, top: int = 10) -> Table:
    """The tensor allocations per device and the operator that made them, the `top` (-1: every
    one) with the most bytes allocated: deviceType, operator (NULL: outside any operator),
    allocations, allocated_bytes, largest_bytes, freed, held_bytes (not freed in the window),
    avg_lifetime_ns (of those freed). Empty without memory events."""
    return shipped_query(run, "memory_by_operator", top=top)


@analysis("memory_allocations", "Tensor allocations", "memory", in_summary=False)
def memory_allocations(run: RunDatabase, start_ns: Optional[int] = None, end_ns: Optional[int] = None) -> Table:
    """Each tensor allocation made in [`start_ns`, `end_ns`) (ns since the Unix epoch; None: from
    the first, to the last), in allocation order: deviceType, operator, module, category,
    size_bytes, allocation_time_ns, release_time_ns and lifetime_ns (NULL: not freed in the
    window). Empty without memory events."""
    return shipped_query(run, "memory_allocations", start_ns=start_ns, end_ns=end_ns)
