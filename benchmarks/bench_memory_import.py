"""Reading torch's memory events at stop: perfprof's import beside torch's own _disable_profiler().

GPT-2 training from transformers (4 layers, n_embd 256, AdamW, batch 4 x 128) is recorded for
--steps steps under torch's profiler state configured as perfprof configures it for
profile_memory (input identities and memory on); then torch's _disable_profiler() (which ends
the session and builds its results) and perfprof's import of the event tree are timed, medians
over --rounds recordings of three imports each. With --fields, what each kind of field read costs
when made from Python on the same tree (ns per read, and how many reads of it the tree has): the
measurement the import's design follows.

    python benchmarks/bench_memory_import.py [--steps 8] [--rounds 3] [--fields]
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings
from typing import Any, Callable, List, Sequence

import torch
from torch._C._profiler import ProfilerActivity, ProfilerConfig, ProfilerState, _EventType, _ExperimentalConfig

from perfprof import _core, memory


def gpt2_step() -> Callable[[], None]:
    import transformers

    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # transformers' notes on random configs
        config = transformers.GPT2Config(n_layer=4, n_embd=256, n_head=4, vocab_size=5000, n_positions=128)
        model = transformers.GPT2LMHeadModel(config)
    optimizer = torch.optim.AdamW(model.parameters())
    ids = torch.randint(0, 5000, (4, 128))

    def step() -> None:
        model(ids, labels=ids).loss.backward()
        optimizer.step()
        optimizer.zero_grad()

    step()  # optimizer state and lazy initialisation outside the recording
    return step


def record(step: Callable[[], None], steps: int) -> Any:
    """Runs `steps` steps under torch's state as perfprof sets it; returns (results, seconds
    _disable_profiler took)."""
    config = ProfilerConfig(ProfilerState.KINETO, True, True, False, False, False, _ExperimentalConfig())
    torch.autograd._prepare_profiler(config, {ProfilerActivity.CPU})
    torch.autograd._enable_profiler(config, {ProfilerActivity.CPU})
    for _ in range(steps):
        step()
    begin = time.perf_counter()
    results = torch.autograd._disable_profiler()
    return results, time.perf_counter() - begin


def time_import(results: Any) -> float:
    begin = time.perf_counter()
    memory.add_torch_memory(memory.read_torch_memory(results), {})
    elapsed = time.perf_counter() - begin
    _core.discard()
    return elapsed


def field_costs(results: Any) -> None:
    events: List[Any] = []

    def walk(level: Sequence[Any]) -> None:
        for event in level:
            events.append(event)
            walk(event.children)

    walk(results.experimental_event_tree())
    operators = [e for e in events if e.tag == _EventType.TorchOp]
    allocations = [e.extra_fields for e in events if e.tag == _EventType.Allocation]
    extras = [e.extra_fields for e in operators]
    tensors = [i for f in extras for i in f.inputs if hasattr(i, "allocation_id")]
    print(f"{len(events)} events: {len(operators)} operators, {len(allocations)} allocator events, "
          f"{len(tensors)} tensor inputs")

    def cost(label: str, read: Callable[[Any], Any], items: Sequence[Any]) -> None:
        begin = time.perf_counter()
        for item in items:
            read(item)
        elapsed = time.perf_counter() - begin
        print(f"  {label:<44} {elapsed / len(items) * 1e9:6.0f} ns x {len(items):6d} = {elapsed * 1e3:5.1f} ms")

    cost("(loop alone)", lambda e: e, events)
    cost("event.tag", lambda e: e.tag, events)
    cost("event.extra_fields", lambda e: e.extra_fields, events)
    cost("event.children", lambda e: e.children, events)
    cost("operator.name", lambda e: e.name, operators)
    cost("operator.start_time_ns", lambda e: e.start_time_ns, operators)
    cost("operator extra.scope", lambda f: f.scope, extras)
    cost("operator extra.inputs", lambda f: f.inputs, extras)
    cost("tensor id, allocation_id, storage_data_ptr", lambda t: (t.id, t.allocation_id, t.storage_data_ptr), tensors)
    cost("tensor device.type, device.index", lambda t: (t.device.type, t.device.index), tensors)
    cost("tensor layout, sizes, strides, dtype.itemsize",
         lambda t: (t.layout, t.sizes, t.strides, t.dtype.itemsize), tensors)
    cost("allocation: 7 int fields", lambda f: (f.ptr, f.alloc_size, f.total_allocated, f.total_reserved, f.id,
                                                 f.allocation_id, f.device), allocations)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fields", action="store_true", help="also time each kind of field read from Python")
    args = parser.parse_args()

    step = gpt2_step()
    disable, imports = [], []
    for _ in range(args.rounds):
        results, seconds = record(step, args.steps)
        disable.append(seconds)
        imports += [time_import(results) for _ in range(3)]
        if args.fields:
            field_costs(results)
            args.fields = False
        del results
    median_disable, median_import = statistics.median(disable), statistics.median(imports)
    print(f"GPT-2 training, {args.steps} steps: torch _disable_profiler() {median_disable:.3f} s, "
          f"perfprof memory import {median_import:.3f} s ({median_import / median_disable:.2f}x)")


if __name__ == "__main__":
    main()
