"""Offline parsing: run directories' captures turned into their traces and tables, later and
elsewhere than the profiled job (``perfprof analyse``, :func:`perfprof.analyse`).

A run directory written with ``tensorboard_trace_handler(..., analyse_flag=False)``, or one whose
process was killed while recording, holds a capture (``capture.ppcap``) and no trace. Analysing
it writes what the profiled process would have written (``PERFPROF_OUTPUT/``: the Chrome trace,
the memory tables) from the capture alone: the same bytes as the in-process path. A capture cut
short is read up to its last whole chunk, with a warning naming the last complete step.
"""
from __future__ import annotations

import concurrent.futures
import json
import multiprocessing
import os
from dataclasses import dataclass
from typing import Any, Callable, Dict, Iterable, List, Optional, Tuple

from . import _core
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
) -> List[AnalyseResult]:
    """Write the traces and tables of every run directory at or under `profiler_path` (one path
    or several) from their captures.

    Args:
        max_process_number: run directories analysed at once, each in its own process (default:
            the number of CPUs, at most the number of directories).
        data_simplification: remove each capture once its outputs are written (True) or keep it
            (False). Default: as the run was configured (``ExperimentalConfig.data_simplification``),
            read from the capture when the process was killed before writing its run directory's
            JSON files; kept when neither says (a capture of an older perfprof).
        on_result: called with each directory's result as it completes (progress reporting).

    Returns one :class:`AnalyseResult` per run directory; a directory that fails does not stop
    the others. Raises ``FileNotFoundError`` when a path does not exist, ``ValueError`` when a
    path holds no capture at all, ``TypeError``/``ValueError`` for bad arguments.
    """
    paths = [profiler_path] if isinstance(profiler_path, (str, os.PathLike)) else list(profiler_path)
    if not paths:
        raise ValueError("analyse: 'profiler_path' names no directory")
    if max_process_number is not None and (not isinstance(max_process_number, int) or
                                           isinstance(max_process_number, bool) or max_process_number < 1):
        raise ValueError(f"analyse: 'max_process_number' must be an int >= 1, got {max_process_number!r}")
    if data_simplification is not None and not isinstance(data_simplification, bool):
        raise TypeError(f"analyse: 'data_simplification' must be a bool or None, got {type(data_simplification).__name__}")
    run_dirs: List[str] = []
    for path in paths:
        if not os.path.exists(path):
            raise FileNotFoundError(f"analyse: {os.fspath(path)!r} does not exist")
        found = find_run_dirs(path)
        if not found:
            raise ValueError(f"analyse: no capture ({CAPTURE_FILE}) at or under {os.fspath(path)!r}")
        run_dirs += found
    workers = min(len(run_dirs), max_process_number or os.cpu_count() or 1)
    if workers > 1:
        return _analyse_in_processes(run_dirs, workers, data_simplification, on_result)
    results = []
    for run_dir in run_dirs:
        results.append(analyse_run_dir(run_dir, data_simplification))
        if on_result:  # as each completes, as from the processes
            on_result(results[-1])
    return results


def _analyse_in_processes(run_dirs: List[str], workers: int, data_simplification: Optional[bool],
                          on_result: Optional[Callable[[AnalyseResult], None]]) -> List[AnalyseResult]:
    # fork: the children run perfprof's own code on files; nothing of the parent's state matters.
    context = multiprocessing.get_context("fork")
    by_dir: Dict[str, AnalyseResult] = {}
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {pool.submit(analyse_run_dir, run_dir, data_simplification): run_dir for run_dir in run_dirs}
        for future in concurrent.futures.as_completed(futures):
            run_dir = futures[future]
            try:
                result = future.result()
            except Exception as error:  # the worker itself died (killed, out of memory)
                result = AnalyseResult(run_dir, False, f"the analysing process failed: {error!r}")
            by_dir[run_dir] = result
            if on_result:
                on_result(result)
    return [by_dir[run_dir] for run_dir in run_dirs]


def analyse_run_dir(run_dir: str, data_simplification: Optional[bool] = None) -> AnalyseResult:
    """Analyse one run directory (see :func:`analyse`); never raises for the directory's content."""
    try:
        return _analyse(run_dir, data_simplification)
    except (OSError, ValueError) as error:
        return AnalyseResult(run_dir, False, str(error))


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
