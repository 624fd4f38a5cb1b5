"""What the tests need to start a child Python."""
from __future__ import annotations

import os
from typing import Dict, List

import perfprof


def child_env() -> Dict[str, str]:
    """The environment of a child Python that imports the perfprof these tests import (the
    source tree's in a development build, the installed one in CI)."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(perfprof.__file__)))
    return dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_parent, os.environ.get("PYTHONPATH")])))


def perfprof_lines(stderr: str) -> List[str]:
    """The lines perfprof logged to a child's stderr."""
    return [line for line in stderr.splitlines() if line.startswith("perfprof:")]
