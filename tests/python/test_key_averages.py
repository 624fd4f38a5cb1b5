"""key_averages() against torch.profiler's on the same loops in the same test: the same rows
(keys) with the same counts, memory and stacks. Timings differ between any two runs and are not
compared (tests/cpp/test_key_averages.cpp checks them on hand-built traces)."""
from __future__ import annotations

import collections
import re
from typing import Any, Callable, Counter, Dict, Optional, Set, Tuple

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402
from torch.profiler import ProfilerActivity  # noqa: E402

import perfprof  # noqa: E402
from python_calls import masked_address  # noqa: E402
from trace_checks import load_trace  # noqa: E402

Key = Tuple[str, ...]


def mlp_adam(loss: str = "mse") -> Callable[[], None]:
    """An MLP trained with Adam. With the MSE loss, its mean runs aten::div_ inside aten::div_;
    Tensor.sum(dtype=...) runs aten::sum inside aten::sum: torch counts each pair once."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.randn(16, 32)
    y = torch.randn(16, 10) if loss == "mse" else torch.randint(0, 10, (16,))
    loss_fn = nn.functional.mse_loss if loss == "mse" else nn.functional.cross_entropy

    def step() -> None:
        optimizer.zero_grad()
        logits = model(x)
        (loss_fn(logits, y) + 0.0 * logits.sum(dtype=torch.float32)).backward()
        optimizer.step()

    return step


def run(profiler: Callable[..., Any], step: Callable[[], None], steps: int, read: Callable[[Any], Any],
        schedule: Optional[Callable[[int], Any]] = None, **options: Any) -> Any:
    """`read` of the profiler when its trace is ready (the first cycle of `schedule`), or at the
    end without a schedule."""
    results = []
    with profiler(activities=[ProfilerActivity.CPU], schedule=schedule,
                  on_trace_ready=(lambda p: results.append(read(p))) if schedule else None, **options) as prof:
        for _ in range(steps):
            step()
            prof.step()
    return results[0] if schedule else read(prof)


def both(step: Callable[[], None], read: Callable[[Any], Any], steps: int = 2, scheduled: bool = False,
         **options: Any) -> Tuple[Any, Any]:
    """`read` of torch.profiler's and perfprof's profilers over the same loop."""
    step()  # first-call work (lazy initialisation, optimizer state) outside both
    torch_schedule = torch.profiler.schedule(wait=1, warmup=1, active=3) if scheduled else None
    perfprof_schedule = perfprof.schedule(wait=1, warmup=1, active=3) if scheduled else None
    theirs = run(torch.profiler.profile, step, steps, read, torch_schedule, **options)
    ours = run(perfprof.profile, step, steps, read, perfprof_schedule, **options)
    return theirs, ours


def counts(prof: Any) -> Counter[Key]:
    return collections.Counter({(row.key,): row.count for row in prof.key_averages()})


def assert_same_counts(theirs: Dict[Key, int], ours: Dict[Key, int]) -> None:
    differ = {key: (theirs.get(key), ours.get(key)) for key in set(theirs) | set(ours)
              if theirs.get(key) != ours.get(key)}
    assert not differ, f"(torch, perfprof) counts differ: {differ}"


# Frame names are the Python tracers': both write torch's names, built-in methods with the address
# of the object their first call was bound to, which differs between any two runs when that object
# is a temporary; compared without it (python_calls.py).
def frame_name(name: str) -> str:
    return masked_address(name)


def python_functions(prof: Any, path: str) -> Set[str]:
    """The (brought together) names of the Python-function events of a profiler's run."""
    if isinstance(prof, perfprof.profile):
        prof.export_chrome_trace(path)
        return {frame_name(event["name"]) for event in load_trace(path)["traceEvents"]
                if event.get("cat") == "python_function"}
    return {frame_name(event.name) for event in prof.events() if event.is_python_function}


def test_rows_and_counts_equal_torch_over_several_steps(export):
    step = mlp_adam()
    theirs, ours = both(step, counts, steps=5, scheduled=True)
    assert_same_counts(theirs, ours)
    assert ours[("ProfilerStep*",)] == 3
    assert not any(key[0].startswith("ProfilerStep#") for key in ours)

    # The loop has nested same-name calls: the trace holds both, the table one.
    with perfprof.profile(activities=[ProfilerActivity.CPU]) as prof:
        step()
    names = collections.Counter(event["name"] for event in export(prof)["traceEvents"] if event.get("ph") == "X")
    rows = counts(prof)
    assert names["aten::div_"] == 2 * rows[("aten::div_",)] > 0
    assert names["aten::sum"] > rows[("aten::sum",)] > 0


