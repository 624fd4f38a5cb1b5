"""``perfprof aggregate``'s charts: one :class:`Chart` per report, drawn by matplotlib (PNG, SVG)
or by plotext (text for the terminal). matplotlib and plotext are imported only when drawing.
"""
from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any, List, Optional, Sequence, Tuple

from ._aggregate import Aggregation, SeriesMetrics, instant

#: The reports that are charts (``table`` is a table).
CHART_REPORTS = ("speedup", "histogram", "latest")

#: The terminal chart's markers, one pair per series: its points, and its p5/p95 band on the
#: histogram (colours are lost when the output is not a terminal, the markers are not).
_MARKERS = (("●", "·"), ("+", ":"), ("x", "'"), ("◆", "-"), ("▲", "~"), ("*", ","), ("o", "`"), ("■", "^"))


@dataclasses.dataclass(frozen=True)
class Line:
    """One series on a chart: its points, and optionally a band (low, high) or error bars around them."""

    label: str
    x: List[Any]                       # datetimes on a time axis, workload numbers on the latest chart
    y: List[float]
    low: Optional[List[float]] = None  # the histogram's p5 ...
    high: Optional[List[float]] = None  # ... and p95
    # The latest chart's error bars, (below, above) each point: the speedup's error, the bar below
    # clipped at 0 (a speedup is never negative).
    error: Optional[Tuple[List[float], List[float]]] = None


@dataclasses.dataclass(frozen=True)
class Chart:
    """What a report shows, whoever draws it."""

    title: str
    x_label: str
    y_label: str
    lines: List[Line]
    time_axis: bool                    # x holds datetimes


def chart_of(aggregation: Aggregation, report: str) -> Chart:
    """The chart of `report` (one of :data:`CHART_REPORTS`) over `aggregation`."""
    against = f"against {aggregation.baseline}" if aggregation.baseline_series else f"baseline: {aggregation.baseline}"
    if report == "speedup":
        return Chart(f"Geomean speedup per series ({against})", "sweep (UTC)", "geomean speedup",
                     [_over_time(aggregation, series, "geomean_speedup") for series in aggregation.series],
                     time_axis=True)
    if report == "histogram":
        return Chart(f"Speedup percentiles p5, p50, p95 per series ({against})", "sweep (UTC)",
                     "speedup (line: p50, band: p5 to p95)",
                     [_over_time(aggregation, series, "p50_speedup", band=True) for series in aggregation.series],
                     time_axis=True)
    if report == "latest":
        return Chart(f"Speedups at each series' latest sweep, ascending ({against})", "workload number", "speedup",
                     [_latest(aggregation, metrics) for metrics in aggregation.latest_metrics()], time_axis=False)
    raise ValueError(f"{report!r} is not a chart report; the charts are {', '.join(CHART_REPORTS)}")


def _over_time(aggregation: Aggregation, series: str, field: str, band: bool = False) -> Line:
    """`series`' SeriesMetrics `field` at each sweep that has speedups; with `band`, p5 and p95 too."""
    points = [m for m in aggregation.metrics if m.series == series and m.workloads]

    def values(name: str) -> List[float]:
        return [float(getattr(m, name)) for m in points]  # never None: the sweeps have speedups
    return Line(series, [instant(m.timestamp) for m in points], values(field),
                low=values("p5_speedup") if band else None, high=values("p95_speedup") if band else None)


def _latest(aggregation: Aggregation, metrics: SeriesMetrics) -> Line:
    speedups = aggregation.latest_speedups(metrics.series)
    return Line(f"{metrics.series} ({instant(metrics.timestamp):%Y-%m-%d %H:%M})", list(range(1, len(speedups) + 1)),
                [s.speedup for s in speedups],
                error=([min(s.speedup_error, s.speedup) for s in speedups], [s.speedup_error for s in speedups]))


# -- matplotlib ---------------------------------------------------------------------------------

