"""The Sweeps page of a `perfprof sweep` results file: what `perfprof aggregate` makes of it
(each configuration's oldest sweep as the baseline, its default): the speedup charts, the
metric report (metric_report.csv) and every speedup (speedups.csv)."""
from __future__ import annotations

from typing import Any, List, Sequence

from ..analysis import Table
from ._charts import Chart, plotly_text
from ._tables import shown_table
from ._views import ChartPanel, Panel, TablePanel, TextPanel

#: perfprof aggregate's charts shown, in order (its ``histogram`` report is the band of ``speedup``'s).
SWEEP_CHARTS = ("speedup", "latest")


def sweep_panels(results_path: str) -> List[Panel]:
    """The charts and tables of `perfprof aggregate RESULTS` (default baseline), or why there are none."""
    from ..experiments import BaselineError, aggregate, chart_of, read_results
    from ..experiments._aggregate import default_baseline, metric_rows, speedup_rows

    records = read_results([results_path])
    try:
        aggregation = aggregate(records, default_baseline(records))
    except BaselineError as error:
        return [TextPanel("No speedups", str(error))]
    panels: List[Panel] = [ChartPanel(_figure(chart_of(aggregation, report), f"sweep-{report}"))
                           for report in SWEEP_CHARTS]
    panels.append(_csv_table("metric_report", "Metrics per series and sweep (metric_report.csv)",
                             metric_rows(aggregation.metrics)))
    panels.append(_csv_table("speedups", "Speedup of each workload (speedups.csv)", speedup_rows(aggregation.speedups)))
    return panels


def _csv_table(name: str, title: str, rows: Sequence[Sequence[Any]]) -> Panel:
    """A CSV's header and rows (its empty cells: no value) as a table panel."""
    header, *body = rows
    cells = [[None if cell == "" else cell for cell in row] for row in body]
    return TablePanel(shown_table(Table.of(name, title, header, cells), None))


def _figure(chart: Any, chart_id: str) -> Chart:
    """perfprof aggregate's Chart (lines of points, a p5-p95 band or error bars) as a Plotly figure."""
    data = []
    for line in chart.lines:
        x = [point.isoformat() if chart.time_axis else point for point in line.x]
        trace = {"type": "scatter", "mode": "lines+markers", "name": plotly_text(line.label), "x": x, "y": line.y}
        if line.error is not None:
            below, above = line.error
            trace["error_y"] = {"type": "data", "symmetric": False, "array": above, "arrayminus": below}
        data.append(trace)
    layout = {"xaxis": {"title": {"text": chart.x_label}, "type": "date" if chart.time_axis else "linear"},
              "yaxis": {"title": {"text": chart.y_label}}, "margin": {"t": 20, "r": 10},
              "legend": {"orientation": "h", "y": -0.25}}
    return Chart(chart_id, chart.title, {"data": data, "layout": layout})
