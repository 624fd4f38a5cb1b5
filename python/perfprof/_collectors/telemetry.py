"""System and device telemetry (``host_sys``, ``sys_io``, ``sys_interconnection``,
``gpu_telemetry``): csrc/telemetry's sampler thread reads /proc and NVML every
``sample_interval_ms`` and records counters, which the trace draws as counter tracks and the
database keeps in HOST_*_USAGE and GPU_* tables (docs/api.md, "Telemetry")."""
from __future__ import annotations

import os
from typing import List

from .. import _core
from .._logging import logger, warn_once
from .._options import ProfilerOptions
from ..cuda import NVML_LIBRARY_VARIABLE
from .base import Collection, Collector

# host_sys's groups the sampler reads from /proc ("osrt" is not sampled: docs/api.md says why).
_SAMPLED_HOST_GROUPS = ("cpu", "mem", "disk", "network")


def _host_groups(options: ProfilerOptions) -> List[str]:
    config = options.experimental_config
    groups = [group for group in _SAMPLED_HOST_GROUPS if group in config.host_sys]
    if config.sys_io and "network" not in groups:
        groups.append("network")  # the NICs' counters
    return groups


def _wants_gpu(options: ProfilerOptions) -> bool:
    config = options.experimental_config
    return config.gpu_telemetry or config.sys_io or config.sys_interconnection


class Telemetry(Collector):
    """Counters sampled on a thread of perfprof's own, from the warm-up to the stop."""

    name = "telemetry"
    channels = _core.CHANNEL_COUNTERS

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return bool(_host_groups(options)) or _wants_gpu(options)

    def start(self) -> None:
        config = self.options.experimental_config
        messages = _core.telemetry_start(
            interval_ns=round(config.sample_interval_ms * 1e6), host=_host_groups(self.options),
            gpu=_wants_gpu(self.options), pcie=config.sys_io or config.sys_interconnection,
            nvlink=config.sys_interconnection, nvml_library=os.environ.get(NVML_LIBRARY_VARIABLE, ""))
        for message in messages:
            warn_once(f"telemetry-{message}", f"perfprof: {message}")

    def stop(self, collection: Collection) -> None:
        report = _core.telemetry_stop()
        for message in report["messages"]:
            logger.warning("perfprof: telemetry: %s; its other counters were sampled", message)
        late, taken = report["late_samples"], report["samples"]
        if late > taken // 10:
            interval = self.options.experimental_config.sample_interval_ms
            logger.warning("perfprof: telemetry: %d of %d samples were skipped because reading the counters took "
                           "longer than sample_interval_ms (%g ms); the rates span the longer intervals. A larger "
                           "sample_interval_ms samples evenly", late, late + taken, interval)
