"""Opening a run's database for the analyses: found in a run directory (or given as a file),
built from the run's capture when the run was written without one."""
from __future__ import annotations

import glob
import os
import sqlite3
import threading
from concurrent.futures import Future
from typing import Any, Callable, Dict, List, Mapping, Optional

from .._run_directory import CAPTURE_FILE, OUTPUT_DIR, RUN_DIR_SUFFIX, TRACE_SUFFIX
from ._sql import query_text
from ._table import Table

#: The database schema the shipped queries need (META_DATA ``schema_version``; docs/formats/database.md).
SCHEMA_VERSION = 5


class OutdatedDatabaseError(ValueError):
    """A run database written by an older perfprof, whose tables lack what the analyses read."""


class RunDatabase:
    """A run's SQLite database, opened read-only. Use :func:`open_run` to get one.

    Safe to share between threads: each thread queries through its own connection (SQLite
    readers do not block each other, and Python's sqlite3 lets other threads run meanwhile), so
    :func:`perfprof.analysis.run_analyses` runs analyses side by side on one RunDatabase.
    """

    def __init__(self, path: str, run_dir: Optional[str]) -> None:
        self.path = path
        self.run_dir = run_dir
        self._per_thread = threading.local()
        self._connections: Optional[List[sqlite3.Connection]] = []
        self._lock = threading.Lock()
        self._shared: Dict[str, "Future[Table]"] = {}
        self._tables = {name for (name,) in self._connection().execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}

    def _connection(self) -> sqlite3.Connection:
        """This thread's connection, opened on its first query."""
        connection = getattr(self._per_thread, "connection", None)
        if connection is None:
            # Read-only through a URI: the analyses never change a run's data. Used by this
            # thread only; close() may run on another, hence check_same_thread=False.
            connection = sqlite3.connect(f"file:{_uri_path(self.path)}?mode=ro", uri=True, check_same_thread=False)
            with self._lock:
                if self._connections is None:
                    connection.close()
                    raise sqlite3.ProgrammingError(f"{self!r} is closed")
                self._connections.append(connection)
            self._per_thread.connection = connection
        return connection

    def has_table(self, table: str) -> bool:
        """Whether the database has this table (databases of older perfprof versions may not)."""
        return table in self._tables

    def has_rows(self, table: str) -> bool:
        """Whether the table exists and holds at least one row."""
        return self.has_table(table) and self._connection().execute(
            f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is not None

    def query(self, sql_name: str, title: str, params: Optional[Mapping[str, Any]] = None,
              name: Optional[str] = None) -> Table:
        """Run the shipped query ``sql/<sql_name>.sql`` with its named parameters."""
        return self.execute(query_text(sql_name), name or sql_name, title, params)

    def shared_query(self, sql_name: str, title: str) -> Table:
        """The shipped query ``sql/<sql_name>.sql`` (no parameters), run once for this database
        however many analyses (and threads) ask for it: several analyses derive from one pass."""
        with self._lock:
            known = self._shared.get(sql_name)
            pending = known or self._shared.setdefault(sql_name, Future())
        if known is None:  # this thread runs it; others asking meanwhile wait for its result
            try:
                pending.set_result(self.query(sql_name, title))
            except BaseException as error:
                pending.set_exception(error)
        return pending.result()

    def execute(self, sql: str, name: str, title: str, params: Optional[Mapping[str, Any]] = None) -> Table:
        """Run one SQL statement; its result as a :class:`Table`."""
        cursor = self._connection().execute(sql, dict(params or {}))
        columns = [description[0] for description in cursor.description or ()]
        return Table.of(name, title, columns, cursor.fetchall())

    def close(self) -> None:
        """Close the connections of every thread that queried."""
        with self._lock:
            connections, self._connections = self._connections, None
        for connection in connections or ():
            connection.close()

    def __enter__(self) -> "RunDatabase":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RunDatabase({self.path!r})"


def open_run(path: "os.PathLike[str] | str", build: bool = True,
             on_build: Optional[Callable[[str], None]] = None) -> RunDatabase:
    """Open the database of a run for the analyses.

    Args:
        path: a run directory (``{worker}_{timestamp}_perfprof``), its ``PERFPROF_OUTPUT``
            folder, a database file (``perfprof.db``, ``perfprof_{rank}.db``), or a Chrome trace
            file that torch.profiler, Kineto or perfprof wrote (``.json``, ``.json.gz``).
        build: when the run has no database, build it first: from the run directory's capture,
            else from its Chrome trace (``PERFPROF_OUTPUT/perfprof.db``); a trace file's in
            perfprof's import cache (``perfprof._trace_import``). With False, a run without a
            database is an error.
        on_build: called with one line saying what is built, from what and where, before a
            database is built (progress messages).

    A database written by an older perfprof (schema before :data:`SCHEMA_VERSION`) is rebuilt
    the same way (unless `build` is False).

    Raises ``FileNotFoundError`` when `path` does not exist or the run has neither a database
    nor a capture or trace to build one from, :class:`OutdatedDatabaseError` for an older
    database that cannot be rebuilt, each with what to do instead, and ``ValueError`` (naming the
    file and what is wrong) for a trace that cannot be read.
    """
    from .._trace_import import build_database_from_trace, database_of_trace, is_trace_file, trace_of_run

    path = os.fspath(path)
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path} does not exist")
    if os.path.isfile(path):
        if is_trace_file(path):
            if not build:
                raise FileNotFoundError(f"{path} is a trace, not a database: open it with build=True to import it")
            return RunDatabase(database_of_trace(path, SCHEMA_VERSION, on_build), None)
        folder = os.path.dirname(os.path.abspath(path))  # a run's PERFPROF_OUTPUT, or anywhere
        version = _schema_version(path)
        if 0 < version < SCHEMA_VERSION:  # 0: a database of another tool, queried as it is
            raise _outdated_error(path, version,
                                  os.path.dirname(folder) if os.path.basename(folder) == OUTPUT_DIR else None)
        return RunDatabase(path, None)
    run_dir = os.path.dirname(os.path.normpath(path)) if os.path.basename(os.path.normpath(path)) == OUTPUT_DIR \
        else path
    if not is_run_dir(run_dir):  # a folder holding one run (`perfprof run -o DIR`'s): that run
        return open_run(_only_run_under(run_dir), build, on_build)
    found = database_of(run_dir)
    version = _schema_version(found) if found else 0
    if found and version >= SCHEMA_VERSION:
        return RunDatabase(found, run_dir)
    if build and os.path.isfile(os.path.join(run_dir, CAPTURE_FILE)):
        from .._analyse import build_database

        if on_build:
            on_build(f"building the database of {run_dir} from its capture")
        return RunDatabase(build_database(run_dir), run_dir)
    trace = trace_of_run(run_dir)
    if build and trace and (not found or version):  # a database of another tool is left as it is
        return RunDatabase(build_database_from_trace(run_dir, trace, on_build), run_dir)
    if found and version:
        raise _outdated_error(found, version, run_dir)
    if found:  # no schema version: a database of another tool, queried as it is
        return RunDatabase(found, run_dir)
    raise FileNotFoundError(
        f"{run_dir} has no database ({OUTPUT_DIR}/perfprof.db), no capture ({CAPTURE_FILE}) and no Chrome trace "
        f"({OUTPUT_DIR}/*{TRACE_SUFFIX}) to build one from")


