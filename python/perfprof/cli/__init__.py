"""The ``perfprof`` command (also ``python -m perfprof``).

Exit codes: 0 everything asked for was done; 1 some of it failed (each failure is named);
2 the command line was wrong (click's usage error). Output cut short by its reader (``perfprof
summary RUN | head``) is no failure: the command ends quietly with 0.
"""
from __future__ import annotations

import os
import sys
from typing import List, Optional

import click

from .._ranges import GC_THRESHOLD_MS, STEP_COUNT

EXIT_OK = 0
EXIT_FAILED = 1


class _Commands(click.Group):
    """The perfprof group: a reader that closed stdout early ends the command with exit code 0."""

    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            # click would exit 1, and Python's own flush of stdout at exit would print a traceback
            # and exit 120: stdout goes to /dev/null for the rest of the process instead.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
            ctx.exit(EXIT_OK)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="perfprof", prog_name="perfprof")
def main() -> None:
    """perfprof: profile a script (run) and what happens after a profiled run (analyse, summary, plot)."""
    from .._hints import use_command_line

    # What a run lacks is said as `perfprof run`'s flags while the command runs.
    click.get_current_context().call_on_close(use_command_line())


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, file_okay=False))
@click.option("-j", "--max-process-number", type=click.IntRange(min=1), default=None,
              help="Run directories analysed at once, each in its own process [default: CPUs].")
@click.option("--data-simplification/--keep-capture", default=None,
              help="Remove each capture once its outputs are written, or keep it "
                   "[default: as the run was configured, which the capture records; kept when nothing says].")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True, max=1e9), default=None,
              metavar="SECONDS", help="Seconds one run directory's analysis may take before it is killed and "
                                      "fails [default: 600 and 1 per MiB of its capture].")
@click.option("--memory-limit", "memory_limit_mb", type=click.IntRange(min=1, max=1 << 30), default=None,
              metavar="MIB", help="Memory one run directory's analysis may take; past it, it fails "
                                  "[default: 1024 and 8 times its capture's size, at most the machine's].")
