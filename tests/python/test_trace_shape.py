"""The shape of the Chrome trace of a PyTorch training loop against torch.profiler's for the same
loop: which slices are nested (`X`) and which async, forward-backward flows, how call stacks are
carried.

The reference is torch.profiler, run on the same loop in the same process.
"""
from __future__ import annotations

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
def traces(tmp_path_factory) -> Dict[str, Dict[str, Any]]:
    directory = tmp_path_factory.mktemp("traces")
    return {"torch": record(torch.profiler, str(directory / "torch.json")),
            "perfprof": record(perfprof, str(directory / "perfprof.json"))}


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
