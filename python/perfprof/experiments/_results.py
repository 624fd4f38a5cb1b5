"""The sweep's results file: one JSON object per line (JSON Lines), one line per run of one
configuration. ``perfprof sweep`` appends them; ``perfprof aggregate`` and ``perfprof compare``
read them. :class:`RunRecord` is the one definition of a line's fields (docs/experiments.md).
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from typing import Any, Dict, Iterable, List, Optional

from .._files import appended, make_directory
from .._messages import one_line

#: The results file a sweep writes into its output directory.
RESULTS_FILE = "results.jsonl"

#: A run's status.
PASS, FAIL, TIMEOUT, SKIP = "PASS", "FAIL", "TIMEOUT", "SKIP"
STATUSES = (PASS, FAIL, TIMEOUT, SKIP)


@dataclasses.dataclass(frozen=True)
class RunRecord:
    """One run of one sweep configuration: a line of results.jsonl.

    Times are nanoseconds, memory bytes; a value that was not measured is None (JSON null).
    """

    workload: str                  # the script (or -m module) and its arguments, before {NAME} substitution
    config: Dict[str, str]         # the grid's values for this run, by grid name
    timestamp: str                 # when the sweep started (ISO 8601, UTC): the runs of one sweep share it
    repeat: int                    # 0 .. repeats - 1
    status: str                    # PASS, FAIL, TIMEOUT or SKIP
    error: Optional[str] = None    # FAIL: the last lines the run wrote to stderr; TIMEOUT, SKIP: why
    # The steps and their statistics are the run directory's step_times and step_statistics
    # (docs/analysis.md, "Steps"): what summary, compare and the plots read of the same run.
    step_times_ns: List[int] = dataclasses.field(default_factory=list)  # every step, in order
    warmup_steps: int = 0          # steps before them counted as start-up (perfprof run --warmup-steps)
    mean_step_ns: Optional[float] = None
    median_step_ns: Optional[float] = None
    p5_step_ns: Optional[float] = None
    p95_step_ns: Optional[float] = None
    std_step_ns: Optional[float] = None      # sample standard deviation; None for fewer than two steps
    startup_ns: Optional[int] = None         # from the collection's start to the first step
    tail_ns: Optional[int] = None            # the stretch after the last step boundary (step_statistics)
    compile_time_ns: Optional[float] = None  # TorchDynamo's compile time, or the first step's excess
    compile_source: Optional[str] = None     # "dynamo" or "first_step_excess": what compile_time_ns is
    peak_device_bytes: Optional[int] = None  # most CUDA memory allocated at once (any device)
    peak_host_bytes: Optional[int] = None    # the run's peak resident set
    run_dir: Optional[str] = None            # the run directory perfprof wrote
    outputs_dir: Optional[str] = None        # sweep --verify: the folder of its recorded outputs (absolute)
    wall_s: Optional[float] = None           # how long the run's process took
    fingerprint: str = ""                    # configuration_fingerprint(workload, config); filled in when empty

    def __post_init__(self) -> None:
        if not self.fingerprint:
            object.__setattr__(self, "fingerprint", configuration_fingerprint(self.workload, self.config))

    def to_json(self) -> str:
        """The record as one line of results.jsonl (no newline), fields in the order above."""
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: Dict[str, Any]) -> "RunRecord":
        """A record from a parsed line; ``ValueError`` names a missing or wrongly typed field."""
        fields = {field.name: field for field in dataclasses.fields(cls)}
        for name in ("workload", "config", "timestamp", "repeat", "status"):
            if name not in data:
                raise ValueError(f"missing field {name!r}")
        if not isinstance(data["config"], dict):
            raise ValueError(f"'config' must be an object, got {type(data['config']).__name__}")
        if data["status"] not in STATUSES:
            raise ValueError(f"'status' must be one of {', '.join(STATUSES)}, got {data['status']!r}")
        if not isinstance(data["repeat"], int):
            raise ValueError(f"'repeat' must be an integer, got {data['repeat']!r}")
        known = {name: value for name, value in data.items() if name in fields}  # newer fields are ignored
        known["config"] = {str(key): str(value) for key, value in known["config"].items()}
        return cls(**known)


def configuration_fingerprint(workload: str, config: Dict[str, str]) -> str:
    """What identifies a configuration across sweeps: a hash of the workload and the grid values."""
    text = json.dumps({"workload": workload, "config": config}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def config_text(config: Dict[str, str]) -> str:
    """A configuration as people read it: ``batch=8,compile=1`` (grid order kept)."""
    return ",".join(f"{name}={value}" for name, value in config.items()) or "(no grid)"


def read_results(paths: Iterable[str]) -> List[RunRecord]:
    """Every record of the results files at `paths`, in file and line order. ``ValueError`` names
    the file and line of a line that is not a record; blank lines are skipped."""
    records = []
    for path in paths:
        with open(path, "rb") as file:  # decoded line by line: a bad byte is named by its line
            for number, raw in enumerate(file, 1):
                if not raw.strip():
                    continue
                try:
                    data = json.loads(raw.decode("utf-8"))
                    if not isinstance(data, dict):
                        raise ValueError("not a JSON object")
                    records.append(RunRecord.from_dict(data))
                except ValueError as error:
                    raise ValueError(f"{path}:{number}: not a sweep result: {one_line(str(error))}") from None
    return records


def append_record(path: str, record: RunRecord) -> None:
    """Append `record` to the results file at `path` (created with its folder if need be), flushed
    to disk so that a sweep killed later keeps it."""
    make_directory(os.path.dirname(os.path.abspath(path)), follow_link=True)
    with appended(path) as file:
        file.write(record.to_json() + "\n")
        file.flush()
        os.fsync(file.fileno())
