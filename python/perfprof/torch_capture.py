"""Host-side capture: PyTorch operators and module calls, and Python calls.

Operators come from torch's own RecordFunction observers, the ones behind
``torch.autograd.profiler.emit_itt`` / ``emit_nvtx``. perfprof registers its C++ stubs as the
receivers of those observers (``csrc/torch_hooks``), so every operator, forward and backward, on
every thread the profiler state reaches (autograd engine threads included) becomes a range in the
recorder with no Python code per operator. The observer state is per thread and is switched on
only while perfprof collects (warm-up and recorded steps):

* ITT state: operator names only; the cheapest.
* NVTX state: names, autograd sequence numbers and input shapes; used for ``record_shapes`` on
  child threads.

With ``exact_inputs`` (the profiling thread, when shapes, FLOPs or argument values are asked for)
torch's own profiler state runs instead, restricted to CPU operators: only it records input
dtypes, strides and scalar argument values. Its operators are moved into the recorder when the
thread stops (``_core.import_torch_events``). It is also the only exact source of allocator events
for ``profile_memory`` (``memory.py``). That state is process-wide inside torch (libkineto),
so one thread at a time may use it, and never while a torch.profiler session runs.

Python calls (``with_stack``) come from C callbacks on the capturing threads, with or without
torch (``csrc/bindings/python_tracer.cpp``: sys.monitoring on 3.12+, a profile hook before),
named as torch.profiler names them, module calls included. Module calls for ``with_modules``
without ``with_stack`` come from a C wrapper put in place of ``torch.nn.Module.__call__`` while
some thread captures them (``csrc/bindings/module_calls.cpp``). The alternatives cost more per
*operator*: any global module hook sends every module call down torch's slower hook-running path,
and a profile hook runs on every Python call.
"""
from __future__ import annotations

import os
import site
import sys
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Set

from . import _core, _start_faults
from ._logging import logger, warn_once

if TYPE_CHECKING:
    from ._options import ProfilerOptions

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


@dataclass(frozen=True)
class CaptureOptions:
    """What one thread captures."""

    record_shapes: bool = False
    with_stack: bool = False
    with_modules: bool = False
    exact_inputs: bool = False  # dtypes, strides and scalar arguments through torch's own state
    profile_memory: bool = False  # allocator events, through torch's own state

    @classmethod
    def of(cls, options: "ProfilerOptions", profiling_thread: bool) -> "CaptureOptions":
        """What a thread captures for a profiler's `options`. Exact inputs and memory come from
        torch's own state, which one thread uses at a time: the profiling thread, not the child
        threads of ``enable_profiler_in_child_thread``."""
        shapes = options.record_shapes or options.with_flops  # FLOPs are computed from shapes
        return cls(record_shapes=shapes, with_stack=options.with_stack, with_modules=options.with_modules,
                   exact_inputs=profiling_thread and (shapes or options.experimental_config.record_op_args),
                   profile_memory=profiling_thread and options.profile_memory)


class _ThreadState(threading.local):
    def __init__(self) -> None:
        self.options: Optional[CaptureOptions] = None  # capturing on this thread
        self.torch_state: Optional[str] = None  # the ProfilerState name switched on here
        self.module_wrapper_used = False
        self.record_function_wrapper_used = False
        self.window_begin_ns = 0  # operators torch recorded before it are not read
        # What perfprof's state recorded until torch.profiler took the state over on this thread
        # (torch_profiler_starts): read, and kept like stop_thread's results.
        self.results_before_handover: List[Any] = []


