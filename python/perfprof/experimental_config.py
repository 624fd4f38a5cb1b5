"""ExperimentalConfig: the extended collection options, and their enums."""
from __future__ import annotations

import enum
from typing import Any, Dict, Iterable, List, Optional, Sequence, Type, TypeVar, Union

from ._logging import logger, warn_once
from ._ranges import DEVICE_INDEX, GC_THRESHOLD_MS, SAMPLE_INTERVAL_MS, SIZE_MIB


class ExportType(enum.Enum):
    """Formats a run directory is written in."""

    Text = "text"
    """Chrome trace JSON (Perfetto UI, chrome://tracing, HolisticTraceAnalysis, TensorBoard)."""
    Db = "db"
    """SQLite database (docs/database.md)."""


class ProfilerLevel(enum.Enum):
    """How much GPU-side activity to collect (applies to ProfilerActivity.CUDA)."""

    Level_none = "Level_none"
    """Markers only."""
    Level0 = "Level0"
    """Kernels, memory copies and sets, CUDA runtime API."""
    Level1 = "Level1"
    """Level0 plus driver API, synchronisation, device allocations, CUDA graph launches."""
    Level2 = "Level2"
    """Level1 plus per-kernel launch attributes (occupancy)."""


class GpuMetrics(enum.Enum):
    """Per-kernel hardware metric groups (the CUDA counterpart of the spec's aic_metrics)."""

    GpuMetricsNone = "GpuMetricsNone"
    PipeUtilization = "PipeUtilization"
    """Issue-slot utilisation of the SM pipes (tensor, FMA, ALU, LSU)."""
    ArithmeticUtilization = "ArithmeticUtilization"
    """FLOP rates by precision."""
    Memory = "Memory"
    """DRAM read/write throughput."""
    L2Cache = "L2Cache"
    """L2 hit rate and throughput."""
    MemoryAccess = "MemoryAccess"
    """Global and shared memory load/store traffic."""
    Occupancy = "Occupancy"
    """Achieved occupancy."""


HOST_SYS_OPTIONS = ("cpu", "mem", "disk", "network", "osrt")

E = TypeVar("E", bound=enum.Enum)


def supported_export_type() -> List[ExportType]:
    """Export types this version writes."""
    return [ExportType.Text, ExportType.Db]


def supported_profiler_level() -> List[ProfilerLevel]:
    """Profiler levels ExperimentalConfig accepts."""
    return list(ProfilerLevel)


def supported_gpu_metrics(device: int = 0) -> List[GpuMetrics]:
    """The GPU metric groups CUDA device `device` can measure: ``GpuMetricsNone`` and each group
    whose every metric the device's chip has, as CUPTI lists them. Only ``GpuMetricsNone`` where
    CUPTI cannot say (no GPU, no CUPTI, a CUPTI without the Range Profiler API); the reason is
    logged. A group listed may still be refused when a profiler starts (another tool holding the
    GPU's counters, counters restricted to administrators): that is logged then."""
    device = int(DEVICE_INDEX.check(device, "supported_gpu_metrics", "device"))
    from .cuda import cuda_status
    from . import _core

    status = cuda_status()
    if not status["available"]:
        logger.info("perfprof: no GPU metrics can be measured: %s", status["reason"])
        return [GpuMetrics.GpuMetricsNone]
    names, error = _core.supported_gpu_metric_groups(device)
    if error:
        logger.info("perfprof: CUPTI cannot say which GPU metrics device %d measures: %s", device, error)
    return [GpuMetrics.GpuMetricsNone] + [GpuMetrics(name) for name in names]


