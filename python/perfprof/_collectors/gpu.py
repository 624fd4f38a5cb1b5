"""GPU activity through CUPTI (csrc/cupti): kernels, copies, sets, runtime and driver calls, and
each kernel's hardware metrics when ExperimentalConfig.gpu_metrics or l2_cache ask for them."""
from __future__ import annotations

from .. import _core, _start_faults
from .._logging import logger, warn_once
from .._options import ProfilerOptions
from ..experimental_config import GpuMetrics, ProfilerLevel
from .base import Collection, Collector

# ProfilerLevel -> the collector's level (csrc/cupti/activity_collector.h).
_GPU_LEVELS = {ProfilerLevel.Level_none: 0, ProfilerLevel.Level0: 1, ProfilerLevel.Level1: 2, ProfilerLevel.Level2: 3}

# Kineto's activity types torch.profiler's per-activity filter selects -> the CUPTI kind each is
# (by the collector's kind names). The level's other kinds (device, external correlation,
# synchronisation, allocations, graphs) are no such type and are not filtered.
_KINDS_OF_TYPES = {"CONCURRENT_KERNEL": "kernel", "GPU_MEMCPY": "memcpy", "GPU_MEMSET": "memset",
                   "CUDA_RUNTIME": "runtime API", "CUDA_DRIVER": "driver API"}


class GpuActivity(Collector):
    """CUPTI's activity records, with ProfilerActivity.CUDA. Started first and stopped last, so
    that CUPTI is held while torch's state is chosen (torch_capture) and is flushed only after the
    host stopped recording."""

    name = "GPU activity"
    activity = "CUDA"
    start_stages = ("CUPTI",)

    def __init__(self, options: ProfilerOptions) -> None:
        super().__init__(options)
        self._collecting = False
        config = options.experimental_config
        self._measures_kernels = config.gpu_metrics is not GpuMetrics.GpuMetricsNone or config.l2_cache

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return options.cuda

    def start(self) -> None:
        config = self.options.experimental_config
        left_out = [kind for activity_type, kind in _KINDS_OF_TYPES.items() if not self.options.collects(activity_type)]
        error, skipped, notes = _core.gpu_start(_GPU_LEVELS[config.profiler_level], left_out)
        if error:
            warn_once(f"gpu-start-{error}", f"perfprof: GPU activity is not collected: {error}")
            return
        self._collecting = True  # CUPTI is held from here: stop() lets it go, whatever fails next
        _start_faults.reached("CUPTI")
        if skipped:
            warn_once(f"gpu-skipped-{skipped}", "perfprof: this CUPTI or GPU refused some activity kinds, "
                      f"which are not collected: {', '.join(skipped)}")
        for note in notes:
            warn_once(f"gpu-note-{note}", f"perfprof: {note}")
        _core.gpu_metrics_configure(config.gpu_metrics.value, config.l2_cache)

    def window_begin(self) -> None:
        if not self._collecting:
            return
        _core.gpu_discard()
        if self._measures_kernels:
            # Kernels launched from here on are measured (CUPTI serialises them meanwhile).
            error = _core.gpu_metrics_begin()
            if error:
                warn_once(f"gpu-metrics-{error}", f"perfprof: per-kernel GPU metrics are not measured: {error}")

    def finish_work(self) -> None:
        # CUPTI's flush at stop synchronizes nothing: kernels still running would be handed over
        # incomplete (and lost with every record after them in their buffer), or start after the
        # window's end. torch.profiler synchronizes the device before it stops, too.
        if self._collecting:
            _core.gpu_synchronize()

    def pause(self, paused: bool) -> None:
        if not self._collecting:
            return
        error = _core.gpu_pause(paused)
        if error:
            logger.warning("perfprof: toggle_collection_dynamic: %s; GPU activity is collected as before", error)

    def stop(self, collection: Collection) -> None:
        if not self._collecting:
            return
        self._collecting = False
        collection.gpu_records = True
        if self._measures_kernels:
            self._end_kernel_metrics()
        flush_error, incomplete_buffers, buffers_taken = _core.gpu_stop()  # flushes what CUPTI still holds
        if flush_error:
            logger.warning("perfprof: CUPTI could not hand over its GPU activity buffers (%s); GPU activity "
                           "recorded after the last buffer it completed is missing from this cycle", flush_error)
        if incomplete_buffers:
            logger.warning("perfprof: %d CUPTI buffers held GPU work still running when the profiler stopped "
                           "(no CUDA context was current on the thread that stopped it, so it could not wait): "
                           "in each, the first unfinished record and every record after it are missing",
                           incomplete_buffers)
        if buffers_taken:
            logger.warning("perfprof: another CUPTI client (torch.profiler collecting CUDA, Nsight?) took CUPTI over "
                           "during this cycle and was handed %d of perfprof's GPU activity buffers: the GPU activity "
                           "in them is missing; perfprof takes CUPTI back at its next start", buffers_taken)

    @staticmethod
    def _end_kernel_metrics() -> None:
        error, left_out = _core.gpu_metrics_end()
        if error:
            logger.warning("perfprof: the per-kernel GPU metrics of this cycle could not be read: %s", error)
        if left_out:
            logger.warning("perfprof: %d kernels launched in this cycle's window were not measured (past the most "
                           "CUPTI measures in one window); their GPU metrics are missing", left_out)