_thread = _ThreadState()
# Captures begun before torch was imported, until they stop or torch is imported: the import
# starts the operator capture of the importing thread's (one import hook for the process,
# however many captures wait: a script that never imports torch must not collect hooks).
_waiting_for_torch: List[CaptureOptions] = []
_torch_import_watched = False
_lock = threading.Lock()
_stubs_error: Optional[str] = None  # None: not tried yet
_kineto_thread: Optional[int] = None  # the thread using torch's own profiler state
_module_call_users = 0
_module_call_wrapper: Optional[_core.ModuleCallWrapper] = None
_record_function_users = 0
_record_function_enter: Optional[_core.UserScopeEnter] = None  # stands in for record_function.__enter__
_profiler_flag_threads: Set[int] = set()  # threads capturing operators, for torch's "profiler enabled" flag
_abandoned_threads: Set[int] = set()  # threads whose capture a profiler stopped on another thread left on
_profiler_flag_set_here = False  # perfprof, not torch.profiler, set that flag


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
    """Start capturing on the calling thread with `options`: operators and modules once the
    script has imported torch (now, or when this thread imports it: ``perfprof run`` starts
    before the script's ``import torch``), Python calls in any case."""
    end_abandoned_capture()
    if _thread.options is not None:
        return
    _thread.options = options
    if torch_loaded():
        _start_torch_capture(options)
        _start_faults.reached("torch capture")
    else:
        _waiting_for_torch.append(options)
        _watch_torch_import()
    if options.with_stack:
        if not _core.python_tracer_install(_PACKAGE_DIR, _path_prefixes(), _module_call_code()):
            warn_once("python-tracer", "perfprof: with_stack: another tool holds what perfprof traces with (a "
                      "profile hook such as cProfile's before Python 3.12; every sys.monitoring tool id from "
                      "3.12); Python calls are not captured")
        _start_faults.reached("python tracer")


def _start_torch_capture(options: CaptureOptions) -> None:
    """Capture torch's operators (and modules) on the calling thread."""
    from . import _torch_profiler_beside

    _torch_profiler_beside.install(_torch_profiler_beside.HandOver(
        torch_profiler_starts, torch_profiler_stopped, keep_profiler_flag))
    if _install_stubs():
        _thread.torch_state = _enable_torch_state(options)
        _use_profiler_flag()
        use_record_function_wrapper()
        _thread.record_function_wrapper_used = True
    # With with_stack the Python tracer names module calls, as torch.profiler's does.
    if options.with_modules and not options.with_stack:
        use_module_call_wrapper()
        _thread.module_wrapper_used = True
        _core.module_calls_capture(True)


def _watch_torch_import() -> None:
    """Have :func:`_torch_imported` called once torch is imported (once per process)."""
    global _torch_import_watched
    with _lock:
        if _torch_import_watched:
            return
        _torch_import_watched = True
    from _perfprof_autostart import after_import

    after_import("torch", lambda torch: _torch_imported())


def _torch_imported() -> None:
    """torch was just imported: the importing thread's capture (which began before, as torch was
    not loaded then) captures it now. torch's profiler state is per thread, so a capture waiting
    on another thread gets no operators; that is said once."""
    others = len(_waiting_for_torch)
    _waiting_for_torch.clear()
    if _thread.options is not None:
        _start_torch_capture(_thread.options)
        others -= 1
    if others > 0:
        warn_once("torch-imported-elsewhere", "perfprof: torch was imported on another thread than the "
                  "profiling one after profiling began; its operators are not captured")


def stop_thread(window_begin_ns: int = 0) -> Any:
    """Stop capturing on the calling thread; what torch recorded before `window_begin_ns`
    (``_core.now_ns()`` clock: warm-up steps) is not read.

    Returns the list of torch's results that were read, or None. Freeing them takes about as long as reading
    them, so the caller keeps them out of the stop a user waits for, as torch.profiler keeps its own.
    """
    options = _thread.options
    if options is None:
        return None
    _thread.options = None
    _waiting_for_torch[:] = [waiting for waiting in _waiting_for_torch if waiting is not options]
    torch_results: List[Any] = _thread.results_before_handover
    _thread.results_before_handover = []
    if _thread.torch_state is not None:
        torch_results.append(_disable_torch_state(_thread.torch_state, options, window_begin_ns))
        _thread.torch_state = None
    release_profiler_flag(threading.get_ident())
    if _thread.module_wrapper_used:
        _core.module_calls_capture(False)
        release_module_call_wrapper()
        _thread.module_wrapper_used = False
    if _thread.record_function_wrapper_used:
        release_record_function_wrapper()
        _thread.record_function_wrapper_used = False
    if options.with_stack:
        _core.python_tracer_uninstall()
    return torch_results


