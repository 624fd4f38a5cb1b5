"""with_stack without torch: Python and built-in calls as nested python_function ranges, named as
torch.profiler names them (tests/python/test_python_tracer_torch.py compares with torch itself).

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
    # The file without the sys.path entry it was imported from (pytest puts tests/python there).
    assert Counter(e["name"] for e in calls)[f"test_python_tracer.py({fib.__code__.co_firstlineno}): fib"] == 25


first_list: List[int] = []
second_list: List[int] = []


def test_builtins_are_named_by_their_first_call(tmp_path):
    """The repr of the built-in first called in the session, as torch.profiler names all calls
    of one built-in method (its first object's address for every later object)."""
    def work() -> None:
        first_list.append(3)
        second_list.append(4)
        sorted(first_list)

    names = Counter(e["name"] for e in traced(tmp_path, work))
    assert names[f"<built-in method append of list object at {hex(id(first_list))}>"] == 2
    assert names["<built-in function sorted>"] == 1
    # Named afresh in each session.
    names = Counter(e["name"] for e in traced(tmp_path, lambda: (second_list.append(5), first_list.append(6))))
    assert names[f"<built-in method append of list object at {hex(id(second_list))}>"] == 2


def test_generators_and_exceptions_close_their_ranges(tmp_path):
    def work() -> None:
        assert list(countdown(3)) == [3, 2, 1]
        assert catches() == "caught"

    calls = traced(tmp_path, work)
    names = short_names(calls)
    assert names["countdown"] == 4  # one range per resume: three values and the final return
    assert names["fails"] == 1 and names["catches"] == 1
    # Named at the line each resume starts from: the first line, then the `yield`.
    first = countdown.__code__.co_firstlineno
    lines = Counter(int(e["name"].split("(")[1].split(")")[0]) for e in calls if e["name"].endswith(": countdown"))
    assert lines == {first: 1, first + 2: 3}


def test_perfprof_code_is_not_traced(tmp_path):
    calls = traced(tmp_path, lambda: fib(3))
    assert not any("perfprof" in e["name"].split("(")[0] for e in calls)


def test_what_perfprof_calls_is_not_traced(tmp_path):
    """What runs inside perfprof's own calls (here a schedule, called by step()) is not recorded,
    as torch.profiler's own calls are told apart from the loop's."""
    def every_step_records(step: int) -> perfprof.ProfilerAction:
        return perfprof.ProfilerAction.RECORD

    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True,
                          schedule=every_step_records) as prof:
        for _ in range(3):
            fib(2)
            prof.step()
    path = str(tmp_path / "t.json")
    prof.export_chrome_trace(path)
    names = short_names(e for e in load_trace(path)["traceEvents"] if e.get("cat") == "python_function")
    assert names["fib"] == 9 and names["every_step_records"] == 0


def start_inside(depth: int, tmp_path) -> List[Dict[str, Any]]:
    if depth > 0:
        return start_inside(depth - 1, tmp_path)
    return traced(tmp_path, lambda: fib(2))


def test_frames_running_at_start_are_recorded(tmp_path):
    """As torch.profiler does: the frames on the stack when profiling starts begin then, named at
    the line they are at, and end when they return (or at the end)."""
    calls = start_inside(2, tmp_path)
    starting = [e for e in calls if e["name"].endswith(": start_inside")]
    recursion_line = start_inside.__code__.co_firstlineno + 2
    assert Counter(e["name"] for e in starting) == {f"test_python_tracer.py({recursion_line}): start_inside": 2,
                                                    f"test_python_tracer.py({recursion_line + 1}): start_inside": 1}
    fib_call = next(e for e in calls if e["name"].endswith(": fib"))
    assert all(e["ts"] <= fib_call["ts"] and fib_call["ts"] + fib_call["dur"] <= e["ts"] + e["dur"] for e in starting)
    assert short_names(calls)["test_frames_running_at_start_are_recorded"] == 1
    assert short_names(calls)["traced"] == 1


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
