"""Tables as people and programs read them: a terminal report (rich), CSV, JSON and Markdown.

Machine formats (CSV, JSON) keep the raw values and column names. Human formats (text,
Markdown) show durations in one time unit per table and sizes in one of KiB, MiB or GiB per
table, chosen from the values (:func:`display_columns`), name the unit in the header, show rows
that carry their own unit in a readable one (``_row_units``), and show timestamps as offsets
from the run's window start; a report of one run leaves out the columns no row has a value in (a
host-only run's device columns).
"""
from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from ._row_units import with_row_units
from ._table import UNIT_SUFFIXES, Table
from ._units import table_byte_unit, table_time_unit

FORMATS = ("text", "csv", "json", "markdown")



def is_timestamp(column: str) -> bool:
    """Whether a column holds a time of day (ns since the Unix epoch) rather than a duration."""
    return column in ("start_ns", "end_ns", "timestamp_ns") or column.endswith(("_start_ns", "_end_ns", "_time_ns"))


@dataclass(frozen=True)
class DisplayColumn:
    header: str
    render: Callable[[Any], str]
    numeric: bool


def display_columns(table: Table, origin_ns: Optional[int] = None) -> List[DisplayColumn]:
    """How each column of `table` is shown to a person; `origin_ns` is the run's window start.

    The duration columns of a table share one time unit and its byte columns one size unit
    (:func:`table_time_unit`, :func:`table_byte_unit`), so that a row never reads s, ms and µs
    side by side."""
    units: Dict[Optional[str], Tuple[float, str]] = {
        family: (table_time_unit if family == "ns" else table_byte_unit)(values)
        for family, values in _family_values(table).items()}
    return [_display_column(name, table.column(name), origin_ns, units.get(_family_of(name)))
            for name in table.columns]


def _family_of(column: str) -> Optional[str]:
    """The unit family a column shares its scale with: durations ("ns") and bytes; None for the
    others (times of day, percentages, rates, plain numbers)."""
    unit = unit_of(column)
    return unit if unit == "bytes" or (unit == "ns" and not is_timestamp(column)) else None


def _family_values(table: Table) -> Dict[str, List[float]]:
    """The numbers of every duration column together, and of every byte column."""
    families: Dict[str, List[float]] = {}
    for name in table.columns:
        family = _family_of(name)
        if family is not None:
            families.setdefault(family, []).extend(_numbers(table.column(name)))
    return families


def _numbers(values: Sequence[Any]) -> List[float]:
    """The numbers among `values` (no NULL, text or bool)."""
    return [value for value in values if isinstance(value, (int, float)) and not isinstance(value, bool)]


def unit_of(column: str) -> Optional[str]:
    """The unit a column's name carries ("ns", "bytes", "pct", "gbps"), or None: the name is the
    unit itself ("bytes") or ends with "_" and the unit ("total_ns")."""
    for suffix in UNIT_SUFFIXES:
        unit = suffix[1:]
        if column == unit or column.endswith(suffix):
            return unit
    return None


def _display_column(name: str, values: Sequence[Any], origin_ns: Optional[int],
                    family_unit: Optional[Tuple[float, str]]) -> DisplayColumn:
    unit = unit_of(name)
    label = _base_name(name).replace("_", " ")
    if unit == "ns" and is_timestamp(name):
        if origin_ns is None:
            return DisplayColumn(f"{label} (ns since the Unix epoch)", _integer, True)
        return _scaled(f"{label} (ms from start)", 1e6, lambda value: value - origin_ns)
    if family_unit is not None:
        scale, shown = family_unit
        return _scaled(f"{label} ({shown})", scale)
    if unit == "pct":
        return DisplayColumn(f"{label} (%)", lambda value: _number(value, 1.0, 1), True)
    if unit == "gbps":
        return DisplayColumn(f"{label} (GB/s)", lambda value: _number(value, 1.0, 2), True)
    numbers = _numbers(values)
    if numbers and all(isinstance(value, int) for value in values if value is not None):
        return DisplayColumn(label, _integer, True)
    if numbers:
        return DisplayColumn(label, _plain_number, True)
    return DisplayColumn(label, lambda value: "" if value is None else str(value), False)


