"""Reading traces and checking their structure: helpers shared by the Python tests."""
from __future__ import annotations

import glob
import gzip
import json
import os
import re
import threading
from collections import Counter, defaultdict
from typing import Any, Dict, List, Optional, Set, Tuple

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
            # Times are written to the nanosecond; ts + dur is a float sum at ~1e9 us: half a ns of slack.
            while open_ends and open_ends[-1] <= begin + 5e-4:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + 5e-4, f"{event} overlaps its parent on {thread}"
            open_ends.append(end)


# -- with_stack beside torch.profiler ----------------------------------------------------------------
# What differs between the two profilers' python_function events by construction:
# - torch.profiler records its own frames: those of torch/profiler/profiler.py (start, step,
#   __exit__ ...) and everything they call; perfprof records neither its own nor what they call.
# - torch.profiler traces every Python thread alive when it starts (their running frames, then
#   their calls); perfprof the threads that capture: the profiling thread, and the threads that
#   call enable_profiler_in_child_thread (docs/design.md, "Python calls").
# - A built-in is named by the repr of the object its first call in the session was bound to
#   ("<built-in method get of dict object at 0x7f...>"). When that object is a temporary (a
#   tensor, a keyword-arguments dict) its address differs between any two runs, two runs of
#   torch.profiler included.

TORCH_PROFILER_OWN = "torch/profiler/profiler.py("  # the profiler classes; other files there serve the loop


def masked_address(name: str) -> str:
    """`name` without the object address a built-in method's name ends with."""
    return re.sub(r" at 0x[0-9a-f]+>$", " at 0x?>", name)


def split_torch_calls(trace: Dict[str, Any], thread: Optional[int] = None) -> Tuple[Counter, Counter]:
    """torch.profiler's python_function events by name: (the loop's on `thread`, the OS thread id,
    by default the calling thread; the others: torch.profiler's own, and other threads')."""
    thread = threading.get_native_id() if thread is None else thread
    calls = sorted((e for e in trace["traceEvents"] if e.get("cat") == "python_function" and e.get("ph") == "X"),
                   key=lambda e: e["args"]["Python id"])  # a caller has a smaller id than its callees
    own_ids: Set[int] = set()
    loop, others = Counter(), Counter()
    for event in calls:
        if event["name"].startswith(TORCH_PROFILER_OWN) or event["args"].get("Python parent id") in own_ids:
            own_ids.add(event["args"]["Python id"])
            others[event["name"]] += 1
        elif event["tid"] != thread:
            others[event["name"]] += 1
        else:
            loop[event["name"]] += 1
    return loop, others


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

