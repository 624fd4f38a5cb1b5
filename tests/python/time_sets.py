"""Sets of time as the tests compute them by hand: sorted, disjoint [begin, end) intervals."""
from __future__ import annotations

from typing import List, Tuple

Intervals = List[Tuple[int, int]]


def union(intervals: Intervals) -> Intervals:
    """The union of `intervals`, as sorted disjoint intervals."""
    merged: List[List[int]] = []
    for begin, end in sorted(intervals):
        if merged and begin <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([begin, end])
    return [(begin, end) for begin, end in merged]


def intersection(a: Intervals, b: Intervals) -> Intervals:
    """The intersection of two unions (sorted disjoint intervals)."""
    found, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        begin, end = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if begin < end:
            found.append((begin, end))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return found


def inside(intervals: Intervals, begin: int, end: int) -> int:
    """How much of [begin, end) disjoint `intervals` cover."""
    return sum(max(0, min(e, end) - max(b, begin)) for b, e in intervals)
