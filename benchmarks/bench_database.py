"""Run database export throughput: a 1M-event trace to SQLite, beside torch_npu's way of writing one.

    python benchmarks/bench_database.py [--events 1000000] [--repeats 3]

The trace is bench_export.py's (16 threads through the public API: record_function and mstx
ranges, mstx marks, counter samples). perfprof's export (Trace.export_database: prepared
statements, one transaction) is timed on one core (the process is pinned to CPU 0), best of
--repeats, and reported as rows/s over every table it writes. The comparison writes the same rows
(read back from perfprof's file, not timed) the way torch_npu's profiler writes its database:
Python's sqlite3, executemany in batches of 10,000 rows, a commit per batch, default pragmas.
"""
from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from typing import Dict, List, Tuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_export import record_mixed_trace  # noqa: E402

BATCH = 10_000


def table_rows(path: str) -> Dict[str, Tuple[str, List[tuple]]]:
    """Each table's CREATE statement and rows."""
    connection = sqlite3.connect(path)
    tables = connection.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    rows = {name: (sql, connection.execute(f"SELECT * FROM {name}").fetchall()) for name, sql in tables}
    connection.close()
    return rows


def write_like_torch_npu(path: str, tables: Dict[str, Tuple[str, List[tuple]]]) -> None:
    connection = sqlite3.connect(path)
    for name, (sql, rows) in tables.items():
        connection.execute(sql)
        if not rows:
            continue
        insert = f"INSERT INTO {name} VALUES ({','.join('?' * len(rows[0]))})"
        for start in range(0, len(rows), BATCH):
            connection.executemany(insert, rows[start:start + BATCH])
            connection.commit()
    connection.close()


def best_seconds(write, path: str, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        if os.path.exists(path):
            os.remove(path)
        start = time.perf_counter()
        write(path)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    prof, _ = record_mixed_trace(args.events)
    os.sched_setaffinity(0, {0})
    with tempfile.TemporaryDirectory() as directory:
        ours = os.path.join(directory, "perfprof.db")
        seconds = best_seconds(lambda path: prof.trace.export_database(path, []), ours, args.repeats)
        tables = table_rows(ours)
        rows = sum(len(table_rows_) for _, table_rows_ in tables.values())
        size = os.path.getsize(ours)
        theirs = os.path.join(directory, "torch_npu_style.db")
        their_seconds = best_seconds(lambda path: write_like_torch_npu(path, tables), theirs, 1)
    print(f"trace: {prof.trace.num_ranges} ranges, {prof.trace.num_instants} instants, "
          f"{prof.trace.num_counters} counters -> {rows} rows in {len(tables)} tables, {size / 2**20:.1f} MiB")
    print(f"perfprof export_database (one core):   {seconds:.3f} s  {rows / seconds / 1e6:.2f} M rows/s")
    print(f"sqlite3 executemany, 10k-row batches:  {their_seconds:.3f} s  {rows / their_seconds / 1e6:.2f} M rows/s")
    print(f"ratio: perfprof is {their_seconds / seconds:.1f}x faster")


if __name__ == "__main__":
    main()