def window_begin() -> None:
    """The kept window begins (the recorder was just emptied): the Python frames running on this
    thread are recorded as beginning now, and built-ins are named afresh (with_stack)."""
    _thread.window_begin_ns = _core.now_ns()  # this thread runs no operator since the window's begin
    _thread.results_before_handover = []  # warm-up's
    _core.python_tracer_window_begin()


# -- torch.profiler on a capturing thread -----------------------------------------------------------
# torch's profiler state is one per thread. A torch.profiler session started on a thread whose
# operators perfprof captures through that state would fail ("Profiler is already enabled on this
# thread") or take the state over and leave perfprof's cycle without operators. Instead perfprof
# hands the state over while torch.profiler runs and takes it back when it stops
# (_torch_profiler_beside.py calls these around torch's own enable and disable).

def torch_profiler_starts(kineto: bool) -> None:
    """torch.profiler is about to switch torch's state on for this thread (`kineto`: its own
    collection, process-wide inside torch): perfprof's capture, if it holds the state here, reads
    what it recorded and steps aside. Raises ``RuntimeError`` when `kineto` and perfprof uses
    torch's collection on another thread: two at once crash the process, and only that thread can
    switch its own off."""
    holder = _kineto_thread
    if kineto and holder is not None and holder != threading.get_ident():
        names = {thread.ident: thread.name for thread in threading.enumerate()}
        raise RuntimeError(
            f"torch.profiler cannot start: perfprof.profile holds torch's profiler collection on thread "
            f"{names.get(holder, holder)!r} (it records input types and values there: record_shapes, with_flops, "
            "record_op_args or profile_memory), and torch runs one at a time in a process; stop that perfprof "
            "profiler first, or start torch.profiler on that thread (perfprof then steps aside)")
    if _thread.torch_state is None or _thread.options is None:
        return
    warn_once("torch-profiler-inside", "perfprof: torch.profiler started on a thread whose operators perfprof "
              "captures; perfprof steps aside while it runs: the operators it records are in torch.profiler's "
              "results, not in perfprof's trace")
    results = _disable_torch_state(_thread.torch_state, _thread.options, _thread.window_begin_ns)
    _thread.results_before_handover.append(results)
    _thread.torch_state = None


def torch_profiler_stopped() -> None:
    """torch.profiler switched torch's state off for this thread (or could not switch it on):
    perfprof's capture takes the state (back) if it stepped aside or could not start for it."""
    if _thread.options is None or _thread.torch_state is not None or _stubs_error != "":
        return
    _thread.torch_state = _enable_torch_state(_thread.options, after_torch_profiler=True)


def reset_module_names() -> None:
    """Module instance numbers (``Linear_0``, ``Linear_1``) restart with each kept window: as
    torch.profiler's, they count the modules called in the recorded steps, not in warm-up."""
    _core.module_calls_reset_names()


# -- Python calls (with_stack) -------------------------------------------------------------------

_path_prefix_list: Optional[List[str]] = None


def _path_prefixes() -> List[str]:
    """What torch.profiler removes from the start of file names (torch.profiler.python_tracer):
    the site and sys.path directories, and the one holding torch, longest first. Taken once per
    process, at the first with_stack session, as torch takes it once."""
    global _path_prefix_list
    if _path_prefix_list is None:
        paths = [*site.getsitepackages(), *sys.path, site.getuserbase(), site.getusersitepackages()]
        if torch_loaded():
            paths.append(os.path.dirname(os.path.dirname(sys.modules["torch"].__file__)))
        _path_prefix_list = [path + os.sep for path in sorted({os.path.abspath(p) for p in paths}, reverse=True)]
    return _path_prefix_list


