"""``perfprof run``: profile a script or module without changing it, as ``nsys profile`` does.

The target runs in this process (as ``python script.py`` / ``python -m module`` would run it:
``sys.argv``, ``sys.path[0]`` and ``__main__`` are the target's) under perfprof's dynamic
profiler, which counts steps on optimizer steps (torch's step post-hook) or on
``perfprof.dynamic_profile.step()`` calls. What it collects is either the ``profile()``
options given on the command line, recorded from the start (or as ``--schedule`` says) until the
target ends, or a profiler_config.json (``--config``), collected from its ``start_step``. With
auto-plot, each run directory gets its plots once written; a required plot that fails makes the
run fail once the target has ended (the target itself is never stopped for it).
"""
from __future__ import annotations

import dataclasses
import os
import runpy
import sys
import traceback
from typing import Any, Callable, Dict, List, Optional

from ._dynamic_config import DynamicConfig
from ._logging import logger
from ._options import ProfilerOptions
from .schedule import ProfilerAction

STEPS_ON_OPTIMIZER = "optimizer"
STEPS_ON_EXPLICIT = "explicit"

EXIT_INTERRUPTED = 130  # as a shell reports a SIGINT


@dataclasses.dataclass(frozen=True)
class RunTarget:
    """What to run: a script path, or a module name (``-m``), with its arguments."""

    name: str
    is_module: bool
    args: List[str]


@dataclasses.dataclass(frozen=True)
class RunProfile:
    """How to profile it: ``profile()`` options and schedule, or a profiler_config.json."""

    output: str
    steps_on: str = STEPS_ON_OPTIMIZER
    options: ProfilerOptions = dataclasses.field(default_factory=ProfilerOptions)
    schedule: "Optional[Callable[[int], ProfilerAction]]" = None
    worker_name: Optional[str] = None
    analyse: bool = True
    config: Optional[DynamicConfig] = None
    config_source: str = ""
    warmup_steps: int = 0  # the first steps counted as start-up, not as steps (no ProfilerStep range)
    metadata: Dict[str, str] = dataclasses.field(default_factory=dict)  # add_metadata(key, value) for each
    auto_plot: Optional[bool] = None  # --auto-plot / --no-auto-plot; None: as the config says (off without one)
    plot_required: bool = False


@dataclasses.dataclass(frozen=True)
class RunOutcome:
    """What a profiled run gave."""

    code: int                         # the target's exit code
    run_dirs: List[str]
    plot_failures: List[Exception]    # required auto-plots that failed (--plot-required)
    steps: int = 0                           # step boundaries the target passed (optimizer steps, dp.step())
    compile_time_ns: Optional[int] = None    # torch.compile's own compile time, when it compiled
    peak_device_bytes: Optional[int] = None  # most CUDA memory allocated at once, when CUDA was used
    peak_host_bytes: Optional[int] = None    # this process's peak resident set

    def report(self) -> Dict[str, Any]:
        """The outcome as ``perfprof run --run-report`` writes it (JSON-ready)."""
        return {"exit_code": self.code, "run_dirs": self.run_dirs, "steps": self.steps,
                "compile_time_ns": self.compile_time_ns,
                "peak_device_bytes": self.peak_device_bytes, "peak_host_bytes": self.peak_host_bytes,
                "plot_failures": [str(failure) for failure in self.plot_failures]}


def run(target: RunTarget, how: RunProfile) -> RunOutcome:
    """Run `target` profiled as `how` says."""
    from . import dynamic_profile
    from ._dynamic_profiler import DynamicProfiler

    profiler = dynamic_profile._install(lambda: DynamicProfiler(None, log_dir=how.output), "perfprof run",
                                        explicit_steps=how.steps_on == STEPS_ON_EXPLICIT)
    if profiler is None:
        raise RuntimeError("dynamic profiling is already active in this process")
    if how.steps_on == STEPS_ON_OPTIMIZER:
        from _perfprof_autostart import OPTIMIZER_MODULE, after_import

        after_import(OPTIMIZER_MODULE, lambda module: module.register_optimizer_step_post_hook(
            lambda optimizer, args, kwargs: profiler.step()))
    if how.config is not None:
        config = _with_plot_flags(how.config, how)
        profiler.request(dataclasses.replace(config, metadata={**config.metadata, **how.metadata}), how.config_source)
    else:
        prof = _profile(how)
        for key, value in how.metadata.items():
            prof.add_metadata(key, value)
        _count_start_up(prof, how.warmup_steps)
        profiler.begin(prof, "perfprof run")
    try:
        code = _execute(target)
    finally:
        dynamic_profile._close()  # writes what the last collection recorded
    return RunOutcome(code, profiler.run_dirs, profiler.plot_failures(), profiler.step_num, _torch_compile_time_ns(),
                      _peak_cuda_bytes(), _peak_resident_bytes())


