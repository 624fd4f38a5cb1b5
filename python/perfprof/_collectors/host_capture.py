"""PyTorch operators, module calls and Python calls of the profiling thread (torch_capture.py has
how: torch's observer or profiler state, the module-call wrapper, the Python tracer)."""
from __future__ import annotations

import threading
from typing import Any, Optional

from .. import _core, torch_capture
from .._logging import logger, warn_once
from .._options import ProfilerOptions
from .base import Collection, Collector


class HostCapture(Collector):
    """The host side of ProfilerActivity.CPU beyond perfprof's own calls, captured on the thread
    that starts the profiler (child threads opt in with ``enable_profiler_in_child_thread``)."""

    name = "host capture"
    activity = "CPU"
    pausable_channels = _core.CHANNEL_OPERATORS | _core.CHANNEL_PYTHON
    start_stages = ("torch capture", "python tracer")

    def __init__(self, options: ProfilerOptions) -> None:
        super().__init__(options)
        # CPU's per-activity filter leaves out what it does not name: operators (CPU_OP), Python
        # calls and module ranges (PYTHON_FUNCTION).
        self.channels = ((_core.CHANNEL_OPERATORS if options.collects("CPU_OP") else 0) |
                         (_core.CHANNEL_PYTHON if options.collects("PYTHON_FUNCTION") else 0))
        self._thread: Optional[int] = None  # the thread whose operators this collector captures
        # torch's results read at stop, kept with the session: freeing them costs about as much
        # as reading them, so it is left out of the stop a user waits for (torch_capture.stop_thread).
        self._torch_results: Any = None

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return options.cpu

    def start(self) -> None:
        try:
            torch_capture.start_thread(torch_capture.CaptureOptions.of(self.options, profiling_thread=True))
        except Exception as error:  # never fail the job for its profiler
            # What the start did before it failed is undone: left on, it would keep this thread's
            # capture taken and every later profiler would capture nothing here.
            torch_capture.stop_thread()
            logger.warning("perfprof: PyTorch host capture could not start: %r", error)
            return
        self._thread = threading.get_ident()

    def window_begin(self) -> None:
        torch_capture.reset_module_names()  # before the running frames are named
        torch_capture.window_begin()

    def pause(self, paused: bool) -> None:
        # Operators read from torch's results at stop (exact inputs, memory) are paused in torch,
        # whose state is per thread: only the capturing thread can pause it.
        if self._thread == threading.get_ident():
            torch_capture.pause_torch_state(paused)
        elif self._thread is not None and torch_capture.uses_torch_results(self._thread):
            warn_once("toggle-other-thread", "perfprof: toggle_collection_dynamic called on another thread than "
                      "the profiling one: operators read from torch's own collection (record_shapes with exact "
                      "inputs, profile_memory) are not paused")

    def stop(self, collection: Collection) -> None:
        if self._thread is None:
            return
        if self._thread == threading.get_ident():
            self._torch_results = torch_capture.stop_thread(collection.window_begin_ns)
        else:
            torch_capture.abandon_thread(self._thread)
            warn_once("capture-thread", "perfprof: the profiler was stopped on another thread than it was "
                      "started on; operator capture on the starting thread ends at its next step, stop or start")
        self._thread = None
