"""The plots of one run: each a function from the analysis Table(s) it draws to a Figure.

They draw what they are given (the engine leaves out a plot whose table is empty) and take the
colours of the theme they are called in (:func:`perfprof.plots._style.themed`). Column names are
the analyses' (docs/analysis.md): their unit is in the name, and the axes say it.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any, Dict, Iterable, List, Sequence, Tuple

from ..analysis import Table
from ..analysis._units import byte_unit, scaled, time_unit
from ._style import bar_height, colours, new_figure, unique

IDLE_COLOUR = "#bbbbbb"
# The parts of step_time_breakdown that stack to a step's duration, on the host and on the devices.
HOST_PARTS = ("operators_ns", "gc_ns", "other_ns")
DEVICE_PARTS = ("computing_ns", "communication_not_overlapped_ns", "copy_only_ns", "free_ns")


def _label(column: str) -> str:
    """``communication_not_overlapped_ns`` -> ``communication not overlapped``."""
    return column.rsplit("_", 1)[0].replace("_", " ")


def step_times(table: Table) -> Any:
    """Each step's duration over the steps (``step_times``), with the run's median step
    (``median_ns``, from ``step_statistics``) dashed."""
    from matplotlib.ticker import MaxNLocator

    durations = table.column("duration_ns")
    divisor, unit = time_unit(durations)
    values = scaled(durations, divisor)
    figure, (axes,) = new_figure()
    axes.plot(table.column("step"), values, marker="o", markersize=3, linewidth=1.2)
    (median,) = scaled(table.column("median_ns")[:1], divisor)
    axes.axhline(median, linestyle="--", linewidth=1, color=IDLE_COLOUR, label=f"median {median:.3g} {unit}")
    axes.set(title="Step time", xlabel="step", ylabel=f"duration ({unit})")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_ylim(bottom=0)
    axes.legend(loc="lower right")
    return figure


def step_time_breakdown(table: Table) -> Any:
    """Each step's duration split into its parts, stacked (``step_time_breakdown``): the host
    parts, and below them the device parts when the run has device work. Each set adds up to
    the step's duration (docs/analysis.md); overlapped_ns and preparing_ns do not stack."""
    from matplotlib.ticker import MaxNLocator

    steps = table.column("step")
    stacks = [(label, parts) for label, parts in (("host", HOST_PARTS), ("device", DEVICE_PARTS))
              if any(value is not None for part in parts if part in table.columns for value in table.column(part))]
    divisor, unit = time_unit(table.column("duration_ns"))
    figure, axes_list = new_figure(rows=len(stacks), height=1.0 + 3.0 * len(stacks))
    for axes, (label, parts) in zip(axes_list, stacks):
        bottom = [0.0] * len(steps)
        for part, colour in zip(parts, colours(len(parts))):
            values = scaled(table.column(part), divisor)
            axes.bar(steps, values, bottom=bottom, width=0.8, color=colour, label=_label(part))
            bottom = [base + value for base, value in zip(bottom, values)]
        axes.set(ylabel=f"{label} time ({unit})")
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes_list[0].set_title("Step time breakdown")
    axes_list[-1].set_xlabel("step")
    return figure


def _top_bars(table: Table, series: Sequence[Tuple[str, str]], title: str) -> Any:
    """Horizontal bars per ``name``, the largest on top: one bar per (column, label) of
    `series`, drawn over each other (the first the widest), the first's ``pct`` beside it."""
    names = unique(table.column("name"))[::-1]
    divisor, unit = time_unit(table.column(series[0][0]))
    figure, (axes,) = new_figure(height=bar_height(len(names)))
    for index, ((column, label), colour) in enumerate(zip(series, colours(len(series)))):
        values = scaled(table.column(column), divisor)[::-1]
        bars = axes.barh(names, values, height=0.8 - 0.3 * index, color=colour, label=label)
        if index == 0 and "pct" in table.columns:
            axes.bar_label(bars, labels=[f"{pct or 0:.1f}%" for pct in table.column("pct")[::-1]],
                           padding=3, fontsize=8)
    axes.set(title=title, xlabel=f"time ({unit})")
    axes.margins(x=0.12)  # room for the percentages
    if len(series) > 1:
        axes.legend(loc="lower right")
    return figure