class ExperimentalConfig:
    """Extended collection options for :class:`perfprof.profile`.

    Every argument is validated: a wrong type raises ``TypeError`` and a wrong value
    ``ValueError``, each naming the field. Enum fields also take the member's name or value as a
    string (``"Level1"``, ``"text"``), as a JSON config file would give them.

    Args:
        export_type: ExportType or a list of them (default ``[ExportType.Text]``).
        profiler_level: GPU collection level (default ``ProfilerLevel.Level0``).
        mstx: record ``perfprof.mstx`` markers (alias ``msprof_tx``).
        mstx_domain_include: record only these mstx domains. Wins over ``mstx_domain_exclude``
            when both are given (with a warning).
        mstx_domain_exclude: record every mstx domain but these.
        gpu_metrics: per-kernel hardware metrics, read with CUPTI's range profiler (default
            ``GpuMetricsNone``, at every level: measuring serialises the kernels, so it is
            asked for explicitly). Needs ``ProfilerActivity.CUDA``; see docs/gpu_metrics.md.
        l2_cache: add each kernel's L2 cache hit rate to the metrics above.
        op_attr: collect operator attributes.
        data_simplification: remove a run directory's capture once its trace and tables are
            written (False keeps it, for ``perfprof analyse`` to write them again).
        record_op_args: record operators' scalar argument values (``Concrete Inputs``), as
            ``record_shapes`` does.
        gc_detect_threshold: record Python GC pauses at or above this many milliseconds
            (0: all; None: off).
        host_sys: host system metrics to sample, a subset of
            ``("cpu", "mem", "disk", "network", "osrt")``.
        sys_io: sample the NICs' receive and transmit rates (as ``host_sys=["network"]``) and
            each GPU's PCIe receive and transmit rates (NVML).
        sys_interconnection: sample each GPU's PCIe rates and each active NVLink's receive and
            transmit rates (NVML).
        gpu_telemetry: (perfprof) sample each GPU's utilisation, memory utilisation, memory used,
            power, SM clock and temperature (NVML; also on with ``sys_io`` or
            ``sys_interconnection``).
        sample_interval_ms: (perfprof) how often the telemetry above is sampled, in ms (default
            20; from 1 to 60000).
        capture_buffer_mb: (perfprof) the most memory, in MiB, recorded events may hold while a
            run directory's capture is written (``tensorboard_trace_handler``): beyond it they
            are moved to the capture file before the step ends (default 256).
        record_limit_mb: (perfprof) the most memory, in MiB, one cycle's recorded events may take
            (in memory or in its capture: the trace built at stop reads them all); events beyond
            it are dropped, counted and reported in one line. None (default): a quarter of the
            memory the process can still use when the cycle begins (the least of the system's
            available memory and the room under ``ulimit -v`` and the cgroup's limit), leaving
            room for the job and for building the trace.

    Options whose collection this version does not have yet are accepted and logged once when a
    profiler starts with them set; see docs/api.md for the list.
    """

    # The fields, in the order to_dict() and profiler_info.json give them. __init__ sets each
    # one, checked; everything else (slots, to_dict, equality, repr) is derived from this list.
    FIELDS = (
        "export_type", "profiler_level", "mstx", "mstx_domain_include", "mstx_domain_exclude",
        "gpu_metrics", "l2_cache", "op_attr", "data_simplification", "record_op_args",
        "gc_detect_threshold", "host_sys", "sys_io", "sys_interconnection", "capture_buffer_mb",
        "record_limit_mb", "gpu_telemetry", "sample_interval_ms",
    )
    __slots__ = FIELDS

    def __init__(
        self,
        export_type: Union[ExportType, str, Sequence[Union[ExportType, str]], None] = None,
        profiler_level: Union[ProfilerLevel, str] = ProfilerLevel.Level0,
        mstx: Optional[bool] = None,
        mstx_domain_include: Optional[Iterable[str]] = None,
        mstx_domain_exclude: Optional[Iterable[str]] = None,
        gpu_metrics: Union[GpuMetrics, str, None] = None,
        l2_cache: bool = False,
        op_attr: bool = False,
        data_simplification: bool = True,
        record_op_args: bool = False,
        gc_detect_threshold: Optional[float] = None,
        host_sys: Optional[Iterable[str]] = None,
        sys_io: bool = False,
        sys_interconnection: bool = False,
        msprof_tx: Optional[bool] = None,
        capture_buffer_mb: int = 256,
        record_limit_mb: Optional[int] = None,
        gpu_telemetry: bool = False,
        sample_interval_ms: float = 20.0,
    ) -> None:
        self.export_type: List[ExportType] = _export_types(export_type)
        self.profiler_level: ProfilerLevel = _member(ProfilerLevel, profiler_level, "profiler_level")
        self.mstx: bool = _mstx_switch(mstx, msprof_tx)
        self.mstx_domain_include: List[str] = _names(mstx_domain_include, "mstx_domain_include")
        self.mstx_domain_exclude: List[str] = _names(mstx_domain_exclude, "mstx_domain_exclude")
        if self.mstx_domain_include and self.mstx_domain_exclude:
            warn_once(
                "mstx-include-exclude",
                "perfprof: both mstx_domain_include and mstx_domain_exclude are set; "
                "mstx_domain_include takes effect and mstx_domain_exclude is ignored.",
            )
            self.mstx_domain_exclude = []
        self.gpu_metrics: GpuMetrics = _member(GpuMetrics, gpu_metrics or GpuMetrics.GpuMetricsNone, "gpu_metrics")
        self.l2_cache: bool = _flag(l2_cache, "l2_cache")
        self.op_attr: bool = _flag(op_attr, "op_attr")
        self.data_simplification: bool = _flag(data_simplification, "data_simplification")
        self.record_op_args: bool = _flag(record_op_args, "record_op_args")
        self.gc_detect_threshold: Optional[float] = _threshold(gc_detect_threshold)
        self.host_sys: List[str] = _host_sys(host_sys)
        self.sys_io: bool = _flag(sys_io, "sys_io")
        self.sys_interconnection: bool = _flag(sys_interconnection, "sys_interconnection")
        self.capture_buffer_mb: int = _size_mib(capture_buffer_mb, "capture_buffer_mb")
        self.record_limit_mb: Optional[int] = (
            None if record_limit_mb is None else _size_mib(record_limit_mb, "record_limit_mb"))
        self.gpu_telemetry: bool = _flag(gpu_telemetry, "gpu_telemetry")
        self.sample_interval_ms: float = _interval(sample_interval_ms)

    def __setattr__(self, name: str, value: Any) -> None:
        """A field assigned after construction is checked as the constructor checks it (a bad
        value raises here, naming the field, instead of losing every cycle later)."""
        if name in self.FIELDS and all(hasattr(self, field) for field in self.FIELDS):
            value = getattr(ExperimentalConfig(**{**self.to_dict(), name: value}), name)
        object.__setattr__(self, name, value)

    @property
    def msprof_tx(self) -> bool:
        """Former name of ``mstx``."""
        return self.mstx

    def to_dict(self) -> Dict[str, Any]:
        """The configuration as JSON-ready values (the form profiler_info.json records), which
        ``ExperimentalConfig(**to_dict())`` reads back."""
        return {field: _json_value(getattr(self, field)) for field in self.FIELDS}

    def uncollected_options(self) -> List[str]:
        """Options set to a non-default value whose collection this version does not have."""
        pending = {
            "op_attr": self.op_attr,
            "host_sys=osrt": "osrt" in self.host_sys,
        }
        return [name for name, is_set in pending.items() if is_set]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ExperimentalConfig) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items())
        return f"ExperimentalConfig({fields})"


