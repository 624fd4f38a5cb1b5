"""``perfprof compare``: two or more profiled runs side by side, section by section (steps,
operators, kernels, memory), each row with the base run's value, every new run's value, their
difference and ratio, the largest regressions first (docs/experiments.md#perfprof-compare).

Reads each run's database through :func:`perfprof.analysis.open_run` with the analyses
``step_times`` and ``step_statistics`` (docs/analysis.md, "Steps"), ``top_operators`` and
``top_kernels`` (every name) and ``memory_peaks``.
perfprof.analysis is imported when a comparison is made, so that ``import perfprof.experiments``
stays light.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import sqlite3
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Sequence, Tuple, TypeVar

from .._hints import how_to
from ._results import PASS, RunRecord, read_results

if TYPE_CHECKING:
    from ..analysis import RunDatabase, Table

#: A sweep entry: ``RESULTS.jsonl:FINGERPRINT[:REPEAT]``.
_SWEEP_ENTRY = re.compile(r"^(?P<results>.+\.jsonl):(?P<fingerprint>[^:]+)(?::(?P<repeat>\d+))?$")

Key = Tuple[Any, ...]
Values = Tuple[Any, ...]


class CompareError(ValueError):
    """A run that cannot be compared: no such path or sweep entry, or a database without steps."""


class RunNotFound(CompareError):
    """A run given by a path that does not exist: neither a run nor the results file of a sweep
    entry (the command line's mistake, where other CompareErrors are the run's)."""


@dataclasses.dataclass(frozen=True)
class SectionSpec:
    """What one section of a comparison shows: the one definition of its columns.

    Each row is identified by ``keys``; each run contributes its ``measures`` (column names
    with their unit suffix, e.g. ``total_ns``); ``compared`` is the measure that every new run's
    diff (new - base) and ratio (new / base) are of, and that orders the rows.
    """

    name: str
    title: str
    keys: Tuple[str, ...]
    measures: Tuple[str, ...]
    compared: str
    absent: str             # said instead of a table when no run has a row
    limited: bool = False   # only the first --top rows are shown
    hint: str = ""          # how to record it (a perfprof._hints name), said after `absent`

    def columns(self, labels: Sequence[str]) -> Tuple[str, ...]:
        """The section's table columns for runs labelled `labels` (the base first): the keys, the
        base run's measures, then per new run its measures, ``{label}_diff_{unit}`` and
        ``{label}_ratio``."""
        unit = self.compared.rsplit("_", 1)[1]
        columns = list(self.keys) + [f"{labels[0]}_{measure}" for measure in self.measures]
        for label in labels[1:]:
            columns += [f"{label}_{measure}" for measure in self.measures]
            columns += [f"{label}_diff_{unit}", f"{label}_ratio"]
        return tuple(columns)


STEPS = SectionSpec(
    "steps", "Steps: time per step; their mean, median, p5 and p95 (step_statistics)",
    ("step",), ("duration_ns",), "duration_ns", "no steps")
OPERATORS = SectionSpec(
    "operators", "Operators: host time per operator name (self: minus the operators they called)",
    ("name",), ("count", "total_ns", "self_ns"), "total_ns", "no operators recorded", limited=True)
KERNELS = SectionSpec(
    "kernels", "Kernels: device time per kernel name", ("name",), ("count", "total_ns"), "total_ns",
    "no GPU work", limited=True)
MEMORY = SectionSpec(
    "memory", "Memory: peak per category", ("device", "category"), ("peak_bytes",), "peak_bytes",
    "no memory recorded", hint="memory")

#: The sections, in the order they are shown.
SECTIONS = (STEPS, OPERATORS, KERNELS, MEMORY)


@dataclasses.dataclass(frozen=True)
class ComparedRun:
    """One run of a comparison: its label (``base``, ``new`` or ``new1``, ``new2``...), the path
    or sweep entry it was given as, its database, and its step statistics (step_statistics)."""

    label: str
    reference: str
    database: str
    name: str                 # what tells it apart from the other runs (its sweep configuration, rank, folder)
    steps: int                # STEP_TIME rows
    mean_step_ns: float
    median_step_ns: float


@dataclasses.dataclass(frozen=True)
class ComparedSection:
    """A section's rows for every run (``table``, its columns from ``spec``); without rows when no
    run has data for it, ``note`` then saying so (``spec.absent``)."""

    spec: SectionSpec
    table: "Table"

    @property
    def note(self) -> Optional[str]:
        """Why the section has no rows (e.g. "no GPU work"), or None when it has some."""
        if self.table.rows:
            return None
        return f"{self.spec.absent} ({how_to(self.spec.hint)})" if self.spec.hint else self.spec.absent


@dataclasses.dataclass(frozen=True)
class Slowdown:
    """A new run whose mean step time is more than a threshold above the base run's."""

    run: ComparedRun
    base: ComparedRun
    percent: float            # 100 * (new mean / base mean - 1)

    def __str__(self) -> str:
        named = self.run.reference if self.run.name == self.run.reference else f"{self.run.name}: {self.run.reference}"
        return (f"{self.run.label} ({named}): mean step {_ms(self.run.mean_step_ns)} is "
                f"{self.percent:.1f}% above {self.base.label}'s {_ms(self.base.mean_step_ns)}")


