"""torch's ``_ExperimentalConfig`` given to ``perfprof.profile``: read as perfprof's
ExperimentalConfig, field by field, so a script that switches imports keeps its config.

torch's object is a pybind11 class whose fields cannot be read as attributes; its pickled state
is the tuple of its constructor's arguments, in the order of the signature pybind11 writes into
the constructor's docstring. Both are read from the class itself, so a torch that adds a field
is read right (the new field is then named among those perfprof does not collect).
"""
from __future__ import annotations

import re
import sys
from typing import Any, Dict, List

from ._logging import warn_once
from .experimental_config import ExperimentalConfig, ProfilerLevel

# torch's fields perfprof collects, with the perfprof options they ask for when true.
_MAPPED = {
    "record_python_gc_info": {"gc_detect_threshold": 0.0},  # every collection, named "Python GC"
    # Kineto's CUDA synchronisation events: collected from perfprof's Level1 on (with the driver
    # API and device allocations).
    "enable_cuda_sync_events": {"profiler_level": ProfilerLevel.Level1},
}

# torch's fields that ask for nothing perfprof does not already do: ``trace_only`` skips building
# the Python events at stop, which perfprof never does (events() builds them when called).
_ALREADY_SO = frozenset({"trace_only"})

# A parameter of the pybind11 signature: "name: type = default".
_PARAMETER = re.compile(r"[(,]\s*(\w+):")


def is_torch_config(value: object) -> bool:
    """Whether `value` is torch's ``torch._C._profiler._ExperimentalConfig`` (torch imported)."""
    torch_profiler = sys.modules.get("torch._C._profiler")
    torch_config = getattr(torch_profiler, "_ExperimentalConfig", None)
    return torch_config is not None and isinstance(value, torch_config)


def from_torch(config: Any) -> ExperimentalConfig:
    """perfprof's ExperimentalConfig for torch's `config`: each field perfprof collects mapped to
    its option; one warning names those set that it does not collect (they have no effect)."""
    fields = _fields(config)
    options: Dict[str, Any] = {}
    for name, perfprof_options in _MAPPED.items():
        if fields.get(name):
            options.update(perfprof_options)
    ignored = [name for name, value in fields.items()
               if value and name not in _MAPPED and name not in _ALREADY_SO]
    if ignored:
        warn_once(f"torch-config-{','.join(ignored)}",
                  f"perfprof: torch's _ExperimentalConfig fields {', '.join(ignored)} are not collected by "
                  "perfprof; they have no effect (docs/api.md, \"torch's _ExperimentalConfig\")")
    return ExperimentalConfig(**options)


def _fields(config: Any) -> Dict[str, Any]:
    """torch's `config` as field name -> value; empty (with a warning) when this torch's class
    cannot be read so."""
    names = _field_names(type(config))
    try:
        values = config.__getstate__()
    except Exception:  # noqa: BLE001 (whatever a torch without pickling raises)
        values = ()
    if not names or len(names) != len(values):
        warn_once("torch-config-unreadable", "perfprof: this torch's _ExperimentalConfig cannot be read "
                  f"(fields {names}, state {values!r}); its fields have no effect")
        return {}
    return dict(zip(names, values))


def _field_names(torch_config: type) -> List[str]:
    """The constructor's parameters but self, from pybind11's signature line."""
    signature = (getattr(torch_config.__init__, "__doc__", None) or "").lstrip().split("\n", 1)[0]
    return [name for name in _PARAMETER.findall(signature) if name != "self"]
