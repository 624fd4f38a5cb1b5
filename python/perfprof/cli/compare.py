"""``perfprof compare``: a base run against one or more new runs (docs/experiments.md#perfprof-compare)."""
from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any, List, Optional

import click

from . import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from ..analysis import Table
    from ..experiments import Comparison


class Percent(click.ParamType):
    """A percentage given as ``5%`` or ``5`` (any number >= 0)."""

    name = "PCT"

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        try:
            percent = float(text[:-1] if text.endswith("%") else text)
        except ValueError:
            self.fail(f"{value!r} is not a percentage (e.g. 5% or 5)", param, ctx)
        if not percent >= 0:  # also NaN
            self.fail(f"{value!r} is not a percentage >= 0", param, ctx)
        return percent


@click.command()
@click.argument("base")
@click.argument("new", nargs=-1, required=True)
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Rows of the operators and kernels sections (the largest regressions).")
@click.option("--csv", "as_csv", is_flag=True, help="CSV blocks headed '# section', raw ns and bytes.")
@click.option("--markdown", "as_markdown", is_flag=True, help="A Markdown report.")
@click.option("--fail-if-slower", "threshold", type=Percent(), default=None, metavar="PCT",
              help="Exit 1 when a NEW run's mean step time (after warm-up) is more than PCT percent above BASE's.")
def compare(base: str, new: List[str], top: int, as_csv: bool, as_markdown: bool, threshold: Optional[float]) -> None:
    """Compare the run BASE with each NEW run: step times, operators, kernels and memory peaks,
    each row with every run's value, its diff (new - base) and ratio (new / base), the largest
    regressions first.

    BASE and NEW are run directories (or a folder holding one, as `perfprof run -o DIR` writes),
    their PERFPROF_OUTPUT folders, database files, Chrome traces (torch.profiler's too), or sweep
    entries RESULTS.jsonl:FINGERPRINT[:REPEAT] (that configuration's run; its first passing repeat
    by default). A run without a database gets one first, from its capture or its trace. The
    mean and median step times leave out the first step when a run has 3 or more.

    \b
    perfprof compare base_perfprof new_perfprof
    perfprof compare base_perfprof new_perfprof --fail-if-slower 5%
    perfprof compare sweep/results.jsonl:3f2a9c1d0b7e4a55 sweep/results.jsonl:9e8d7c6b5a493827 --markdown
    """
    from ..experiments import CompareError, RunNotFound, compare_runs

    if as_csv and as_markdown:
        raise click.UsageError("--csv and --markdown cannot be used together")
    try:
        comparison = compare_runs(base, new, top, on_build=lambda what: click.echo(what, err=True))
    except RunNotFound as error:  # a missing path is the command line's mistake: exit 2
        raise click.UsageError(str(error)) from None
    except (OSError, CompareError, ValueError) as error:  # CompareError: also an unreadable database
        raise click.ClickException(str(error)) from None
    if as_csv:
        click.echo(comparison.to_csv(), nl=False)
    elif as_markdown:
        click.echo(comparison.to_markdown(), nl=False)
    else:
        _print_text(comparison)
    sys.exit(_check_threshold(comparison, threshold))


def _print_text(comparison: "Comparison") -> None:
    """The comparison as rich tables for the terminal. A section too wide for it leaves out the
    measures other than the compared one (the operators' counts, then their self times), every
    run's at once, before it is shown expanded: a row stays one line of a table."""
    from ..analysis._formats import rich_table
    from ._terminal import report_console

    out = report_console(soft_wrap=False)
    out.print(rich_table(_readable_runs(comparison, out.width), width=out.width))
    labels = [run.label for run in comparison.runs]
    for section in comparison.sections:
        if section.note:
            out.print(f"[bold]{section.spec.title}[/bold]: {section.note}", highlight=False)
        else:
            secondary = [measure for measure in section.spec.measures if measure != section.spec.compared]
            leave_out = [[f"{label}_{measure}" for label in labels] for measure in secondary]
            out.print(rich_table(section.table, width=out.width, leave_out=leave_out))


def _readable_runs(comparison: "Comparison", width: int) -> "Table":
    """The runs table for a terminal `width` columns wide: each database relative to its run
    when it lies in it (``PERFPROF_OUTPUT/perfprof.db``; said once in the title when it is so for
    every run), and the runs' paths shortened to the room left (the CSV and Markdown reports
    keep both whole)."""
    from ..analysis import Table
    from ._paths import readable_path, within

    labels = [run.label for run in comparison.runs]
    inside = [within(run.database, run.reference) for run in comparison.runs]
    shared = inside[0] if None not in inside and len(set(inside)) == 1 else None
    databases = [_database_of(run.database, run.reference, place) for run, place in zip(comparison.runs, inside)]
    # A border and two spaces of padding per column, and one border more.
    room = (width - 7 - max(map(len, ["label", *labels]))
            - (0 if shared else 3 + max(map(len, ["database", *databases]))))
    paths = [readable_path(run.reference, max(room, 20)) for run in comparison.runs]
    if shared:
        return Table.of("runs", f"Runs (database: {shared} in each)", ("label", "run"), list(zip(labels, paths)))
    return Table.of("runs", "Runs", ("label", "run", "database"), list(zip(labels, paths, databases)))


def _database_of(database: str, reference: str, inside: Optional[str]) -> str:
    """`database` as the runs table shows it: `inside` its run when it lies in it, "(the run)"
    when the run was given as its database file, else as it is."""
    if inside is not None:
        return inside
    return "(the run)" if os.path.isfile(reference) and os.path.samefile(database, reference) else database


def _check_threshold(comparison: "Comparison", threshold: Optional[float]) -> int:
    """The exit code for --fail-if-slower: 1, each slower run named on stderr, or 0."""
    if threshold is None:
        return EXIT_OK
    slower = comparison.slowdowns(threshold)
    for slowdown in slower:
        click.echo(f"perfprof compare: slower than {threshold:g}%: {slowdown}", err=True)
    return EXIT_FAILED if slower else EXIT_OK
