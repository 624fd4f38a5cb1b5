"""``perfprof report``: every view of one run in one self-contained HTML file (its scripts,
styles and data inline; nothing is fetched when it is opened), for CI artifacts and mail."""
from __future__ import annotations

import base64
import datetime
import hashlib
import os
from dataclasses import dataclass
from typing import Callable, List, Optional

from .._files import make_directory, replaced_whole
from ._assets import read_asset
from ._run_data import RunData
from ._tables import Order
from ._templates import environment
from ._views import VIEWS

#: The report's scripts: plotly.js, then perfprof's.
_SCRIPTS = ("plotly.min.js", "ui.js")


@dataclass(frozen=True)
class _ReportRun:
    label: str
    source: str


def write_report(run_path: str, output: str, on_build: Optional[Callable[[str], None]] = None) -> str:
    """Write the report of the run at `run_path` (whatever :func:`perfprof.analysis.open_run`
    takes) to the file `output`; returns `output`. Raises what open_run raises for a path that is
    no run, and OSError when the file cannot be written."""
    from ..analysis import open_run

    with open_run(run_path, on_build=on_build) as run:
        html = render_report(RunData(run, os.path.basename(os.path.normpath(run_path)) or run_path), run_path)
    # With perfprof's file mode, in a folder made for it as every -o is, and whole or not at all
    # (a report cut short would open as a blank page).
    try:
        make_directory(os.path.dirname(os.path.abspath(output)))
        with replaced_whole(output, newline="") as file:
            file.write(html)
    except OSError as error:  # named by the file asked for, not the temporary one beside it
        raise OSError(error.errno, f"cannot write {output}: {error.strerror}") from None
    return output


def render_report(data: RunData, source: str) -> str:
    """The report's HTML for the open run `data` (`source`: the path it was opened from)."""
    from markupsafe import Markup

    scripts = [_inline_script(name) for name in _SCRIPTS]
    every_row = Order(page_size=None)
    views = [view for view in VIEWS.values() if view.in_report]
    view_panels = {view.name: view.build(data, every_row) for view in views}
    written = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return environment().get_template("report.html").render(
        run=_ReportRun(data.label, source), views=views, view_panels=view_panels,
        css=Markup(read_asset("ui.css")), scripts=[Markup(script) for script in scripts],
        policy=_policy(scripts), written=written)


def _inline_script(name: str) -> str:
    text = read_asset(name)
    if "</script" in text.lower():  # would end the <script> element early
        raise ValueError(f"{name} holds '</script' and cannot be inlined in the report")
    return text


def _policy(scripts: List[str]) -> str:
    """A Content-Security-Policy that runs exactly these inline scripts and lets the page fetch
    nothing: no connection, image, font or frame from anywhere (data: images are Plotly's own)."""
    hashes = " ".join(f"'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
                      for script in scripts)
    return (f"default-src 'none'; script-src {hashes}; style-src 'unsafe-inline'; img-src data:; "
            "font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'")
