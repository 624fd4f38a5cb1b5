"""The merged trace of a cluster analysis (``perfprof cluster --merge-trace``): every rank's
Chrome trace in one file, for Perfetto UI and chrome://tracing.

* **Processes.** Each (rank, process of its trace) becomes a process of its own, numbered
  ``rank * 1000 + k``: k = 0 for the rank's host process, then its GPUs (a torch trace numbers
  GPU processes by device index, which every rank shares) in device order. They are named
  "rank N" and "rank N: GPU d" (the trace's own names after the colon) and sorted by that number,
  so the ranks come in order, each with its host first. Threads keep their names.
* **Ids.** Flow (``s``, ``t``, ``f``) and async (``b``, ``n``, ``e``) events pair by ``id`` within
  one trace; each rank's ids are offset by ``rank * 10**12`` (text ids get a ``rank<N>:``
  prefix) so that no two ranks' pairs meet.
* **Time.** Each trace's times are shifted onto the first rank's ``baseTimeNanoseconds``: the
  ranks line up as their hosts' Unix clocks did (on one machine, to within the few nanoseconds
  by which each process's clock offset differs; across machines, as well as those clocks were
  synchronised).

Written one rank at a time: the memory is that of the largest rank's trace.
"""
from __future__ import annotations

import gzip
import json
import os
from dataclasses import dataclass, field
from typing import IO, Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from .._files import replaced_whole
from .._run_directory import OUTPUT_DIR

#: Processes a rank may have (its host, then one per GPU).
PROCESSES_PER_RANK = 1000
#: The offset of each rank's flow and async ids.
IDS_PER_RANK = 10 ** 12
_PAIRED = frozenset("stfbne")  # phases whose events pair by id
_PROCESS_METADATA = frozenset(("process_name", "process_labels", "process_sort_index"))
# The tracks of Kineto's window markers ("PyTorch Profiler (0)" on "Spans", "Iteration Start:
# PyTorch Profiler", "Record Window End"), which end every rank's trace: each marks its own file's
# window, not work of the job, and the merged trace (one window over every rank) leaves them out.
_WINDOW_MARKER_PIDS = frozenset(("Spans", "Traces", ""))


@dataclass(frozen=True)
class MergedTrace:
    """What :func:`write_merged_trace` wrote."""

    path: str
    ranks: int  # ranks with at least one trace merged
    events: int  # trace events written, metadata included
    skipped: List[str] = field(default_factory=list)  # "rank N (run_dir): why", per run left out


def write_merged_trace(ranks: Sequence[Tuple[int, str]], path: str,
                       on_rank: Optional[Callable[[int], None]] = None) -> MergedTrace:
    """Merge the Chrome traces of `ranks`, (rank, run directory) pairs (a rank may come several
    times: one run directory per recorded cycle), into `path` (``.json``, or ``.json.gz``
    compressed). A run directory without a trace gets it built from its capture first, as
    ``perfprof analyse`` does; one that has neither, or an unreadable trace, is left out and named
    in the result. `on_rank` is called with each rank once its traces are written.

    Raises ``OSError`` naming `path` when it cannot be written; nothing is left there then.
    """
    try:
        with replaced_whole(path, "wb") as raw:
            return _write(ranks, raw, path, on_rank)
    except OSError as error:
        raise OSError(f"cannot write the merged trace {path}: {error.strerror or error}") from error


def _write(ranks: Sequence[Tuple[int, str]], raw: IO[bytes], path: str,
           on_rank: Optional[Callable[[int], None]]) -> MergedTrace:
    stream: Union[IO[bytes], gzip.GzipFile] = raw
    if path.endswith(".gz"):
        stream = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1)
    writer = _EventWriter(stream)
    skipped: List[str] = []
    merged: Dict[int, _RankProcesses] = {}
    base_ns: Optional[int] = None
    distributed: List[Dict[str, Any]] = []
    for rank, run_dir in ranks:
        trace, why = _read_trace(run_dir)
        if trace is None:
            skipped.append(f"rank {rank} ({run_dir}): {why}")
            continue
        trace_base = int(trace.get("baseTimeNanoseconds") or 0)
        base_ns = trace_base if base_ns is None else base_ns
        processes = merged.setdefault(rank, _RankProcesses(rank))
        for event in _rank_events(trace["traceEvents"], rank, processes, (trace_base - base_ns) / 1000):
            writer.write(event)
        if trace.get("distributedInfo"):
            distributed.append(dict(trace["distributedInfo"], run_dir=run_dir))
        if on_rank:
            on_rank(rank)
    for processes in merged.values():
        for event in processes.metadata():
            writer.write(event)
    writer.close({"displayTimeUnit": "ms", "baseTimeNanoseconds": base_ns or 0,
                  "distributedInfo": {"ranks": distributed}})
    if stream is not raw:
        stream.close()
    return MergedTrace(path, len(merged), writer.count, skipped)


