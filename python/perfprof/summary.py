"""events() and key_averages(): torch.profiler's events one by one and their totals per key,
computed in C++ from the trace model, shown as torch's table."""
from __future__ import annotations

import ast
import json
import math
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ._files import make_directory, replaced_whole
from ._ranges import STACK_FRAMES

if TYPE_CHECKING:
    from . import _core


def _time_text(name: str) -> property:
    """A property giving the time (us) attribute `name` as torch.profiler's text (``1.234ms``)."""
    return property(lambda self: _format_time(getattr(self, name)), doc=f"{name} as text, e.g. '1.234ms'")


class _EventTimes:
    """The times torch.profiler derives from an event's or a row's totals (its
    ``FormattedTimesMixin``): averages per call, their text, and the older ``cuda_*`` names."""

    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    device_time_total: float
    self_device_time_total: float

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (us)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """Average device (GPU) time per call (us)."""
        return self.device_time_total / self.count if self.count else 0.0

    @property
    def cuda_time(self) -> float:
        """torch.profiler's older name for device_time."""
        return self.device_time

    @property
    def cuda_time_total(self) -> float:
        """torch.profiler's older name for device_time_total."""
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        """torch.profiler's older name for self_device_time_total."""
        return self.self_device_time_total

    cpu_time_str = _time_text("cpu_time")
    device_time_str = _time_text("device_time")
    cpu_time_total_str = _time_text("cpu_time_total")
    device_time_total_str = _time_text("device_time_total")
    self_cpu_time_total_str = _time_text("self_cpu_time_total")
    self_device_time_total_str = _time_text("self_device_time_total")


@dataclass
class FunctionEventAvg(_EventTimes):
    """Totals for one key (event name, and input shapes / stack when grouped by them).

    Times are in microseconds and memory in bytes, as in torch.profiler's ``FunctionEventAvg``.
    ``device_type`` is ``"CPU"`` for host events (operators, annotations, Python functions,
    CUDA API calls) and ``"CUDA"`` for GPU activities (kernels, memcpy, memset), which have
    device time only. Memory is what the allocator events during the events add up to (frees
    count negative; self: less the events nested in them), filled with ``profile_memory=True``.
    ``input_shapes`` is the shapes of the row's inputs (a list per input) when grouped by them,
    else ``""``; ``stack`` the innermost Python frames when grouped by them. ``is_async`` and
    ``is_user_annotation`` are those of the row's first event, as torch has them. ``add(other)``
    (or ``+=``) adds another row or event of the same key.
    """

    key: str
    input_shapes: Union[str, List[Any]]
    stack: List[str]
    device_type: str
    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    device_time_total: float
    self_device_time_total: float
    cpu_memory_usage: int
    self_cpu_memory_usage: int
    device_memory_usage: int
    self_device_memory_usage: int
    flops: int
    is_async: bool = False
    is_user_annotation: bool = False
    # torch's fields perfprof has no data for: one node, no legacy events, no overload names.
    node_id: int = -1
    is_remote: bool = False
    is_legacy: bool = False
    overload_name: str = ""
    # Whether the row's first event nests in another one (table(top_level_events_only=True)).
    nested: bool = field(default=False, repr=False)

    def add(self, other: "FunctionEventAvg | FunctionEvent") -> "FunctionEventAvg":
        """Add `other`'s times, memory, calls and FLOPs to this row (same key, as torch checks)."""
        if other.key != self.key:
            raise ValueError(f"FunctionEventAvg.add: keys differ: {other.key!r} and {self.key!r}")
        self._accumulate(other)
        return self

    def __iadd__(self, other: "FunctionEventAvg | FunctionEvent") -> "FunctionEventAvg":
        return self.add(other)

    def _accumulate(self, other: Any) -> None:
        for name in _SUMMED_FIELDS:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @classmethod
    def _first_of(cls, event: Any) -> "FunctionEventAvg":
        """An empty row of `event`'s key, taking what torch takes from a row's first event."""
        return cls(key=event.key, input_shapes=event.input_shapes, stack=list(event.stack),
                   device_type=event.device_type, **_no_totals(), is_async=event.is_async,
                   is_user_annotation=event.is_user_annotation, nested=_is_nested(event))

    def __repr__(self) -> str:
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} self_cuda_time={self.self_device_time_total_str} "
                f"cuda_time={self.device_time_str} input_shapes={self.input_shapes} "
                f"cpu_memory_usage={self.cpu_memory_usage} cuda_memory_usage={self.device_memory_usage}>")