def draw_chart(chart: Chart, path: str, image_format: str = "png") -> None:
    """Draw `chart` with matplotlib into `path` as ``png`` or ``svg`` (the light plot theme)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from .._files import written_by_library
    from ..plots._style import DPI, new_figure, shorten, themed

    with themed("light"):
        figure, (axes,) = new_figure(height=5.5)
        for line in chart.lines:
            _draw_line(axes, line, shorten(line.label))
        axes.axhline(1.0, color="#888888", linewidth=0.8, linestyle=":", zorder=1)
        axes.set_title(chart.title)
        axes.set_xlabel(chart.x_label)
        axes.set_ylabel(chart.y_label)
        if chart.time_axis:
            _date_axis(axes, [moment for line in chart.lines for moment in line.x])
        else:
            axes.xaxis.get_major_locator().set_params(integer=True)
        if chart.lines:
            axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)
        FigureCanvasAgg(figure)
        with written_by_library(path) as written:
            figure.savefig(written, format=image_format, dpi=DPI)


def _draw_line(axes: Any, line: Line, label: str) -> None:
    if line.error is not None:
        axes.errorbar(line.x, line.y, yerr=list(line.error), marker="o", markersize=3, linewidth=1.2, capsize=2,
                      label=label)
        return
    (drawn,) = axes.plot(line.x, line.y, marker="o", markersize=4, linewidth=1.5, label=label)
    if line.low is not None and line.high is not None:
        colour = drawn.get_color()
        axes.fill_between(line.x, line.low, line.high, color=colour, alpha=0.15, linewidth=0)
        for edge in (line.low, line.high):
            axes.plot(line.x, edge, color=colour, linewidth=0.8, linestyle="--")


def _date_axis(axes: Any, moments: Sequence[datetime]) -> None:
    """Dates that stay readable whatever the span: matplotlib's concise formatter; a single sweep
    is one labelled tick in the middle (the locator would spread it over years)."""
    import matplotlib.dates as mdates

    if len(set(moments)) == 1:
        (moment,) = set(moments)
        axes.set_xlim(moment - timedelta(hours=12), moment + timedelta(hours=12))
        axes.set_xticks([moment], [f"{moment:%Y-%m-%d %H:%M}"])
        return
    locator = mdates.AutoDateLocator(maxticks=8)
    axes.xaxis.set_major_locator(locator)
    axes.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz=locator.tz))


# -- plotext ------------------------------------------------------------------------------------

def ascii_chart(chart: Chart, width: int, height: int) -> str:
    """`chart` drawn by plotext as text `width` columns by `height` rows (ANSI colours included;
    ``click.echo`` drops them when the output is not a terminal)."""
    import plotext

    figure = plotext.figure
    figure.clear()
    plotext.terminal.limit(width=False, height=False)
    figure.plot_size(width, height)
    sweeps = sorted({x for line in chart.lines for x in line.x}) if chart.time_axis else []
    for number, line in enumerate(chart.lines):
        marker, band = _MARKERS[number % len(_MARKERS)]
        x = [sweeps.index(moment) + 1 for moment in line.x] if chart.time_axis else line.x
        has_band = line.low is not None and line.high is not None
        _ascii_line(figure, x, line.y, marker, f"{line.label} (p5, p95: {band})" if has_band else line.label)
        for edge in (line.low, line.high) if has_band else ():
            _ascii_line(figure, x, edge or [], band, None)
    figure.title(chart.title)
    figure.label(chart.x_label, axis="x")
    figure.label(chart.y_label, axis="y")
    if sweeps:
        positions = _tick_positions(len(sweeps), width)
        figure.ruler("x").ticks(positions, _sweep_labels([sweeps[p - 1] for p in positions]))
    elif chart.lines:  # workload numbers: whole numbers only
        positions = _tick_positions(max(len(line.x) for line in chart.lines), width)
        figure.ruler("x").ticks(positions, [str(position) for position in positions])
    return str(figure.build().string())


def _ascii_line(figure: Any, x: List[Any], y: List[float], marker: str, label: Optional[str]) -> None:
    """Draw the points (x, y) joined by `marker`, in the legend as `label` unless None."""
    if not y:
        return
    signal = figure.signal(x, y, marker=marker)
    if label is not None:
        signal.label(label)
    signal.lines()
    figure.draw(signal)


def _tick_positions(count: int, width: int) -> List[int]:
    """Positions 1..`count` to label on an x axis `width` columns wide: as many as fit, evenly."""
    fit = max(1, width // 20)
    if count <= fit:
        return list(range(1, count + 1))
    step = (count - 1) / (fit - 1) if fit > 1 else count
    return sorted({1 + round(step * i) for i in range(fit)})


def _sweep_labels(moments: Sequence[datetime]) -> List[str]:
    """Dates alone when the sweeps fall on different days, else with the time."""
    days = {moment.date() for moment in moments}
    form = "%Y-%m-%d" if len(days) == len(moments) else "%m-%d %H:%M"
    return [moment.strftime(form) for moment in moments]
