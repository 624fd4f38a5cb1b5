"""The reduce step of a cluster analysis, in DuckDB over the map step's Parquet files: the
tables of ``_tables`` loaded into ``cluster_analysis.duckdb``, the tables derived from them
(``sql/cluster_*.sql``), and the files msprof-analyze users know, each written from one of them.

DuckDB runs the queries out of core (spilling to a folder beside the database past its memory
limit), so the memory this takes does not grow with the number of ranks.
"""
from __future__ import annotations

import contextlib
import json
import os
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Sequence

from .._files import replaced_whole, written_by_library
from .._messages import listed
from ..analysis._sql import sql_file_text
from ._map import SQL_DIR
from ._tables import RANK_TABLES, RankTable

if TYPE_CHECKING:
    import duckdb

DATABASE_FILE = "cluster_analysis.duckdb"
STEP_TRACE_FILE = "cluster_step_trace_time.csv"
COMMUNICATION_FILE = "cluster_communication.json"
MATRIX_FILE = "cluster_communication_matrix.json"
#: Every file the reduce step writes (the database's write-ahead log included).
OUTPUT_FILES = (DATABASE_FILE, f"{DATABASE_FILE}.wal", STEP_TRACE_FILE, COMMUNICATION_FILE, MATRIX_FILE)
#: DuckDB's memory limit for the reduce step (it spills to disk beyond it).
MEMORY_LIMIT = "1GB"


class ClusterError(ValueError):
    """The run directories do not make one cluster analysis (with what to do instead)."""


@contextlib.contextmanager
def new_database(output_dir: str) -> Iterator["duckdb.DuckDBPyConnection"]:
    """A connection to a new ``cluster_analysis.duckdb``, which replaces the one in `output_dir`
    when the block ends (and is dropped if it raises). DuckDB writes it, its write-ahead log and
    its spill files in a private folder beside it, which goes with them."""
    import duckdb

    with written_by_library(os.path.join(output_dir, DATABASE_FILE)) as path:
        spill = os.path.join(os.path.dirname(path), "spill")
        connection = duckdb.connect(path, config={"memory_limit": MEMORY_LIMIT, "temp_directory": spill})
        try:
            yield connection
        finally:
            connection.close()


def load_tables(connection: "duckdb.DuckDBPyConnection", files: Dict[str, List[str]], runs: List[str]) -> None:
    """Create each table of ``_tables`` from its Parquet `files` (by table name), with the rows
    of the run directories `runs`."""
    for table in RANK_TABLES:
        if files.get(table.name):
            connection.execute(f"CREATE TABLE {table.name} AS SELECT * FROM read_parquet(?) WHERE run IN "
                               "(SELECT unnest(?))", [files[table.name], runs])
        else:
            connection.execute(f"CREATE TABLE {table.name} ({_column_list(table)})")


def _column_list(table: RankTable) -> str:
    return ", ".join(f"{name} {sql_type}" for name, sql_type in table.all_columns)


def check_steps_are_unique(connection: "duckdb.DuckDBPyConnection") -> None:
    """Raise :class:`ClusterError` when a rank has a step in two run directories: runs of two
    jobs (or a job profiled twice) under one folder, which cannot be told apart."""
    clash = connection.execute("""
        SELECT rank, step, list(DISTINCT run ORDER BY run) FROM steps
        GROUP BY rank, step HAVING count(DISTINCT run) > 1
        ORDER BY rank, TRY_CAST(step AS BIGINT) LIMIT 1""").fetchone()
    if clash:
        rank, step, runs = clash
        raise ClusterError(f"rank {rank} has step {step} in {len(runs)} run directories ({listed(runs, ', ')}): "
                           "they come from different runs of the job; give perfprof cluster a folder that "
                           "holds one run of the job")


def derive_tables(connection: "duckdb.DuckDBPyConnection") -> None:
    """Create the derived tables: rank_steps, cluster_step_trace_time, collective_instances,
    collective_ranks, communication_matrix."""
    connection.execute(sql_file_text(SQL_DIR, "cluster_rank_steps"))
    connection.execute(f"CREATE TABLE cluster_step_trace_time AS {sql_file_text(SQL_DIR, 'cluster_step_trace_time')}")
    connection.execute(sql_file_text(SQL_DIR, "cluster_collective_instances"))
    connection.execute(f"CREATE TABLE collective_ranks AS {sql_file_text(SQL_DIR, 'cluster_communication')}")
    connection.execute(f"CREATE TABLE communication_matrix AS {sql_file_text(SQL_DIR, 'cluster_communication_matrix')}")


def write_files(connection: "duckdb.DuckDBPyConnection", output_dir: str) -> List[str]:
    """Write cluster_step_trace_time.csv, cluster_communication.json and
    cluster_communication_matrix.json into `output_dir`; returns their paths."""
    step_trace = os.path.join(output_dir, STEP_TRACE_FILE)
    with written_by_library(step_trace) as written:
        connection.execute(f"COPY cluster_step_trace_time TO '{_sql_path(written)}' (HEADER)")
    communication = os.path.join(output_dir, COMMUNICATION_FILE)
    _write_json(communication, _communication_document(connection))
    matrix = os.path.join(output_dir, MATRIX_FILE)
    _write_json(matrix, {"pairs": _records(connection, "SELECT * FROM communication_matrix ORDER BY src, dst, op")})
    return [step_trace, communication, matrix]


def _communication_document(connection: "duckdb.DuckDBPyConnection") -> Dict[str, Any]:
    """Per collective: its instances and ranks, then each rank's totals over them."""
    collectives: Dict[str, Any] = {}
    for name, instances, ranks in connection.execute("""
            SELECT name, max(instance), max(ranks) FROM collective_instances GROUP BY name ORDER BY name""").fetchall():
        collectives[name] = {"instances": instances, "ranks": ranks, "per_rank": {}}
    for record in _records(connection, "SELECT * FROM collective_ranks ORDER BY name, rank"):
        name, rank = record.pop("name"), record.pop("rank")
        collectives[name]["per_rank"][str(rank)] = record
    return {"time_unit": "ns", "collectives": collectives}


def _records(connection: "duckdb.DuckDBPyConnection", query: str) -> List[Dict[str, Any]]:
    cursor = connection.execute(query)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, _json_values(row))) for row in cursor.fetchall()]


def _json_values(row: Sequence[Any]) -> List[Any]:
    # DuckDB's sums of BIGINT are HUGEINT and its averages DECIMAL or DOUBLE: JSON numbers.
    return [value if value is None or isinstance(value, (int, float, str, bool)) else float(value) for value in row]


def _write_json(path: str, document: Dict[str, Any]) -> None:
    with replaced_whole(path) as file:
        json.dump(document, file, indent=1)
        file.write("\n")


def _sql_path(path: str) -> str:
    return path.replace("'", "''")
