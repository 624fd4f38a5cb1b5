"""Idle cost of perfprof.dynamic_profile.step(), beside its peers, in one process.

    python benchmarks/bench_dynamic_step.py [--calls 1000000] [--torch-calls 100000] [--repeats 7] [--json PATH]

Measures the cost of one call, in a Python loop, of:
  dp.step() before dp.init()             the no-op a library can leave in its loop
  dp.step() after dp.init(dir), idle     watching profiler_config.json, no collection pending
                                         (issue 15 bounds this at 1 us)
  dp.step() while a config waits         profiler_config.json edited to start_step 10**9: every
                                         step then checks whether its step has come
  an empty Python function               the floor: what any call from Python costs
  torch.profiler prof.step(), idle       torch_npu is not installed, so the peer is torch's
                                         profile with schedule(wait=10**9, warmup=0, active=1), started:
                                         every step is a wait step
Each figure is the best of --repeats loops of --calls calls (--torch-calls for torch's step, which
costs ~100x more: the cost per call does not depend on the count); "net" subtracts the cost of the
same loop with an empty body. dp.init() watches a fresh directory made with tempfile.mkdtemp(prefix=
"dpbench_") under /tmp (removed at exit); its monitor thread runs during the measurement, as in
a job.
"""
from __future__ import annotations

import argparse
import atexit
import json
import os
import re
import shutil
import sys
import tempfile
import time
import warnings
from typing import Callable, Dict

from _timing import best_ns_per_iteration
from perfprof import dynamic_profile as dp

LOOP = "empty loop iteration"
_PATH_PART = re.compile(r"^[A-Za-z0-9_-]+$")  # what dp.init() accepts in each part of its path


def calling(function: Callable[[], None]) -> Callable[[int], None]:
    """A loop that calls `function` n times (the function held in a local, as a job would)."""
    def loop(n: int) -> None:
        f = function
        for _ in range(n):
            f()
    return loop


def empty_loop(n: int) -> None:
    for _ in range(n):
        pass


def empty_function() -> None:
    pass


def config_dir() -> str:
    directory = tempfile.mkdtemp(prefix="dpbench_", dir="/tmp")
    bad = [part for part in directory.split("/") if part and not _PATH_PART.match(part)]
    if bad:
        sys.exit(f"{directory}: {bad[0]!r} is not letters, digits, '_' and '-' only, which dp.init() needs")
    atexit.register(shutil.rmtree, directory, True)  # registered before dp.init: runs after dp's own atexit
    return directory


def wait_for_pending_config(directory: str, timeout_s: float = 10.0) -> bool:
    """Edit the watched profiler_config.json to start at step 10**9, and step until the monitor
    thread (polling every 2 s) has handed it over: it then waits for its step."""
    path = os.path.join(directory, "profiler_config.json")
    with open(path, encoding="utf-8") as file:
        config = json.load(file)
    config.update(start_step=10**9, activities=["CPU"])  # CPU: no "CUDA not supported" warning here
    with open(path, "w", encoding="utf-8") as file:
        json.dump(config, file)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        dp.step()
        if getattr(dp._profiler, "_waiting", None) is not None:  # private: only to know when to measure
            return True
        time.sleep(0.01)
    print(f"the monitor did not take {path} within {timeout_s:.0f} s; the waiting case is not measured",
          file=sys.stderr)
    return False


def torch_idle_step_loop() -> Callable[[int], None]:
    import torch.profiler

    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                  schedule=torch.profiler.schedule(wait=10**9, warmup=0, active=1))
    prof.start()

    def loop(n: int) -> None:
        step = prof.step
        for _ in range(n):
            step()
    loop.prof = prof  # type: ignore[attr-defined]
    return loop


def measure(calls: int, torch_calls: int, repeats: int) -> Dict[str, Dict[str, float]]:
    loop_cost = best_ns_per_iteration(empty_loop, calls, repeats)
    raw: Dict[str, float] = {}
    raw["dp.step() before dp.init()"] = best_ns_per_iteration(calling(dp.step), calls, repeats)
    directory = config_dir()
    dp.init(directory)
    raw["dp.step() after dp.init(), idle"] = best_ns_per_iteration(calling(dp.step), calls, repeats)
    if wait_for_pending_config(directory):
        raw["dp.step(), a config waiting"] = best_ns_per_iteration(calling(dp.step), calls, repeats)
    raw["empty Python function (floor)"] = best_ns_per_iteration(calling(empty_function), calls, repeats)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loop = torch_idle_step_loop()
        try:
            raw["torch.profiler prof.step(), idle"] = best_ns_per_iteration(loop, torch_calls, repeats)
        finally:
            loop.prof.stop()  # type: ignore[attr-defined]
    results = {name: {"ns_per_call": cost, "net_ns_per_call": cost - loop_cost} for name, cost in raw.items()}
    results[LOOP] = {"ns_per_call": loop_cost, "net_ns_per_call": 0.0}
    return results


def machine() -> Dict[str, str]:
    import platform

    import torch

    import perfprof

    return {"python": platform.python_version(), "torch": torch.__version__,
            "perfprof": getattr(perfprof, "__version__", "?"), "platform": platform.platform(),
            "processor": _cpu_model()}


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as file:
            for line in file:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--torch-calls", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--json", metavar="PATH", default=None, help="also write the figures as JSON ('-': stdout)")
    args = parser.parse_args()
    results = measure(args.calls, args.torch_calls, args.repeats)
    dp_idle = results["dp.step() after dp.init(), idle"]
    floor = results["empty Python function (floor)"]
    torch_idle = results["torch.profiler prof.step(), idle"]
    print(f"{'call (loop of ' + format(args.calls, ',') + ', best of ' + str(args.repeats) + ')':38} "
          f"{'ns/call':>8} {'net ns':>7} {'/ floor':>8} {'torch / this':>13}")
    for name, cost in results.items():
        if name == LOOP:
            print(f"{name:38} {cost['ns_per_call']:8.1f}")
            continue
        ratio_floor = cost["ns_per_call"] / floor["ns_per_call"]
        ratio_torch = torch_idle["ns_per_call"] / cost["ns_per_call"]
        print(f"{name:38} {cost['ns_per_call']:8.1f} {cost['net_ns_per_call']:7.1f} {ratio_floor:7.2f}x "
              f"{ratio_torch:12.1f}x")
    bound = 1000.0
    verdict = "met" if dp_idle["ns_per_call"] <= bound else "NOT met"
    print(f"idle dp.step(): {dp_idle['ns_per_call']:.1f} ns per call, loop included (bound {bound:.0f} ns: {verdict}); "
          f"torch.profiler's idle prof.step() costs {torch_idle['ns_per_call'] / dp_idle['ns_per_call']:.1f}x as much")
    if args.json is not None:
        document = {"calls": args.calls, "torch_calls": args.torch_calls, "repeats": args.repeats,
                    "machine": machine(), "results": results,
                    "ratios": {"dp_idle_over_floor": dp_idle["ns_per_call"] / floor["ns_per_call"],
                               "torch_idle_over_dp_idle": torch_idle["ns_per_call"] / dp_idle["ns_per_call"]}}
        text = json.dumps(document, indent=2)
        if args.json == "-":
            print(text)
        else:
            with open(args.json, "w", encoding="utf-8") as file:
                file.write(text + "\n")


if __name__ == "__main__":
    main()