def _read_trace(run_dir: str) -> Tuple[Optional[Dict[str, Any]], str]:
    """The run directory's Chrome trace, built from its capture if it has none; else why not
    (a run directory that cannot be read is this rank's problem, not the merged file's)."""
    try:
        return _read_or_build_trace(run_dir)
    except OSError as error:
        return None, f"cannot be read: {error}"


def _read_or_build_trace(run_dir: str) -> Tuple[Optional[Dict[str, Any]], str]:
    trace_file = _trace_file(run_dir)
    if trace_file is None and os.path.isfile(os.path.join(run_dir, "capture.ppcap")):
        from .._analyse import analyse_run_dir

        built = analyse_run_dir(run_dir)
        if not built.ok:
            return None, f"its trace could not be built from its capture: {built.message}"
        trace_file = _trace_file(run_dir)
    if trace_file is None:
        return None, f"no Chrome trace in {OUTPUT_DIR}/ and no capture to build one from"
    try:
        opener = gzip.open if trace_file.endswith(".gz") else open
        with opener(trace_file, "rt", encoding="utf-8") as file:
            trace = json.load(file)
        if not isinstance(trace.get("traceEvents"), list):
            return None, f"{trace_file} has no traceEvents list"
        return trace, ""
    except (OSError, ValueError, AttributeError) as error:
        return None, f"{trace_file} is not a readable trace: {error}"


def _trace_file(run_dir: str) -> Optional[str]:
    folder = os.path.join(run_dir, OUTPUT_DIR)
    if not os.path.isdir(folder):
        return None
    found = sorted(name for name in os.listdir(folder) if name.endswith((".pt.trace.json", ".pt.trace.json.gz")))
    return os.path.join(folder, found[0]) if found else None


class _RankProcesses:
    """A rank's processes: the number each of its trace's processes gets, and their names."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.numbers: Dict[Any, int] = {}
        self.names: Dict[int, str] = {}

    def learn(self, events: List[Dict[str, Any]]) -> None:
        """Number the processes of one trace of the rank: the host's first, then by pid (the
        GPUs' device indexes). A process already known from the rank's other traces keeps its number."""
        names = {event.get("pid"): (event.get("args") or {}).get("name", "") for event in events
                 if event.get("ph") == "M" and event.get("name") == "process_name"}
        pids = {event.get("pid") for event in events if "pid" in event}
        def order(pid: Any) -> Tuple[bool, int, str]:
            return str(names.get(pid, "")).startswith("GPU"), pid if isinstance(pid, int) else 0, str(pid)

        for pid in sorted(pids - set(self.numbers), key=order):
            number = self.rank * PROCESSES_PER_RANK + len(self.numbers)
            self.numbers[pid] = number
            own = names.get(pid, "")
            self.names[number] = f"rank {self.rank}: {own}" if str(own).startswith("GPU") else f"rank {self.rank}"

    def metadata(self) -> Iterator[Dict[str, Any]]:
        """The name and sort index of each process."""
        for number, name in self.names.items():
            yield {"ph": "M", "name": "process_name", "pid": number, "tid": 0, "args": {"name": name}}
            yield {"ph": "M", "name": "process_sort_index", "pid": number, "tid": 0, "args": {"sort_index": number}}


def _rank_events(events: List[Dict[str, Any]], rank: int, processes: _RankProcesses,
                 shift_us: float) -> Iterator[Dict[str, Any]]:
    """The events of one trace of `rank` as the merged trace has them (the process metadata
    left out: the merged trace names its processes itself; and the window markers)."""
    events = [event for event in events if event.get("pid") not in _WINDOW_MARKER_PIDS]
    processes.learn(events)
    for event in events:
        if event.get("ph") == "M" and event.get("name") in _PROCESS_METADATA:
            continue
        if "pid" in event:
            event["pid"] = processes.numbers[event["pid"]]
        if event.get("ph") in _PAIRED and "id" in event:
            event["id"] = _rank_id(event["id"], rank)
        if shift_us and isinstance(event.get("ts"), (int, float)):
            event["ts"] += shift_us
        yield event


def _rank_id(event_id: Any, rank: int) -> Any:
    """A pairing id made unique to `rank`: numbers offset by ``rank * 10**12``, texts prefixed."""
    if isinstance(event_id, int) and not isinstance(event_id, bool):
        return event_id + rank * IDS_PER_RANK
    return f"rank{rank}:{event_id}"


class _EventWriter:
    """Writes ``{"traceEvents": [...], ...}`` one event at a time, the events first (Perfetto
    reads a trace whose traceEvents come first as it streams)."""

    def __init__(self, stream: Union[IO[bytes], gzip.GzipFile]) -> None:
        self.stream = stream
        self.count = 0
        stream.write(b'{"traceEvents": [\n')

    def write(self, event: Dict[str, Any]) -> None:
        self.stream.write((",\n" if self.count else "").encode() + json.dumps(event, separators=(",", ":")).encode())
        self.count += 1

    def close(self, fields: Dict[str, Any]) -> None:
        tail = "".join(f",\n{json.dumps(name)}: {json.dumps(value)}" for name, value in fields.items())
        self.stream.write(f"\n]{tail}}}\n".encode())
