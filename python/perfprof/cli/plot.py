"""``perfprof plot``: the PNGs of one run, or the comparisons of several (docs/plots.md)."""
from __future__ import annotations

import sys
from typing import List, Optional

import click

from .._messages import ELLIPSIS, LISTED_ITEMS, one_line
from ..plots._style import THEMES
from . import EXIT_FAILED, EXIT_OK


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("-o", "--output", type=click.Path(file_okay=False), default=None,
              help="The folder for the PNGs and perfprof_plot.log [default: RUN/plots, or plots/ in the "
                   "runs' common folder].")
@click.option("--theme", type=click.Choice(list(THEMES)), default=None, help="Colours [default: the configuration's].")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A plot-config file, over the run's .perfprof-plot-config.yaml and ~/.perfprof/plot_config.yaml.")
def plot(paths: List[str], output: Optional[str], theme: Optional[str], config_file: Optional[str]) -> None:
    """Draw the plots of the run directories at or under PATHS (or of Chrome trace files) as PNGs.

    \b
    perfprof plot result/host_1234_20261123101500_perfprof
    perfprof plot --theme dark result/            # every run under result/: compared
    perfprof plot base_perfprof new_perfprof -o cmp

    One run: its step times, step breakdown, top kernels and operators, GPU utilisation, memory
    and idle time. Several runs: their step-time distributions and kernel and operator times
    side by side. A plot without data (no GPU in the run) is skipped; perfprof_plot.log beside
    the PNGs says what was written and skipped, and why.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..plots import NoRunError, PlotConfigError, draw, prepare

    console = Console(stderr=True)
    try:
        job = prepare(paths, output, theme, config_file)
    except (NoRunError, PlotConfigError) as error:
        raise click.ClickException(str(error)) from None
    with Progress(TextColumn("plotting {task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("", total=len(job.plot_names))
        result = draw(job, on_plot=lambda name: progress.advance(task),
                      on_build=lambda what: progress.update(task, description=f"({what})"))
    for path in result.written:
        console.print(f"[green]wrote[/green] {path}", highlight=False, soft_wrap=True)
    for name, reason in result.skipped:
        console.print(f"[yellow]skipped[/yellow] {name}: {reason}", highlight=False, soft_wrap=True)
    for name, problem in result.failed[:LISTED_ITEMS]:
        console.print(f"[red]failed[/red] {name}: {one_line(problem)}", highlight=False, soft_wrap=True)
    if len(result.failed) > LISTED_ITEMS:
        console.print(f"[red]failed[/red] {ELLIPSIS} and {len(result.failed) - LISTED_ITEMS:,} more: "
                      f"{result.log_file} lists every one", highlight=False, soft_wrap=True)
    if not result.ok:
        console.print(f"perfprof plot: {result.problem()}", highlight=False, soft_wrap=True)
    sys.exit(EXIT_OK if result.ok else EXIT_FAILED)