@dataclasses.dataclass(frozen=True)
class Comparison:
    """The result of :func:`compare_runs`: the runs (the base first) and the sections."""

    runs: Tuple[ComparedRun, ...]
    sections: Tuple[ComparedSection, ...]

    def section(self, name: str) -> ComparedSection:
        """The section called `name` (``steps``, ``operators``, ``kernels``, ``memory``)."""
        for section in self.sections:
            if section.spec.name == name:
                return section
        raise KeyError(f"no section {name!r}; the sections: {', '.join(spec.name for spec in SECTIONS)}")

    def slowdowns(self, threshold_pct: float) -> List[Slowdown]:
        """The new runs whose mean step time is more than `threshold_pct` percent
        above the base run's."""
        base = self.runs[0]
        found = []
        for run in self.runs[1:]:
            percent = 100.0 * (run.mean_step_ns / base.mean_step_ns - 1) if base.mean_step_ns else float("inf")
            if run.mean_step_ns > base.mean_step_ns * (1 + threshold_pct / 100):
                found.append(Slowdown(run, base, percent))
        return found

    def runs_table(self) -> "Table":
        """The runs as a table: label, name (what tells the run apart), the path or sweep entry
        given, and the database read."""
        from ..analysis import Table

        return Table.of("runs", "Runs", ("label", "name", "run", "database"),
                        [(run.label, run.name, run.reference, run.database) for run in self.runs])

    def to_csv(self) -> str:
        """Every section as a CSV block with raw values (ns, bytes), headed by a ``# name`` line
        (``# name: reason`` for a section without rows, which has the header row alone), the
        runs first; blocks are separated by a blank line."""
        from ..analysis._formats import csv_block

        blocks = [csv_block(self.runs_table(), self.runs_table().name)]
        blocks += [csv_block(section.table, f"{section.table.name}: {section.note}" if section.note
                             else section.table.name) for section in self.sections]
        return "\n".join(blocks)

    def to_markdown(self) -> str:
        """The comparison as a Markdown report: the runs, then a ``## title`` per section with a
        pipe table in readable units, or the reason it has none."""
        from ..analysis._formats import to_markdown

        lines = ["# perfprof compare", ""]
        lines += [f"- **{run.label}** ({run.name}): `{run.reference}`" for run in self.runs]
        parts = ["\n".join(lines) + "\n"]
        for section in self.sections:
            if section.note:
                parts.append(f"## {section.spec.title}\n\n_{section.note}_\n")
            else:
                parts.append(to_markdown([section.table]))
        return "\n".join(parts)


