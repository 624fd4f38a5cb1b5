"""The analyses' SQL: one query per file in ``sql/``, runnable as it is in any SQLite client
(``sqlite3 perfprof.db < top_kernels.sql``; named parameters set with ``.param set``)."""
from __future__ import annotations

import functools
import os

SQL_DIR = os.path.join(os.path.dirname(__file__), "sql")


@functools.lru_cache(maxsize=None)
def query_text(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    with open(os.path.join(SQL_DIR, f"{name}.sql"), encoding="utf-8") as file:
        return file.read()
