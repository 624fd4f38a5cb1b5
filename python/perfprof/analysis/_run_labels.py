"""How comparisons name runs: by what tells them apart, not by their directory names.

A run directory is named ``{worker}_{timestamp}_perfprof`` (``vm_4879_20261128..._perfprof``),
which says nothing of what differs between two runs. What does is in each run's database: a
sweep's configuration and repeat (the run metadata ``perfprof sweep`` adds through ``perfprof
run --metadata``), the rank of a distributed job, and, failing those, the folders the runs lie in.
"""
from __future__ import annotations

import json
import os
from typing import Dict, List, Optional, Sequence

from .._run_directory import RUN_DIR_SUFFIX
from ._run_database import RunDatabase

#: The run metadata keys ``perfprof sweep`` gives each run: its configuration (``NAME=VALUE,...``)
#: and its repeat number.
SWEEP_CONFIG_KEY = "sweep_config"
SWEEP_REPEAT_KEY = "sweep_repeat"


def run_labels(runs: Sequence[RunDatabase]) -> List[str]:
    """A label for each open run database of `runs`, in order: the facts that differ
    between the runs, of a sweep's configuration, its repeat and the rank (``batch=8,compile=1``,
    ``batch=8,compile=1, repeat 1``, ``rank 3``); where those leave two runs alike, the folder each
    lies in under the runs' common folder; then the directory name. One run is named by its facts
    or its directory name."""
    facts = [_facts(database) for database in runs]
    labels = [", ".join(parts) for parts in _differing(facts)]
    if _distinct(labels):
        return labels
    paths = [database.run_dir or database.path for database in runs]
    if len(runs) > 1:
        labels = [_joined(folder, label) for folder, label in zip(_folders(paths), labels)]
        if _distinct(labels):
            return labels
    return [_joined(label, _run_name(path)) for label, path in zip(labels, paths)]


def _facts(database: RunDatabase) -> Dict[str, str]:
    """The run's sweep configuration, repeat and rank (each only when the run has it)."""
    rows = dict(database.execute(
        "SELECT name, value FROM META_DATA WHERE name IN (:config, :repeat, 'rank', 'world_size')", "run_facts", "",
        {"config": SWEEP_CONFIG_KEY, "repeat": SWEEP_REPEAT_KEY}).rows) \
        if database.has_table("META_DATA") else {}
    facts = {}
    for key, name, shown in ((SWEEP_CONFIG_KEY, "config", "{}"), (SWEEP_REPEAT_KEY, "repeat", "repeat {}")):
        value = _json_text(rows.get(key))  # the user's metadata: JSON text under its own key
        if value:
            facts[name] = shown.format(value)
    if rows.get("world_size") not in (None, "", "1") and rows.get("rank") is not None:
        facts["rank"] = f"rank {rows['rank']}"
    return facts


def _json_text(value: Optional[str]) -> Optional[str]:
    """A metadata value (JSON text) as text: a JSON string's content, anything else as written."""
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return value
    return parsed if isinstance(parsed, str) else value


def _differing(facts: Sequence[Dict[str, str]]) -> List[List[str]]:
    """Per run, its facts of the kinds whose values differ between the runs (all of them for one run)."""
    kinds = [kind for kind in ("config", "repeat", "rank")
             if len(facts) == 1 or len({run.get(kind) for run in facts}) > 1]
    return [[run[kind] for kind in kinds if kind in run] for run in facts]


def _folders(paths: Sequence[str]) -> List[str]:
    """Each run's folder relative to the runs' common folder ("" when they share theirs)."""
    parents = [os.path.dirname(os.path.abspath(path)) for path in paths]
    common = os.path.commonpath(parents)
    return [os.path.relpath(parent, common) if parent != common else "" for parent in parents]


def _run_name(path: str) -> str:
    name = os.path.basename(os.path.normpath(path))
    return name[:-len(RUN_DIR_SUFFIX)] if name.endswith(RUN_DIR_SUFFIX) else name


def _joined(*parts: str) -> str:
    return ", ".join(part for part in parts if part)


def _distinct(labels: Sequence[str]) -> bool:
    return all(labels) and len(set(labels)) == len(labels)
