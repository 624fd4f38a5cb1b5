"""The memory peak reads the same in every output (docs/memory.md, "Two peaks"): the HTML legend,
`perfprof summary` (text and JSON), SQL over the run database and torch.profiler's own
export_memory_timeline of the same steps; the allocator's maximum, a different quantity, is
named apart and agrees with memory_record.csv, whose sizes are labelled MiB."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

import perfprof
from database_checks import query
from perfprof import analysis
from test_memory import mlp_adam

SCHEDULE = dict(wait=0, warmup=1, active=2, repeat=1)
STEPS = 3
MIB = 2 ** 20


def perfprof_run(folder: Path):
    """A run directory (with a database) of the MLP loop's recorded steps, and its profiler."""
    step = mlp_adam()
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], profile_memory=True, experimental_config=config,
                          schedule=perfprof.schedule(**SCHEDULE),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(folder))) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
    (run_dir,) = [path for path in folder.iterdir() if path.is_dir()]
    return run_dir, prof


def torch_timeline(path: Path):
    """torch.profiler's [times, sizes] of the same loop and steps."""
    step = mlp_adam()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                profile_memory=True, with_stack=True,
                                schedule=torch.profiler.schedule(**SCHEDULE)) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch deprecates its own exporter
        prof.export_memory_timeline(str(path), device="cpu")
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory):
    folder = tmp_path_factory.mktemp("peak")
    run_dir, prof = perfprof_run(folder / "runs")
    html = prof.export_memory_timeline(str(folder / "memory_timeline.html"), device="cpu")
    ours = prof.export_memory_timeline(str(folder / "perfprof.json"), device="cpu")
    return dict(run_dir=run_dir, html=Path(html).read_text(), json=json.loads(Path(ours).read_text()),
                torch=torch_timeline(folder / "torch.json"))


def peak_of(timeline) -> int:
    """The highest total over the points of a [times, sizes] timeline (sizes: a 0, then the categories)."""
    return max(sum(point[1:]) for point in timeline[1])


def legend_bytes(html: str, label: str) -> int:
    """The exact bytes the HTML legend gives after `label`."""
    found = re.search(re.escape(label) + r": [0-9.]+ [KMGT]?i?B \((\d+) bytes\)", html)
    assert found, f"no {label!r} in the legend"
    return int(found[1])


def summary(run_dir: Path, *args: str, columns: int = 200) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=str(columns), TERM="dumb")
    return subprocess.run([sys.executable, "-m", "perfprof", "summary", str(run_dir), "-a", "memory_peaks", *args],
                          capture_output=True, text=True, env=env, timeout=120)


def test_the_peak_is_one_number_in_every_output(outputs):
    with analysis.open_run(outputs["run_dir"]) as run:
        database = run.path
        rows = {row["category"]: row["peak_bytes"] for row in analysis.memory_peaks(run) if row["deviceType"] == "CPU"}
    peak = rows["TOTAL"]
    (by_sql,) = query(database, "SELECT max(total) FROM (SELECT sum(bytes) AS total FROM MEMORY_CATEGORIES "
                                "GROUP BY deviceType, timestamp)")
    assert by_sql == (peak,)
    assert peak_of(outputs["json"]) == peak
    assert legend_bytes(outputs["html"], "Peak total of the categories (the chart's top)") == peak
    # torch.profiler on the same loop and steps: the same peak, to the byte.
    assert peak_of(outputs["torch"]) == peak

    document = json.loads(summary(outputs["run_dir"], "--format", "json").stdout)
    table = document["analyses"]["memory_peaks"]
    total = [dict(zip(table["columns"], row)) for row in table["rows"] if row[1] == "TOTAL"]
    assert [row["peak_bytes"] for row in total] == [peak]
    for columns in (80, 120):
        text = summary(outputs["run_dir"], columns=columns).stdout
        assert "peak (MiB)" in text or "peak (KiB)" in text, text
        unit = MIB if "peak (MiB)" in text else 1024
        (line,) = [line for line in text.splitlines() if "TOTAL" in line]
        assert f"{peak / unit:,.3f}" in line, line


def test_the_allocator_maximum_is_named_apart_and_memory_record_csv_is_in_mib(outputs):
    output = perfprof.trace_dir_of(str(outputs["run_dir"]))
    with open(os.path.join(output, "memory_record.csv"), newline="") as file:
        records = list(csv.DictReader(file))
    assert "Total Allocated(MiB)" in records[0] and "Total Allocated(MB)" not in records[0]
    with analysis.open_run(outputs["run_dir"]) as run:
        (largest,) = query(run.path, "SELECT max(totalAllocated) FROM MEMORY_RECORD")
    allocator = legend_bytes(outputs["html"], "Allocator's max allocated (torch's own count; for the CPU, "
                                              "only of memory allocated while recording)")
    assert largest == (allocator,)
    assert max(float(record["Total Allocated(MiB)"]) for record in records) == round(allocator / MIB, 6)
    # Which is not the peak (docs/memory.md says why); torch's label for it is not used.
    assert "Max memory allocated" not in outputs["html"]
