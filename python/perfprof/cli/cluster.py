"""``perfprof cluster``: one view of a distributed job's ranks (docs/cluster.md)."""
from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Iterator, Optional

import click

from .._messages import ELLIPSIS, LISTED_ITEMS, one_line
from ..cluster import MODES
from . import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from ..cluster import ClusterResult, Progress as ClusterProgress, RunSummary


@click.command()
@click.argument("directory", type=click.Path(exists=True, file_okay=False))
@click.option("-o", "--output", "output_dir", type=click.Path(file_okay=False), default=None,
              help="Where the outputs go [default: DIRECTORY/cluster_analysis_output].")
@click.option("--mode", type=click.Choice(MODES), default="local", show_default=True,
              help="local: summarise the ranks in processes here; dask: on a Dask cluster "
                   "(--scheduler, or a LocalCluster started here).")
@click.option("--scheduler", metavar="ADDRESS", default=None,
              help="With --mode dask: a running Dask scheduler (tcp://host:8786); its workers must see "
                   "DIRECTORY and the output folder at the same paths.")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Ranks summarised at once (processes, or LocalCluster workers) [default: CPUs].")
@click.option("--merge-trace", is_flag=True,
              help="Also write cluster_trace.json.gz: every rank's trace in one, a process per rank (large).")
def cluster(directory: str, output_dir: Optional[str], mode: str, scheduler: Optional[str], jobs: Optional[int],
            merge_trace: bool) -> None:
    """Analyse the ranks of a distributed job together: the run directories under DIRECTORY (one
    or more per rank; databases are built from captures where missing).

    Writes cluster_step_trace_time.csv (each step's breakdown per rank, with max, min and mean),
    cluster_communication.json and cluster_communication_matrix.json (collectives and
    point-to-point traffic), cluster_analysis.duckdb (all of it, queryable) and
    cluster_report.md, then prints its verdict: the slow ranks with their confidence and evidence,
    or "No slow rank".

    \b
    perfprof cluster result/                       # result/cluster_analysis_output/
    perfprof cluster result/ --mode dask --scheduler tcp://10.0.0.1:8786
    perfprof summary result/cluster_analysis_output
    """
    from rich.console import Console

    from ..analysis._run_database import NoRunError
    from ..cluster import ClusterError, MissingDependencyError, analyse_cluster

    console = Console(stderr=True)
    if scheduler is not None and mode != "dask":
        raise click.BadParameter("a scheduler's address needs --mode dask", param_hint="--scheduler")
    try:
        with _progress(console) as progress:
            result = analyse_cluster(directory, output_dir, mode, scheduler, jobs, merge_trace, progress)
    except (ClusterError, NoRunError, MissingDependencyError) as error:
        raise click.ClickException(str(error)) from None
    except OSError as error:  # the outputs could not be written (a full disk, a folder not ours)
        raise click.ClickException(f"cannot write the outputs: {one_line(str(error))}") from None
    _print_result(result)
    sys.exit(EXIT_FAILED if any(run.error for run in result.runs) else EXIT_OK)


@contextlib.contextmanager
def _progress(console: "Console") -> Iterator["ClusterProgress"]:
    """A progress bar over the ranks' run directories, then the stage being done; databases built
    from captures, and the first failures, printed as they happen (the rest are counted at the
    end: a job of thousands of ranks would fill the terminal)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..cluster import Progress as ClusterProgress

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bars:
        task = bars.add_task("summarising the ranks' runs", total=None)
        failures = 0

        def on_run(summary: "RunSummary") -> None:
            nonlocal failures
            bars.advance(task)
            if summary.error:
                failures += 1
                if failures <= LISTED_ITEMS:
                    console.print(f"[red]failed[/red] {summary.run_dir}: {summary.error}", highlight=False,
                                  soft_wrap=True)
                elif failures == LISTED_ITEMS + 1:
                    console.print("[red]failed[/red] more run directories: counted at the end", highlight=False)
            elif summary.built:
                console.print(summary.built, highlight=False, soft_wrap=True)

        yield ClusterProgress(on_runs=lambda count: bars.update(task, total=count), on_run=on_run,
                              on_stage=lambda stage: bars.update(task, description=stage))


def _print_result(result: "ClusterResult") -> None:
    from rich.markdown import Markdown

    from ..cluster._report import slow_rank_lines
    from ._terminal import report_console

    out = report_console()
    count = len(result.ranks)
    notes = [f"- {note}" for note in result.notes[:LISTED_ITEMS]]
    if len(result.notes) > LISTED_ITEMS:
        notes.append(f"- {ELLIPSIS} and {len(result.notes) - LISTED_ITEMS:,} more: cluster_report.md lists every one")
    lines = [f"{count} rank{'s' if count != 1 else ''} analysed."] + notes
    out.print(Markdown("\n".join(lines + [""] + slow_rank_lines(result.slow_ranks))))
    out.print(f"Written to {result.output_dir}: " + ", ".join(os.path.basename(path) for path in result.files),
              highlight=False, soft_wrap=True)
