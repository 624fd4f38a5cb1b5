"""Which runs a ``perfprof plot`` invocation is about, read from the paths it is given.

A path is a run directory, or a folder whose run directories are taken
(:func:`perfprof.analysis._run_database.find_runs`). One run found: single-run mode, its plots in
``<run>/plots/``. Several (several paths, or a folder of several runs): multi-run mode, the
comparisons in ``<the runs' common folder>/plots/``.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import List, Sequence

from ..analysis._run_database import find_runs

PLOTS_DIR = "plots"
BASELINE, TREATMENT = "baseline", "treatment"


@dataclass(frozen=True)
class Run:
    """One run directory of the invocation, and its group in comparisons (the comparisons name
    it by what tells it apart from the others: :func:`perfprof.analysis._run_labels.run_labels`)."""

    path: str
    group: str   # BASELINE, TREATMENT or "" (neither, or no groups configured)


def run_dirs_of(paths: Sequence[str]) -> List[str]:
    """The run directories at or under `paths`, each once, sorted (see :func:`find_runs`)."""
    return sorted({os.path.abspath(run) for path in paths for run in find_runs(path)})


def home_of(run_dirs: Sequence[str]) -> str:
    """The folder of an invocation: the run itself, or the common folder of several. Its
    ``plots/`` gets the PNGs (unless told otherwise) and its ``.perfprof-plot-config.yaml`` is the
    run's configuration. A run given as its trace file has the file's folder."""
    if len(run_dirs) == 1:
        return os.path.dirname(run_dirs[0]) if os.path.isfile(run_dirs[0]) else run_dirs[0]
    return os.path.commonpath(list(run_dirs))


def grouped(run_dirs: Sequence[str], baselines: Sequence[str] = (), treatments: Sequence[str] = ()) -> List[Run]:
    """`run_dirs` as :class:`Run`, baselines first, then treatments, then the rest (by path
    within each). `baselines` and `treatments` are fnmatch patterns of directory names."""
    runs = [_run(path, baselines, treatments) for path in run_dirs]
    order = {BASELINE: 0, TREATMENT: 1, "": 2}
    return sorted(runs, key=lambda run: (order[run.group], run.path))


def _run(path: str, baselines: Sequence[str], treatments: Sequence[str]) -> Run:
    name = os.path.basename(path)
    group = BASELINE if _matches(name, baselines) else TREATMENT if _matches(name, treatments) else ""
    return Run(path, group)


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