def _plain_number(value: Any) -> str:
    """A number without a unit: three decimals, none from 100,000 on (a mean of byte counts
    reads 669,986,816, not 669,986,816.000)."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) >= 1e5:
        return _number(value, 1.0, 0)
    return _number(value, 1.0, 3)


def _integer(value: Any) -> str:
    return "" if value is None else f"{value:,}"


def _scaled(header: str, scale: float, shift: Callable[[Any], Any] = lambda value: value) -> DisplayColumn:
    # Whole nanoseconds and bytes have no fraction to show; scaled units get three decimals.
    digits = 0 if scale == 1 else 3
    return DisplayColumn(header, lambda value: "" if value is None else _number(shift(value), scale, digits), True)


def _number(value: Any, scale: float, digits: int) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{value / scale:,.{digits}f}"


def to_csv(tables: Sequence[Table]) -> str:
    """Each table as a CSV block (raw values) headed by a ``# name: title`` line, blocks separated
    by a blank line; a single table has no heading line, so it reads as a plain CSV file."""
    return "\n".join(csv_block(table, f"{table.name}: {table.title}" if len(tables) > 1 else None)
                     for table in tables)


def csv_block(table: Table, heading: Optional[str]) -> str:
    """`table` as CSV (raw values: its columns, then its rows), after a ``# heading`` line when given."""
    out = io.StringIO()
    if heading is not None:
        out.write(f"# {heading}\n")
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(table.rows)
    return out.getvalue()


def to_json(tables: Sequence[Table], about: Dict[str, Any], indent: Optional[int] = 1) -> str:
    """``{**about, "analyses": {name: {"title", "columns", "rows"}}}`` with raw values."""
    document = dict(about)
    document["analyses"] = {table.name: {"title": table.title, "columns": list(table.columns),
                                         "rows": [list(row) for row in table.rows]} for table in tables}
    return json.dumps(document, indent=indent)


def with_values_only(table: Table) -> Table:
    """`table` without the columns none of its rows has a value in (None or an empty text)."""
    kept = [index for index in range(len(table.columns))
            if any(row[index] is not None and row[index] != "" for row in table.rows)]
    if not table.rows or len(kept) == len(table.columns):
        return table
    return Table.of(table.name, table.title, [table.columns[index] for index in kept],
                    [[row[index] for index in kept] for row in table.rows])


def to_markdown(tables: Sequence[Table], origin_ns: Optional[int] = None, values_only: bool = False) -> str:
    """Each table as a Markdown section: ``## title`` and a pipe table in readable units (see
    :func:`display_columns`; rows with their own unit as :func:`with_row_units` shows them), or
    a line saying it is empty; `values_only`: without the columns no row has a value in."""
    sections = []
    for table in tables:
        table = with_row_units(with_values_only(table) if values_only else table)
        lines = [f"## {table.title}", ""]
        if not table.rows:
            lines.append("_no data in this run_")
        else:
            columns = display_columns(table, origin_ns)
            lines.append("| " + " | ".join(column.header for column in columns) + " |")
            lines.append("| " + " | ".join("---:" if column.numeric else "---" for column in columns) + " |")
            for row in table.rows:
                cells = (column.render(value).replace("|", "\\|") for column, value in zip(columns, row))
                lines.append("| " + " | ".join(cells) + " |")
        sections.append("\n".join(lines))
    return "\n\n".join(sections) + "\n"


#: The widest a text column (names) needs to be before it folds its cells onto more lines.
_TEXT_COLUMN_WIDTH = 24


#: Columns a narrow terminal leaves out, in this order, before it shows a table expanded: the
#: spread of a distribution, which its count, total and mean summarise.
_SPREAD_COLUMNS = ("stddev", "median", "min", "max", "minimum", "maximum")


def spread_columns(table: Table) -> List[List[str]]:
    """The spread columns of `table` (stddev, median, min, max), one group each, in the order a
    narrow terminal leaves them out: :func:`rich_table`'s default `leave_out`."""
    spread = sorted((name for name in table.columns if _base_name(name) in _SPREAD_COLUMNS),
                    key=lambda name: _SPREAD_COLUMNS.index(_base_name(name)))
    return [[name] for name in spread]


def rich_table(table: Table, origin_ns: Optional[int] = None, width: Optional[int] = None,
               values_only: bool = False, leave_out: Optional[Sequence[Sequence[str]]] = None) -> Any:
    """A rich Table of `table` in readable units (see :func:`display_columns`; rows with their
    own unit as :func:`with_row_units` shows them) for a terminal `width` columns wide (default:
    any width); `values_only`: without the columns no row has a value in. Drawn by
    :func:`fitted_table`, after leaving out the groups of columns of `leave_out` (default: the
    spread columns, :func:`spread_columns`), one group more at a time, while the table is too
    wide for `width`: the caption names them, and the machine formats keep them."""
    table = with_row_units(with_values_only(table) if values_only else table)
    columns = display_columns(table, origin_ns)
    rendered = [[column.render(value) for column, value in zip(columns, row)] for row in table.rows]
    headers, numeric = [column.header for column in columns], [column.numeric for column in columns]
    if width is not None and not _fits(headers, numeric, rendered, width):
        groups = spread_columns(table) if leave_out is None else leave_out
        left: List[int] = []
        for group in groups:
            left += [table.columns.index(name) for name in group if name in table.columns]
            kept = [index for index in range(len(columns)) if index not in left]
            narrower = ([headers[i] for i in kept], [numeric[i] for i in kept],
                        [[cells[i] for i in kept] for cells in rendered])
            if _fits(*narrower, width):
                left_out = ", ".join(headers[index] for index in left)
                return fitted_table(table.title, *narrower, width, caption=f"left out for the width: {left_out} "
                                    "(a wider terminal or the Markdown report shows them)")
    return fitted_table(table.title, headers, numeric, rendered, width)


