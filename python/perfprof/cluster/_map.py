"""The map step of a cluster analysis: one run directory's database read into small Parquet
files, one per table of ``_tables`` (``<parquet_dir>/<table>/run_<index>.parquet``).

It runs in a worker process, locally or on a Dask worker, so it takes and returns only plain
values, and it never raises: a run that cannot be read comes back with its error.
"""
from __future__ import annotations

import csv
import os
import sqlite3
from dataclasses import dataclass
from typing import Any, Iterable, List, Optional, Sequence

from .._files import make_directory, written_by_library
from .._messages import one_line
from ..analysis._sql import sql_file_text
from ._tables import RANK_TABLES, RankTable

SQL_DIR = os.path.join(os.path.dirname(__file__), "sql")
# How the CSV handed to DuckDB writes NULL (an empty field is an empty text).
_NULL = r"\N"


@dataclass(frozen=True)
class RunSummary:
    """What the map step found in one run directory."""

    run_dir: str
    rank: Optional[int] = None
    world_size: int = 0
    steps: int = 0
    communication_ops: int = 0
    built: str = ""  # what was built first, from what (its database, from its capture or trace); "" if nothing
    error: Optional[str] = None  # why it could not be read; nothing was written then


def summarize_run(run_dir: str, index: int, parquet_dir: str) -> RunSummary:
    """Write the Parquet files of the run directory `run_dir` under `parquet_dir` (file names
    numbered by `index`, unique per run directory). Builds the run's database from its capture
    or trace when it has none (or an older one)."""
    import duckdb

    from ..analysis import open_run

    built: List[str] = []
    try:
        with open_run(run_dir, on_build=built.append) as run:
            connection = sqlite3.connect(f"file:{run.path}?mode=ro", uri=True)
            try:
                return _write_tables(connection, run_dir, index, parquet_dir, "; ".join(built))
            finally:
                connection.close()
    except (OSError, ValueError, sqlite3.Error, duckdb.Error) as error:
        for table in RANK_TABLES:  # no part of a run that failed halfway
            _remove(_parquet_path(parquet_dir, table, index))
        return RunSummary(run_dir, built="; ".join(built), error=one_line(str(error)))


def _write_tables(connection: sqlite3.Connection, run_dir: str, index: int, parquet_dir: str,
                  built: str) -> RunSummary:
    row = connection.execute("SELECT value FROM META_DATA WHERE name = 'rank'").fetchone()
    if row is None:
        raise ValueError(f"{run_dir}: its database has no rank (META_DATA 'rank')")
    rank = int(row[0])
    summary: Optional[RunSummary] = None
    for table in RANK_TABLES:
        rows = connection.execute(sql_file_text(SQL_DIR, table.query)).fetchall()
        write_parquet(table, ((rank, run_dir) + tuple(values) for values in rows),
                      _parquet_path(parquet_dir, table, index))
        if summary is None:  # RANK_TABLES begins with the run's own row
            world_size, _, _, steps, communication_ops = rows[0]
            summary = RunSummary(run_dir, rank, int(world_size or 1), int(steps), int(communication_ops), built)
    assert summary is not None
    return summary


def write_parquet(table: RankTable, rows: Iterable[Sequence[Any]], path: str) -> None:
    """Write `rows` (values in the order of `table`'s columns) to the Parquet file `path`,
    through a CSV file that DuckDB reads with the columns' types (DuckDB takes rows from Python
    one at a time, a hundred times slower); both are written privately beside `path`."""
    import duckdb

    make_directory(os.path.dirname(path))
    with written_by_library(path) as written:
        staging = f"{written}.csv"
        with open(staging, "w", newline="", encoding="utf-8") as file:
            writer = csv.writer(file)
            writer.writerows([_NULL if value is None else value for value in values] for values in rows)
        types = ", ".join(f"'{name}': '{sql_type}'" for name, sql_type in table.all_columns)
        connection = duckdb.connect(config={"threads": 1})
        try:
            connection.execute(
                f"COPY (SELECT * FROM read_csv(?, auto_detect = false, header = false, delim = ',', quote = '\"', "
                f"escape = '\"', nullstr = '{_NULL}', columns = {{{types}}})) "
                "TO '" + written.replace("'", "''") + "' (FORMAT parquet)", [staging])
        finally:
            connection.close()


def _parquet_path(parquet_dir: str, table: RankTable, index: int) -> str:
    return os.path.join(parquet_dir, table.name, f"run_{index:05d}.parquet")


def _remove(path: str) -> None:
    if os.path.exists(path):
        os.remove(path)


def parquet_files(parquet_dir: str, table: RankTable) -> List[str]:
    """The Parquet files of `table` under `parquet_dir`, sorted."""
    folder = os.path.join(parquet_dir, table.name)
    return sorted(os.path.join(folder, name) for name in os.listdir(folder)) if os.path.isdir(folder) else []
