"""perfprof compare on real runs of one script: a run where one operator was made slower against
a base run, checked against numbers the tests work out from the databases themselves; the
formats, sweep entries, thresholds and errors of the command."""
from __future__ import annotations

import collections
import csv
import io
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Dict, List

import numpy
import pytest
import torch
from click.testing import CliRunner

import perfprof
from database_checks import query
from perfprof import analysis
from perfprof.cli import main
from perfprof.cli.compare import compare
from perfprof.experiments import PASS, CompareError, RunRecord, compare_runs, resolve_run
from perfprof.experiments._compare import OPERATORS, _section

main.add_command(compare)

SLOW_OP = "perfprof_compare_test::slow"
SLEEP_MS = 100  # per step: 300 ms over the recorded steps, far above what scheduling on a loaded machine adds
ACTIVE_STEPS = 3


@torch.library.custom_op(SLOW_OP, mutates_args=())
def slow(x: torch.Tensor, sleep_ms: float) -> torch.Tensor:
    """An operator of the recorded kind whose time the test sets: it sleeps `sleep_ms`."""
    time.sleep(sleep_ms / 1000)
    return x.clone()


def step_work(sleep_ms: float) -> None:
    """One step: the same tensor work in every run, and the custom operator sleeping `sleep_ms`
    (aten::linear nests aten::t and aten::matmul, so it has a self time to check)."""
    a = torch.ones(32, 32)
    b = torch.mm(a, a)
    c = torch.nn.functional.linear(b, a)
    slow(c, sleep_ms)


def profiled_run(folder: Path, sleep_ms: float) -> str:
    """A run directory of ACTIVE_STEPS recorded steps (after one warm-up step) with a database."""
    step_work(0)  # the first calls (the custom operator's dispatch set-up) outside the recording
    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                            profile_memory=True,
                            schedule=perfprof.schedule(wait=0, warmup=1, active=ACTIVE_STEPS, repeat=1),
                            on_trace_ready=perfprof.tensorboard_trace_handler(str(folder)))
    with prof:
        for _ in range(1 + ACTIVE_STEPS):
            step_work(sleep_ms)
            prof.step()
    (run_dir,) = [path for path in folder.iterdir() if path.is_dir()]
    return str(run_dir)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Dict[str, str]:
    """base: the custom operator does not sleep; new: it sleeps SLEEP_MS; other: as base."""
    return {name: profiled_run(tmp_path_factory.mktemp(name), sleep_ms)
            for name, sleep_ms in (("base", 0), ("new", SLEEP_MS), ("other", 0))}


def invoke(*args: str, columns: int = 250):
    result = CliRunner().invoke(main, ["compare", *args], env={"COLUMNS": str(columns), "TERM": "dumb"})
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result


def csv_sections(text: str) -> Dict[str, List[Dict[str, str]]]:
    """The --csv output's blocks by section name (the ``# name`` line), each as dict rows."""
    sections = {}
    for block in text.strip("\n").split("\n\n"):
        heading, _, body = block.partition("\n")
        assert heading.startswith("# "), block
        sections[heading[2:].split(":")[0]] = list(csv.DictReader(io.StringIO(body)))
    return sections


def database(run_dir: str) -> str:
    return os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")


def test_the_slowed_operator_is_the_top_regression_and_the_threshold_sets_the_exit_code(runs):
    result = invoke(runs["base"], runs["new"], "--csv", "--fail-if-slower", "5%")
    assert result.exit_code == 1
    # The run named by what tells it apart (its folder here), then its path.
    assert f"new (new0: {runs['new']}): mean step" in result.stderr and "above base's" in result.stderr
    operators = csv_sections(result.stdout)["operators"]
    first = operators[0]
    assert first["name"] == SLOW_OP, operators[:3]
    assert int(first["new_diff_ns"]) > ACTIVE_STEPS * SLEEP_MS * 1e6 * 0.9
    assert float(first["new_ratio"]) > 1
    diffs = [int(row["new_diff_ns"]) for row in operators]
    assert diffs == sorted(diffs, reverse=True)

    assert invoke(runs["base"], runs["new"], "--fail-if-slower", "1000000%").exit_code == 0
    assert invoke(runs["base"], runs["new"], "--fail-if-slower", "5").exit_code == 1
    assert invoke(runs["base"], runs["new"]).exit_code == 0  # no threshold: a report only


