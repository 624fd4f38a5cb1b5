"""The plots comparing runs: each a function from one analysis Table per run to a Figure.

`tables` maps each run's label to its table, in the order the runs are drawn (the engine puts
baselines first, then treatments, then the rest, and writes the group into the label). A run
whose table is empty is drawn without data, not left out, so every comparison lists every run.
"""
from __future__ import annotations

from typing import Any, Dict, List, Mapping

from ..analysis import Table
from ._style import bar_height, colours, new_figure, unique
from ..analysis._units import scaled, time_unit


def step_time_distribution(tables: Mapping[str, Table]) -> Any:
    """The step durations of each run (``step_times``) as box plots side by side, the mean
    marked, one row per run."""
    labels = list(tables)[::-1]  # the first run on top
    durations = [tables[label].column("duration_ns") for label in labels]
    divisor, unit = time_unit(value for run in durations for value in run)
    from matplotlib import rcParams

    edge = {"color": rcParams["axes.edgecolor"]}  # the theme's: black whiskers vanish on the dark theme
    figure, (axes,) = new_figure(height=bar_height(len(labels)))
    boxes = axes.boxplot([scaled(run, divisor) for run in durations], orientation="horizontal", patch_artist=True,
                         showmeans=True, widths=0.6, medianprops={**edge, "linewidth": 1.5}, whiskerprops=edge,
                         capprops=edge, boxprops={"edgecolor": edge["color"]},
                         flierprops={"markeredgecolor": edge["color"]})
    axes.set_yticks(range(1, len(labels) + 1), labels=unique(labels))
    for box, colour in zip(boxes["boxes"], colours(len(labels))[::-1]):
        box.set(facecolor=colour, alpha=0.75)
    axes.set(title="Step time per run", xlabel=f"step duration ({unit})")
    return figure


def _time_across_runs(tables: Mapping[str, Table], column: str, top_n: int, title: str) -> Any:
    """Grouped horizontal bars: for the `top_n` names with the most `column` time over all runs
    (the largest on top), one bar per run. A name outside a run's table has no bar there."""
    values: Dict[str, Dict[str, float]] = {label: dict(zip(table.column("name"), table.column(column)))
                                           for label, table in tables.items()}
    totals: Dict[str, float] = {}
    for run in values.values():
        for name, value in run.items():
            totals[name] = totals.get(name, 0) + (value or 0)
    names: List[str] = sorted(totals, key=lambda name: (-totals[name], name))[:top_n][::-1]
    divisor, unit = time_unit(value or 0 for run in values.values() for value in run.values())
    figure, (axes,) = new_figure(height=bar_height(len(names) * (len(tables) + 1) / 2))
    height = 0.8 / len(tables)
    for index, (label, colour) in enumerate(zip(tables, colours(len(tables)))):
        # The first run's bar at the top of each group, as the legend lists the runs.
        offset = ((len(tables) - 1) / 2 - index) * height
        run = values[label]
        shown = [name for name in names if name in run]
        axes.barh([names.index(name) + offset for name in shown], scaled((run[name] for name in shown), divisor),
                  height=height, color=colour, label=label)
    axes.set_yticks(range(len(names)), labels=unique(names))
    axes.set(title=title, xlabel=f"time ({unit})")
    axes.legend(loc="lower right")
    return figure


def kernel_time_across_runs(tables: Mapping[str, Table], top_n: int) -> Any:
    """The `top_n` kernels' total time in each run (``top_kernels`` of each run)."""
    return _time_across_runs(tables, "total_ns", top_n, "Kernel total time per run")


def operator_time_across_runs(tables: Mapping[str, Table], top_n: int) -> Any:
    """The `top_n` operators' self time in each run (``top_operators`` of each run): self time,
    because an operator's total includes the operators it calls."""
    return _time_across_runs(tables, "self_ns", top_n, "Operator self time per run")
