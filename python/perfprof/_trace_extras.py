"""What torch.profiler's profile does around each cycle besides collecting, for scripts written
against it: a trace id per cycle (``trace_id`` at the top of the trace, ``get_trace_id()``), and
an execution trace observer started and stopped with the kept window."""
from __future__ import annotations

import uuid
from typing import Any, Callable, Optional

from ._logging import logger, warn_once
from ._ranges import TIMEOUT_S


def check_trace_id_callback(function: str, callback: object) -> Optional[Callable[[], str]]:
    """`callback` if it is None or callable, else TypeError naming the field."""
    if callback is not None and not callable(callback):
        raise TypeError(f"{function}: 'custom_trace_id_callback' must be callable, got {type(callback).__name__}")
    return callback


def new_trace_id(callback: Optional[Callable[[], str]]) -> str:
    """The id of a cycle that begins: `callback()` when given, else 32 random hex digits (as
    torch.profiler makes them). A callback that raises or returns no str costs one warning and
    the cycle gets a random id: the job goes on."""
    if callback is not None:
        try:
            trace_id = callback()
        except Exception as error:  # never hurt the job
            warn_once("trace-id-callback-raised", f"perfprof: custom_trace_id_callback raised {error!r}; "
                      "cycles get random trace ids")
        else:
            if isinstance(trace_id, str) and trace_id:
                return trace_id
            warn_once("trace-id-callback-type", "perfprof: custom_trace_id_callback returned "
                      f"{trace_id!r}, not a non-empty str; cycles get random trace ids")
    return f"{uuid.uuid4().int:032X}"


def check_timeout(function: str, timeout_s: object) -> Optional[float]:
    """post_processing_timeout_s: None, or a number of seconds >= 0 (inf: no bound). A negative one
    is refused in torch.profiler's words ("post_processing_timeout_s must be non-negative"), which
    scripts and tests match; torch raises it when the profiler starts, perfprof when it is built."""
    if timeout_s is None:
        return None
    violation = TIMEOUT_S.violation(timeout_s)
    if violation is not None and violation[0] is ValueError:
        raise ValueError(f"{function}: post_processing_timeout_s must be non-negative, got {timeout_s!r}")
    return float(TIMEOUT_S.check(timeout_s, function, "post_processing_timeout_s"))


def note_post_processing(timeout_s: Optional[float], elapsed_s: float) -> None:
    """Say where torch.profiler would have cut its events short: its post-processing stops at
    `timeout_s` and warns that it returns partial results; perfprof's events come from the trace
    built in C++, all of them, so a script that set the bound learns that nothing was cut."""
    if timeout_s is None or elapsed_s < timeout_s:
        return
    logger.warning("perfprof: building the events took %.3f s, not within post_processing_timeout_s=%.3f s: "
                   "torch.profiler would time out there and return partial results; perfprof keeps every event",
                   elapsed_s, timeout_s)


def check_observer(function: str, observer: object) -> Any:
    """An execution trace observer: None, or an object with start() and stop() (torch's
    ExecutionTraceObserver, registered with its output file)."""
    if observer is not None and not all(callable(getattr(observer, name, None)) for name in ("start", "stop")):
        raise TypeError(f"{function}: 'execution_trace_observer' must have start() and stop() "
                        f"(torch.profiler.ExecutionTraceObserver), got {type(observer).__name__}")
    return observer


def drive_observer(observer: Any, method: str) -> None:
    """Call the observer's start, stop or cleanup; a failure is one line, and the job goes on."""
    call = getattr(observer, method, None) if observer is not None else None
    if not callable(call):
        return
    try:
        call()
    except Exception as error:  # never hurt the job
        logger.error("perfprof: execution_trace_observer.%s() failed: %r; its execution trace may be incomplete",
                     method, error)
