"""python/perfprof imports without a cycle, function-level imports counted
(scripts/check_python_imports.py), and the check finds every form of import that can close one."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Dict

REPO = Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "check_python_imports.py"


def run_check(package: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(CHECK), str(package)], capture_output=True, text=True, timeout=120)


def write_package(root: Path, files: Dict[str, str]) -> Path:
    package = root / "pkg"
    for name, text in files.items():
        path = package / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return package


def test_perfprof_has_no_import_cycle():
    result = run_check(REPO / "python" / "perfprof")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no import cycle" in result.stdout


def test_a_cycle_hidden_in_a_function_is_found_with_the_lines_that_close_it(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "",
        "writer.py": "from .plots import draw\n",
        "plots/__init__.py": "from ._engine import draw\n",
        "plots/_engine.py": """\
            def draw():
                from ..reader import read  # deferred: still an edge
                return read()
            """,
        "reader.py": "import pkg.writer\n\ndef read():\n    return 1\n",
        "leaf.py": "from . import writer\n",  # imports into the cycle, is not part of it
    })
    result = run_check(package)
    assert result.returncode == 1
    assert "import cycle 1 through 4 modules: pkg.plots, pkg.plots._engine, pkg.reader, pkg.writer" in result.stdout
    assert "pkg/plots/_engine.py:2: pkg.plots._engine imports pkg.reader" in result.stdout
    assert "pkg/reader.py:1: pkg.reader imports pkg.writer" in result.stdout
    assert "leaf" not in result.stdout
    assert "import cycle 2" not in result.stdout


def test_a_type_checking_import_closes_a_cycle(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import Thing\n",
    })
    result = run_check(package)
    assert result.returncode == 1
    assert "pkg.a, pkg.b" in result.stdout


def test_importing_the_parent_package_is_not_a_cycle(tmp_path):
    package = write_package(tmp_path, {
        "__init__.py": "from .sub import x\n",
        "sub/__init__.py": "x = 1\n",
        "sub/child.py": "from .. import sub\nimport pkg\n",
    })
    result = run_check(package)
    assert result.returncode == 0, result.stdout