def _module_call_code() -> Any:
    """The code of ``torch.nn.Module.__call__`` (of the function perfprof's wrapper stands in for),
    whose frames torch.profiler names by their module; None without torch."""
    if not torch_loaded():
        return None
    call = sys.modules["torch"].nn.Module.__dict__.get("__call__")
    return getattr(getattr(call, "replaced", call), "__code__", None)


# -- torch's observer state -----------------------------------------------------------------------

def uses_torch_results(thread: int) -> bool:
    """Whether thread `thread` (an ident) captures through torch's KINETO state, whose results
    perfprof reads at stop."""
    return _kineto_thread == thread


def pause_torch_state(paused: bool) -> None:
    """Pause (True) or resume (False) torch's own collection of this thread's operators, when
    perfprof reads them from torch's results (its KINETO state); the other states report each
    operator to perfprof's stubs, which the recorder's channels gate."""
    if _thread.torch_state != "KINETO":
        return
    from torch._C._autograd import _toggle_collection_dynamic
    from torch._C._profiler import ProfilerActivity

    _toggle_collection_dynamic(not paused, {ProfilerActivity.CPU})


def _enable_torch_state(options: CaptureOptions, after_torch_profiler: bool = False) -> Optional[str]:
    """Switch on the torch profiler state `options` need on this thread; returns its name.
    `after_torch_profiler`: a torch.profiler session on this thread has just ended (torch clears its
    "profiler enabled" flag only afterwards), so that flag does not mean torch's state is busy."""
    from torch._C._profiler import ProfilerActivity, ProfilerConfig, ProfilerState, _ExperimentalConfig
    import torch.autograd

    state = ProfilerState.NVTX if options.record_shapes else ProfilerState.ITT
    if (options.exact_inputs or options.profile_memory) and _claim_kineto(after_torch_profiler):
        state = ProfilerState.KINETO
    elif options.profile_memory:
        warn_once("memory-unrecorded", "perfprof: profile_memory: allocations are not recorded on this thread "
                  "(torch's profiler state, their only exact source, is not available to perfprof here)")
    kineto = state == ProfilerState.KINETO
    memory = kineto and options.profile_memory
    # Memory profiling needs input identities (tensor ids) even when shapes were not asked for.
    config = ProfilerConfig(state, options.record_shapes or options.exact_inputs or memory, memory, False, False,
                            False, _ExperimentalConfig())
    activities = {ProfilerActivity.CPU} if kineto else set()
    try:
        if activities:
            torch.autograd._prepare_profiler(config, activities)
        torch.autograd._enable_profiler(config, activities)
    except RuntimeError as error:  # torch.profiler already runs on this thread
        warn_once("torch-state", "perfprof: torch.profiler holds torch's profiler state on this thread; perfprof "
                  f"captures this thread's operators only once it stops ({error})")
        if state == ProfilerState.KINETO:
            _release_kineto()
        return None
    return state.name


def _claim_kineto(after_torch_profiler: bool = False) -> bool:
    global _kineto_thread
    import torch

    if torch.version.cuda is not None and not _core.gpu_collecting():
        # On CUDA builds torch's state sets CUPTI up for Kineto (its own buffer callbacks), which
        # would leave perfprof's GPU collection without records until its next start registers
        # perfprof's callbacks again (csrc/cupti/activity_collector.cpp). While perfprof collects
        # GPU activity its callbacks are the ones CUPTI has, and torch's state stays CPU-only.
        warn_once("kineto-cupti", "perfprof: on CUDA builds of torch, input types and argument values are "
                  "recorded only when CUDA activity is collected too; shapes are recorded without them")
        return False
    with _lock:
        if _kineto_thread is None and (after_torch_profiler or not _torch_profiler_running()):
            _kineto_thread = threading.get_ident()
            return True
    warn_once("kineto-busy", "perfprof: torch's profiler is in use elsewhere in the process; operators are "
              "captured with shapes but without input types and argument values")
    return False


