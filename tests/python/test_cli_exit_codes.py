"""The exit codes of docs/cli.md for every subcommand, in a process of its own: 2 for a command
line naming a path that does not exist, and 0 (no traceback) when the reader of the output
stops early (`perfprof summary RUN | head`)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from analysis_runs import constructed_run
from test_analysis_gpu_time import SCENARIO

EXIT_USAGE = 2


def perfprof(*args: str, **options) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS="80", TERM="dumb")
    return subprocess.run([sys.executable, "-m", "perfprof", *args], env=env, timeout=120, **options)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return constructed_run(SCENARIO, tmp_path_factory.mktemp("exit_codes"))


@pytest.mark.parametrize("command", [
    ["analyse", "{missing}"],
    ["summary", "{missing}"],
    ["plot", "{missing}"],
    ["cluster", "{missing}"],
    ["aggregate", "{missing}/results.jsonl"],
    ["compare", "{run}", "{missing}"],
    ["compare", "{missing}", "{run}"],
    ["compare", "{run}", "{missing}/results.jsonl:3f2a9c1d"],
    ["run", "{missing}/train.py"],
    ["sweep", "--grid", "lr=0.1", "-o", "{missing}/sweep", "{missing}/train.py"],
    ["report", "{missing}", "-o", "{run}/report.html"],
    ["ui", "{missing}"],
])
def test_a_path_that_does_not_exist_is_a_usage_error(command, run_dir, tmp_path):
    missing = str(tmp_path / "no_such_path")
    args = [part.format(missing=missing, run=run_dir) for part in command]
    result = perfprof(*args, capture_output=True, text=True)
    assert result.returncode == EXIT_USAGE, (args, result.stderr)
    assert "no_such_path" in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("output_format", ["text", "csv", "markdown", "json"])
def test_a_reader_that_stops_early_is_no_failure(output_format, run_dir):
    # The pipe's reading end is closed before perfprof starts, as `head` closes it after its
    # lines: every write fails with EPIPE, deterministically.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = perfprof("summary", str(run_dir), "--format", output_format, stdout=write_end,
                          stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "BrokenPipe" not in result.stderr, result.stderr


def test_compare_through_a_closed_pipe_exits_0(run_dir):
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        result = perfprof("compare", str(run_dir), str(run_dir), stdout=write_end, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(write_end)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
