"""The runs under the paths `perfprof ui` was given, listed from the file system alone (no
database is opened to list them), each under an id that is the only way a URL names it."""
from __future__ import annotations

import datetime
import hashlib
import os
from dataclasses import dataclass
from typing import List, Optional, Sequence, Tuple

from .._run_directory import OUTPUT_DIR
from ..analysis._run_database import NoRunError, database_of, find_runs


@dataclass(frozen=True)
class RunEntry:
    id: str              # a digest of the path: what URLs carry instead of a path
    path: str            # absolute: a run directory, its database file or a Chrome trace file
    label: str           # the path below the folder it was found in
    modified: str        # its last change, UTC, to the second
    has_database: bool   # False: opening it first builds (or imports) its database


def run_id(path: str) -> str:
    return hashlib.sha256(os.path.abspath(path).encode()).hexdigest()[:16]


def discover(roots: Sequence[str]) -> Tuple[List[RunEntry], List[str]]:
    """The runs at or under `roots` (run directories, their PERFPROF_OUTPUT folders, database
    files and Chrome traces, as `perfprof summary` takes them), newest first, and one line for
    each root that holds none or has gone."""
    runs: List[RunEntry] = []
    problems: List[str] = []
    for root in roots:
        try:
            paths = _runs_at(root)
        except NoRunError as error:
            problems.append(str(error))
            continue
        runs += [_entry(path, root) for path in paths if os.path.exists(path)]
    unique = {run.id: run for run in runs}
    return sorted(unique.values(), key=lambda run: (run.modified, run.label), reverse=True), problems


def discover_clusters(roots: Sequence[str]) -> List[RunEntry]:
    """The output folders of `perfprof cluster` at or under `roots` (those holding its report),
    newest first; `has_database` is True (the cluster's DuckDB database is part of them)."""
    from ..cluster import is_cluster_output

    found = {}
    for root in roots:
        if not os.path.isdir(root):
            continue
        for folder, subfolders, _ in os.walk(root):
            if is_cluster_output(folder):
                entry = _entry(folder, root)
                found[entry.id] = RunEntry(entry.id, entry.path, entry.label, entry.modified, True)
                subfolders.clear()
    return sorted(found.values(), key=lambda entry: (entry.modified, entry.label), reverse=True)


def discover_sweeps(roots: Sequence[str]) -> List[RunEntry]:
    """The results files of `perfprof sweep` (results.jsonl) at or under `roots`, newest first."""
    from ..experiments import RESULTS_FILE

    found = {}
    for root in roots:
        paths = [root] if os.path.basename(root) == RESULTS_FILE else \
            [os.path.join(folder, RESULTS_FILE) for folder, _, files in os.walk(root) if RESULTS_FILE in files]
        for path in paths:
            entry = _entry(path, root)
            found[entry.id] = RunEntry(entry.id, entry.path, entry.label, entry.modified, True)
    return sorted(found.values(), key=lambda entry: (entry.modified, entry.label), reverse=True)


def trace_file(path: str) -> Optional[str]:
    """The Chrome trace of the run at `path` (a run directory, its PERFPROF_OUTPUT folder or
    database, or a trace file itself), if it has one: what the Trace view offers."""
    from .._trace_import import is_trace_file, trace_of_run

    if os.path.isfile(path):
        if is_trace_file(path):
            return path
        path = os.path.dirname(os.path.abspath(path))  # a database: in its run's PERFPROF_OUTPUT
    if os.path.basename(os.path.normpath(path)) == OUTPUT_DIR:
        path = os.path.dirname(os.path.normpath(path))
    return trace_of_run(path)


def _runs_at(root: str) -> List[str]:
    if os.path.isfile(root) or os.path.basename(os.path.normpath(root)) == OUTPUT_DIR:
        if not os.path.exists(root):
            raise NoRunError(f"{root}: no such file")
        return [root]
    return find_runs(root)


def _entry(path: str, root: str) -> RunEntry:
    absolute, base = os.path.abspath(path), os.path.abspath(root)
    label = os.path.relpath(absolute, base) if absolute != base else os.path.basename(absolute)
    if label.startswith(os.pardir):
        label = os.path.basename(absolute)
    if os.path.isdir(absolute):
        run_dir = os.path.dirname(absolute) if os.path.basename(absolute) == OUTPUT_DIR else absolute
        has_database = database_of(run_dir) is not None
    else:
        has_database = absolute.endswith(".db")
    modified = datetime.datetime.fromtimestamp(os.path.getmtime(absolute), datetime.timezone.utc)
    return RunEntry(run_id(absolute), absolute, label, modified.strftime("%Y-%m-%d %H:%M:%S"), has_database)
