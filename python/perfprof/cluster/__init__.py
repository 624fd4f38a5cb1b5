"""Cluster analysis: one view of the ranks of a distributed job (``perfprof cluster``).

Each rank writes its own run directory; :func:`analyse_cluster` finds them under a folder,
summarises each rank in parallel (the map step: its step breakdown, its collectives, its kernel
and operator totals, as small Parquet files; ``_map``), then joins them in DuckDB (the reduce
step; ``_reduce``): ``cluster_step_trace_time.csv``, ``cluster_communication.json``,
``cluster_communication_matrix.json``, all of it in ``cluster_analysis.duckdb``, the slow ranks
(``_slow_rank``) in ``cluster_report.md``, and optionally one merged trace. docs/cluster.md
describes every output.

Everything is written into a folder beside the output folder, and takes the place of an earlier
analysis's outputs only once all of it is written: an analysis that fails leaves no part of
itself, and the earlier one as it was.
"""
from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from .._files import make_directory, new_directory, remove_stale_temporaries, replaced_whole, staging_directory
from .._messages import listed
from ._execute import MODES, MissingDependencyError, default_jobs, map_runs
from ._map import RunSummary
from ._reduce import ClusterError
from ._slow_rank import Evidence, SlowRank

if TYPE_CHECKING:
    import duckdb

__all__ = ["analyse_cluster", "ClusterResult", "ClusterError", "MissingDependencyError", "RunSummary", "SlowRank",
           "Evidence", "DEFAULT_OUTPUT_DIR", "MODES", "Progress", "is_cluster_output", "slow_ranks_of"]

#: Where the outputs go by default, inside the folder analysed.
DEFAULT_OUTPUT_DIR = "cluster_analysis_output"
MERGED_TRACE_FILE = "cluster_trace.json.gz"
# The map step's Parquet files, inside the output folder.
_PARQUET_DIR = "ranks"


@dataclass(frozen=True)
class ClusterResult:
    """What :func:`analyse_cluster` wrote and found."""

    output_dir: str
    ranks: List[int]  # the ranks analysed
    runs: List[RunSummary]  # every run directory found, read or not (its error says why)
    slow_ranks: List[SlowRank]  # the verdict: empty when no rank is slow
    report: str  # cluster_report.md's text
    files: List[str] = field(default_factory=list)  # every file written
    notes: List[str] = field(default_factory=list)  # what was left out, and why


@dataclass
class Progress:
    """Callbacks for a long analysis: how many run directories were found, each one as the map
    step finishes it, then each later stage."""

    on_runs: Callable[[int], None] = lambda count: None
    on_run: Callable[[RunSummary], None] = lambda summary: None
    on_stage: Callable[[str], None] = lambda stage: None


