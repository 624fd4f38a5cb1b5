"""The profilers: _KinetoProfile (start/stop) and profile (adds the step schedule)."""
from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from . import _core, _kineto_steps, _trace_extras, memory, summary, torch_capture
from ._files import make_directory
from ._logging import logger, warn_once
from ._options import ProfilerOptions
from ._ranges import STEP_COUNT
from ._session import Session
from .activity import ProfilerActivity, as_activities
from .experimental_config import ExperimentalConfig
from .run_metadata import distributed_info
from .schedule import ProfilerAction, action_from, describe_schedule

# Top-level keys of the Chrome trace that user metadata must not replace.
_RESERVED_TRACE_KEYS = frozenset({
    "schemaVersion", "deviceProperties", "distributedInfo", "displayTimeUnit",
    "baseTimeNanoseconds", "traceEvents", "traceName", "perfprofStats", "trace_id",
})


class _Option:
    """A profiler attribute that is a field of its options (``prof.with_stack``). Assigning one
    before the profiler starts changes what it collects, as with torch.profiler; the new value is
    checked as the constructor checks it."""

    def __init__(self, read: Callable[[Any], Any] = lambda value: value) -> None:
        self._read = read
        self._name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    def __get__(self, prof: Optional["_KinetoProfile"], owner: type) -> Any:
        if prof is None:
            return self
        return self._read(getattr(prof._options, self._name))

    def __set__(self, prof: "_KinetoProfile", value: Any) -> None:
        prof._options = prof._options.changed("profile", **{self._name: value})


