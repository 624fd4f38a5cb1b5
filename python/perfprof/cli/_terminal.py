"""The console the commands print their reports on (stdout)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console


def report_console(**options: Any) -> "Console":
    """A rich Console on stdout (`options` as rich's Console takes them) whose closed pipe ends the
    command as the perfprof group ends it (exit 0, see ``perfprof.cli``), where rich would exit 1."""
    from rich.console import Console

    class _ReportConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True  # nothing more to write: the reader is gone
            raise BrokenPipeError

    return _ReportConsole(**options)
