"""perfprof summary in a terminal: the analyses of a test-double GPU run as a user reads them,
and the formats, selection and errors of the command."""
from __future__ import annotations

import csv
import glob
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis_runs import constructed_run
from perfprof.analysis._run_database import SCHEMA_VERSION
from test_analysis_gpu_time import SCENARIO  # its hand-computed numbers are checked there


def summary(*args: str, columns: int = 200) -> subprocess.CompletedProcess:
    env = dict(os.environ, COLUMNS=str(columns), TERM="dumb")
    return subprocess.run([sys.executable, "-m", "perfprof", "summary", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return constructed_run(SCENARIO, tmp_path_factory.mktemp("summary"))


def row_of(text: str, first_cell: str) -> list:
    """The cells of the terminal table row starting with `first_cell`."""
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip("│┃ ").split("│")]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in:\n{text}")


def test_terminal_report_of_a_gpu_run(gpu_run):
    result = summary(str(gpu_run))
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for title in ("GPU time: compute, non-compute and idle", "Why streams were idle", "Top GPU kernels",
                  "Communication overlapped by computation", "Kernel launches", "Launch queue length"):
        assert title in out
    # The temporal breakdown in readable units: 340/140/50 of 530 us.
    assert "compute (µs)" in out and "64.2" in out and "26.4" in out and "9.4" in out
    # nsys-stats-style kernel row: count, total, avg, median, min, max, stdev (us), share.
    assert row_of(out, "gemm") == ["gemm", "compute", "3", "280.000", "93.333", "100.000", "60.000", "120.000",
                                   "30.551", "45.2"]
    assert "GPU utilisation and idle over time" not in out  # a series for the plots, not the report
    assert "Frequent kernel sequences: no data in this run" in out  # no operator launched the kernels


def two_cell_rows(text: str) -> list:
    """The (first, second) cells of every two-cell table row: an expanded table's lines."""
    rows = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("│").split("│")]
        if len(cells) == 2:
            rows.append(tuple(cells))
    return rows


def test_a_narrow_terminal_gets_whole_numbers_and_names(gpu_run):
    analyses = ("-a", "top_kernels", "-a", "comm_comp_overlap")
    wide = summary(str(gpu_run), *analyses).stdout
    narrow = summary(str(gpu_run), *analyses, columns=80).stdout
    assert max(len(line) for line in narrow.splitlines()) <= 80
    # top_kernels does not fit in 80 columns: its spread columns are left out, and said so.
    assert row_of(wide, "gemm") == ["gemm", "compute", "3", "280.000", "93.333", "100.000", "60.000", "120.000",
                                    "30.551", "45.2"]
    assert row_of(narrow, "gemm") == ["gemm", "compute", "3", "280.000", "93.333", "45.2"]
    assert "left out for the width: stddev (µs), median (µs), min (µs), max (µs)" in " ".join(narrow.split())
    # comm_comp_overlap fits: the same table as on a wide terminal.
    assert row_of(narrow, "0") == row_of(wide, "0")
    # Narrower than its remaining columns: one block per kernel, each column's value whole.
    tiny = summary(str(gpu_run), "-a", "top_kernels", columns=40).stdout
    assert max(len(line) for line in tiny.splitlines()) <= 40
    expanded = two_cell_rows(tiny)
    for pair in (("name", "gemm"), ("count", "3"), ("total (µs)", "280.000"), ("stddev (µs)", "30.551")):
        assert pair in expanded, pair


def test_top_limits_the_rows_and_analysis_selects_tables(gpu_run):
    result = summary(str(gpu_run), "--top", "2", "-a", "top_kernels", "--format", "csv")
    assert result.returncode == 0, result.stderr
    rows = list(csv.reader(io.StringIO(result.stdout)))
    assert rows[0][:4] == ["name", "type", "count", "total_ns"]
    assert [row[0] for row in rows[1:]] == ["gemm", "ncclDevKernel_AllReduce_Sum_f32_RING_LL"]
    assert rows[1][3] == "280000"


