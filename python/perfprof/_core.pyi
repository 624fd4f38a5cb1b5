"""perfprof C++ core: recorder, schedule, trace model and exporters.

The types of the compiled module ``perfprof._core`` (csrc/bindings). tests/python/test_core_stub.py
checks this stub against the built module with mypy's stubtest: every name, and the parameters of
every function and method; return types and property types it cannot read from the module.
"""

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import CodeType, TracebackType
from typing import Any, Final, Literal, NoReturn, Protocol, TypedDict, final, type_check_only

from typing_extensions import Never, Self, disjoint_base

@type_check_only
class _pybind11_type(type):
    """The metaclass of the classes bound with pybind11 (pybind11_builtins.pybind11_type)."""

# -- Recorder channels (bit masks for set_channels) and range flags ---------------------------------

CHANNEL_STEPS: Final[int]
CHANNEL_USER_ANNOTATIONS: Final[int]
CHANNEL_MSTX: Final[int]
CHANNEL_COUNTERS: Final[int]
CHANNEL_OPERATORS: Final[int]
CHANNEL_PYTHON: Final[int]
CHANNEL_GC: Final[int]

RANGE_UNFINISHED: Final[int]
"""Flag of Trace.ranges(): the range had not ended when recording stopped."""
RANGE_ASYNC: Final[int]
"""Flag of Trace.ranges(): the range is exported as an async slice (crosses threads or overlaps)."""

MEMORY_CATEGORIES: Final[tuple[str, ...]]
"""Memory category names; a category number is an index into this tuple."""

def now_ns() -> int:
    """The recorder's clock (CLOCK_MONOTONIC) in nanoseconds."""

def set_channels(mask: int) -> None:
    """Record what the CHANNEL_* bits of `mask` select, and nothing else."""

def channels() -> int:
    """The CHANNEL_* bits being recorded."""

def buffered_events() -> int:
    """Events the recorder's thread buffers hold, not collected yet."""

def discard() -> None:
    """Drop everything recorded so far (its room is given back to the event limit)."""

def set_event_limit(events: int) -> None:
    """The most events the recorder may hold for the session from now on; beyond it they are
    dropped and counted."""

def event_limit_reached() -> bool:
    """Whether events were dropped at the event limit since it was last set or refilled."""

EVENT_BYTES: int

def name_current_thread(name: str) -> None:
    """Name the calling thread in traces (registering it with the recorder)."""

def name_thread(os_tid: int, name: str) -> None:
    """Name the thread with OS id `os_tid` in traces."""

def begin_step(step: int) -> int:
    """Begin the ProfilerStep#<step> range; returns its id (0 when steps are not recorded)."""

def end_step(range_id: int, by_stop: bool) -> None:
    """End a range returned by begin_step: at a step boundary, or (by_stop) because the profiler
    stops inside it, which makes it the run's tail rather than a step."""

def filter_mstx_domains(include: Sequence[str], exclude: Sequence[str]) -> None:
    """Record mstx markers of the domains in `include` (all when empty) and not in `exclude`."""

def install_torch_profiler_stubs(libtorch_cpu_path: str) -> str:
    """Route torch's ITT/NVTX operator ranges to the recorder; returns why not, or ''."""

# -- Hot per-event calls (fast_calls.cpp) -----------------------------------------------------------

def annotation_begin(name: str, args: str | None = None) -> int:
    """Begin a user-annotation range; returns its id (0 when not recording)."""

def annotation_end(range_id: int, /) -> None:
    """End a range returned by annotation_begin."""

def record_counter(name: str, value: float, /) -> None:
    """Record a counter sample (when counters are recorded)."""

@disjoint_base
class RecordFunction:
    """A user annotation range (context manager); perfprof.record_function adds the decorator."""

    def __new__(cls, name: str, args: str | None = None) -> Self: ...
    @property
    def name(self) -> str:
        """Range name."""

    @property
    def args(self) -> str | None:
        """Optional annotation text."""

    def __enter__(self) -> Self:
        """Begin the range."""

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None, /
    ) -> Literal[False]:
        """End the range; exceptions propagate."""

@type_check_only
class CudaStream(Protocol):
    """A stream mstx records with a range: torch.cuda.Stream has its handle as `cuda_stream`."""

    @property
    def cuda_stream(self) -> int: ...

