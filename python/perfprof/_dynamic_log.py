"""Dynamic profiling's maintenance logs, as the spec lays them out::

    {config_dir}/log/dp_{host}_{pid}_rank_{rank}.log           what dynamic profiling did
    {config_dir}/log/monitor_dp_{host}_{pid}_rank_{rank}.log   what it read from profiler_config.json

Each file holds at most 200 KB; the oldest lines then move to one ``.1`` backup, and the
backup's oldest go. The log directory is made 0750 and the files 0640: a shared configuration
directory must not hand a job's logs to every user of the filesystem.

Warnings and errors also reach perfprof's logger (stderr by default), so a refused config is not
only in a file the user may never open. A log file removed while the job runs (the configuration
directory deleted and made again) is made again at the next line.
"""
from __future__ import annotations

import itertools
import logging
import logging.handlers
import os
import socket
from typing import Any, List

from ._files import FILE_MODE, make_directory, new_directory

MAX_LOG_BYTES = 200 * 1024
_FORMAT = "%(asctime)s [%(levelname)s] [%(process)d] %(filename)s: %(message)s"

_instances = itertools.count()  # a logger name per DynamicLogs: several may live in one process


class _PrivateRotatingFile(logging.handlers.RotatingFileHandler):
    """A RotatingFileHandler whose files (the new one after each rollover too) are 0640, and
    that follows its path: when the file was removed or replaced (the configuration directory
    deleted and made again while the job runs), the next line reopens it there, making the log
    directory again. A configuration directory that is gone is not made again: its lines are
    left out of the file (said once; warnings still reach stderr) until it is back."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._said_missing = False

    def _open(self):  # type: ignore[no-untyped-def]
        stream = super()._open()
        os.chmod(self.baseFilename, FILE_MODE)
        return stream

    def emit(self, record: logging.LogRecord) -> None:
        # Called under the handler's lock: the monitor thread and the training thread both log.
        if self._follow_path():
            super().emit(record)

    def _follow_path(self) -> bool:
        """Whether the file at the path is the one open (reopened when it was not)."""
        if self.stream is not None and _same_file(self.stream.fileno(), self.baseFilename):
            return True
        if self.stream is not None:
            self.stream.close()
            self.stream = None  # type: ignore[assignment]
        directory = os.path.dirname(self.baseFilename)
        try:
            if not os.path.isdir(directory):
                new_directory(directory)  # the log folder only: its parent is the user's
            self.stream = self._open()
        except OSError as error:
            if not self._said_missing:
                logging.getLogger("perfprof").warning(
                    "perfprof: dynamic_profile: the log %s cannot be written (%s); its lines are left out until "
                    "its directory is back", self.baseFilename, error)
                self._said_missing = True
            return False
        self._said_missing = False
        return True


def _same_file(descriptor: int, path: str) -> bool:
    """Whether `path` names the open file `descriptor` (not removed, nor replaced)."""
    try:
        on_disk = os.stat(path)
    except OSError:
        return False
    opened = os.fstat(descriptor)
    return (on_disk.st_dev, on_disk.st_ino) == (opened.st_dev, opened.st_ino)


class DynamicLogs:
    """The two loggers of one process: ``actions`` (dp_…log) and ``monitor`` (monitor_dp_…log)."""

    def __init__(self, config_dir: str, rank: int) -> None:
        self.directory = os.path.join(config_dir, "log")
        make_directory(self.directory)
        name = f"{socket.gethostname()}_{os.getpid()}_rank_{rank}.log"
        instance = next(_instances)
        self.actions = self._logger(f"perfprof.dynamic.{instance}", f"dp_{name}")
        self.monitor = self._logger(f"perfprof.dynamic.{instance}.monitor", f"monitor_dp_{name}")

    def _logger(self, logger_name: str, file_name: str) -> logging.Logger:
        handler = _PrivateRotatingFile(os.path.join(self.directory, file_name), maxBytes=MAX_LOG_BYTES,
                                       backupCount=1, encoding="utf-8", delay=False)
        handler.setFormatter(logging.Formatter(_FORMAT))
        handler.setLevel(logging.INFO)
        logger = logging.getLogger(logger_name)
        logger.setLevel(logging.INFO)
        logger.addHandler(handler)
        logger.addFilter(_ToStderrAboveInfo())
        logger.propagate = False
        return logger

    @property
    def files(self) -> List[str]:
        """The paths of the two current log files."""
        return [handler.baseFilename for logger in (self.actions, self.monitor) for handler in logger.handlers
                if isinstance(handler, logging.FileHandler)]

    def close(self) -> None:
        for logger in (self.actions, self.monitor):
            for handler in list(logger.handlers):
                logger.removeHandler(handler)
                handler.close()


class _ToStderrAboveInfo(logging.Filter):
    """Passes every record to the file, and hands warnings and errors to perfprof's logger too."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.WARNING:
            shown = logging.makeLogRecord(record.__dict__)
            shown.msg, shown.args = f"perfprof: dynamic_profile: {record.getMessage()}", None
            logging.getLogger("perfprof").handle(shown)
        return True
