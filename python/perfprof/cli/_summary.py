"""``perfprof summary``: the summary analyses of each run, printed in the chosen format."""
from __future__ import annotations

import itertools
import json
import os
import sqlite3
from typing import TYPE_CHECKING, List, Optional, Sequence

import click

from ..cluster import is_cluster_output

if TYPE_CHECKING:
    from rich.console import Console

    from ..analysis import Analysis, Table


def print_summaries(paths: List[str], output_format: str, top: int, names: Optional[List[str]]) -> int:
    """Print the summary of every run at `paths`; returns the exit code (1 when a run failed)."""
    from rich.console import Console

    from ..analysis._summary import summary_analyses

    try:
        summary_analyses(names)
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--analysis") from None
    console = Console(stderr=True)
    failed = 0
    clusters = [path for path in paths if is_cluster_output(path)]
    for path in clusters:
        _print_cluster(path, output_format)
    runs = _runs_at([path for path in paths if path not in clusters])
    for run_path in runs:
        try:
            _print_summary(run_path, output_format, top, names, console, heading=len(runs) > 1)
        except BrokenPipeError:
            raise  # the reader is gone: no run failed (perfprof.cli ends the command)
        except (OSError, ValueError) as error:
            failed += 1
            console.print(f"[red]failed[/red] {run_path}: {error}", highlight=False, soft_wrap=True)
        except sqlite3.Error as error:  # a corrupt or foreign database file
            failed += 1
            console.print(f"[red]failed[/red] {run_path}: not a readable perfprof database: {error}",
                          highlight=False, soft_wrap=True)
    return 1 if failed else 0


def _print_cluster(path: str, output_format: str) -> None:
    """Print the outputs of `perfprof cluster` in `path`: its report (text, markdown), its step
    table (csv), or its verdict on slow ranks and report (json)."""
    from ..cluster._reduce import STEP_TRACE_FILE
    from ..cluster._report import REPORT_FILE

    with open(os.path.join(path, REPORT_FILE), encoding="utf-8") as file:
        report = file.read()
    if output_format == "markdown":
        click.echo(report, nl=False)
    elif output_format == "csv":
        with open(os.path.join(path, STEP_TRACE_FILE), encoding="utf-8") as file:
            click.echo(file.read(), nl=False)
    elif output_format == "json":
        from ..cluster import slow_ranks_of

        click.echo(json.dumps({"cluster": path, **slow_ranks_of(path), "report": report}, indent=1))
    else:
        from rich.markdown import Markdown

        from ._terminal import report_console

        report_console().print(Markdown(report))


def _runs_at(paths: List[str]) -> List[str]:
    """Each path as given when it is a run (a run directory, its output folder or a database
    file), else the run directories under it."""
    from ..analysis._run_database import NoRunError, find_runs
    from .._run_directory import OUTPUT_DIR

    runs = []
    for path in paths:
        if os.path.isfile(path) or os.path.basename(os.path.normpath(path)) == OUTPUT_DIR:
            runs.append(path)
            continue
        try:
            runs += find_runs(path)
        except NoRunError:
            runs.append(path)  # open_run says what is missing and how to get it
    return runs


def _print_summary(run_path: str, output_format: str, top: int, names: Optional[List[str]], console: "Console",
                   heading: bool) -> None:
    from ..analysis import open_run
    from ..analysis._formats import to_csv, to_json, to_markdown
    from ..analysis._summary import run_analyses, summary_analyses, window_begin_ns

    def building(what: str) -> None:
        console.print(what, highlight=False, soft_wrap=True)

    with open_run(run_path, on_build=building) as run:
        chosen = summary_analyses(names)
        finished = itertools.count(1)
        with console.status(f"analysing {run_path}") as status:
            def done(entry: "Analysis") -> None:
                status.update(f"analysing {run_path}: {next(finished)}/{len(chosen)} analyses done ({entry.name})")

            tables = run_analyses(run, chosen, top, on_done=done)
        origin = window_begin_ns(run)
        if output_format == "json":
            # Several runs: one document per line (JSON Lines), each parseable alone.
            click.echo(to_json(tables, {"run": run_path, "database": run.path}, indent=None if heading else 1))
        elif output_format == "csv":
            click.echo((f"# run: {run_path}\n" if heading else "") + to_csv(tables), nl=False)
        elif output_format == "markdown":
            click.echo(f"# {run_path}\n\n" + to_markdown(tables, origin, values_only=True), nl=False)
        else:
            _print_text(tables, run_path, run.path, origin)


def _print_text(tables: Sequence["Table"], run_path: str, database: str, origin: Optional[int]) -> None:
    from rich.markup import escape

    from ..analysis._formats import rich_table
    from ._paths import readable_path, within
    from ._terminal import report_console

    out = report_console(soft_wrap=False)
    out.rule(f"[bold]{escape(readable_path(run_path, out.width - 4))}")
    inside = within(database, run_path)  # a run directory's own database: PERFPROF_OUTPUT/perfprof.db
    if inside is None:
        out.print(f"database: {readable_path(database, out.width - len('database: '))}", highlight=False, markup=False)
    else:
        out.print(f"database (in the run): {inside}", highlight=False, markup=False)
    # Tables without rows, one line for each run of them (a CPU run has no GPU section at all).
    for has_rows, group in itertools.groupby(tables, key=lambda table: bool(table.rows)):
        if has_rows:
            for table in group:
                out.print(rich_table(table, origin, width=out.width, values_only=True))
        else:
            titles = "; ".join(f"[bold]{table.title}[/bold]" for table in group)
            out.print(f"{titles}: no data in this run", highlight=False)
