"""``perfprof sweep``: run a script under ``perfprof run`` once per configuration of a grid, N
times each, and append what each run measured to ``results.jsonl`` (docs/experiments.md).

Each run is a child process (a crash, a leak or a hang stays in it), given its configuration as
environment variables and ``{NAME}`` substitutions in its arguments, writing its run directory,
its output log and a run report (``perfprof run --run-report``) under the sweep's folder.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from typing import Any, Callable, Dict, List, Optional, Pattern, Sequence, Set, Tuple

from .._files import make_directory, replaced_at_start
from .._messages import cut
from ._grid import Dimension, configurations, substituted
from ._outputs import OUTPUTS_ENV
from ._results import (FAIL, PASS, RESULTS_FILE, SKIP, TIMEOUT, RunRecord, append_record, config_text,
                       configuration_fingerprint, read_results)

#: A script exits with this code to skip a configuration it does not support (automake's
#: convention for a skipped test).
EXIT_SKIP = 77

#: The folder of a run's recorded outputs, in its runs/ folder (sweep --verify).
OUTPUTS_FOLDER = "outputs"

#: Lines of a failed run's output kept in its record.
ERROR_LINES = 20

#: An argument a shell takes as one word as it is ({NAME} placeholders included).
_PLAIN_WORD = re.compile(r"[\w@%+=:,./{}-]+\Z")


@dataclasses.dataclass(frozen=True)
class SweepPlan:
    """What to sweep and how."""

    target: str                    # the script's path, or the module's name (is_module)
    args: List[str]                # its arguments, with {NAME} placeholders
    output_dir: str
    dimensions: List[Dimension] = dataclasses.field(default_factory=list)
    repeats: int = 1
    is_module: bool = False
    timeout_s: Optional[float] = None
    filter: Optional[Pattern[str]] = None  # run only the configurations whose text it matches
    resume: bool = True
    warmup_steps: int = 1
    verify: bool = False           # give each run a folder for its outputs (record_output)
    run_options: List[str] = dataclasses.field(default_factory=list)  # more `perfprof run` options

    @property
    def workload(self) -> str:
        """The command as the results name it: ``train.py --batch {batch}``, ``-m pkg.train``
        (an argument is quoted as a shell would need only when it holds more than a word)."""
        words = (["-m"] if self.is_module else []) + [self.target, *self.args]
        return " ".join(word if _PLAIN_WORD.match(word) else shlex.quote(word) for word in words)

    @property
    def results_path(self) -> str:
        return os.path.join(self.output_dir, RESULTS_FILE)


@dataclasses.dataclass(frozen=True)
class Job:
    """One run of one configuration."""

    config: Dict[str, str]
    repeat: int

    @property
    def name(self) -> str:
        return f"{config_text(self.config)} #{self.repeat + 1}"


@dataclasses.dataclass
class SweepOutcome:
    """What a sweep did: the records it appended, and the runs resume left alone."""

    records: List[RunRecord] = dataclasses.field(default_factory=list)
    resumed: int = 0

    def count(self, status: str) -> int:
        return sum(record.status == status for record in self.records)


def plan_jobs(plan: SweepPlan) -> Tuple[List[Job], int]:
    """The runs to do, in order, and how many of the plan's runs resume finds already done (a
    record with the configuration's fingerprint and repeat number in the results file)."""
    done: Set[Tuple[str, int]] = set()
    if plan.resume and os.path.isfile(plan.results_path):
        done = {(record.fingerprint, record.repeat) for record in read_results([plan.results_path])}
    jobs, resumed = [], 0
    for config in configurations(plan.dimensions):
        if plan.filter is not None and not plan.filter.search(config_text(config)):
            continue
        fingerprint = configuration_fingerprint(plan.workload, config)
        for repeat in range(plan.repeats):
            if (fingerprint, repeat) in done:
                resumed += 1
            else:
                jobs.append(Job(config, repeat))
    return jobs, resumed


def sweep(plan: SweepPlan, on_start: Optional[Callable[[Job], None]] = None,
          on_done: Optional[Callable[[RunRecord], None]] = None) -> SweepOutcome:
    """Run every job of `plan` not done yet, one after the other, appending a record each to
    ``results.jsonl`` as it ends (a sweep stopped halfway keeps what it finished)."""
    jobs, resumed = plan_jobs(plan)
    outcome = SweepOutcome(resumed=resumed)
    timestamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    for job in jobs:
        if on_start:
            on_start(job)
        record = run_job(plan, job, timestamp)
        append_record(plan.results_path, record)
        outcome.records.append(record)
        if on_done:
            on_done(record)
    return outcome


def run_job(plan: SweepPlan, job: Job, timestamp: str) -> RunRecord:
    """Run one job in a child ``perfprof run`` and measure it."""
    fingerprint = configuration_fingerprint(plan.workload, job.config)
    run_name = f"{fingerprint}-r{job.repeat}"
    runs_dir = os.path.join(plan.output_dir, "runs", run_name)
    log_path = os.path.join(plan.output_dir, "logs", f"{run_name}.log")
    report_path = os.path.join(runs_dir, "run_report.json")
    make_directory(runs_dir)
    make_directory(os.path.dirname(log_path))
    base = RunRecord(workload=plan.workload, config=job.config, timestamp=timestamp, repeat=job.repeat,
                     status=FAIL, warmup_steps=plan.warmup_steps, fingerprint=fingerprint)
    outputs_dir = os.path.abspath(os.path.join(runs_dir, OUTPUTS_FOLDER)) if plan.verify else None
    started = time.monotonic()
    code = _run_child(_child_command(plan, job, runs_dir, report_path), _child_environment(job.config, outputs_dir),
                      log_path, plan.timeout_s)
    wall_s = round(time.monotonic() - started, 3)
    if code is None:
        return dataclasses.replace(base, status=TIMEOUT, error=f"timed out after {plan.timeout_s:g} s "
                                   f"(log: {log_path})", wall_s=wall_s)
    if code == EXIT_SKIP:
        return dataclasses.replace(base, status=SKIP, error=f"the script skipped this configuration (exit code "
                                   f"{EXIT_SKIP}): {_last_lines(log_path, 1)}", wall_s=wall_s)
    if code != 0:
        return dataclasses.replace(base, status=FAIL, error=f"exit code {code}:\n{_last_lines(log_path, ERROR_LINES)}",
                                   wall_s=wall_s)
    measured = _measured(base, report_path, log_path, wall_s)
    recorded = outputs_dir is not None and os.path.isdir(outputs_dir) and bool(os.listdir(outputs_dir))
    return dataclasses.replace(measured, outputs_dir=outputs_dir) if recorded else measured


