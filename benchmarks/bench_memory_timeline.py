"""export_memory_timeline: perfprof against torch.profiler on the same training loop, in one run.

Each profiler records the same loop (an MLP trained with Adam; torch.profiler with the options
its memory timeline needs: record_shapes, profile_memory, with_stack), then both write the
timeline as JSON. Reported per model size: allocator events, the export time of each, the
ratio, and what stopping the profiler cost each (perfprof reads torch's events at stop).
Then perfprof's export time per memory change at growing step counts, to show it grows
linearly.

    python benchmarks/bench_memory_timeline.py [--steps 4] [--rounds 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import warnings
from typing import Callable, Dict, List, Tuple

import torch
from torch import nn

import perfprof

SIZES = {"small (0.8M parameters)": (256, 512, 3), "large (13M parameters)": (1024, 2048, 4)}


def training_step(width_in: int, width: int, layers: int) -> Callable[[], None]:
    torch.manual_seed(0)
    blocks: List[nn.Module] = [nn.Linear(width_in, width), nn.ReLU()]
    for _ in range(layers - 2):
        blocks += [nn.Linear(width, width), nn.ReLU()]
    model = nn.Sequential(*blocks, nn.Linear(width, 10))
    optimizer = torch.optim.Adam(model.parameters())

    def step() -> None:
        x, y = torch.randn(64, width_in), torch.randn(64, 10)
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def torch_profiler() -> object:
    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                  profile_memory=True, with_stack=True)


def perfprof_profiler() -> object:
    return perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], profile_memory=True)


def record(prof, step: Callable[[], None], steps: int) -> Tuple[object, float]:
    """Runs `steps` steps under `prof`; returns it and how long stopping it took."""
    prof.start()
    for _ in range(steps):
        step()
    begin = time.perf_counter()
    prof.stop()
    return prof, time.perf_counter() - begin


def timed_export(prof, path: str) -> float:
    begin = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch deprecates its own exporter
        prof.export_memory_timeline(path, device="cpu")
    return time.perf_counter() - begin


def compare(size: Tuple[int, int, int], steps: int, rounds: int, directory: str) -> Dict[str, float]:
    times: Dict[str, List[float]] = {"torch": [], "perfprof": [], "torch_stop": [], "perfprof_stop": []}
    events = 0
    for _ in range(rounds):
        torch_prof, torch_stop = record(torch_profiler(), training_step(*size), steps)
        ours, our_stop = record(perfprof_profiler(), training_step(*size), steps)
        times["torch"].append(timed_export(torch_prof, os.path.join(directory, "torch.json")))
        times["perfprof"].append(timed_export(ours, os.path.join(directory, "perfprof.json")))
        times["torch_stop"].append(torch_stop)
        times["perfprof_stop"].append(our_stop)
        events = ours.trace.num_memory_events
    result = {name: statistics.median(values) for name, values in times.items()}
    result["events"] = events
    return result


def growth(size: Tuple[int, int, int], step_counts: List[int], directory: str) -> List[Tuple[int, int, float]]:
    rows = []
    for steps in step_counts:
        ours, _ = record(perfprof_profiler(), training_step(*size), steps)
        ours.export_memory_timeline(os.path.join(directory, "warm.json"), device="cpu")
        best = min(timed_export(ours, os.path.join(directory, "perfprof.json")) for _ in range(5))
        rows.append((steps, ours.trace.num_memory_events, best))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as directory:
        print(f"export_memory_timeline (.json, device cpu), {args.steps} steps, median of {args.rounds} rounds")
        print(f"{'model':26} {'events':>7} {'torch s':>9} {'perfprof s':>11} {'faster':>8} "
              f"{'torch stop s':>13} {'perfprof stop s':>16}")
        for name, size in SIZES.items():
            r = compare(size, args.steps, args.rounds, directory)
            print(f"{name:26} {r['events']:>7} {r['torch']:>9.4f} {r['perfprof']:>11.5f} "
                  f"{r['torch'] / r['perfprof']:>7.0f}x {r['torch_stop']:>13.4f} {r['perfprof_stop']:>16.4f}")
        print("\nperfprof export time as the recording grows (small model)")
        print(f"{'steps':>6} {'events':>8} {'export ms':>10} {'ns per event':>13}")
        for steps, events, seconds in growth(SIZES["small (0.8M parameters)"], [4, 8, 16, 32, 64], directory):
            print(f"{steps:>6} {events:>8} {seconds * 1e3:>10.3f} {seconds * 1e9 / events:>13.0f}")


if __name__ == "__main__":
    main()