def _no_totals() -> Dict[str, Any]:
    """A row's summed fields before anything is added."""
    return dict.fromkeys(_SUMMED_FIELDS, 0)


# What adding an event to a row sums.
_SUMMED_FIELDS = ("count", "cpu_time_total", "self_cpu_time_total", "device_time_total", "self_device_time_total",
                  "cpu_memory_usage", "self_cpu_memory_usage", "device_memory_usage", "self_device_memory_usage",
                  "flops")


@dataclass(eq=False)
class FunctionEvent(_EventTimes):
    """One event of :meth:`perfprof.profile.events`: an operator, annotation, Python function or
    GPU activity, as torch.profiler's ``FunctionEvent`` has it.

    Times are in microseconds on the trace's clock (``time_range.start``/``end``, as in the
    Chrome trace) and memory in bytes. ``cpu_parent``/``cpu_children`` are the event tree torch
    builds (async events, ending on another thread, are outside it); ``input_shapes`` is a list
    of shapes per input (with ``record_shapes=True``); ``stack`` the Python frames around it,
    innermost first (with ``with_stack=True``); ``sequence_nr`` the autograd sequence number
    (-1 for none).

    torch 2.13's other fields read what the Chrome trace writes for the event: with
    ``record_shapes``, ``structured_input_shapes`` (``Input Dims``: a tensor list's shapes
    included), ``structured_input_strides`` (``Input Strides``), ``input_dtypes`` (``Input
    type``), ``concrete_inputs`` (``Concrete Inputs`` as
    Python values, None for a tensor) and ``kwinputs`` (the keyword inputs of
    ``torch._C._profiler._RecordFunctionFast``); ``activity_type`` (its ``cat``),
    ``is_python_function``, ``python_id`` (``Python id``, -1 for none), ``external_id``
    (``External id``, written with GPU collection; 0 for none), ``flow_id``/``flow_type``/
    ``flow_start`` (the ``fwdbwd`` flow, type 1, or ``ac2g`` flow, type 2, it starts or ends;
    0/0/False for none) and ``device_index`` (the GPU of a device event, the process id of a host
    event, as torch has it).
    """

    id: int
    name: str
    thread: int
    time_range: "Interval"
    device_type: str
    is_async: bool
    is_user_annotation: bool
    sequence_nr: int
    input_shapes: List[Any]
    stack: List[str]
    cpu_time_total: float
    self_cpu_time_total: float
    device_time_total: float
    self_device_time_total: float
    cpu_memory_usage: int
    self_cpu_memory_usage: int
    device_memory_usage: int
    self_device_memory_usage: int
    flops: int
    cpu_parent: Optional["FunctionEvent"] = None
    cpu_children: List["FunctionEvent"] = field(default_factory=list)
    count: int = 1
    node_id: int = -1
    is_remote: bool = False
    is_legacy: bool = False
    overload_name: str = ""
    structured_input_shapes: List[Any] = field(default_factory=list)
    structured_input_strides: List[Any] = field(default_factory=list)
    input_dtypes: List[str] = field(default_factory=list)
    concrete_inputs: List[Any] = field(default_factory=list)
    kwinputs: Dict[str, Any] = field(default_factory=dict)
    activity_type: Optional[str] = None
    is_python_function: bool = False
    python_id: int = -1
    external_id: int = 0
    flow_id: int = 0
    flow_type: int = 0
    flow_start: bool = False
    device_index: int = 0

    @property
    def key(self) -> str:
        return self.name

    @property
    def trace_name(self) -> str:
        """The event's name in the Chrome trace (torch.profiler's field)."""
        return self.name

    @property
    def kernels(self) -> List[Any]:
        """Always empty, as torch.profiler's events have it outside its legacy profiler: GPU
        work is events of its own (``device_type`` ``"CUDA"``)."""
        return []

    @property
    def self_cuda_memory_usage(self) -> int:
        """torch.profiler's older name for self_device_memory_usage."""
        return self.self_device_memory_usage

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us start={self.time_range.start:.3f}us>")


