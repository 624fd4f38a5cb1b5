"""Paths as a terminal report shows them: short enough for its width, the end kept (the run's
own name), the whole path in the machine formats."""
from __future__ import annotations

import os
from typing import Optional

#: Stands for the components left out of a path too long for its room.
ELLIPSIS = "…"


def readable_path(path: str, room: int) -> str:
    """`path` for a reader: the shortest of it relative to the working directory (when below
    it), from ``~`` and absolute; when still longer than `room` characters, its leading folders
    give way to ``…/`` one at a time (its last component is always kept whole)."""
    shown = _relative_or_home(path)
    parts = shown.split(os.sep)
    for first_kept in range(1, len(parts)):
        if len(shown) <= room:
            break
        shown = os.path.join(ELLIPSIS, *parts[first_kept:])
    return shown


def within(path: str, folder: str) -> Optional[str]:
    """`path` relative to `folder` when it lies in it (a run's ``PERFPROF_OUTPUT/perfprof.db``),
    else None."""
    if not os.path.isdir(folder):
        return None
    relative = os.path.relpath(path, folder)
    return None if _is_outside(relative) else relative


def _is_outside(relative: str) -> bool:
    return relative == os.pardir or relative.startswith(os.pardir + os.sep)


def _relative_or_home(path: str) -> str:
    """The shortest of `path` relative to the working directory (when below it), from ``~``
    (when below the home directory) and absolute."""
    absolute = os.path.abspath(path)
    forms = [absolute]
    relative = os.path.relpath(absolute)
    if not _is_outside(relative):
        forms.append(relative)
    home = os.path.expanduser("~")
    if home not in ("", os.sep) and absolute.startswith(home + os.sep):
        forms.append("~" + absolute[len(home):])
    return min(forms, key=len)
