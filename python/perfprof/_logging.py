"""perfprof's logger. Collection problems are logged, never raised into the profiled job."""
from __future__ import annotations

import logging
import threading

logger = logging.getLogger("perfprof")

_said: set[str] = set()
_said_lock = threading.Lock()


def warn_once(key: str, message: str) -> None:
    """Log `message` as a warning the first time `key` is seen in this process."""
    with _said_lock:
        if key in _said:
            return
        _said.add(key)
    logger.warning(message)