def _json_value(value: Any) -> Any:
    """A field's value as JSON has it: enums by value, lists copied."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list):
        return [_json_value(item) for item in value]
    return value


def _size_mib(value: object, field: str) -> int:
    """A size in MiB (capture_buffer_mb, record_limit_mb)."""
    return int(SIZE_MIB.check(value, "ExperimentalConfig", field))


def _flag(value: object, field: str) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"ExperimentalConfig: '{field}' must be a bool, got {type(value).__name__}")
    return value


def _mstx_switch(mstx: Optional[bool], msprof_tx: Optional[bool]) -> bool:
    if mstx is not None and msprof_tx is not None and mstx != msprof_tx:
        raise ValueError("ExperimentalConfig: 'mstx' and its alias 'msprof_tx' disagree")
    value = mstx if mstx is not None else msprof_tx
    return False if value is None else _flag(value, "mstx" if mstx is not None else "msprof_tx")


def _member(enum_type: Type[E], value: object, field: str) -> E:
    if isinstance(value, enum_type):
        return value
    if isinstance(value, str):
        for member in enum_type:
            if value.lower() in (member.name.lower(), str(member.value).lower()):
                return member
        raise ValueError(
            f"ExperimentalConfig: '{field}' got {value!r}; expected one of "
            f"{[m.name for m in enum_type]}"
        )
    raise TypeError(
        f"ExperimentalConfig: '{field}' must be a {enum_type.__name__}, got {type(value).__name__}"
    )


def _export_types(value: object) -> List[ExportType]:
    if value is None:
        return [ExportType.Text]
    items = [value] if isinstance(value, (ExportType, str)) else value
    if not isinstance(items, (list, tuple)):
        raise TypeError("ExperimentalConfig: 'export_type' must be an ExportType or a list of them")
    if not items:
        raise ValueError("ExperimentalConfig: 'export_type' must name at least one export type")
    types: List[ExportType] = []
    for item in items:
        member = _member(ExportType, item, "export_type")
        if member not in types:
            types.append(member)
    return types


def _names(value: Optional[Iterable[str]], field: str) -> List[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, (list, tuple, set, frozenset)):
        raise TypeError(f"ExperimentalConfig: '{field}' must be a list of str, got {value!r}")
    names = list(value)
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"ExperimentalConfig: '{field}' must contain str, got {name!r}")
    return names


def _threshold(value: object) -> Optional[float]:
    """gc_detect_threshold: None (off) or a number of ms."""
    return None if value is None else float(GC_THRESHOLD_MS.check(value, "ExperimentalConfig", "gc_detect_threshold"))


def _interval(value: object) -> float:
    return float(SAMPLE_INTERVAL_MS.check(value, "ExperimentalConfig", "sample_interval_ms"))


def _host_sys(value: Optional[Iterable[str]]) -> List[str]:
    names = _names(value, "host_sys")
    for name in names:
        if name.lower() not in HOST_SYS_OPTIONS:
            raise ValueError(
                f"ExperimentalConfig: 'host_sys' got {name!r}; expected some of {list(HOST_SYS_OPTIONS)}"
            )
    return [name.lower() for name in names]