def top_kernels(table: Table) -> Any:
    """The top kernels by total time (``top_kernels``), with their share of GPU time."""
    return _top_bars(table, [("total_ns", "total")], "Top GPU kernels by total time")


def top_operators(table: Table) -> Any:
    """The top operators by self time (``top_operators``' order), total time behind."""
    return _top_bars(table, [("total_ns", "total"), ("self_ns", "self")], "Top operators by self time")


def _by(rows: Iterable[Dict[str, Any]], key: str) -> Dict[Any, List[Dict[str, Any]]]:
    """`rows` (a Table's, or some of them) grouped by the value of column `key`, in the order met."""
    groups: Dict[Any, List[Dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row[key]].append(row)
    return groups


def gpu_utilization(table: Table) -> Any:
    """Each GPU's busy and idle share per time bin (``gpu_utilization``), one row per GPU."""
    devices = _by(table, "deviceId")
    origin = min(table.column("bin_start_ns"))
    divisor, unit = time_unit([end - origin for end in table.column("bin_end_ns")])
    figure, axes_list = new_figure(rows=len(devices), height=1.0 + 2.2 * len(devices))
    for axes, (device, rows) in zip(axes_list, devices.items()):
        starts = [(row["bin_start_ns"] - origin) / divisor for row in rows]
        widths = [(row["bin_end_ns"] - row["bin_start_ns"]) / divisor for row in rows]
        busy = [row["utilization_pct"] or 0 for row in rows]
        axes.bar(starts, busy, width=widths, align="edge", label="busy")
        axes.bar(starts, [100 - value for value in busy], bottom=busy, width=widths, align="edge",
                 color=IDLE_COLOUR, label="idle")
        axes.set(ylabel=f"GPU {device} (%)", ylim=(0, 100))
    axes_list[0].set_title("GPU utilisation over time")
    axes_list[0].legend(loc="upper right")
    axes_list[-1].set_xlabel(f"time since the first bin ({unit})")
    return figure


def _levels(rows: List[Dict[str, Any]]) -> Tuple[List[int], Dict[str, List[int]]]:
    """The times of `rows` (sorted, distinct), and each category's bytes at each time: its
    latest value up to then (0 before its first)."""
    times = sorted({row["timestamp_ns"] for row in rows})
    position = {time: index for index, time in enumerate(times)}
    changes: Dict[str, List[Any]] = defaultdict(lambda: [None] * len(times))
    for row in rows:
        changes[row["category"]][position[row["timestamp_ns"]]] = row["bytes"]
    levels = {}
    for category, values in changes.items():
        level, filled = 0, []
        for value in values:
            level = level if value is None else value
            filled.append(level)
        levels[category] = filled
    return times, levels


def memory_over_time(table: Table) -> Any:
    """Allocated memory by category over time, stacked (``memory_over_time``), one row per
    device type; each category keeps its last value between its changes."""
    devices = _by(table, "deviceType")
    origin = min(table.column("timestamp_ns"))
    time_divisor, time_name = time_unit([time - origin for time in table.column("timestamp_ns")])
    figure, axes_list = new_figure(rows=len(devices), height=1.0 + 3.0 * len(devices))
    for axes, (device, rows) in zip(axes_list, devices.items()):
        times, levels = _levels(rows)
        size_divisor, size_name = byte_unit([sum(values) for values in zip(*levels.values())])
        axes.stackplot([(time - origin) / time_divisor for time in times],
                       *[scaled(values, size_divisor) for values in levels.values()],
                       labels=list(levels), colors=colours(len(levels)), step="post")
        axes.set(ylabel=f"{device} ({size_name})")
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes_list[0].set_title("Memory by category over time")
    axes_list[-1].set_xlabel(f"time since the first event ({time_name})")
    return figure


def idle_time_breakdown(table: Table) -> Any:
    """Each stream's idle time split by cause (``idle_time_breakdown``), stacked."""
    keys = sorted({(row["deviceId"], row["streamId"]) for row in table})
    categories = list(dict.fromkeys(table.column("category")))
    idle = {(row["deviceId"], row["streamId"], row["category"]): row["idle_ns"] or 0 for row in table}
    divisor, unit = time_unit(idle.values())
    labels = [f"GPU {device}\nstream {stream}" for device, stream in keys]
    figure, (axes,) = new_figure()
    bottom = [0.0] * len(keys)
    for category, colour in zip(categories, colours(len(categories))):
        values = [idle.get((device, stream, category), 0) / divisor for device, stream in keys]
        axes.bar(labels, values, bottom=bottom, color=colour, label=category.replace("_", " "))
        bottom = [base + value for base, value in zip(bottom, values)]
    axes.set(title="Idle time by cause, per stream", ylabel=f"idle time ({unit})")
    axes.legend(loc="upper right")
    return figure


def _sample_times(table: Table) -> Tuple[int, float, str]:
    """The first sample's time and the unit of the time since it; milliseconds when every sample
    has one time (a window shorter than the interval: the stop's sample alone)."""
    origin = min(table.column("timestamp_ns"))
    offsets = [time - origin for time in table.column("timestamp_ns")]
    divisor, name = time_unit(offsets) if any(offsets) else (1e6, "ms")
    return origin, divisor, name


def _sample_marker(points: Sequence[Any]) -> str:
    """A dot on each sample of a short series (a single sample draws no line), none on a long one."""
    return "." if len(points) <= 30 else ""


# The host telemetry panels: title, and what its values are (percent, shown as they are; bytes
# and bytes per second, scaled to a size unit).
_HOST_PANELS = {"cpu": ("CPU (% of one CPU)", "pct"), "memory": ("memory", "bytes"),
                "disk": ("disk", "bytes/s"), "network": ("network", "bytes/s")}


def host_telemetry(table: Table) -> Any:
    """The host's CPU, memory, disk and network over time (``host_telemetry_over_time``), a
    panel for each group the run sampled, a line per series."""
    panels = _by(table, "panel")
    origin, time_divisor, time_name = _sample_times(table)
    figure, axes_list = new_figure(rows=len(panels), height=1.0 + 2.2 * len(panels))
    for axes, (panel, rows) in zip(axes_list, panels.items()):
        title, kind = _HOST_PANELS[panel]
        divisor, unit = (1.0, "%") if kind == "pct" else byte_unit([row["value"] for row in rows])
        for series, points in _by(rows, "series").items():
            axes.plot([(point["timestamp_ns"] - origin) / time_divisor for point in points],
                      [point["value"] / divisor for point in points], linewidth=1.2, label=series,
                      marker=_sample_marker(points))
        axes.set(ylabel=title if kind == "pct" else f"{title} ({unit}{'/s' if kind == 'bytes/s' else ''})")
        axes.set_ylim(bottom=0)
        axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes_list[0].set_title("Host telemetry")
    axes_list[-1].set_xlabel(f"time since the first sample ({time_name})")
    return figure


# The GPU telemetry panels: column, axis label, and whether the column holds bytes.
_GPU_PANELS = (("utilization_pct", "utilisation (%)", False), ("memory_used_bytes", "memory used", True),
               ("power_watts", "power (W)", False), ("sm_clock_mhz", "SM clock (MHz)", False))


def gpu_telemetry(table: Table) -> Any:
    """Each GPU's utilisation, memory used, power and SM clock over time
    (``gpu_telemetry_over_time``), a line per GPU; a panel no GPU gave readings for is left out."""
    gpus = _by(table, "gpu")
    origin, time_divisor, time_name = _sample_times(table)
    # The utilisation panel stays, empty, when the GPUs gave no reading at all.
    panels = [panel for panel in _GPU_PANELS if any(value is not None for value in table.column(panel[0]))] or \
        list(_GPU_PANELS[:1])
    figure, axes_list = new_figure(rows=len(panels), height=1.0 + 2.2 * len(panels))
    for axes, (column, label, in_bytes) in zip(axes_list, panels):
        readings = [value for value in table.column(column) if value is not None]
        divisor, unit = byte_unit(readings) if in_bytes else (1.0, "")
        for gpu, rows in gpus.items():
            points = [row for row in rows if row[column] is not None]
            axes.plot([(row["timestamp_ns"] - origin) / time_divisor for row in points],
                      [row[column] / divisor for row in points], linewidth=1.2, label=gpu,
                      marker=_sample_marker(points))
        axes.set(ylabel=f"{label} ({unit})" if in_bytes else label)
        axes.set_ylim(bottom=0)
    axes_list[0].set_title("GPU telemetry")
    axes_list[0].legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes_list[-1].set_xlabel(f"time since the first sample ({time_name})")
    return figure
