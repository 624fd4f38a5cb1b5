"""The tables of a cluster analysis, defined once: what the map step writes for each run
directory (one Parquet file per table, from the rank's database through ``sql/rank_<table>.sql``)
and what the reduce step loads into ``cluster_analysis.duckdb`` under the same names.

Every table starts with ``rank`` (the rank's number, META_DATA ``rank``) and ``run`` (its run
directory): a rank may have several run directories, one per recorded cycle. The other columns
are those of the table's query, in its order, with times in nanoseconds since the Unix epoch
and durations in nanoseconds as in the run database.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Tuple

#: The columns every table starts with.
KEY_COLUMNS: Tuple[Tuple[str, str], ...] = (("rank", "INTEGER"), ("run", "VARCHAR"))


@dataclass(frozen=True)
class RankTable:
    """One table of the map step's output: its name (the DuckDB table, the Parquet folder, the
    query ``sql/rank_<name>.sql``) and its columns after the key columns, as (name, DuckDB type)."""

    name: str
    columns: Tuple[Tuple[str, str], ...]

    @property
    def query(self) -> str:
        """The name of the SQLite query that reads its rows from a rank's database."""
        return f"rank_{self.name}"

    @property
    def all_columns(self) -> Tuple[Tuple[str, str], ...]:
        """The key columns, then its own."""
        return KEY_COLUMNS + self.columns


_BIGINT = "BIGINT"

RUNS = RankTable("run", (
    ("world_size", "INTEGER"), ("backend", "VARCHAR"), ("step_time_source", "VARCHAR"), ("steps", _BIGINT),
    ("communication_ops", _BIGINT)))

STEPS = RankTable("steps", (
    ("step", "VARCHAR"), ("start_ns", _BIGINT), ("end_ns", _BIGINT), ("computing_ns", _BIGINT),
    ("communication_not_overlapped_ns", _BIGINT), ("overlapped_ns", _BIGINT), ("communication_ns", _BIGINT),
    ("free_ns", _BIGINT), ("stage_ns", _BIGINT), ("bubble_ns", _BIGINT),
    ("communication_not_overlapped_exclude_receive_ns", _BIGINT), ("preparing_ns", _BIGINT)))

COMMUNICATION = RankTable("communication", (
    ("name", "VARCHAR"), ("source", "VARCHAR"), ("start_ns", _BIGINT), ("end_ns", _BIGINT), ("bytes", _BIGINT),
    ("count", _BIGINT), ("data_type", "VARCHAR"), ("peer", "INTEGER"), ("step", "VARCHAR")))

KERNELS = RankTable("kernels", (("name", "VARCHAR"), ("type", "VARCHAR"), ("count", _BIGINT), ("total_ns", _BIGINT)))

OPERATORS = RankTable("operators", (("name", "VARCHAR"), ("count", _BIGINT), ("total_ns", _BIGINT)))

#: Every table the map step writes, in the order it writes them.
RANK_TABLES: Tuple[RankTable, ...] = (RUNS, STEPS, COMMUNICATION, KERNELS, OPERATORS)
