"""Tables whose rows carry their own unit, as a person reads them: run_info's ``name, value``
pairs (``window_duration_ns``) and telemetry_statistics' counters (``Memory Used (bytes)``).
The human formats show such a row in a readable unit; CSV and JSON keep the raw values."""
from __future__ import annotations

import re
from typing import Any, List, Sequence

from ._table import Table
from ._units import table_byte_unit, table_time_unit

#: A counter's unit in its name: ``Memory Used (bytes)``, ``Disk Read (bytes/s)``.
_BYTE_COUNTER = re.compile(r"^(?P<name>.*) \(bytes(?P<rate>/s)?\)$")

#: The statistics of a counter row that are in its unit (``samples`` is a count).
_STATISTICS = ("mean", "minimum", "maximum")


def with_row_units(table: Table) -> Table:
    """`table` with each row that names its unit shown in a readable one: a ``name, value`` row
    whose name ends in ``_ns`` as a duration (``window_duration`` ``1.898 s``), a counter in
    bytes or bytes/s in KiB, MiB or GiB (its statistics scaled, the unit in its name); any other
    table as it is."""
    if table.columns == ("name", "value"):
        return Table.of(table.name, table.title, table.columns, [_named_value(*row) for row in table.rows])
    if "counter" in table.columns and all(column in table.columns for column in _STATISTICS):
        return Table.of(table.name, table.title, table.columns, [_counter_row(table, row) for row in table.rows])
    return table


def _named_value(name: Any, value: Any) -> List[Any]:
    if not (isinstance(name, str) and name.endswith("_ns")):
        return [name, value]
    try:
        nanoseconds = float(value)
    except (TypeError, ValueError):
        return [name, value]
    scale, unit = table_time_unit([nanoseconds])
    return [name[:-len("_ns")], f"{nanoseconds / scale:,.3f} {unit}"]


def _counter_row(table: Table, row: Sequence[Any]) -> List[Any]:
    cells = list(row)
    counter = cells[table.columns.index("counter")]
    found = _BYTE_COUNTER.match(counter) if isinstance(counter, str) else None
    if found is None:
        return cells
    positions = [table.columns.index(column) for column in _STATISTICS]
    scale, unit = table_byte_unit([cells[index] for index in positions if cells[index] is not None])
    for index in positions:
        if cells[index] is not None:
            cells[index] = cells[index] / scale
    cells[table.columns.index("counter")] = f"{found['name']} ({unit}{found['rate'] or ''})"
    return cells
