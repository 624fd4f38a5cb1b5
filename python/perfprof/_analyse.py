"""Offline parsing: run directories' captures turned into their traces and tables, later and
elsewhere than the profiled job (``perfprof analyse``, :func:`perfprof.analyse`).

A run directory written with ``tensorboard_trace_handler(..., analyse_flag=False)``, or one whose
process was killed while recording, holds a capture (``capture.ppcap``) and no trace. Analysing
it writes what the profiled process would have written (``PERFPROF_OUTPUT/``: the Chrome trace,
the memory tables) from the capture alone: the same bytes as the in-process path. A capture cut
short is read up to its last whole chunk, with a warning naming the last complete step. Each run
directory is analysed in a process of its own (_isolated.py), and a capture its writer is still
writing is left alone (the writer's lock: csrc/capture/capture_lock.h).
"""
from __future__ import annotations

import functools
import json
import math
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from . import _core
from ._isolated import Limits, Outcome, run_each_isolated
from ._run_directory import CAPTURE_FILE, INFO_FILE, METADATA_FILE, RUN_DIR_SUFFIX, records_beyond_trace, \
    remove_run_temporaries, trace_file_name, write_database, write_json, write_outputs


@dataclass(frozen=True)
class AnalyseResult:
    """What analysing one run directory gave."""

    run_dir: str
    ok: bool                  # the outputs were written
    message: str              # what was written, or why not
    warning: str = ""         # e.g. the capture was cut short, and where
    trace_file: str = ""      # path of the Chrome trace written
    skipped: bool = False     # not analysed: a live process is still writing its capture


def find_run_dirs(path: "os.PathLike[str] | str") -> List[str]:
    """The run directories at or under `path`: those holding a capture, sorted."""
    path = os.fspath(path)
    if os.path.isfile(os.path.join(path, CAPTURE_FILE)):
        return [path]
    found = [root for root, _, files in os.walk(path) if CAPTURE_FILE in files]
    return sorted(found)


def analyse(
    profiler_path: "os.PathLike[str] | str | Iterable[os.PathLike[str] | str]",
    max_process_number: Optional[int] = None,
    data_simplification: Optional[bool] = None,
    on_result: Optional[Callable[[AnalyseResult], None]] = None,
    timeout_s: Optional[float] = None,
    memory_limit_mb: Optional[int] = None,
) -> List[AnalyseResult]:
    """Write the traces and tables of every run directory at or under `profiler_path` (one path
    or several) from their captures.

    Each run directory is analysed in a process of its own (forked from the caller), so that one
    whose analysis crashes, hangs or runs out of memory fails alone, said in its result's message
    ("the analysing process was killed by signal 11 (SIGSEGV)", "... exceeded the 600 s timeout",
    "... exceeded the 1,024 MiB memory limit"), and the others complete. A run directory whose
    capture a live process is still writing is skipped (``skipped`` in its result), its capture
    untouched.

    Args:
        max_process_number: run directories analysed at once (default: the number of CPUs, at
            most the number of directories); 1 analyses them one after the other, still each in
            its own process.
        data_simplification: remove each capture once its outputs are written (True) or keep it
            (False). Default: as the run was configured (``ExperimentalConfig.data_simplification``),
            read from the capture when the process was killed before writing its run directory's
            JSON files; kept when neither says (a capture of an older perfprof).
        on_result: called with each directory's result as it completes (progress reporting).
        timeout_s: seconds one directory's analysis may take before its process is killed
            (default: 600 s and 1 s per MiB of its capture, 30 times what analysing takes at
            least: only a hang reaches it).
        memory_limit_mb: memory (MiB of address space) one directory's analysis may take beyond
            what its process held when forked (default: 1 GiB and 8 times its capture's size, at
            most the machine's memory; analysing takes 1.5 to 3 times the capture's size).

    Returns one :class:`AnalyseResult` per run directory; a directory that fails does not stop
    the others. Raises ``FileNotFoundError`` when a path does not exist, ``ValueError`` when a
    path holds no capture at all, ``TypeError``/``ValueError`` naming the argument for bad ones.
    """
    paths = [profiler_path] if isinstance(profiler_path, (str, os.PathLike)) else list(profiler_path)
    if not paths:
        raise ValueError("analyse: 'profiler_path' names no directory")
    if max_process_number is not None and (not isinstance(max_process_number, int) or
                                           isinstance(max_process_number, bool) or max_process_number < 1):
        raise ValueError(f"analyse: 'max_process_number' must be an int >= 1, got {max_process_number!r}")
    if data_simplification is not None and not isinstance(data_simplification, bool):
        raise TypeError("analyse: 'data_simplification' must be a bool or None, "
                        f"got {type(data_simplification).__name__}")
    limits = _LimitChoice(_checked_timeout(timeout_s), _checked_memory_limit(memory_limit_mb))
    run_dirs: List[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"analyse: {os.fspath(path)!r} does not exist")
        found = find_run_dirs(path)
        if not found:
            raise ValueError(f"analyse: no capture ({CAPTURE_FILE}) at or under {os.fspath(path)!r}")
        run_dirs += found
    workers = min(len(run_dirs), max_process_number or os.cpu_count() or 1)

    def report(run_dir: str, outcome: Outcome) -> None:
        if on_result:
            on_result(_result_of(run_dir, outcome))

    outcomes = run_each_isolated(functools.partial(analyse_run_dir, data_simplification=data_simplification),
                                 run_dirs, workers, limits.of_run_dir, report)
    return [_result_of(run_dir, outcome) for run_dir, outcome in zip(run_dirs, outcomes)]


