"""Files perfprof creates for the user to edit (a config template, a plot configuration)."""
from __future__ import annotations

import os


def create_once(path: str, text: str) -> None:
    """Create the file `path` holding `text`, atomically and only when no file is there:
    processes starting together never read half a file, and a file the user wrote is never
    replaced. The folder must exist."""
    if os.path.exists(path):
        return
    temporary = f"{path}.{os.getpid()}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        file.write(text)
    try:
        os.link(temporary, path)  # fails when the name exists, unlike a rename
    except FileExistsError:
        pass  # another process made it first
    finally:
        os.remove(temporary)
