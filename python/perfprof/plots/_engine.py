"""The plot engine: the runs of an invocation, their configuration, the PNGs and the log.

:func:`prepare` reads the layout and the configuration (cheap; errors there are the caller's
mistakes), :func:`draw` opens the runs' databases and draws each configured plot. A plot whose
table is empty is skipped, one that raises is failed; neither stops the others, and the log says
which and why.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import sqlite3
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .._files import make_directory
from .._messages import listed
from ..analysis import RunDatabase, Table, open_run
from ..analysis._run_labels import run_labels
from ._catalogue import MULTI_RUN_PLOTS, SINGLE_RUN_PLOTS, Requirement
from ._config import PlotConfig, config_path_for, load_config
from ._layout import PLOTS_DIR, Run, grouped, home_of, run_dirs_of
from ._log import LOG_FILE, PlotLog
from ._style import save, themed


@dataclasses.dataclass(frozen=True)
class PlotJob:
    """What an invocation will draw: its runs, where, and with which configuration."""

    runs: List[Run]
    output_dir: str
    config: PlotConfig
    notes: List[str]  # what the log should say about how the configuration was found

    @property
    def multi_run(self) -> bool:
        return len(self.runs) > 1

    @property
    def plot_names(self) -> Sequence[str]:
        """The plots to draw: the configuration's multi-run or single-run list."""
        return self.config.multi_run_plots if self.multi_run else self.config.single_run_plots


@dataclasses.dataclass
class PlotResult:
    """What :func:`draw` did. ``ok``: at least one PNG was written and no plot failed."""

    output_dir: str
    log_file: str
    written: List[str] = dataclasses.field(default_factory=list)             # PNG paths
    skipped: List[Tuple[str, str]] = dataclasses.field(default_factory=list)  # (plot, why)
    failed: List[Tuple[str, str]] = dataclasses.field(default_factory=list)   # (plot or run, error)

    @property
    def ok(self) -> bool:
        return bool(self.written) and not self.failed

    def problem(self) -> str:
        """Why the result is not ok, naming the log ("" when it is)."""
        if self.failed:
            return (f"{len(self.failed)} plot(s) or run(s) failed ({listed([name for name, _ in self.failed], ', ')}); "
                    f"see {self.log_file}")
        if not self.written:
            return f"no plot had data to draw; see {self.log_file}"
        return ""


def prepare(paths: Sequence[str], output: Optional[str] = None, theme: Optional[str] = None,
            config_file: Optional[str] = None) -> PlotJob:
    """The plot job for the run directories at or under `paths`.

    `config_file` is ``--config`` (first in the priority chain), `theme` overrides the
    configuration's. Raises :class:`~perfprof.plots.NoRunError` for a path without a run and
    :class:`~perfprof.plots.PlotConfigError` for a configuration that cannot be used.
    """
    run_dirs = run_dirs_of(paths)
    home = home_of(run_dirs)
    notes: List[str] = []
    config = load_config(config_path_for(config_file, home, notes.append))
    if theme is not None:
        config = dataclasses.replace(config, theme=theme)
    runs = grouped(run_dirs, config.baselines, config.treatments)
    return PlotJob(runs, output or os.path.join(home, PLOTS_DIR), config, notes)


def draw(job: PlotJob, on_plot: Callable[[str], None] = lambda _: None,
         on_build: Optional[Callable[[str], None]] = None) -> PlotResult:
    """Draw `job`'s plots into its output folder, logging to ``perfprof_plot.log`` there.

    `on_plot` is called with each plot's name once it is done (progress); `on_build` with a
    line saying which run's database is being built first, from what (that takes a while).
    """
    make_directory(job.output_dir, follow_link=True)
    result = PlotResult(job.output_dir, os.path.join(job.output_dir, LOG_FILE))
    with PlotLog(result.log_file) as log, contextlib.ExitStack() as databases:
        _log_job(log, job)
        opened = _open_runs(job.runs, databases, log, result, on_build)
        for name in job.plot_names if opened else ():
            _draw_plot(name, job, opened, log, result)
            on_plot(name)
        log.line(f"done: {len(result.written)} written, {len(result.skipped)} skipped, {len(result.failed)} failed")
    return result


def _log_job(log: PlotLog, job: PlotJob) -> None:
    config = job.config
    log.line(f"mode: {'multi-run' if job.multi_run else 'single-run'}, {len(job.runs)} run(s)")
    for run in job.runs:
        log.line(f"run: {run.path}" + (f" ({run.group})" if run.group else ""))
    for note in job.notes:
        log.line(f"note: {note}")
    log.line(f"config: {config.source} (theme {config.theme}, top_n {config.top_n}, "
             f"plots {', '.join(job.plot_names) or 'none'})")
    log.line(f"output: {job.output_dir}")


def _open_runs(runs: Sequence[Run], databases: contextlib.ExitStack, log: PlotLog, result: PlotResult,
               on_build: Optional[Callable[[str], None]]) -> Dict[Run, RunDatabase]:
    """Each run's database (built from its capture or trace when it has none); a run that
    cannot be opened is logged as failed and left out."""
    opened = {}
    for run in runs:
        try:
            opened[run] = databases.enter_context(open_run(run.path, on_build=on_build))
        except (OSError, ValueError, sqlite3.Error) as error:  # sqlite3: locked, corrupt, another tool's
            problem = f"not a readable perfprof database: {error}" if isinstance(error, sqlite3.Error) else str(error)
            log.line(f"failed run {run.path}: {problem}")
            result.failed.append((run.path, problem))
    return opened


class _NoData(Exception):
    """A plot whose tables are empty: the message says what the run lacks."""


def _draw_plot(name: str, job: PlotJob, runs: Dict[Run, RunDatabase], log: PlotLog, result: PlotResult) -> None:
    """Draw one plot into ``<name>.png``; what happened goes to the log and `result`."""
    path = os.path.join(job.output_dir, f"{name}.png")
    try:
        with themed(job.config.theme):
            save(_multi(name, job, runs) if job.multi_run else _single(name, job, runs), path)
    except _NoData as reason:
        log.line(f"skipped {name}: {reason}")
        result.skipped.append((name, str(reason)))
        return
    except Exception as error:  # a plot's bug or bad data must not cost the other plots
        log.line(f"failed {name}: {type(error).__name__}: {error}")
        result.failed.append((name, f"{type(error).__name__}: {error}"))
        return
    log.line(f"wrote {path}")
    result.written.append(path)


def _single(name: str, job: PlotJob, runs: Dict[Run, RunDatabase]) -> Any:
    """The figure of single-run plot `name`."""
    plot = SINGLE_RUN_PLOTS[name]
    (database,) = runs.values()
    table = plot.load(database, job.config)
    if not table.rows:
        raise _NoData(_missing(table, plot.needs))
    return plot.draw(table)


def _multi(name: str, job: PlotJob, runs: Dict[Run, RunDatabase]) -> Any:
    """The figure of multi-run plot `name`."""
    plot = MULTI_RUN_PLOTS[name]
    labels = run_labels(list(runs.values()))
    tables = {f"[{run.group}] {label}" if run.group else label: plot.load(database, job.config)
              for (run, database), label in zip(runs.items(), labels)}
    if not any(table.rows for table in tables.values()):
        raise _NoData(_missing(next(iter(tables.values())), plot.needs))
    return plot.draw(tables, job.config)


def _missing(table: Table, needs: Requirement) -> str:
    return f"no data ({table.name} is empty: it needs {needs})"
