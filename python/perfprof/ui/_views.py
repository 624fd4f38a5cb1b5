"""The views of a run (Overview, Operators, Modules, Kernels, Memory, Allocations, Telemetry, Trace): what
each shows, as panels of tables, charts and recommendations built from the run's analyses. The
server and the report file render the same panels."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, ClassVar, Dict, List, Optional, Sequence, Tuple, Union

from . import _charts
from ._advice import Advice, recommendations
from ._run_data import EVERY_ROW, RunData
from ._tables import BadOrderError, Order, ShownTable, shown_table

#: The rows of the Overview's top-N tables: `perfprof summary`'s default --top.
OVERVIEW_TOP = 10
#: The rows of a view's other top-N tables (those not paged: a with_stack run's Python functions,
#: a large model's kernels by operator and launch configuration can number thousands).
SIDE_TOP = 100

# What an empty panel says, naming what to profile with to get its data.
NO_GPU = "no GPU activity in this run"
NO_STEPS = "no steps in this run (profile with a schedule, or call prof.step())"
NO_OPERATORS = "no operators in this run"
NO_MEMORY = "no memory events in this run (profile with profile_memory=True)"
NO_MODULES = "no nn.Module calls in this run (profile with with_modules=True, or with_stack=True)"
NO_TELEMETRY = ("no telemetry in this run (ExperimentalConfig host_sys, gpu_telemetry; "
                "perfprof run --host-sys, --gpu-telemetry)")


@dataclass(frozen=True)
class TablePanel:
    kind: ClassVar[str] = "table"
    table: ShownTable
    paged: bool = False        # the view's main table: sorted, searched and paged on request
    note: str = ""


@dataclass(frozen=True)
class ChartPanel:
    kind: ClassVar[str] = "chart"
    chart: _charts.Chart
    note: str = ""
    range_view: Optional[str] = None   # a view listing the events of the time range zoomed into


@dataclass(frozen=True)
class AdvicePanel:
    kind: ClassVar[str] = "advice"
    advice: Sequence[Advice]


@dataclass(frozen=True)
class TracePanel:
    kind: ClassVar[str] = "trace"
    url: str        # the trace's download
    title: str      # the name Perfetto UI shows


@dataclass(frozen=True)
class GroupingPanel:
    """Links to the view's groupings of its rows, `current` the one shown."""
    kind: ClassVar[str] = "grouping"
    groupings: Sequence[Tuple[str, str]]   # (name in the URL, label)
    current: str


@dataclass(frozen=True)
class RangePanel:
    """The time range a view lists the events of (ms from the run's start; None: open)."""
    kind: ClassVar[str] = "range"
    start_ms: Optional[float]
    end_ms: Optional[float]


@dataclass(frozen=True)
class TextPanel:
    """A heading and a sentence (a verdict)."""
    kind: ClassVar[str] = "text"
    title: str
    text: str


@dataclass(frozen=True)
class EmptyPanel:
    kind: ClassVar[str] = "empty"
    title: str
    reason: str


Panel = Union[TablePanel, ChartPanel, AdvicePanel, TracePanel, GroupingPanel, RangePanel, TextPanel, EmptyPanel]


@dataclass(frozen=True)
class View:
    name: str                  # in the URL and the report's anchors
    title: str
    build: Callable[[RunData, Order], List[Panel]]
    in_report: bool = True     # False: a view of the server only (the report holds no trace and no
                               # list of every allocation)


def _table(data: RunData, name: str, reason: str, order: Optional[Order] = None, note: str = "",
           **params: object) -> Panel:
    """The analysis `name` as a table panel (paged when `order` is given), or an empty panel
    saying `reason` when the run has no rows for it."""
    table = data.table(name, **params)
    if not table.rows:
        return EmptyPanel(table.title, reason)
    if order is None:
        return TablePanel(shown_table(table, data.origin_ns), note=note)
    return TablePanel(shown_table(table, data.origin_ns, order), paged=True, note=note)


def _chart(chart: Optional[_charts.Chart], title: str, reason: str, note: str = "") -> Panel:
    return EmptyPanel(title, reason) if chart is None else ChartPanel(chart, note)


#: What the Overview and its recommendations read, computed side by side before it is drawn.
OVERVIEW_ANALYSES = ("run_info", "step_statistics", "step_time_breakdown", "temporal_breakdown", "gpu_utilization",
                     "idle_time_breakdown", "kernel_launch_stats", "kernel_breakdown", "comm_comp_overlap",
                     "top_operators", "top_kernels")


def overview(data: RunData, order: Order) -> List[Panel]:
    data.prefetch(OVERVIEW_ANALYSES, OVERVIEW_TOP)
    breakdown = data.table("step_time_breakdown")
    return [
        _table(data, "run_info", "nothing recorded about this run"),
        AdvicePanel(recommendations(data)),
        _table(data, "step_statistics", NO_STEPS),
        _chart(_charts.step_stack(breakdown, _charts.DEVICE_STACK, "steps-device", "Step time on the device"),
               "Step time on the device", NO_GPU if breakdown.rows else NO_STEPS,
               "Each step stacked by what its device did: computing, communication not hidden by computing, "
               "copies only, idle (step_time_breakdown)."),
        _chart(_charts.step_stack(breakdown, _charts.HOST_STACK, "steps-host", "Step time on the host"),
               "Step time on the host", NO_STEPS,
               "Each step stacked by what its host threads did: operators, garbage collection, the rest "
               "(step_time_breakdown)."),
        _table(data, "temporal_breakdown", NO_GPU),
        _chart(_charts.gpu_utilization(data.table("gpu_utilization"), data.origin_ns), "GPU utilisation over time",
               NO_GPU),
        _table(data, "top_operators", NO_OPERATORS, top=OVERVIEW_TOP),
        _table(data, "top_kernels", NO_GPU, top=OVERVIEW_TOP),
    ]


