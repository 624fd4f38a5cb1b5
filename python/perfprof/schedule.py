"""The step schedule: ProfilerAction and schedule()."""
from __future__ import annotations

import enum
from typing import Callable, Dict, Optional

from . import _core
from ._logging import logger
from ._ranges import ACTIVE_STEPS, STEP_COUNT


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
        return _ACTIONS[self._impl.action_at(int(STEP_COUNT.check(step, "schedule", "step")))]

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
    Each count is an int from 0 (``active``: 1) to 2**62 - 1, and so are the length of a cycle
    (``wait + warmup + active``) and, with ``repeat``, the steps of all its cycles: steps are
    counted in 64 bits, and these sums must fit. A count outside raises ``ValueError`` naming it;
    a value that is not an int, ``TypeError``.
    """
    values = {
        "wait": wait,
        "active": active,
        "warmup": warmup,
        "repeat": repeat,
        "skip_first": skip_first,
        "skip_first_wait": skip_first_wait,
    }
    parameters = {field: int(_COUNT_RANGES.get(field, STEP_COUNT).check(value, "schedule", field))
                  for field, value in values.items()}
    _check_spans(parameters)
    result = Schedule(_core.Schedule(**parameters), parameters)
    if warmup == 0:
        logger.info("perfprof: schedule without warm-up steps; the first recorded step may be slower")
    return result


_COUNT_RANGES = {"active": ACTIVE_STEPS}  # every other count: STEP_COUNT


def _check_spans(parameters: Dict[str, int]) -> None:
    """The sums of counts the core computes stay within STEP_COUNT: a cycle's steps, and with
    ``repeat`` the steps of all its cycles (each count alone may fit while its sum does not)."""
    cycle = parameters["wait"] + parameters["warmup"] + parameters["active"]
    if cycle not in STEP_COUNT:
        raise ValueError(f"schedule: a cycle's steps 'wait' + 'warmup' + 'active' must be {STEP_COUNT}, got {cycle}")
    every_cycle = parameters["repeat"] * cycle
    if every_cycle not in STEP_COUNT:
        raise ValueError(f"schedule: the steps of all cycles 'repeat' * ('wait' + 'warmup' + 'active') must be "
                         f"{STEP_COUNT}, got {every_cycle}")


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