class _KinetoProfile:
    """A profiler controlled with start() and stop(); no schedule.

    Args:
        activities: what to collect (default: every supported activity).
        record_shapes: record each operator's input shapes (``Input Dims``) and autograd
            sequence number.
        with_stack: record Python calls (``python_function`` slices linked by ``Python id`` and
            ``Python parent id``, as torch.profiler writes them): the stacks of key_averages
            (``group_by_stack_n``) and export_stacks.
        with_flops: torch.profiler's FLOPs of matrix products, conv2d, mul and add, from input
            shapes (implies record_shapes; docs/api.md, "FLOPs").
        with_modules: record each ``nn.Module`` forward as a range (``nn.Module: Linear_0``).
        profile_memory: record every tensor allocation and free (CPU and CUDA) on the profiling
            thread, with the operator and module it came from; enables
            :meth:`export_memory_timeline` and the ``[memory]`` events of the trace.
        experimental_config: an :class:`ExperimentalConfig`, or torch's ``_ExperimentalConfig``
            (read as perfprof's: its fields perfprof collects mapped, the others named in one
            warning; docs/api.md).
        execution_trace_observer: torch's ``ExecutionTraceObserver`` (registered with its output
            file): started and stopped with each kept window, cleaned up when the profiler's
            ``with`` block ends, as torch.profiler does.
        acc_events: keep every cycle's events for :meth:`events` and :meth:`key_averages`,
            not only the last cycle's (each kept trace stays in memory).
        custom_trace_id_callback: called when a cycle begins for its trace id (a str); default
            32 random hex digits. The id is ``trace_id`` at the top of the trace, in
            ``profiler_info.json`` and the database; :meth:`get_trace_id` returns it.
        post_processing_timeout_s: torch.profiler's bound on its Python post-processing,
            accepted for scripts that pass it: perfprof builds its trace in C++ and keeps all of
            it, whatever the bound. Where torch would time out (building :meth:`events` or
            :meth:`key_averages` took the bound or longer: always, with 0) a warning says so and
            that every event is kept.
    """

    activities = _Option(list)
    record_shapes = _Option()
    profile_memory = _Option()
    with_stack = _Option()
    with_flops = _Option()
    with_modules = _Option()
    experimental_config = _Option()

    def __init__(
        self,
        *,
        activities: Optional[Iterable[ProfilerActivity]] = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Optional[ExperimentalConfig] = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        custom_trace_id_callback: Optional[Callable[[], str]] = None,
        post_processing_timeout_s: Optional[float] = None,
    ) -> None:
        self._options = ProfilerOptions.checked(
            "profile", activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
            with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
            experimental_config=experimental_config,
        )
        if not isinstance(acc_events, bool):
            raise TypeError(f"profile: 'acc_events' must be a bool, got {type(acc_events).__name__}")
        self.execution_trace_observer = _trace_extras.check_observer("profile", execution_trace_observer)
        self.acc_events = acc_events
        self.custom_trace_id_callback = _trace_extras.check_trace_id_callback("profile", custom_trace_id_callback)
        self.post_processing_timeout_s = _trace_extras.check_timeout("profile", post_processing_timeout_s)
        self._trace_id: Optional[str] = None  # the current (or last) cycle's
        self._metadata: Dict[str, str] = {}  # key -> JSON value text
        self._trace: Optional[_core.Trace] = None
        self._kept_traces: List[_core.Trace] = []  # with acc_events: every cycle's, the last one last
        self._post_processing_noted: Optional[_core.Trace] = None  # the last trace note_post_processing saw
        # The current collection, or the last one (which keeps torch's results until the next begins).
        self._session: Optional[Session] = None

    # -- control -------------------------------------------------------------------------------

    def start(self) -> None:
        """Start collecting."""
        self.prepare_trace()
        self.start_trace()

    def stop(self) -> None:
        """Stop collecting; the trace is then available to the export methods."""
        self.stop_trace()

    def prepare_trace(self) -> None:
        """Begin collection (warm-up): what is recorded until start_trace() is discarded. A
        collection that cannot start (logged in one line) leaves this cycle uncollected; the next
        cycle tries again. Raises ``RuntimeError`` while another profiler collects."""
        if self._collecting() or self._start_failure():
            return
        self._session = None  # the last collection, and torch's results it kept, go before the next begins
        self._trace_id = _trace_extras.new_trace_id(self.custom_trace_id_callback)
        session = Session(self._options)
        session.prepare()
        self._session = session

    def start_trace(self) -> None:
        """Start keeping what is recorded (the end of warm-up)."""
        self.prepare_trace()
        if self._start_failure():
            return
        if self._session.window_open:
            self._session.begin_window()
        else:
            self._session.begin_window(self._capture_path(), self._run_metadata())
            _trace_extras.drive_observer(self.execution_trace_observer, "start")

    def _capture_path(self) -> Optional[str]:
        """Where the collection that begins writes its capture while it records; None: held in
        memory until stop."""
        return None

    def _run_metadata(self) -> List[Tuple[str, str, bool]]:
        """How the run is described in its capture, as (key, JSON text, added by the user):
        perfprof's configuration and distributed rank, then the metadata added so far."""
        dist = distributed_info()
        own = {"config": self._config_description(),
               "distributed": {"rank": dist.rank, "world_size": dist.world_size, "backend": dist.backend},
               "trace_id": self._trace_id}
        return ([(key, json.dumps(value), False) for key, value in own.items()] +
                [(key, text, True) for key, text in self._metadata.items()])

    def _config_description(self) -> Dict[str, Any]:
        """The profiler's options, with its schedule after the activities."""
        options = self._options.to_dict()
        schedule = getattr(self, "schedule", None)
        return {"activities": options.pop("activities"),
                "schedule": describe_schedule(schedule) if schedule and getattr(self, "record_steps", False) else None,
                **options}

    def stop_trace(self) -> None:
        """Stop collection and build the trace of what was kept."""
        if self._collecting():
            _trace_extras.drive_observer(self.execution_trace_observer, "stop")
            self._trace = self._session.stop()
            if self.acc_events and self._trace is not None:
                self._kept_traces.append(self._trace)
        elif self._start_failure():  # the cycle ends with no trace (the last cycle's is not its)
            self._session, self._trace = None, None

    def _collecting(self) -> bool:
        return self._session is not None and self._session.collecting

    def _start_failure(self) -> str:
        """Why this cycle's collection could not start ("" when it did, or has not tried); also
        read by dynamic profiling, for its log."""
        return self._session.start_failure if self._session is not None else ""

    def __enter__(self) -> "_KinetoProfile":
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        _trace_extras.drive_observer(self.execution_trace_observer, "cleanup")

    # -- results -------------------------------------------------------------------------------

    def export_chrome_trace(self, path: "os.PathLike[str] | str", use_python_export: bool = False) -> str:
        """Write the trace as Chrome trace JSON (gzip-compressed when `path` ends in ``.gz``).

        The file opens in Perfetto UI and chrome://tracing and loads in HolisticTraceAnalysis.
        Parent directories are created. Returns the path written. Raises ``RuntimeError`` when
        nothing was collected yet, ``TypeError`` for a bad path and ``OSError`` when the file
        cannot be written (an existing file is then left untouched). `use_python_export` is
        torch.profiler's choice between its two writers; perfprof has one, the same either way.
        """
        if not isinstance(use_python_export, bool):
            raise TypeError(f"export_chrome_trace: 'use_python_export' must be a bool, got "
                            f"{type(use_python_export).__name__}")
        path = _check_output_path("export_chrome_trace", path)
        self._require_trace("export_chrome_trace")
        make_directory(os.path.dirname(os.path.abspath(path)))
        dist = distributed_info()
        self._trace.export_chrome_trace(path, self._metadata_items(), dist.rank, dist.world_size, dist.backend)
        return path

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False) -> summary.EventList:
        """Totals per event name (and per input shapes / innermost Python frames when grouped),
        with torch.profiler's rows and counts: one ``ProfilerStep*`` row for all steps, a nested
        call of the same operator that is its caller's only child merged into the caller, Python
        functions as rows with ``with_stack=True``, GPU activities as rows of their own, and
        allocator events outside every event as ``[memory]`` (docs/api.md has the rules).
        Overload names are not recorded (torch records them only when asked to), so
        `group_by_overload_name` splits no row.

        Returns a list of :class:`perfprof.summary.FunctionEventAvg` whose ``table(sort_by=...,
        row_limit=...)`` prints torch.profiler's table. Computed in C++ from the trace.
        """
        summary.check_grouping("key_averages", "group_by_input_shape", group_by_input_shape, group_by_stack_n,
                               group_by_overload_name)
        started = time.perf_counter()
        lists = [summary.rows_from_core(trace.key_averages(group_by_input_shape, group_by_stack_n,
                                                           python_functions=self.with_stack),
                                        with_flops=self.with_flops, with_memory=self.profile_memory,
                                        by_input_shape=group_by_input_shape)
                 for trace in self._traces_of_events("key_averages")]
        self._note_post_processing(time.perf_counter() - started)
        if len(lists) == 1:
            return lists[0]
        # Cycles kept with acc_events: their rows added up by key, in the order keys first appear.
        return summary.joined(lists).key_averages(group_by_input_shape, group_by_stack_n)

    def events(self) -> summary.EventList:
        """Every event of the last trace (of every cycle, with ``acc_events``) one by one, as
        torch.profiler's ``events()`` lists them:
        operators, annotations, Python functions (``with_stack=True``), GPU activities and
        allocations outside every event (``[memory]``), ordered by start (longer events first),
        each a :class:`perfprof.summary.FunctionEvent` with its times, memory, input shapes, stack
        and place in the event tree (``cpu_parent``, ``cpu_children``). ``table()`` prints them."""
        started = time.perf_counter()
        lists = [summary.events_from_core(trace.function_events(stack_frames=_STACK_FRAMES if self.with_stack else 0,
                                                                python_functions=self.with_stack),
                                          with_flops=self.with_flops, with_memory=self.profile_memory)
                 for trace in self._traces_of_events("events")]
        self._note_post_processing(time.perf_counter() - started)
        return lists[0] if len(lists) == 1 else summary.joined(lists)

    def _note_post_processing(self, elapsed_s: float) -> None:
        """Once per cycle, as torch.profiler post-processes a cycle once: whether its
        post_processing_timeout_s would have cut the events that took `elapsed_s` to build."""
        if self._post_processing_noted is not self._trace:
            self._post_processing_noted = self._trace
            _trace_extras.note_post_processing(self.post_processing_timeout_s, elapsed_s)

    def _traces_of_events(self, function: str) -> List["_core.Trace"]:
        """The traces events() and key_averages() read: every cycle's with acc_events, else the last."""
        if self.acc_events and self._kept_traces:
            return list(self._kept_traces)
        return [self._require_trace(function)]

    def export_stacks(self, path: "os.PathLike[str] | str", metric: str = "self_cpu_time_total") -> str:
        """Write self time per call stack in the folded format FlameGraph and speedscope read.

        Each line is ``frame;frame;...;operator <microseconds>``: the Python frames (outermost
        first, from ``with_stack=True``), the enclosing operators, then the operator. `metric` is
        ``"self_cpu_time_total"`` or ``"self_cuda_time_total"`` (GPU time launched from there).
        Returns the path written (``.gz``: gzip-compressed).
        """
        metrics = {"self_cpu_time_total": False, "self_cuda_time_total": True, "self_device_time_total": True}
        if metric not in metrics:
            raise ValueError(f"export_stacks: unknown metric {metric!r}; expected one of {', '.join(metrics)}")
        path = _check_output_path("export_stacks", path)
        trace = self._require_trace("export_stacks")
        if not self.with_stack:
            warn_once("stacks-without-with_stack", "perfprof: export_stacks: the profiler ran without "
                      "with_stack=True, so the stacks hold operators only")
        make_directory(os.path.dirname(os.path.abspath(path)))
        trace.export_stacks(path, metrics[metric])
        return path

    def export_memory_timeline(self, output_path: "os.PathLike[str] | str", device: Optional[str] = None) -> str:
        """Write the memory used on `device` over time, by category (PARAMETER, OPTIMIZER_STATE,
        INPUT, TEMPORARY, ACTIVATION, GRADIENT, AUTOGRAD_DETAIL, UNKNOWN); docs/memory.md has
        the rules. The suffix of `output_path` picks the format:

        - ``.html``: a stacked-area plot with the peaks per category and the most memory
          allocated and reserved; self-contained, opens offline.
        - ``.json`` / ``.json.gz``: ``[times, sizes]`` as torch.profiler writes them: times in
          microseconds, ``sizes[i] = [0, bytes of each category]`` from ``times[i]`` on.
        - ``.raw.json`` / ``.raw.json.gz``: every change, ``[time_ns, action, bytes, category]``
          (action 1 pre-existing, 2 create, 3 new version, 4 destroy; time -1: live before the
          first event; category: index in the list above).

        `device` is ``"cuda:N"`` or ``"cpu"``; by default the first GPU with memory events, else
        the CPU. Needs ``profile_memory=True``. Raises ``ValueError`` for an unknown suffix, a
        device without events or a profiler run without ``profile_memory``, ``TypeError`` for a
        path or device of the wrong type. Returns the path written.
        """
        path = _check_output_path("export_memory_timeline", output_path)
        trace = self._require_trace("export_memory_timeline")
        if not self.profile_memory:
            raise ValueError("export_memory_timeline: the profiler ran without profile_memory=True, so no memory "
                             "was recorded")
        memory.export_timeline(trace, path, device)
        return path

    def _require_trace(self, function: str) -> "_core.Trace":
        if self._trace is None:
            failure = self._session.build_failure if self._session is not None else ""
            if failure:
                raise RuntimeError(f"{function}: the last cycle's trace could not be built ({failure}); "
                                   "the log says what was kept")
            raise RuntimeError(f"{function}: no trace yet; call it after the profiler stopped")
        return self._trace

    def add_metadata(self, key: str, value: str) -> None:
        """Record a string under `key` (top level of the trace and profiler_metadata.json)."""
        _check_metadata_key("add_metadata", key)
        if not isinstance(value, str):
            raise TypeError(f"add_metadata: value for '{key}' must be str, got {type(value).__name__}")
        self._set_metadata(key, json.dumps(value))

    def add_metadata_json(self, key: str, value: str) -> None:
        """Record a JSON value, given as JSON text, under `key`."""
        _check_metadata_key("add_metadata_json", key)
        if not isinstance(value, str):
            raise TypeError(f"add_metadata_json: value for '{key}' must be a JSON str, got {type(value).__name__}")
        try:
            parsed = json.loads(value, parse_constant=_reject_non_json_constant)
        except ValueError as error:
            raise ValueError(f"add_metadata_json: value for '{key}' is not valid JSON: {error}") from None
        self._set_metadata(key, json.dumps(parsed))

    def toggle_collection_dynamic(self, enable: bool, activities: Iterable[ProfilerActivity]) -> None:
        """Pause (`enable` False) or resume collecting `activities` in the middle of a cycle, as
        torch.profiler's method does: with ``CPU``, the operators, ``record_function`` ranges
        and Python calls that begin while paused are not recorded (those begun before are
        recorded whole); with ``CUDA``, GPU work and API calls launched while paused are not.
        Steps, mstx markers, telemetry and memory events go on. No effect while not
        collecting; a pause ends with the cycle."""
        if not isinstance(enable, bool):
            raise TypeError(f"toggle_collection_dynamic: 'enable' must be a bool, got {type(enable).__name__}")
        names = {activity.value for activity in as_activities(activities)}
        if self._collecting():
            self._session.toggle(enable, names)

    def _metadata_items(self) -> List[Tuple[str, str]]:
        """What the trace's exports write at their top level: the user's metadata and the trace id."""
        trace_id = [("trace_id", json.dumps(self._trace_id))] if self._trace_id is not None else []
        return list(self._metadata.items()) + trace_id

    def get_trace_id(self) -> Optional[str]:
        """The trace id of the current cycle, or of the last one (None before the first start)."""
        return self._trace_id

    def set_custom_trace_id_callback(self, callback: Optional[Callable[[], str]]) -> None:
        """Use `callback()` for the trace ids of the cycles that begin from now on."""
        self.custom_trace_id_callback = _trace_extras.check_trace_id_callback("set_custom_trace_id_callback", callback)

    def preset_metadata_json(self, key: str, value: str) -> None:
        """torch.profiler's way to add JSON metadata before the profiler starts; here the same as
        :meth:`add_metadata_json`, which may be called before start too."""
        self.add_metadata_json(key, value)

    def _set_metadata(self, key: str, text: str) -> None:
        self._metadata[key] = text
        if self._session is not None:
            self._session.add_run_metadata(key, text, from_user=True)

    @property
    def metadata(self) -> Dict[str, Any]:
        """The metadata added so far, as JSON values."""
        return {key: json.loads(text) for key, text in self._metadata.items()}

    @property
    def trace(self) -> Optional["_core.Trace"]:
        """The last collected trace (None before the first stop)."""
        return self._trace

