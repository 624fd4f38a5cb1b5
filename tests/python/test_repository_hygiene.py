"""The source tree holds sources: the lint rules of pyproject.toml hold everywhere, the license it
names is present, and no binary file is tracked except the tests' data."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import List

import pytest

REPO = Path(__file__).resolve().parents[2]
LINTED = ["python", "tests", "benchmarks", "scripts", "examples"]
# Binary files the tests read: the capture fuzzer's corpus (tests/cpp/capture_fuzz/corpus).
TEST_DATA = ("tests/cpp/capture_fuzz/corpus/",)


def tracked_files() -> List[str]:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist): nothing is tracked")
    listing = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True)
    return [name for name in listing.stdout.decode().split("\0") if name]


def test_ruff_finds_nothing():
    ruff = subprocess.run([sys.executable, "-m", "ruff", "--version"], capture_output=True, text=True)
    assert ruff.returncode == 0, "ruff is missing: pip install '.[test]' installs the pinned version"
    command = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *LINTED]
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_license_pyproject_names_is_shipped():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    text = (REPO / "LICENSE").read_text()
    assert "Apache License" in text and "Version 2.0, January 2004" in text


def test_no_binary_file_is_tracked_outside_the_tests_data():
    binary = []
    for name in tracked_files():
        path = REPO / name
        if name.startswith(TEST_DATA) or not path.is_file() or path.stat().st_size == 0:
            continue
        if b"\0" in path.read_bytes()[:8192]:  # what git and grep take for binary
            binary.append(name)
    assert binary == []
