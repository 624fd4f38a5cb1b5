"""Files and directories perfprof writes: every one of them, the ``perfprof`` commands' included.

Each file goes to a temporary file beside its target, created exclusively under a random name
(so a link planted at a name perfprof would use is never followed), then renamed into place (so
no reader sees half a file). The temporary name carries the writer's pid (``<name>.tmp<pid>-XXXXXX``,
the C++ writers' too), so the files of a writer that was killed are recognised and removed later
(:func:`remove_stale_temporaries`). Files get mode 0640 and the directories perfprof makes 0750,
whatever the umask; ``PERFPROF_FILE_MODE`` (octal, e.g. ``0644``) sets the file mode, the
directories getting the same plus search where it can read.

Which helper for which writer: :func:`replaced_whole` for a file written at once,
:func:`replaced_at_start` for one read while it grows (a log), :func:`appended` for a file that
collects lines over runs, :func:`written_by_library` for a file a library creates by its name
(DuckDB, matplotlib: they would create it with the umask's mode), :func:`make_directory` and
:func:`staging_directory` for folders.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import stat
import tempfile
from typing import IO, Any, Iterator, List, Optional

from ._logging import warn_once

_DEFAULT_FILE_MODE = 0o640


def _file_mode() -> int:
    """The mode PERFPROF_FILE_MODE names, when the owner can read and write with it (the rule of
    csrc/common/file_mode.cpp); else 0640, with a warning for a value refused."""
    text = os.environ.get("PERFPROF_FILE_MODE", "")
    if not text:
        return _DEFAULT_FILE_MODE
    try:
        mode = int(text, 8)
    except ValueError:
        mode = -1
    if 0 <= mode <= 0o777 and mode & 0o600 == 0o600:
        return mode
    warn_once("file-mode", f"perfprof: PERFPROF_FILE_MODE={text!r} is not an octal mode the owner can read and "
              f"write with (e.g. 0644); files are written with {_DEFAULT_FILE_MODE:04o}")
    return _DEFAULT_FILE_MODE


#: The mode of the files perfprof writes (the C++ writers' too: csrc/common/file_mode.cpp).
FILE_MODE = _file_mode()
#: The mode of the directories perfprof makes: FILE_MODE, searchable where readable.
DIR_MODE = FILE_MODE | (FILE_MODE & 0o444) >> 2

# A temporary file's name: its target's, ".tmp", the writer's pid, "-", then six (C++'s mkstemp) or
# eight (Python's) random characters.
_TEMPORARY = re.compile(r"\.tmp(\d+)-[A-Za-z0-9_]{6,8}$")


def make_directory(path: str, follow_link: bool = False) -> None:
    """Make `path` and its missing parents with DIR_MODE (directories already there are left as
    they are). A link at `path` is refused (``OSError``: a link planted where perfprof writes would
    send its files elsewhere) unless `follow_link`, for a folder the user named (a command's
    ``-o``). Raises ``OSError`` as ``os.makedirs`` does."""
    missing: List[str] = []
    if os.path.islink(path) and not (follow_link and os.path.isdir(path)):
        raise OSError(errno.ELOOP, "a symbolic link, not followed", path)
    folder = os.path.abspath(path)
    while not os.path.lexists(folder):
        missing.append(folder)
        folder = os.path.dirname(folder)
    if not os.path.isdir(folder):  # a file where a folder should be
        raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), path)
    for folder in reversed(missing):
        try:
            new_directory(folder)
        except FileExistsError:
            if not os.path.isdir(folder):
                raise
            # made by another process meanwhile: not ours to change


def new_directory(path: str) -> None:
    """Make the directory `path` with DIR_MODE whatever the umask; ``FileExistsError`` when
    something is there already (its parent must exist)."""
    os.mkdir(path, DIR_MODE)
    os.chmod(path, DIR_MODE)


def remove_stale_temporaries(folder: str) -> int:
    """Remove the temporary files and folders in `folder` whose writer is no longer running
    (killed while writing: SIGKILL, out of memory); returns how many. Those of live processes,
    links, and those of other users are left alone."""
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0
    for entry in entries:
        match = _TEMPORARY.search(entry.name)
        if match is None or _alive(int(match.group(1))):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if info.st_uid != os.getuid():
                continue
            if stat.S_ISREG(info.st_mode):
                os.remove(entry.path)
                removed += 1
            elif stat.S_ISDIR(info.st_mode):  # written_by_library's or staging_directory's
                shutil.rmtree(entry.path)
                removed += 1
        except OSError:
            pass
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _temporary_prefix(path: str) -> str:
    return f"{os.path.basename(path)}.tmp{os.getpid()}-"


@contextlib.contextmanager
def temporary_beside(path: str, mode: str = "w", newline: Optional[str] = None) -> Iterator["tuple[IO[Any], str]"]:
    """A new file open in `mode` beside `path` (``<name>.tmp<pid>-XXXXXX``), and its path;
    removed when the block raises, and when it ends unless the block moved it away. Text is
    UTF-8; `newline` as ``open()`` takes it (``""`` for the csv module)."""
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=_temporary_prefix(path))
    try:
        os.fchmod(descriptor, FILE_MODE)
        binary = "b" in mode
        with os.fdopen(descriptor, mode, encoding=None if binary else "utf-8",
                       newline=None if binary else newline) as file:
            yield file, temporary
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)


@contextlib.contextmanager
def replaced_whole(path: str, mode: str = "w", newline: Optional[str] = None) -> Iterator[IO[Any]]:
    """A file to write `path`'s new content into: it replaces `path` once the block ends, and is
    removed if the block raises (`path` is then left as it was)."""
    with temporary_beside(path, mode, newline) as (file, temporary):
        yield file
        file.close()
        os.replace(temporary, path)


@contextlib.contextmanager
def replaced_at_start(path: str, mode: str = "w") -> Iterator[IO[Any]]:
    """A new, empty file at `path` (replacing what was there) to write into while it is read: a
    log, which shows its lines as they come, and keeps them when its writer dies midway."""
    with temporary_beside(path, mode) as (file, temporary):
        os.replace(temporary, path)
        yield file


@contextlib.contextmanager
def appended(path: str) -> Iterator[IO[str]]:
    """The text file `path` open for appending; created with FILE_MODE when missing (a file
    already there keeps its mode: it may be the user's). A link at `path` is not followed
    (``OSError``)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags | os.O_CREAT | os.O_EXCL, FILE_MODE)
        os.fchmod(descriptor, FILE_MODE)  # os.open's mode passes through the umask
    except FileExistsError:
        descriptor = os.open(path, flags)
    with os.fdopen(descriptor, "a", encoding="utf-8") as file:
        yield file


