"""Fixtures shared by the Python tests."""
from __future__ import annotations

from typing import Any, Dict

import pytest

import perfprof
from trace_checks import load_trace


@pytest.fixture
def export(tmp_path):
    """Stop-then-export helper: returns the parsed Chrome trace of a profiler."""

    def _export(prof: perfprof._KinetoProfile, name: str = "trace.json") -> Dict[str, Any]:
        path = str(tmp_path / name)
        prof.export_chrome_trace(path)
        return load_trace(path)

    return _export


@pytest.fixture(autouse=True)
def _fresh_once_warnings():
    """Each test sees perfprof's once-per-process warnings as a fresh process would: a test
    expecting one must not depend on no earlier test having said it."""
    with perfprof._logging._said_lock:
        perfprof._logging._said.clear()


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Each test imports traces into a cache of its own (perfprof._trace_import), not the user's
    ~/.cache: the commands it runs inherit the variable."""
    monkeypatch.setenv("PERFPROF_CACHE_DIR", str(tmp_path_factory.mktemp("perfprof_cache")))
