"""Every plot by name: the analysis it reads, what a run must have recorded for it, how it is drawn.

A plot's name is its PNG's name (``step_times.png``) and the name the configuration lists.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Mapping, Protocol

from .. import analysis
from .._hints import how_to
from . import _multi_run, _single_run

if TYPE_CHECKING:
    from ..analysis import RunDatabase, Table


class PlotSettings(Protocol):
    """What loading and drawing a plot read of its configuration (_config.PlotConfig has them; the
    configuration validates plot names against this catalogue, so the catalogue does not import it)."""

    @property
    def top_n(self) -> int: ...
    @property
    def utilization_bins(self) -> int: ...


Load = Callable[["RunDatabase", PlotSettings], "Table"]


@dataclass(frozen=True)
class Requirement:
    """What a run must have recorded for a plot, said in the log when its table is empty: what,
    and how to record it (a perfprof._hints name: said where the user is)."""

    what: str
    hint: str

    def __str__(self) -> str:
        return f"{self.what} ({how_to(self.hint)})"


@dataclass(frozen=True)
class SingleRunPlot:
    """A plot of one run: ``draw(load(run, config))``."""

    name: str
    needs: Requirement
    load: Load
    draw: Callable[["Table"], Any]


@dataclass(frozen=True)
class MultiRunPlot:
    """A plot comparing runs: ``draw({label: load(run, config) for each run}, config)``."""

    name: str
    needs: Requirement
    load: Load
    draw: Callable[[Mapping[str, "Table"], PlotSettings], Any]


def step_times_with_median(run: "RunDatabase") -> "Table":
    """``step_times`` with the run's median step (``step_statistics``' median_ns) on each row: what
    the step_times plot draws, the median as every other output reads it."""
    steps = analysis.step_times(run)
    statistics = analysis.step_statistics(run).to_dicts()
    median = statistics[0]["median_ns"] if statistics else None
    return dataclasses.replace(steps, columns=steps.columns + ("median_ns",),
                               rows=tuple(row + (median,) for row in steps.rows))


_STEPS = Requirement("schedule steps (ProfilerStep#N ranges)", "steps")
_KERNELS = Requirement("GPU activity", "gpu")
_OPERATORS = Requirement("operators", "operators")

SINGLE_RUN_PLOTS: Dict[str, SingleRunPlot] = {plot.name: plot for plot in (
    SingleRunPlot("step_times", _STEPS, lambda run, config: step_times_with_median(run), _single_run.step_times),
    SingleRunPlot("step_time_breakdown", _STEPS, lambda run, config: analysis.step_time_breakdown(run),
                  _single_run.step_time_breakdown),
    SingleRunPlot("top_kernels", _KERNELS, lambda run, config: analysis.top_kernels(run, config.top_n),
                  _single_run.top_kernels),
    SingleRunPlot("top_operators", _OPERATORS, lambda run, config: analysis.top_operators(run, config.top_n),
                  _single_run.top_operators),
    SingleRunPlot("gpu_utilization", _KERNELS,
                  lambda run, config: analysis.gpu_utilization(run, config.utilization_bins),
                  _single_run.gpu_utilization),
    SingleRunPlot("memory_over_time", Requirement("memory events", "memory"),
                  lambda run, config: analysis.memory_over_time(run), _single_run.memory_over_time),
    SingleRunPlot("idle_time_breakdown", _KERNELS, lambda run, config: analysis.idle_time_breakdown(run),
                  _single_run.idle_time_breakdown),
    SingleRunPlot("host_telemetry", Requirement("host telemetry", "host_telemetry"),
                  lambda run, config: analysis.host_telemetry_over_time(run), _single_run.host_telemetry),
    SingleRunPlot("gpu_telemetry", Requirement("GPU telemetry", "gpu_telemetry"),
                  lambda run, config: analysis.gpu_telemetry_over_time(run), _single_run.gpu_telemetry),
)}

MULTI_RUN_PLOTS: Dict[str, MultiRunPlot] = {plot.name: plot for plot in (
    MultiRunPlot("step_time_distribution", _STEPS, lambda run, config: analysis.step_times(run),
                 lambda tables, config: _multi_run.step_time_distribution(tables)),
    MultiRunPlot("kernel_time_across_runs", _KERNELS, lambda run, config: analysis.top_kernels(run, config.top_n),
                 lambda tables, config: _multi_run.kernel_time_across_runs(tables, config.top_n)),
    MultiRunPlot("operator_time_across_runs", _OPERATORS,
                 lambda run, config: analysis.top_operators(run, config.top_n),
                 lambda tables, config: _multi_run.operator_time_across_runs(tables, config.top_n)),
)}