def _result_of(run_dir: str, outcome: Outcome) -> AnalyseResult:
    """A run directory's result: what its process returned, or what ended that process."""
    if outcome.failure:
        return AnalyseResult(run_dir, False, f"the analysing process {outcome.failure}")
    return outcome.value


def analyse_run_dir(run_dir: str, data_simplification: Optional[bool] = None) -> AnalyseResult:
    """Analyse one run directory (see :func:`analyse`) in this process; never raises for the
    directory's content. A capture a live process is writing is left alone (``skipped``)."""
    writer = _core.capture_writer_pid(os.path.join(run_dir, CAPTURE_FILE))
    if writer:
        return AnalyseResult(run_dir, False, f"{CAPTURE_FILE} is being written by pid {writer}; analyse it once "
                                             "that process has stopped recording", skipped=True)
    try:
        return _analyse(run_dir, data_simplification)
    except (OSError, ValueError) as error:
        return AnalyseResult(run_dir, False, str(error))


# The limits' defaults, from what analysing took on one core of a loaded machine: 30 to 100 MiB of
# capture a second, 1.5 to 3 times the capture's size in memory (docs/cli.md). They are there to
# catch a hang or a runaway, not a slow disk or a big capture: far beyond what analysing needs.
_TIMEOUT_BASE_S = 600.0
_TIMEOUT_S_PER_MIB = 1.0
_MEMORY_BASE_MB = 1024
_MEMORY_PER_CAPTURE_BYTE = 8
_MEMORY_LIMIT_MAX_MB = 1 << 30


@dataclass(frozen=True)
class _LimitChoice:
    """The user's limits, or None where the default (from the capture's size) applies."""

    timeout_s: Optional[float]
    memory_limit_mb: Optional[int]

    def of_run_dir(self, run_dir: str) -> Limits:
        try:
            capture_bytes = os.path.getsize(os.path.join(run_dir, CAPTURE_FILE))
        except OSError:  # gone meanwhile: its analysis says so
            capture_bytes = 0
        timeout_s = self.timeout_s or _TIMEOUT_BASE_S + _TIMEOUT_S_PER_MIB * capture_bytes / (1 << 20)
        memory_bytes = (self.memory_limit_mb << 20 if self.memory_limit_mb else
                        min((_MEMORY_BASE_MB << 20) + _MEMORY_PER_CAPTURE_BYTE * capture_bytes, _machine_memory()))
        return Limits(timeout_s, memory_bytes)