def analyse_cluster(directory: "os.PathLike[str] | str", output_dir: "os.PathLike[str] | str | None" = None,
                    mode: str = "local", scheduler: Optional[str] = None, jobs: Optional[int] = None,
                    merge_trace: bool = False, progress: Optional[Progress] = None) -> ClusterResult:
    """Analyse the ranks whose run directories are under `directory`.

    Args:
        directory: a folder holding the run directories of one run of a distributed job, at any
            depth (one or more per rank: one per recorded cycle).
        output_dir: where the outputs go [default: ``directory/cluster_analysis_output``].
        mode: ``"local"``: the map step in `jobs` processes here; ``"dask"``: on a Dask cluster.
        scheduler: with ``mode="dask"``, the address of a running Dask scheduler
            (``tcp://host:8786``); without it, a Dask LocalCluster of `jobs` workers is started.
        jobs: run directories summarised at once [default: the CPUs available].
        merge_trace: also write one Chrome trace with a process per rank (``cluster_trace.json.gz``).
        progress: callbacks for progress displays.

    A run without a database gets one built from its capture or its Chrome trace. Runs that cannot be read are left
    out and named in the result's notes and the report. Raises :class:`ClusterError` when nothing
    can be analysed or the runs are not one job's, ``FileNotFoundError`` when `directory` holds
    no run directory, ``ValueError`` for a bad argument, ``OSError`` when the outputs cannot be
    written and :class:`MissingDependencyError` when DuckDB (or Dask, for ``mode="dask"``) is not
    installed. Whatever it raises, `output_dir` is left as it was.
    """
    if mode not in MODES:
        raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")
    if scheduler is not None and mode != "dask":
        raise ValueError("scheduler: a Dask scheduler's address is only used with mode='dask'")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs: expected a positive int, got {jobs!r}")
    _require("duckdb", "DuckDB")
    from ..analysis._run_database import find_runs

    directory = os.fspath(directory)
    output = os.fspath(output_dir) if output_dir is not None else os.path.join(directory, DEFAULT_OUTPUT_DIR)
    progress = progress or Progress()
    run_dirs = [run for run in find_runs(directory) if not _inside(run, output)]
    progress.on_runs(len(run_dirs))
    if os.path.lexists(output) and not os.path.isdir(output):
        raise NotADirectoryError(f"the output folder {output} is a file")
    parent = os.path.dirname(os.path.abspath(output))
    make_directory(parent, follow_link=True)
    remove_stale_temporaries(parent)  # what analyses killed while writing left beside it
    with staging_directory(output) as staging:
        parquet_dir = os.path.join(staging, _PARQUET_DIR)
        new_directory(parquet_dir)
        runs = []
        for summary in map_runs(run_dirs, parquet_dir, mode, jobs or default_jobs(), scheduler):
            progress.on_run(summary)
            runs.append(summary)
        runs.sort(key=lambda summary: summary.run_dir)
        analysed, notes = _usable_runs(runs)
        progress.on_stage("joining the ranks in DuckDB")
        result = _join_ranks(directory, staging, parquet_dir, analysed, runs, notes)
        if merge_trace:
            progress.on_stage("writing the merged trace")
            result.files.append(_merge_traces(analysed, staging, result.notes))
        _install(staging, output)
    return dataclasses.replace(result, output_dir=output,
                               files=[os.path.join(output, os.path.relpath(path, staging)) for path in result.files])


def _require(module: str, name: str) -> None:
    import importlib.util

    if importlib.util.find_spec(module) is None:
        raise MissingDependencyError(f"perfprof cluster needs {name}: pip install 'perfprof[cluster]'")


def _inside(path: str, folder: str) -> bool:
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return os.path.commonpath([path, folder]) == folder


def _install(staging: str, output: str) -> None:
    """Put the outputs written into `staging` in `output`: the folder itself when there is none;
    else, in place of an earlier analysis's outputs (anything else there is left alone)."""
    if not os.path.lexists(output):
        os.rename(staging, output)
        return
    _remove_outputs(output)
    for name in os.listdir(staging):
        os.replace(os.path.join(staging, name), os.path.join(output, name))


def _remove_outputs(output: str) -> None:
    """Remove what an earlier analysis wrote into `output`, so that none of it is taken for this one's."""
    from ._reduce import OUTPUT_FILES
    from ._report import REPORT_FILE

    shutil.rmtree(os.path.join(output, _PARQUET_DIR), ignore_errors=True)
    for name in (*OUTPUT_FILES, REPORT_FILE, MERGED_TRACE_FILE):
        if os.path.exists(os.path.join(output, name)):
            os.remove(os.path.join(output, name))


