"""``perfprof ui``: a local web application over the runs under some paths (Flask on
Werkzeug's threaded server, as TensorBoard serves its pages).

Read-only and closed: a URL names a run by an id from the run list (never a path), a view by
name and an asset by name; anything else is 404. Pages carry a Content-Security-Policy that
lets them load only this server's own scripts."""
from __future__ import annotations

import collections
import os
import sqlite3
import threading
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple
from urllib.parse import urlencode

from ._run_data import RunData
from ._runs import RunEntry, discover, discover_clusters, discover_sweeps, trace_file
from ._tables import PAGE_SIZE, BadOrderError, Order
from ._templates import environment
from ._views import VIEWS

#: Runs kept open with their computed analyses (a run's next page reads them again).
OPEN_RUNS = 4
#: The headers of every response.
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                               "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; "
                               "form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


class Listing(NamedTuple):
    """What the start page lists."""

    runs: List[RunEntry]
    clusters: List[RunEntry]
    sweeps: List[RunEntry]
    problems: List[str]


class _Runs:
    """What the roots hold (runs, cluster analyses, sweep results) by id, and the runs kept open."""

    def __init__(self, roots: Sequence[str]) -> None:
        self.roots = list(roots)
        self._lock = threading.Lock()
        self._known: Dict[str, Dict[str, RunEntry]] = {"runs": {}, "clusters": {}, "sweeps": {}}
        self._open: "collections.OrderedDict[Tuple[str, int], RunData]" = collections.OrderedDict()

    def listing(self) -> Listing:
        """The runs, cluster analyses and sweep results under the roots now (the file system read
        again: new ones appear), and a line for each root that holds no run."""
        runs, problems = discover(self.roots)
        listing = Listing(runs, discover_clusters(self.roots), discover_sweeps(self.roots), problems)
        with self._lock:
            for kind in ("runs", "clusters", "sweeps"):
                self._known[kind].update((entry.id, entry) for entry in getattr(listing, kind))
        return listing

    def _find(self, kind: str, entry_id: str) -> Optional[RunEntry]:
        """The entry of that kind with that id: known, or found by listing again."""
        with self._lock:
            known = self._known[kind].get(entry_id)
        if known is None:
            known = next((entry for entry in getattr(self.listing(), kind) if entry.id == entry_id), None)
        return known

    def entry(self, run_id: str) -> Optional[RunEntry]:
        return self._find("runs", run_id)

    def cluster(self, cluster_id: str) -> Optional[RunEntry]:
        return self._find("clusters", cluster_id)

    def sweep(self, sweep_id: str) -> Optional[RunEntry]:
        return self._find("sweeps", sweep_id)

    def data(self, entry: RunEntry) -> RunData:
        """The run open, its analyses kept until its database changes or it is the least
        recently used of OPEN_RUNS."""
        from ..analysis import open_run

        run = open_run(entry.path)
        key = (run.path, os.stat(run.path).st_mtime_ns)
        with self._lock:
            known = self._open.get(key)
            if known is not None:
                self._open.move_to_end(key)
        if known is not None:
            run.close()
            return known
        data = RunData(run, entry.label, trace_url(entry.id) if trace_file(entry.path) else None)
        with self._lock:
            self._open[key] = data
            while len(self._open) > OPEN_RUNS:
                # Not closed here: a request of another thread may still be reading it; its
                # connections close when the last one lets go of it.
                self._open.popitem(last=False)
        return data


