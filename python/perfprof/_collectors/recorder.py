"""The host recorder's own events: ProfilerStep ranges, record_function annotations, counters and
mstx markers (recorded by perfprof's calls themselves; this collector only opens their channels)."""
from __future__ import annotations

from .. import _core
from .._options import ProfilerOptions
from .base import Collection, Collector


class HostRecorder(Collector):
    """Steps always; annotations (unless CPU's filter leaves out ``USER_ANNOTATION``) and counters
    with ProfilerActivity.CPU; mstx markers of the configured domains with
    ``ExperimentalConfig(mstx=True)``."""

    name = "host recorder"
    activity = "CPU"
    pausable_channels = _core.CHANNEL_USER_ANNOTATIONS  # steps, counters and mstx go on

    def __init__(self, options: ProfilerOptions) -> None:
        super().__init__(options)
        self.channels = _core.CHANNEL_STEPS
        if options.cpu:
            self.channels |= _core.CHANNEL_COUNTERS
        if options.collects("USER_ANNOTATION"):
            self.channels |= _core.CHANNEL_USER_ANNOTATIONS
        if options.experimental_config.mstx:
            self.channels |= _core.CHANNEL_MSTX

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return True

    def start(self) -> None:
        config = self.options.experimental_config
        _core.filter_mstx_domains(config.mstx_domain_include, config.mstx_domain_exclude)
        _core.discard()  # stragglers from an earlier session

    def window_begin(self) -> None:
        _core.discard()

    def stop(self, collection: Collection) -> None:
        """Nothing to bring: the recorder holds these events already."""
