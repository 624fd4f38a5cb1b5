"""The one background thread the trace handlers write on in ``async_mode``."""
from __future__ import annotations

import concurrent.futures
from typing import Optional

_writer: Optional[concurrent.futures.ThreadPoolExecutor] = None


def background_writer() -> concurrent.futures.ThreadPoolExecutor:
    """The writer thread's executor, started on first use."""
    # One thread: traces and run directories are written in cycle order. The executor's thread is
    # joined at interpreter exit, so queued traces are not lost.
    global _writer
    if _writer is None:
        _writer = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="perfprof-writer")
    return _writer
