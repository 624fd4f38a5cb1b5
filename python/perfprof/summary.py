"""key_averages(): per-operator totals, computed in C++ from the trace model, shown as torch's table."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Sequence


@dataclass(frozen=True)
class FunctionEventAvg:
    """Totals for one key (operator name, and input shapes / stack when grouped by them).

    Times are in microseconds, as in torch.profiler's ``FunctionEventAvg``.
    """

    key: str
    input_shapes: str
    stack: List[str]
    count: int
    cpu_time_total: float
    self_cpu_time_total: float
    device_time_total: float
    self_device_time_total: float
    flops: int

    @property
    def cpu_time(self) -> float:
        """Average CPU time per call (us)."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self) -> float:
        """Average device (GPU) time per call (us)."""
        return self.device_time_total / self.count if self.count else 0.0

    @property
    def cuda_time_total(self) -> float:
        """torch.profiler's older name for device_time_total."""
        return self.device_time_total

    @property
    def self_cuda_time_total(self) -> float:
        """torch.profiler's older name for self_device_time_total."""
        return self.self_device_time_total


_SORT_KEYS: Dict[str, Callable[[FunctionEventAvg], float]] = {
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
}


class EventList(list):
    """The rows of :meth:`perfprof.profile.key_averages`; a list of :class:`FunctionEventAvg`."""

    def __init__(self, rows: Sequence[FunctionEventAvg], *, with_device: bool, with_flops: bool) -> None:
        super().__init__(rows)
        self._with_device = with_device
        self._with_flops = with_flops

    def table(self, sort_by: Optional[str] = None, row_limit: int = 100, max_name_column_width: int = 55,
              header: Optional[str] = None) -> str:
        """The table torch.profiler prints: name, self/total CPU time, calls; device and FLOPs
        columns when there is device time or FLOPs. `sort_by` is one of the total/self/average
        time keys of torch (``"cpu_time_total"``, ``"self_cpu_time_total"``, ``"cuda_time_total"``,
        ...), ``"count"`` or ``"flops"``; rows are then in descending order. ``row_limit < 0``
        shows every row."""
        if sort_by is not None and sort_by not in _SORT_KEYS:
            raise ValueError(f"table: unknown sort_by {sort_by!r}; expected one of {', '.join(sorted(_SORT_KEYS))}")
        if not isinstance(row_limit, int):
            raise TypeError(f"table: 'row_limit' must be an int, got {type(row_limit).__name__}")
        rows = list(self)
        if sort_by is not None:
            rows.sort(key=_SORT_KEYS[sort_by], reverse=True)
        if row_limit >= 0:
            rows = rows[:row_limit]
        return _format_table(self, rows, self._with_device, self._with_flops, max_name_column_width, header)


def rows_from_core(raw: Sequence[tuple], *, with_flops: bool) -> EventList:
    rows = [
        FunctionEventAvg(
            key=name, input_shapes=shapes, stack=stack.split("\n") if stack else [], count=count,
            cpu_time_total=cpu_ns / 1e3, self_cpu_time_total=self_cpu_ns / 1e3,
            device_time_total=device_ns / 1e3, self_device_time_total=self_device_ns / 1e3, flops=flops,
        )
        for name, shapes, stack, count, cpu_ns, self_cpu_ns, device_ns, self_device_ns, flops in raw
    ]
    with_device = any(row.device_time_total for row in rows)
    return EventList(rows, with_device=with_device, with_flops=with_flops and any(row.flops for row in rows))


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_flops(flops: int) -> str:
    return f"{flops / 1e6:.3f}"


def _format_table(all_rows: Sequence[FunctionEventAvg], rows: Sequence[FunctionEventAvg], with_device: bool,
                  with_flops: bool, name_width: int, header: Optional[str]) -> str:
    # Percentages are of the self time of everything, which adds up to the time covered.
    self_cpu_sum = sum(row.self_cpu_time_total for row in all_rows) or 1.0
    self_device_sum = sum(row.self_device_time_total for row in all_rows) or 1.0
    columns = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if with_device:
        columns += ["Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"]
    columns += ["# of Calls"]
    if with_flops:
        columns += ["Total MFLOPs"]
    grouped_by_shapes = any(row.input_shapes for row in rows)
    if grouped_by_shapes:
        columns += ["Input Shapes"]
    lines = []
    for row in rows:
        name = row.key if len(row.key) <= name_width else row.key[: name_width - 3] + "..."
        cells = [name, f"{100 * row.self_cpu_time_total / self_cpu_sum:.2f}%", _format_time(row.self_cpu_time_total),
                 f"{100 * row.cpu_time_total / self_cpu_sum:.2f}%", _format_time(row.cpu_time_total),
                 _format_time(row.cpu_time)]
        if with_device:
            cells += [_format_time(row.self_device_time_total),
                      f"{100 * row.self_device_time_total / self_device_sum:.2f}%",
                      _format_time(row.device_time_total), _format_time(row.device_time)]
        cells += [str(row.count)]
        if with_flops:
            cells += [_format_flops(row.flops)]
        if grouped_by_shapes:
            cells += [row.input_shapes]
        lines.append(cells)
    widths = [max([len(columns[i])] + [len(cells[i]) for cells in lines]) for i in range(len(columns))]
    separator = "  ".join("-" * w for w in widths)

    def render(cells: Sequence[str]) -> str:
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(cells, widths)))

    out = ([header] if header else []) + [separator, render(columns), separator]
    out += [render(cells) for cells in lines]
    out += [separator, f"Self CPU time total: {_format_time(sum(row.self_cpu_time_total for row in all_rows))}"]
    if with_device:
        out.append(f"Self CUDA time total: {_format_time(sum(row.self_device_time_total for row in all_rows))}")
    return "\n".join(out) + "\n"
