"""Session: one collection, from prepare to the trace of its kept window.

A profiler runs one Session per collection: ``prepare`` (collection begins: warm-up), ``begin_window``
(what was collected so far is dropped; the kept window begins), ``stop`` (every collector stops and
the trace model is built). The session then keeps what its collectors hold past stop (torch's
results: freeing them costs about as much as reading them) until it is dropped, which the profiler
does when its next collection begins, or with itself. The schedule and its step state machine
(profiler.py, csrc/schedule) decide when these calls happen; the session knows nothing of steps.

The recorder is process-wide, so one session collects at a time in a process. A start goes
through stages (``start_stages``); whichever fails, what the stages before it did is undone and
the recorder freed, so that a failed start never keeps the process from profiling again.
"""
from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, Callable, Iterator, List, Optional, Sequence, Set, Tuple

from . import _core, _start_faults
from ._collectors import KINDS, Collection, Collector, collectors_for
from ._logging import logger
from ._memory_headroom import memory_headroom
from ._options import ProfilerOptions
from ._termination import TerminationNotice

_collecting: Optional["Session"] = None
_collecting_lock = threading.Lock()


class Session:
    """One collection with fixed `options`: the collectors they ask for, and its window."""

    def __init__(self, options: ProfilerOptions) -> None:
        self.options = options
        self._collectors: List[Collector] = []  # those started (or starting), in start order
        self._collection = Collection()
        self._stream: Optional[_core.CaptureStream] = None
        self._termination: Optional[TerminationNotice] = None
        self._limit_bytes: Optional[int] = None  # the most recorded events may take; None: no limit
        self.window_open = False
        #: Why the trace could not be built at stop ("" when it was, or the session has not stopped).
        self.build_failure = ""
        #: Host events the capture file lacks because it could not be written (the trace has them).
        self.capture_lacks = 0
        #: Why the collection could not start ("" when it did, or has not tried).
        self.start_failure = ""
        self._stage = ""  # the stage of the start under way, for the line a failure logs

    @property
    def collecting(self) -> bool:
        """Between a successful ``prepare`` and ``stop`` (a forked child's copy never is)."""
        return _collecting is self

    def prepare(self) -> None:
        """Begin collecting (warm-up). Raises ``RuntimeError`` while another session collects
        (a misuse). Any other failure is the profiler's business: what the stages before it did
        is undone, one line is logged (``start_failure`` says why) and the session does not
        collect; the job goes on, and the next session starts afresh."""
        self._claim()
        try:
            with self._starting("claim"):
                pass  # the recorder is this session's: from here on, a failure gives it back
            with self._starting("collectors"):
                collectors = collectors_for(self.options)
            self.options.log_uncollected()
            with self._starting("recording limit"):
                self._limit_bytes = _record_limit_bytes(self.options.experimental_config.record_limit_mb)
                _core.set_event_limit(_UNLIMITED_EVENTS if self._limit_bytes is None else
                                      self._limit_bytes // _core.EVENT_BYTES)
            for collector in collectors:
                self._collectors.append(collector)  # stopped from now on, even if its start fails
                _core.set_channels(_core.channels() | collector.channels)
                _guarded(collector, "start", _start, collector)
        except Exception as error:  # never hurt the job: it goes on without this collection
            self._abandon(error)

    def begin_window(self, capture_path: Optional[str] = None,
                     run_metadata: Sequence[Tuple[str, str, bool]] = ()) -> None:
        """Keep what is collected from now on (the end of warm-up). With `capture_path` the
        session's capture is written there while it records (see ``flush``), beginning with
        `run_metadata` ((key, JSON text, added by the user) entries: how the run is configured,
        kept even if the process is killed); without, or when the file cannot be written (one
        line says so), the session is held in memory until it stops. A failure beyond those is
        undone as one of :meth:`prepare` is: the session then no longer collects."""
        self._collection.window_begin_ns = _core.now_ns()
        self.window_open = True
        try:
            with self._starting("window"):
                for collector in self._collectors:
                    _guarded(collector, "window begin", collector.window_begin)
            if capture_path is not None:
                self._open_capture(capture_path, run_metadata)
        except Exception as error:  # never hurt the job: it goes on without this collection
            self._abandon(error)

    def _open_capture(self, path: str, run_metadata: Sequence[Tuple[str, str, bool]]) -> None:
        """Write the capture at `path` from now on, and have SIGTERM and the interpreter's exit
        say where it is; a capture that cannot be written leaves the session in memory."""
        try:
            with self._starting("capture file"):
                self._stream = _core.CaptureStream(path)
                for key, text, from_user in run_metadata:
                    self._stream.add_metadata(key, text, from_user)
                self._stream.start_flushing(self.options.experimental_config.capture_buffer_mb << 20)
        except Exception as error:  # the session goes on in memory, as when the disk fills up later
            logger.warning("perfprof: the capture %s cannot be written (%r); the session is kept in memory", path,
                           error)
            self._drop_stream()
            return
        self._check_stream()
        notice = TerminationNotice(os.path.dirname(os.path.abspath(path)), self.flush)
        try:
            with self._starting("exit notice"):
                notice.install()
        except Exception as error:  # the capture is written all the same; only the notice is missing
            notice.remove()
            logger.warning("perfprof: SIGTERM and the interpreter's exit will not name the capture %s (%r)", path,
                           error)
            return
        self._termination = notice

    def _claim(self) -> None:
        global _collecting
        with _collecting_lock:
            if _collecting is not None:
                raise RuntimeError("perfprof: another profiler is already collecting in this process; "
                                   "stop it before starting this one")
            _collecting = self

    @contextlib.contextmanager
    def _starting(self, stage: str) -> Iterator[None]:
        """One stage of the start: named for the line its failure logs (and for tests' faults)."""
        self._stage = stage
        yield
        _start_faults.reached(stage)

    def _abandon(self, error: BaseException) -> None:
        """A start failed at the current stage: undo what every stage did so far (the
        collectors started stop, in the reverse order, their channels close, what they recorded
        goes, the capture file goes) and free the recorder for the next session."""
        global _collecting
        self.start_failure = f"{self._stage}: {error!r}"
        self.window_open = False
        try:
            if self._termination is not None:
                self._termination.remove()
                self._termination = None
            for collector in reversed(self._collectors):
                _guarded(collector, "stop", collector.stop, self._collection)
                _core.set_channels(_core.channels() & ~collector.channels)
            self._collectors = []
            self._drop_stream()
            _core.discard()
        finally:
            with _collecting_lock:
                if _collecting is self:
                    _collecting = None
        logger.error("perfprof: the collection could not start (%s); this cycle is not collected and the job "
                     "goes on", self.start_failure)

    def _drop_stream(self) -> None:
        """Let the capture being opened go, removing its file: it holds no event yet. (Its last
        reference goes with this call: the stream's flushing thread stops and the file closes.)"""
        stream, self._stream = self._stream, None
        if stream is not None and stream.events_appended == 0 and not stream.removed:
            _remove_quietly(stream.path)

    def toggle(self, enable: bool, activities: Set[str]) -> None:
        """Resume (`enable`) or pause recording the `activities` ("CPU", "CUDA") from now on:
        their collectors' pausable channels open or close, and each collector pauses what its
        channels do not gate. What began before a pause is recorded whole. No effect once stopped."""
        if not self.collecting:
            return
        for collector in self._collectors:
            if collector.activity not in activities:
                continue
            gated = collector.pausable_channels & collector.channels
            _core.set_channels(_core.channels() | gated if enable else _core.channels() & ~gated)
            _guarded(collector, "toggle", collector.pause, not enable)

    def add_run_metadata(self, key: str, text: str, from_user: bool) -> None:
        """Write run metadata added while the session records into its capture (nothing without
        one, or once it has stopped: the run directory's JSON files then carry it)."""
        if self._stream is not None and self._stream.ok:
            self._stream.add_metadata(key, text, from_user)

    def flush(self) -> None:
        """Move what was recorded so far into the capture file (each step, while the window is
        open): memory then holds one step's events, and a process killed later leaves every
        flushed step on disk. Without a capture file, or once it cannot be written, events stay
        in memory until stop."""
        if self._stream is not None and self._stream.ok:
            try:
                self._stream.append_recorded()
            except Exception as error:  # never out of step(); the stream holds back what it could not write
                logger.warning("perfprof: moving recorded events to the capture failed: %r", error)
            self._check_stream()

    def _check_stream(self) -> None:
        if not self._stream.ok:
            logger.warning("perfprof: the capture cannot be written (%s); the rest of the session is kept in memory",
                           self._stream.error)

    def stop(self) -> Optional["_core.Trace"]:
        """Stop every collector, in the reverse order of their start, and build the trace of the
        kept window from what they brought into the recorder. None when the trace cannot be
        built (out of memory, say): one line is logged saying what was lost or where the capture
        keeps it, and ``build_failure`` says why."""
        global _collecting
        collection = self._collection
        for collector in self._collectors:
            _guarded(collector, "finish work", collector.finish_work)
        collection.window_end_ns = _core.now_ns()
        if self._termination is not None:
            self._termination.remove()
        try:
            for collector in reversed(self._collectors):
                _guarded(collector, "stop", collector.stop, collection)
                _core.set_channels(_core.channels() & ~collector.channels)
            _name_live_threads()
            limit_reached = _core.event_limit_reached()
            held = _core.buffered_events()
            trace = self._build(collection, held)
            if self._stream is not None:
                self.capture_lacks = self._stream.events_held_back
                if self._stream.removed:
                    logger.error("perfprof: the capture %s was removed while recording; the trace was built from "
                                 "the open file", self._stream.path)
                _remove_if_eventless(self._stream)
        finally:  # whatever happened, the recorder is free for the next session
            with _collecting_lock:
                _collecting = None
        if trace is not None:
            _report_losses(trace.stats, self._limit_bytes if limit_reached else None)
        return trace

    def _build(self, collection: Collection, held: int) -> Optional["_core.Trace"]:
        """The trace of the window; None (logged) when it cannot be built. `held`: the events
        in memory, lost with the trace when there is no capture to build it from later."""
        try:
            return _core.collect(collection.window_begin_ns, collection.window_end_ns, collection.gpu_records,
                                 flops=self.options.with_flops, stream=self._stream)
        except Exception as error:  # never hurt the job: building the trace is perfprof's business
            self.build_failure = "out of memory" if isinstance(error, MemoryError) else repr(error)
        _core.discard()  # what the failed build left in the recorder goes now, not at the next start
        if self._stream is not None and self._stream.ok:
            run_dir = os.path.dirname(os.path.abspath(self._stream.path))
            logger.error("perfprof: the trace could not be built at stop (%s); the capture in %s keeps what was "
                         "recorded: `perfprof analyse %s` builds it", self.build_failure, run_dir, run_dir)
        else:
            logger.error("perfprof: the trace could not be built at stop (%s); the %d events held in memory "
                         "are lost", self.build_failure, held)
        return None


def _remove_if_eventless(stream: _core.CaptureStream) -> None:
    """A capture that could not be written and holds no event is of no use to anyone: it goes."""
    if not stream.ok and stream.events_appended == 0 and not stream.removed:
        _remove_quietly(stream.path)


def _remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def start_stages() -> List[str]:
    """The stages a start goes through, in order: each is undone when a later one fails
    (_start_faults injects the failures the tests make)."""
    collector_stages = [stage for kind in KINDS for stage in (*kind.start_stages, f"{kind.name} start")]
    return ["claim", "collectors", "recording limit", *collector_stages, "run directory", "window", "capture file",
            "exit notice"]


def _start(collector: Collector) -> None:
    """Start one collector: a stage of its own (``{name} start``)."""
    collector.start()
    _start_faults.reached(f"{collector.name} start")


def _guarded(collector: Collector, phase: str, call: Callable[..., None], *args: Any) -> None:
    """Run one collector call; what escapes it is logged (one line) and never reaches the job."""
    try:
        call(*args)
    except Exception as error:  # collectors handle their expected failures; this is the backstop
        logger.warning("perfprof: %s: %s failed; its data may be missing: %r", collector.name, phase, error)


def _name_live_threads() -> None:
    """Refresh thread names from Python: threads may be renamed after they first recorded."""
    for thread in threading.enumerate():
        if thread.native_id is not None:
            _core.name_thread(thread.native_id, thread.name)


# The event limit when there is none: more than any process can hold.
_UNLIMITED_EVENTS = 2**63 - 1


def _record_limit_bytes(limit_mb: Optional[int]) -> Optional[int]:
    """The most memory a cycle's recorded events may take: `limit_mb` when given, else a quarter
    of the process's memory headroom (building the trace at stop takes about as much again, and
    the job needs the rest); None when the headroom cannot be read."""
    if limit_mb is not None:
        return limit_mb << 20
    headroom = memory_headroom()
    return None if headroom is None else headroom // 4


def _report_losses(stats: _core.TraceStats, limit_bytes: Optional[int]) -> None:
    """Log what the trace lacks. `limit_bytes`: the recording limit, when it was reached."""
    if stats["dropped_events"] and limit_bytes is not None:
        logger.warning("perfprof: %d events were dropped: the cycle reached its recording limit of %d MiB "
                       "(ExperimentalConfig.record_limit_mb; by default a quarter of the memory free when the "
                       "cycle began); the trace lacks them", stats["dropped_events"], limit_bytes >> 20)
    elif stats["dropped_events"]:
        logger.warning("perfprof: %d events were lost (no memory could be had for them, or their capture could "
                       "not be read back) and are missing from the trace", stats["dropped_events"])
    if stats["gpu_dropped_records"]:
        logger.warning("perfprof: CUPTI dropped %d GPU activity records (buffers full); the trace "
                       "lacks them", stats["gpu_dropped_records"])
    if stats["gpu_records_outside_window"]:
        logger.warning("perfprof: %d GPU activity records had timestamps that cannot be of work in the profiled "
                       "window (0: CUPTI could not time them; or past its end: another clock) and were left out",
                       stats["gpu_records_outside_window"])
    if stats["kernel_metrics_unmatched"]:
        logger.warning("perfprof: the GPU metrics of %d measured kernels were left out: CUPTI's measured kernels and "
                       "the kernel records did not pair one to one (docs/gpu_metrics.md)",
                       stats["kernel_metrics_unmatched"])


def _forget_collection_in_child() -> None:
    """After fork: the child has no collector, so it records nothing and frees what it inherited.

    Without this, a forked worker (e.g. a DataLoader worker) whose parent was profiling would
    fill buffers that nobody ever collects for as long as it runs.
    """
    global _collecting
    _collecting = None
    _core.set_channels(0)
    _core.discard()


os.register_at_fork(after_in_child=_forget_collection_in_child)
