"""The shape of the Chrome trace of a PyTorch training loop against torch.profiler's for the same
loop: which slices are nested (`X`) and which async, forward-backward flows, how call stacks are
carried.

The reference is torch.profiler, run on the same loop in the same process.
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Any, Callable, Dict, List

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import perfprof  # noqa: E402
from trace_checks import assert_slices_nest, load_trace  # noqa: E402

SCHEDULE = dict(wait=1, warmup=1, active=2)
OPTIONS = dict(record_shapes=True, with_stack=True)  # shapes: perfprof reads torch's operators


def adamw_dataloader_loop() -> Callable[[Any], None]:
    """Steps of an MLP trained with AdamW on batches from a DataLoader: torch annotates
    `Optimizer.zero_grad#...`, `Optimizer.step#...` and `enumerate(DataLoader)#...`."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    data = torch.utils.data.TensorDataset(torch.randn(64, 32), torch.randint(0, 10, (64,)))
    loader = torch.utils.data.DataLoader(data, batch_size=16)

    def run(prof: Any) -> None:
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(x), y).backward()
            optimizer.step()
            prof.step()

    return run


def record(profiler: Any, path: str) -> Dict[str, Any]:
    run = adamw_dataloader_loop()
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], schedule=profiler.schedule(**SCHEDULE),
                          **OPTIONS) as prof:
        run(prof)
    prof.export_chrome_trace(path)
    return load_trace(path)


@pytest.fixture(scope="module")
def trace_dirs(tmp_path_factory) -> Dict[str, str]:
    """One directory per profiler holding its trace of the loop (HTA reads directories)."""
    dirs = {name: str(tmp_path_factory.mktemp(name)) for name in ("torch", "perfprof")}
    record(torch.profiler, os.path.join(dirs["torch"], "torch.pt.trace.json"))
    record(perfprof, os.path.join(dirs["perfprof"], "perfprof.pt.trace.json"))
    return dirs


@pytest.fixture(scope="module")
def traces(trace_dirs) -> Dict[str, Dict[str, Any]]:
    return {name: load_trace(os.path.join(directory, f"{name}.pt.trace.json"))
            for name, directory in trace_dirs.items()}


def events(trace: Dict[str, Any], *categories: str) -> List[Dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e.get("cat") in categories]


def test_torch_annotations_and_operators_are_slices_as_in_torch(traces):
    def shape(trace: Dict[str, Any]) -> Counter:
        return Counter((e["cat"], e["name"], e["ph"]) for e in events(trace, "user_annotation", "cpu_op"))

    mine, theirs = shape(traces["perfprof"]), shape(traces["torch"])
    assert {name for cat, name, ph in theirs if cat == "user_annotation"} >= {
        "Optimizer.step#AdamW.step", "Optimizer.zero_grad#AdamW.zero_grad",
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"}
    assert mine == theirs
    assert_slices_nest(traces["perfprof"])


def forward_backward_pairs(trace: Dict[str, Any]) -> Counter:
    """(forward operator, backward operator) of each fwdbwd flow: the operators beginning where
    its `s` and `f` events are (the slices they bind to)."""
    ops: Dict[Any, List[str]] = {}
    for e in events(trace, "cpu_op"):
        if e["ph"] == "X":
            ops.setdefault((e["tid"], e["ts"]), []).append(e["name"])
    flows: Dict[Any, Dict[str, Dict[str, Any]]] = {}
    for e in events(trace, "fwdbwd"):
        flows.setdefault(e["id"], {})[e["ph"]] = e
    return Counter((tuple(sorted(ops[(f["s"]["tid"], f["s"]["ts"])])),
                    tuple(sorted(ops[(f["f"]["tid"], f["f"]["ts"])])))
                   for f in flows.values())


def test_forward_backward_flows_link_the_operators_torch_links(traces):
    mine, theirs = forward_backward_pairs(traces["perfprof"]), forward_backward_pairs(traces["torch"])
    assert (("aten::addmm",), ("AddmmBackward0",)) in theirs
    assert mine == theirs

    def fields(trace: Dict[str, Any]) -> Counter:
        return Counter((e["ph"], tuple(sorted(e)), e["name"], e.get("bp")) for e in events(trace, "fwdbwd"))

    assert fields(traces["perfprof"]) == fields(traces["torch"])


def test_holistic_trace_analysis_loads_the_trace(trace_dirs):
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=trace_dirs["perfprof"])
    frame = analysis.t.get_trace(0)
    names = {analysis.t.symbol_table.sym_table[i] for i in frame["name"].unique()}
    assert {"Optimizer.step#AdamW.step", "Optimizer.zero_grad#AdamW.zero_grad",
            "aten::addmm", "AddmmBackward0"} <= names


def enclosing_frame_ids(trace: Dict[str, Any]) -> Dict[int, Any]:
    """Python id -> the Python id of the innermost python_function slice around it on its thread
    (None at the bottom of a stack), from the times alone."""
    frames = sorted((e for e in events(trace, "python_function") if e["ph"] == "X"),
                    key=lambda e: (e["tid"], round(e["ts"] * 1000), -round(e["dur"] * 1000)))
    around: Dict[int, Any] = {}
    open_frames: List[Dict[str, Any]] = []
    for frame in frames:
        begin = round(frame["ts"] * 1000)
        while open_frames and (open_frames[-1]["tid"] != frame["tid"]
                               or round((open_frames[-1]["ts"] + open_frames[-1]["dur"]) * 1000) <= begin):
            open_frames.pop()
        around[frame["args"]["Python id"]] = open_frames[-1]["args"]["Python id"] if open_frames else None
        open_frames.append(frame)
    return around


@pytest.mark.parametrize("profiler", ["torch", "perfprof"])
def test_python_frames_carry_the_call_stacks_as_in_torch(traces, profiler):
    trace = traces[profiler]
    assert not [e for e in events(trace, "cpu_op") if "Call stack" in e.get("args", {})]
    slices = [e for e in events(trace, "python_function") if e["ph"] == "X"]
    parents = {e["args"]["Python id"]: e["args"]["Python parent id"] for e in slices}
    assert len(parents) == len(slices) > 100
    assert parents == enclosing_frame_ids(trace)


def test_the_trace_is_no_larger_than_torchs(trace_dirs):
    """Call stacks written once per frame, not once per operator (they made traces 3x torch's)."""
    size = {name: os.path.getsize(os.path.join(directory, f"{name}.pt.trace.json"))
            for name, directory in trace_dirs.items()}
    assert size["perfprof"] <= size["torch"], size