def test_json_and_markdown(gpu_run):
    document = json.loads(summary(str(gpu_run), "--format", "json").stdout)
    breakdown = document["analyses"]["temporal_breakdown"]
    assert dict(zip(breakdown["columns"], breakdown["rows"][0]))["idle_ns"] == 50_000
    assert document["database"].endswith("perfprof.db")
    markdown = summary(str(gpu_run), "--format", "markdown", "-a", "comm_comp_overlap").stdout
    assert "## Communication overlapped by computation" in markdown
    assert "| 0 | 140.000 | 50.000 | 35.7 |" in markdown


def test_a_run_without_a_database_gets_one_from_its_capture(tmp_path):
    import perfprof

    with perfprof.profile(schedule=perfprof.schedule(wait=0, active=1, repeat=1),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="w"),
                          experimental_config=perfprof.ExperimentalConfig(data_simplification=False)) as prof:
        with perfprof.record_function("work"):
            pass
        prof.step()
    (run_dir,) = [str(p) for p in tmp_path.iterdir()]
    database = os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")
    assert not os.path.exists(database)
    result = summary(run_dir, "--format", "json")
    assert result.returncode == 0, result.stderr
    assert "building the database of" in result.stderr and os.path.isfile(database)
    assert json.loads(result.stdout)["database"] == database


def test_a_database_of_an_older_perfprof_is_rebuilt_from_the_capture_or_named(tmp_path):
    import sqlite3

    import perfprof

    with perfprof.profile(schedule=perfprof.schedule(wait=0, active=1, repeat=1),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="w"),
                          experimental_config=perfprof.ExperimentalConfig(export_type=["text", "db"],
                                                                          data_simplification=False)) as prof:
        with perfprof.record_function("work"):
            pass
        prof.step()
    (run_dir,) = [str(p) for p in tmp_path.iterdir()]
    database = os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")

    def set_schema(version: str) -> None:
        with sqlite3.connect(database) as connection:
            connection.execute("UPDATE META_DATA SET value = ? WHERE name = 'schema_version'", (version,))

    def schema() -> str:
        with sqlite3.connect(database) as connection:
            return connection.execute("SELECT value FROM META_DATA WHERE name = 'schema_version'").fetchone()[0]

    set_schema("1")
    result = summary(run_dir, "--format", "json", "-a", "run_info")
    assert result.returncode == 0, result.stderr
    assert "building the database of" in result.stderr and schema() == str(SCHEMA_VERSION)

    set_schema("1")
    result = summary(database, "-a", "run_info")  # a database file is read, never rebuilt
    assert result.returncode == 1 and f"run `perfprof analyse {run_dir}` to rebuild it" in result.stderr
    # Without its capture, the run directory's database is rebuilt from its Chrome trace; the
    # database file alone is still read as it is, the error saying where to rebuild it from.
    os.remove(os.path.join(run_dir, "capture.ppcap"))
    set_schema("1")
    result = summary(database, "-a", "run_info")
    assert result.returncode == 1 and f"give the run directory {run_dir} instead" in result.stderr
    result = summary(run_dir, "--format", "json", "-a", "run_info")
    assert result.returncode == 0, result.stderr
    assert "from its Chrome trace" in result.stderr and schema() == str(SCHEMA_VERSION)
    set_schema("1")
    (trace,) = glob.glob(os.path.join(run_dir, "PERFPROF_OUTPUT", "*.pt.trace.json"))
    os.remove(trace)
    for path in (run_dir, database):
        result = summary(path, "-a", "run_info")
        assert result.returncode == 1
        assert f"written by an older perfprof (database schema 1; the analyses need {SCHEMA_VERSION})" in result.stderr
        assert "profile it again" in result.stderr


