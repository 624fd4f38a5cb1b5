"""What perfprof can collect: ProfilerActivity and supported_activities()."""
from __future__ import annotations

import enum
from typing import Dict, FrozenSet, Iterable, List, Optional, Tuple

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


#: Kineto's activity types in each group: the names torch.profiler's per-activity filter
#: (``{ProfilerActivity.CUDA: ["CONCURRENT_KERNEL"]}``) takes, grouped as torch 2.13 groups them
#: (torch/csrc/profiler/kineto_shim.cpp). A type in two groups is collected when either selects it.
ACTIVITY_TYPES: Dict[ProfilerActivity, Tuple[str, ...]] = {
    ProfilerActivity.CPU: ("CPU_OP", "CPU_INSTANT_EVENT", "USER_ANNOTATION", "EXTERNAL_CORRELATION",
                           "XPU_RUNTIME", "XPU_DRIVER", "CUDA_RUNTIME", "CUDA_DRIVER", "PYTHON_FUNCTION",
                           "PRIVATEUSE1_RUNTIME", "PRIVATEUSE1_DRIVER"),
    ProfilerActivity.CUDA: ("GPU_MEMCPY", "GPU_MEMSET", "GPU_USER_ANNOTATION", "CONCURRENT_KERNEL",
                            "CUDA_RUNTIME", "CUDA_DRIVER", "OVERHEAD"),
}

#: An activity's filter: the activity types of its group to collect.
ActivityFilters = Dict[ProfilerActivity, FrozenSet[str]]


def normalize_activities(activities: Optional[Iterable[object]]) -> Tuple[List[ProfilerActivity], ActivityFilters]:
    """Validate the ``activities`` argument of a profiler: the activities, and the filters of
    those given torch.profiler's per-activity form.

    Each item is perfprof's ProfilerActivity, a torch.profiler.ProfilerActivity member (matched
    by name) or the string "CPU"/"CUDA", or a dict from such an activity to the list of its
    activity types to collect (:data:`ACTIVITY_TYPES`; ``[]``: none). An activity given twice
    counts once, unless one of them has a filter: then it raises ``ValueError`` (torch.profiler
    raises for any repeat). ``None`` means every supported activity.
    Requested activities that cannot be collected here are dropped with one warning.
    """
    if activities is None:
        return supported_activities(), {}
    if isinstance(activities, (str, bytes, dict)) or not hasattr(activities, "__iter__"):
        raise TypeError(f"activities must be a list of ProfilerActivity, got {activities!r}")
    requested: List[ProfilerActivity] = []
    filters: ActivityFilters = {}
    for item in activities:
        given: Dict[ProfilerActivity, Optional[FrozenSet[str]]] = (
            dict(_filtered(item)) if isinstance(item, dict) else {as_activity(item): None})
        for activity, types in given.items():
            if activity in requested:
                if types is not None or activity in filters:  # which of its filters would hold?
                    raise ValueError(f"activities: {activity.name} is given more than once, with a filter")
                continue
            requested.append(activity)
            if types is not None:
                filters[activity] = types
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
        filters.pop(ProfilerActivity.CUDA, None)
    return requested, filters


def _filtered(item: Dict[object, object]) -> Dict[ProfilerActivity, FrozenSet[str]]:
    """The activities of a per-activity filter ``{activity: [type, ...]}``, each with its types,
    checked against its group's."""
    filtered: Dict[ProfilerActivity, FrozenSet[str]] = {}
    for key, types in item.items():
        activity = as_activity(key)
        if isinstance(types, (str, bytes)) or not isinstance(types, (list, tuple, set, frozenset)):
            raise TypeError(f"activities: the filter of {activity.name} must be a list of activity type names, "
                            f"got {types!r}")
        unknown = [name for name in types if name not in ACTIVITY_TYPES[activity]]
        if unknown:
            raise ValueError(f"activities: unknown activity type {unknown[0]!r} for {activity.name}; expected "
                             f"some of {list(ACTIVITY_TYPES[activity])}")
        filtered[activity] = frozenset(types)
    return filtered


def collects_type(activities: Iterable[ProfilerActivity], filters: ActivityFilters, activity_type: str) -> bool:
    """Whether `activities` with their `filters` collect Kineto's `activity_type`: some activity
    of them has it in its group, and selects it when filtered."""
    return any(activity_type in ACTIVITY_TYPES[activity]
               and (activity not in filters or activity_type in filters[activity])
               for activity in activities)


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
