"""What perfprof can collect: ProfilerActivity and supported_activities()."""
from __future__ import annotations

import enum
from typing import Iterable, List, Optional

from ._logging import warn_once


class ProfilerActivity(enum.Enum):
    """Kinds of activity a profiler collects."""

    CPU = "CPU"
    """Host side: ProfilerStep ranges, record_function annotations, mstx markers."""
    CUDA = "CUDA"
    """GPU side: kernels, copies and runtime calls through CUPTI."""


def supported_activities() -> List[ProfilerActivity]:
    """Activities this installation can collect on this machine.

    ``ProfilerActivity.CUDA`` is included when libcupti loads and initialises (an NVIDIA driver
    and GPU are present); :func:`perfprof.cuda_status` says why it is not.
    """
    from .cuda import is_available

    return [ProfilerActivity.CPU, ProfilerActivity.CUDA] if is_available() else [ProfilerActivity.CPU]


def normalize_activities(activities: Optional[Iterable[object]]) -> List[ProfilerActivity]:
    """Validate the ``activities`` argument of a profiler.

    Accepts perfprof's ProfilerActivity, torch.profiler.ProfilerActivity members (matched by
    name) and the strings "CPU"/"CUDA". ``None`` means every supported activity. Requested
    activities that cannot be collected here are dropped with one warning.
    """
    if activities is None:
        return supported_activities()
    requested: List[ProfilerActivity] = []
    for activity in as_activities(activities):
        if activity not in requested:
            requested.append(activity)
    # CPU is always supported; CUDA is probed (libcupti loaded, the driver initialised) only
    # when asked for, so a list without it costs nothing (enable_profiler_in_child_thread).
    if ProfilerActivity.CUDA in requested and ProfilerActivity.CUDA not in supported_activities():
        from .cuda import cuda_status

        warn_once(
            "activity-CUDA",
            "perfprof: ProfilerActivity.CUDA is not supported here: "
            f"{cuda_status()['reason']}. GPU activity is not collected; profiling goes on "
            "without it (perfprof.cuda_status() has the details).",
        )
        requested.remove(ProfilerActivity.CUDA)
    return requested


def as_activities(activities: Iterable[object]) -> List[ProfilerActivity]:
    """Each member of the list `activities` as perfprof's ProfilerActivity (see as_activity);
    TypeError for what is not a list, ValueError for an unknown activity."""
    if isinstance(activities, (str, bytes)) or not hasattr(activities, "__iter__"):
        raise TypeError(f"activities must be a list of ProfilerActivity, got {activities!r}")
    return [as_activity(item) for item in activities]


def as_activity(item: object) -> ProfilerActivity:
    """`item` (perfprof's or torch's member, or its name) as perfprof's ProfilerActivity."""
    if isinstance(item, ProfilerActivity):
        return item
    name = item if isinstance(item, str) else getattr(item, "name", None)
    if isinstance(name, str) and name.upper() in ProfilerActivity.__members__:
        return ProfilerActivity[name.upper()]
    raise ValueError(
        f"activities: unknown activity {item!r}; expected one of "
        f"{[a.name for a in ProfilerActivity]}"
    )