def _is_nested(event: Any) -> bool:
    """Whether an event, or a row's first event, nests in another event."""
    return event.cpu_parent is not None if isinstance(event, FunctionEvent) else event.nested


@dataclass(frozen=True)
class Interval:
    """An event's span in microseconds (torch.profiler's ``Interval``)."""

    start: float
    end: float

    def elapsed_us(self) -> float:
        return self.end - self.start


_SORT_KEYS: Dict[str, Callable[[Any], float]] = {
    "cpu_time_total": lambda e: e.cpu_time_total,
    "self_cpu_time_total": lambda e: e.self_cpu_time_total,
    "cpu_time": lambda e: e.cpu_time,
    "count": lambda e: e.count,
    "device_time_total": lambda e: e.device_time_total,
    "cuda_time_total": lambda e: e.device_time_total,
    "self_device_time_total": lambda e: e.self_device_time_total,
    "self_cuda_time_total": lambda e: e.self_device_time_total,
    "device_time": lambda e: e.device_time,
    "cuda_time": lambda e: e.device_time,
    "flops": lambda e: e.flops,
    "cpu_memory_usage": lambda e: e.cpu_memory_usage,
    "self_cpu_memory_usage": lambda e: e.self_cpu_memory_usage,
    "device_memory_usage": lambda e: e.device_memory_usage,
    "cuda_memory_usage": lambda e: e.device_memory_usage,
    "self_device_memory_usage": lambda e: e.self_device_memory_usage,
    "self_cuda_memory_usage": lambda e: e.self_device_memory_usage,
}