def _with_plot_flags(config: DynamicConfig, how: RunProfile) -> DynamicConfig:
    """The command line's auto-plot flags over the config's: a flag given wins."""
    auto_plot = config.auto_plot if how.auto_plot is None else how.auto_plot
    return dataclasses.replace(config, auto_plot=auto_plot, plot_required=config.plot_required or how.plot_required)


def _profile(how: RunProfile):  # type: ignore[no-untyped-def]
    from .profiler import _record_every_step, profile
    from .trace_handler import tensorboard_trace_handler

    # A schedule is always given, so that every step is a ProfilerStep#N range.
    return profile(**how.options.as_kwargs(), schedule=how.schedule or _record_every_step,
                   on_trace_ready=tensorboard_trace_handler(how.output, how.worker_name, analyse_flag=how.analyse,
                                                            auto_plot=how.auto_plot, plot_required=how.plot_required))


def _count_start_up(prof, warmup_steps: int) -> None:  # type: ignore[no-untyped-def]
    """Keep the script's start-up out of its steps: the profile records from the script's start,
    but its first step begins at the first call of a torch.nn.Module (the first forward pass) or,
    with `warmup_steps`, at that step boundary (docs/analysis.md, "Steps")."""
    if warmup_steps > 0:
        prof._start_steps_at(warmup_steps)
        return
    from _perfprof_autostart import after_import

    prof._start_steps_at(1)
    after_import(_MODULE_MODULE, lambda module: _call_once_at_first_module_call(module, prof._first_step_begins))


_MODULE_MODULE = "torch.nn.modules.module"


def _call_once_at_first_module_call(module: Any, callback: Callable[[], None]) -> None:
    """Call `callback` at the first call of any torch.nn.Module, through a global forward
    pre-hook removed at that call: torch.compile warns about global hooks (and traces them into
    its graphs) when it compiles, which comes after."""
    handle: Any = None

    def first_call(_module: Any, _args: Any) -> None:
        handle.remove()
        try:
            callback()
        except Exception as error:  # never into the script's forward pass
            logger.warning("perfprof run: cannot begin the first step at the first module call: %r", error)

    handle = module.register_module_forward_pre_hook(first_call)


def _execute(target: RunTarget) -> int:
    """Run the target as Python would; its exit code (1 with the traceback for an exception)."""
    saved_argv, saved_path = list(sys.argv), list(sys.path)
    sys.argv = [target.name, *target.args]
    try:
        if target.is_module:
            sys.path.insert(0, os.getcwd())
            runpy.run_module(target.name, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target.name)))
            runpy.run_path(target.name, run_name="__main__")
        return 0
    except SystemExit as exit_:
        return _exit_code(exit_.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        return EXIT_INTERRUPTED
    except Exception:
        traceback.print_exc()
        return 1
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path


def _torch_compile_time_ns() -> Optional[int]:
    """The time torch.compile spent compiling in this process: TorchDynamo's own timing of each
    frame's compilation (``_compile.compile_inner``, the backend's compiler included); None when
    nothing was compiled."""
    utils = sys.modules.get("torch._dynamo.utils")
    times = getattr(utils, "compilation_time_metrics", {}).get("_compile.compile_inner") if utils else None
    return round(sum(times) * 1e9) if times else None


def _peak_cuda_bytes() -> Optional[int]:
    """The most memory PyTorch's CUDA allocator held for tensors at once, over the devices this
    process used; None when it used none."""
    torch = sys.modules.get("torch")
    if torch is None or not torch.cuda.is_initialized():
        return None
    return max(torch.cuda.max_memory_allocated(device) for device in range(torch.cuda.device_count()))


def _peak_resident_bytes() -> Optional[int]:
    """This process's peak resident set (getrusage; Linux counts KiB, macOS bytes)."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def _exit_code(code: object) -> int:
    """What ``sys.exit(code)`` makes the process return."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1