def test_terminal_report_names_the_sections_and_the_slowed_operator_first(runs):
    result = invoke(runs["base"], runs["new"])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "Steps: time per step" in out and "Memory: peak per category" in out
    assert "Kernels: device time per kernel name: no GPU work" in out
    operators = out[out.index("Operators:"):]
    rows = [line for line in operators.splitlines() if line.startswith("│")]
    assert rows[0].split("│")[1].strip() == SLOW_OP
    assert "new diff (" in operators and "new ratio" in operators


def shown_number(cell: str) -> float:
    """A number as a table shows it, thousands grouped (1,034.547 on a slow machine)."""
    return float(cell.replace(",", ""))


def test_on_80_columns_each_section_is_a_table_of_one_line_per_row(runs):
    out = invoke(runs["base"], runs["new"], "--top", "4", columns=80).stdout
    assert max(len(line) for line in out.splitlines()) <= 80
    operators = out[out.index("Operators:"):out.index("Kernels:")]
    rows = [[cell.strip() for cell in line.strip("│").split("│")] for line in operators.splitlines()
            if line.startswith("│")]
    # Name, base total, new total, diff, ratio: one line per operator (the expanded layout took 11).
    assert [len(cells) for cells in rows] == [5] * 4, operators
    assert rows[0][0] == SLOW_OP and shown_number(rows[0][3]) > 0 and shown_number(rows[0][4]) > 1
    caption = " ".join(operators.split())
    assert "left out for the width: base count, new count" in caption and "base self (" in caption
    # The runs by their paths, each in one line, the database named once.
    runs_table = out[:out.index("Steps:")]
    assert "Runs (database: PERFPROF_OUTPUT/perfprof.db in each)" in runs_table
    assert sum(os.path.basename(runs[name]) in runs_table for name in ("base", "new")) == 2


def test_steps_equal_step_time_and_the_statistics_are_the_runs_step_statistics(runs):
    # The mean and median are those of every step (step_statistics, as summary reads them); compare
    # once left out the first step, so that one run read differently here and in summary.
    sections = csv_sections(invoke(runs["base"], runs["new"], "--csv").stdout)
    rows = {row["step"]: row for row in sections["steps"]}
    assert [row["step"] for row in sections["steps"]][:4] == ["mean", "median", "p5", "p95"]
    for name, column in (("base", "base_duration_ns"), ("new", "new_duration_ns")):
        steps = query(database(runs[name]), "SELECT id, endNs - startNs FROM STEP_TIME ORDER BY id")
        assert len(steps) == ACTIVE_STEPS
        assert {str(step): int(rows[str(step)][column]) for step, _ in steps} == dict(
            (str(step), duration) for step, duration in steps)
        durations = numpy.array([duration for _, duration in steps], dtype=float)
        assert float(rows["mean"][column]) == pytest.approx(durations.mean(), rel=1e-12)
        assert float(rows["median"][column]) == pytest.approx(numpy.median(durations), rel=1e-12)
        assert float(rows["p5"][column]) == pytest.approx(numpy.percentile(durations, 5), rel=1e-12)
        assert float(rows["p95"][column]) == pytest.approx(numpy.percentile(durations, 95), rel=1e-12)
        with analysis.open_run(runs[name]) as run:
            (expected,) = analysis.step_statistics(run).to_dicts()
        assert (float(rows["mean"][column]), float(rows["median"][column])) == pytest.approx(
            (expected["avg_ns"], expected["median_ns"]), rel=1e-12)
    step = rows[sorted(rows)[0]]
    assert int(step["new_diff_ns"]) == int(step["new_duration_ns"]) - int(step["base_duration_ns"])
    assert float(step["new_ratio"]) == pytest.approx(int(step["new_duration_ns"]) / int(step["base_duration_ns"]))


def operator_ranges(path: str) -> List[tuple]:
    return query(path, """SELECT a.id, s.value, a.endNs - a.startNs, a.typeParentId FROM PYTORCH_API a
                          JOIN StringIds s ON s.id = a.name JOIN ENUM_API_TYPE t ON t.id = a.type
                          WHERE t.name = 'op'""")


