"""perfprof's data sources, one collector each (base.py has the protocol).

To add a data source: write a :class:`~perfprof._collectors.base.Collector` in a module of its own
and place it in ``KINDS`` below; the Session starts collectors in that order and stops them in
the reverse order.
"""
from __future__ import annotations

from typing import List, Tuple, Type

from .._options import ProfilerOptions
from .base import Collection, Collector
from .gc_pauses import GcPauses
from .gpu import GpuActivity
from .host_capture import HostCapture
from .memory_roles import MemoryRoles
from .recorder import HostRecorder
from .telemetry import Telemetry

# The start order. GPU activity comes first, so that CUPTI is held when the host capture chooses
# torch's state (torch_capture._claim_kineto), and is flushed last, after the host stopped
# recording (what a thread records after the window end would still be in the trace). The host
# recorder, whose start drops what an earlier session left, comes before the sources that record
# into it; their order among themselves does not matter.
KINDS: Tuple[Type[Collector], ...] = (GpuActivity, HostRecorder, HostCapture, MemoryRoles, GcPauses, Telemetry)


def collectors_for(options: ProfilerOptions) -> List[Collector]:
    """One collector per data source `options` ask for, in start order."""
    return [kind(options) for kind in KINDS if kind.wanted(options)]


__all__ = ["Collection", "Collector", "KINDS", "collectors_for"]
