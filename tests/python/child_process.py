"""What the tests need to start a child Python."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import perfprof


def child_env() -> Dict[str, str]:
    """The environment of a child Python that imports the perfprof these tests import (the
    source tree's in a development build, the installed one in CI)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(perfprof.__file__)))
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])))


def perfprof_lines(stderr: str) -> List[str]:
    """The lines perfprof logged to a child's stderr."""
    return [line for line in stderr.splitlines() if line.startswith("perfprof:")]


def analyse(run_dir: Path) -> None:
    """Run `perfprof analyse RUN_DIR` in a child; it must succeed."""
    analysed = subprocess.run([sys.executable, "-m", "perfprof", "analyse", str(run_dir)], env=child_env(),
                              capture_output=True, text=True, timeout=300)
    assert analysed.returncode == 0, analysed.stderr


def trace_events(run_dir: Path) -> List[Dict[str, Any]]:
    """The events of the Chrome trace in a run directory's PERFPROF_OUTPUT."""
    (trace,) = (run_dir / "PERFPROF_OUTPUT").glob("*.pt.trace.json")
    return json.loads(trace.read_text())["traceEvents"]