def test_operator_counts_totals_and_self_times_are_sums_of_pytorch_api(runs):
    rows = {row["name"]: row for row in csv_sections(invoke(runs["base"], runs["new"], "--csv", "--top", "1000")
                                                     .stdout)["operators"]}
    for name in ("base", "new"):
        ranges = operator_ranges(database(runs[name]))
        name_of = {range_id: op for range_id, op, _, _ in ranges}
        counts, totals, nested = collections.Counter(), collections.Counter(), collections.Counter()
        for _, op, duration, parent in ranges:
            counts[op] += 1
            totals[op] += duration
            if parent is not None:
                nested[name_of[parent]] += duration
        assert set(rows) == set(totals)
        for op in totals:
            assert (int(rows[op][f"{name}_count"]), int(rows[op][f"{name}_total_ns"])) == (counts[op], totals[op])
            assert int(rows[op][f"{name}_self_ns"]) == totals[op] - nested[op]
        # aten::linear: its own time is its total minus that of the operators it called directly.
        linear_ids = {range_id for range_id, op, _, _ in ranges if op == "aten::linear"}
        called = sum(duration for _, _, duration, parent in ranges if parent in linear_ids)
        assert called > 0
        assert int(rows["aten::linear"][f"{name}_self_ns"]) == totals["aten::linear"] - called
    linear = rows["aten::linear"]
    assert int(linear["new_diff_ns"]) == int(linear["new_total_ns"]) - int(linear["base_total_ns"])


def test_memory_peaks_per_category_and_no_gpu_work(runs):
    comparison = compare_runs(runs["base"], [runs["new"]])
    assert comparison.section("kernels").note == "no GPU work"
    memory = comparison.section("memory")
    assert memory.note is None
    peaks = {(device, category): peak for device, category, peak, _ in query(
        database(runs["new"]), open(os.path.join(os.path.dirname(perfprof.__file__), "analysis", "sql",
                                                 "memory_peaks.sql")).read())}
    shown = {(row["device"], row["category"]): row["new_peak_bytes"] for row in memory.table}
    assert shown == peaks and peaks[("CPU", "TOTAL")] > 0


def test_three_runs_get_a_set_of_columns_each(runs):
    result = invoke(runs["base"], runs["new"], runs["other"], "--csv", "--fail-if-slower", "5%")
    sections = csv_sections(result.stdout)
    assert [row["label"] for row in sections["runs"]] == ["base", "new1", "new2"]
    columns = list(sections["operators"][0])
    assert columns == ["name", "base_count", "base_total_ns", "base_self_ns",
                       "new1_count", "new1_total_ns", "new1_self_ns", "new1_diff_ns", "new1_ratio",
                       "new2_count", "new2_total_ns", "new2_self_ns", "new2_diff_ns", "new2_ratio"]
    assert sections["operators"][0]["name"] == SLOW_OP
    assert result.exit_code == 1 and "new1 (" in result.stderr


def test_rows_of_one_run_only_rank_by_their_time_with_the_other_side_empty():
    base = {("a",): (1, 100, 100), ("gone",): (1, 500, 500), ("same",): (1, 50, 50)}
    new = {("a",): (1, 130, 130), ("added",): (1, 70, 70), ("same",): (1, 50, 50)}
    table = _section(OPERATORS, ["base", "new"], [base, new], top=10).table
    assert [row["name"] for row in table] == ["added", "a", "same", "gone"]
    rows = {row["name"]: row for row in table}
    assert rows["added"]["base_total_ns"] is None and rows["added"]["new_diff_ns"] is None
    assert rows["gone"]["new_total_ns"] is None and rows["gone"]["new_ratio"] is None
    assert (rows["a"]["new_diff_ns"], rows["a"]["new_ratio"]) == (30, 1.3)
    assert len(_section(OPERATORS, ["base", "new"], [base, new], top=2).table) == 2


