"""with_stack beside torch.profiler: what differs between the two profilers' python_function
events by construction, and helpers that set it aside (nothing else) before comparing.

- torch.profiler records its own frames: those of torch/profiler/profiler.py (start, step,
  __exit__ ...) and everything they call; perfprof records neither its own nor what they call.
- torch.profiler traces every Python thread alive when it starts (their running frames, then
  their calls); perfprof the threads that capture: the profiling thread, and the threads that
  call enable_profiler_in_child_thread (docs/design.md, "Python calls").
- A built-in is named by the repr of the object its first call in the session was bound to
  ("<built-in method get of dict object at 0x7f...>"). When that object is a temporary (a
  tensor, a keyword-arguments dict) its address differs between any two runs, two runs of
  torch.profiler included.
"""
from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any, Dict, Optional, Set, Tuple

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