# The profile method each of the step controller's transitions runs, by name: a table of bound
# methods would tie a profile to itself, and torch's results, which it keeps after stop(), would
# then wait for the cyclic collector instead of going with the last reference to the profile.
_TRANSITION_METHODS = {
    _core.TRANSITION_PREPARE_TRACE: "prepare_trace",
    _core.TRANSITION_START_TRACE: "start_trace",
    _core.TRANSITION_STOP_TRACE: "stop_trace",
    _core.TRANSITION_TRACE_READY: "_trace_ready",
    _core.TRANSITION_WARN_INCORRECT_SCHEDULE: "_warn_incorrect_schedule",
}


class profile(_KinetoProfile):
    """The profiler: a context manager driven by ``step()`` and a schedule.

    ``on_trace_ready(prof)`` is called once per RECORD_AND_SAVE cycle, and at stop when the
    profiler stops while recording (always, without a schedule). With a schedule, every kept step
    is a ``ProfilerStep#N`` range. Arguments beyond those of :class:`_KinetoProfile` (which has
    torch.profiler's ``execution_trace_observer``, ``acc_events``, ``custom_trace_id_callback``
    and ``post_processing_timeout_s`` too):

    Args:
        schedule: a callable ``step -> ProfilerAction``, usually :func:`perfprof.schedule`
            (torch.profiler schedules work too). Default: record every step.
        on_trace_ready: called with the profiler when a cycle's trace is ready, usually
            :func:`perfprof.tensorboard_trace_handler`.
        use_cuda: deprecated torch.profiler switch; True adds ``ProfilerActivity.CUDA``.
    """

    def __init__(
        self,
        *,
        activities: Optional[Iterable[ProfilerActivity]] = None,
        schedule: Optional[Callable[[int], ProfilerAction]] = None,
        on_trace_ready: Optional[Callable[["profile"], Any]] = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
        experimental_config: Optional[ExperimentalConfig] = None,
        execution_trace_observer: Any = None,
        acc_events: bool = False,
        use_cuda: Optional[bool] = None,
        custom_trace_id_callback: Optional[Callable[[], str]] = None,
        post_processing_timeout_s: Optional[float] = None,
    ) -> None:
        if use_cuda:
            activities = list(activities or [ProfilerActivity.CPU]) + [ProfilerActivity.CUDA]
        super().__init__(
            activities=activities, record_shapes=record_shapes, profile_memory=profile_memory,
            with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
            experimental_config=experimental_config, execution_trace_observer=execution_trace_observer,
            acc_events=acc_events, custom_trace_id_callback=custom_trace_id_callback,
            post_processing_timeout_s=post_processing_timeout_s,
        )
        if schedule is not None and not callable(schedule):
            raise TypeError(f"profile: 'schedule' must be callable, got {type(schedule).__name__}")
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(f"profile: 'on_trace_ready' must be callable, got {type(on_trace_ready).__name__}")
        self.schedule: Callable[[int], Any] = schedule or _record_every_step
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self._controller = _core.StepController()
        self._step_range = 0
        # The first step that gets a ProfilerStep#N range; the time before it is start-up. 0, as
        # torch.profiler, except under `perfprof run` (see _first_step_begins).
        self._first_ranged_step = 0
        # start(), step() and stop() run one at a time (two threads stepping one profiler would
        # otherwise both run a transition), and only in the process that started the profiler:
        # a fork()ed child that leaves through the with-block must not stop or save the parent's
        # cycle.
        self._lifecycle = threading.RLock()
        self._owner_pid: Optional[int] = None  # the process that started it; None: not running
        self._stopped = False  # stop() ended its last run
        _kineto_steps.join()

    @staticmethod
    def enable_profiler_in_child_thread(
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
    ) -> None:
        """Capture PyTorch operators on the calling thread (one the user started).

        Threads the user starts are not reached by the profiler; call this at the start of such
        a thread, and :meth:`disable_profiler_in_child_thread` before it ends. The thread then
        records operators (and, as asked, shapes, Python calls and module forwards) whenever a
        profiler is collecting. Its options are its own: the main thread's are independent.
        """
        options = ProfilerOptions.checked(
            "enable_profiler_in_child_thread", activities=[ProfilerActivity.CPU], record_shapes=record_shapes,
            profile_memory=profile_memory, with_stack=with_stack, with_flops=with_flops, with_modules=with_modules,
        )
        if profile_memory:
            warn_once("flag-profile_memory", "perfprof: profile_memory=True is not collected by this version yet; "
                      "it has no effect.")
        if not torch_capture.torch_loaded():
            warn_once("child-no-torch", "perfprof: enable_profiler_in_child_thread: torch is not imported; "
                      "there are no operators to capture")
            return
        _core.name_current_thread(threading.current_thread().name)
        torch_capture.start_thread(torch_capture.CaptureOptions.of(options, profiling_thread=False))

    @staticmethod
    def disable_profiler_in_child_thread() -> None:
        """Stop the capture :meth:`enable_profiler_in_child_thread` started on this thread."""
        torch_capture.stop_thread()

    @property
    def step_num(self) -> int:
        """The current step number (0 before the first step()). Writable, as torch.profiler's:
        the schedule and the ``ProfilerStep#N`` ranges count on from a number set here (a job
        that starts profiling at step 100 sets 100 before start()); from 0 to 2**62 - 1."""
        return self._controller.step

    @step_num.setter
    def step_num(self, value: int) -> None:
        self._controller.step = int(STEP_COUNT.check(value, "profile", "step_num"))

    @property
    def current_action(self) -> ProfilerAction:
        """The schedule's action for the current step."""
        return ProfilerAction(self._controller.current)

    def start(self) -> None:
        """Start the schedule at the current step. Raises ``RuntimeError`` when the profiler is
        already started (stop() it first); a stopped profiler may start again."""
        with self._lifecycle:
            if self._owner_pid is not None:
                where = "" if self._owner_pid == os.getpid() else f" (by the parent process {self._owner_pid})"
                raise RuntimeError(f"perfprof.profile.start(): the profiler is already started{where}; "
                                   "stop() it before starting it again")
            self._owner_pid, self._stopped = os.getpid(), False
            try:
                self._run(self._controller.start(self._action_at(self.step_num).value))
            except BaseException:  # not started (another profiler collects, a bad schedule): start() may be retried
                self._owner_pid = None
                raise
            self._begin_step_range()

    def stop(self) -> None:
        """Stop the schedule; a profiler not started (or already stopped) is left as it is, and a
        fork()ed child leaves the parent's profiler to the parent."""
        with self._lifecycle:
            if self._owner_pid != os.getpid():
                return
            self._end_step_range(by_stop=True)
            self._owner_pid, self._stopped = None, True
            try:
                self._run(self._controller.stop())
            finally:
                torch_capture.end_abandoned_capture()

    def step(self) -> None:
        """Mark the end of a step: the schedule moves to the next step. Raises ``RuntimeError``
        when the profiler is not started; in a fork()ed child it does nothing (the cycle is
        the parent's). With ``KINETO_USE_DAEMON`` set, the step is also counted in torch's
        ``KinetoStepTracker``, as torch.profiler counts it (Kineto's on-demand tracing reads it)."""
        with self._lifecycle:
            if self._owner_pid is None:
                when = "after stop(); start() it again first" if self._stopped else \
                    "before start(); call start() first, or use the profiler as a context manager"
                raise RuntimeError(f"perfprof.profile.step() called {when}")
            if self._owner_pid != os.getpid():
                return
            torch_capture.end_abandoned_capture()
            self._end_step_range()
            if self._collecting():
                self._session.flush()  # the step just ended reaches the capture file
            next_action = self._action_at(self.step_num + 1)
            try:
                self._run(self._controller.advance(next_action.value))
                _kineto_steps.advance()
            finally:  # the next step is entered, whatever the handler raised
                self._begin_step_range()

    def __exit__(self, *exc_info: object) -> None:
        super().__exit__(*exc_info)
        _kineto_steps.leave()

    def _capture_path(self) -> Optional[str]:
        # A run-directory handler (tensorboard_trace_handler) makes the cycle's directory now, so
        # its capture is written there a step at a time.
        begin_cycle = getattr(self.on_trace_ready, "begin_cycle", None)
        return begin_cycle() if callable(begin_cycle) else None

    def _action_at(self, step: int) -> ProfilerAction:
        return action_from(self.schedule(step), step)

    def _run(self, transitions: List[int]) -> None:
        # An on_trace_ready that raises must not cut the transitions short (when cycles follow
        # each other, the next one's start comes after it): its exception is raised once they
        # have all run, as torch.profiler raises it.
        handler_error: Optional[BaseException] = None
        for transition in transitions:
            try:
                getattr(self, _TRANSITION_METHODS[transition])()
            except Exception as error:  # noqa: BLE001 (whatever the user's handler raises)
                if transition != _core.TRANSITION_TRACE_READY or handler_error is not None:
                    raise
                handler_error = error
        if handler_error is not None:
            raise handler_error

    def _begin_step_range(self) -> None:
        if self.record_steps and self.step_num >= self._first_ranged_step:
            self._step_range = _core.begin_step(self.step_num)

    def _start_steps_at(self, step: int) -> None:
        """``perfprof run``: the steps before `step` are start-up and get no ProfilerStep#N range
        (the run is profiled from the script's start, long before its first step); with `step` 1,
        :meth:`_first_step_begins` can begin step 0's range earlier. Called before start()."""
        self._first_ranged_step = step

    def _first_step_begins(self) -> None:
        """``perfprof run``: the first step begins now (the first forward pass), before the first
        step boundary; no effect once a step has begun, nor when the run counts warm-up steps."""
        with self._lifecycle:
            if self._owner_pid == os.getpid() and not self._step_range and self.step_num + 1 == self._first_ranged_step:
                self._first_ranged_step = self.step_num
                self._begin_step_range()

    def _end_step_range(self, by_stop: bool = False) -> None:
        # The range the profiler stops in (`by_stop`) is kept, as torch keeps it, but marked: it
        # is the stretch after the last step, the run's tail, not a step (docs/analysis.md).
        if self._step_range:
            _core.end_step(self._step_range, by_stop)
            self._step_range = 0

    def _trace_ready(self) -> None:
        if self._trace is None:
            # The trace could not be built (logged at stop): there is nothing to hand over, but a
            # run-directory handler keeps the cycle's directory, whose capture holds the events.
            end_without_trace = getattr(self.on_trace_ready, "end_cycle_without_trace", None)
            if callable(end_without_trace):
                end_without_trace()
        elif self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _warn_incorrect_schedule(self) -> None:
        previous = ProfilerAction(self._controller.previous).name
        current = ProfilerAction(self._controller.current).name
        logger.warning("perfprof: incorrect schedule: %s followed by %s", previous, current)


# The Python frames an event of events() gets, innermost first (with_stack=True).
_STACK_FRAMES = 128


def _record_every_step(_: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def _check_output_path(function: str, path: object) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{function}: 'path' must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    if not path:
        raise ValueError(f"{function}: 'path' is empty")
    return path


def _reject_non_json_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON value")


def _check_metadata_key(function: str, key: object) -> None:
    if not isinstance(key, str):
        raise TypeError(f"{function}: key must be str, got {type(key).__name__}")
    if not key or key in _RESERVED_TRACE_KEYS:
        raise ValueError(f"{function}: key {key!r} is empty or reserved by the trace format")
