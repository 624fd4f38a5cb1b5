"""A script that switches its import from torch.profiler to perfprof behaves the same (issue 32,
part A): each test runs one snippet under both profilers and compares what a user of
torch.profiler reads, in events(), key_averages() and the Chrome trace.

- torch's own record_function in profiled code (libraries call it) is a user annotation;
- events() has torch 2.13's FunctionEvent fields;
- _RecordFunctionFast's keyword inputs (torch.compile's Triton launchers: grid, stream) are in
  the trace's args;
- the trace carries Kineto's window markers."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List

import pytest

import perfprof

torch = pytest.importorskip("torch")

# What the "annotated" snippet opens: the torch ranges a library or torch.compile opens.
ANNOTATIONS = ("plain", "## TEST 1 ##", "fast")


def profiled(profiler: Any, body: Callable[[], None], **options: Any) -> Any:
    """`body` run under `profiler`'s profile (torch.profiler or perfprof), CPU activity."""
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options) as prof:
        body()
    return prof


def both(body: Callable[[], None], **options: Any):
    """(torch.profiler's profile, perfprof's) of the same `body`."""
    return profiled(torch.profiler, body, **options), profiled(perfprof, body, **options)


def trace_events(prof: Any, path) -> List[Dict[str, Any]]:
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)["traceEvents"]


def annotated() -> None:
    """torch's record_function with and without args, and the fast context manager torch.compile's
    launchers use, with keyword inputs (its "scope" makes it a user annotation when recorded)."""
    x = torch.ones(4)
    with torch.profiler.record_function("plain"):
        x.mul(2)
    with torch.autograd.profiler.record_function("## TEST 1 ##", "1, 2, 3"):
        x.mul(2)
    with torch._C._profiler._RecordFunctionFast("fast", [x], {"grid": "grid(4,)", "stream": 0, "num_warps": 4,
                                                                "scope": "user_scope"}):
        x.add(1)


def by_name(events, names=ANNOTATIONS) -> Dict[str, Any]:
    return {event.name: event for event in events if event.name in names}


# -- torch's record_function --------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"record_shapes": True}, {"with_stack": True}],
                         ids=["operators", "shapes", "stack"])
def test_torchs_record_function_is_a_user_annotation_as_in_torch(options, tmp_path):
    theirs, ours = both(annotated, **options)
    expected = {name: event.is_user_annotation for name, event in by_name(theirs.events()).items()}
    assert expected["plain"] and expected["## TEST 1 ##"]
    assert {name: event.is_user_annotation for name, event in by_name(ours.events()).items()} == expected
    rows = {row.key: row.is_user_annotation for row in ours.key_averages() if row.key in ANNOTATIONS}
    assert rows == expected
    categories = {event["name"]: event["cat"] for event in trace_events(ours, tmp_path / "ours.json")
                  if event.get("name") in ANNOTATIONS}
    assert categories == {event["name"]: event["cat"] for event in trace_events(theirs, tmp_path / "theirs.json")
                          if event.get("name") in ANNOTATIONS}


def test_record_functions_args_are_one_input_as_in_torch():
    theirs, ours = both(annotated, record_shapes=True)
    assert by_name(theirs.events())["## TEST 1 ##"].input_shapes == [[]]
    assert {name: event.input_shapes for name, event in by_name(ours.events()).items()} == \
        {name: event.input_shapes for name, event in by_name(theirs.events()).items()}


def test_operators_stay_operators_and_torch_is_given_back_its_record_function(tmp_path):
    """The operators inside an annotation are cpu_op, and once profiling stops torch's
    record_function is torch's own again."""
    enter = torch.autograd.profiler.record_function.__dict__["__enter__"]
    theirs, ours = both(annotated)
    assert torch.autograd.profiler.record_function.__dict__["__enter__"] is enter
    operators = [event.name for event in ours.events() if not event.is_user_annotation]
    assert operators == [event.name for event in theirs.events() if not event.is_user_annotation
                         and event.name not in ("profiler::_record_function_enter_new",)]
    assert "aten::mul" in operators