@contextlib.contextmanager
def written_by_library(path: str) -> Iterator[str]:
    """The path to give a library that creates a file by its name (DuckDB's database and COPY,
    matplotlib's savefig, which create it with the umask's mode): `path`'s name, in a private
    folder beside it (``<name>.tmp<pid>-XXXXXXXX``, 0700: nothing there can be read or planted
    meanwhile). When the block ends the file gets FILE_MODE and replaces `path`; the folder goes,
    with what else the library left there (DuckDB's write-ahead log and spill files), whether
    the block ends or raises (`path` is then left as it was)."""
    private = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(path)), prefix=_temporary_prefix(path))
    try:
        written = os.path.join(private, os.path.basename(path))
        yield written
        os.chmod(written, FILE_MODE)
        os.replace(written, path)
    finally:
        shutil.rmtree(private, ignore_errors=True)


@contextlib.contextmanager
def staging_directory(path: str) -> Iterator[str]:
    """A new folder beside `path` (``<name>.tmp<pid>-XXXXXXXX``, DIR_MODE) to write a set of
    outputs into before they take `path`'s place (the block moves them); removed with whatever
    is left in it when the block ends or raises."""
    staging = tempfile.mkdtemp(dir=os.path.dirname(os.path.abspath(path)), prefix=_temporary_prefix(path))
    try:
        os.chmod(staging, DIR_MODE)
        yield staging
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def create_once(path: str, text: str) -> bool:
    """Create the file `path` holding `text`, atomically and only when no file is there:
    processes starting together never read half a file, and a file the user wrote is never
    replaced. The folder must exist. Whether this call made the file."""
    if os.path.exists(path):
        return False
    with temporary_beside(path) as (file, temporary):
        file.write(text)
        file.close()
        try:
            os.link(temporary, path)  # fails when the name exists, unlike a rename
        except FileExistsError:  # another process made it first
            return False
    return True
