"""The engine behind perfprof.dynamic_profile: collections started at step boundaries.

A ``DynamicProfiler`` counts steps (``step()``, called by dp.step() or after each optimizer
step) and runs at most one collection at a time: a ``profile`` with the config's options and the
schedule ``warmup`` then ``active`` steps, whose run directory tensorboard_trace_handler writes
into ``prof_dir``. Requests come from a monitor thread watching profiler_config.json and from
dp.start(); one that arrives during a collection waits for it to end.

What the training thread pays per step while nothing is pending is one increment and one test
(``step()``'s fast path); everything else happens only around a collection. The monitor thread
only reads and parses the file: collections are started and stopped on the thread that steps.
"""
from __future__ import annotations

import dataclasses
import json
import os
import threading
import time
from typing import Callable, List, Optional

from ._dynamic_config import CONFIG_FILE, ConfigWatcher, DynamicConfig, checked_path, read_config, template
from ._dynamic_log import DynamicLogs
from ._files import create_once, make_directory
from ._node_config import NodeConfigReader
from .trace_handler import TraceHandler
from .run_metadata import distributed_info

_clock = time.monotonic  # the step-time clock (tests replace it)
FIRST_POLL_INTERVAL_S = 2.0
MIN_POLL_INTERVAL_S = 1.0


@dataclasses.dataclass
class _Request:
    config: DynamicConfig
    source: str  # where it came from, for the log


class _Collection:
    """One collection: a profile over `warmup` + `active` steps from `first_step` (a profile
    given whole, as `perfprof run` does, runs until the job ends)."""

    def __init__(self, prof, first_step: int, steps: Optional[int], source: str) -> None:  # type: ignore[no-untyped-def]
        self.prof = prof
        self.first_step = first_step
        self.steps = steps
        self.source = source
        self.started_at = _clock()
        self.step_interval_s: Optional[float] = None  # the job's mean step time so far

    def finished_at(self, step: int) -> bool:
        return self.steps is not None and step >= self.first_step + self.steps

    def note_step_end(self, step: int) -> None:
        """Measure the mean step time so far (the job's steps, not the profiler's writing)."""
        done = step - self.first_step
        if done > 0:
            self.step_interval_s = (_clock() - self.started_at) / done


