"""record_function: user annotation ranges, as a context manager or a decorator."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, TypeVar

from . import _core

F = TypeVar("F", bound=Callable[..., Any])

_begin = _core.annotation_begin
_end = _core.annotation_end


class record_function(_core.RecordFunction):
    """Annotate a block of code, or every call of a function, as a named range.

    ``with perfprof.record_function("forward"): ...`` or ``@perfprof.record_function("forward")``.
    The range is recorded (category ``user_annotation``) while a profiler collects
    ``ProfilerActivity.CPU``; otherwise a ``with`` block costs about 0.2 µs.

    Args:
        name: the range name shown in the trace.
        args: optional text recorded with the range (``"args"`` in the trace event).
    """

    # Construction and argument checks happen in the C type's __new__: no Python __init__, so
    # entering a range costs no Python-level call.
    __slots__ = ()

    def __call__(self, func: F) -> F:
        """Decorate `func` (sync or async): each call is its own range."""
        name, args = self.name, self.args
        if inspect.iscoroutinefunction(func):

            @functools.wraps(func)
            async def async_wrapper(*a: Any, **kw: Any) -> Any:
                range_id = _begin(name, args)
                try:
                    return await func(*a, **kw)
                finally:
                    _end(range_id)

            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*a: Any, **kw: Any) -> Any:
            range_id = _begin(name, args)
            try:
                return func(*a, **kw)
            finally:
                _end(range_id)

        return wrapper  # type: ignore[return-value]