def test_input_shape_groups_equal_torch():
    def read(prof: Any) -> Counter[Key]:
        return collections.Counter({(row.key, str(row.input_shapes)): row.count
                                    for row in prof.key_averages(group_by_input_shape=True)})

    # Cross-entropy: the MSE loss's tensor-list input (broadcast_tensors) is not read with shapes yet.
    theirs, ours = both(mlp_adam("cross_entropy"), read, record_shapes=True)
    assert_same_counts(theirs, ours)
    assert ("aten::addmm", "[[64], [16, 32], [32, 64], [], []]") in ours
    assert ("aten::sum", "[[16, 10], []]") in ours  # the merged pair has the outer call's shapes


def test_python_functions_are_rows_with_stack(tmp_path):
    def read(prof: Any) -> Tuple[Counter[Key], Set[str]]:
        rows = collections.Counter({(frame_name(row.key),): row.count for row in prof.key_averages()})
        return rows, python_functions(prof, str(tmp_path / "trace.json"))

    (theirs, their_python), (ours, our_python) = both(mlp_adam(), read, with_stack=True)
    # Operators and annotations: exactly torch's.
    assert_same_counts({key: n for key, n in theirs.items() if key[0] not in their_python},
                       {key: n for key, n in ours.items() if key[0] not in our_python})
    # Python functions of the model's, the optimizer's and the loop's code: torch's rows and
    # counts. (The profilers' own frames differ; test_python_tracer_torch.py compares every row.)
    model_code = ("torch/nn/functional.py", "torch/nn/modules/linear.py", "torch/nn/modules/activation.py",
                  "torch/optim/adam.py")
    theirs_in_model = {key: n for key, n in theirs.items() if key[0] in their_python and (
        key[0].startswith(model_code) or re.fullmatch(r"test_key_averages\.py\(\d+\): step", key[0]))}
    assert len(theirs_in_model) >= 7
    assert_same_counts(theirs_in_model, {key: ours[key] for key in theirs_in_model if key in ours})


def test_memory_per_row_equals_torch():
    def read(prof: Any) -> Dict[Key, Tuple[int, int, int]]:
        return {(row.key,): (row.count, row.cpu_memory_usage, row.self_cpu_memory_usage) for row in prof.key_averages()}

    step = mlp_adam()
    # torch reports a free only of memory allocated while a profiler watched memory: a first
    # profiled pass, so that both runs see the frees of the step before theirs.
    run(torch.profiler.profile, step, 1, lambda prof: None, profile_memory=True)
    theirs = run(torch.profiler.profile, step, 2, read, profile_memory=True)
    ours = run(perfprof.profile, step, 2, read, profile_memory=True)
    assert theirs == ours
    # Frees between operators (the loss and activations of the step before) are [memory].
    count, cpu_bytes, _ = ours[("[memory]",)]
    assert count > 0 and cpu_bytes < 0
    assert ours[("aten::addmm",)][1] > 0
    assert "Self CPU Mem" in run(perfprof.profile, step, 1, lambda prof: prof.key_averages().table(),
                                 profile_memory=True)


def test_stacks_equal_torch_verbose(tmp_path):
    """torch keeps stacks only with experimental_config verbose=True; perfprof with with_stack.
    Events inside backward functions have their forward's stack, which takes the autograd
    sequence numbers (recorded with profile_memory or record_shapes). One frame deep: deeper
    stacks hold the frames running when each profiler started, at different lines of this test."""

    tables = []

    def read(prof: Any) -> Tuple[Counter[Key], Set[str]]:
        averages = prof.key_averages(group_by_stack_n=1)
        tables.append(averages.table(row_limit=5))
        rows = collections.Counter({(frame_name(row.key), *map(frame_name, row.stack)): row.count for row in averages})
        return rows, python_functions(prof, str(tmp_path / "trace.json"))

    step = mlp_adam()
    step()
    verbose = torch._C._profiler._ExperimentalConfig(verbose=True)
    theirs, their_python = run(torch.profiler.profile, step, 2, read, with_stack=True, profile_memory=True,
                               experimental_config=verbose)
    ours, our_python = run(perfprof.profile, step, 2, read, with_stack=True, profile_memory=True)
    # Operators and annotations; [memory] is outside every frame perfprof saw.
    assert_same_counts({key: n for key, n in theirs.items() if key[0] not in their_python | {"[memory]"}},
                       {key: n for key, n in ours.items() if key[0] not in our_python | {"[memory]"}})
    assert ours[("AddmmBackward0", "<built-in function linear>")] == 4
    assert all("Source Location" in table for table in tables)
