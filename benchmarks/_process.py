"""Whole-process measurements shared by the benchmarks: wall time and the peak memory of a
command's process tree."""
from __future__ import annotations

import subprocess
import threading
import time
from dataclasses import dataclass
from typing import List, Optional


@dataclass(frozen=True)
class Measured:
    seconds: float
    peak_bytes: int  # the process tree's resident set, summed, at its largest
    largest_process_bytes: int  # the largest resident set of one process of the tree
    stdout: str
    killed: bool = False  # past the memory cap


def measured(command: List[str], memory_cap_bytes: Optional[int] = None) -> Measured:
    """Run `command`, sampling the resident set of it and all its children every 20 ms (psutil);
    with `memory_cap_bytes`, kill the tree once it passes the cap. Raises RuntimeError when the
    command fails (unless killed)."""
    import psutil

    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    peak = largest = 0
    killed = threading.Event()
    stop = threading.Event()

    def sample() -> None:
        nonlocal peak, largest
        parent = psutil.Process(process.pid)
        while not stop.is_set():
            try:
                tree = [parent] + parent.children(recursive=True)
                sizes = [p.memory_info().rss for p in tree if p.is_running()]
                peak, largest = max(peak, sum(sizes)), max([largest, *sizes])
                if memory_cap_bytes is not None and sum(sizes) > memory_cap_bytes:
                    killed.set()
                    for p in reversed(tree):
                        p.kill()
            except psutil.Error:
                pass
            stop.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    seconds = time.perf_counter() - start
    stop.set()
    sampler.join()
    if process.returncode != 0 and not killed.is_set():
        raise RuntimeError(f"{command[:3]} failed:\n{err[-2000:]}")
    return Measured(seconds, peak, largest, out.strip(), killed.is_set())
