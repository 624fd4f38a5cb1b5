"""Plots of profiled runs: PNGs drawn from the analyses (``perfprof plot``, auto-plot).

::

    from perfprof import plots

    result = plots.plot(["result/host_1234_20261123_perfprof"], theme="dark")
    print(result.written, result.skipped, result.log_file)

One run directory gives its plots in ``<run>/plots/``; several (or a folder holding several)
give the comparisons across them. Which plots, their theme and sizes come from the plot
configuration (docs/plots.md). Drawing needs matplotlib and PyYAML (``perfprof[plot]``);
importing this package does not import them.
"""
from __future__ import annotations

from typing import Optional, Sequence

from ..analysis._run_database import NoRunError
from ._auto_plot import AutoPlot, AutoPlotError
from ._config import PlotConfig, PlotConfigError, load_config
from ._engine import PlotJob, PlotResult, draw, prepare

__all__ = [
    "AutoPlot", "AutoPlotError", "NoRunError", "PlotConfig", "PlotConfigError", "PlotJob", "PlotResult",
    "draw", "load_config", "plot", "prepare",
]


def plot(paths: Sequence[str], output: Optional[str] = None, theme: Optional[str] = None,
         config_file: Optional[str] = None) -> PlotResult:
    """Draw the plots of the run directories at or under `paths`: :func:`prepare` then :func:`draw`.

    Args:
        paths: run directories, or folders holding run directories (several runs: multi-run mode).
        output: the folder for the PNGs and ``perfprof_plot.log`` (default ``<run>/plots``, or
            ``plots`` in the runs' common folder).
        theme: "light" or "dark", over the configuration's.
        config_file: a plot-config file, over the run's and the user's.
    """
    return draw(prepare(paths, output, theme, config_file))
