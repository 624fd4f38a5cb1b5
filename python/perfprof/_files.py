"""Files and directories perfprof writes.

Each file goes to a temporary file beside its target, created exclusively under a random name
(so a link planted at a name perfprof would use is never followed), then renamed into place (so
no reader sees half a file). The temporary name carries the writer's pid (``<name>.tmp<pid>-XXXXXX``,
the C++ writers' too), so the files of a writer that was killed are recognised and removed later
(:func:`remove_stale_temporaries`). Files get mode 0640 and the directories perfprof makes 0750,
whatever the umask; ``PERFPROF_FILE_MODE`` (octal, e.g. ``0644``) sets the file mode, the
directories getting the same plus search where it can read.
"""
from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
from typing import IO, Any, Iterator, List

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


def make_directory(path: str) -> None:
    """Make `path` and its missing parents with DIR_MODE (directories already there are left as
    they are). Raises ``OSError`` as ``os.makedirs`` does."""
    missing: List[str] = []
    if os.path.islink(path):  # a link planted where perfprof writes would send its files elsewhere
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
    """Remove the temporary files in `folder` whose writer is no longer running (killed while
    writing: SIGKILL, out of memory); returns how many. Files of live processes, links, and
    files of other users are left alone."""
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
            if stat.S_ISREG(info.st_mode) and info.st_uid == os.getuid():
                os.remove(entry.path)
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


@contextlib.contextmanager
def temporary_beside(path: str, mode: str = "w") -> Iterator["tuple[IO[Any], str]"]:
    """A new file open in `mode` beside `path` (``<name>.tmp<pid>-XXXXXX``), and its path;
    removed when the block raises, and when it ends unless the block moved it away."""
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f"{os.path.basename(path)}.tmp{os.getpid()}-")
    try:
        os.fchmod(descriptor, FILE_MODE)
        encoding = None if "b" in mode else "utf-8"
        with os.fdopen(descriptor, mode, encoding=encoding) as file:
            yield file, temporary
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.remove(temporary)


@contextlib.contextmanager
def replaced_whole(path: str, mode: str = "w") -> Iterator[IO[Any]]:
    """A file to write `path`'s new content into: it replaces `path` once the block ends, and is
    removed if the block raises (`path` is then left as it was)."""
    with temporary_beside(path, mode) as (file, temporary):
        yield file
        file.close()
        os.replace(temporary, path)


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
