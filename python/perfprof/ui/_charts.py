"""The pages' charts as Plotly figures (plain dicts: data and layout), drawn by the plotly.js
that ships in the plotly wheel. Each is a function of one analysis' table; nothing is computed
here but the unit a chart reads in."""
from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from ..analysis import Table
from ..analysis._units import table_byte_unit, table_time_unit

Figure = Dict[str, Any]

#: step_time_breakdown's two stacks, each adding up to a step's duration (docs/analysis.md).
DEVICE_STACK = (("computing_ns", "computing"), ("communication_not_overlapped_ns", "communication not overlapped"),
                ("copy_only_ns", "copies and sets only"), ("free_ns", "device idle"))
HOST_STACK = (("operators_ns", "operators"), ("gc_ns", "garbage collection"), ("other_ns", "other (Python, waiting)"))


@dataclass(frozen=True)
class Chart:
    id: str          # the element the figure is drawn into
    title: str
    figure: Figure


def plotly_text(value: Any) -> str:
    """A string from the run as Plotly shows it: as text (Plotly reads a few HTML tags in labels)."""
    return html.escape(str(value))


def _layout(x_title: str, y_title: str, **more: Any) -> Dict[str, Any]:
    return {"xaxis": {"title": {"text": x_title}}, "yaxis": {"title": {"text": y_title}},
            "margin": {"t": 20, "r": 10}, "legend": {"orientation": "h", "y": -0.25}, **more}


def step_stack(breakdown: Table, stack: tuple, chart_id: str, title: str) -> Optional[Chart]:
    """Each step's duration as a bar stacked by `stack`'s columns of step_time_breakdown; None
    when the run has no steps or the stack's columns are NULL (no device work)."""
    rows = breakdown.to_dicts()
    if not rows or all(row[stack[0][0]] is None for row in rows):
        return None
    scale, unit = table_time_unit(row["duration_ns"] for row in rows)
    steps = [row["step"] for row in rows]
    data = [{"type": "bar", "name": label, "x": steps, "y": [(row[column] or 0) / scale for row in rows],
             "hovertemplate": f"step %{{x}}: %{{y:.3f}} {unit}<extra>{label}</extra>"} for column, label in stack]
    return Chart(chart_id, title, {"data": data, "layout": _layout("step", f"time ({unit})", barmode="stack")})


def gpu_utilization(utilization: Table, origin_ns: Optional[int]) -> Optional[Chart]:
    """gpu_utilization's busy share of each bin, a line per device; None without GPU activity."""
    rows = utilization.to_dicts()
    if not rows:
        return None
    start = origin_ns if origin_ns is not None else min(row["bin_start_ns"] for row in rows)
    data = []
    for device in sorted({row["deviceId"] for row in rows}):
        bins = [row for row in rows if row["deviceId"] == device]
        data.append({"type": "scatter", "mode": "lines", "line": {"shape": "hv"}, "name": f"GPU {plotly_text(device)}",
                     "x": [(row["bin_start_ns"] - start) / 1e6 for row in bins],
                     "y": [row["utilization_pct"] for row in bins]})
    layout = _layout("ms from the start", "busy (% of the bin)")
    layout["yaxis"]["range"] = [0, 100]
    return Chart("gpu-utilization", "GPU utilisation over time", {"data": data, "layout": layout})


def memory_curves(timeline: Table, origin_ns: Optional[int]) -> List[Chart]:
    """memory_over_time per device: the categories' live bytes stacked over time."""
    rows = timeline.to_dicts()
    if not rows:
        return []
    scale, unit = table_byte_unit(row["bytes"] for row in rows)
    start = origin_ns if origin_ns is not None else min(row["timestamp_ns"] for row in rows)
    charts = []
    for number, device in enumerate(dict.fromkeys(row["deviceType"] for row in rows)):
        points = [row for row in rows if row["deviceType"] == device]
        data = []
        for category in dict.fromkeys(row["category"] for row in points):
            series = [row for row in points if row["category"] == category]
            data.append({"type": "scatter", "mode": "lines", "stackgroup": "memory", "line": {"shape": "hv"},
                         "name": plotly_text(category), "x": [(row["timestamp_ns"] - start) / 1e6 for row in series],
                         "y": [row["bytes"] / scale for row in series]})
        charts.append(Chart(f"memory-{number}", f"Memory by category: {device}",
                            {"data": data, "layout": _layout("ms from the start", f"live ({unit})")}))
    return charts


#: host_telemetry_over_time's panels: title and the unit of their values.
HOST_PANELS = (("cpu", "CPU use", "% of one CPU"), ("memory", "Memory", "bytes"), ("disk", "Disk", "bytes/s"),
               ("network", "Network", "bytes/s"))
#: gpu_telemetry_over_time's metrics: column, title and unit.
GPU_METRICS = (("utilization_pct", "GPU utilisation", "%"), ("memory_used_bytes", "GPU memory used", "bytes"),
               ("power_watts", "GPU power", "W"), ("sm_clock_mhz", "GPU SM clock", "MHz"))


def _lines(points: List[Dict[str, Any]], series_of: str, value_of: str, start: int, scale: float) -> List[Figure]:
    """A line per value of `series_of` among `points`, `value_of` over time (ms from `start`)."""
    data = []
    for series in dict.fromkeys(point[series_of] for point in points):
        mine = [point for point in points if point[series_of] == series and point[value_of] is not None]
        data.append({"type": "scatter", "mode": "lines", "name": plotly_text(series),
                     "x": [(point["timestamp_ns"] - start) / 1e6 for point in mine],
                     "y": [point[value_of] / scale for point in mine]})
    return data


def _scaled_unit(values: List[Any], unit: str) -> Tuple[float, str]:
    """Bytes and bytes/s in the unit that reads best for `values`; other units as they are."""
    if not unit.startswith("bytes"):
        return 1.0, unit
    scale, shown = table_byte_unit(value for value in values if value is not None)
    return scale, shown + unit[len("bytes"):]


def host_telemetry(telemetry: Table, origin_ns: Optional[int]) -> List[Chart]:
    """host_telemetry_over_time: a chart per panel (CPU, memory, disk, network), a line per series."""
    rows = telemetry.to_dicts()
    if not rows:
        return []
    start = origin_ns if origin_ns is not None else min(row["timestamp_ns"] for row in rows)
    charts = []
    for panel, title, unit in HOST_PANELS:
        points = [row for row in rows if row["panel"] == panel]
        if points:
            scale, shown = _scaled_unit([point["value"] for point in points], unit)
            charts.append(Chart(f"host-{panel}", title, {"data": _lines(points, "series", "value", start, scale),
                                                         "layout": _layout("ms from the start", shown)}))
    return charts


def gpu_telemetry(telemetry: Table, origin_ns: Optional[int]) -> List[Chart]:
    """gpu_telemetry_over_time: a chart per metric, a line per GPU (metrics no GPU read left out)."""
    rows = telemetry.to_dicts()
    if not rows:
        return []
    start = origin_ns if origin_ns is not None else min(row["timestamp_ns"] for row in rows)
    charts = []
    for column, title, unit in GPU_METRICS:
        values = [row[column] for row in rows]
        if any(value is not None for value in values):
            scale, shown = _scaled_unit(values, unit)
            charts.append(Chart(f"gpu-{column}", title, {"data": _lines(rows, "gpu", column, start, scale),
                                                          "layout": _layout("ms from the start", shown)}))
    return charts
