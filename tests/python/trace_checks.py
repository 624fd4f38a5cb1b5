"""Reading traces and checking their structure: helpers shared by the Python tests."""
from __future__ import annotations

import glob
import gzip
import json
import os
from collections import defaultdict
from typing import Any, Dict, List

import perfprof


def load_trace(path: str) -> Dict[str, Any]:
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as file:
        return json.load(file)


def events(trace: Dict[str, Any], phase: str) -> List[Dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == phase]


def names(trace: Dict[str, Any], phase: str = "X") -> List[str]:
    return [e["name"] for e in events(trace, phase)]


def assert_slices_nest(trace: Dict[str, Any]) -> None:
    """Every X slice lies inside, or entirely after, the slices open on its thread."""
    by_thread: Dict[Any, List[Dict[str, Any]]] = defaultdict(list)
    for event in events(trace, "X"):
        assert event["dur"] >= 0, event
        by_thread[(event["pid"], event["tid"])].append(event)
    for thread, slices in by_thread.items():
        slices.sort(key=lambda e: (e["ts"], -e["dur"]))
        open_ends: List[float] = []
        for event in slices:
            begin, end = event["ts"], event["ts"] + event["dur"]
            while open_ends and open_ends[-1] <= begin + 1e-9:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 1e-9, f"{event} overlaps its parent on {thread}"
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