def analyse(paths: List[str], max_process_number: Optional[int], data_simplification: Optional[bool],
            timeout_s: Optional[float], memory_limit_mb: Optional[int]) -> None:
    """Write the traces and tables of the run directories at or under PATHS from their captures.

    A run directory holds a capture (capture.ppcap) when it was written with
    tensorboard_trace_handler(..., analyse_flag=False), or when its process was killed while
    recording: then what was recorded up to the last whole step is analysed, with a warning.
    Each is analysed in a process of its own: one that crashes, hangs or runs out of memory fails
    alone (exit code 1). A capture a live process is still writing is skipped, untouched.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from .._analyse import AnalyseResult, analyse as analyse_paths, find_run_dirs

    console = Console(stderr=True)
    total = sum(len(find_run_dirs(path)) for path in paths)
    failures = 0
    with Progress(TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as progress:
        task = progress.add_task("analyse", total=total)

        def report(result: AnalyseResult) -> None:
            nonlocal failures
            progress.advance(task)
            if result.skipped:
                console.print(f"[yellow]skipped[/yellow] {result.run_dir}: {result.message}", highlight=False,
                              soft_wrap=True)
                return
            if not result.ok:
                failures += 1
                console.print(f"[red]failed[/red] {result.run_dir}: {result.message}", highlight=False, soft_wrap=True)
                return
            console.print(f"[green]ok[/green] {result.run_dir}: {result.message}", highlight=False, soft_wrap=True)
            if result.warning:
                console.print(f"  [yellow]warning[/yellow]: {result.warning}", highlight=False, soft_wrap=True)

        try:
            analyse_paths(paths, max_process_number, data_simplification, on_result=report, timeout_s=timeout_s,
                          memory_limit_mb=memory_limit_mb)
        except ValueError as error:
            raise click.ClickException(str(error)) from None
    sys.exit(EXIT_FAILED if failures else EXIT_OK)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--format", "output_format", type=click.Choice(["text", "csv", "json", "markdown"]), default="text",
              show_default=True, help="text: tables for the terminal; csv, json: raw values; markdown: a report.")
@click.option("--top", type=click.IntRange(min=1), default=10, show_default=True,
              help="Rows of the top-N tables (kernels, operators, ranges, sequences, hot spots).")
@click.option("-a", "--analysis", "names", multiple=True, metavar="NAME",
              help="Only this analysis (repeatable), any of perfprof.analysis.ANALYSES [default: the summary's].")
def summary(paths: List[str], output_format: str, top: int, names: List[str]) -> None:
    """Report what a run's time and memory went to: run info, step times, GPU and host breakdowns,
    top kernels, operators and mstx ranges (count, total, avg, median, min, max, stdev).

    PATHS are run directories (or folders holding several, each reported in turn), their
    PERFPROF_OUTPUT folders, database files, or Chrome trace files (torch.profiler's too). A run
    without a database gets one built first, from its capture or its Chrome trace.

    \b
    perfprof summary result/host_1234_20261123_101500_perfprof
    perfprof summary RUN --format csv --analysis top_kernels > kernels.csv
    """
    from ._summary import print_summaries

    sys.exit(print_summaries(paths, output_format, top, list(names) or None))


@main.command(context_settings={"allow_interspersed_args": False, "ignore_unknown_options": True})
@click.option("-m", "module", metavar="MODULE", default=None, help="Run a module, as `python -m MODULE`.")
@click.option("-o", "--output", default="perfprof_result", show_default=True, type=click.Path(file_okay=False),
              help="The folder the run directories are written into.")
@click.option("--config", "config_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Collect as a profiler_config.json says (its prof_dir, start_step, warmup, active and options) "
                   "instead of the options below.")
@click.option("--steps-on", type=click.Choice(["optimizer", "explicit"]), default="optimizer", show_default=True,
              help="What ends a step: each optimizer step (torch's step post-hook), or each call of "
                   "perfprof.dynamic_profile.step() in the script.")
@click.option("--metadata", "metadata_items", multiple=True, metavar="KEY=VALUE",
              help="Add metadata to the run (repeatable), as profile.add_metadata(KEY, VALUE): in the trace, "
                   "profiler_metadata.json and the database (perfprof sweep records each run's configuration).")
@click.option("--warmup-steps", type=click.IntRange(int(STEP_COUNT.low), int(STEP_COUNT.high)), default=0,
              show_default=True,
              help="Count the first N steps as start-up: the first step then begins at the N-th step boundary "
                   "(0: at the first forward pass, the first call of a torch.nn.Module).")
@click.option("--schedule", "schedule_text", metavar="wait=N,warmup=N,active=N[,repeat=N,skip_first=N]",
              default=None, help="The steps to record, as perfprof.schedule() takes them [default: every step].")
@click.option("--activities", default=None, metavar="cpu,cuda",
              help="What to collect [default: every activity this machine supports].")
@click.option("--record-shapes", is_flag=True, help="Record each operator's input shapes.")
@click.option("--profile-memory", is_flag=True, help="Record tensor allocations and frees.")
@click.option("--with-stack", is_flag=True, help="Record Python calls.")
@click.option("--with-flops", is_flag=True, help="torch.profiler's FLOPs of matrix products, conv2d, mul and add.")
@click.option("--with-modules", is_flag=True, help="Record each nn.Module forward as a range.")
@click.option("--export-type", default=None, metavar="text,db", help="What the run directory gets [default: text].")
@click.option("--profiler-level", default=None, metavar="LEVEL", help="Level0, Level1, Level2 or Level_none.")
@click.option("--mstx", is_flag=True, help="Record mstx markers and ranges.")
@click.option("--gpu-metrics", default=None, metavar="GROUP",
              help="Measure each kernel's hardware metrics: PipeUtilization, ArithmeticUtilization, Memory, "
                   "L2Cache, MemoryAccess or Occupancy (serialises kernels while measured).")
@click.option("--l2-cache", is_flag=True, help="Measure each kernel's L2 hit rate.")
@click.option("--host-sys", default=None, metavar="cpu,mem,disk,network",
              help="Sample the host's CPU, memory, disk and network counters.")
@click.option("--gpu-telemetry", is_flag=True, help="Sample each GPU's utilisation, memory, power, clock and "
                                                    "temperature (NVML).")
@click.option("--gc-detect-threshold", type=click.FloatRange(GC_THRESHOLD_MS.low, GC_THRESHOLD_MS.high), default=None,
              metavar="MS",
              help="Record garbage collections longer than MS milliseconds.")
@click.option("--worker-name", default=None, help="Prefix of the run directory [default: {host}_{pid}].")
@click.option("--no-analyse", is_flag=True, help="Write the capture only; `perfprof analyse` builds the rest later.")
@click.option("--auto-plot/--no-auto-plot", default=None,
              help="Draw each run directory's plots (perfprof plot) once it is written "
                   "[default: on when the --config file has a \"plot\" configuration, else off].")
@click.option("--plot-required", is_flag=True,
              help="Exit 1 when auto-plot fails (the target still runs to its end) instead of one warning.")
@click.option("--run-report", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the run's outcome to this JSON file: exit code, run directories, torch.compile's "
                   "compile time, peak CUDA and host memory (perfprof sweep reads it).")
@click.argument("target_and_args", nargs=-1, type=click.UNPROCESSED)
def run(module: Optional[str], output: str, config_file: Optional[str], steps_on: str, metadata_items: List[str],
        warmup_steps: int,
        schedule_text: Optional[str], activities: Optional[str], record_shapes: bool, profile_memory: bool,
        with_stack: bool, with_flops: bool, with_modules: bool, export_type: Optional[str],
        profiler_level: Optional[str], mstx: bool, gpu_metrics: Optional[str], l2_cache: bool, host_sys: Optional[str],
        gpu_telemetry: bool, gc_detect_threshold: Optional[float], worker_name: Optional[str],
        no_analyse: bool, auto_plot: Optional[bool], plot_required: bool, run_report: Optional[str],
        target_and_args: List[str]) -> None:
    """Profile SCRIPT (or -m MODULE) with its ARGS, unchanged; exits with its exit code.

    \b
    perfprof run --schedule wait=1,warmup=1,active=2 --record-shapes train.py --epochs 1
    perfprof run --export-type text,db -m mypackage.train --lr 0.1
    perfprof run --config profiler_config.json train.py

    Steps are counted on optimizer steps (or dp.step() calls with --steps-on explicit); each
    recorded step is a ProfilerStep#N range. The script's start-up, up to its first forward pass
    (or --warmup-steps boundaries), and its tail after the last step are no steps. The run
    directories are printed at the end. Exits with the target's exit code, or 1 when it is 0 and a
    --plot-required auto-plot failed.
    """
    from .._run import RunProfile, RunTarget, run as run_target

    if module is None and not target_and_args:
        raise click.UsageError("give a SCRIPT to run, or -m MODULE")
    target = (RunTarget(module, True, list(target_and_args)) if module is not None
              else RunTarget(target_and_args[0], False, list(target_and_args[1:])))
    if not target.is_module and not os.path.isfile(target.name):
        raise click.UsageError(f"no such script: {target.name}")
    profile_flags = dict(record_shapes=record_shapes, profile_memory=profile_memory, with_stack=with_stack,
                         with_flops=with_flops, with_modules=with_modules)
    experimental = dict(export_type=_list(export_type), profiler_level=profiler_level, mstx=mstx or None,
                        gpu_metrics=gpu_metrics, l2_cache=l2_cache or None, host_sys=_list(host_sys),
                        gpu_telemetry=gpu_telemetry or None, gc_detect_threshold=gc_detect_threshold)
    metadata = _metadata(metadata_items)
    if config_file is not None:
        given = [f"--{name.replace('_', '-')}" for name, value in {**profile_flags, **experimental}.items() if value]
        given += [name for name, value in (("--warmup-steps", warmup_steps), ("--schedule", schedule_text),
                                           ("--activities", activities),
                                           ("--worker-name", worker_name), ("--no-analyse", no_analyse)) if value]
        if given:
            raise click.UsageError(f"--config gives the options; {', '.join(given)} cannot be used with it")
        how = RunProfile(output=output, steps_on=steps_on, config=_read_config(config_file), config_source=config_file,
                         metadata=metadata, auto_plot=auto_plot, plot_required=plot_required)
    else:
        how = RunProfile(output=output, steps_on=steps_on, warmup_steps=warmup_steps, metadata=metadata,
                         worker_name=worker_name, analyse=not no_analyse,
                         options=_options(activities, profile_flags, experimental),
                         schedule=_schedule(schedule_text), auto_plot=auto_plot, plot_required=plot_required)
    outcome = run_target(target, how)
    if run_report is not None:
        _write_run_report(run_report, outcome.report())
    for run_dir in outcome.run_dirs:
        click.echo(f"perfprof: run directory: {run_dir}", err=True)
    if not outcome.run_dirs:
        click.echo("perfprof: no run directory was written (no step was recorded)", err=True)
    for failure in outcome.plot_failures:
        click.echo(f"perfprof: {failure} (--plot-required)", err=True)
    sys.exit(outcome.code or (EXIT_FAILED if outcome.plot_failures else EXIT_OK))


def _write_run_report(path: str, report: dict) -> None:
    """Write `report` as JSON to `path`; a failure is one line on stderr (the run itself is done)."""
    import json

    from .._files import replaced_whole

    try:
        with replaced_whole(path) as file:
            json.dump(report, file)
    except OSError as error:
        click.echo(f"perfprof: cannot write the run report {path}: {error}", err=True)


def _metadata(items: List[str]) -> dict:
    """--metadata's KEY=VALUE items as a dict (a later KEY wins); BadParameter names a bad one."""
    metadata = {}
    for item in items:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="--metadata")
        metadata[key.strip()] = value
    return metadata


