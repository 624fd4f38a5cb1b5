"""``perfprof report`` and ``perfprof ui``: a run's pages as one HTML file, or served (docs/ui.md)."""
from __future__ import annotations

import sqlite3
import sys
from typing import List

import click

from . import EXIT_FAILED, EXIT_OK


def _needs_ui_extra() -> None:
    """A usage error naming the extra when Flask, Jinja2 or plotly is missing."""
    import importlib.util

    missing = [name for name in ("flask", "jinja2", "plotly") if importlib.util.find_spec(name) is None]
    if missing:
        raise click.ClickException(f"{', '.join(missing)} not installed: pip install 'perfprof[ui]'")


@click.command()
@click.argument("run_path", metavar="RUN", type=click.Path(exists=True))
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False, writable=True),
              help="The HTML file to write.")
def report(run_path: str, output: str) -> None:
    """Write every page of RUN (Overview, Operators, Modules, Kernels, Memory, Telemetry) into one
    self-contained HTML file: its scripts and data inline, nothing fetched when it is opened (CI
    artifacts, mail).

    RUN is what `perfprof summary` takes: a run directory, its PERFPROF_OUTPUT folder, a
    database file or a Chrome trace file (torch.profiler's too).

    \b
    perfprof report result/host_1234_20261123_101500_perfprof -o report.html
    """
    from ..ui import write_report

    _needs_ui_extra()
    try:
        write_report(run_path, output, on_build=lambda what: click.echo(what, err=True))
    except (OSError, ValueError, sqlite3.Error) as error:
        # Most errors name the run (open_run's) or the report already; the others get the run in front.
        message = str(error) if run_path in str(error) or output in str(error) else f"{run_path}: {error}"
        click.echo(f"perfprof report: {message}", err=True)
        sys.exit(EXIT_FAILED)
    click.echo(f"perfprof report: wrote {output}", err=True)
    sys.exit(EXIT_OK)


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on. Only this machine can connect to the default; from another, "
                   "tunnel with `ssh -L 6006:localhost:6006 HOST` rather than listening on 0.0.0.0.")
@click.option("--port", type=click.IntRange(0, 65535), default=6006, show_default=True,
              help="The port to listen on (0: any free one).")
def ui(paths: List[str], host: str, port: int) -> None:
    """Serve the pages of the runs at or under PATHS in a web browser until interrupted (Ctrl-C).

    PATHS are what `perfprof summary` takes: run directories, folders holding them, database
    files and Chrome trace files. The run list reads the folders again at each visit, so new
    runs appear; the server only reads.

    \b
    perfprof ui result/
    perfprof ui --port 8080 result/ traces/step_trace.pt.trace.json
    """
    from ..ui import serve

    _needs_ui_extra()
    try:
        serve(paths, host, port, on_ready=lambda url: click.echo(f"perfprof ui: serving {url} (Ctrl-C stops)",
                                                                 err=True))
    except OSError as error:  # the port is taken, the address is not this machine's
        raise click.ClickException(f"cannot listen on {host}:{port}: {error}") from None
    except KeyboardInterrupt:
        pass
