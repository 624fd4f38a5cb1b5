"""One run's analyses for the pages, each run once per run and kept: a page and its next page
ask for the same tables."""
from __future__ import annotations

import threading
from typing import Any, Dict, Optional, Sequence, Tuple

from ..analysis import ANALYSES, Analysis, RunDatabase, Table
from ..analysis._summary import run_analyses, window_begin_ns

#: Every row of a top-N analysis (the analyses' own convention).
EVERY_ROW = -1

_Key = Tuple[str, Tuple[Tuple[str, Any], ...]]

#: Analyses asked for with a new time range at each zoom: computed each time, not kept.
_NOT_KEPT = frozenset({"memory_allocations"})


class RunData:
    """The analyses of one open run, by name and parameters, each computed on first use.

    Safe to share between threads (the server's): the run's database gives each thread its own
    connection, and an analysis asked for twice at once is computed twice, not corrupted."""

    def __init__(self, run: RunDatabase, label: str, trace_url: Optional[str] = None) -> None:
        self.run = run
        self.label = label
        self.trace_url = trace_url   # where the page downloads the run's Chrome trace; None: it has none
        self._lock = threading.Lock()
        self._tables: Dict[_Key, Table] = {}
        self._origin: Optional[int] = None
        self._origin_known = False

    def table(self, name: str, **params: Any) -> Table:
        """The registered analysis `name` (perfprof.analysis.ANALYSES) run with `params`."""
        key = (name, tuple(sorted(params.items())))
        with self._lock:
            known = self._tables.get(key)
        if known is not None:
            return known
        table = _entry(name).function(self.run, **params)
        if name not in _NOT_KEPT:
            with self._lock:
                self._tables[key] = table
        return table

    def prefetch(self, names: Sequence[str], top: int) -> None:
        """Compute those of the analyses `names` not computed yet side by side, one thread per
        CPU (as `perfprof summary` runs them), `top` given to those that take it: what a view
        asks for next, then answered from memory."""
        keys = {name: (name, (("top", top),) if _entry(name).takes_top else ()) for name in names}
        with self._lock:
            wanted = [_entry(name) for name, key in keys.items() if key not in self._tables]
        for entry, table in zip(wanted, run_analyses(self.run, wanted, top=top)):
            with self._lock:
                self._tables[keys[entry.name]] = table

    @property
    def origin_ns(self) -> Optional[int]:
        """The run's window start (ns since the Unix epoch): times of day are shown from it."""
        if not self._origin_known:
            self._origin, self._origin_known = window_begin_ns(self.run), True
        return self._origin


def _entry(name: str) -> Analysis:
    if name not in ANALYSES:
        raise ValueError(f"no analysis named {name!r}; the analyses: {', '.join(ANALYSES)}")
    return ANALYSES[name]
