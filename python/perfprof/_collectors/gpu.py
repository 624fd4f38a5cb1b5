"""GPU activity through CUPTI (csrc/cupti): kernels, copies, sets, runtime and driver calls."""
from __future__ import annotations

from .. import _core
from .._logging import logger, warn_once
from .._options import ProfilerOptions
from ..experimental_config import ProfilerLevel
from .base import Collection, Collector

# ProfilerLevel -> the collector's level (csrc/cupti/activity_collector.h).
_GPU_LEVELS = {ProfilerLevel.Level_none: 0, ProfilerLevel.Level0: 1, ProfilerLevel.Level1: 2, ProfilerLevel.Level2: 3}


class GpuActivity(Collector):
    """CUPTI's activity records, with ProfilerActivity.CUDA. Started first and stopped last, so
    that CUPTI is held while torch's state is chosen (torch_capture) and is flushed only after the
    host stopped recording."""

    name = "GPU activity"

    def __init__(self, options: ProfilerOptions) -> None:
        super().__init__(options)
        self._collecting = False

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return options.cuda

    def start(self) -> None:
        error, skipped = _core.gpu_start(_GPU_LEVELS[self.options.experimental_config.profiler_level])
        if error:
            warn_once(f"gpu-start-{error}", f"perfprof: GPU activity is not collected: {error}")
            return
        if skipped:
            warn_once(f"gpu-skipped-{skipped}", "perfprof: this CUPTI or GPU refused some activity kinds, "
                      f"which are not collected: {', '.join(skipped)}")
        self._collecting = True

    def window_begin(self) -> None:
        if self._collecting:
            _core.gpu_discard()

    def stop(self, collection: Collection) -> None:
        if not self._collecting:
            return
        self._collecting = False
        collection.gpu_records = True
        flush_error = _core.gpu_stop()  # flushes what CUPTI still holds
        if flush_error:
            logger.warning("perfprof: CUPTI could not hand over its GPU activity buffers (%s); GPU activity "
                           "recorded after the last buffer it completed is missing from this cycle", flush_error)
