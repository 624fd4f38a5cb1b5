"""torch's global step count (``torch.autograd.profiler.KinetoStepTracker``), kept by
``profile.step()`` as torch.profiler keeps it.

Kineto's on-demand tracing (dynolog, ``KINETO_USE_DAEMON=1``) starts and stops its traces at step
boundaries it learns from this tracker: torch.profiler's ``profile`` registers itself as the
requester ``"ProfilerStep"`` when built, counts one step per ``step()`` when the daemon is in use,
and leaves at the end of its ``with`` block. A script that switches imports keeps that count.
Nothing here imports torch: without torch imported there is no tracker to keep.
"""
from __future__ import annotations

import os
import sys
from typing import Any, Optional

from ._logging import warn_once

#: The requester torch.profiler counts its steps as (torch.profiler.profiler.PROFILER_STEP_NAME).
_REQUESTER = "ProfilerStep"


def join() -> None:
    """Register the profiler as a step requester, at the current global step (profile's construction)."""
    _call("init_step_count")


def advance() -> None:
    """Count one step (``profile.step()``), as torch does: only when Kineto's daemon is in use."""
    if os.environ.get("KINETO_USE_DAEMON", ""):
        _call("increment_step")


def leave() -> None:
    """Unregister the profiler (the end of its ``with`` block)."""
    _call("erase_step_count")


def _call(method: str) -> None:
    tracker = _tracker()
    if tracker is None:
        return
    try:
        getattr(tracker, method)(_REQUESTER)
    except Exception as error:  # never hurt the job
        warn_once(f"kineto-step-{method}", f"perfprof: torch's KinetoStepTracker.{method} failed: {error!r}; "
                  "Kineto's on-demand tracing may miss step boundaries")


def _tracker() -> Optional[Any]:
    """torch's KinetoStepTracker when torch is imported (and has one), else None."""
    profiler_module = sys.modules.get("torch.autograd.profiler")
    return getattr(profiler_module, "KinetoStepTracker", None)
