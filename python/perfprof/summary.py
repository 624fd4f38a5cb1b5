"""events() and key_averages(): torch.profiler's events one by one and their totals per key,
computed in C++ from the trace model, shown as torch's table."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence

if TYPE_CHECKING:
    from . import _core


class _TorchNames:
    """torch.profiler's older names of the device times."""

    device_time_total: float
    self_device_time_total: float

    @property
    def cuda_time_total(self) -> float:
        """torch.profiler's older name for device_time_total."""
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        """torch.profiler's older name for self_device_time_total."""
        return self.self_device_time_total


@dataclass(frozen=True)
class FunctionEventAvg(_TorchNames):
    """Totals for one key (event name, and input shapes / stack when grouped by them).

    Times are in microseconds and memory in bytes, as in torch.profiler's ``FunctionEventAvg``.
    ``device_type`` is ``"CPU"`` for host events (operators, annotations, Python functions,
    CUDA API calls) and ``"CUDA"`` for GPU activities (kernels, memcpy, memset), which have
    device time only. Memory is what the allocator events during the events add up to (frees
    count negative; self: less the events nested in them), filled with ``profile_memory=True``.
    """

    key: str
    input_shapes: str
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

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (us)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """Average device (GPU) time per call (us)."""
        return self.device_time_total / self.count if self.count else 0.0


@dataclass(eq=False)
class FunctionEvent(_TorchNames):
    """One event of :meth:`perfprof.profile.events`: an operator, annotation, Python function or
    GPU activity, as torch.profiler's ``FunctionEvent`` has it.

    Times are in microseconds on the trace's clock (``time_range.start``/``end``, as in the
    Chrome trace) and memory in bytes. ``cpu_parent``/``cpu_children`` are the event tree torch
    builds (async events, ending on another thread, are outside it); ``input_shapes`` is a list
    of shapes per input (with ``record_shapes=True``); ``stack`` the Python frames around it,
    innermost first (with ``with_stack=True``); ``sequence_nr`` the autograd sequence number
    (-1 for none).
    """

    id: int
    name: str
    thread: int
    time_range: "Interval"
    device_type: str
    is_async: bool
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

    @property
    def key(self) -> str:
        return self.name

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def device_time(self) -> float:
        return self.device_time_total

    def __repr__(self) -> str:
        return (f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us start={self.time_range.start:.3f}us>")


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
    """The rows of :meth:`perfprof.profile.key_averages` (:class:`FunctionEventAvg`) or of
    :meth:`perfprof.profile.events` (:class:`FunctionEvent`)."""

    def __init__(self, rows: Sequence[Any], *, with_device: bool, with_flops: bool,
                 with_memory: bool = False) -> None:
        super().__init__(rows)
        self._with_device = with_device
        self._with_flops = with_flops
        self._with_memory = with_memory

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_src_column_width: int = 75,
              max_name_column_width: int = 55, header: Optional[str] = None) -> str:
        """The table torch.profiler prints: name, self/total CPU time, calls; device, memory and
        FLOPs columns when there is device time, memory profiling or FLOPs. `sort_by` is one of
        the total/self/average time keys of torch (``"cpu_time_total"``, ``"self_cpu_time_total"``,
        ``"cuda_time_total"``, ...), its memory keys (``"cpu_memory_usage"``,
        ``"self_cpu_memory_usage"``, ``"cuda_memory_usage"``, ...), ``"count"`` or ``"flops"``;
        rows are then in descending order, ties in list order. ``row_limit < 0`` shows every
        row. Rows grouped by stack show it under "Source Location", one frame a line."""
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table: unknown sort_by {sort_by!r}; expected one of {', '.join(sorted(_SORT_KEYS))}")
        if not isinstance(row_limit, int):
            raise TypeError(f"table: 'row_limit' must be an int, got {type(row_limit).__name__}")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=_SORT_KEYS[sort_by], reverse=True)
        if row_limit >= 0:
            rows = rows[:row_limit]
        return _format_table(self, rows, self._with_device, self._with_flops, self._with_memory,
                             max_name_column_width, max_src_column_width, header)


