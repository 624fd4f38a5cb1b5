"""Reading perfprof's run database (docs/formats/database.md) in tests."""
from __future__ import annotations

import sqlite3
import subprocess
from typing import Any, List, Tuple

# An `nsys stats` cuda_gpu_kern_sum-style summary, written for Nsight Systems' schema: it must
# run unchanged on perfprof's database.
NSYS_KERNEL_SUMMARY = """
SELECT names.value AS name, count(*) AS instances, sum(k.end - k.start) AS total,
       avg(k.end - k.start) AS average, min(k.end - k.start) AS minimum, max(k.end - k.start) AS maximum
FROM CUPTI_ACTIVITY_KIND_KERNEL AS k JOIN StringIds AS names ON names.id = k.demangledName
GROUP BY names.value ORDER BY total DESC
"""


def query(path: str, sql: str, *params: Any) -> List[Tuple[Any, ...]]:
    connection = sqlite3.connect(path)
    try:
        return connection.execute(sql, params).fetchall()
    finally:
        connection.close()


def text(path: str, string_id: int) -> str:
    return query(path, "SELECT value FROM StringIds WHERE id = ?", string_id)[0][0]


def assert_sound(path: str) -> None:
    """Python's sqlite3 and the sqlite3 command-line tool both find the file intact."""
    assert query(path, "PRAGMA integrity_check") == [("ok",)]
    cli = subprocess.run(["sqlite3", path, "PRAGMA integrity_check; SELECT count(*) FROM StringIds;"],
                         capture_output=True, text=True, check=True)
    lines = cli.stdout.split()
    assert lines[0] == "ok" and int(lines[1]) == query(path, "SELECT count(*) FROM StringIds")[0][0]


def us_to_ns(value: float) -> int:
    """A Chrome trace time (us with three decimals) in ns, exactly."""
    return round(value * 1000)
