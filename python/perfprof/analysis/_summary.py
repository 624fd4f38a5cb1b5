"""What ``perfprof summary`` reports: the analyses marked for it, run on one database."""
from __future__ import annotations

from typing import Callable, Iterable, List, Optional

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


def summary_tables(run: RunDatabase, top: int = 10, names: Optional[Iterable[str]] = None,
                   on_analysis: Optional[Callable[[Analysis], None]] = None) -> List[Table]:
    """Run the summary's analyses on `run`; `on_analysis` is called before each (progress)."""
    if not isinstance(top, int) or isinstance(top, bool) or top < 1:
        raise ValueError(f"summary: 'top' must be an int >= 1, got {top!r}")
    tables = []
    for entry in summary_analyses(names):
        if on_analysis:
            on_analysis(entry)
        tables.append(entry(run, top=top))
    return tables


def window_begin_ns(run: RunDatabase) -> Optional[int]:
    """The run's window start (META_DATA ``window_begin_ns``, ns since the Unix epoch), if recorded."""
    if not run.has_table("META_DATA"):
        return None
    row = run.execute("SELECT value FROM META_DATA WHERE name = 'window_begin_ns'", "window", "window").rows
    try:
        return int(row[0][0]) if row else None
    except (TypeError, ValueError):
        return None
