"""The Distributed page of a `perfprof cluster` output folder: its verdict on slow ranks with the
evidence, and each rank's step breakdown, as `perfprof summary` reads that folder (the verdict of
``--format json``, the step table of ``--format csv``)."""
from __future__ import annotations

import csv
import os
from typing import Any, List, Tuple

from ..analysis import Table
from ._tables import shown_table
from ._views import EmptyPanel, Panel, TablePanel, TextPanel

_SLOW_RANK_COLUMNS = ("rank", "confidence", "dimensions", "summary")


def cluster_panels(output_dir: str) -> List[Panel]:
    """The verdict, the slow ranks, their evidence, then cluster_step_trace_time.csv."""
    from ..cluster import slow_ranks_of

    verdict = slow_ranks_of(output_dir)
    ranks = verdict["slow_ranks"]
    panels: List[Panel] = [TextPanel("Slow ranks", verdict["verdict"])]
    if ranks:
        panels.append(_dict_table("slow_ranks", "Slow ranks", ranks, _SLOW_RANK_COLUMNS))
        evidence = [item for rank in ranks for item in rank["evidence"]]
        panels.append(_dict_table("slow_rank_evidence", "The evidence, per rank and dimension", evidence,
                                  tuple(evidence[0]) if evidence else ()))
    panels.append(_step_table(output_dir))
    return panels


def _dict_table(name: str, title: str, rows: List[dict], columns: tuple) -> Panel:
    table = Table.of(name, title, columns, [[_plain(row[column]) for column in columns] for row in rows])
    return TablePanel(shown_table(table, None))


def _plain(value: Any) -> Any:
    """A cell as a table holds it: lists (a slow rank's dimensions) as their items."""
    return ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else value


def _step_table(output_dir: str) -> Panel:
    """cluster_step_trace_time.csv: each step of each rank, broken down (µs, as the file has them)."""
    from ..cluster._reduce import STEP_TRACE_FILE

    path = os.path.join(output_dir, STEP_TRACE_FILE)
    title = "Steps per rank: where each step's time went (µs; cluster_step_trace_time.csv)"
    if not os.path.isfile(path):
        return EmptyPanel(title, f"no {STEP_TRACE_FILE} in this output")
    with open(path, newline="", encoding="utf-8") as file:
        columns, *rows = list(csv.reader(file))
    cells = list(zip(*_typed_columns(list(zip(*rows)) if rows else [[] for _ in columns])))
    return TablePanel(shown_table(Table.of("cluster_step_trace_time", title, columns, cells), None))


def _typed_columns(columns: List[Tuple[str, ...]]) -> List[Tuple[Any, ...]]:
    """Each CSV column as numbers when every cell of it is one (ints where all are whole), else
    as its text: a column such as Index holds a rank's number or a stage's name."""
    typed = []
    for cells in columns:
        for kind in (int, float):
            try:
                typed.append(tuple(kind(cell) for cell in cells))
                break
            except ValueError:
                continue
        else:
            typed.append(tuple(cells))
    return typed
