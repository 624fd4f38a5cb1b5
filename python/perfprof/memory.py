"""Memory profiling (``profile_memory=True``): what is recorded, and the memory timeline exports.

Every allocation and free of tensor storage comes from PyTorch's allocators, through torch's
own profiler state on the profiling thread (the only exact source for CPU tensors; CUDA tensors
come the same way). With them perfprof reads the operators around each event, which tensors
each operator reads and writes, and from its own hooks which tensors are module parameters,
gradients and optimizer state. The C++ core gives each byte a category (docs/memory.md) and
builds the timeline of bytes per category per device.
"""
from __future__ import annotations

import os
import threading
from typing import Any, List, Optional, Tuple

from . import _core, torch_capture

CATEGORIES: Tuple[str, ...] = tuple(_core.MEMORY_CATEGORIES)
_PARAMETER = CATEGORIES.index("PARAMETER")
_GRADIENT = CATEGORIES.index("GRADIENT")
_OPTIMIZER_STATE = CATEGORIES.index("OPTIMIZER_STATE")
_DEVICE_TYPES = {"cpu": 0, "cuda": 1}

# Suffix -> the core's format, longest suffixes first.
_FORMATS = (
    (".raw.json.gz", "raw"), (".raw.json", "raw"), (".json.gz", "json"), (".json", "json"), (".html", "html"),
)


class RoleObserver:
    """Sees module parameters (at each module's first call) and, after every optimizer step,
    parameters, their gradients and the optimizer's state tensors.

    Module calls come through perfprof's wrapper of ``torch.nn.Module.__call__``, not a global
    module hook: torch.compile warns about global hooks at every call of a compiled module, and
    traces them into its graphs. The optimizer hook is global (torch has no other way to see
    every optimizer). What was seen goes to the recorder at stop().
    """

    def __init__(self) -> None:
        self._seen: List[Tuple[int, int, int, int, int, int]] = []
        self._handles: List[Any] = []
        self._observing_modules = False
        self._lock = threading.Lock()
        self._tensor_type: Any = None

    def start(self) -> None:
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._tensor_type = torch.Tensor
        self._handles = [register_optimizer_step_post_hook(self._on_optimizer_step)]
        torch_capture.use_module_call_wrapper()
        _core.module_calls_observe(self._on_module_call)
        self._observing_modules = True

    def stop(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._observing_modules:
            _core.module_calls_observe(None)
            torch_capture.release_module_call_wrapper()
            self._observing_modules = False
        with self._lock:
            seen, self._seen = self._seen, []
        _core.add_observed_tensors(seen)

    def _on_module_call(self, module: Any) -> None:
        for parameter in module._parameters.values():
            if parameter is not None:
                self._note(parameter, _PARAMETER)
                self._note(parameter.grad, _GRADIENT)

    def _on_optimizer_step(self, optimizer: Any, _args: Any, _kwargs: Any) -> None:
        for group in optimizer.param_groups:
            for parameter in group["params"]:
                self._note(parameter, _PARAMETER)
                self._note(parameter.grad, _GRADIENT)
                for value in optimizer.state.get(parameter, {}).values():
                    self._note(value, _OPTIMIZER_STATE)

    def _note(self, tensor: Any, category: int) -> None:
        if not isinstance(tensor, self._tensor_type) or tensor.device.type not in _DEVICE_TYPES:
            return
        try:
            storage = tensor.untyped_storage()
        except (RuntimeError, NotImplementedError):  # tensors without storage (meta, sparse, ...)
            return
        device = tensor.device
        entry = (storage.data_ptr(), _DEVICE_TYPES[device.type], -1 if device.index is None else device.index,
                 _core.now_ns(), storage.nbytes(), category)
        with self._lock:
            self._seen.append(entry)


def write_flags(name: str, num_inputs: int) -> Optional[List[bool]]:
    """Which of an operator's `num_inputs` inputs its schemas mark as written; None when torch
    has no schema of that name and arity (then it may write any of them)."""
    import torch

    if "::" not in name:
        return None
    try:
        schemas = torch._C._jit_get_schemas_for_operator(name)
    except RuntimeError:
        return None
    flags: Optional[List[bool]] = None
    for schema in schemas:
        if len(schema.arguments) != num_inputs:
            continue
        if flags is None:
            flags = [False] * num_inputs
        for i, argument in enumerate(schema.arguments):
            flags[i] |= bool(getattr(argument.alias_info, "is_write", False))
    return flags


def import_torch_memory(result: Any, os_thread_ids: dict) -> None:
    """Read the allocator events and operator data flow torch recorded (at the end of a session);
    `os_thread_ids` maps torch's thread ids to the OS's."""
    _core.import_torch_memory(result.experimental_event_tree(), write_flags, os_thread_ids)


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
    os.makedirs(os.path.dirname(os.path.abspath(output_path)), exist_ok=True)
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
