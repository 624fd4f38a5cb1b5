"""The ``perfprof`` command (also ``python -m perfprof``).

Exit codes: 0 everything asked for was done; 1 some of it failed (each failure is named);
2 the command line was wrong (click's usage error).
"""
from __future__ import annotations

import sys
from typing import List, Optional

import click

EXIT_OK = 0
EXIT_FAILED = 1


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="perfprof", prog_name="perfprof")
def main() -> None:
    """perfprof: what happens after a profiled run (analyse; more to come)."""


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("-j", "--max-process-number", type=click.IntRange(min=1), default=None,
              help="Run directories analysed at once, each in its own process [default: CPUs].")
@click.option("--data-simplification/--keep-capture", default=None,
              help="Remove each capture once its outputs are written, or keep it "
                   "[default: as the run was configured, which the capture records; kept when nothing says].")
def analyse(paths: List[str], max_process_number: Optional[int], data_simplification: Optional[bool]) -> None:
    """Write the traces and tables of the run directories at or under PATHS from their captures.

    A run directory holds a capture (capture.ppcap) when it was written with
    tensorboard_trace_handler(..., analyse_flag=False), or when its process was killed while
    recording: then what was recorded up to the last whole step is analysed, with a warning.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .._analyse import AnalyseResult, analyse as analyse_paths, find_run_dirs

    console = Console(stderr=True)
    total = sum(len(find_run_dirs(path)) for path in paths)
    failures = 0
    with Progress(TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("analyse", total=total)

        def report(result: AnalyseResult) -> None:
            nonlocal failures
            progress.advance(task)
            if not result.ok:
                failures += 1
                console.print(f"[red]failed[/red] {result.run_dir}: {result.message}", highlight=False, soft_wrap=True)
                return
            console.print(f"[green]ok[/green] {result.run_dir}: {result.message}", highlight=False, soft_wrap=True)
            if result.warning:
                console.print(f"  [yellow]warning[/yellow]: {result.warning}", highlight=False, soft_wrap=True)

        try:
            analyse_paths(paths, max_process_number, data_simplification, on_result=report)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    sys.exit(EXIT_FAILED if failures else EXIT_OK)
