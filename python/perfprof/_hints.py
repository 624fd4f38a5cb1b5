"""How to record what a run lacks, said in the words of where the user is: the ``profile()``
argument in a script, the ``perfprof run`` flag on the command line. The ``perfprof`` command
switches to its words (:func:`use_command_line`) before it does anything; everything else gets
the Python ones."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Hint:
    """One way to record something: as a script profiles, and as ``perfprof run`` does."""

    python: str
    command_line: str


#: Every hint by what it records.
HINTS = {
    "steps": Hint("a schedule, and prof.step() once per step",
                  "`perfprof run`: a step per optimizer.step(), or --steps-on explicit"),
    "operators": Hint("ProfilerActivity.CPU", "`perfprof run --activities cpu`"),
    "gpu": Hint("ProfilerActivity.CUDA on a GPU", "`perfprof run --activities cpu,cuda` on a GPU"),
    "memory": Hint("profile_memory=True", "`perfprof run --profile-memory`"),
    "host_telemetry": Hint("ExperimentalConfig(host_sys=[...])", "`perfprof run --host-sys cpu,mem,disk,network`"),
    "gpu_telemetry": Hint("ExperimentalConfig(gpu_telemetry=True) on a GPU", "`perfprof run --gpu-telemetry` on a GPU"),
}

_on_command_line = False


def use_command_line() -> Callable[[], None]:
    """From now on, hints name ``perfprof run``'s flags (the perfprof command calls it); returns
    the function that puts back the words used before (a command run in-process, by a test or
    a notebook, leaves the process as it found it)."""
    global _on_command_line
    before, _on_command_line = _on_command_line, True

    def restore() -> None:
        global _on_command_line
        _on_command_line = before

    return restore


def how_to(name: str) -> str:
    """How to record `name` (a key of :data:`HINTS`), where the user is."""
    hint = HINTS[name]
    return hint.command_line if _on_command_line else hint.python