@type_check_only
class MstxModule(Protocol):
    """``_core.mstx``, a module of the mstx calls (fast_calls.cpp)."""

    def mark(self, message: str, stream: int | CudaStream | None = None, domain: str = "default") -> None:
        """Record an instantaneous marker, also emitted as an NVTX mark in the NVTX domain `domain`."""

    def range_start(self, message: str, stream: int | CudaStream | None = None, domain: str = "default") -> int:
        """Start a range and return its id for range_end; the range may end on another thread."""

    def range_end(self, range_id: int, domain: str = "default") -> None:
        """End the range started with range_start."""

mstx: MstxModule

# -- Schedule and step state machine ----------------------------------------------------------------

class Schedule(metaclass=_pybind11_type):
    """torch.profiler's schedule: the ProfilerAction (0 NONE .. 3 RECORD_AND_SAVE) of each step."""

    def __init__(
        self, wait: int, active: int, warmup: int, repeat: int, skip_first: int, skip_first_wait: int
    ) -> None: ...
    def action_at(self, step: int) -> int:
        """The ProfilerAction value of `step`."""

    def describe(self) -> str:
        """The schedule's repr."""

class StepController(metaclass=_pybind11_type):
    """The transitions (TRANSITION_* values) torch.profiler makes between two steps' actions."""

    def __init__(self) -> None: ...
    def start(self, first: int) -> list[int]:
        """Transitions into the first step's ProfilerAction value."""

    def advance(self, next: int) -> list[int]:
        """Transitions into the next step's ProfilerAction value."""

    def stop(self) -> list[int]:
        """Transitions when the profiler stops."""

    @property
    def step(self) -> int: ...
    @step.setter
    def step(self, value: int) -> None: ...
    @property
    def current(self) -> int: ...
    @property
    def previous(self) -> int: ...

TRANSITION_PREPARE_TRACE: Final[int]
TRANSITION_START_TRACE: Final[int]
TRANSITION_STOP_TRACE: Final[int]
TRANSITION_TRACE_READY: Final[int]
TRANSITION_WARN_INCORRECT_SCHEDULE: Final[int]

# -- Trace ------------------------------------------------------------------------------------------

@type_check_only
class TraceStats(TypedDict):
    """Trace.stats: what was lost or changed while building (exported as perfprofStats)."""

    dropped_events: int
    unmatched_range_ends: int
    unfinished_ranges: int
    async_ranges: int
    events_before_window: int
    gpu_dropped_records: int
    gpu_records_outside_window: int
    unreadable_torch_events: int
    unreadable_torch_fields: int
    kernel_metrics_left_out: int
    kernel_metrics_unmatched: int

@type_check_only
class KeyAverageRow(TypedDict):
    """A row of Trace.key_averages (analysis/key_averages.h); times in ns, memory in bytes."""

    name: str
    input_shapes: str
    stack: str
    device: bool
    user_annotation: bool
    first_async: bool
    first_nested: bool
    count: int
    cpu_total_ns: int
    self_cpu_ns: int
    device_total_ns: int
    self_device_ns: int
    cpu_memory_bytes: int
    self_cpu_memory_bytes: int
    device_memory_bytes: int
    self_device_memory_bytes: int
    flops: int

_GpuActivityKind = Literal[
    "kernel", "memcpy", "memset", "synchronization", "memory_alloc", "memory_free", "graph_launch", "user_annotation"
]

@type_check_only
class GpuActivity(TypedDict):
    """A GPU activity of Trace.gpu_activities (now_ns clock)."""

    kind: _GpuActivityKind
    name: str
    start_ns: int
    end_ns: int
    device: int
    stream: int
    correlation: int
    external_id: int
    metrics: dict[str, float]
    """Per-kernel hardware metrics by column ("SM Throughput (%)"); empty when not measured."""

@type_check_only
class GpuDevice(TypedDict):
    """A GPU of Trace.gpu_devices."""

    id: int
    name: str
    sm_count: int
    global_memory_bytes: int
    compute_capability: tuple[int, int]

_RangeRow = tuple[str, str, int, int, int, int, int]
"""(name, category, tid, begin_ns, end_ns, end_tid, flags): flags are RANGE_* bits."""

