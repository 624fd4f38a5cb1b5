"""Run databases built from Chrome traces: every trace is an input.

A run directory written with the default options keeps its Chrome trace and neither a database
nor (data_simplification) its capture; torch.profiler writes traces alone
(``export_chrome_trace``, ``tensorboard_trace_handler``: ``*.pt.trace.json[.gz]``). The C++ core
reads such a trace in one streaming pass into the trace model a capture gives
(``_core.import_trace``), and the database is written from it by the one database exporter.

Where the database goes:

* a run directory's: ``PERFPROF_OUTPUT/perfprof[_rank].db``, where it would have been written
  at stop (the folder is perfprof's own);
* a trace file's: the import cache, ``$PERFPROF_CACHE_DIR`` or ``$XDG_CACHE_HOME/perfprof``
  (``~/.cache/perfprof``), under ``imported/``, one database per trace path, rebuilt when the
  trace changes (its size or modification time): nothing is written beside a file the user
  names. Every build is announced (``on_build``) with the path it writes.
"""
from __future__ import annotations

import glob
import hashlib
import json
import os
import sqlite3
from typing import Any, Callable, Dict, List, Optional, Tuple

from ._run_directory import INFO_FILE, METADATA_FILE, OUTPUT_DIR, TRACE_SUFFIX, database_file_name, write_database

#: What a Chrome trace file's name ends with (a run directory's, tensorboard_trace_handler's).
TRACE_FILE_SUFFIXES = (TRACE_SUFFIX, TRACE_SUFFIX + ".gz")
_SQLITE_MAGIC = b"SQLite format 3\x00"
_DATABASE_SUFFIXES = (".db", ".sqlite", ".sqlite3")
#: META_DATA row naming the trace a database was imported from (path, size, mtime_ns).
IMPORTED_FROM = "imported_trace"


def is_trace_file(path: str) -> bool:
    """Whether the file at `path` is to be read as a Chrome trace: not an SQLite database by its
    header, nor named as one (``.db``: a damaged database is reported as a database)."""
    if path.lower().endswith(_DATABASE_SUFFIXES):
        return False
    with open(path, "rb") as file:
        return file.read(len(_SQLITE_MAGIC)) != _SQLITE_MAGIC


def trace_of_run(run_dir: str) -> Optional[str]:
    """The Chrome trace of a run directory (``PERFPROF_OUTPUT/*.pt.trace.json[.gz]``, the one
    profiler_info.json names first), if it has one."""
    named = _read_json(os.path.join(run_dir, INFO_FILE)).get("trace_file")
    if isinstance(named, str) and os.path.isfile(os.path.join(run_dir, named)):
        return os.path.join(run_dir, named)
    found = sorted(path for suffix in TRACE_FILE_SUFFIXES
                   for path in glob.glob(os.path.join(glob.escape(run_dir), OUTPUT_DIR, "*" + suffix)))
    return found[0] if found else None


def build_database_from_trace(run_dir: str, trace_path: str,
                              on_build: Optional[Callable[[str], None]] = None) -> str:
    """Write a run directory's database from its Chrome trace (where the run would have written
    it); the run's profiler_info.json and profiler_metadata.json complete what the trace says.
    Returns its path; raises ``ValueError`` for a trace that cannot be read, ``OSError`` when the
    database cannot be written."""
    info = _read_json(os.path.join(run_dir, INFO_FILE))
    trace, metadata, rank, world_size, backend, notes = _import(trace_path)
    rank, world_size = int(info.get("rank", rank)), int(info.get("world_size", world_size))
    if on_build:
        on_build(f"building the database of {run_dir} from its Chrome trace "
                 f"({os.path.join(OUTPUT_DIR, database_file_name(rank, world_size))})")
    _log_notes(trace_path, notes)
    environment = _read_json(os.path.join(run_dir, METADATA_FILE)).get("environment_variables")
    return write_database(trace, run_dir, metadata + [_imported_from(trace_path)], rank, world_size,
                          str(info.get("backend", backend)), info.get("config", {}), environment)


def database_of_trace(trace_path: str, schema_version: int,
                      on_build: Optional[Callable[[str], None]] = None) -> str:
    """The database of a Chrome trace file, from the import cache (see the module's docs), built
    first when the cache has none for the trace as it is now, or one of a schema before
    `schema_version`. Raises ``ValueError`` for a trace that cannot be read, ``OSError`` when the
    database cannot be written."""
    from ._files import make_directory

    database = os.path.join(cache_dir(), "imported",
                            hashlib.sha256(os.path.realpath(trace_path).encode()).hexdigest()[:24] + ".db")
    cached = _meta_data(database) if os.path.isfile(database) else {}
    if cached.get(IMPORTED_FROM) == _imported_from(trace_path)[1] and \
            int(cached.get("schema_version", "0")) >= schema_version:
        return database
    if on_build:
        on_build(f"importing {trace_path} (its database is cached in {database})")
    trace, metadata, rank, world_size, backend, notes = _import(trace_path)
    _log_notes(trace_path, notes)
    make_directory(os.path.dirname(database))
    trace.export_database(database, metadata + [_imported_from(trace_path)], rank, world_size, backend)
    return database


def cache_dir() -> str:
    """perfprof's cache folder: ``$PERFPROF_CACHE_DIR``, else ``$XDG_CACHE_HOME/perfprof``, else
    ``~/.cache/perfprof``."""
    explicit = os.environ.get("PERFPROF_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "perfprof")


def _import(trace_path: str) -> Tuple[Any, List[Tuple[str, str]], int, int, str, str]:
    from . import _core

    trace, metadata, rank, world_size, backend, notes = _core.import_trace(trace_path)
    return trace, list(metadata), rank, world_size, backend, notes


def _log_notes(trace_path: str, notes: str) -> None:
    """What the trace lacks, said once (one line) as it is imported."""
    if notes:
        from ._logging import logger

        logger.warning("perfprof: %s: %s", trace_path, notes)


def _imported_from(trace_path: str) -> Tuple[str, str]:
    """The META_DATA row naming the trace as it is now: a database is current while it matches."""
    status = os.stat(trace_path)
    return IMPORTED_FROM, json.dumps({"path": os.path.realpath(trace_path), "size": status.st_size,
                                      "mtime_ns": status.st_mtime_ns})


def _meta_data(database: str) -> Dict[str, str]:
    """The META_DATA rows of a cached database; none for one cut short or foreign (built again)."""
    from urllib.parse import quote

    try:
        connection = sqlite3.connect(f"file:{quote(os.path.abspath(database))}?mode=ro", uri=True)
        try:
            return {str(name): str(value) for name, value in connection.execute("SELECT name, value FROM META_DATA")}
        finally:
            connection.close()
    except sqlite3.Error:
        return {}


def _read_json(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as file:
            value = json.load(file)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
