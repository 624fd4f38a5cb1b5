"""SIGTERM, or the interpreter exiting, while a capture is written: say where the recording is
before the process ends.

A job stopped by its scheduler (torchrun, Slurm, Kubernetes) gets SIGTERM. Its capture file
already holds every step completed (the session writes it a step at a time); on SIGTERM perfprof
moves what was recorded since into it too, logs one line naming the run directory and how to
get its trace, then lets SIGTERM end the process as it would have. The handler is installed only
while a capture is written, only from the main thread (Python's rule for signal handlers), and
only when the script has none of its own: a script that handles SIGTERM (to stop the profiler
and save its cycle, say) keeps its handler untouched.

The interpreter exiting while the capture is written (a KeyboardInterrupt from Ctrl-C or SIGINT
that nothing caught, ``sys.exit()``, an uncaught exception, with the profiler started by
``start()`` rather than a with-block, whose exit would have stopped it) is handled the same way,
from an ``atexit`` callback.
"""
from __future__ import annotations

import atexit
import os
import signal
import threading
from types import FrameType
from typing import Callable, Optional

from ._logging import logger


class TerminationNotice:
    """SIGTERM's handler and an exit callback while one capture is written (`flush` moves the
    recording into it)."""

    def __init__(self, run_dir: str, flush: Callable[[], None]) -> None:
        self._run_dir = run_dir
        self._flush = flush
        self._installed = False
        self._pid = os.getpid()

    def install(self) -> None:
        """Handle the interpreter's exit, and SIGTERM where the script does not and this is the
        main thread."""
        atexit.register(self._at_exit)
        if threading.current_thread() is not threading.main_thread():
            return
        if signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
            return
        signal.signal(signal.SIGTERM, self._on_sigterm)
        self._installed = True

    def remove(self) -> None:
        """Give SIGTERM back to the default, unless someone else has handled it since."""
        atexit.unregister(self._at_exit)
        if self._installed and signal.getsignal(signal.SIGTERM) == self._on_sigterm:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self._installed = False

    def _on_sigterm(self, signum: int, frame: Optional[FrameType]) -> None:
        try:
            self._flush()
        finally:
            logger.warning("perfprof: SIGTERM while recording; the capture in %s holds what was recorded: "
                           "`perfprof analyse %s` writes the trace of its complete steps", self._run_dir, self._run_dir)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)


    def _at_exit(self) -> None:
        if os.getpid() != self._pid:
            return  # a fork()ed child's copy: the capture is the parent's
        try:
            self._flush()
        finally:
            logger.warning("perfprof: the process exits while recording; the capture in %s holds what was recorded: "
                           "`perfprof analyse %s` writes the trace of its complete steps", self._run_dir, self._run_dir)


def _default_in_child() -> None:
    handler = signal.getsignal(signal.SIGTERM)
    if isinstance(getattr(handler, "__self__", None), TerminationNotice):
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


os.register_at_fork(after_in_child=_default_in_child)
