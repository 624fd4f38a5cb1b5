"""The step schedule: ProfilerAction and schedule()."""
from __future__ import annotations

import enum
import numbers
from typing import Callable, Dict, Optional

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

    __slots__ = ("_impl", "parameters")

    def __init__(self, impl: "_core.Schedule", parameters: Dict[str, int]) -> None:
        self._impl = impl
        #: The arguments it was built with: wait, active, warmup, repeat, skip_first, skip_first_wait.
        self.parameters = dict(parameters)

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
    parameters = {k: int(v) for k, v in values.items()}
    result = Schedule(_core.Schedule(**parameters), parameters)
    if warmup == 0:
        logger.info("perfprof: schedule without warm-up steps; the first recorded step may be slower")
    return result


_STEP_LIMIT = 2 ** 63


#: The parameters a schedule is described by, in the order a reader thinks of a cycle.
_DESCRIBED = ("wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait")


def describe_schedule(value: Callable[[int], object]) -> str:
    """A schedule as a person reads it: ``wait=1 warmup=1 active=2 repeat=1 skip_first=1``
    (``skip_first_wait`` only when set), for perfprof's schedules and torch.profiler's alike;
    another callable by its qualified name."""
    parameters = value.parameters if isinstance(value, Schedule) else _torch_schedule_parameters(value)
    if parameters is None:
        return f"{getattr(value, '__module__', None) or '?'}.{getattr(value, '__qualname__', type(value).__name__)}"
    shown = [name for name in _DESCRIBED if name != "skip_first_wait" or parameters.get(name)]
    return " ".join(f"{name}={parameters.get(name, 0)}" for name in shown)


def _torch_schedule_parameters(value: object) -> Optional[Dict[str, int]]:
    """The arguments of a ``torch.profiler.schedule(...)`` function (kept in its closure), or None
    for any other callable."""
    if getattr(value, "__qualname__", None) != "schedule.<locals>.schedule_fn" or \
            not str(getattr(value, "__module__", "")).startswith("torch.profiler"):
        return None
    code, cells = getattr(value, "__code__", None), getattr(value, "__closure__", None) or ()
    captured = dict(zip(code.co_freevars, (cell.cell_contents for cell in cells))) if code else {}
    if not all(isinstance(captured.get(name), int) for name in ("wait", "warmup", "active", "repeat")):
        return None
    return {name: captured[name] for name in _DESCRIBED if isinstance(captured.get(name), int)}


def action_from(value: object, step: int) -> ProfilerAction:
    """Normalise what a schedule returned (perfprof's or torch's ProfilerAction)."""
    if isinstance(value, ProfilerAction):
        return value
    name = getattr(value, "name", None)
    if isinstance(name, str) and name in ProfilerAction.__members__:
        return ProfilerAction[name]
    raise ValueError(f"schedule returned {value!r} for step {step}; expected a ProfilerAction")