def _release_kineto() -> None:
    global _kineto_thread
    with _lock:
        _kineto_thread = None


def _disable_torch_state(state: str, options: CaptureOptions, window_begin_ns: int) -> Any:
    """Switch torch's state off; returns what was read from it into the recorder (or None): its
    results, and the Python objects made of them, whose freeing the caller keeps out of stop()."""
    import torch.autograd

    from . import memory

    try:
        result = torch.autograd._disable_profiler()
    except RuntimeError as error:
        warn_once("torch-state-off", f"perfprof: could not switch off torch's observer state: {error}")
        result = None
    if state != "KINETO":
        return None
    _release_kineto()
    if result is None:
        return None
    # The memory events first: torch's tree is read faster before its operator events exist (see
    # TorchMemoryImport); their threads are named once the operators have given the OS ids.
    memory_read = memory.read_torch_memory(result, window_begin_ns) if options.profile_memory else None
    events = result.events()
    os_thread_ids = _import_operators(events, options, window_begin_ns)
    if memory_read is not None:
        memory.add_torch_memory(memory_read, os_thread_ids)
    return result, events, memory_read


def _import_operators(events: Any, options: CaptureOptions, window_begin_ns: int) -> dict:
    """Move the operators torch recorded into the recorder; returns torch's thread ids -> OS ids.

    What cannot be read is left out, counted in the trace's ``perfprofStats`` and said here, at
    every session: a later session's losses must not go unreported.
    """
    try:
        imported = _core.import_torch_events(events, options.record_shapes or options.exact_inputs,
                                             window_begin_ns)
    except Exception as error:  # a torch version whose results differ entirely: report, never fail
        logger.warning("perfprof: operators recorded by torch could not be read: %r", error)
        return {}
    if imported["failed_reads"]:
        logger.warning("perfprof: %d operators recorded by torch could not be read and %d reads of their "
                       "fields failed (left out, counted in perfprofStats); the first: %s",
                       imported["skipped_events"], imported["failed_reads"], imported["first_failure"])
    return imported["os_thread_ids"]


# -- torch's "profiler enabled" flag ----------------------------------------------------------------
# torch emits some ranges only while torch.autograd.profiler._is_profiler_enabled is set, as
# torch.profiler sets it while it runs: torch.compile's "## Call CompiledFxGraph <key> ##",
# "Pregraph bytecode" and "AOTDispatcher Runtime Wrapper Prologue", which show which compiled graph
# used the time. perfprof sets it too while some thread captures operators, and remembers that it
# did, so that it still tells a torch.profiler session from its own (_torch_profiler_running).

def _use_profiler_flag() -> None:
    global _profiler_flag_set_here
    import torch.autograd.profiler as autograd_profiler

    with _lock:
        _profiler_flag_threads.add(threading.get_ident())
        if not autograd_profiler._is_profiler_enabled:
            autograd_profiler._is_profiler_enabled = True
            _profiler_flag_set_here = True


def keep_profiler_flag() -> None:
    """torch.profiler just cleared the flag as its session ended: set it again while perfprof still
    captures operators somewhere (torch.compile's ranges would be missing for the rest of the cycle)."""
    global _profiler_flag_set_here
    import torch.autograd.profiler as autograd_profiler

    with _lock:
        if _profiler_flag_threads and not autograd_profiler._is_profiler_enabled:
            autograd_profiler._is_profiler_enabled = True
            _profiler_flag_set_here = True


def abandon_thread(thread: int) -> None:
    """A profiler started on thread `thread` (an ident) was stopped on another: that thread's
    capture no longer holds torch's process-wide flag, and ends when the thread next steps, stops
    or starts a profiler (end_abandoned_capture: torch's profiler state is per thread, so only
    the thread itself can switch its own off)."""
    release_profiler_flag(thread)
    with _lock:
        _abandoned_threads.add(thread)


