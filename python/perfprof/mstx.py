"""mstx markers: instantaneous marks and ranges, by domain.

Each call is also emitted as NVTX3 (``nvtxDomainMarkEx`` / ``nvtxDomainRangeStartEx`` in an NVTX
domain named like the mstx domain), so Nsight Systems shows the markers too. perfprof records
them while a profiler runs with ``ExperimentalConfig(mstx=True)``, filtered by
``mstx_domain_include`` / ``mstx_domain_exclude``.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional, TypeVar, Union

from . import _core

mark = _core.mstx.mark
range_start = _core.mstx.range_start
range_end = _core.mstx.range_end

F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["mark", "range_start", "range_end", "mstx_range"]


class mstx_range:
    """An mstx range as a context manager or a decorator.

    ``with perfprof.mstx.mstx_range("dataloader"): ...`` or
    ``@perfprof.mstx.mstx_range("step", domain="train")``.
    """

    __slots__ = ("message", "stream", "domain", "_range_id")

    def __init__(self, message: str, stream: Optional[Union[int, _core.CudaStream]] = None,
                 domain: str = "default") -> None:
        if not isinstance(message, str):
            raise TypeError(f"mstx_range(): 'message' must be str, got {type(message).__name__}")
        if not isinstance(domain, str):
            raise TypeError(f"mstx_range(): 'domain' must be str, got {type(domain).__name__}")
        self.message = message
        self.stream = stream
        self.domain = domain
        self._range_id = 0

    def __enter__(self) -> "mstx_range":
        self._range_id = range_start(self.message, self.stream, self.domain)
        return self

    def __exit__(self, *exc_info: object) -> bool:
        range_end(self._range_id, self.domain)
        return False

    def __call__(self, func: F) -> F:
        message, stream, domain = self.message, self.stream, self.domain

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            range_id = range_start(message, stream, domain)
            try:
                return func(*args, **kwargs)
            finally:
                range_end(range_id, domain)

        return wrapper  # type: ignore[return-value]