def _base_name(column: str) -> str:
    """A column's name without its unit suffix: ``stddev_ns`` -> ``stddev``; a column named as
    its unit alone keeps it (``bytes``)."""
    unit = unit_of(column)
    return column[:-len(unit) - 1] if unit and column != unit else column


def fitted_table(title: str, headers: Sequence[str], numeric: Sequence[bool], rendered: Sequence[Sequence[str]],
                 width: Optional[int] = None, caption: Optional[str] = None) -> Any:
    """A rich Table of the `rendered` cells under `headers` for a terminal `width` columns wide
    (default: any width); `numeric` columns are right-aligned; `caption` goes under it.

    Numbers keep their whole width (headers wrap at their words instead) and names fold past a
    limit. A table that would not fit even so is shown expanded, one block of "header  value"
    lines per row (psql's expanded display): a terminal too narrow for the columns never gets
    cut numbers or vanished names."""
    from rich.table import Table as RichTable

    least = _least_widths(numeric, rendered)
    if width is not None and _fitted_width(headers, least) > width:
        return _expanded(title, headers, rendered)
    fixed = _tight_widths(headers, numeric, rendered, least, width)
    shown = RichTable(title=title, title_justify="left", title_style="bold", caption=caption,
                      caption_justify="left")
    for index, (header, is_number, minimum) in enumerate(zip(headers, numeric, least)):
        shown.add_column(header, justify="right" if is_number else "left", overflow="fold", min_width=minimum,
                         width=fixed[index] if fixed else None)
    for cells in rendered:
        shown.add_row(*cells)
    return shown


def _tight_widths(headers: Sequence[str], numeric: Sequence[bool], rendered: Sequence[Sequence[str]],
                  least: Sequence[int], width: Optional[int]) -> Optional[List[int]]:
    """Each column's width when the table must be narrower than its natural width to fit `width`
    (None when it need not): numbers their whole width, headers wrapped at their words, and the
    room left to the text columns, the first first. rich's own shrinking can leave a table a few
    characters too wide, and the terminal then cuts its last column."""
    natural = [max(len(header), cells) for header, cells in zip(headers, _widest(rendered, len(headers)))]
    if width is None or _drawn_width(natural) <= width:
        return None
    widths = _narrowest(headers, least)
    room = width - _drawn_width(widths)
    for index, is_number in enumerate(numeric):
        if not is_number and room > 0:
            grown = min(natural[index], widths[index] + room)
            room -= grown - widths[index]
            widths[index] = grown
    return widths


def _widest(rendered: Sequence[Sequence[str]], columns: int) -> List[int]:
    """Each column's widest cell."""
    return [max((len(cells[index]) for cells in rendered), default=0) for index in range(columns)]


def _least_widths(numeric: Sequence[bool], rendered: Sequence[Sequence[str]]) -> List[int]:
    """Each column's narrowest cells: a number's whole width, a text's up to where it folds."""
    return [cells if is_number else min(cells, _TEXT_COLUMN_WIDTH)
            for cells, is_number in zip(_widest(rendered, len(numeric)), numeric)]


def _narrowest(headers: Sequence[str], least: Sequence[int]) -> List[int]:
    """Each column as narrow as it can be drawn: its `least` cell width or its header's longest word."""
    return [max(cells, max((len(word) for word in header.split()), default=0)) for header, cells in zip(headers, least)]


def _drawn_width(widths: Sequence[int]) -> int:
    """A table's width with columns `widths` wide: rich's borders, one per table, and a border
    and two spaces of padding a column."""
    return 1 + sum(width + 3 for width in widths)


def _fits(headers: Sequence[str], numeric: Sequence[bool], rendered: Sequence[Sequence[str]], width: int) -> bool:
    return _fitted_width(headers, _least_widths(numeric, rendered)) <= width


def _fitted_width(headers: Sequence[str], least: Sequence[int]) -> int:
    """The narrowest the table can be drawn (see :func:`_narrowest`)."""
    return _drawn_width(_narrowest(headers, least))


def _expanded(title: str, headers: Sequence[str], rendered: Sequence[Sequence[str]]) -> Any:
    """`rendered` as one block per row: each column's header beside the row's value."""
    from rich.table import Table as RichTable

    shown = RichTable(title=title, title_justify="left", title_style="bold", show_header=False)
    shown.add_column(style="bold", no_wrap=True)
    shown.add_column(overflow="fold")
    for number, cells in enumerate(rendered):
        if number:
            shown.add_section()
        for header, cell in zip(headers, cells):
            shown.add_row(header, cell)
    return shown
