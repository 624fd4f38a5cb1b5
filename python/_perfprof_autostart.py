"""Dynamic profiling with no change to the script: ``PERFPROF_CONFIG_PATH=dir python train.py``.

perfprof's wheel installs ``perfprof-autostart.pth`` into site-packages. Python runs its one
line at every start-up: a test of the environment, which is all it costs when
``PERFPROF_CONFIG_PATH`` is unset. When it is set, :func:`activate` is called: it imports
nothing heavy (not perfprof, not torch) and only asks to be told when ``torch.optim.optimizer``
is imported. There it registers an optimizer step post-hook (torch's
``register_optimizer_step_post_hook``); the first optimizer step hands over to
``perfprof.dynamic_profile``, which then counts one step per optimizer step. A process that
never steps an optimizer (a launcher, a DataLoader worker, pip) therefore never starts dynamic
profiling, and the first step (step 0) cannot be profiled, as the spec says.

This module sits at the top level of site-packages, not in the perfprof package, because
importing anything inside perfprof would import perfprof itself at every start-up.
"""
from __future__ import annotations

import importlib.abc
import importlib.util
import os
import sys
from typing import Any, Callable, Optional

ENVIRONMENT_VARIABLE = "PERFPROF_CONFIG_PATH"
OPTIMIZER_MODULE = "torch.optim.optimizer"

_on_optimizer_step: Optional[Callable[[], None]] = None  # set at the first optimizer step


def activate() -> None:
    """Arm dynamic profiling for the directory in PERFPROF_CONFIG_PATH (see the docstring)."""
    try:
        after_import(OPTIMIZER_MODULE, _register_optimizer_hook)
    except Exception as error:  # never stop the interpreter from starting
        _say(f"cannot watch for torch.optim ({error}); dynamic profiling is off")


def after_import(module_name: str, callback: Callable[[Any], None]) -> None:
    """Call `callback(module)` once `module_name` is imported: now if it already is, else right
    after its code has run (however it is imported)."""
    module = sys.modules.get(module_name)
    if module is not None:
        callback(module)
    else:
        sys.meta_path.insert(0, _AfterImportFinder(module_name, callback))


def _register_optimizer_hook(module: Any) -> None:
    module.register_optimizer_step_post_hook(_optimizer_stepped)


def _optimizer_stepped(optimizer: Any, args: Any, kwargs: Any) -> None:
    global _on_optimizer_step
    if _on_optimizer_step is None:
        _on_optimizer_step = _start_dynamic_profiling()
    _on_optimizer_step()


def _start_dynamic_profiling() -> Callable[[], None]:
    """perfprof.dynamic_profile on the environment's directory; its step function, or a no-op
    when it cannot start (said once)."""
    path = os.environ.get(ENVIRONMENT_VARIABLE, "")
    try:
        from perfprof import dynamic_profile

        return dynamic_profile._init_for_optimizer_steps(path, f"{ENVIRONMENT_VARIABLE}={path}")
    except Exception as error:  # never hurt the job
        _say(f"{ENVIRONMENT_VARIABLE}={path!r}: dynamic profiling is off: {error}")
        return lambda: None


def _say(message: str) -> None:
    sys.stderr.write(f"perfprof: {message}\n")


class _AfterImportFinder(importlib.abc.MetaPathFinder):
    """Finds one module through the other finders and wraps its loader so that `callback` runs
    after the module's code; removes itself once used."""

    def __init__(self, module_name: str, callback: Callable[[Any], None]) -> None:
        self.module_name = module_name
        self.callback = callback

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != self.module_name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is not None and spec.loader is not None:
            spec.loader = _CallbackLoader(spec.loader, self.callback)
        return spec


class _CallbackLoader(importlib.abc.Loader):
    """A module's own loader, then `callback(module)`; anything else is the loader's."""

    def __init__(self, loader: Any, callback: Callable[[Any], None]) -> None:
        self._loader = loader
        self._callback = callback

    def create_module(self, spec: Any) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        self._loader.exec_module(module)
        try:
            self._callback(module)
        except Exception as error:  # never break the import of the user's module
            _say(f"after importing {module.__name__}: {error}")

    def __getattr__(self, name: str) -> Any:
        return getattr(self._loader, name)