class EventList(list):
    """The rows of :meth:`perfprof.profile.key_averages` (:class:`FunctionEventAvg`) or the events
    of :meth:`perfprof.profile.events` (:class:`FunctionEvent`), with torch.profiler's
    ``EventList`` methods: ``table``, ``key_averages``, ``total_average``, ``export_stacks``,
    ``export_chrome_trace`` and ``self_cpu_time_total``."""

    def __init__(self, rows: Sequence[Any] = (), *, with_device: bool = False, with_flops: bool = False,
                 with_memory: bool = False) -> None:
        super().__init__(rows)
        self._with_device = with_device
        self._with_flops = with_flops
        self._with_memory = with_memory

    def __str__(self) -> str:
        """The table, as torch.profiler prints an EventList."""
        return self.table()

    @property
    def self_cpu_time_total(self) -> float:
        """The self CPU time of every event or row together (us)."""
        return sum(event.self_cpu_time_total for event in self)

    def total_average(self) -> FunctionEventAvg:
        """One row, key ``"Total"``, adding up every event or row of the list (times, memory,
        calls, FLOPs), as torch.profiler's ``total_average``."""
        total = FunctionEventAvg(key="Total", input_shapes="", stack=[], device_type="CPU",
                                 **_no_totals())
        for event in self:
            total._accumulate(event)
        return total

    def key_averages(self, group_by_input_shapes: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> "EventList":
        """This list's events (or rows) added up per key as torch.profiler's
        ``EventList.key_averages`` does: by name, device type and whether they are user
        annotations, and when asked by input shapes and the innermost `group_by_stack_n` frames.
        On :meth:`perfprof.profile.events` it gives the rows of :meth:`perfprof.profile.key_averages`.
        Overload names are not recorded, so `group_by_overload_name` splits nothing."""
        check_grouping("key_averages", "group_by_input_shapes", group_by_input_shapes, group_by_stack_n,
                        group_by_overload_name)
        rows: Dict[Tuple[Any, ...], FunctionEventAvg] = {}
        for event in self:
            key: Tuple[Any, ...] = (event.key, event.device_type, event.is_user_annotation)
            if group_by_input_shapes:
                key += (str(event.input_shapes),)
            if group_by_stack_n:
                key += tuple(event.stack[:group_by_stack_n])
            row = rows.get(key)
            if row is None:
                row = rows[key] = FunctionEventAvg._first_of(event)
                row.stack = row.stack[:group_by_stack_n]
                if not group_by_input_shapes:
                    row.input_shapes = ""
            row._accumulate(event)
        return EventList(list(rows.values()), with_device=self._with_device, with_flops=self._with_flops,
                         with_memory=self._with_memory)

    @staticmethod
    def supported_export_stacks_metrics() -> List[str]:
        """The metrics :meth:`export_stacks` takes."""
        return list(_STACK_METRICS)

    def export_stacks(self, path: "os.PathLike[str] | str", metric: str = "self_cpu_time_total") -> str:
        """Write each event's (or row's) `metric` in us under its Python stack, outermost frame
        first, in the folded format FlameGraph and speedscope read (torch.profiler's
        ``EventList.export_stacks``: events without a stack or without time are left out; frames
        have spaces and semicolons replaced by ``_``). Returns the path written."""
        if metric not in _STACK_METRICS:
            raise ValueError(f"export_stacks: unknown metric {metric!r}; expected one of {', '.join(_STACK_METRICS)}")
        attribute = _STACK_METRICS[metric]
        lines = []
        for event in self:
            value = int(getattr(event, attribute))
            if event.stack and value > 0:
                frames = ";".join(frame.translate(_FOLDED_FRAME) for frame in reversed(event.stack))
                lines.append(f"{frames} {value}\n")
        return _write_text("export_stacks", path, "".join(lines))

    def export_chrome_trace(self, path: "os.PathLike[str] | str") -> str:
        """Write the events as a Chrome trace of complete events in process "CPU functions", one
        per event on its thread (torch.profiler's ``EventList.export_chrome_trace``; the
        profiler's own ``export_chrome_trace`` writes the whole trace). Returns the path written."""
        if any(not isinstance(event, FunctionEvent) for event in self):
            raise TypeError("export_chrome_trace: the list holds rows of key_averages(), which have no times; "
                            "use the events of profile.events()")
        events = [{"name": event.name, "ph": "X", "ts": event.time_range.start, "dur": event.time_range.elapsed_us(),
                   "tid": event.thread, "pid": "CPU functions", "args": {}} for event in self]
        return _write_text("export_chrome_trace", path, json.dumps(events))

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, max_shapes_column_width: int = 80, header: Optional[str] = None,
              top_level_events_only: bool = False, time_unit: Optional[str] = None) -> str:
        """The table torch.profiler prints: name, self/total CPU time, calls; device, memory and
        FLOPs columns when there is device time, memory profiling or FLOPs. `sort_by` is one of
        the total/self/average time keys of torch (``"cpu_time_total"``, ``"self_cpu_time_total"``,
        ``"cuda_time_total"``, ...), its memory keys (``"cpu_memory_usage"``,
        ``"self_cpu_memory_usage"``, ``"cuda_memory_usage"``, ...), ``"count"`` or ``"flops"``;
        rows are then in descending order, ties in list order. ``row_limit < 0`` shows every
        row; `top_level_events_only` leaves out the rows (events) whose first event nests in
        another; `time_unit` (``"s"``, ``"ms"``, ``"us"``) shows every time in that unit. Rows
        grouped by input shapes show them under "Input Shapes" (cut at
        `max_shapes_column_width`), rows grouped by stack under "Source Location", one frame a line."""
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table: unknown sort_by {sort_by!r}; expected one of {', '.join(sorted(_SORT_KEYS))}")
        for name, value in (("row_limit", row_limit), ("max_src_column_width", max_src_column_width),
                            ("max_name_column_width", max_name_column_width),
                            ("max_shapes_column_width", max_shapes_column_width)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"table: {name!r} must be an int, got {type(value).__name__}")
        if time_unit not in _TIME_UNITS:
            raise ValueError(f"table: unknown time_unit {time_unit!r}; expected one of 's', 'ms', 'us' or None")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=_SORT_KEYS[sort_by], reverse=True)
        if top_level_events_only:
            rows = [row for row in rows if not _is_nested(row)]
        if row_limit >= 0:
            rows = rows[:row_limit]
        layout = _TableLayout(self._with_device, self._with_flops, self._with_memory, max_name_column_width,
                              max_src_column_width, max_shapes_column_width, _TIME_UNITS[time_unit])
        return _format_table(self, rows, layout, header, top_level_events_only)