_MemoryTimelineFormat = Literal["json", "raw", "html"]

class Trace(metaclass=_pybind11_type):
    """A built and analysed trace; copies share it."""

    def __init__(self, *args: Never, **kwargs: Never) -> NoReturn:
        """Not constructible: traces come from collect() and read_capture()."""

    @property
    def window_begin_ns(self) -> int: ...
    @property
    def window_end_ns(self) -> int: ...
    @property
    def unix_offset_ns(self) -> int:
        """Add to a now_ns() value to get Unix time."""

    @property
    def stats(self) -> TraceStats: ...
    @property
    def num_ranges(self) -> int: ...
    @property
    def num_instants(self) -> int: ...
    @property
    def num_counters(self) -> int: ...
    @property
    def num_memory_events(self) -> int: ...
    @property
    def thread_names(self) -> dict[int, str]:
        """OS thread id -> name."""

    @property
    def gpu_collected(self) -> bool: ...
    @property
    def gpu_devices(self) -> list[GpuDevice]: ...
    def steps(self) -> list[tuple[str, bool]]:
        """(N, finished) for each ProfilerStep#N range, in order, the tail the profiler stopped in
        included."""

    def ranges(self) -> list[_RangeRow]: ...
    def gpu_activities(self) -> list[GpuActivity]: ...
    def key_averages(
        self, group_by_input_shape: bool = False, group_by_stack_n: int = 0, python_functions: bool = True
    ) -> list[KeyAverageRow]:
        """One row per distinct key, in torch.profiler's order."""

    def function_events(self, stack_frames: int = 0, python_functions: bool = True) -> list[dict[str, Any]]:
        """torch.profiler's events one by one, in its order: dicts of the KeyAverageRow fields (count
        1, input shapes, the innermost stack_frames Python frames) and tid, begin_ns, end_ns,
        parent (index in the list, -1 for none), async, sequence (-1 for none), and as the Chrome
        trace writes the event: category, args and kwinputs (JSON objects), device_index, external_id,
        python_id (-1 for none) and flow (id, type, start: (0, 0, False) for none)."""
    def export_stacks(self, path: str, device_metric: bool = False) -> None:
        """Write self times per stack in the folded format FlameGraph and speedscope read."""

    def memory_devices(self) -> list[tuple[str, int, int]]:
        """(name, device_type, device_index) of each device with allocator events."""

    def memory_timeline(self, device_type: int, device_index: int) -> tuple[list[int], list[list[int]], int, int]:
        """(times_us, sizes, max_allocated, max_reserved): sizes[i] holds bytes per MEMORY_CATEGORIES."""

    def export_memory_timeline(
        self, path: str, device_type: int, device_index: int, format: _MemoryTimelineFormat, title: str = ""
    ) -> None:
        """Write the memory timeline of a device."""

    def export_memory_tables(self, record_path: str, operator_path: str) -> None:
        """Write memory_record.csv and operator_memory.csv."""

    def export_summaries(self, output_dir: str) -> list[str]:
        """Write the summary tables the trace has data for (kernel_details.csv, operator_details.csv,
        op_statistic.csv, api_statistic.csv, step_trace_time.csv, data_preprocess.csv) into
        output_dir; returns the names of the files written (docs/formats/summaries.md)."""

    def export_chrome_trace(
        self, path: str, metadata: Sequence[tuple[str, str]], rank: int = 0, world_size: int = 1, backend: str = ""
    ) -> None:
        """Write the Chrome trace (gzip when path ends in .gz); metadata values are JSON text."""

    def export_database(
        self, path: str, metadata: Sequence[tuple[str, str]], rank: int = 0, world_size: int = 1, backend: str = ""
    ) -> None:
        """Write the run database (SQLite, docs/formats/database.md); metadata are META_DATA (name, value) rows."""

