"""Running analyses on one database, side by side; what ``perfprof summary`` reports: the
analyses marked for it."""
from __future__ import annotations

import os
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Callable, Iterable, List, Optional, Sequence

from ._registry import ANALYSES, Analysis
from ._run_database import RunDatabase
from ._table import Table


def summary_analyses(names: Optional[Iterable[str]] = None) -> List[Analysis]:
    """The analyses of a summary: those named (any registered one, in the order given), or every
    one marked ``in_summary``. Raises ``ValueError`` naming an unknown analysis and the known ones."""
    if names is None:
        return [entry for entry in ANALYSES.values() if entry.in_summary]
    chosen = []
    for name in names:
        if name not in ANALYSES:
            raise ValueError(f"no analysis named {name!r}; the analyses: {', '.join(ANALYSES)}")
        chosen.append(ANALYSES[name])
    return chosen


def run_analyses(run: RunDatabase, analyses: Optional[Sequence[Analysis]] = None, top: int = 10,
                 jobs: Optional[int] = None, on_done: Optional[Callable[[Analysis], None]] = None) -> List[Table]:
    """Run `analyses` (default: every registered one) on `run`, `jobs` at a time (default: one per
    CPU this process may use); their tables in the order given. `top` goes to those that take
    it; `on_done` is called as each finishes (progress). The first failure is raised once the
    analyses already running have ended; those not started are not run.

    The analyses share `run`: each thread queries through its own read-only connection, and
    SQLite lets other threads run while one executes a query, so they use every core."""
    if not isinstance(top, int) or isinstance(top, bool) or top < 1:
        raise ValueError(f"'top' must be an int >= 1, got {top!r}")
    chosen = list(ANALYSES.values()) if analyses is None else list(analyses)
    if jobs is None:
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"run_analyses: 'jobs' must be an int >= 1, got {jobs!r}")

    def one(entry: Analysis) -> Table:
        table = entry(run, top=top)
        if on_done:
            on_done(entry)
        return table

    if jobs == 1 or len(chosen) <= 1:
        return [one(entry) for entry in chosen]
    with ThreadPoolExecutor(max_workers=min(jobs, len(chosen)), thread_name_prefix="perfprof-analysis") as pool:
        futures = [pool.submit(one, entry) for entry in chosen]
        wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            future.cancel()  # those not started yet; leaving the block waits for the others
    for future in futures:
        if not future.cancelled() and future.exception() is not None:
            raise future.exception()  # type: ignore[misc]
    return [future.result() for future in futures]


def window_begin_ns(run: RunDatabase) -> Optional[int]:
    """The run's window start (META_DATA ``window_begin_ns``, ns since the Unix epoch), if recorded."""
    if not run.has_table("META_DATA"):
        return None
    row = run.execute("SELECT value FROM META_DATA WHERE name = 'window_begin_ns'", "window", "window").rows
    try:
        return int(row[0][0]) if row else None
    except (TypeError, ValueError):
        return None
