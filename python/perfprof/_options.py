"""ProfilerOptions: the one definition of what a profiler is asked to collect.

``profile(...)`` and ``_KinetoProfile(...)`` keep torch.profiler's keyword arguments; they hand
them to :meth:`ProfilerOptions.checked`, and everything after that (the profiler's attributes,
the collectors, the run directory's ``profiler_info.json``) reads the checked options. A new
option is a field here, its check and, where it is collected, the collector that reads it.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, FrozenSet, Iterable, Optional, Tuple

from ._logging import warn_once
from ._torch_experimental_config import from_torch as torch_config_as_perfprofs, is_torch_config
from .activity import ProfilerActivity, collects_type, normalize_activities
from .experimental_config import ExperimentalConfig, GpuMetrics


@dataclasses.dataclass(frozen=True)
class ProfilerOptions:
    """What a profiler collects, checked and normalised (build it with :meth:`checked`).

    Attributes:
        activities: the activities to collect that this machine supports, in the order asked.
        activity_filters: torch.profiler's per-activity filters: (activity, the activity types
            of its group to collect) for each activity given as ``{activity: [type, ...]}``.
        record_shapes: each operator's input shapes and autograd sequence number.
        profile_memory: every tensor allocation and free on the profiling thread.
        with_stack: Python calls (``python_function`` events, the stacks of key_averages).
        with_flops: torch.profiler's FLOPs of matrix products, conv2d, mul and add (implies record_shapes).
        with_modules: each ``nn.Module`` call as a range.
        experimental_config: the extended options (the object the user gave, not a copy).
    """

    activities: Tuple[ProfilerActivity, ...] = (ProfilerActivity.CPU,)
    activity_filters: Tuple[Tuple[ProfilerActivity, FrozenSet[str]], ...] = ()
    record_shapes: bool = False
    profile_memory: bool = False
    with_stack: bool = False
    with_flops: bool = False
    with_modules: bool = False
    experimental_config: ExperimentalConfig = dataclasses.field(default_factory=ExperimentalConfig)

    @classmethod
    def checked(
        cls,
        caller: str,
        activities: Optional[Iterable[object]] = None,
        experimental_config: Optional[ExperimentalConfig] = None,
        **flags: object,
    ) -> "ProfilerOptions":
        """Options from a profiler's arguments. `flags` are the bool fields (record_shapes ...).

        ``activities`` None means every supported activity; torch.profiler's members, its
        per-activity filters (``{ProfilerActivity.CPU: ["CPU_OP"]}``) and the strings
        "CPU"/"CUDA" are accepted, and activities this machine cannot collect are dropped with
        one warning. torch's ``_ExperimentalConfig`` is read as perfprof's (its fields perfprof
        collects mapped, one warning naming the others). A wrong type raises ``TypeError`` and a
        wrong value ``ValueError``, each naming the field and starting with `caller` (the public
        function called).
        """
        normalized, filters = normalize_activities(activities)
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise TypeError(f"{caller}: '{name}' must be a bool, got {type(value).__name__}")
        if experimental_config is None:
            experimental_config = ExperimentalConfig()
        if is_torch_config(experimental_config):
            experimental_config = torch_config_as_perfprofs(experimental_config)
        if not isinstance(experimental_config, ExperimentalConfig):
            raise TypeError(f"{caller}: 'experimental_config' must be a perfprof.ExperimentalConfig (or torch's "
                            f"_ExperimentalConfig), got "
                            f"{type(experimental_config).__name__}")
        return cls(activities=tuple(normalized), activity_filters=tuple(filters.items()),
                   experimental_config=experimental_config, **flags)  # type: ignore[arg-type]

    def changed(self, caller: str, **changes: Any) -> "ProfilerOptions":
        """These options with `changes`, checked as :meth:`checked` checks them."""
        return ProfilerOptions.checked(caller, **{**self.as_kwargs(), **changes})

    @property
    def cpu(self) -> bool:
        """Whether the host side (ProfilerActivity.CPU) is collected."""
        return ProfilerActivity.CPU in self.activities

    @property
    def cuda(self) -> bool:
        """Whether GPU activity (ProfilerActivity.CUDA) is collected."""
        return ProfilerActivity.CUDA in self.activities

    def collects(self, activity_type: str) -> bool:
        """Whether Kineto's `activity_type` (``"CPU_OP"``, ``"CONCURRENT_KERNEL"``...) is
        collected: an activity of its group is, and selects it when filtered."""
        return collects_type(self.activities, dict(self.activity_filters), activity_type)

    def to_dict(self) -> Dict[str, Any]:
        """The options as JSON-ready values, in field order (the form profiler_info.json records)."""
        values = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)}
        values["activities"] = [activity.value for activity in self.activities]
        values["activity_filters"] = {activity.value: sorted(types) for activity, types in self.activity_filters}
        values["experimental_config"] = self.experimental_config.to_dict()
        return values

    def as_kwargs(self) -> Dict[str, Any]:
        """Field name -> value, in field order: the keyword arguments of ``profile()`` that ask
        for these options (not ``dataclasses.asdict``: it would copy the ExperimentalConfig,
        which stays the user's object). A filtered activity is given in torch's per-activity
        form, ``{activity: [type, ...]}``, in ``activities``."""
        filters = dict(self.activity_filters)
        values = {field.name: getattr(self, field.name) for field in dataclasses.fields(self)
                  if field.name != "activity_filters"}
        values["activities"] = [{activity: sorted(filters[activity])} if activity in filters else activity
                                for activity in self.activities]
        return values

    def log_uncollected(self) -> None:
        """Say once per process which asked-for options this version does not collect."""
        if self.profile_memory and not self.cpu:
            warn_once("memory-without-cpu", "perfprof: profile_memory=True needs ProfilerActivity.CPU in activities "
                      "(allocations are recorded with the host's operators); no memory is recorded")
        config = self.experimental_config
        if (config.gpu_metrics is not GpuMetrics.GpuMetricsNone or config.l2_cache) and not self.cuda:
            warn_once("gpu-metrics-without-cuda", "perfprof: ExperimentalConfig gpu_metrics and l2_cache need "
                      "ProfilerActivity.CUDA in activities (the metrics are given to kernel records); none is measured")
        for option in self.experimental_config.uncollected_options():
            warn_once(f"config-{option}",
                      f"perfprof: ExperimentalConfig {option} is not collected by this version yet; it has no effect.")

