"""``perfprof aggregate``: dashboard metrics over sweep results files (docs/experiments.md)."""
from __future__ import annotations

import os
import shutil
import sys
from typing import TYPE_CHECKING, List, Optional

import click

from ..experiments._charts import CHART_REPORTS
from . import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console

    from ..experiments._aggregate import Aggregation, Baseline

REPORTS = (*CHART_REPORTS, "table")
FORMATS = ("csv", "png", "svg", "ascii")


def _baseline(ctx: click.Context, param: click.Parameter, value: Optional[str]) -> Optional["Baseline"]:
    from ..experiments._aggregate import parse_baseline

    if value is None:
        return None
    try:
        return parse_baseline(value)
    except ValueError as error:
        raise click.BadParameter(str(error), ctx=ctx, param=param) from None


@click.command()
@click.argument("results", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@click.option("--baseline", default=None, callback=_baseline, metavar="oldest|latest|NAME=VALUE[,NAME=VALUE]",
              help="What speedups are relative to: each configuration's oldest (or latest) sweep, or the "
                   "series whose grid values NAME are VALUE (the NAMEs are then the compared dimensions) "
                   "[default: oldest; required for the results of one sweep].")
@click.option("--report", type=click.Choice(REPORTS), default="speedup", show_default=True,
              help="speedup: geomean per series over time; histogram: p5/p50/p95 over time; latest: the "
                   "latest sweep's speedups, ascending; table: every metric per series and sweep.")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default="csv", show_default=True,
              help="csv: only the CSV files; png, svg: the report's chart as a file too; ascii: the chart "
                   "(or table) in the terminal.")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False), default=None,
              help="Where metric_report.csv, speedups.csv and charts go [default: the first results file's folder].")
@click.option("--min-speedup", type=float, default=None,
              help="Flag a series whose latest geomean speedup is below this [default: not checked].")
@click.option("--min-compression", type=float, default=None,
              help="Flag a series whose latest peak-memory compression ratio is below this [default: not checked].")
@click.option("--min-pass-rate", type=click.FloatRange(0, 100), default=None,
              help="Flag a series whose latest pass rate (percent) is below this [default: not checked].")
@click.option("--tolerance", type=click.FloatRange(min=0), default=None, metavar="X",
              help="Flag a verified run (perfprof sweep --verify) whose outputs' mean relative error against its "
                   "baseline's is above X (0.02: 2%), or that could not be compared [default: not checked].")
def aggregate(results: List[str], baseline: Optional["Baseline"], report: str, output_format: str,
              output_dir: Optional[str], min_speedup: Optional[float], min_compression: Optional[float],
              min_pass_rate: Optional[float], tolerance: Optional[float]) -> None:
    """Aggregate sweep RESULTS files (results.jsonl) into dashboard metrics: per series and sweep,
    the geomean and p5/p50/p95 of the workloads' speedups, the pass rate, the mean compilation
    time and the peak-memory compression ratio.

    \b
    perfprof aggregate sweeps/*/results.jsonl                       # CSVs beside the first file
    perfprof aggregate results.jsonl --baseline compile=0 --report table --format ascii
    perfprof aggregate results.jsonl --report latest --format png -o dashboard

    Writes metric_report.csv and speedups.csv, and the chart the format asks for (the table
    report is printed whatever the format). Each series' latest sweep is checked against the
    thresholds given (--min-*); a FLAG line on stderr names each one below, and the exit code is
    then 1. Without a threshold it exits 0. Runs of a `perfprof sweep --verify` get
    verification.csv: each run's outputs against its baseline's (mean relative error); --tolerance
    flags those past it.
    """
    from rich.console import Console

    from ..experiments._aggregate import (BaselineError, aggregate as aggregate_records, check_thresholds,
                                          check_tolerance, write_csvs)
    from ..experiments._results import read_results

    err = Console(stderr=True, markup=False, highlight=False, soft_wrap=True)
    try:
        aggregation = aggregate_records(read_results(results), baseline)
    except BaselineError as error:
        raise click.BadParameter(str(error), param_hint="--baseline") from None
    except ValueError as error:
        raise click.ClickException(str(error)) from None
    if aggregation.unplaced:
        err.print(f"left out {aggregation.unplaced} record(s) whose configuration lacks one of "
                  f"{', '.join(aggregation.baseline.names)}")
    directory = output_dir or os.path.dirname(os.path.abspath(results[0]))
    written = write_csvs(aggregation, directory) + _show(aggregation, report, output_format, directory, err)
    for path in written:
        if output_format == "ascii" or report == "table":  # stdout holds the chart or table
            err.print(f"wrote {path}")
        else:
            click.echo(path)
    for metrics in aggregation.latest_metrics():
        if metrics.left_out:
            err.print(f"series={metrics.series} at {metrics.timestamp}: left out: {metrics.left_out} "
                      "workload(s) without a PASS sample or a baseline")
    flags = [*check_thresholds(aggregation, min_speedup, min_compression, min_pass_rate),
             *check_tolerance(aggregation, tolerance)]
    for flag in flags:
        err.print(str(flag))
    sys.exit(EXIT_FAILED if flags else EXIT_OK)


def _show(aggregation: "Aggregation", report: str, output_format: str, output_dir: str, err: "Console") -> List[str]:
    """Draw or print the report as `output_format` asks; the paths of the files drawn."""
    from ..experiments._charts import ascii_chart, chart_of, draw_chart

    if report == "table":
        if output_format in ("png", "svg"):
            err.print(f"--report table draws no {output_format}: the table is printed, and is metric_report.csv")
        _print_table(aggregation)
        return []
    if output_format == "ascii":
        size = shutil.get_terminal_size()
        click.echo(ascii_chart(chart_of(aggregation, report), size.columns, max(15, min(30, size.lines - 4))))
    elif output_format in ("png", "svg"):
        path = os.path.join(output_dir, f"{report}.{output_format}")
        draw_chart(chart_of(aggregation, report), path, output_format)
        return [path]
    return []


def _print_table(aggregation: "Aggregation") -> None:
    """The metrics as a table fitted to the terminal (``perfprof summary``'s: whole values,
    headings wrapped, one block of lines per row when even that does not fit)."""
    from ..analysis._formats import fitted_table
    from ..experiments._aggregate import METRIC_COLUMNS
    from ._terminal import report_console

    console = report_console(highlight=False)
    rows = [[column.text(metrics) for column in METRIC_COLUMNS] for metrics in aggregation.metrics]
    console.print(fitted_table(f"perfprof aggregate (baseline: {aggregation.baseline})",
                               [column.heading for column in METRIC_COLUMNS],
                               [index >= 2 for index in range(len(METRIC_COLUMNS))], rows, console.width))
