"""The ranges of perfprof's numeric options, each defined once.

A :class:`Range` is both the check (``TypeError`` for a value of the wrong kind, ``ValueError``
naming the field and the range) and the words its errors quote. The bounds are what the core
holds: a value past them would otherwise be accepted and fail later, inside a step, as a raw
pybind11 error (a size in MiB becomes a count of bytes in a uint64, a time a count of ns in an
int64). docs/api.md lists every option with its range.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
from typing import Any, Optional, Tuple, Type, Union, cast

Number = Union[int, float]


@dataclasses.dataclass(frozen=True)
class Range:
    """The numbers from `low` to `high`, both included: ints (``bool`` refused) when `integer`,
    else any real number (NaN refused). `unit` follows the bounds in messages ("MiB", "ms")."""

    low: Number
    high: Number
    integer: bool = True
    unit: str = ""

    def __str__(self) -> str:
        unit = f" {self.unit}" if self.unit else ""
        if math.isinf(self.high):
            return f"{_shown(self.low)}{unit} or more"
        return f"from {_shown(self.low)} to {_shown(self.high)}{unit}"

    def __contains__(self, value: object) -> bool:
        return self.violation(value) is None

    def violation(self, value: Any) -> Optional[Tuple[Type[Exception], str]]:
        """None when `value` is in the range; else the exception type to raise and what is
        wrong, worded to follow a field's name (``must be from 1 to 60000 ms, got 0``)."""
        kind = numbers.Integral if self.integer else numbers.Real
        if isinstance(value, bool) or not isinstance(value, kind):
            wanted = "an int" if self.integer else "a number"
            return TypeError, f"must be {wanted}{f' ({self.unit})' if self.unit else ''}, got {type(value).__name__}"
        if not self.low <= cast(float, value) <= self.high:  # NaN compares false: refused too
            return ValueError, f"must be {self}, got {value!r}"
        return None

    def check(self, value: Any, owner: str, field: str) -> Number:
        """`value` as an int (or a float when not `integer`); else the violation's exception,
        its message starting with ``{owner}: '{field}'``."""
        violation = self.violation(value)
        if violation is not None:
            error, text = violation
            raise error(f"{owner}: '{field}' {text}")
        return int(value) if self.integer else float(value)


def _shown(bound: Number) -> str:
    """A bound as a reader takes it in: large powers of two as ``2**30`` (or ``2**62 - 1``)."""
    if isinstance(bound, int) and bound >= 1 << 16:
        for offset, suffix in ((0, ""), (1, " - 1")):
            if (bound + offset) & (bound + offset - 1) == 0:
                return f"2**{(bound + offset).bit_length() - 1}{suffix}"
    return f"{bound:g}" if isinstance(bound, float) else str(bound)


#: A size in MiB (capture_buffer_mb, record_limit_mb): up to 1 PiB, far beyond any machine, whose
#: bytes still fit the core's 64-bit counters (2**80 was accepted once, then failed in the first step).
SIZE_MIB = Range(1, 1 << 30, unit="MiB")

#: How often telemetry is sampled.
SAMPLE_INTERVAL_MS = Range(1, 60_000, integer=False, unit="ms")

#: The shortest GC pause recorded: up to 10**12 ms (31 years), whose ns still fit the core's int64
#: (the int64 limit itself, as a float, rounds up past it).
GC_THRESHOLD_MS = Range(0, 1e12, integer=False, unit="ms")

#: Steps are counted in the core's int64. Step numbers, and every count of steps a schedule is
#: made of, stay below 2**62, so that the sums the schedule computes (a cycle's length, the steps
#: of all its repeats, a step plus its cycle's wait) stay below 2**63.
STEP_COUNT = Range(0, (1 << 62) - 1)
#: A schedule's ``active``: at least one step.
ACTIVE_STEPS = Range(1, STEP_COUNT.high)
#: profiler_config.json's ``start_step``: -1 (the next step), 0 (no collection) or a step number.
START_STEP = Range(-1, STEP_COUNT.high)

#: key_averages' group_by_stack_n: frames, a C int in the core.
STACK_FRAMES = Range(0, (1 << 31) - 1)

#: A rank of profiler_config.json's rank_list (torch.distributed's ranks are C ints).
RANK = Range(0, (1 << 31) - 1)

#: post_processing_timeout_s: seconds, unbounded (perfprof keeps everything whatever it says).
TIMEOUT_S = Range(0, math.inf, integer=False, unit="s")

#: A CUDA device index, a C int in CUPTI's and NVML's calls.
DEVICE_INDEX = Range(0, (1 << 31) - 1)
