"""with_stack without torch: Python and built-in calls as nested python_function ranges.

Runs on every supported Python: the profile hook on 3.10/3.11, sys.monitoring on 3.12+.
"""
from __future__ import annotations

import cProfile
import sys
from collections import Counter
from typing import Any, Callable, Dict, Iterator, List

import perfprof
from trace_checks import assert_slices_nest, load_trace


def fib(n: int) -> int:
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def countdown(n: int) -> Iterator[int]:
    while n > 0:
        yield n
        n -= 1


def fails() -> None:
    raise KeyError("expected")


def catches() -> str:
    try:
        fails()
    except KeyError:
        return "caught"
    return "not reached"


def traced(tmp_path, work: Callable[[], Any]) -> List[Dict[str, Any]]:
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True) as prof:
        work()
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    trace = load_trace(path)
    assert_slices_nest(trace)
    assert prof.trace.stats["unmatched_range_ends"] == 0 and prof.trace.stats["async_ranges"] == 0
    return [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "python_function"]


def short_names(calls: List[Dict[str, Any]]) -> Counter:
    return Counter(e["name"].rsplit(": ", 1)[-1] if "): " in e["name"] else e["name"] for e in calls)


def test_every_python_call_is_a_nested_range(tmp_path):
    calls = traced(tmp_path, lambda: fib(6))
    assert short_names(calls)["fib"] == 25
    fib_call = next(e for e in calls if e["name"].endswith(": fib"))
    assert "test_python_tracer.py(" in fib_call["name"]


def test_builtins_are_named_like_torch_profiler(tmp_path):
    def work() -> None:
        items: List[int] = []
        items.append(3)
        sorted(items)

    names = short_names(traced(tmp_path, work))
    assert names["<built-in method append of list object>"] == 1
    assert names["<built-in function sorted>"] == 1


def test_generators_and_exceptions_close_their_ranges(tmp_path):
    def work() -> None:
        assert list(countdown(3)) == [3, 2, 1]
        assert catches() == "caught"

    names = short_names(traced(tmp_path, work))
    assert names["countdown"] == 4  # one range per resume: three values and the final return
    assert names["fails"] == 1 and names["catches"] == 1


def test_perfprof_code_is_not_traced(tmp_path):
    calls = traced(tmp_path, lambda: fib(3))
    assert not any("perfprof" in e["name"].split("(")[0] for e in calls)


def test_another_profiler_is_left_alone(tmp_path):
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        calls = traced(tmp_path, lambda: fib(4))
    finally:
        profiler.disable()
    fib_calls = short_names(calls)["fib"]
    # 3.12+: separate sys.monitoring tools, both trace. Before: one profile hook per thread, cProfile keeps it.
    assert fib_calls == (9 if sys.version_info >= (3, 12) else 0)
    assert any(entry.code.co_name == "fib" for entry in profiler.getstats() if hasattr(entry.code, "co_name"))