_STACK_METRICS = {"self_cpu_time_total": "self_cpu_time_total", "self_cuda_time_total": "self_device_time_total",
                  "self_device_time_total": "self_device_time_total"}
_FOLDED_FRAME = str.maketrans(" ;\t\n", "____")


def check_grouping(function: str, shapes_name: str, by_shapes: object, stack_n: object, by_overload: object) -> None:
    """The grouping arguments of key_averages, checked as torch's types have them."""
    if not isinstance(by_shapes, bool):
        raise TypeError(f"{function}: {shapes_name!r} must be a bool, got {type(by_shapes).__name__}")
    STACK_FRAMES.check(stack_n, function, "group_by_stack_n")
    if not isinstance(by_overload, bool):
        raise TypeError(f"{function}: 'group_by_overload_name' must be a bool, got {type(by_overload).__name__}")


def _write_text(function: str, path: "os.PathLike[str] | str", text: str) -> str:
    """Write `text` to `path` whole (a temporary file renamed into place); the path written."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{function}: 'path' must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    make_directory(os.path.dirname(os.path.abspath(path)))
    with replaced_whole(path) as out:
        out.write(text)
    return path


def joined(lists: Sequence[EventList]) -> EventList:
    """The events (or rows) of several cycles' lists in one list, in cycle order; events are
    numbered on from one list to the next."""
    together = EventList([item for items in lists for item in items],
                         with_device=any(part._with_device for part in lists),
                         with_flops=any(part._with_flops for part in lists), with_memory=lists[0]._with_memory)
    for number, item in enumerate(together):
        if isinstance(item, FunctionEvent):
            item.id = number
    return together


def rows_from_core(raw: Sequence[_core.KeyAverageRow], *, with_flops: bool, with_memory: bool,
                   by_input_shape: bool = False) -> EventList:
    """The EventList of the rows `_core.Trace.key_averages` returns (dicts, times in ns); rows
    grouped `by_input_shape` have them as lists (``[]``: none), as torch has them, others ``""``."""
    rows = [
        FunctionEventAvg(
            key=row["name"], input_shapes=json.loads(row["input_shapes"] or "[]") if by_input_shape else "",
            stack=row["stack"].split("\n") if row["stack"] else [], device_type="CUDA" if row["device"] else "CPU",
            count=row["count"], **_totals(row), is_async=row["first_async"], is_user_annotation=row["user_annotation"],
            nested=row["first_nested"],
        )
        for row in raw
    ]
    with_device = any(row.device_time_total for row in rows)
    return EventList(rows, with_device=with_device, with_flops=with_flops and any(row.flops for row in rows),
                     with_memory=with_memory)


def events_from_core(raw: Sequence[Dict[str, Any]], *, with_flops: bool, with_memory: bool) -> EventList:
    """The EventList of the events `_core.Trace.function_events` returns (dicts, times in ns)."""
    events = [
        FunctionEvent(
            id=index, name=row["name"], thread=row["tid"],
            time_range=Interval(row["begin_ns"] / 1e3, row["end_ns"] / 1e3),
            device_type="CUDA" if row["device"] else "CPU", is_async=row["async"],
            is_user_annotation=row["user_annotation"], sequence_nr=row["sequence"],
            input_shapes=json.loads(row["input_shapes"]) if row["input_shapes"] else [],
            stack=row["stack"].split("\n") if row["stack"] else [], **_totals(row), **_trace_fields(row),
        )
        for index, row in enumerate(raw)
    ]
    for event, row in zip(events, raw):
        if row["parent"] >= 0:
            event.cpu_parent = events[row["parent"]]
            event.cpu_parent.cpu_children.append(event)
    with_device = any(event.device_time_total for event in events)
    return EventList(events, with_device=with_device, with_flops=with_flops and any(e.flops for e in events),
                     with_memory=with_memory)


def _trace_fields(row: Mapping[str, Any]) -> Dict[str, Any]:
    """torch's FunctionEvent fields of a core event that its trace event holds (its args, ids,
    flow and category), under torch's names."""
    args = json.loads(row["args"])
    flow_id, flow_type, flow_start = row["flow"]
    return {"structured_input_shapes": args.get("Input Dims", []),
            "structured_input_strides": args.get("Input Strides", []), "input_dtypes": args.get("Input type", []),
            "concrete_inputs": [_concrete_value(text) for text in args.get("Concrete Inputs", [])],
            "kwinputs": json.loads(row["kwinputs"]), "activity_type": row["category"] or None,
            "is_python_function": row["category"] == "python_function", "python_id": row["python_id"],
            "external_id": row["external_id"], "flow_id": flow_id, "flow_type": flow_type, "flow_start": flow_start,
            "device_index": row["device_index"]}


