"""An analysis table as a page shows it: readable units (the terminal report's), each cell's raw
value beside its text, sorted, filtered and cut into pages on the server."""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any, List, Optional, Sequence, Tuple

from ..analysis import Table
from ..analysis._formats import display_columns, with_values_only
from ..analysis._row_units import with_row_units

#: Rows on one page of a paged table.
PAGE_SIZE = 50


class BadOrderError(ValueError):
    """An Order a view cannot follow: a sort column its table lacks, a grouping it does not have."""


@dataclass(frozen=True)
class Column:
    name: str       # the analysis' column (snake_case, its unit in the name)
    header: str     # as a person reads it: "self (ms)"
    numeric: bool


@dataclass(frozen=True)
class Cell:
    text: str       # in the table's readable unit
    value: str      # the raw value as `perfprof summary --format json` writes it (JSON text; "" for NULL)


@dataclass(frozen=True)
class Order:
    """How a paged table is shown: sorted by `sort` (None: the analysis' own order), its text
    columns holding `search`, page `page` (from 1) of `page_size` rows (None: every row); a view
    with several groupings of its rows (Operators: by name, by name and input shapes) shows the
    one named `group`, or all of them for None (the report); a view of events over time shows
    those from `start_ms` to `end_ms` (ms from the run's start; None: from the first, to the last)."""

    sort: Optional[str] = None
    descending: bool = True
    search: str = ""
    page: int = 1
    page_size: Optional[int] = PAGE_SIZE
    group: Optional[str] = None
    start_ms: Optional[float] = None
    end_ms: Optional[float] = None


@dataclass(frozen=True)
class ShownTable:
    name: str
    title: str
    columns: Tuple[Column, ...]
    rows: Tuple[Tuple[Cell, ...], ...]   # the rows of this page
    matching: int                         # rows that pass the search, on every page
    order: Order

    @property
    def pages(self) -> int:
        size = self.order.page_size
        return 1 if not size else max(1, math.ceil(self.matching / size))


def shown_table(table: Table, origin_ns: Optional[int], order: Order = Order(page_size=None)) -> ShownTable:
    """`table` for a page: the columns no row has a value in left out (as the terminal report
    does), units chosen over every row (so that pages read alike), then searched, sorted and cut
    to `order`'s page. BadOrderError names a sort column the table lacks."""
    table = with_values_only(table)
    if order.sort is not None and order.sort not in table.columns:
        raise BadOrderError(f"'sort': {table.name} has no column {order.sort!r}; "
                            f"its columns: {', '.join(table.columns)}")
    readable = with_row_units(table)
    shown = display_columns(readable, origin_ns)
    columns = tuple(Column(name, column.header, column.numeric) for name, column in zip(table.columns, shown))
    rows = [tuple(Cell(column.render(text), _raw(value)) for column, text, value in zip(shown, texts, values))
            for texts, values in zip(readable.rows, table.rows)]
    keys = list(table.rows)
    if order.search:
        kept = [index for index, cells in enumerate(rows) if _matches(cells, columns, order.search)]
        rows, keys = [rows[index] for index in kept], [keys[index] for index in kept]
    if order.sort is not None:
        position = table.columns.index(order.sort)
        ranked = sorted(range(len(rows)), key=lambda index: _sort_key(keys[index][position]),
                        reverse=order.descending)
        rows = _nulls_last([rows[index] for index in ranked], position)
    page = min(max(order.page, 1), _page_count(len(rows), order.page_size))
    order = replace(order, page=page)
    if order.page_size:
        rows = rows[(page - 1) * order.page_size:page * order.page_size]
    return ShownTable(table.name, table.title, columns, tuple(rows), len(keys), order)


def _raw(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value)


def _matches(cells: Sequence[Cell], columns: Sequence[Column], search: str) -> bool:
    needle = search.casefold()
    return any(needle in cell.text.casefold() for cell, column in zip(cells, columns) if not column.numeric)


def _sort_key(value: Any) -> Tuple[int, Any]:
    """Numbers by value, texts alphabetically after them; NULLs are moved last by _nulls_last."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (0, value)
    return (1, str(value).casefold())


def _nulls_last(rows: List[Tuple[Cell, ...]], position: int) -> List[Tuple[Cell, ...]]:
    """A column's empty cells after its values, whichever way it is sorted."""
    return [row for row in rows if row[position].value != ""] + [row for row in rows if row[position].value == ""]


def _page_count(rows: int, page_size: Optional[int]) -> int:
    return 1 if not page_size else max(1, math.ceil(rows / page_size))
