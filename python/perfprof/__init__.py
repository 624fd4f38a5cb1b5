"""perfprof: a low-overhead profiler for Python training and inference scripts on NVIDIA GPUs.

The API follows torch.profiler / torch_npu.profiler::

    import perfprof
    with perfprof.profile(
            schedule=perfprof.schedule(wait=1, warmup=1, active=2, repeat=1),
            on_trace_ready=perfprof.tensorboard_trace_handler("./result")) as prof:
        for batch in loader:
            with perfprof.record_function("forward"):
                train_step(batch)
            prof.step()
"""
from __future__ import annotations

__version__ = "0.1.0"

from . import mstx
from .activity import ProfilerActivity, supported_activities
from .cuda import cuda_status, nvml_status
from .experimental_config import (
    ExperimentalConfig,
    ExportType,
    GpuMetrics,
    ProfilerLevel,
    supported_export_type,
    supported_gpu_metrics,
    supported_profiler_level,
)
from .profiler import _KinetoProfile, profile
from .record_function import record_function
from .schedule import ProfilerAction, Schedule, schedule
from .trace_handler import TraceHandler, tensorboard_trace_handler, trace_dir_of

# The spec's private name, kept for scripts written against torch_npu.profiler.
_ExperimentalConfig = ExperimentalConfig



def __getattr__(name: str):  # noqa: ANN202 - module attributes loaded on first use
    # analyse (offline parsing) pulls in multiprocessing: loaded when used, not at `import perfprof`.
    if name == "analyse":
        from ._analyse import analyse

        return analyse
    raise AttributeError(f"module 'perfprof' has no attribute {name!r}")


__all__ = [
    "analyse", "ExperimentalConfig", "ExportType", "cuda_status", "nvml_status", "GpuMetrics", "ProfilerAction",
    "ProfilerActivity", "ProfilerLevel", "Schedule", "TraceHandler", "_KinetoProfile", "mstx", "profile",
    "record_function", "schedule", "supported_activities", "supported_export_type",
    "supported_gpu_metrics", "supported_profiler_level", "tensorboard_trace_handler",
    "trace_dir_of",
]
