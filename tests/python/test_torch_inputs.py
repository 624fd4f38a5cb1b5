"""Operators read from torch's own profiler state: inputs of every kind, written as torch.profiler
writes them; one unreadable operator or field never costs the others; torch.compile's ranges.

The reference is torch.profiler, run on the same code in the same process.
"""
from __future__ import annotations

import logging
from collections import Counter
from typing import Any, Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import perfprof  # noqa: E402
from perfprof import ProfilerActivity  # noqa: E402
from trace_checks import load_trace  # noqa: E402

INPUT_FIELDS = ("Input Dims", "Input type", "Input Strides", "Concrete Inputs")


def every_kind_of_input() -> None:
    """Operators whose inputs are tensor lists, optional tensors in lists, scalars of each type,
    scalar lists, strings, None, dtypes, devices, layouts, memory formats and generators."""
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    index = torch.tensor([0, 2])
    torch.cat([a, b])
    torch.stack([a, b], dim=1)
    torch._foreach_add_([a.clone(), b.clone()], [b, a])
    a[index, index]  # aten::index: a list of optional tensors
    torch.index_put(a, (index,), torch.ones(2, 8), accumulate=True)
    torch.einsum("ij,kj->ik", a, b)
    torch.div(a, 2, rounding_mode="floor")
    nn.functional.gelu(a, approximate="tanh")
    a.to("cpu", torch.float16)
    torch.zeros(2, layout=torch.strided, device=torch.device("cpu"))
    torch.empty(2, memory_format=torch.contiguous_format)
    torch.randn(2, generator=torch.Generator())
    nn.functional.layer_norm(a, [8])
    nn.functional.interpolate(a[None, None], scale_factor=2.5)
    torch.where(a > 0, a, 0.5)
    for value in (-0.0, 0.1, 1e-7, 3.0, 12345678901.0, 1e18, 1e19, float("inf"), float("nan")):
        torch.full((1,), value, dtype=torch.float64)
    torch.full((2,), True)
    a.sum(dim=[0, 1], keepdim=False)
    torch.split(a, [2, 2])


def traced(profiler: Any, work: Callable[[], None], path: str, **options: Any) -> Dict[str, Any]:
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options) as prof:
        work()
    prof.export_chrome_trace(path)
    return load_trace(path)


def operators(trace: Dict[str, Any]) -> List[Dict[str, Any]]:
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "cpu_op" and e.get("ph") == "X"]
    return sorted(ops, key=lambda e: e["ts"])


def inputs_of(op: Dict[str, Any]) -> Tuple[Any, ...]:
    return (op["name"],) + tuple(repr(op["args"].get(field)) for field in INPUT_FIELDS)


def test_inputs_of_every_kind_are_written_as_torch_writes_them(tmp_path):
    theirs = operators(traced(torch.profiler, every_kind_of_input, str(tmp_path / "torch.json"), record_shapes=True))
    mine = operators(traced(perfprof, every_kind_of_input, str(tmp_path / "perfprof.json"), record_shapes=True))
    assert [op["name"] for op in mine] == [op["name"] for op in theirs]
    assert [inputs_of(op) for op in mine] == [inputs_of(op) for op in theirs]


def test_a_tensor_list_input_keeps_every_operator(tmp_path):
    """The reproduction of the bug: one TensorList input used to drop every operator."""
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    trace = traced(perfprof, lambda: (torch.cat([a, b]), torch.mm(a, b.t())), str(tmp_path / "t.json"),
                   record_shapes=True)
    ops = {op["name"]: op["args"] for op in operators(trace)}
    assert ops["aten::cat"]["Input Dims"] == [[[4, 8], [4, 8]], []]
    assert ops["aten::cat"]["Input type"] == ["TensorList", "Scalar"]
    assert ops["aten::mm"]["Input Dims"] == [[4, 8], [8, 4]]
    assert trace["perfprofStats"]["unreadable_torch_events"] == 0
    assert trace["perfprofStats"]["unreadable_torch_fields"] == 0


# -- isolation: what cannot be read is left out, counted and said ---------------------------------

class Unreadable:
    """Stands for an operator of a torch whose results perfprof cannot read, wrapping a real one."""

    def __init__(self, event: Any, broken: str) -> None:
        self._event, self._broken = event, broken

    def __getattr__(self, name: str) -> Any:
        if name == self._broken:
            def fail() -> Any:
                raise RuntimeError(f"cannot read {name}")
            return fail
        return getattr(self._event, name)


