"""Calls run each in a process of its own, so that one that crashes, hangs or blows up its memory
fails alone, by name, and the others complete (``perfprof analyse``'s workers).

A shared process pool cannot do this: one worker that dies breaks the pool, and every call still
waiting in it fails with ``BrokenProcessPool``. Here each call gets a forked process, at most
`max_at_once` of them at a time; the parent waits on their pipes and exit, kills one past its
timeout, and says in one line what ended a process that returned nothing.
"""
from __future__ import annotations

import multiprocessing
import os
import resource
import signal
import time
import traceback
from collections import deque
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Dict, Generic, List, Optional, Sequence, TypeVar

Item = TypeVar("Item")


@dataclass(frozen=True)
class Limits:
    """What one isolated call may take: wall-clock seconds, and memory beyond what its process
    held when it began (bytes of address space)."""

    timeout_s: float
    memory_bytes: int


@dataclass(frozen=True)
class Outcome:
    """How one isolated call ended: its `value` when it returned, else `failure` says why not."""

    value: Any = None
    #: "" when the call returned, else one line said of its process: "was killed by signal 11
    #: (SIGSEGV)", "exceeded the 600 s timeout", "exceeded the 1,024 MiB memory limit", ...
    failure: str = ""


def run_each_isolated(function: Callable[[Item], Any], items: Sequence[Item], max_at_once: int,
                      limits_of: Callable[[Item], Limits],
                      on_outcome: Callable[[Item, Outcome], None]) -> List[Outcome]:
    """Call `function(item)` for each item in a forked process of its own, at most `max_at_once`
    at a time, each within ``limits_of(item)``; `on_outcome` is called as each ends. Returns the
    outcomes in the order of `items`. What `function` returns must pickle."""
    context = multiprocessing.get_context("fork")  # the children run code already loaded, on files
    outcomes: Dict[int, Outcome] = {}
    waiting = deque(range(len(items)))
    running: List[_Worker[Item]] = []
    try:
        while waiting or running:
            while waiting and len(running) < max_at_once:
                index = waiting.popleft()
                running.append(_Worker.start(context, function, index, items[index], limits_of(items[index])))
            for worker in _wait_for_any(running):
                running.remove(worker)
                outcomes[worker.index] = worker.outcome()
                on_outcome(worker.item, outcomes[worker.index])
    finally:  # interrupted (Ctrl-C), or on_outcome raised: no worker outlives the call
        for worker in running:
            worker.kill()
    return [outcomes[index] for index in range(len(items))]


class _Worker(Generic[Item]):
    """One call's process, seen from the parent."""

    def __init__(self, index: int, item: Item, limits: Limits, process: Any, results: Connection) -> None:
        self.index = index
        self.item = item
        self.limits = limits
        self.process = process
        self.results = results
        self.deadline = time.monotonic() + limits.timeout_s
        self.timed_out = False

    @classmethod
    def start(cls, context: Any, function: Callable[[Item], Any], index: int, item: Item,
              limits: Limits) -> "_Worker[Item]":
        results, child_end = context.Pipe(duplex=False)
        process = context.Process(target=_call_in_child, args=(function, item, limits.memory_bytes, child_end),
                                  daemon=True)
        process.start()
        child_end.close()  # the parent's copy: its pipe then reads end-of-file when the child is gone
        return cls(index, item, limits, process, results)

    def kill(self) -> None:
        self.process.kill()
        self.process.join()
        self.results.close()

    def outcome(self) -> Outcome:
        """How the call ended (its process has ended, or has been killed)."""
        try:
            kind, value = self.results.recv() if self.results.poll() else (None, None)
        except (EOFError, OSError):  # died before it could say anything
            kind, value = None, None
        self.process.join(max(0.0, self.deadline - time.monotonic()))
        if self.process.exitcode is None:  # said what it had to, then hung on its way out
            self.process.kill()
            self.process.join()
        self.results.close()
        if kind == "returned":  # also when it did so as its deadline passed: the work is done
            return Outcome(value=value)
        if self.timed_out:
            return Outcome(failure=f"exceeded the {self.limits.timeout_s:g} s timeout")
        if kind == "out_of_memory":
            return Outcome(failure=f"exceeded the {self.limits.memory_bytes >> 20:,} MiB memory limit")
        if kind == "raised":
            return Outcome(failure=f"raised {value}")
        return Outcome(failure=_death(self.process.exitcode))


def _wait_for_any(running: List[_Worker[Item]]) -> List[_Worker[Item]]:
    """The workers that have ended (said what they had to say, or died), or passed their deadline
    (killed here); waits until there is one."""
    while True:
        now = time.monotonic()
        late = [worker for worker in running if worker.deadline <= now]
        for worker in late:
            worker.timed_out = True
            worker.process.kill()
        if late:
            return late
        next_deadline = min(worker.deadline for worker in running)
        ready = set(wait([worker.results for worker in running] + [worker.process.sentinel for worker in running],
                         timeout=next_deadline - now))
        ended = [worker for worker in running if worker.results in ready or worker.process.sentinel in ready]
        if ended:
            return ended


def _call_in_child(function: Callable[[Item], Any], item: Item, memory_bytes: int, results: Connection) -> None:
    """The child's side: limit its memory, call, and send back what came of it."""
    _limit_memory(memory_bytes)
    try:
        message = ("returned", function(item))
    except MemoryError:
        message = ("out_of_memory", None)
    except BaseException as error:  # a defect of the called code: said in one line, not a traceback
        frame = traceback.extract_tb(error.__traceback__)[-1]
        message = ("raised", f"{type(error).__name__}: {error} ({os.path.basename(frame.filename)}:{frame.lineno})")
    results.send(message)
    results.close()


def _limit_memory(memory_bytes: int) -> None:
    """Cap the address space at what the process holds now plus `memory_bytes`: the process was
    forked from the caller, whose own size (a training script's, with its libraries) it shares."""
    with open("/proc/self/statm", encoding="ascii") as statm:
        held = int(statm.read().split()[0]) * resource.getpagesize()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    limit = held + memory_bytes if hard == resource.RLIM_INFINITY else min(held + memory_bytes, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))


def _death(exit_code: Optional[int]) -> str:
    """What ended a process that sent nothing back, from its exit code."""
    if exit_code is None or exit_code >= 0:
        return f"exited with code {exit_code} before it finished"
    number = -exit_code
    try:
        return f"was killed by signal {number} ({signal.Signals(number).name})"
    except ValueError:  # a real-time signal: no name
        return f"was killed by signal {number}"
