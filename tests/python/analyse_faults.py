"""Faults planted in ``perfprof analyse``'s worker for one run directory (the tests of its
isolated workers). ``python analyse_faults.py KIND BAD_DIR ARGS...`` is ``perfprof ARGS...``
with the fault planted: the analysis of BAD_DIR, and of no other, crashes, hangs, blows up its
memory, exits or raises as it begins reading the capture."""
from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from typing import Any, Callable, Dict

from perfprof import _analyse

# Each fault's planted memory blow-up stops at this much (the limit the tests set is below it):
# without a limit, the analysis would get it and succeed, which a test must see as a failure.
BLOW_UP_MIB = 1024


def _segfault() -> None:
    faulthandler.disable()  # pytest's would print the Python stack first: a native crash prints nothing
    os.kill(os.getpid(), signal.SIGSEGV)


def _exit() -> None:
    os._exit(3)


def _hang() -> None:
    threading.Event().wait()  # nobody sets it


def _blow_up() -> None:
    chunks = [bytearray(1 << 20) for _ in range(BLOW_UP_MIB)]  # zeroed: touched, resident
    del chunks


def _raise() -> None:
    raise RuntimeError("a planted defect")


FAULTS: Dict[str, Callable[[], None]] = {"segfault": _segfault, "exit": _exit, "hang": _hang, "memory": _blow_up,
                                         "raise": _raise}


def reader_failing_on(bad_dir: str, kind: str, reader: Callable[[str], Any]) -> Callable[[str], Any]:
    """`reader` (perfprof._analyse._read_captured_run) with the fault `kind` for `bad_dir`."""
    def read(run_dir: str) -> Any:
        if os.path.samefile(run_dir, bad_dir):
            FAULTS[kind]()
        return reader(run_dir)
    return read


if __name__ == "__main__":
    fault, bad, *arguments = sys.argv[1:]
    _analyse._read_captured_run = reader_failing_on(bad, fault, _analyse._read_captured_run)
    from perfprof.cli import main

    main(arguments, prog_name="perfprof")