def with_unreadable_operators(monkeypatch, broken: Dict[str, str]) -> None:
    """Makes torch's results report the operators named in `broken` with that method failing."""
    disable = torch.autograd._disable_profiler

    class Result:
        def __init__(self, result: Any) -> None:
            self._result = result

        def events(self) -> List[Any]:
            return [Unreadable(e, broken[e.name()]) if e.name() in broken else e for e in self._result.events()]

        def __getattr__(self, name: str) -> Any:
            return getattr(self._result, name)

    monkeypatch.setattr(torch.autograd, "_disable_profiler", lambda: Result(disable()))


def work_with_cat_and_mm() -> None:
    a, b = torch.randn(4, 8), torch.randn(4, 8)
    torch.cat([a, b])
    torch.mm(a, b.t())
    torch.add(a, b)


def test_an_unreadable_field_is_left_out_of_its_operator_only(tmp_path, monkeypatch, caplog):
    with_unreadable_operators(monkeypatch, {"aten::cat": "structured_input_strides"})
    with caplog.at_level(logging.WARNING, logger="perfprof"):
        trace = traced(perfprof, work_with_cat_and_mm, str(tmp_path / "t.json"), record_shapes=True)
    ops = {op["name"]: op["args"] for op in operators(trace)}
    assert "Input Strides" not in ops["aten::cat"]
    assert ops["aten::cat"]["Input Dims"] == [[[4, 8], [4, 8]], []]
    assert ops["aten::mm"]["Input Strides"] == [[8, 1], [1, 8]]
    assert trace["perfprofStats"]["unreadable_torch_fields"] == 1
    assert trace["perfprofStats"]["unreadable_torch_events"] == 0
    assert "structured_input_strides: RuntimeError: cannot read structured_input_strides" in caplog.text


def test_an_unreadable_operator_is_counted_and_said_at_every_session(tmp_path, monkeypatch, caplog):
    with_unreadable_operators(monkeypatch, {"aten::cat": "start_ns"})
    for session in range(2):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="perfprof"):
            trace = traced(perfprof, work_with_cat_and_mm, str(tmp_path / f"t{session}.json"), record_shapes=True)
        names = Counter(op["name"] for op in operators(trace))
        assert names["aten::cat"] == 0 and names["aten::mm"] == 1 and names["aten::add"] == 1
        assert trace["perfprofStats"]["unreadable_torch_events"] == 1
        assert "1 operators recorded by torch could not be read" in caplog.text, f"session {session}"


# -- torch.compile --------------------------------------------------------------------------------

COMPILED_RANGE_PREFIXES = ("## Call CompiledFxGraph", "Pregraph bytecode", "AOTDispatcher Runtime Wrapper",
                           "Torch-Compiled Region", "CompiledFunction")


@pytest.fixture(scope="module")
def compiled_step() -> Callable[[], None]:
    torch.manual_seed(0)
    model = torch.compile(nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8)))
    x = torch.randn(16, 32)

    def step() -> None:
        model(x).sum().backward()

    step()  # compiles outside the profiled region
    return step


def compiled_ranges(trace: Dict[str, Any]) -> Counter:
    return Counter((e["cat"], e["name"]) for e in trace["traceEvents"]
                   if e.get("ph") == "X" and e["name"].startswith(COMPILED_RANGE_PREFIXES))


@pytest.mark.parametrize("options", [{}, {"record_shapes": True}, {"profile_memory": True}, {"with_modules": True}],
                         ids=["ops", "shapes", "memory", "modules"])
def test_compiled_graph_ranges_are_recorded_as_torch_records_them(compiled_step, tmp_path, options):
    def work() -> None:
        for _ in range(2):
            compiled_step()

    theirs = compiled_ranges(traced(torch.profiler, work, str(tmp_path / "torch.json"), **options))
    mine = compiled_ranges(traced(perfprof, work, str(tmp_path / "perfprof.json"), **options))
    assert any(name.startswith("## Call CompiledFxGraph") for _, name in theirs)
    assert mine == theirs
    assert torch.autograd.profiler._is_profiler_enabled is False  # given back after the session


def test_torch_profiler_inside_perfprof_is_still_told_apart(compiled_step, caplog):
    """perfprof sets torch's "profiler enabled" flag while it captures; a torch.profiler session
    started meanwhile on another thread must still be seen as torch's own."""
    with perfprof.profile(activities=[ProfilerActivity.CPU]):
        assert torch.autograd.profiler._is_profiler_enabled is True
        compiled_step()
    assert torch.autograd.profiler._is_profiler_enabled is False
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        with caplog.at_level(logging.WARNING, logger="perfprof"):
            with perfprof.profile(activities=[ProfilerActivity.CPU], record_shapes=True):
                compiled_step()
        assert torch.autograd.profiler._is_profiler_enabled is True  # torch.profiler's, left alone
    assert torch.autograd.profiler._is_profiler_enabled is False
