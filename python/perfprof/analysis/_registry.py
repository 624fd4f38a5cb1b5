"""The list of analyses: what ``perfprof summary`` runs and in which order, with their titles."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, TypeVar

from ._run_database import RunDatabase
from ._table import Table

AnalysisFunction = Callable[..., Table]
_F = TypeVar("_F", bound=AnalysisFunction)


@dataclass(frozen=True)
class Analysis:
    """One analysis: ``function(run, **options)`` returns a :class:`Table`."""

    name: str
    title: str
    section: str              # "run", "gpu", "host" or "memory": how reports group them
    function: AnalysisFunction
    takes_top: bool           # accepts ``top=N`` (the N largest rows)
    in_summary: bool          # a section of ``perfprof summary`` (series for plots are not)

    def __call__(self, run: RunDatabase, top: int = 10) -> Table:
        return self.function(run, top=top) if self.takes_top else self.function(run)


#: Every analysis by name, in report order.
ANALYSES: Dict[str, Analysis] = {}


def analysis(name: str, title: str, section: str, takes_top: bool = False,
             in_summary: bool = True) -> Callable[[_F], _F]:
    """Register the decorated function as the analysis `name`."""
    def register(function: _F) -> _F:
        if name in ANALYSES:
            raise ValueError(f"analysis {name!r} is registered twice")
        ANALYSES[name] = Analysis(name, title, section, function, takes_top, in_summary)
        return function
    return register