class DynamicProfiler:
    """Steps, requests and the collection they start (see the module's docstring).

    `config_dir`: the directory of the watched profiler_config.json (created with the template
    when missing), or None for no watching (dp.start() and ``perfprof run`` only; the logs then go
    to `log_dir`).
    """

    def __init__(self, config_dir: Optional[str], log_dir: Optional[str] = None, watch: bool = True) -> None:
        self.step_num = 0
        self.poll_interval_s = FIRST_POLL_INTERVAL_S
        self.run_dirs: List[str] = []  # of the collections finished so far
        self._handlers: List[TraceHandler] = []  # their run-directory writers
        self.config_path = os.path.join(config_dir, CONFIG_FILE) if config_dir else None
        self._collection: Optional[_Collection] = None
        self._request: Optional[_Request] = None  # posted by the monitor thread or dp.start()
        self._waiting: Optional[_Request] = None  # taken, waiting for its start_step
        self._busy = False  # a request is posted or waiting, or a collection runs: step() looks closer
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._monitor: Optional[threading.Thread] = None
        self._reader: Optional[NodeConfigReader] = None
        self.rank = distributed_info().rank
        if config_dir:
            _make_private_dir(config_dir)
        self.logs = DynamicLogs(config_dir or log_dir or ".", self.rank)
        if self.config_path and watch:
            self._start_monitor(self.config_path)

    def watch(self, config_dir: str) -> None:
        """Start watching `config_dir` (dp.init after a dp.start that came without one);
        the logs stay where they are."""
        if self._monitor is not None:
            self.logs.actions.warning("already watching %s; dp.init(%s) is ignored", self.config_path, config_dir)
            return
        _make_private_dir(config_dir)
        self.config_path = os.path.join(config_dir, CONFIG_FILE)
        self._start_monitor(self.config_path)

    # -- the training thread ---------------------------------------------------------------------

    def step(self) -> None:
        """The end of a step: the next one begins."""
        self.step_num += 1
        if self._busy:
            self._at_step_boundary()

    def start_now(self, config_path: Optional[str]) -> None:
        """dp.start(): collect from here with the config at `config_path` (or, when it gives
        none, the watched one); no effect while a collection runs."""
        if self._collection is not None:
            self.logs.actions.warning("dp.start at step %d: a collection (%s) is running; this call has no effect",
                                      self.step_num, self._collection.source)
            return
        request = self._start_request(config_path)  # starts now, whatever its start_step says
        if request is not None:
            self._consider(request)
            self._update_busy()

    def begin(self, prof, source: str) -> None:  # type: ignore[no-untyped-def]
        """Run `prof` (a profile not yet started) from this step until the job ends."""
        self._collection = _Collection(prof, self.step_num, None, source)
        prof.step_num = self.step_num
        prof.start()
        self._update_busy()

    def request(self, config: DynamicConfig, source: str) -> None:
        """Collect as `config` says: now when its start_step is 0 or -1, else at that step."""
        if config.start_step in (0, -1):
            self._consider(_Request(config, source))
            self._update_busy()
        else:
            self.post(_Request(config, source))

    def _at_step_boundary(self) -> None:
        try:
            if self._collection is not None:
                self._collection.note_step_end(self.step_num)  # before the step writes a run directory
                self._keeping_plot_failures(self._collection.prof.step)
                if self._collection.finished_at(self.step_num):
                    self._finish()
            if self._collection is None:
                request = self._next_request()
                if request is not None:
                    self._consider(request)
        except Exception as error:  # never hurt the job
            self.logs.actions.error("step %d: %s: %s; the collection is abandoned", self.step_num,
                                    type(error).__name__, error)
            self._collection = None
        self._update_busy()

    def _next_request(self) -> Optional[_Request]:
        with self._lock:
            posted, self._request = self._request, None
        if posted is not None:
            if self._waiting is not None:
                self.logs.actions.info("step %d: %s replaces the config waiting for step %d", self.step_num,
                                       posted.source, self._waiting.config.start_step)
            self._waiting = posted
        request = self._waiting
        if request is None or request.config.start_step in (-1, self.step_num):
            self._waiting = None
            return request
        start_step = request.config.start_step
        if start_step == 0:
            self.logs.actions.info("step %d: %s has start_step 0: nothing is collected", self.step_num, request.source)
            self._waiting = None
        elif start_step < self.step_num:
            self.logs.actions.warning("step %d: %s asks for step %d, which has passed; the config is ignored",
                                      self.step_num, request.source, start_step)
            self._waiting = None
        return None  # a later step: it waits

    def _consider(self, request: _Request) -> None:
        if not request.config.collects_on_rank(self.rank):
            self.logs.actions.info("step %d: rank %d is not in rank_list %s: this rank does not collect",
                                   self.step_num, self.rank, list(request.config.rank_list))
            return
        self._start(request)

    def _start(self, request: _Request) -> None:
        from .profiler import profile
        from .schedule import schedule
        from .trace_handler import tensorboard_trace_handler

        config = request.config
        analyse = config.analyse and not config.is_rank  # the spec: with is_rank, analyse offline
        if config.analyse and config.is_rank:
            self.logs.actions.info("is_rank is set, so the run is not analysed here: run `perfprof analyse` on it")
        try:
            # The profile counts the job's steps, so its schedule skips those already done.
            cycle = schedule(wait=0, warmup=config.warmup, active=config.active, repeat=1, skip_first=self.step_num)
            prof = profile(**config.options.as_kwargs(), schedule=cycle, on_trace_ready=tensorboard_trace_handler(
                config.prof_dir, analyse_flag=analyse, async_mode=config.async_mode, auto_plot=config.auto_plot,
                plot_required=config.plot_required, plot=config.plot))
            self._add_metadata(prof, config)
            prof.step_num = self.step_num
            prof.start()
        except Exception as error:  # never hurt the job
            self.logs.actions.error("step %d: cannot start the collection of %s: %s: %s", self.step_num,
                                    request.source, type(error).__name__, error)
            return
        if prof._start_failure():  # said on stderr too; the profile is left for the next config
            self.logs.actions.error("step %d: cannot start the collection of %s: %s", self.step_num, request.source,
                                    prof._start_failure())
            prof.stop()
            return
        self._collection = _Collection(prof, self.step_num, config.warmup + config.active, request.source)
        self.logs.actions.info("step %d: collection started from %s: warmup %d, active %d, into %s", self.step_num,
                               request.source, config.warmup, config.active, os.path.abspath(config.prof_dir))

    def _add_metadata(self, prof, config: DynamicConfig) -> None:  # type: ignore[no-untyped-def]
        for key, value in config.metadata.items():
            try:
                prof.add_metadata_json(key, json.dumps(value))
            except (TypeError, ValueError) as error:  # a bad entry is left out, not the collection
                self.logs.actions.warning("metadata %r is left out: %s", key, error)

    def _finish(self) -> None:
        collection, self._collection = self._collection, None
        if collection is None:
            return
        self._keeping_plot_failures(collection.prof.stop)
        interval = collection.step_interval_s
        if interval is not None:
            self.poll_interval_s = max(MIN_POLL_INTERVAL_S, interval)
        handler = collection.prof.on_trace_ready
        self._handlers.append(handler)
        run_dirs = list(handler.run_dirs)
        self.run_dirs += run_dirs
        self.logs.actions.info("step %d: collection from %s done: %s", self.step_num, collection.source,
                               ", ".join(run_dirs) or "no run directory was written")

    def _keeping_plot_failures(self, advance: Callable[[], None]) -> None:
        """Run a profile's step() or stop(), which may write a run directory: a required
        auto-plot's failure is logged and the collection goes on (its handler keeps the failure
        for `perfprof run`, which fails at the end: the job itself is never stopped for a plot)."""
        from .plots import AutoPlotError

        try:
            advance()
        except AutoPlotError as error:
            self.logs.actions.error("step %d: %s", self.step_num, error)

    def plot_failures(self) -> List[Exception]:
        """The required auto-plots that failed (plot_required), once the collections' run
        directories are all written: this waits for those written in the background."""
        for handler in self._handlers:
            handler.wait()
        return [failure for handler in self._handlers for failure in handler.plot_failures]

    def _update_busy(self) -> None:
        with self._lock:
            self._busy = self._collection is not None or self._request is not None or self._waiting is not None

    # -- requests --------------------------------------------------------------------------------

    def post(self, request: _Request) -> None:
        """Hand a request to the training thread: taken at the next step boundary."""
        with self._lock:
            self._request = request
            self._busy = True

    def _start_request(self, config_path: Optional[str]) -> Optional[_Request]:
        candidates = [config_path] if config_path else []
        candidates += [self.config_path] if self.config_path else []
        for path in candidates:
            config = self._read_config(path)
            if config is not None:
                return _Request(config, f"dp.start({path})")
        self.logs.actions.error("dp.start at step %d: no valid config in %s; nothing is collected", self.step_num,
                                " or ".join(candidates) or "(no file given and dp.init was not called)")
        return None

    def _read_config(self, path: str) -> Optional[DynamicConfig]:
        try:
            checked_path("dp.start", os.path.dirname(path) or ".")
        except ValueError as error:
            self.logs.actions.error("%s", error)
            return None
        config, problems = read_config(path)
        for problem in problems:
            self.logs.actions.warning("dp.start: %s: %s", path, problem)
        return config

    # -- the monitor thread ----------------------------------------------------------------------

    def _start_monitor(self, path: str) -> None:
        text = template()
        created = create_once(path, text)
        self._reader = NodeConfigReader(path, self.logs.monitor.info)
        watcher = ConfigWatcher(path, self.logs.monitor.warning, read=self._reader.read,
                                initial=text.encode() if created else None)
        self._monitor = threading.Thread(target=self._watch, args=(watcher,), name="perfprof-dynamic-profile",
                                         daemon=True)
        self._monitor.start()
        self.logs.actions.info("watching %s (rank %d); polling every %.0f s", path, self.rank, self.poll_interval_s)

    def _watch(self, watcher: ConfigWatcher) -> None:
        while not self._stopping.wait(self.poll_interval_s):
            try:
                config = watcher.poll()
            except Exception as error:  # never hurt the job: the next poll tries again
                self.logs.monitor.error("reading %s: %s: %s", watcher.path, type(error).__name__, error)
                continue
            if config is not None:
                self.logs.monitor.info("Dynamic profiler process load json success: %s (modified %s): "
                                       "start_step %d, warmup %d, active %d", watcher.path, _mtime(watcher.path),
                                       config.start_step, config.warmup, config.active)
                self.post(_Request(config, watcher.path))

    def close(self) -> None:
        """At the job's end: stop watching, and write what a running collection recorded."""
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join(timeout=5)
        if self._reader is not None:
            self._reader.close()
        if self._collection is not None:
            self.logs.actions.info("step %d: the job ends during a collection; writing what it recorded", self.step_num)
            try:
                self._finish()
            except Exception as error:  # never hurt the job, even at its end
                self.logs.actions.error("writing the last collection: %s: %s", type(error).__name__, error)
        self.logs.monitor.info("Dynamic profiler process done")
        self.logs.close()


def _make_private_dir(path: str) -> None:
    checked_path("dp.init", path)
    make_directory(path)


def _mtime(path: str) -> str:
    try:
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(os.stat(path).st_mtime))
    except OSError:
        return "unknown"

