"""with_stack beside torch.profiler: the same loop under both profilers in the same test gives the
same python_function events (names and counts) and the same key_averages rows for them.

What differs by construction is set aside, nothing else (python_calls.py says why): torch's own
frames (its profiler.py frames and everything they call) and its calls on other threads (torch
traces every Python thread alive when it starts, perfprof the threads that capture; earlier tests
can leave idle threads behind) are left out of torch's side, its key_averages counts included,
while perfprof never records its own (asserted); and built-in names are compared without the
object address they end with, except in test_names_equal_torch_exactly, where the first object
each built-in is called on outlives the loop.
"""
from __future__ import annotations

import collections
import gc
import re
import warnings
from typing import Any, Callable, Counter, Dict, List, Optional, Set, Tuple

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from torch import nn  # noqa: E402

import perfprof  # noqa: E402
from python_calls import masked_address, split_torch_calls  # noqa: E402
from trace_checks import assert_slices_nest, load_trace  # noqa: E402

Step = Callable[[], None]


def mlp_adam() -> Step:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 32), torch.randn(16, 10)

    def step() -> None:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()

    return step


def bert_inference() -> Step:
    torch.manual_seed(0)
    config = transformers.BertConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                                     intermediate_size=128, vocab_size=1000, max_position_embeddings=64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' notes on random configs
        model = transformers.BertModel(config).eval()
    tokens = torch.randint(0, config.vocab_size, (2, 32))

    def step() -> None:
        with torch.no_grad():
            model(tokens)

    return step


class Run:
    """What one profiler gave: its python_function events (Chrome trace) and key_averages rows."""

    def __init__(self, prof: Any, path: str) -> None:
        prof.export_chrome_trace(path)
        self.trace = load_trace(path)
        # Slices, or async ranges where a frame crosses an annotation (docs/design.md).
        self.events = [e for e in self.trace["traceEvents"]
                       if e.get("cat") == "python_function" and e["ph"] in ("X", "b")]
        self.rows = {row.key: row.count for row in prof.key_averages()}


def profile_loop(profiler: Any, step: Step, path: str, scheduled: bool, **options: Any) -> Run:
    """The loop under `profiler` (the torch.profiler or perfprof module). Both profilers start on
    the same line, so the frames running when they start are the same frames at the same lines."""
    runs: List[Run] = []
    schedule = profiler.schedule(wait=1, warmup=1, active=2) if scheduled else None
    on_trace_ready = (lambda prof: runs.append(Run(prof, path))) if scheduled else None
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], with_stack=True, schedule=schedule,
                          on_trace_ready=on_trace_ready, **options) as prof:
        for _ in range(4 if scheduled else 2):
            step()
            prof.step()
    return runs[0] if scheduled else Run(prof, path)


def both(step: Step, tmp_path: Any, scheduled: bool = False, **options: Any) -> Tuple[Run, Run]:
    step()  # first-call work (lazy initialisation, optimizer state) outside both
    # Garbage collections run finalizers (__del__) of whatever is garbage at the time: collected
    # before each loop and not during it, so that both profilers see the same calls.
    gc.collect()
    gc.disable()
    try:
        # Both profilers start from this one line: see profile_loop.
        theirs, ours = (profile_loop(profiler, step, str(tmp_path / f"{profiler.__name__}.json"), scheduled, **options)
                        for profiler in (torch.profiler, perfprof))
    finally:
        gc.enable()
    return theirs, ours


def python_rows(run: Run, names: Set[str], leave_out: Optional[Counter[str]] = None) -> Counter[str]:
    """key_averages rows of Python functions (address masked), less `leave_out` calls per name."""
    rows: Counter[str] = collections.Counter()
    for key, count in run.rows.items():
        if key in names:
            rows[masked_address(key)] += count - (leave_out or {}).get(key, 0)
    return +rows


def by_masked_name(calls: Counter[str]) -> Counter[str]:
    out: Counter[str] = collections.Counter()
    for name, count in calls.items():
        out[masked_address(name)] += count
    return out