class CaptureStream(metaclass=_pybind11_type):
    """A session's capture file, written while the session records (docs/formats/capture.md)."""

    def __init__(self, path: str) -> None:
        """Create the capture file at path."""

    def append_recorded(self) -> bool:
        """Move everything the recorder holds into the file; False, moving nothing, once it cannot be written."""

    def add_metadata(self, key: str, json: str, from_user: bool) -> None:
        """Append run metadata (a JSON value's text under key), written at once."""

    def start_flushing(self, cap_bytes: int) -> None:
        """Append whenever the recorder's buffers hold more than half of cap_bytes."""

    @property
    def cap_flushes(self) -> int: ...
    @property
    def ok(self) -> bool: ...
    @property
    def error(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def events_appended(self) -> int: ...
    @property
    def removed(self) -> bool:
        """Whether the file was removed from its path while written (its events are read
        back from the open file)."""
    @property
    def events_held_back(self) -> int:
        """Host events the file lacks because it could not take them (the trace has them)."""

def collect(
    window_begin_ns: int,
    window_end_ns: int,
    with_gpu: bool = False,
    flops: bool = False,
    stream: CaptureStream | None = None,
) -> Trace:
    """Move everything recorded so far (and GPU activity) into a Trace; with a stream, end its file."""

def read_capture(path: str, flops: bool = False) -> tuple[Trace, bool, str, list[tuple[str, str, bool]]]:
    """Build a Trace from a capture file: (trace, complete, problem, [(key, json, from_user)])."""

def capture_writer_pid(path: str) -> int:
    """The pid of the live process writing the capture at path, or 0 when none does."""

def import_trace(path: str, flops: bool = False) -> tuple[Trace, list[tuple[str, str]], int, int, str, str]:
    """Build a Trace from a Chrome trace: (trace, [(name, json)], rank, world_size, backend, notes)."""

# -- GPU collection (CUPTI) -------------------------------------------------------------------------

@type_check_only
class CuptiStatus(TypedDict):
    """Whether GPU activity can be collected, and if not, why (perfprof.cuda.cuda_status)."""

    available: bool
    library: str | None
    version: int
    devices: int
    reason: str
    tried: list[str]

def cupti_load(explicit_path: str, candidates: Sequence[str], driver_library: str) -> CuptiStatus:
    """Load libcupti once and probe the CUDA driver; returns the status."""

def cupti_status() -> CuptiStatus: ...
def gpu_start(level: int, left_out: list[str] = ...) -> tuple[str, list[str], list[str]]:
    """Start GPU collection at level 0 (none) to 3 (Level2), without the kinds named in `left_out`
    ("kernel", "memcpy", "memset", "runtime API", "driver API"); returns (why it could not start
    or '', kinds skipped, what else differs from usual)."""

def gpu_synchronize() -> bool:
    """Wait for the GPU work launched on this thread's CUDA context; False when there is none to wait for."""

def gpu_stop() -> tuple[str, int, int]:
    """Stop GPU collection and flush CUPTI's buffers; returns (why the flush failed or '', buffers handed over
    with an incomplete record, buffers another CUPTI client was given)."""

def telemetry_start(interval_ns: int, host: Sequence[str], gpu: bool, pcie: bool, nvlink: bool,
                    nvml_library: str) -> list[str]:
    """Start sampling host groups ("cpu", "mem", "disk", "network") and NVML; returns a message per
    source that could not be opened."""

@type_check_only
class NvmlStatus(TypedDict):
    """Whether GPU telemetry can be sampled, and if not, why (perfprof.cuda.nvml_status)."""

    available: bool
    library: str
    devices: int
    reason: str

def nvml_status(explicit_path: str) -> NvmlStatus:
    """Whether libnvidia-ml loads and initialises with a GPU (opened and closed again)."""

@type_check_only
class TelemetryReport(TypedDict):
    """telemetry_stop: what the sampler did (telemetry/sampler.h SamplerReport)."""

    samples: int
    readings: int
    late_samples: int
    cpu_ns: int
    wall_ns: int
    messages: list[str]

def telemetry_stop() -> TelemetryReport:
    """Stop sampling; returns what the sampler did (samples, readings, late_samples, cpu_ns, wall_ns, messages)."""

def gpu_pause(paused: bool) -> str:
    """Pause (True) or resume (False) recording GPU work launched from now on; returns why CUPTI
    refused, or ''. No effect while not collecting."""

def gpu_discard() -> None:
    """Drop GPU activity collected so far (warm-up)."""

def gpu_metrics_configure(group: str, l2_cache: bool) -> None:
    """What the next windows measure per kernel (a GpuMetrics value, and the L2 hit rate)."""

def gpu_metrics_begin() -> str:
    """Measure the kernels launched on this thread's CUDA context from now; returns why not, or ''."""

def gpu_metrics_end() -> tuple[str, int]:
    """Stop measuring and read the values; returns (why they could not be read or '', kernels left out)."""

def supported_gpu_metric_groups(device: int) -> tuple[list[str], str]:
    """The GpuMetrics values device `device`'s chip can measure, and why none when it cannot say."""

def gpu_collecting() -> bool: ...
def gpu_clock() -> tuple[bool, int]:
    """(CUPTI uses perfprof's clock, calibrated offset in ns otherwise)."""

# -- torch's results --------------------------------------------------------------------------------

@type_check_only
class TorchEventsImport(TypedDict):
    """What import_torch_events added and left out."""

    imported: int
    os_thread_ids: dict[int, int]
    skipped_events: int
    failed_reads: int
    first_failure: str

def import_torch_events(events: Iterable[Any], with_inputs: bool = True, since_ns: int = 0) -> TorchEventsImport:
    """Add the CPU operators of torch's profiler results begun at since_ns or later to the recorder."""

@type_check_only
class TorchMemoryAdded(TypedDict):
    """What TorchMemoryImport.add_to_recorder added and left out."""

    allocations: int
    skipped_events: int
    failed_reads: int
    first_failure: str

class TorchMemoryImport(metaclass=_pybind11_type):
    """The allocator events and operator data flow of torch's experimental_event_tree()."""

    def __init__(
        self, event_tree: Any, write_flags: Callable[[str, str], list[bool] | None], window_begin_ns: int = 0
    ) -> None:
        """Read `event_tree`; write_flags(name, kinds) says which inputs an operator writes."""

    def add_to_recorder(self, os_thread_ids: Mapping[int, int]) -> TorchMemoryAdded:
        """Add what was read to the recorder, torch's thread ids mapped to OS ones. Once only."""

def add_observed_tensors(tensors: Sequence[tuple[int, int, int, int, int, int]]) -> None:
    """Record tensors seen in a known role: (data_ptr, device_type, device_index, now_ns, bytes, category)."""

# -- Module calls, Python calls, GC pauses ----------------------------------------------------------

@final
class ModuleCallWrapper:
    """Stands in for torch.nn.Module.__call__: records module ranges, then calls `replaced`."""

    def __new__(cls, replaced: Callable[..., Any]) -> Self: ...
    @property
    def replaced(self) -> Callable[..., Any]:
        """The __call__ this wrapper calls."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, instance: object, owner: type | None = None, /) -> Any:
        """Bound to a module like a function; read on a class, what `replaced` gives there."""

@final
class UserScopeEnter:
    """Stands in for torch.profiler.record_function.__enter__: calls `replaced`, the range it begins
    filed as a user annotation."""

    def __new__(cls, replaced: Callable[..., Any]) -> Self: ...
    @property
    def replaced(self) -> Callable[..., Any]:
        """The __enter__ this one calls."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, instance: object, owner: type | None = None, /) -> Any:
        """Bound to a record_function like a function; read on a class, what `replaced` gives there."""

def module_calls_capture(on: bool, /) -> None:
    """Whether ModuleCallWrapper records module ranges on the calling thread."""

def module_calls_observe(callback: Callable[[Any], object] | None, /) -> None:
    """Call callback(module) at the first call of each module through ModuleCallWrapper (None: stop)."""

def module_calls_reset_names() -> None:
    """Number module instances from 0 again (a new profiler)."""

def python_tracer_install(own_prefix: str, path_prefixes: list[str], module_call_code: CodeType | None, /) -> bool:
    """Trace Python calls on the calling thread; False, installing nothing, when another tool holds the hook."""

def python_tracer_window_begin() -> None:
    """The kept window begins: the frames running on the calling thread begin now."""

def python_tracer_uninstall() -> None:
    """Remove perfprof's hook from the calling thread."""

def gc_callback(phase: Literal["start", "stop"], info: dict[str, int], /) -> None:
    """For gc.callbacks: records collections at or above the threshold while the GC channel is on."""

def gc_set_threshold_ns(ns: int, /) -> None:
    """The shortest collection gc_callback records, in nanoseconds."""