def _concrete_value(text: str) -> Any:
    """A ``Concrete Inputs`` text as the Python value torch's ``concrete_inputs`` holds: "" (a
    tensor, or an argument not recorded) None, ``3`` 3, ``2.`` 2.0, ``True`` True, ``[1, 2]``
    [1, 2], ``inf`` inf; a text that is no Python literal (a string argument) as it is."""
    if not text:
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return float(text) if text in _NON_FINITE else text


_NON_FINITE = ("inf", "-inf", "nan")


def _totals(row: Mapping[str, Any]) -> Dict[str, Any]:
    """A core row's times (ns -> us), memory and FLOPs under torch's names."""
    totals = {"cpu_time_total": row["cpu_total_ns"] / 1e3, "self_cpu_time_total": row["self_cpu_ns"] / 1e3,
              "device_time_total": row["device_total_ns"] / 1e3, "self_device_time_total": row["self_device_ns"] / 1e3,
              "cpu_memory_usage": row["cpu_memory_bytes"], "self_cpu_memory_usage": row["self_cpu_memory_bytes"],
              "device_memory_usage": row["device_memory_bytes"],
              "self_device_memory_usage": row["self_device_memory_bytes"], "flops": row["flops"]}
    return totals


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


# table(time_unit=...): how each unit shows a time in us; None: the unit each value reads best in.
_TIME_UNITS: Dict[Optional[str], Callable[[float], str]] = {
    None: _format_time,
    "s": lambda us: f"{us / 1e6:.3f}s",
    "ms": lambda us: f"{us / 1e3:.3f}ms",
    "us": lambda us: f"{us:.3f}us",
}

# The FLOPs column's units, by the power of 1000 of the smallest count (torch's auto-scaling).
_FLOPS_UNITS = ("FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs")


