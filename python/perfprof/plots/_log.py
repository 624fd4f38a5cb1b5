"""``perfprof_plot.log``: what one invocation of the plot engine did, beside the PNGs it wrote.

Written line by line as the plots are drawn (an invocation that dies midway leaves what it did),
and replaced by the next invocation, as the PNGs are: the log describes the folder's plots.
"""
from __future__ import annotations

import contextlib
import datetime
from typing import IO, Optional

from .._files import replaced_at_start

LOG_FILE = "perfprof_plot.log"


class PlotLog:
    """A plot log open for writing; use as a context manager."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._file: Optional[IO[str]] = None
        self._closing = contextlib.ExitStack()

    def __enter__(self) -> "PlotLog":
        self._file = self._closing.enter_context(replaced_at_start(self.path))
        self.line(f"perfprof plot, {datetime.datetime.now().isoformat(timespec='seconds')}")
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._closing.close()

    def line(self, text: str) -> None:
        """Append one line (flushed: the log is read while a job may still be running)."""
        assert self._file is not None, "PlotLog is used outside its with block"
        self._file.write(text + "\n")
        self._file.flush()
