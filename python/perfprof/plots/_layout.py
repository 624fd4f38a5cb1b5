"""Which runs a ``perfprof plot`` invocation is about, read from the paths it is given.

A run directory is one holding ``PERFPROF_OUTPUT/`` or ``capture.ppcap`` (what
tensorboard_trace_handler writes). A path is a run directory, or a folder whose run directories
(``*_perfprof*``, at any depth) are taken. One run found: single-run mode, its plots in
``<run>/plots/``. Several (several paths, or a folder of several runs): multi-run mode, the
comparisons in ``<the runs' common folder>/plots/``.
"""
from __future__ import annotations

import fnmatch
import os
from dataclasses import dataclass
from typing import List, Sequence

from ..trace_handler import CAPTURE_FILE, OUTPUT_DIR, RUN_DIR_SUFFIX

PLOTS_DIR = "plots"
BASELINE, TREATMENT = "baseline", "treatment"


class NoRunError(FileNotFoundError):
    """A path that is, or holds, no run directory."""


@dataclass(frozen=True)
class Run:
    """One run directory of the invocation, and how the comparisons name it."""

    path: str
    label: str   # its directory name without "_perfprof", with its group: "[baseline] host_12_2026..."
    group: str   # BASELINE, TREATMENT or "" (neither, or no groups configured)


def is_run_dir(path: str) -> bool:
    """Whether `path` is a run directory (holds ``PERFPROF_OUTPUT/`` or ``capture.ppcap``)."""
    return os.path.isdir(os.path.join(path, OUTPUT_DIR)) or os.path.isfile(os.path.join(path, CAPTURE_FILE))


def find_runs(path: str) -> List[str]:
    """The run directories at or under `path`, sorted; a run directory's own folders are not
    searched. Raises :class:`NoRunError` when there is none."""
    if not os.path.isdir(path):
        raise NoRunError(f"{path}: no such directory")
    if is_run_dir(path):
        return [path]
    found = []
    for root, folders, _ in os.walk(path):
        runs = [folder for folder in folders if RUN_DIR_SUFFIX in folder and is_run_dir(os.path.join(root, folder))]
        found += [os.path.join(root, folder) for folder in runs]
        folders[:] = [folder for folder in folders if folder not in runs and folder != PLOTS_DIR]
    if not found:
        raise NoRunError(f"{path}: no run directory there (a *{RUN_DIR_SUFFIX}* folder holding {OUTPUT_DIR}/ "
                         f"or {CAPTURE_FILE}); profile with tensorboard_trace_handler or `perfprof run` first")
    return sorted(found)


def run_dirs_of(paths: Sequence[str]) -> List[str]:
    """The run directories at or under `paths`, each once, sorted (see :func:`find_runs`)."""
    return sorted({os.path.abspath(run) for path in paths for run in find_runs(path)})


def home_of(run_dirs: Sequence[str]) -> str:
    """The folder of an invocation: the run itself, or the common folder of several. Its
    ``plots/`` gets the PNGs (unless told otherwise) and its ``.perfprof-plot-config.yaml`` is the
    run's configuration."""
    return run_dirs[0] if len(run_dirs) == 1 else os.path.commonpath(list(run_dirs))


def grouped(run_dirs: Sequence[str], baselines: Sequence[str] = (), treatments: Sequence[str] = ()) -> List[Run]:
    """`run_dirs` as :class:`Run`, baselines first, then treatments, then the rest (by path
    within each). `baselines` and `treatments` are fnmatch patterns of directory names."""
    runs = [_run(path, baselines, treatments) for path in run_dirs]
    order = {BASELINE: 0, TREATMENT: 1, "": 2}
    return sorted(runs, key=lambda run: (order[run.group], run.path))


def _run(path: str, baselines: Sequence[str], treatments: Sequence[str]) -> Run:
    name = os.path.basename(path)
    group = BASELINE if _matches(name, baselines) else TREATMENT if _matches(name, treatments) else ""
    short = name.replace(RUN_DIR_SUFFIX, "", 1)
    return Run(path, f"[{group}] {short}" if group else short, group)


def _matches(name: str, patterns: Sequence[str]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in patterns)