def rows_from_core(raw: Sequence[_core.KeyAverageRow], *, with_flops: bool, with_memory: bool) -> EventList:
    """The EventList of the rows `_core.Trace.key_averages` returns (dicts, times in ns)."""
    rows = [
        FunctionEventAvg(
            key=row["name"], input_shapes=row["input_shapes"], stack=row["stack"].split("\n") if row["stack"] else [],
            device_type="CUDA" if row["device"] else "CPU", count=row["count"],
            cpu_time_total=row["cpu_total_ns"] / 1e3, self_cpu_time_total=row["self_cpu_ns"] / 1e3,
            device_time_total=row["device_total_ns"] / 1e3, self_device_time_total=row["self_device_ns"] / 1e3,
            cpu_memory_usage=row["cpu_memory_bytes"], self_cpu_memory_usage=row["self_cpu_memory_bytes"],
            device_memory_usage=row["device_memory_bytes"], self_device_memory_usage=row["self_device_memory_bytes"],
            flops=row["flops"],
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
            id=index, name=row["name"], thread=row["tid"], time_range=Interval(row["begin_ns"] / 1e3, row["end_ns"] / 1e3),
            device_type="CUDA" if row["device"] else "CPU", is_async=row["async"], sequence_nr=row["sequence"],
            input_shapes=json.loads(row["input_shapes"]) if row["input_shapes"] else [],
            stack=row["stack"].split("\n") if row["stack"] else [],
            cpu_time_total=row["cpu_total_ns"] / 1e3, self_cpu_time_total=row["self_cpu_ns"] / 1e3,
            device_time_total=row["device_total_ns"] / 1e3, self_device_time_total=row["self_device_ns"] / 1e3,
            cpu_memory_usage=row["cpu_memory_bytes"], self_cpu_memory_usage=row["self_cpu_memory_bytes"],
            device_memory_usage=row["device_memory_bytes"], self_device_memory_usage=row["self_device_memory_bytes"],
            flops=row["flops"],
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


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_flops(flops: int) -> str:
    return f"{flops / 1e6:.3f}"


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


def _format_table(all_rows: Sequence[FunctionEventAvg], rows: Sequence[FunctionEventAvg], with_device: bool,
                  with_flops: bool, with_memory: bool, name_width: int, src_width: int, header: Optional[str]) -> str:
    # Percentages are of the self time of everything, which adds up to the time covered: on the
    # host the self times of host events, on the device the GPU activities' times (the host
    # events' device times count the same work again).
    self_cpu_sum = sum(row.self_cpu_time_total for row in all_rows)
    self_device_sum = sum(row.self_device_time_total for row in all_rows if row.device_type != "CPU")
    with_device_memory = with_memory and any(row.self_device_memory_usage > 0 for row in all_rows)
    columns = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if with_device:
        columns += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    if with_memory:
        columns += ["CPU Mem", "Self CPU Mem"]
    if with_device_memory:
        columns += ["CUDA Mem", "Self CUDA Mem"]
    columns += ["# of Calls"]
    if with_flops:
        columns += ["Total MFLOPs"]
    grouped_by_shapes = any(row.input_shapes for row in rows)
    if grouped_by_shapes:
        columns += ["Input Shapes"]
    grouped_by_stack = any(row.stack for row in rows)
    if grouped_by_stack:
        columns += ["Source Location"]
    lines = []
    for row in rows:
        name = row.key if len(row.key) <= name_width else row.key[: name_width - 3] + "..."
        cells = [name, _format_share(row.self_cpu_time_total, self_cpu_sum), _format_time(row.self_cpu_time_total),
                 _format_share(row.cpu_time_total, self_cpu_sum), _format_time(row.cpu_time_total),
                 _format_time(row.cpu_time)]
        if with_device:
            cells += [_format_time(row.self_device_time_total),
                      _format_share(row.self_device_time_total, self_device_sum),
                      _format_time(row.device_time_total), _format_time(row.device_time)]
        if with_memory:
            cells += [_format_memory(row.cpu_memory_usage), _format_memory(row.self_cpu_memory_usage)]
        if with_device_memory:
            cells += [_format_memory(row.device_memory_usage), _format_memory(row.self_device_memory_usage)]
        cells += [str(row.count)]
        if with_flops:
            cells += [_format_flops(row.flops)]
        if grouped_by_shapes:
            cells += [row.input_shapes if isinstance(row.input_shapes, str) else json.dumps(row.input_shapes)]
        if grouped_by_stack:
            frames = [_trim_path(frame, src_width) for frame in row.stack] or [""]
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

    out = ([header] if header else []) + [separator, render(columns), separator]
    out += [render(cells) for cells in lines]
    out += [separator, f"Self CPU time total: {_format_time(self_cpu_sum)}"]
    if with_device:
        out.append(f"Self CUDA time total: {_format_time(self_device_sum)}")
    return "\n".join(out) + "\n"
