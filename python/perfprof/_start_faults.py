"""Test-only failures at the stages of starting a collection.

Each stage of a start (the session's claim of the recorder, the collectors' starts and the
CUPTI, torch and Python-tracer hooks inside them, the recording limit, the window, the run
directory, the capture file, the exit notice: ``_session.start_stages()`` lists them in order)
calls :func:`reached` once it has done its work. A test names a stage in :data:`failing` (see
:func:`failing_at`) and that stage then raises :class:`InjectedFault`, as if its last call had
failed after taking what it took, so the test sees whether everything done so far is undone and
the process can profile again (tests/python/test_start_faults.py). Outside tests ``failing``
stays None: a start pays one comparison per stage; steps and events pay nothing.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Optional

#: The stage that fails, by name; None: none (always, outside tests).
failing: Optional[str] = None


class InjectedFault(RuntimeError):
    """The failure a test asked for at a stage."""


def reached(stage: str) -> None:
    """`stage` has done its work: raise InjectedFault when a test asked it to fail."""
    if failing == stage:
        raise InjectedFault(f"failure injected at {stage}")


@contextlib.contextmanager
def failing_at(stage: str) -> Iterator[None]:
    """Make `stage` fail at each start inside the block."""
    global failing
    failing = stage
    try:
        yield
    finally:
        failing = None
