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


#: A table's unit reads its smallest value with at least two significant digits (three decimals
#: are shown) where its largest value then stays below 100,000.
_SMALLEST_READ = 0.01
_LARGEST_READ = 1e5


def _table_unit(values: Iterable[float], units: Tuple[Tuple[float, str], ...]) -> Tuple[float, str]:
    numbers = [abs(value) for value in values if value]
    if not numbers:
        return units[-1]
    largest, smallest = max(numbers), min(numbers)
    index = units.index(_unit(largest, units))
    while (index + 1 < len(units) and smallest / units[index][0] < _SMALLEST_READ
           and largest / units[index + 1][0] < _LARGEST_READ):
        index += 1
    return units[index]


def table_time_unit(values_ns: Iterable[float]) -> Tuple[float, str]:
    """The time unit of a table's durations `values_ns`, all shown in one unit: the largest
    value's (:func:`time_unit`), or a finer one where the smallest would read below 0.01 and the
    largest stays below 100,000 (a few ms of 'other' time beside 1.2 s steps reads 8.722 ms)."""
    return _table_unit(values_ns, _TIME_UNITS)


def table_byte_unit(values: Iterable[float]) -> Tuple[float, str]:
    """The size unit of a table's byte `values`, all shown in one unit, chosen as
    :func:`table_time_unit` chooses (GiB, MiB, KiB or B)."""
    return _table_unit(values, _BYTE_UNITS)


def scaled(values: Iterable[float], divisor: float) -> List[float]:
    """`values` divided by `divisor` (NULLs from SQL count as 0)."""
    return [(value or 0) / divisor for value in values]