#: The Operators view's groupings of its rows: their names in the URL (?group=) and labels.
OPERATOR_GROUPINGS = {"name": "by name", "shapes": "by name and input shapes"}


def _operators_by(grouping: str, data: RunData, order: Order) -> Panel:
    if grouping == "name":
        return _table(data, "top_operators", NO_OPERATORS, order, top=EVERY_ROW,
                      note="Per operator name, every call: self time excludes the operators it called.")
    return _table(data, "operator_details", NO_OPERATORS, order, top=EVERY_ROW,
                  note="Per operator name and input shapes (record_shapes), torch.profiler's key_averages("
                       "group_by_input_shape=True) times on the host and of the device work each launched.")


def operators(data: RunData, order: Order) -> List[Panel]:
    if order.group is None:  # the report: every grouping
        shown: List[Panel] = [_operators_by(grouping, data, order) for grouping in OPERATOR_GROUPINGS]
    else:
        if order.group not in OPERATOR_GROUPINGS:
            raise BadOrderError(f"'group' must be one of {', '.join(OPERATOR_GROUPINGS)}, not {order.group!r}")
        shown = [GroupingPanel(tuple(OPERATOR_GROUPINGS.items()), order.group),
                 _operators_by(order.group, data, order)]
    return shown + [
        _table(data, "nvtx_ranges", "no record_function or mstx ranges in this run", top=SIDE_TOP),
        _table(data, "python_hot_spots", "no Python calls in this run (profile with with_stack=True)", top=SIDE_TOP),
    ]


def modules(data: RunData, order: Order) -> List[Panel]:
    return [_table(data, "module_tree", NO_MODULES,
                   note="Each module path (outermost first), its calls added up; device time is the GPU work launched "
                        "inside the calls on their thread: the forward pass.")]


def kernels(data: RunData, order: Order) -> List[Panel]:
    return [
        _table(data, "top_kernels", NO_GPU, order, top=EVERY_ROW,
               note="Per kernel, copy and set name: device time over its instances."),
        _table(data, "kernel_launch_configs", NO_GPU, top=SIDE_TOP,
               note=f"Which operator launched each kernel, and with which grid, block, registers and shared memory: "
                    f"the {SIDE_TOP} with the most device time."),
        _table(data, "kernel_breakdown", NO_GPU),
        _table(data, "kernel_launch_stats", NO_GPU),
        _table(data, "kernel_metrics", "no kernel metrics measured (ExperimentalConfig gpu_metrics, l2_cache)",
               top=SIDE_TOP),
        _table(data, "memory_bandwidth", "no copies or sets in this run"),
    ]


def memory(data: RunData, order: Order) -> List[Panel]:
    curves: List[Panel] = [ChartPanel(chart, range_view="allocations") for chart in
                           _charts.memory_curves(data.table("memory_over_time"), data.origin_ns)]
    return (curves or [EmptyPanel("Memory over time", NO_MEMORY)]) + [
        _table(data, "memory_peaks", NO_MEMORY),
        _table(data, "memory_by_operator", NO_MEMORY, order, top=EVERY_ROW,
               note="The tensor allocations each operator made (factories allocate for their callers: torch.ones "
                    "in aten::empty); held: not freed when the profiler stopped."),
    ]


def allocations(data: RunData, order: Order) -> List[Panel]:
    if order.start_ms is not None and order.end_ms is not None and order.end_ms <= order.start_ms:
        raise BadOrderError(f"'to' ({order.end_ms:g} ms) must be after 'from' ({order.start_ms:g} ms)")
    origin = data.origin_ns or 0
    bounds = {name: None if ms is None else origin + round(ms * 1e6)
              for name, ms in (("start_ns", order.start_ms), ("end_ns", order.end_ms))}
    reason = "no allocation in this time range" if data.table("memory_peaks").rows else NO_MEMORY
    return [RangePanel(order.start_ms, order.end_ms), _table(data, "memory_allocations", reason, order, **bounds)]


def telemetry(data: RunData, order: Order) -> List[Panel]:
    charts = (_charts.host_telemetry(data.table("host_telemetry_over_time"), data.origin_ns)
              + _charts.gpu_telemetry(data.table("gpu_telemetry_over_time"), data.origin_ns))
    table = _table(data, "telemetry_statistics", NO_TELEMETRY)
    return [ChartPanel(chart) for chart in charts] + [table] if charts else [table]


def trace(data: RunData, order: Order) -> List[Panel]:
    if data.trace_url is None:
        return [EmptyPanel("Trace", "this run kept no Chrome trace (export_type text writes one)")]
    return [TracePanel(data.trace_url, data.label)]


VIEWS: Dict[str, View] = {view.name: view for view in (
    View("overview", "Overview", overview),
    View("operators", "Operators", operators),
    View("modules", "Modules", modules),
    View("kernels", "Kernels", kernels),
    View("memory", "Memory", memory),
    View("allocations", "Allocations", allocations, in_report=False),
    View("telemetry", "Telemetry", telemetry),
    View("trace", "Trace", trace, in_report=False),
)}