def create_app(roots: Sequence[str], page_size: int = PAGE_SIZE) -> Any:
    """The Flask application serving the runs at or under `roots`; paged tables show `page_size`
    rows a page."""
    from flask import Flask, abort, redirect, request, send_file

    from ._assets import asset_paths

    app = Flask("perfprof.ui", static_folder=None, template_folder=None)
    runs = _Runs(roots)
    templates = environment()
    assets = asset_paths()

    @app.after_request
    def secured(response: Any) -> Any:
        response.headers.update(SECURITY_HEADERS)
        return response

    @app.get("/")
    def index() -> Any:
        listing = runs.listing()
        return templates.get_template("index.html").render(listing=listing, roots=runs.roots, **_links())

    @app.get("/static/<name>")
    def static_file(name: str) -> Any:
        if name not in assets:
            abort(404)
        return send_file(assets[name], max_age=3600)

    def panels_page(entry: Any, build: Callable[[str], Any], heading: str, intro: str) -> Any:
        """The page of a cluster output or a sweep (`entry`, None: not in the list), its panels
        built from its path; a folder gone or a file that cannot be read is one line."""
        if entry is None:
            abort(404)
        try:
            panels = build(entry.path)
        except (OSError, ValueError) as error:  # a file gone, a database of another version, a bad record
            return _problem(f"{entry.label}: {error}", 500)
        return templates.get_template("page.html").render(
            heading=f"{heading}: {entry.label}", panel_list=panels, query=_query, **_links(), intro=intro)

    @app.get("/cluster/<cluster_id>")
    def cluster(cluster_id: str) -> Any:
        from ._cluster import cluster_panels

        return panels_page(runs.cluster(cluster_id), cluster_panels, "Distributed",
                           "What perfprof cluster found (docs/cluster.md): its verdict on slow ranks with the "
                           "evidence, and each rank's steps broken down.")

    @app.get("/sweep/<sweep_id>")
    def sweep(sweep_id: str) -> Any:
        from ._sweeps import sweep_panels

        return panels_page(runs.sweep(sweep_id), sweep_panels, "Sweep",
                           "What perfprof aggregate makes of these results (docs/experiments.md), each "
                           "configuration's oldest sweep as the baseline: speedups over time and at the latest "
                           "sweep, every metric, every speedup.")

    @app.get("/diff")
    def diff() -> Any:
        from ..experiments import CompareError
        from ._diff import compare, diff_panels

        base, new = runs.entry(request.args.get("base", "")), runs.entry(request.args.get("new", ""))
        if base is None or new is None:
            return _problem("'base' and 'new' must each be the id of a run of the list (/)", 400)
        try:
            panels = diff_panels(compare(base.path, new.path))
        except (CompareError, ValueError) as error:  # a run without steps, a trace that cannot be read
            return _problem(str(error), 422)
        except (OSError, sqlite3.Error) as error:
            return _problem(str(error), 500)
        return templates.get_template("diff.html").render(base=base, new=new, panel_list=panels, query=_query,
                                                          **_links())

    @app.get("/run/<run_id>/")
    def run_home(run_id: str) -> Any:
        return redirect(_view_url(run_id, "overview"))

    @app.get("/run/<run_id>/trace/download")
    def trace_download(run_id: str) -> Any:
        entry = runs.entry(run_id)
        path = trace_file(entry.path) if entry is not None else None
        if path is None:
            abort(404)
        return send_file(path, as_attachment=True, download_name=os.path.basename(path),
                         mimetype="application/gzip" if path.endswith(".gz") else "application/json")

    @app.get("/run/<run_id>/<view_name>")
    def run_view(run_id: str, view_name: str) -> Any:
        entry = runs.entry(run_id)
        view = VIEWS.get(view_name)
        if entry is None or view is None:
            abort(404)
        try:
            order = _order(request.args, page_size)
        except ValueError as error:
            return _problem(str(error), 400)
        try:
            data = runs.data(entry)
            panels = view.build(data, order)
        except BadOrderError as error:
            return _problem(str(error), 400)
        except (OSError, ValueError, sqlite3.Error) as error:  # a run gone, a trace that cannot be read
            return _problem(f"{entry.label}: {error}", 500)
        return templates.get_template("run.html").render(
            run=entry, view=view, views=list(VIEWS.values()), panel_list=panels,
            view_url=lambda name: _view_url(run_id, name), query=_query, **_links())

    def _problem(message: str, status: int) -> Any:
        from flask import Response

        return Response(message + "\n", status=status, mimetype="text/plain")

    return app


def _links() -> Dict[str, Any]:
    """The URLs every page's template writes."""
    return {"home": "/", "static": lambda name: f"/static/{name}", "run_url": lambda run: _view_url(run.id, "overview"),
            "cluster_url": lambda cluster: f"/cluster/{cluster.id}", "sweep_url": lambda sweep: f"/sweep/{sweep.id}"}


def _view_url(run_id: str, view: str) -> str:
    return f"/run/{run_id}/{view}"


def trace_url(run_id: str) -> str:
    """Where a run's Chrome trace is downloaded (the Trace view's link and Perfetto UI's source)."""
    return f"/run/{run_id}/trace/download"


def _query(**params: Any) -> str:
    """A query string of the `params` that have a value."""
    return urlencode({name: value for name, value in params.items() if value not in (None, "")})


def _order(args: Any, page_size: int) -> Order:
    """The paged table's order from the query string: sort, order (asc, desc), q, page, group,
    from and to."""
    order = args.get("order", "desc")
    if order not in ("asc", "desc"):
        raise ValueError(f"'order' must be asc or desc, not {order!r}")
    page_text = args.get("page", "1")
    if not page_text.isdigit() or int(page_text) < 1:
        raise ValueError(f"'page' must be a whole number from 1, not {page_text!r}")
    return Order(sort=args.get("sort") or None, descending=order == "desc", search=args.get("q", ""),
                 page=int(page_text), page_size=page_size, group=args.get("group") or "name",
                 start_ms=_milliseconds(args, "from"), end_ms=_milliseconds(args, "to"))


def _milliseconds(args: Any, name: str) -> Optional[float]:
    """The query's `name`, ms from the run's start (None when absent or empty)."""
    text = args.get(name, "")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise ValueError(f"'{name}' must be a time in ms from the run's start (0 or more), not {text!r}")
    return value


def serve(roots: Sequence[str], host: str = "127.0.0.1", port: int = 6006,
          on_ready: Optional[Callable[[str], None]] = None) -> None:
    """Serve the runs at or under `roots` on `host`:`port` until interrupted; `on_ready` is
    called with the URL once the server listens (port 0: any free port). OSError when it cannot
    listen there."""
    import socket

    from werkzeug.serving import make_server

    # Bound here, not by Werkzeug, which prints its own lines and exits the process when the port
    # is taken: the caller gets the OSError (the port is taken, the address is not this machine's).
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.create_server((host, port), family=family) as listening:
        server = make_server(host, listening.getsockname()[1], create_app(roots), threaded=True,
                             fd=listening.fileno())
    if on_ready:
        shown = f"[{host}]" if ":" in host else host
        on_ready(f"http://{shown}:{server.port}/")
    try:
        server.serve_forever()
    finally:
        server.server_close()
