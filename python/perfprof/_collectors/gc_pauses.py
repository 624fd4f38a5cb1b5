"""Python garbage-collection pauses (``gc_detect_threshold``): csrc/bindings/gc_monitor.cpp times
each collection from ``gc.callbacks`` and records those at or above the threshold."""
from __future__ import annotations

import gc

from .. import _core
from .._options import ProfilerOptions
from .base import Collection, Collector


class GcPauses(Collector):
    """Collections of the cyclic collector, on the "Python GC" track."""

    name = "GC detection"
    channels = _core.CHANNEL_GC

    def __init__(self, options: ProfilerOptions) -> None:
        super().__init__(options)
        threshold_ms = options.experimental_config.gc_detect_threshold
        self._threshold_ns = round((threshold_ms or 0.0) * 1e6)

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return options.experimental_config.gc_detect_threshold is not None

    def start(self) -> None:
        _core.gc_set_threshold_ns(self._threshold_ns)
        if _core.gc_callback not in gc.callbacks:
            gc.callbacks.append(_core.gc_callback)

    def stop(self, collection: Collection) -> None:
        while _core.gc_callback in gc.callbacks:
            gc.callbacks.remove(_core.gc_callback)
