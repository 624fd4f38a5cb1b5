"""The analyses' SQL: one query per file in ``sql/``, runnable as it is in any SQLite client
(``sqlite3 perfprof.db < top_kernels.sql``; named parameters set with ``.param set``)."""
from __future__ import annotations

import functools
import os

SQL_DIR = os.path.join(os.path.dirname(__file__), "sql")


@functools.lru_cache(maxsize=None)
def sql_file_text(directory: str, name: str) -> str:
    """The text of ``<directory>/<name>.sql``."""
    with open(os.path.join(directory, f"{name}.sql"), encoding="utf-8") as file:
        return file.read()


def query_text(name: str) -> str:
    """The text of the analyses' ``sql/<name>.sql``."""
    return sql_file_text(SQL_DIR, name)
