"""The list of analyses: what ``perfprof summary`` runs and in which order, with their titles."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Optional, TypeVar

from ._run_database import RunDatabase
from ._table import Table

AnalysisFunction = Callable[..., Table]
_F = TypeVar("_F", bound=AnalysisFunction)


@dataclass(frozen=True)
class Analysis:
    """One analysis: ``function(run, **options)`` returns a :class:`Table`."""

    name: str
    title: str
    section: str              # one of SECTIONS: how reports group and order them
    function: AnalysisFunction
    takes_top: bool           # accepts ``top=N`` (the N largest rows)
    in_summary: bool          # a section of ``perfprof summary`` (series for plots are not)

    def __call__(self, run: RunDatabase, top: int = 10) -> Table:
        return self.function(run, top=top) if self.takes_top else self.function(run)


#: Report sections in order: the run and its steps, the GPUs, the host, memory, telemetry.
SECTIONS = ("run", "gpu", "host", "memory", "telemetry")

#: Every analysis by name, in report order (by section, then as registered).
ANALYSES: Dict[str, Analysis] = {}


def analysis(name: str, title: str, section: str, takes_top: bool = False,
             in_summary: bool = True) -> Callable[[_F], _F]:
    """Register the decorated function as the analysis `name`."""
    def register(function: _F) -> _F:
        if name in ANALYSES:
            raise ValueError(f"analysis {name!r} is registered twice")
        if section not in SECTIONS:
            raise ValueError(f"analysis {name!r}: section {section!r} is not one of {SECTIONS}")
        registered = dict(ANALYSES, **{name: Analysis(name, title, section, function, takes_top, in_summary)})
        ANALYSES.clear()
        ANALYSES.update(sorted(registered.items(), key=lambda item: SECTIONS.index(item[1].section)))
        return function
    return register


def shipped_query(run: RunDatabase, name: str, sql_name: Optional[str] = None, **params: Any) -> Table:
    """The registered analysis `name` as its shipped query ``sql/<sql_name or name>.sql`` answers it
    on `run`, titled as registered; `params` are the query's named parameters."""
    return run.query(sql_name or name, ANALYSES[name].title, params, name=name)