def _usable_runs(runs: List[RunSummary]) -> "tuple[List[RunSummary], List[str]]":
    """The runs to analyse, and notes on those left out; raises ClusterError when none is left
    or they are not of one job."""
    notes = [f"left out {summary.run_dir}: {summary.error}" for summary in runs if summary.error]
    read = [summary for summary in runs if not summary.error]
    notes += [f"left out {summary.run_dir}: no step was recorded (a cycle that ended in its warm-up, or in which "
              "the profiler stopped before a step ended: a tail is no step)" for summary in read if summary.steps == 0]
    analysed = [summary for summary in read if summary.steps > 0]
    if not analysed:
        raise ClusterError(f"no run directory with recorded steps could be read ({len(runs):,} found): "
                           + listed(notes))
    sizes: Dict[int, List[str]] = {}
    for summary in analysed:
        sizes.setdefault(summary.world_size, []).append(summary.run_dir)
    if len(sizes) > 1:
        raise ClusterError("the run directories come from jobs of different world sizes ("
                           + listed([f"{size}: {runs[0]}" + (f" and {len(runs) - 1:,} more" if len(runs) > 1 else "")
                                     for size, runs in sorted(sizes.items())])
                           + "): give perfprof cluster the folder of one job")
    (world_size,) = sizes
    missing = sorted(set(range(world_size)) - {summary.rank for summary in analysed})
    if missing:
        notes.append(f"no run directory for rank{'s' if len(missing) > 1 else ''} "
                     f"{listed([str(rank) for rank in missing], ', ', 20)} of the world size {world_size}")
    return analysed, notes


def _join_ranks(directory: str, output: str, parquet_dir: str, analysed: List[RunSummary], runs: List[RunSummary],
            notes: List[str]) -> ClusterResult:
    from ._map import parquet_files
    from ._reduce import DATABASE_FILE, check_steps_are_unique, derive_tables, load_tables, new_database, \
        write_files
    from ._report import REPORT_FILE, report
    from ._slow_rank import detect
    from ._tables import RANK_TABLES

    kept = {summary.run_dir for summary in analysed}
    with new_database(output) as connection:
        files = {table.name: parquet_files(parquet_dir, table) for table in RANK_TABLES}
        load_tables(connection, files, sorted(kept))
        check_steps_are_unique(connection)
        derive_tables(connection)
        written = write_files(connection, output)
        slow = detect(connection)
        text = report(connection, directory, slow, notes)
    report_path = os.path.join(output, REPORT_FILE)
    with replaced_whole(report_path) as file:
        file.write(text)
    ranks = sorted({summary.rank for summary in analysed if summary.rank is not None})
    return ClusterResult(output, ranks, runs, slow, text,
                         [os.path.join(output, DATABASE_FILE), *written, report_path], notes)


def _merge_traces(analysed: List[RunSummary], output: str, notes: List[str]) -> str:
    from ._merged_trace import write_merged_trace

    ranked = sorted((summary.rank, summary.run_dir) for summary in analysed if summary.rank is not None)
    merged = write_merged_trace(ranked, os.path.join(output, MERGED_TRACE_FILE))
    notes += [f"merged trace: left out {skipped}" for skipped in merged.skipped]
    return merged.path


def slow_ranks_of(output_dir: "os.PathLike[str] | str") -> Dict[str, Any]:
    """The verdict on slow ranks a cluster analysis wrote into `output_dir`, from its database:
    ``{"verdict": sentence, "slow_ranks": [{"rank", "confidence", "dimensions", "summary",
    "evidence": [a dict of slow_rank_evidence's columns per dimension]}]}``."""
    _require("duckdb", "DuckDB")
    import duckdb

    from ._reduce import DATABASE_FILE

    connection = duckdb.connect(os.path.join(os.fspath(output_dir), DATABASE_FILE), read_only=True)
    try:
        row = connection.execute("SELECT verdict FROM slow_rank_verdict").fetchone()
        assert row is not None  # the table's one row
        ranks = _rows(connection, "SELECT * FROM slow_ranks")
        evidence = _rows(connection, "SELECT * FROM slow_rank_evidence")
    finally:
        connection.close()
    for rank in ranks:
        rank["evidence"] = [item for item in evidence if item["rank"] == rank["rank"]]
    return {"verdict": row[0], "slow_ranks": ranks}


def _rows(connection: "duckdb.DuckDBPyConnection", query: str) -> List[Dict[str, Any]]:
    cursor = connection.execute(query)
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def is_cluster_output(path: "os.PathLike[str] | str") -> bool:
    """Whether `path` is the output folder of a cluster analysis (holds cluster_report.md)."""
    from ._report import REPORT_FILE

    return os.path.isfile(os.path.join(os.fspath(path), REPORT_FILE))
