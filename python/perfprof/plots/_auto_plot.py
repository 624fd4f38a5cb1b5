"""Auto-plot: the plot engine run on a run directory once it is written.

Whether it runs is resolved once, when the handler is made (:meth:`AutoPlot.resolve`): an
explicit ``auto_plot`` wins; otherwise a ``plot`` envelope (a plot configuration, inline or a
file) turns it on; otherwise it is off. A failure is one WARNING and the run's data stays as it
was written, unless ``plot_required``: then it is raised as :class:`AutoPlotError`.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Mapping, Optional, Union

from .._logging import logger

#: A plot configuration given with a run: its keys, or the path of a plot-config file.
Envelope = Union[Mapping[str, Any], str]


class AutoPlotError(RuntimeError):
    """Auto-plot failed for a run whose plots are required (``plot_required``)."""


@dataclasses.dataclass(frozen=True)
class AutoPlot:
    """What happens after each run directory is written."""

    enabled: bool = False
    required: bool = False
    envelope: Optional[Envelope] = None

    @classmethod
    def resolve(cls, auto_plot: Optional[bool], plot_required: bool, envelope: Optional[Envelope]) -> "AutoPlot":
        """Resolve the flag: explicit `auto_plot` wins, else an `envelope` means on, else off."""
        enabled = auto_plot if auto_plot is not None else envelope is not None
        if auto_plot is False and envelope is not None:
            logger.info("perfprof: auto_plot is false: the plot configuration given is not used "
                        "(`perfprof plot RUN --config FILE` plots the run later)")
        if plot_required and not enabled:
            logger.debug("perfprof: plot_required has no effect: auto-plot is off")
        return cls(enabled, plot_required and enabled, envelope if enabled else None)

    def after_write(self, run_dir: str) -> None:
        """Plot `run_dir` if enabled. Raises :class:`AutoPlotError` on failure when required;
        otherwise a failure is logged as one WARNING."""
        if not self.enabled:
            return
        try:
            _plot(run_dir, self.envelope)
        except Exception as error:  # any failure of plotting: the profiled job's data is already safe
            message = f"auto-plot of {run_dir} failed: {_reason(error)}"
            if self.required:
                raise AutoPlotError(message) from error
            logger.warning("perfprof: %s (the run's data is intact; `perfprof plot %s` retries)", message, run_dir)


def _plot(run_dir: str, envelope: Optional[Envelope]) -> None:
    from .._files import replaced_whole
    from ._config import RUN_CONFIG_FILE, run_config_text
    from ._engine import draw, prepare

    if envelope is not None:
        # The run keeps its plot configuration, so `perfprof plot RUN` later draws the same plots.
        with replaced_whole(os.path.join(run_dir, RUN_CONFIG_FILE)) as file:
            file.write(run_config_text(envelope))
    result = draw(prepare([run_dir]))
    if not result.ok:
        raise RuntimeError(result.problem())


def _reason(error: BaseException) -> str:
    if isinstance(error, ImportError):
        return f"{error} (plotting needs matplotlib and PyYAML: pip install 'perfprof[plot]')"
    return f"{type(error).__name__}: {error}"
