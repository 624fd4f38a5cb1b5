"""The step schedule: ProfilerAction and schedule()."""
from __future__ import annotations

import enum
import numbers

from . import _core
from ._logging import logger


class ProfilerAction(enum.Enum):
    """What the profiler does during one step."""

    NONE = 0
    """Not collecting."""
    WARMUP = 1
    """Collecting, but what is recorded is discarded (lets collection overheads settle)."""
    RECORD = 2
    """Collecting and keeping."""
    RECORD_AND_SAVE = 3
    """Collecting and keeping; the cycle's trace is handed to ``on_trace_ready`` after this step."""


_ACTIONS = tuple(ProfilerAction)


class Schedule:
    """A callable ``step -> ProfilerAction``; build one with :func:`schedule`."""

    __slots__ = ("_impl",)

    def __init__(self, impl: "_core.Schedule") -> None:
        self._impl = impl

    def __call__(self, step: int) -> ProfilerAction:
        if not isinstance(step, numbers.Integral) or isinstance(step, bool):
            raise TypeError(f"schedule: step must be an int, got {type(step).__name__}")
        return _ACTIONS[self._impl.action_at(int(step))]

    def __repr__(self) -> str:
        return self._impl.describe()


def schedule(
    wait: int,
    active: int,
    warmup: int = 0,
    repeat: int = 0,
    skip_first: int = 0,
    skip_first_wait: int = 0,
) -> Schedule:
    """Return the schedule callable a profiler's ``schedule=`` argument takes.

    The profiler skips the first ``skip_first`` steps, then repeats cycles of ``wait`` idle steps,
    ``warmup`` warm-up steps and ``active`` recorded steps; the last active step of a cycle is
    ``RECORD_AND_SAVE``, after which ``on_trace_ready`` receives the cycle's trace. ``repeat``
    cycles are run (0: until the profiler stops). With ``skip_first_wait`` non-zero, the first
    cycle starts without its wait steps.

    The action for every step is the one ``torch.profiler.schedule`` gives for the same arguments.
    Invalid arguments raise ``ValueError`` (negative counts, ``active < 1``) or ``TypeError``.
    """
    values = {
        "wait": wait,
        "active": active,
        "warmup": warmup,
        "repeat": repeat,
        "skip_first": skip_first,
        "skip_first_wait": skip_first_wait,
    }
    for field, value in values.items():
        if not isinstance(value, numbers.Integral) or isinstance(value, bool):
            raise TypeError(f"schedule: '{field}' must be an int, got {type(value).__name__}")
        if value >= _STEP_LIMIT:  # steps are counted in int64 (negative values: the core's ValueError)
            raise ValueError(f"schedule: '{field}' must be below 2**63, got {value}")
    result = Schedule(_core.Schedule(**{k: int(v) for k, v in values.items()}))
    if warmup == 0:
        logger.info("perfprof: schedule without warm-up steps; the first recorded step may be slower")
    return result


_STEP_LIMIT = 2 ** 63


def action_from(value: object, step: int) -> ProfilerAction:
    """Normalise what a schedule returned (perfprof's or torch's ProfilerAction)."""
    if isinstance(value, ProfilerAction):
        return value
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in ProfilerAction.__members__:
        return ProfilerAction[name]
    raise ValueError(f"schedule returned {value!r} for step {step}; expected a ProfilerAction")