def compare_runs(base: str, new: Sequence[str], top: int = 10,
                 on_build: Optional[Callable[[str], None]] = None) -> Comparison:
    """Compare run `base` with each run of `new`.

    Each run is a run directory, its ``PERFPROF_OUTPUT`` folder or a database file (as
    :func:`perfprof.analysis.open_run` takes them), or a sweep entry
    ``RESULTS.jsonl:FINGERPRINT[:REPEAT]`` (see :func:`resolve_run`). `top` limits the operators
    and kernels sections to their first rows; `on_build` is called with a line saying which
    run's database is built first, and from what (:func:`perfprof.analysis.open_run`). Raises
    :class:`CompareError` (or the ``FileNotFoundError`` of open_run) with the run named when a
    run cannot be read.
    """
    if not new:
        raise CompareError("give at least one new run to compare with the base run")
    from ..analysis._run_labels import run_labels

    labels = ["base"] + (["new"] if len(new) == 1 else [f"new{number}" for number in range(1, len(new) + 1)])
    references = [base, *new]
    runs, per_run = [], []
    with contextlib.ExitStack() as opened:
        databases = [_open(reference, opened, on_build) for reference in references]
        for label, reference, database, name in zip(labels, references, databases,
                                                    _readable(references, lambda: run_labels(databases))):
            # _readable calls the lambda before the next iteration: the loop's current values.
            run, data = _readable([reference], lambda: _read_database(label, reference, database, name))  # noqa: B023
            runs.append(run)
            per_run.append(data)
    sections = tuple(_section(spec, labels, [data[spec.name] for data in per_run], top) for spec in SECTIONS)
    return Comparison(tuple(runs), sections)


def resolve_run(reference: str) -> str:
    """The path of the run that `reference` names: the reference itself when it exists, else the
    ``run_dir`` of a sweep entry ``RESULTS.jsonl:FINGERPRINT[:REPEAT]``: the configuration with
    that fingerprint (or a unique prefix of it), its repeat REPEAT or else its first passing one.
    A relative run_dir is taken from the current directory, else from the results file's folder."""
    if os.path.exists(reference):
        return reference
    entry = _SWEEP_ENTRY.match(reference)
    if entry is None:
        raise RunNotFound(f"{reference} does not exist (give a run directory, its PERFPROF_OUTPUT folder, a "
                           "database file or a sweep entry RESULTS.jsonl:FINGERPRINT[:REPEAT])")
    results = entry["results"]
    if not os.path.isfile(results):
        raise RunNotFound(f"{reference}: no results file {results}")
    record = _sweep_record(read_results([results]), entry["fingerprint"], entry["repeat"], reference)
    if not record.run_dir:
        raise CompareError(f"{reference}: repeat {record.repeat} ({record.status}) recorded no run directory")
    found = record.run_dir if os.path.isabs(record.run_dir) or os.path.exists(record.run_dir) \
        else os.path.join(os.path.dirname(os.path.abspath(results)), record.run_dir)
    if not os.path.exists(found):
        raise CompareError(f"{reference}: its run directory {found} does not exist")
    return found


def _sweep_record(records: Sequence[RunRecord], fingerprint: str, repeat: Optional[str], reference: str) -> RunRecord:
    """The record a sweep entry names; CompareError says what is missing."""
    matching = [record for record in records if record.fingerprint.startswith(fingerprint)]
    if not matching:
        raise CompareError(f"{reference}: no configuration with fingerprint {fingerprint} in the results file")
    if len({record.fingerprint for record in matching}) > 1:
        raise CompareError(f"{reference}: fingerprint {fingerprint} is ambiguous: "
                           f"{', '.join(sorted({record.fingerprint for record in matching}))}")
    if repeat is not None:
        chosen = [record for record in matching if record.repeat == int(repeat)]
        if not chosen:
            raise CompareError(f"{reference}: the configuration has no repeat {repeat}")
        return chosen[0]
    passed = [record for record in matching if record.status == PASS]
    if not passed:
        raise CompareError(f"{reference}: no repeat of the configuration passed")
    return min(passed, key=lambda record: record.repeat)


def _open(reference: str, opened: contextlib.ExitStack,
          on_build: Optional[Callable[[str], None]] = None) -> "RunDatabase":
    """The database of the run `reference` names, open until `opened` closes."""
    from ..analysis import open_run

    return _readable([reference], lambda: opened.enter_context(open_run(resolve_run(reference), on_build=on_build)))


_T = TypeVar("_T")


def _readable(references: Sequence[str], read: Callable[[], _T]) -> _T:
    """`read()`, a database error (a corrupt database, or one of another tool) raised as a
    CompareError naming the runs read."""
    try:
        return read()
    except sqlite3.Error as error:
        raise CompareError(f"{', '.join(references)}: not a readable perfprof database: {error}") from None


