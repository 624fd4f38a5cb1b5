"""Memory roles (``profile_memory``): which tensors are module parameters, gradients and optimizer
state, seen from perfprof's hooks, so that their bytes get those categories (docs/memory.md)."""
from __future__ import annotations

import threading
from typing import Any, List, Optional, Set, Tuple

from .. import _core, torch_capture
from .._logging import warn_once
from .._options import ProfilerOptions
from ..memory import CATEGORIES
from .base import Collection, Collector

_PARAMETER = CATEGORIES.index("PARAMETER")
_GRADIENT = CATEGORIES.index("GRADIENT")
_OPTIMIZER_STATE = CATEGORIES.index("OPTIMIZER_STATE")
_DEVICE_TYPES = {"cpu": 0, "cuda": 1}


class MemoryRoles(Collector):
    """Sees module parameters (at each module's first call) and, after each optimizer's first
    step in a kept window, parameters, their gradients and the optimizer's state tensors; what it
    saw goes to the recorder at stop.

    Once per optimizer, as torch.profiler: its Python tracer takes an optimizer's tensors at the
    first ``step()`` it records and keeps them (its value cache), so a gradient made anew by a later
    step (``zero_grad`` sets them to None, and ``AccumulateGrad`` copies a gradient whose layout
    differs, as torch.compile's conv gradients do) is no GRADIENT there but AUTOGRAD_DETAIL.

    Module calls come through perfprof's wrapper of ``torch.nn.Module.__call__``, not a global
    module hook: torch.compile warns about global hooks at every call of a compiled module, and
    traces them into its graphs. The optimizer hook is global (torch has no other way to see
    every optimizer). Without torch imported there is nothing to see; without the hooks (an older
    torch) categories come from the data flow alone.
    """

    name = "memory roles"

    def __init__(self, options: ProfilerOptions) -> None:
        super().__init__(options)
        self._seen: List[Tuple[int, int, int, int, int, int]] = []
        self._stepped: Set[int] = set()  # ids of the optimizers seen since the window began (or start)
        self._handles: List[Any] = []
        self._observing_modules = False
        self._observing = False
        self._lock = threading.Lock()
        self._tensor_type: Optional[type] = None

    @staticmethod
    def wanted(options: ProfilerOptions) -> bool:
        return options.cpu and options.profile_memory

    def start(self) -> None:
        if not torch_capture.torch_loaded():
            return
        try:
            self._observe()
        except Exception as error:  # a torch without the global hooks: categories come from data flow alone
            self._release_hooks()
            warn_once("memory-hooks", f"perfprof: profile_memory: parameters and optimizer state are inferred, "
                      f"not observed: {error!r}")

    def window_begin(self) -> None:
        with self._lock:
            self._stepped.clear()

    def stop(self, collection: Collection) -> None:
        if not self._observing:
            return
        self._observing = False
        try:
            self._release_hooks()
            with self._lock:
                seen, self._seen = self._seen, []
            _core.add_observed_tensors(seen)
        except Exception as error:  # never fail the job for its profiler
            warn_once("memory-hooks-stop", f"perfprof: profile_memory: observed parameters are lost: {error!r}")

    def _observe(self) -> None:
        import torch
        from torch.optim.optimizer import register_optimizer_step_post_hook

        self._tensor_type = torch.Tensor
        self._handles = [register_optimizer_step_post_hook(self._on_optimizer_step)]
        torch_capture.use_module_call_wrapper()
        _core.module_calls_observe(self._on_module_call)
        self._observing_modules = True
        self._observing = True

    def _release_hooks(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []
        if self._observing_modules:
            _core.module_calls_observe(None)
            torch_capture.release_module_call_wrapper()
            self._observing_modules = False

    def _on_module_call(self, module: Any) -> None:
        for parameter in module._parameters.values():
            if parameter is not None:
                self._note(parameter, _PARAMETER)
                self._note(parameter.grad, _GRADIENT)

    def _on_optimizer_step(self, optimizer: Any, _args: Any, _kwargs: Any) -> None:
        with self._lock:
            if id(optimizer) in self._stepped:  # torch keys its cache by address too
                return
            self._stepped.add(id(optimizer))
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
