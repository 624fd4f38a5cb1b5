"""Readable units: a column's values (named with their unit, ``_ns`` or ``_bytes``) scaled to
the unit that reads best for their size. Shared by the reports (``_formats``) and the plots."""
from __future__ import annotations

from typing import Iterable, List, Tuple

_TIME_UNITS = ((1e9, "s"), (1e6, "ms"), (1e3, "µs"), (1.0, "ns"))
_BYTE_UNITS = ((2.0 ** 30, "GiB"), (2.0 ** 20, "MiB"), (2.0 ** 10, "KiB"), (1.0, "B"))


def _unit(largest: float, units: Tuple[Tuple[float, str], ...]) -> Tuple[float, str]:
    for scale, name in units:
        if largest >= scale:
            return scale, name
    return units[-1]


def time_unit(values_ns: Iterable[float]) -> Tuple[float, str]:
    """The divisor and name of the time unit for nanosecond `values_ns` (s, ms, µs or ns)."""
    return _unit(max((abs(value) for value in values_ns), default=0.0), _TIME_UNITS)


def byte_unit(values: Iterable[float]) -> Tuple[float, str]:
    """The divisor and name of the size unit for byte `values` (GiB, MiB, KiB or B)."""
    return _unit(max((abs(value) for value in values), default=0.0), _BYTE_UNITS)


def scaled(values: Iterable[float], divisor: float) -> List[float]:
    """`values` divided by `divisor` (NULLs from SQL count as 0)."""
    return [(value or 0) / divisor for value in values]