def _machine_memory() -> int:
    return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _checked_timeout(timeout_s: Optional[float]) -> Optional[float]:
    if timeout_s is None:
        return None
    if not isinstance(timeout_s, (int, float)) or isinstance(timeout_s, bool):
        raise TypeError(f"analyse: 'timeout_s' must be a number of seconds or None, got {type(timeout_s).__name__}")
    if not (0 < timeout_s < math.inf):
        raise ValueError(f"analyse: 'timeout_s' must be a finite number of seconds > 0, got {timeout_s!r}")
    return float(timeout_s)


def _checked_memory_limit(memory_limit_mb: Optional[int]) -> Optional[int]:
    if memory_limit_mb is None:
        return None
    if not isinstance(memory_limit_mb, int) or isinstance(memory_limit_mb, bool):
        raise TypeError(f"analyse: 'memory_limit_mb' must be an int (MiB) or None, "
                        f"got {type(memory_limit_mb).__name__}")
    if not 1 <= memory_limit_mb <= _MEMORY_LIMIT_MAX_MB:
        raise ValueError(f"analyse: 'memory_limit_mb' must be from 1 to {_MEMORY_LIMIT_MAX_MB} MiB, "
                         f"got {memory_limit_mb!r}")
    return memory_limit_mb


@dataclass
class _CapturedRun:
    """A run directory's capture built into its trace, with what the run directory says of it."""

    trace: Any
    complete: bool            # the capture was read to its end
    problem: str              # why not, when not complete
    info: Dict[str, Any]      # profiler_info.json, completed from the capture when the process did not stop
    metadata: Dict[str, Any]  # the user's metadata
    environment: Optional[Dict[str, str]]

    @property
    def metadata_items(self) -> List[Tuple[str, str]]:
        """What the exports write at the trace's top level: the user's metadata and the trace id."""
        trace_id = self.info.get("trace_id")
        return ([(key, json.dumps(value)) for key, value in self.metadata.items()] +
                ([("trace_id", json.dumps(trace_id))] if isinstance(trace_id, str) else []))


def _read_captured_run(run_dir: str) -> _CapturedRun:
    capture_path = os.path.join(run_dir, CAPTURE_FILE)
    info = _read_json(os.path.join(run_dir, INFO_FILE))
    metadata_file = _read_json(os.path.join(run_dir, METADATA_FILE))
    metadata = metadata_file.get("metadata")
    trace, complete, problem, run_metadata = _core.read_capture(capture_path, _with_flops(info))
    if "config" not in info or metadata is None:  # the process did not stop: the capture says how it ran
        described = _RunDescription(run_metadata)
        info = {**described.info, **info}
        metadata = described.user_metadata if metadata is None else metadata
        if _with_flops(info):
            trace, complete, problem, _ = _core.read_capture(capture_path, True)
    return _CapturedRun(trace, complete, problem, info, metadata, metadata_file.get("environment_variables"))


def build_database(run_dir: str) -> str:
    """Write the database of a run directory from its capture, whatever the run's export_type
    (the analyses read it); returns its path. Raises ``FileNotFoundError`` without a capture,
    ``OSError``/``ValueError`` when the capture cannot be read or the database written."""
    if not os.path.isfile(os.path.join(run_dir, CAPTURE_FILE)):
        raise FileNotFoundError(f"{run_dir} has no capture ({CAPTURE_FILE}) to build its database from")
    run = _read_captured_run(run_dir)
    return write_database(run.trace, run_dir, run.metadata_items, int(run.info.get("rank", 0)),
                          int(run.info.get("world_size", 1)), str(run.info.get("backend", "")),
                          run.info.get("config", {}), run.environment)


