"""torch.profiler used on a thread whose operators perfprof captures.

torch's profiler state is one per thread, and perfprof captures operators through it. torch.profiler
(``torch.profiler.profile``, ``torch.autograd.profiler.profile``, ``emit_nvtx``, ``emit_itt``)
prepares, switches it on and switches it off through functions its module looks up when called.
perfprof puts its own in their place once it captures operators: before torch's prepare or
switch-on, perfprof's capture reads what it recorded and steps aside (torch's prepare alone ends
the session perfprof's state belongs to); after torch's switch-off it takes the state back, and
after torch clears its "profiler enabled" flag perfprof sets it again while it still captures. Both
profilers then get their operators, and torch.profiler never finds the thread's state taken.
torch's own collection is process-wide and runs once at a time (two crash the process): while
perfprof uses it on one thread, torch.profiler started on another raises a ``RuntimeError`` saying
so. Threads where perfprof captures nothing see torch's functions unchanged otherwise.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Callable, Tuple

_lock = threading.Lock()
_installed = False


@dataclass(frozen=True)
class HandOver:
    """What perfprof's capture does around torch.profiler's switches (torch_capture's functions,
    passed in: this module sits below the capture it serves)."""

    torch_profiler_starts: Callable[[bool], None]  # argument: torch's own collection starts
    torch_profiler_stopped: Callable[[], None]
    keep_profiler_flag: Callable[[], None]


def install(hand_over: HandOver) -> None:
    """Put the hand-over around torch.profiler's switches (once per process)."""
    global _installed
    import torch.autograd.profiler as autograd_profiler

    with _lock:
        if _installed:
            return
        _installed = True
        prepare = autograd_profiler._prepare_profiler
        enable, disable = autograd_profiler._enable_profiler, autograd_profiler._disable_profiler
        on_stop = autograd_profiler._run_on_profiler_stop

    def after_perfprof_steps_aside(switch: Any, kineto: Callable[[Tuple[Any, ...]], bool]) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                hand_over.torch_profiler_starts(kineto(args))
                return switch(*args, **kwargs)
            except BaseException:
                hand_over.torch_profiler_stopped()
                raise
        return call

    def disable_then_perfprof_resumes(*args: Any, **kwargs: Any) -> Any:
        try:
            return disable(*args, **kwargs)
        finally:
            hand_over.torch_profiler_stopped()

    # Only torch's own collection is prepared, and it is switched on with activities; the
    # observer states of emit_nvtx and emit_itt are switched on with none.
    autograd_profiler._prepare_profiler = after_perfprof_steps_aside(prepare, lambda args: True)
    autograd_profiler._enable_profiler = after_perfprof_steps_aside(
        enable, lambda args: len(args) > 1 and bool(args[1]))
    autograd_profiler._disable_profiler = disable_then_perfprof_resumes

    def on_stop_keeping_perfprofs_flag(*args: Any, **kwargs: Any) -> Any:
        try:
            return on_stop(*args, **kwargs)  # clears torch's "profiler enabled" flag
        finally:
            hand_over.keep_profiler_flag()

    autograd_profiler._run_on_profiler_stop = on_stop_keeping_perfprofs_flag