def _only_run_under(folder: str) -> str:
    """The one run at or under `folder`; NoRunError when there is none, ValueError naming them
    when there are several."""
    runs = find_runs(folder)
    if len(runs) > 1:
        shown = ", ".join(runs[:3]) + (f" and {len(runs) - 3} more" if len(runs) > 3 else "")
        raise ValueError(f"{folder} holds {len(runs)} runs ({shown}): name one of them")
    return runs[0]


class NoRunError(FileNotFoundError):
    """A path that is, or holds, no run directory."""


def is_run_dir(path: str) -> bool:
    """Whether `path` is a run directory (holds ``PERFPROF_OUTPUT/`` or ``capture.ppcap``)."""
    return os.path.isdir(os.path.join(path, OUTPUT_DIR)) or os.path.isfile(os.path.join(path, CAPTURE_FILE))


def find_runs(path: str) -> List[str]:
    """The run directories at or under `path` (``*_perfprof*`` folders, at any depth), sorted; a
    run directory's own folders are not searched. Where there is none, the Chrome traces at or
    under `path` (``*.pt.trace.json[.gz]``: torch's tensorboard_trace_handler writes a folder of
    them), each a run; a trace file is a run itself. Raises :class:`NoRunError` when there is
    neither."""
    from .._trace_import import TRACE_FILE_SUFFIXES, is_trace_file

    if os.path.isfile(path) and is_trace_file(path):
        return [path]
    if not os.path.isdir(path):
        raise NoRunError(f"{path}: no such directory")
    if is_run_dir(path):
        return [path]
    found = []
    for root, folders, _ in os.walk(path):
        runs = [folder for folder in folders if RUN_DIR_SUFFIX in folder and is_run_dir(os.path.join(root, folder))]
        found += [os.path.join(root, folder) for folder in runs]
        folders[:] = [folder for folder in folders if folder not in runs]
    if not found:
        found = [os.path.join(root, name) for root, _, files in os.walk(path) for name in files
                 if name.endswith(TRACE_FILE_SUFFIXES)]
    if not found:
        raise NoRunError(f"{path}: no run directory there (a *{RUN_DIR_SUFFIX}* folder holding {OUTPUT_DIR}/ "
                         f"or {CAPTURE_FILE}) and no Chrome trace (*{TRACE_SUFFIX}[.gz]); profile with "
                         "tensorboard_trace_handler or `perfprof run` first")
    return sorted(found)