def _analyse(run_dir: str, data_simplification: Optional[bool]) -> AnalyseResult:
    remove_run_temporaries(run_dir)  # what an earlier, killed analyse left
    run = _read_captured_run(run_dir)
    info, trace = run.info, run.trace
    warning = "" if run.complete else f"{run.problem}; {_last_complete_step(trace)}"
    worker_name = info.get("worker_name") or _worker_name_of(run_dir)
    trace_file = trace_file_name(run_dir, worker_name, info.get("use_gzip") is True)
    remove_capture = data_simplification
    if remove_capture is None:
        remove_capture = bool(info.get("config", {}).get("experimental_config", {}).get("data_simplification", False))
    # A writer that had created the capture but not yet locked it when it was first looked at (a
    # few microseconds) holds it once it has been read: it stays.
    remove_capture = remove_capture and not _core.capture_writer_pid(os.path.join(run_dir, CAPTURE_FILE))
    # Without the capture, what the Chrome trace cannot carry lives on in the database alone.
    write_outputs(trace, run_dir, trace_file, run.metadata_items, int(info.get("rank", 0)),
                  int(info.get("world_size", 1)), str(info.get("backend", "")), info.get("config", {}),
                  run.environment, with_database=remove_capture and records_beyond_trace(info.get("config", {})))
    info.update({
        "worker_name": worker_name,
        "trace_stats": trace.stats,
        "trace_file": os.path.join("PERFPROF_OUTPUT", trace_file),
        "capture_file": None if remove_capture else CAPTURE_FILE,
        "capture_complete": run.complete,
    })
    write_json(os.path.join(run_dir, INFO_FILE), info)
    if remove_capture:
        os.remove(os.path.join(run_dir, CAPTURE_FILE))
    written = os.path.join(run_dir, "PERFPROF_OUTPUT", trace_file)
    return AnalyseResult(run_dir, True, f"wrote {written}", warning, written)


def _with_flops(info: Dict[str, Any]) -> bool:
    return bool(info.get("config", {}).get("with_flops", False))


class _RunDescription:
    """What a capture says of its run (written when recording began): perfprof's entries as the
    run directory's profiler_info.json fields (config, rank, world_size, backend), the user's as
    metadata. An entry added again replaces the earlier one."""

    def __init__(self, run_metadata: List[Tuple[str, str, bool]]) -> None:
        own: Dict[str, Any] = {}
        self.user_metadata: Dict[str, Any] = {}
        for key, text, from_user in run_metadata:
            try:
                value = json.loads(text)
            except ValueError:
                continue  # not JSON (perfprof writes JSON only): left out rather than failing the run
            (self.user_metadata if from_user else own)[key] = value
        self.info: Dict[str, Any] = {}
        if isinstance(own.get("config"), dict):
            self.info["config"] = own["config"]
        if isinstance(own.get("trace_id"), str):
            self.info["trace_id"] = own["trace_id"]
        if isinstance(own.get("distributed"), dict):
            self.info.update({key: own["distributed"][key] for key in ("rank", "world_size", "backend")
                              if key in own["distributed"]})


def _read_json(path: str) -> Dict[str, Any]:
    """A run directory's JSON description, or {} when the run left none (killed early)."""
    try:
        with open(path, encoding="utf-8") as file:
            value = json.load(file)
    except FileNotFoundError:
        return {}
    except ValueError as error:
        raise ValueError(f"{path} is not valid JSON: {error}") from None
    return value if isinstance(value, dict) else {}


def _worker_name_of(run_dir: str) -> str:
    """``{worker_name}_{timestamp}_perfprof[_N]`` -> worker_name."""
    name = os.path.basename(os.path.normpath(run_dir))
    stem = name[:name.rfind(RUN_DIR_SUFFIX)] if RUN_DIR_SUFFIX in name else name
    return stem.rsplit("_", 1)[0] if "_" in stem else stem


def _last_complete_step(trace: Any) -> str:
    finished = [number for number, done in trace.steps() if done]
    return f"the last complete step is ProfilerStep#{finished[-1]}" if finished else "no step was completed"
