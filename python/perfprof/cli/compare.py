"""``perfprof compare``: a base run against one or more new runs (docs/experiments.md#perfprof-compare)."""
from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, List, Optional

import click

from . import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
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
    from ..experiments import CompareError, compare_runs

    if as_csv and as_markdown:
        raise click.UsageError("--csv and --markdown cannot be used together")
    try:
        comparison = compare_runs(base, new, top, on_build=lambda what: click.echo(what, err=True))
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
    """The comparison as rich tables for the terminal."""
    from rich.console import Console

    from ..analysis._formats import rich_table

    out = Console(soft_wrap=False)
    out.print(rich_table(comparison.runs_table(), width=out.width))
    for section in comparison.sections:
        if section.note:
            out.print(f"[bold]{section.spec.title}[/bold]: {section.note}", highlight=False)
        else:
            out.print(rich_table(section.table, width=out.width, shared_units=True))


def _check_threshold(comparison: "Comparison", threshold: Optional[float]) -> int:
    """The exit code for --fail-if-slower: 1, each slower run named on stderr, or 0."""
    if threshold is None:
        return EXIT_OK
    slower = comparison.slowdowns(threshold)
    for slowdown in slower:
        click.echo(f"perfprof compare: slower than {threshold:g}%: {slowdown}", err=True)
    return EXIT_FAILED if slower else EXIT_OK