def assert_same_python_calls(theirs: Run, ours: Run) -> Counter[str]:
    their_calls, their_others = split_torch_calls(theirs.trace)
    our_calls = collections.Counter(e["name"] for e in ours.events)
    assert not [name for name in our_calls if "perfprof/" in name], "perfprof's own frames were recorded"
    assert_slices_nest(ours.trace)
    assert ours.trace["perfprofStats"]["unmatched_range_ends"] == 0
    assert by_masked_name(our_calls) == by_masked_name(their_calls)
    names = set(their_calls) | set(their_others) | set(our_calls)
    their_rows, our_rows = python_rows(theirs, names, their_others), python_rows(ours, names)
    assert our_rows == their_rows
    return our_rows


@pytest.mark.parametrize("scheduled", [False, True], ids=["start-stop", "schedule"])
@pytest.mark.parametrize("loop", [mlp_adam, bert_inference], ids=["mlp_adam", "bert"])
def test_python_functions_equal_torch(loop, scheduled, tmp_path):
    theirs, ours = both(loop(), tmp_path, scheduled)
    rows = assert_same_python_calls(theirs, ours)
    # What used to differ: file names without their sys.path prefix, module calls named by their
    # module, built-ins named with their object, the frames running when profiling starts.
    assert any(key.startswith("torch/nn/modules/module.py(") for key in rows)
    assert rows["nn.Module: Linear_0"] > 0
    assert any(re.fullmatch(r"<built-in method \w+ of \S+ object at 0x\?>", key) for key in rows)
    assert any(key.endswith(": profile_loop") for key in rows)  # running when the profiler started


def test_with_modules_changes_no_python_function(tmp_path):
    """torch names module calls from its Python tracer, with or without with_modules; so does
    perfprof with with_stack (its module-call wrapper would add a second range per call)."""
    theirs, ours = both(mlp_adam(), tmp_path, with_modules=True)
    rows = assert_same_python_calls(theirs, ours)
    assert rows["nn.Module: Sequential_0"] == 2
    assert not any(key.endswith(": _wrapped_call_impl") for key in rows)


def test_started_inside_a_module_call(tmp_path):
    """A module call running when profiling starts is named by its module, as torch names it."""
    class Runner(nn.Module):
        def forward(self, step: Step) -> Tuple[Run, Run]:
            return both(step, tmp_path)

    linear, x = nn.Linear(4, 4), torch.randn(2, 4)
    theirs, ours = Runner()(lambda: linear(x))
    rows = assert_same_python_calls(theirs, ours)
    assert rows["nn.Module: Runner_0"] == 1 and rows["nn.Module: Linear_0"] == 2


lookups: Dict[int, str] = {1: "one"}
seen: List[int] = []


def decorated(function: Callable[..., Any]) -> Callable[..., Any]:
    return function


@decorated
def look_up(key: int) -> Optional[str]:
    seen.append(key)
    return lookups.get(key)


def countdown(n: int):
    while n > 0:
        yield n
        n -= 1


def test_names_equal_torch_exactly(tmp_path):
    """Every name as torch writes it, object addresses included: each built-in's first call here
    is bound to an object that outlives the loop (`lookups`, `seen`, the modules)."""
    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
    x = torch.randn(2, 4)

    def step() -> None:
        model(x)
        look_up(1)
        assert list(countdown(2)) == [2, 1]

    theirs, ours = both(step, tmp_path)
    their_calls, _ = split_torch_calls(theirs.trace)
    our_calls = collections.Counter(e["name"] for e in ours.events)
    assert our_calls == their_calls
    assert our_calls[f"<built-in method get of dict object at {hex(id(lookups))}>"] == 2
    assert our_calls[f"<built-in method append of list object at {hex(id(seen))}>"] == 2
    line = look_up.__code__.co_firstlineno  # the decorator's line, as torch writes it
    assert our_calls[f"test_python_tracer_torch.py({line}): look_up"] == 2
    # A generator: one call per resume, each named at the line it resumes from.
    first = countdown.__code__.co_firstlineno
    assert [our_calls[f"test_python_tracer_torch.py({first + i}): countdown"] for i in range(4)] == [2, 0, 4, 0]
    assert our_calls["nn.Module: Linear_0"] == our_calls["nn.Module: ReLU_0"] == 2
