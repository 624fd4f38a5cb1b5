"""The collector protocol: what every data source of a collection implements.

A :class:`~perfprof._session.Session` builds one collector per data source the options ask for
(``wanted``), starts them in order when collection begins (the warm-up), tells them when the kept
window begins, and stops them in the reverse order, each bringing what it recorded into the
recorder before the trace is built. A collector that holds what it read past ``stop`` (torch's
results) frees it when it is dropped, with its session.

Failures stay inside: a collector logs one clear line and carries on without its data; the
session also catches anything that escapes a collector (``Session`` logs it), so the profiled job
never sees a profiler's exception.
"""
from __future__ import annotations

import abc
import dataclasses
from typing import Tuple

from .._options import ProfilerOptions


@dataclasses.dataclass
class Collection:
    """One collection as its collectors see it: the kept window (``_core.now_ns`` clock; 0 until
    set) and what the trace build takes in besides the recorder."""

    window_begin_ns: int = 0
    window_end_ns: int = 0
    gpu_records: bool = False  # CUPTI's records join the trace


class Collector(abc.ABC):
    """One data source of a collection.

    Subclasses set ``name`` (for log lines) and ``channels`` (the recorder channels they write
    to: the session switches them on before ``start`` and off after ``stop``), and implement
    :meth:`wanted`, :meth:`start` and :meth:`stop`.
    """

    name: str = ""
    channels: int = 0
    #: toggle_collection_dynamic: the activity ("CPU" or "CUDA") this collector's pausable data
    #: belongs to ("": none), and which of its channels a pause closes.
    activity: str = ""
    pausable_channels: int = 0
    #: The stages inside ``start``, in order, each a point a test may make fail (_start_faults).
    start_stages: Tuple[str, ...] = ()

    def __init__(self, options: ProfilerOptions) -> None:
        self.options = options

    @staticmethod
    @abc.abstractmethod
    def wanted(options: ProfilerOptions) -> bool:
        """Whether `options` ask for this data source."""

    @abc.abstractmethod
    def start(self) -> None:
        """Begin collecting (at prepare: warm-up steps are collected, then discarded)."""

    def window_begin(self) -> None:
        """The kept window begins: drop what was collected during warm-up, if anything."""

    def finish_work(self) -> None:
        """The profiler stops: let work still running that this collector records finish (before
        the window's end is taken), so that it is recorded whole."""

    def pause(self, paused: bool) -> None:
        """toggle_collection_dynamic: stop (True) or go on (False) recording what begins from
        now on, beyond closing ``pausable_channels`` (which the session does); what began before
        a pause is recorded whole."""

    @abc.abstractmethod
    def stop(self, collection: Collection) -> None:
        """End collecting and bring what was recorded into the recorder (or note it in
        `collection`). Called even when ``start`` failed."""