def _read_database(label: str, reference: str, database: "RunDatabase",
                   name: str) -> Tuple[ComparedRun, Dict[str, Dict[Key, Values]]]:
    """The summary and section rows of the run `reference` from its open database."""
    from ..analysis import memory_peaks, step_statistics, step_times, top_kernels, top_operators

    summary = step_statistics(database).to_dicts()
    if not summary:
        raise CompareError(f"{reference}: the run recorded no steps ({database.path} has no STEP_TIME rows); "
                           f"profile with {how_to('steps')}")
    (statistics,) = summary
    steps = {(str(row["step"]),): (row["duration_ns"],) for row in step_times(database)}
    run = ComparedRun(label, reference, database.path, name, statistics["count"], statistics["avg_ns"],
                      statistics["median_ns"])
    data = {
        STEPS.name: {**{(name,): (statistics[column],) for name, column in _STEP_STATISTICS.items()}, **steps},
        OPERATORS.name: _rows(top_operators(database, top=_EVERY_NAME), OPERATORS),
        KERNELS.name: _rows(top_kernels(database, top=_EVERY_NAME), KERNELS),
        MEMORY.name: _rows(memory_peaks(database), MEMORY, keys=("deviceType", "category")),
    }
    return run, data


#: The top-N analyses' `top` for every name (SQLite's LIMIT -1: no limit).
_EVERY_NAME = -1


def _rows(table: "Table", spec: SectionSpec, keys: Optional[Tuple[str, ...]] = None) -> Dict[Key, Values]:
    """An analysis' rows as {key: measures}, its key columns named `keys` (default: the section's)."""
    return {tuple(row[key] for key in keys or spec.keys): tuple(row[measure] for measure in spec.measures)
            for row in table}


#: The rows on top of the steps section: step_statistics' columns, by the row's name.
_STEP_STATISTICS = {"mean": "avg_ns", "median": "median_ns", "p5": "p5_ns", "p95": "p95_ns"}

#: Rows the steps section keeps on top, before the rows ordered by regression.
_PINNED: Dict[str, Tuple[Key, ...]] = {STEPS.name: tuple((name,) for name in _STEP_STATISTICS)}


def _section(spec: SectionSpec, labels: Sequence[str], runs: Sequence[Dict[Key, Values]], top: int) -> ComparedSection:
    """The section's table from each run's rows: the pinned rows, then the rest by regression."""
    from ..analysis import Table

    pinned = _PINNED.get(spec.name, ())
    index = spec.measures.index(spec.compared)
    keys = {key for rows in runs for key in rows if key not in pinned}
    ordered = sorted(keys, key=lambda key: (-_regression(key, runs, index), tuple(map(str, key))))
    if spec.limited:
        ordered = ordered[:top]
    rows = [_row(key, runs, spec, index) for key in [*pinned, *ordered]]
    return ComparedSection(spec, Table.of(spec.name, spec.title, spec.columns(labels), rows))


def _regression(key: Key, runs: Sequence[Dict[Key, Values]], index: int) -> float:
    """How much a row grew: the largest (new - base) of the compared measure over the new runs,
    a run without the row counting 0 (so a row of one run only ranks by its own time)."""
    base = _value(runs[0].get(key), index) or 0
    return max((_value(rows.get(key), index) or 0) - base for rows in runs[1:])


def _row(key: Key, runs: Sequence[Dict[Key, Values]], spec: SectionSpec, index: int) -> Tuple[Any, ...]:
    """A table row: the key, each run's measures (empty where it lacks the row) and each new
    run's diff and ratio."""
    empty = (None,) * len(spec.measures)
    base = runs[0].get(key)
    cells = [*key, *(base or empty)]
    for rows in runs[1:]:
        values = rows.get(key)
        cells += [*(values or empty), *_diff_ratio(_value(base, index), _value(values, index))]
    return tuple(cells)


def _value(values: Optional[Values], index: int) -> Any:
    return None if values is None else values[index]


def _diff_ratio(base: Optional[float], new: Optional[float]) -> Tuple[Optional[float], Optional[float]]:
    """(new - base, new / base); None where a side is missing, the ratio None for a zero base."""
    if base is None or new is None:
        return None, None
    return new - base, (new / base if base else None)


def _ms(ns: float) -> str:
    return f"{ns / 1e6:,.3f} ms"