def _list(text: Optional[str]) -> Optional[List[str]]:
    return None if text is None else [item.strip() for item in text.split(",") if item.strip()]


def _options(activities: Optional[str], flags: dict, experimental: dict):  # type: ignore[no-untyped-def]
    from .._options import ProfilerOptions
    from ..experimental_config import ExperimentalConfig

    try:
        config = ExperimentalConfig(**{key: value for key, value in experimental.items() if value is not None})
        return ProfilerOptions.checked("perfprof run", activities=_list(activities) and
                                       [item.upper() for item in _list(activities)],
                                       experimental_config=config, **flags)
    except (TypeError, ValueError) as error:
        raise click.UsageError(str(error)) from None


def _schedule(text: Optional[str]):  # type: ignore[no-untyped-def]
    if text is None:
        return None
    from ..schedule import schedule

    fields = {}
    for item in _list(text) or []:
        name, _, value = item.partition("=")
        try:
            fields[name.strip()] = int(value)
        except ValueError:
            raise click.BadParameter(f"{item!r} is not NAME=INTEGER", param_hint="--schedule") from None
    try:
        return schedule(**fields)
    except TypeError as error:
        raise click.BadParameter(str(error), param_hint="--schedule") from None
    except ValueError as error:
        raise click.BadParameter(str(error), param_hint="--schedule") from None


def _read_config(path: str):  # type: ignore[no-untyped-def]
    from .._dynamic_config import read_config

    config, problems = read_config(path)
    for problem in problems:
        click.echo(f"perfprof: {path}: {problem}", err=True)
    if config is None:
        raise click.BadParameter(f"{path} is not a profiler_config.json", param_hint="--config")
    return config


def _register_commands() -> None:
    # Commands in modules of their own; imported last because they use this module's exit codes.
    from .aggregate import aggregate
    from .cluster import cluster
    from .compare import compare
    from .plot import plot
    from .sweep import sweep
    from .ui import report, ui

    for command in (aggregate, cluster, compare, plot, report, sweep, ui):
        main.add_command(command)


_register_commands()
