"""The Diff page: what ``perfprof compare`` says about two runs (perfprof.experiments'
comparison: steps, operators, kernels and memory, each row with both runs' values, the new run's
difference and ratio, the largest regressions first), as panels."""
from __future__ import annotations

from typing import TYPE_CHECKING, List

from ._tables import shown_table
from ._views import EmptyPanel, Panel, TablePanel

if TYPE_CHECKING:
    from ..experiments._compare import Comparison

#: The rows of the operators and kernels sections: `perfprof compare`'s default --top.
DIFF_TOP = 10


def compare(base: str, new: str) -> "Comparison":
    """`perfprof compare BASE NEW`'s comparison of the runs at the paths `base` and `new`."""
    from ..experiments import compare_runs

    return compare_runs(base, [new], top=DIFF_TOP)


def diff_panels(comparison: "Comparison") -> List[Panel]:
    """The runs compared, then a table per section (or why it has none)."""
    panels: List[Panel] = [TablePanel(shown_table(comparison.runs_table(), None))]
    for section in comparison.sections:
        if section.note:
            panels.append(EmptyPanel(section.spec.title, section.note))
        else:
            panels.append(TablePanel(shown_table(section.table, None)))
    return panels