def end_abandoned_capture() -> None:
    """End the calling thread's capture if a profiler stopped on another thread left it on (the
    profiler's controls call this, so it ends at the thread's next step, stop or start)."""
    thread = threading.get_ident()
    if thread not in _abandoned_threads:
        return
    with _lock:
        _abandoned_threads.discard(thread)
    stop_thread()


def release_profiler_flag(thread: int) -> None:
    """The capture of thread `thread` (an ident) no longer needs torch's flag; the last one out
    clears it (if perfprof set it)."""
    global _profiler_flag_set_here
    if thread not in _profiler_flag_threads:
        return
    import torch.autograd.profiler as autograd_profiler

    with _lock:
        _profiler_flag_threads.discard(thread)
        if not _profiler_flag_threads and _profiler_flag_set_here:
            autograd_profiler._is_profiler_enabled = False
            _profiler_flag_set_here = False


def _torch_profiler_running() -> bool:
    """True while a torch.profiler (or autograd profiler) session runs in this process."""
    import torch.autograd.profiler as autograd_profiler

    return autograd_profiler._is_profiler_enabled and not _profiler_flag_set_here


# -- module calls ---------------------------------------------------------------------------------

def use_module_call_wrapper() -> None:
    """Put perfprof's wrapper in place of ``torch.nn.Module.__call__`` (counted: one release each)."""
    global _module_call_users, _module_call_wrapper
    from torch.nn import Module

    with _lock:
        _module_call_users += 1
        if _module_call_wrapper is None or Module.__dict__.get("__call__") is not _module_call_wrapper:
            # The raw class attribute: reading Module.__call__ gives what a wrapper replaced.
            _module_call_wrapper = _core.ModuleCallWrapper(Module.__dict__["__call__"])
            Module.__call__ = _module_call_wrapper


def release_module_call_wrapper() -> None:
    """Give back one use of the wrapper; the last one restores ``torch.nn.Module.__call__``."""
    global _module_call_users
    from torch.nn import Module

    with _lock:
        _module_call_users -= 1
        # Restored only if nobody replaced it after perfprof; otherwise the wrapper stays and just
        # calls through (it records nothing on threads that do not capture modules).
        if _module_call_users == 0 and Module.__dict__.get("__call__") is _module_call_wrapper:
            Module.__call__ = _module_call_wrapper.replaced


# -- torch.profiler.record_function ---------------------------------------------------------------
# torch's ITT/NVTX observers report a name only, and torch.profiler files the ranges
# record_function opens (RecordScope::USER_SCOPE) under user_annotation, operators under cpu_op.
# While some thread captures operators, record_function.__enter__ is wrapped (_core.UserScopeEnter,
# in C: no Python frame of perfprof's for with_stack to see) to tell the stubs that the range
# begun inside it is a user annotation. (torch's own collection, used for exact inputs, knows the
# scope: the wrapper changes nothing there.)

def use_record_function_wrapper() -> None:
    """Wrap ``torch.autograd.profiler.record_function.__enter__`` (counted: one release each)."""
    global _record_function_users, _record_function_enter
    from torch.autograd.profiler import record_function

    with _lock:
        _record_function_users += 1
        if record_function.__dict__["__enter__"] is not _record_function_enter:
            _record_function_enter = _core.UserScopeEnter(record_function.__dict__["__enter__"])
            record_function.__enter__ = _record_function_enter


def release_record_function_wrapper() -> None:
    """Give back one use of the wrapper; the last one restores torch's ``__enter__`` (if nobody
    replaced it after perfprof; otherwise the wrapper stays, telling nothing once nothing captures)."""
    global _record_function_users
    from torch.autograd.profiler import record_function

    with _lock:
        _record_function_users -= 1
        if _record_function_users == 0 and record_function.__dict__["__enter__"] is _record_function_enter:
            record_function.__enter__ = _record_function_enter.replaced
