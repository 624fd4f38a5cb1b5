"""Reading traces and checking their structure: helpers shared by the Python tests."""
from __future__ import annotations

import glob
import gzip
import json
import os
from collections import defaultdict
from typing import Any, Dict, List, Tuple

import perfprof


def load_trace(path: str) -> Dict[str, Any]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return json.load(file)


# The tracks of Kineto's window markers ("PyTorch Profiler (0)", "Iteration Start: ...", "Record
# Window End"), which every trace ends with: bookkeeping, not the run's events.
WINDOW_MARKER_PIDS = ("Spans", "Traces", "")


def events(trace: Dict[str, Any], phase: str) -> List[Dict[str, Any]]:
    """The run's events of `phase` (the window markers left out)."""
    return [e for e in trace["traceEvents"] if e["ph"] == phase and e.get("pid") not in WINDOW_MARKER_PIDS]


def names(trace: Dict[str, Any], phase: str = "X") -> List[str]:
    return [e["name"] for e in events(trace, phase)]


def assert_slices_nest(trace: Dict[str, Any]) -> None:
    """Every X slice lies inside, or entirely after, the slices open on its thread.

    Times are compared in integer nanoseconds: `ts` and `dur` have three decimals, and as floats
    their sum can differ from an equal end by one ulp (~0.5 ns at 3e9 us)."""
    by_thread: Dict[Any, List[Tuple[int, int, Dict[str, Any]]]] = defaultdict(list)
    for event in events(trace, "X"):
        assert event["dur"] >= 0, event
        begin = round(event["ts"] * 1000)
        by_thread[(event["pid"], event["tid"])].append((begin, begin + round(event["dur"] * 1000), event))
    for thread, slices in by_thread.items():
        slices.sort(key=lambda s: (s[0], -s[1]))
        open_ends: List[int] = []
        for begin, end, event in slices:
            while open_ends and open_ends[-1] <= begin:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1], f"{event} overlaps its parent on {thread}"
            open_ends.append(end)


def run_dirs(root: str) -> List[str]:
    return sorted(glob.glob(os.path.join(root, "*_perfprof")))


def trace_file_of(run_dir: str) -> str:
    (path,) = glob.glob(os.path.join(perfprof.trace_dir_of(run_dir), "*.pt.trace.json*"))
    return path


def tensorboard_views(path: str, worker: str = "worker", span: str = "1") -> Dict[str, Any]:
    """What TensorBoard's profiler plugin (torch-tb-profiler) makes of a trace file."""
    import tempfile

    from torch_tb_profiler.profiler.data import RunProfileData
    from torch_tb_profiler.profiler.run_generator import RunGenerator

    data = RunProfileData.parse(worker, span, path, tempfile.mkdtemp())
    profile = RunGenerator(worker, span, data).generate_run_profile()
    return {"views": [view.name for view in profile.views], "steps": list(data.steps_names)}

