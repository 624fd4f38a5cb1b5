"""``perfprof sweep``: a script over a grid of configurations, each run profiled in a child process."""
from __future__ import annotations

import os
import shlex
import sys
from typing import TYPE_CHECKING, List, Optional

import click

from . import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from ..experiments import RunRecord


@click.command(context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
@click.option("-g", "--grid", "grids", multiple=True, metavar="NAME=V1,V2",
              help="A dimension of the grid (repeatable): the script gets NAME as an environment variable, "
                   "and {NAME} in its arguments is replaced by the value.")
@click.option("-n", "--repeat", "repeats", type=click.IntRange(min=1), default=1, show_default=True,
              help="Runs of each configuration.")
@click.option("-o", "--output-dir", default="perfprof_sweep", show_default=True, type=click.Path(file_okay=False),
              help="Where results.jsonl, the runs (runs/) and their logs (logs/) go.")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=None, metavar="S",
              help="Stop a run after S seconds (TIMEOUT) [default: no limit].")
@click.option("--filter", "filter_text", default=None, metavar="REGEX",
              help="Run only the configurations whose text (NAME=V,NAME=V) REGEX matches (re.search).")
@click.option("--resume/--no-resume", default=True, show_default=True,
              help="Skip the runs results.jsonl already has (same configuration and repeat), or run everything "
                   "again, appending (earlier lines stay: aggregate reads them as an earlier sweep).")
@click.option("--warmup", "warmup_steps", type=click.IntRange(min=0), default=1, show_default=True,
              help="First steps of each run counted as its start-up, not as steps (perfprof run --warmup-steps).")
@click.option("--verify", is_flag=True,
              help="Keep each run's outputs (perfprof.experiments.record_output in the script) for perfprof "
                   "aggregate to compare with its baseline's.")
@click.option("--run-options", default="", metavar="OPTIONS",
              help="More `perfprof run` options for every run, as one string "
                   "(\"--profile-memory --schedule wait=1,warmup=1,active=5\").")
@click.option("-m", "module", metavar="MODULE", default=None, help="Run a module, as `python -m MODULE`.")
@click.argument("target_and_args", nargs=-1, type=click.UNPROCESSED)
def sweep(grids: List[str], repeats: int, output_dir: str, timeout_s: Optional[float], filter_text: Optional[str],
          resume: bool, warmup_steps: int, verify: bool, run_options: str, module: Optional[str],
          target_and_args: List[str]) -> None:
    """Run SCRIPT (or -m MODULE) with ARGS under `perfprof run` once per configuration of the grid,
    --repeat times each, and append one line per run to OUTPUT_DIR/results.jsonl: configuration,
    status (PASS, FAIL, TIMEOUT, SKIP), step times and their statistics (the run's step_statistics,
    warm-up steps left out), compile time, peak memory and the run directory (docs/experiments.md).

    \b
    perfprof sweep --grid BATCH=8,32 --grid COMPILE=0,1 --repeat 2 -o sweep train.py --batch {BATCH}
    perfprof aggregate sweep/results.jsonl --baseline COMPILE=0

    A script exits with 77 to skip a configuration it does not support. Exits 1 when some run
    failed or timed out (the others still ran), else 0.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ..experiments._grid import parse_grid
    from ..experiments._sweep import Job, SweepPlan, compiled_filter, plan_jobs, sweep as run_sweep

    if module is None and not target_and_args:
        raise click.UsageError("give a SCRIPT to run, or -m MODULE")
    try:
        plan = SweepPlan(target=module or target_and_args[0],
                         args=list(target_and_args if module else target_and_args[1:]),
                         output_dir=output_dir, dimensions=parse_grid(grids), repeats=repeats,
                         is_module=module is not None, timeout_s=timeout_s, filter=compiled_filter(filter_text),
                         resume=resume, warmup_steps=warmup_steps, verify=verify,
                         run_options=shlex.split(run_options))
        jobs, resumed = plan_jobs(plan)
    except ValueError as error:
        raise click.UsageError(str(error)) from None
    if module is None and not os.path.isfile(plan.target):
        raise click.UsageError(f"no such script: {plan.target}")
    console = Console(stderr=True)
    if resumed:
        console.print(f"resume: {resumed} run(s) already in {plan.results_path}", highlight=False)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("sweep", total=len(jobs))

        def started(job: Job) -> None:
            progress.update(task, description=f"running {job.name}")

        def done(record: RunRecord) -> None:
            progress.advance(task)
            console.print(_line(record), highlight=False, soft_wrap=True)

        outcome = run_sweep(plan, on_start=started, on_done=done)
    counts = ", ".join(f"{outcome.count(status)} {status}" for status in ("PASS", "FAIL", "TIMEOUT", "SKIP"))
    console.print(f"{len(outcome.records)} run(s): {counts}; results: {plan.results_path}", highlight=False)
    sys.exit(EXIT_FAILED if outcome.count("FAIL") or outcome.count("TIMEOUT") else EXIT_OK)


def _line(record: "RunRecord") -> str:
    """One finished run as the sweep reports it."""
    from ..experiments._sweep import Job

    name = Job(record.config, record.repeat).name
    colour = {"PASS": "green", "SKIP": "yellow"}.get(record.status, "red")
    if record.status == "PASS" and record.mean_step_ns is not None:
        detail = f"mean step {record.mean_step_ns / 1e6:.3f} ms over {len(record.step_times_ns)} step(s)"
    else:
        detail = (record.error or "").splitlines()[-1] if record.error else ""
    return f"[{colour}]{record.status}[/{colour}] {name}: {detail}"
