"""Host-side capture for PyTorch scripts: operators, module forwards and Python calls.

Operators come from torch's own RecordFunction observers, the ones behind
``torch.autograd.profiler.emit_itt`` / ``emit_nvtx``. perfprof registers its C++ stubs as the
receivers of those observers (``csrc/torch_hooks``), so every operator, forward and backward, on
every thread the profiler state reaches (autograd engine threads included) becomes a range in the
recorder with no Python code per operator. The observer state is per thread and is switched on
only while perfprof collects (warm-up and recorded steps):

* ITT state: operator names only; the cheapest.
* NVTX state: names, autograd sequence numbers and input shapes; used for ``record_shapes``.

Module forwards (``with_modules``) use torch's global module hooks, Python calls
(``with_stack``) a C-level profile hook on the capturing threads.
"""
from __future__ import annotations

import os
import sys
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from . import _core
from ._logging import warn_once

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_MODULE_CATEGORY = "python_function"


@dataclass(frozen=True)
class CaptureOptions:
    """What one thread captures."""

    record_shapes: bool = False
    with_stack: bool = False
    with_modules: bool = False


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.options: Optional[CaptureOptions] = None  # capturing on this thread
        self.torch_state_on = False
        self.module_ranges: List[int] = []


_thread = _ThreadState()
_lock = threading.Lock()
_stubs_error: Optional[str] = None  # None: not tried yet
_module_hooks: List[Any] = []
_module_hook_users = 0
_module_names: "weakref.WeakKeyDictionary[Any, str]" = weakref.WeakKeyDictionary()
_module_counts: Dict[str, int] = {}


def torch_loaded() -> bool:
    """True when the script has imported torch (perfprof never imports it itself)."""
    return sys.modules.get("torch") is not None


def _install_stubs() -> bool:
    global _stubs_error
    with _lock:
        if _stubs_error is None:
            import torch

            library = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
            _stubs_error = _core.install_torch_profiler_stubs(library)
    if _stubs_error:
        warn_once("torch-stubs", f"perfprof: PyTorch operators are not captured: {_stubs_error}")
    return not _stubs_error


def start_thread(options: CaptureOptions) -> None:
    """Start capturing on the calling thread with `options` (no-op if torch is not imported)."""
    if not torch_loaded() or _thread.options is not None:
        return
    _thread.options = options
    if _install_stubs():
        _thread.torch_state_on = _enable_torch_state(options.record_shapes)
    if options.with_modules:
        _use_module_hooks()
    if options.with_stack and not _core.python_tracer_install(_PACKAGE_DIR):
        warn_once("python-tracer", "perfprof: with_stack: another profile hook (sys.setprofile, cProfile) is "
                  "active on this thread; Python calls are not captured")


def stop_thread() -> None:
    """Stop capturing on the calling thread."""
    options = _thread.options
    if options is None:
        return
    _thread.options = None
    if _thread.torch_state_on:
        _thread.torch_state_on = False
        _disable_torch_state()
    if options.with_modules:
        _release_module_hooks()
    if options.with_stack:
        _core.python_tracer_uninstall()
    _thread.module_ranges.clear()


def capturing_here() -> bool:
    return _thread.options is not None


def reset_module_names() -> None:
    """Module instance numbers (``Linear_0``, ``Linear_1``) restart with each profiler."""
    _module_names.clear()
    _module_counts.clear()


# -- torch's observer state -----------------------------------------------------------------------

def _enable_torch_state(record_shapes: bool) -> bool:
    from torch._C._profiler import ProfilerConfig, ProfilerState, _ExperimentalConfig
    import torch.autograd

    state = ProfilerState.NVTX if record_shapes else ProfilerState.ITT
    config = ProfilerConfig(state, record_shapes, False, False, False, False, _ExperimentalConfig())
    try:
        torch.autograd._enable_profiler(config, set())
    except RuntimeError as error:  # torch.profiler already runs on this thread
        warn_once("torch-state", f"perfprof: PyTorch operators are not captured on this thread: {error}")
        return False
    return True


def _disable_torch_state() -> None:
    import torch.autograd

    try:
        torch.autograd._disable_profiler()
    except RuntimeError as error:
        warn_once("torch-state-off", f"perfprof: could not switch off torch's observer state: {error}")


# -- module forwards ------------------------------------------------------------------------------

def _use_module_hooks() -> None:
    global _module_hook_users
    from torch.nn.modules import module as nn_module

    with _lock:
        _module_hook_users += 1
        if _module_hooks:
            return
        _module_hooks.append(nn_module.register_module_forward_pre_hook(_module_enter))
        _module_hooks.append(nn_module.register_module_forward_hook(_module_exit, always_call=True))


def _release_module_hooks() -> None:
    global _module_hook_users
    with _lock:
        _module_hook_users -= 1
        if _module_hook_users > 0:
            return
        for handle in _module_hooks:
            handle.remove()
        _module_hooks.clear()


def _module_name(module: Any) -> str:
    name = _module_names.get(module)
    if name is None:
        kind = type(module).__name__
        index = _module_counts.get(kind, 0)
        _module_counts[kind] = index + 1
        name = f"nn.Module: {kind}_{index}"
        _module_names[module] = name
    return name


def _module_enter(module: Any, _inputs: Any) -> None:
    options = _thread.options
    if options is not None and options.with_modules:
        _thread.module_ranges.append(_core.range_begin(_module_name(module), _MODULE_CATEGORY, _core.CHANNEL_OPERATORS))


def _module_exit(_module: Any, _inputs: Any, _output: Any) -> None:
    ranges = _thread.module_ranges
    if ranges:
        _core.range_end(ranges.pop())