def _flops_scale(rows: Sequence[Any]) -> Tuple[float, str]:
    """The scale and header of the FLOPs column: the unit of the smallest positive count."""
    smallest = min((row.flops for row in rows if row.flops > 0), default=1)
    power = max(0, min(int(math.log10(smallest) // 3), len(_FLOPS_UNITS) - 1))
    return 1000.0 ** -power, f"Total {_FLOPS_UNITS[power]}"


def _format_share(part: float, total: float) -> str:
    """`part` as a percentage of `total`; "NaN" for a total of 0 (as torch.profiler)."""
    return f"{100 * part / total:.2f}%" if total else "NaN"


def _format_memory(nbytes: int) -> str:
    """torch.profiler's memory text: B, KB, MB or GB (powers of 1024), two decimals."""
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _trim_path(path: str, width: int) -> str:
    """`path` cut to its last `width` characters, the cut marked with "..." (as torch.profiler)."""
    return path if len(path) <= width else "..." + path[len(path) - width + 3:]


@dataclass(frozen=True)
class _TableLayout:
    """What a table shows and how wide its text columns may be."""

    with_device: bool
    with_flops: bool
    with_memory: bool
    name_width: int
    src_width: int
    shapes_width: int
    time: Callable[[float], str]


def _format_table(all_rows: Sequence[Any], rows: Sequence[Any], layout: _TableLayout, header: Optional[str],
                  top_level_only: bool) -> str:
    # Percentages are of the self time of everything, which adds up to the time covered: on the
    # host the self times of host events, on the device the GPU activities' times (the host
    # events' device times count the same work again).
    self_cpu_sum = sum(row.self_cpu_time_total for row in all_rows)
    self_device_sum = sum(row.self_device_time_total for row in all_rows if row.device_type != "CPU")
    with_device_memory = layout.with_memory and any(row.self_device_memory_usage > 0 for row in all_rows)
    time = layout.time
    columns = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if layout.with_device:
        columns += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if layout.with_memory:
        columns += ["CPU Mem", "Self CPU Mem"]
    if with_device_memory:
        columns += ["CUDA Mem", "Self CUDA Mem"]
    columns += ["# of Calls"]
    # torch's order after the calls: input shapes, FLOPs, source location.
    grouped_by_shapes = any(row.input_shapes for row in rows)
    if grouped_by_shapes:
        columns += ["Input Shapes"]
    if layout.with_flops:
        flops_scale, flops_header = _flops_scale(all_rows)
        columns += [flops_header]
    grouped_by_stack = any(row.stack for row in rows)
    if grouped_by_stack:
        columns += ["Source Location"]
    lines = []
    for row in rows:
        name = row.key if len(row.key) <= layout.name_width else row.key[: layout.name_width - 3] + "..."
        cells = [name, _format_share(row.self_cpu_time_total, self_cpu_sum), time(row.self_cpu_time_total),
                 _format_share(row.cpu_time_total, self_cpu_sum), time(row.cpu_time_total), time(row.cpu_time)]
        if layout.with_device:
            cells += [time(row.self_device_time_total), _format_share(row.self_device_time_total, self_device_sum),
                      time(row.device_time_total), time(row.device_time)]
        if layout.with_memory:
            cells += [_format_memory(row.cpu_memory_usage), _format_memory(row.self_cpu_memory_usage)]
        if with_device_memory:
            cells += [_format_memory(row.device_memory_usage), _format_memory(row.self_device_memory_usage)]
        cells += [str(row.count)]
        if grouped_by_shapes:
            cells += [str(row.input_shapes)[: layout.shapes_width]]
        if layout.with_flops:
            cells += [f"{row.flops * flops_scale:.3f}" if row.flops > 0 else "--"]
        if grouped_by_stack:
            frames = [_trim_path(frame, layout.src_width) for frame in row.stack] or [""]
            lines.append(cells + frames[:1])
            lines += [[""] * len(cells) + [frame] for frame in frames[1:]]
        else:
            lines.append(cells)
    widths = [max([len(columns[i])] + [len(cells[i]) for cells in lines]) for i in range(len(columns))]
    separator = "  ".join("-" * w for w in widths)
    left_aligned = {0, len(columns) - 1} if grouped_by_stack else {0}

    def render(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(w) if i in left_aligned else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(cells, widths)))

    out = [header] if header else []
    if top_level_only:
        out.append("This report only display top-level ops statistics")
    out += [separator, render(columns), separator]
    out += [render(cells) for cells in lines]
    out += [separator, f"Self CPU time total: {time(self_cpu_sum)}"]
    if layout.with_device:
        out.append(f"Self CUDA time total: {time(self_device_sum)}")
    return "\n".join(out) + "\n"
