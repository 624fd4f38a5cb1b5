"""Memory profiling (``profile_memory=True``): what is recorded, and the memory timeline exports.

Every allocation and free of tensor storage comes from PyTorch's allocators, through torch's
own profiler state on the profiling thread (the only exact source for CPU tensors; CUDA tensors
come the same way). With them perfprof reads the operators around each event, which tensors
each operator reads and writes, and from its own hooks (``_collectors/memory_roles.py``) which
tensors are module parameters, gradients and optimizer state. The C++ core gives each byte a
category (docs/memory.md) and builds the timeline of bytes per category per device.
"""
from __future__ import annotations

import os
from typing import Any, List, Literal, Optional, Tuple

from . import _core
from ._files import make_directory
from ._logging import logger

CATEGORIES: Tuple[str, ...] = tuple(_core.MEMORY_CATEGORIES)

# Suffix -> the core's format, longest suffixes first.
_FORMATS: Tuple[Tuple[str, Literal["json", "raw", "html"]], ...] = (
    (".raw.json.gz", "raw"), (".raw.json", "raw"), (".json.gz", "json"), (".json", "json"), (".html", "html"),
)

# The kinds of recorded operator inputs that torch.profiler tells apart when it matches an operator
# to its schemas, one letter per input (csrc/bindings/torch_memory.cpp reads them).
INPUT_KINDS = {
    "T": "a tensor with an identity (tensor id, allocation id, data pointer)",
    "L": "a list of such tensors (an empty list too)",
    "N": "None, or a tensor without identity, which torch takes for None",
    "l": "any other list",
    "b": "bool", "i": "int", "f": "float", "c": "complex",
    "o": "anything else",
}


def write_flags(name: str, kinds: str) -> Optional[List[bool]]:
    """Which inputs of operator `name` some schema accepting inputs of these `kinds` (one letter
    per input, INPUT_KINDS) marks as written; None when no schema accepts them.

    torch.profiler's memory profile matches schemas by the type of each recorded input, not just
    by their number: an operator no schema accepts (e.g. ``aten::cat`` of a list holding an empty
    tensor, as a key/value cache starts) is no node of the data flow, and what it allocates is
    made from nothing as far as categories go.
    """
    import torch

    if "::" not in name:
        return None
    try:
        schemas = torch._C._jit_get_schemas_for_operator(name)
    except RuntimeError:
        return None
    flags: Optional[List[bool]] = None
    for schema in schemas:
        arguments = schema.arguments
        if len(arguments) != len(kinds) or not all(_accepts(a.type, kind) for a, kind in zip(arguments, kinds)):
            continue
        if flags is None:
            flags = [False] * len(kinds)
        for i, argument in enumerate(arguments):
            flags[i] |= bool(getattr(argument.alias_info, "is_write", False))
    return flags


def _accepts(schema_type: Any, kind: str) -> bool:
    """Whether a schema argument of `schema_type` accepts a recorded input of `kind`, as
    torch.profiler decides it (types it does not record accept only None)."""
    import torch

    jit = torch._C
    if isinstance(schema_type, jit.OptionalType):
        return kind == "N" or _accepts(schema_type.getElementType(), kind)
    if isinstance(schema_type, jit.AnyType):
        return True
    if schema_type.isSubtypeOf(jit.ListType.ofTensors()):
        return kind == "L"
    kinds_by_type = ((jit.TensorType, "T"), (jit.NoneType, "N"), (jit.BoolType, "b"), (jit.IntType, "bi"),
                     (jit.FloatType, "f"), (jit.ComplexType, "c"), (jit.NumberType, "bifc"))
    for jit_type, accepted in kinds_by_type:
        if isinstance(schema_type, jit_type):
            return kind in accepted
    return kind == "N"


def read_torch_memory(result: Any, window_begin_ns: int = 0) -> Optional["_core.TorchMemoryImport"]:
    """Read the allocator events and operator data flow torch recorded (at the end of a session);
    what was allocated before `window_begin_ns` (warm-up) is sized as torch.profiler sizes it,
    from its tensors. Nothing reaches the recorder before ``add_torch_memory``. The result keeps
    torch's event tree, for the caller to free when it suits (see torch_capture); None when the
    tree could not be read at all (said here, at every session)."""
    try:
        return _core.TorchMemoryImport(result.experimental_event_tree(), write_flags, window_begin_ns)
    except Exception as error:  # a torch version whose results differ entirely: report, never fail
        _unreadable(error)
        return None


def add_torch_memory(imported: "_core.TorchMemoryImport", os_thread_ids: dict) -> None:
    """Add what ``read_torch_memory`` read to the recorder, torch's thread ids mapped to the OS's
    by `os_thread_ids`. What could not be read is left out, counted in the trace's
    ``perfprofStats`` and said here, at every session."""
    try:
        added = imported.add_to_recorder(os_thread_ids)
    except Exception as error:  # never fail the job for its profiler
        _unreadable(error)
        return
    if added["failed_reads"]:
        logger.warning("perfprof: %d memory events recorded by torch could not be read and %d reads of fields "
                       "failed (left out, counted in perfprofStats); the first: %s",
                       added["skipped_events"], added["failed_reads"], added["first_failure"])


def _unreadable(error: Exception) -> None:
    logger.warning("perfprof: memory events recorded by torch could not be read: %r", error)


def export_timeline(trace: "_core.Trace", output_path: str, device: Optional[str]) -> None:
    """Write `trace`'s memory timeline for `device`; the format follows the suffix."""
    format_ = next((f for suffix, f in _FORMATS if output_path.endswith(suffix)), None)
    if format_ is None:
        raise ValueError(f"export_memory_timeline: unknown suffix in {output_path!r}; use one of "
                         f"{', '.join(s for s, _ in reversed(_FORMATS))}")
    devices = {name: (kind, index) for name, kind, index in trace.memory_devices()}
    if not devices:
        raise ValueError("export_memory_timeline: no memory events were recorded (no tensor was allocated or freed "
                         "on the profiling thread while the profiler recorded)")
    name = _device_name(device, devices)
    make_directory(os.path.dirname(os.path.abspath(output_path)))
    kind, index = devices[name]
    trace.export_memory_timeline(output_path, kind, index, format_, f"Memory timeline: {name}")


def _device_name(device: Optional[str], devices: dict) -> str:
    if device is None:
        gpus = [name for name in devices if name != "cpu"]
        return gpus[0] if gpus else "cpu"
    if not isinstance(device, str):
        raise TypeError(f"export_memory_timeline: 'device' must be a str such as 'cuda:0' or 'cpu', "
                        f"got {type(device).__name__}")
    name = device.strip().lower()
    if name == "cuda":
        name = "cuda:0"
    if name.startswith("cpu:"):
        name = "cpu"
    if name not in devices:
        seen = ", ".join(devices) or "none"
        raise ValueError(f"export_memory_timeline: no memory events on device {device!r} (devices with "
                         f"events: {seen})")
    return name
