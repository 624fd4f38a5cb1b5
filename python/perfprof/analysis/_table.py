"""Table: what every analysis returns, a named result set with the units in its column names."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Sequence, Tuple

#: Column-name suffixes that carry a unit (renderers and plots format by them): ``_ns``
#: nanoseconds, ``_bytes`` bytes, ``_pct`` percent (0-100), ``_gbps`` GB/s (1e9 bytes/s). A column
#: named as the unit alone ("bytes", "pct") has it too.
UNIT_SUFFIXES = ("_ns", "_bytes", "_pct", "_gbps")


@dataclass(frozen=True)
class Table:
    """The result of an analysis: ``columns`` and ``rows`` as the SQL query returned them.

    Columns are snake_case; a name ending in ``_ns``, ``_bytes``, ``_pct`` or ``_gbps`` (or
    named ``bytes``, ``pct``...) holds nanoseconds, bytes, percent or GB/s; ``start_ns``,
    ``end_ns``, ``timestamp_ns`` and names ending ``_start_ns``, ``_end_ns``, ``_time_ns`` are
    times (ns since the Unix epoch), the other ``_ns`` columns durations. Iterating yields each
    row as a dict.
    """

    name: str                          # the analysis that produced it, e.g. "temporal_breakdown"
    title: str                         # a heading for reports
    columns: Tuple[str, ...]
    rows: Tuple[Tuple[Any, ...], ...]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[Dict[str, Any]]:
        return iter(self.to_dicts())

    def column(self, name: str) -> List[Any]:
        """The values of one column, in row order."""
        try:
            index = self.columns.index(name)
        except ValueError:
            raise KeyError(f"{self.name} has no column {name!r}; its columns: {', '.join(self.columns)}") from None
        return [row[index] for row in self.rows]

    def to_dicts(self) -> List[Dict[str, Any]]:
        """The rows as dicts keyed by column name."""
        return [dict(zip(self.columns, row)) for row in self.rows]

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame (pandas must be installed)."""
        import pandas

        return pandas.DataFrame(list(self.rows), columns=list(self.columns))

    @classmethod
    def of(cls, name: str, title: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> "Table":
        return cls(name, title, tuple(columns), tuple(tuple(row) for row in rows))