def test_errors_name_the_problem(tmp_path, gpu_run):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = summary(str(empty))
    assert result.returncode == 1
    assert "no run directory there" in result.stderr and "no Chrome trace" in result.stderr
    run_without_outputs = tmp_path / "w_1_perfprof"
    (run_without_outputs / "PERFPROF_OUTPUT").mkdir(parents=True)
    result = summary(str(run_without_outputs))
    assert result.returncode == 1
    assert "no database (PERFPROF_OUTPUT/perfprof.db), no capture (capture.ppcap) and no Chrome trace" in result.stderr
    not_a_database = tmp_path / "junk.db"
    not_a_database.write_bytes(b"not sqlite" * 100)
    result = summary(str(not_a_database))
    assert result.returncode == 1 and "not a readable perfprof database" in result.stderr
    result = summary(str(gpu_run), "-a", "top_kernel")
    assert result.returncode == 2 and "no analysis named 'top_kernel'" in result.stderr


def test_a_folder_of_runs_is_reported_run_by_run(tmp_path, gpu_run):
    for name in ("a_1_perfprof", "b_1_perfprof"):
        shutil.copytree(gpu_run, tmp_path / name)
    result = summary(str(tmp_path), "--format", "json", "-a", "kernel_breakdown")
    documents = [json.loads(line) for line in result.stdout.splitlines()]
    assert [Path(d["run"]).name for d in documents] == ["a_1_perfprof", "b_1_perfprof"]


# --- Readable at 80 and 120 columns: one unit per column family ---------------------------------

UNIT = re.compile(r"\((s|ms|µs|ns|B|KiB|MiB|GiB|bytes)\)")
TIME_UNITS, BYTE_UNITS = {"s", "ms", "µs", "ns"}, {"B", "KiB", "MiB", "GiB"}


@pytest.fixture(scope="module")
def memory_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A CPU run with memory, Python calls and modules: byte and time columns of every size."""
    import perfprof
    from test_memory import mlp_adam

    folder = tmp_path_factory.mktemp("memory_summary")
    step = mlp_adam()
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], profile_memory=True, with_stack=True,
                          with_modules=True, schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1),
                          experimental_config=perfprof.ExperimentalConfig(export_type=["text", "db"]),
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(folder))) as prof:
        for _ in range(3):
            step()
            prof.step()
    (run_dir,) = [path for path in folder.iterdir() if path.is_dir()]
    return run_dir


def headers_of(shown) -> list:
    """The column names of a rich table as drawn: its headers, or, expanded, its first column."""
    if shown.show_header:
        return [str(column.header) for column in shown.columns]
    return [str(cell) for cell in shown.columns[0]._cells]


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize("which", ["gpu_run", "memory_run"])
def test_every_table_has_one_time_unit_and_one_size_unit(which, width, request):
    from perfprof import analysis
    from perfprof.analysis._formats import rich_table
    from perfprof.analysis._summary import run_analyses, summary_analyses, window_begin_ns

    with analysis.open_run(request.getfixturevalue(which)) as run:
        tables = run_analyses(run, summary_analyses(), jobs=1)
        origin = window_begin_ns(run)
    shown_units = set()
    for table in tables:
        if not table.rows:
            continue
        units = [found[1] for header in headers_of(rich_table(table, origin, width=width, values_only=True))
                 for found in [UNIT.search(header)] if found]
        assert len(set(units) & TIME_UNITS) <= 1 and len(set(units) & BYTE_UNITS) <= 1, (table.name, units)
        assert "bytes" not in units, table.name
        shown_units |= set(units)
    if which == "memory_run":
        assert shown_units & BYTE_UNITS - {"B"}, shown_units  # the memory peaks, in KiB/MiB/GiB
    text = summary(str(request.getfixturevalue(which)), columns=width).stdout
    assert max(len(line) for line in text.splitlines()) <= width
    assert "_ns" not in text and "_bytes" not in text  # every unit column in a readable unit
