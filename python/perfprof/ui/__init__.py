"""Web pages of a profiled run: ``perfprof ui`` serves them over the runs under some folders,
``perfprof report`` writes them for one run as a single self-contained HTML file.

The numbers are those of :mod:`perfprof.analysis` (the tables `perfprof summary` prints), shown
in the same units; docs/ui.md describes the views. Needs the ``ui`` extra (Flask, Jinja2,
plotly): ``pip install 'perfprof[ui]'``. Nothing heavy is imported until a page is made::

    from perfprof import ui
    ui.write_report("result/host_1234_20261123_101500_perfprof", "report.html")
    ui.serve(["result/"], port=6006)      # until interrupted
"""
from __future__ import annotations

from typing import Callable, Optional, Sequence


def write_report(run_path: str, output: str, on_build: Optional[Callable[[str], None]] = None) -> str:
    """Write every view of the run at `run_path` (a run directory, its PERFPROF_OUTPUT folder, a
    database or a Chrome trace file) into the self-contained HTML file `output`; returns
    `output`. `on_build` gets one line when the run's database is built first."""
    from ._report import write_report as write

    return write(run_path, output, on_build)


def serve(roots: Sequence[str], host: str = "127.0.0.1", port: int = 6006,
          on_ready: Optional[Callable[[str], None]] = None) -> None:
    """Serve the runs at or under `roots` on http://`host`:`port`/ until interrupted (port 0:
    any free one); `on_ready` gets the URL once the server listens."""
    from ._server import serve as run_server

    run_server(roots, host, port, on_ready)


__all__ = ["serve", "write_report"]