def test_a_sweep_entry_names_its_run(runs, tmp_path):
    config = {"sleep_ms": str(SLEEP_MS)}
    records = [RunRecord("train.py", config, "2026-11-23T10:00:00Z", 0, "FAIL", error="boom"),
               RunRecord("train.py", config, "2026-11-23T10:00:00Z", 1, PASS, run_dir=runs["new"]),
               RunRecord("train.py", config, "2026-11-23T10:00:00Z", 2, PASS,
                         run_dir=os.path.relpath(runs["other"], tmp_path))]
    results = tmp_path / "results.jsonl"
    results.write_text("".join(record.to_json() + "\n" for record in records))
    fingerprint = records[0].fingerprint
    assert resolve_run(f"{results}:{fingerprint}") == runs["new"]  # the first passing repeat
    assert resolve_run(f"{results}:{fingerprint[:6]}") == runs["new"]
    assert os.path.samefile(resolve_run(f"{results}:{fingerprint}:2"), runs["other"])  # relative to results
    with pytest.raises(CompareError, match="recorded no run directory"):
        resolve_run(f"{results}:{fingerprint}:0")
    with pytest.raises(CompareError, match="no configuration with fingerprint ffff"):
        resolve_run(f"{results}:ffff")
    gone = RunRecord("train.py", {}, "2026-11-23T10:00:00Z", 0, PASS, run_dir=str(tmp_path / "deleted_run"))
    with results.open("a") as file:
        file.write(gone.to_json() + "\n")
    with pytest.raises(CompareError, match="its run directory .*deleted_run does not exist"):
        resolve_run(f"{results}:{gone.fingerprint}")

    result = invoke(runs["base"], f"{results}:{fingerprint}", "--csv")
    assert result.exit_code == 0, result.output
    sections = csv_sections(result.stdout)
    assert sections["runs"][1]["database"] == database(runs["new"])
    assert sections["operators"][0]["name"] == SLOW_OP


def test_csv_and_markdown_parse(runs):
    sections = csv_sections(invoke(runs["base"], runs["new"], "--csv").stdout)
    assert list(sections) == ["runs", "steps", "operators", "kernels", "memory"]
    assert sections["kernels"] == []  # the header alone: no GPU work
    assert len(sections["operators"]) == 10  # --top's default
    markdown = invoke(runs["base"], runs["new"], "--markdown").stdout
    for heading in ("# perfprof compare", "## Steps:", "## Operators:", "## Kernels:", "## Memory:"):
        assert f"\n{heading}" in "\n" + markdown, heading
    assert "_no GPU work_" in markdown
    table = [line for line in markdown[markdown.index("## Operators"):].splitlines() if line.startswith("|")]
    assert table[0].startswith("| name | base count | base total (")
    assert table[2].startswith(f"| {SLOW_OP} |")


def test_errors_name_the_run_and_bad_options_are_usage_errors(runs, tmp_path):
    # A path that does not exist is the command line's mistake (docs/cli.md): exit 2, not 1.
    missing = str(tmp_path / "no_such_run")
    result = invoke(runs["base"], missing)
    assert result.exit_code == 2 and missing in result.stderr

    stepless = tmp_path / "stepless.db"
    shutil.copy(database(runs["base"]), stepless)
    with sqlite3.connect(stepless) as connection:
        connection.execute("DELETE FROM STEP_TIME")
    connection.close()
    result = invoke(str(stepless), runs["new"])
    assert result.exit_code == 1 and "no steps" in result.stderr and str(stepless) in result.stderr

    garbage = tmp_path / "garbage.db"
    garbage.write_text("not SQLite")
    result = invoke(runs["base"], str(garbage))
    assert result.exit_code == 1 and f"{garbage}: not a readable perfprof database" in result.stderr

    for bad in ("fast", "-5", "5%%"):
        result = invoke(runs["base"], runs["new"], "--fail-if-slower", bad)
        assert result.exit_code == 2 and "--fail-if-slower" in result.stderr, bad
    assert invoke(runs["base"], runs["new"], "--csv", "--markdown").exit_code == 2
    assert invoke(runs["base"]).exit_code == 2  # no NEW run


def test_the_command_in_a_process_of_its_own(runs):
    wrapper = ("import sys; from perfprof.cli import main; from perfprof.cli.compare import compare; "
               "main.add_command(compare); main(prog_name='perfprof')")
    result = subprocess.run([sys.executable, "-c", wrapper, "compare", runs["base"], runs["new"], "--markdown",
                             "--fail-if-slower", "5%"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "## Operators:" in result.stdout and "slower than 5%" in result.stderr