def _child_command(plan: SweepPlan, job: Job, runs_dir: str, report_path: str) -> List[str]:
    from ..analysis._run_labels import SWEEP_CONFIG_KEY, SWEEP_REPEAT_KEY

    target = ["-m", plan.target] if plan.is_module else [plan.target]
    warmup = ["--warmup-steps", str(plan.warmup_steps)] if plan.warmup_steps else []
    # The run says what it is, so that plots and compare name it by its configuration.
    described = ["--metadata", f"{SWEEP_CONFIG_KEY}={config_text(job.config)}",
                 "--metadata", f"{SWEEP_REPEAT_KEY}={job.repeat}"]
    return [sys.executable, "-m", "perfprof", "run", "--export-type", "text,db", "-o", runs_dir,
            "--run-report", report_path, *warmup, *described, *plan.run_options, *target,
            *substituted(plan.args, job.config)]


def _child_environment(config: Dict[str, str], outputs_dir: Optional[str]) -> Dict[str, str]:
    outputs = {OUTPUTS_ENV: outputs_dir} if outputs_dir else {}
    return {**os.environ, **config, **outputs}


def _run_child(command: Sequence[str], environment: Dict[str, str], log_path: str,
               timeout_s: Optional[float]) -> Optional[int]:
    """Run `command` with its output in `log_path`; its exit code, or None when it ran past
    `timeout_s` and was killed with everything it started (its own process group)."""
    with replaced_at_start(log_path) as log:
        log.write(f"$ {shlex.join(command)}\n")
        log.flush()
        child = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                 start_new_session=True)
        try:
            return child.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            return None
        except BaseException:  # Ctrl-C: the child goes with the sweep
            os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise


def _last_lines(path: str, count: int) -> str:
    """The last `count` lines the script wrote (the log's command line and `perfprof run`'s own
    "perfprof: ..." lines left out), each cut to a readable length (the log keeps them whole)."""
    with open(path, encoding="utf-8", errors="replace") as file:
        lines = collections.deque((line.rstrip("\n") for number, line in enumerate(file)
                                   if number > 0 and line.strip() and not line.startswith("perfprof: ")), count)
    return "\n".join(cut(line) for line in lines)


def _measured(base: RunRecord, report_path: str, log_path: str, wall_s: float) -> RunRecord:
    """The record of a run that exited 0: its steps and their statistics from its database, what
    its report says."""
    try:
        with open(report_path, encoding="utf-8") as file:
            report = json.load(file)
    except (OSError, ValueError) as error:
        return dataclasses.replace(base, status=FAIL, error=f"no run report ({error}); log: {log_path}", wall_s=wall_s)
    run_dirs = list(report.get("run_dirs") or [])
    measured = dataclasses.replace(
        base, status=PASS, **(_step_fields(run_dirs[0]) if run_dirs else {}),
        peak_device_bytes=report.get("peak_device_bytes"), peak_host_bytes=report.get("peak_host_bytes"),
        run_dir=run_dirs[0] if run_dirs else None, wall_s=wall_s)
    if not measured.step_times_ns:
        return dataclasses.replace(measured, status=SKIP, error="the run recorded no step (no optimizer step; with "
                                   "--steps-on explicit, no perfprof.dynamic_profile.step() call)")
    return measured


def _step_fields(run_dir: str) -> Dict[str, Any]:
    """A record's step fields from its run directory's database: the steps (``step_times``) and
    their ``step_statistics``, as every other output reads them (docs/analysis.md, "Steps")."""
    from ..analysis import open_run, step_statistics, step_times

    with open_run(run_dir) as run:
        steps = [int(row["duration_ns"]) for row in step_times(run)]
        summary = step_statistics(run).to_dicts()
    if not summary:
        return {"step_times_ns": steps}
    (statistics,) = summary
    return {"step_times_ns": steps, **{field: statistics[column] for field, column in STEP_STATISTICS_FIELDS.items()}}


#: RunRecord's fields taken from step_statistics, by the column they are.
STEP_STATISTICS_FIELDS = {
    "mean_step_ns": "avg_ns", "median_step_ns": "median_ns", "p5_step_ns": "p5_ns", "p95_step_ns": "p95_ns",
    "std_step_ns": "stddev_ns", "startup_ns": "startup_ns", "tail_ns": "tail_ns",
    "compile_time_ns": "compile_ns", "compile_source": "compile_source",
}


def compiled_filter(text: Optional[str]) -> Optional[Pattern[str]]:
    """``--filter``'s regular expression; ``ValueError`` naming it when it does not compile."""
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as error:
        raise ValueError(f"--filter {text!r} is not a regular expression: {error}") from None
