"""Files perfprof writes whole: each goes to a temporary file beside its target, created
exclusively under a random name (so a link planted at a name perfprof would use is never
followed), then renamed into place (so no reader sees half a file). Outputs get mode 0640."""
from __future__ import annotations

import contextlib
import os
import tempfile
from typing import IO, Any, Iterator

#: The mode of the files perfprof writes (the C++ writers' too: export/output_file.cpp).
FILE_MODE = 0o640


@contextlib.contextmanager
def temporary_beside(path: str, mode: str = "w") -> Iterator["tuple[IO[Any], str]"]:
    """A new file open in `mode` beside `path` (``<name>.tmpXXXXXX``), and its path; removed
    when the block raises, and when it ends unless the block moved it away."""
    folder = os.path.dirname(os.path.abspath(path))
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f"{os.path.basename(path)}.tmp")
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


def create_once(path: str, text: str) -> None:
    """Create the file `path` holding `text`, atomically and only when no file is there:
    processes starting together never read half a file, and a file the user wrote is never
    replaced. The folder must exist."""
    if os.path.exists(path):
        return
    with temporary_beside(path) as (file, temporary):
        file.write(text)
        file.close()
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(temporary, path)  # fails when the name exists, unlike a rename