def database_of(run_dir: str) -> Optional[str]:
    """The database file of a run directory (``PERFPROF_OUTPUT/perfprof.db`` or ``perfprof_{rank}.db``), if any."""
    found = sorted(glob.glob(os.path.join(glob.escape(run_dir), OUTPUT_DIR, "perfprof*.db")))
    return found[0] if found else None


def _schema_version(database: str) -> int:
    """META_DATA's ``schema_version`` of `database`; 0 when it has none (not a perfprof database)."""
    connection = sqlite3.connect(f"file:{_uri_path(database)}?mode=ro", uri=True)
    try:
        row = connection.execute("SELECT value FROM META_DATA WHERE name = 'schema_version'").fetchone()
    except sqlite3.OperationalError:  # no META_DATA table
        row = None
    finally:
        connection.close()
    try:
        return int(row[0]) if row else 0
    except ValueError:
        return 0


def _outdated_error(database: str, version: int, run_dir: Optional[str]) -> OutdatedDatabaseError:
    """The error for `database` of schema `version`, with what to do about it."""
    from .._trace_import import trace_of_run

    if run_dir and os.path.isfile(os.path.join(run_dir, CAPTURE_FILE)):
        how = f"run `perfprof analyse {run_dir}` to rebuild it from the run's capture"
    elif run_dir and trace_of_run(run_dir):
        how = f"give the run directory {run_dir} instead: it is rebuilt from the run's Chrome trace"
    else:
        how = "the run kept neither its capture nor its Chrome trace to rebuild it from: profile it again"
    return OutdatedDatabaseError(
        f"{database} was written by an older perfprof (database schema {version}; the analyses need "
        f"{SCHEMA_VERSION}): {how}")


def _uri_path(path: str) -> str:
    from urllib.parse import quote

    return quote(os.path.abspath(path))
