"""Dynamic profiling: start a collection in a running job by editing a file.

Three ways in, as torch_npu's dynamic_profile (use one per job)::

    # 1. no code change: steps are counted on optimizer steps
    PERFPROF_CONFIG_PATH=/path/to/config_dir python train.py

    # 2. dp.init + dp.step
    from perfprof import dynamic_profile as dp
    dp.init("/path/to/config_dir")        # writes the template profiler_config.json if missing
    for batch in loader:
        train_one_step(batch)
        dp.step()

    # 3. dp.start where the collection must begin (after dp.init)
        if step == 5:
            dp.start("/path/to/start_config/profiler_config.json")

Editing ``profiler_config.json`` (``"start_step": -1`` for the next step, or a step number)
starts a collection of ``warmup`` + ``active`` steps; its run directory is written into
``prof_dir`` as :func:`perfprof.tensorboard_trace_handler` writes it. The file is polled every
2 s, then at the measured step interval (1 s at least). A change during a collection starts a
new collection after it ends; dp.start() has no effect during a collection. What happened is in
``{config_dir}/log/`` (docs/dynamic_profile.md has the fields, the rules and the logs).

A config never stops the job: a bad field is logged with its name and takes its default, and a
file that is not valid JSON is read again at the next poll.
"""
from __future__ import annotations

import atexit
import os
import threading
from typing import Callable, Optional

from ._dynamic_config import checked_path
from ._dynamic_profiler import DynamicProfiler
from ._logging import logger

__all__ = ["init", "start", "step"]

_profiler: Optional[DynamicProfiler] = None
_started_by = ""
_lock = threading.Lock()


def _not_initialised() -> None:
    """dp.step() before dp.init(): nothing to do, and so it stays cheap."""


def _ignored_explicit_step() -> None:
    global _explicit_step
    logger.warning("perfprof: dynamic_profile: steps are counted on optimizer steps (%s); dp.step() calls are "
                   "ignored", _started_by)
    _explicit_step = _not_initialised


_explicit_step: Callable[[], None] = _not_initialised


def init(path: "os.PathLike[str] | str") -> None:
    """Watch ``{path}/profiler_config.json`` (written with every field's default when missing)
    and count steps with :func:`step`.

    `path` may hold only letters, digits, ``_`` and ``-`` in each part, and no symbolic link;
    otherwise ``ValueError`` (``TypeError`` for a non-path). A second call, or a call in a job
    already profiled through ``PERFPROF_CONFIG_PATH`` or ``perfprof run``, is logged and ignored.
    """
    config_dir = _checked_path_arg("init", path)
    profiler = _profiler
    if profiler is not None and profiler.config_path is None:  # dp.start came first, without a config dir
        profiler.watch(config_dir)
        return
    _install(lambda: DynamicProfiler(config_dir), f"dp.init({config_dir})", explicit_steps=True)


def step() -> None:
    """Mark the end of a step. Costs well under a microsecond while no collection is pending."""
    _explicit_step()


def start(config_path: "Optional[os.PathLike[str] | str]" = None) -> None:
    """Collect from here, with the profiler_config.json at `config_path` (a file path), for
    ``warmup`` + ``active`` steps; its ``start_step`` is not used.

    When `config_path` is None, unreadable or invalid, the file dp.init() watches is used. While
    a collection runs (from dp.init's file or an earlier dp.start) the call has no effect (logged).
    Without dp.init(), steps are counted by :func:`step` and the logs go next to `config_path`.
    """
    file_path = None if config_path is None else _path_text("start", config_path)
    profiler = _profiler
    if profiler is None:
        if file_path is None:
            logger.warning("perfprof: dynamic_profile.start: no config file given and dp.init() was not called; "
                           "nothing is collected")
            return
        log_dir = os.path.dirname(os.path.abspath(file_path))
        try:
            checked_path("dynamic_profile.start", log_dir)
            profiler = _install(lambda: DynamicProfiler(None, log_dir=log_dir), f"dp.start({file_path})",
                                explicit_steps=True)
        except (OSError, ValueError) as error:  # never hurt the job: the call collects nothing
            logger.warning("perfprof: %s; nothing is collected", error)
            return
    if profiler is not None:
        profiler.start_now(file_path)


def _init_for_optimizer_steps(path: str, started_by: str) -> Callable[[], None]:
    """Dynamic profiling on `path`, one step per optimizer step (PERFPROF_CONFIG_PATH): returns
    the function the optimizer hook calls. Raises ValueError for a bad path."""
    config_dir = checked_path(started_by, path)
    profiler = _install(lambda: DynamicProfiler(config_dir), started_by, explicit_steps=False)
    return profiler.step if profiler is not None else _not_initialised


def _install(make: Callable[[], DynamicProfiler], started_by: str, explicit_steps: bool) -> Optional[DynamicProfiler]:
    """Make the process's dynamic profiler unless there is one (then log and return None)."""
    global _profiler, _started_by, _explicit_step
    with _lock:
        if _profiler is not None:
            logger.warning("perfprof: dynamic_profile: already started by %s; %s is ignored", _started_by, started_by)
            return None
        _profiler, _started_by = make(), started_by
        _explicit_step = _profiler.step if explicit_steps else _ignored_explicit_step
    atexit.register(_close)
    return _profiler


def _close() -> None:
    """At exit: stop watching and write what a running collection recorded."""
    global _profiler, _explicit_step
    with _lock:
        profiler, _profiler = _profiler, None
        _explicit_step = _not_initialised
    if profiler is not None:
        profiler.close()


def _path_text(function: str, path: object) -> str:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"dynamic_profile.{function}: the path must be a str or os.PathLike, got {type(path).__name__}")
    return os.fspath(path)


def _checked_path_arg(function: str, path: object) -> str:
    return checked_path(f"dynamic_profile.{function}", _path_text(function, path))
