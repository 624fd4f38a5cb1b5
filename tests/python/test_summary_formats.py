"""How analysis tables are shown: raw values in CSV and JSON, scaled units in text and Markdown."""
from __future__ import annotations

import csv
import io
import json

from perfprof.analysis import Table
from perfprof.analysis._formats import display_columns, is_timestamp, rich_table, to_csv, to_json, to_markdown

KERNELS = Table.of("top_kernels", "Top kernels", ["name", "count", "total_ns", "pct"],
                   [("gemm|fused", 3, 4_500_000, 75.0), ("relu", 2, 1_500_000, 25.0)])
MEMORY = Table.of("memory_peaks", "Memory peaks", ["category", "peak_bytes", "peak_time_ns"],
                  [("PARAMETER", 3 << 20, 1_000_002_500_000), ("TOTAL", 5 << 20, 1_000_003_000_000)])
EMPTY = Table.of("queue_length", "Queue length", ["deviceId", "max_queue_length"], [])


def test_csv_keeps_raw_values_and_a_single_table_is_a_plain_csv_file():
    assert list(csv.reader(io.StringIO(to_csv([KERNELS])))) == [
        ["name", "count", "total_ns", "pct"], ["gemm|fused", "3", "4500000", "75.0"], ["relu", "2", "1500000", "25.0"]]
    blocks = to_csv([KERNELS, EMPTY]).split("\n\n")
    assert blocks[0].splitlines()[0] == "# top_kernels: Top kernels"
    assert blocks[1].splitlines() == ["# queue_length: Queue length", "deviceId,max_queue_length"]


def test_json_has_every_table_with_raw_rows():
    document = json.loads(to_json([KERNELS, EMPTY], {"run": "r"}))
    assert document["run"] == "r"
    assert document["analyses"]["top_kernels"] == {
        "title": "Top kernels", "columns": ["name", "count", "total_ns", "pct"],
        "rows": [["gemm|fused", 3, 4500000, 75.0], ["relu", 2, 1500000, 25.0]]}
    assert document["analyses"]["queue_length"]["rows"] == []


def test_units_are_scaled_from_the_largest_value_and_named_in_the_header():
    name, count, total, pct = display_columns(KERNELS)
    assert (name.header, count.header, total.header, pct.header) == ("name", "count", "total (ms)", "pct (%)")
    assert display_columns(MEMORY)[2].header == "peak time (ns since the Unix epoch)"
    assert [total.render(v) for v in KERNELS.column("total_ns")] == ["4.500", "1.500"]
    assert pct.render(75.0) == "75.0" and count.render(3) == "3" and total.numeric and not name.numeric


def test_timestamps_are_shown_from_the_run_start_and_bytes_in_binary_units():
    category, peak, when = display_columns(MEMORY, origin_ns=1_000_000_000_000)
    assert peak.header == "peak (MiB)" and [peak.render(v) for v in MEMORY.column("peak_bytes")] == ["3.000", "5.000"]
    assert when.header == "peak time (ms from start)" and when.render(1_000_002_500_000) == "2.500"
    assert is_timestamp("bin_start_ns") and is_timestamp("timestamp_ns") and not is_timestamp("total_ns")


def test_markdown_escapes_pipes_aligns_numbers_and_says_when_a_table_is_empty():
    text = to_markdown([KERNELS, EMPTY])
    assert "## Top kernels\n\n| name | count | total (ms) | pct (%) |\n| --- | ---: | ---: | ---: |\n" in text
    assert "| gemm\\|fused | 3 | 4.500 | 75.0 |" in text
    assert "## Queue length\n\n_no data in this run_" in text


def test_terminal_table_has_the_scaled_headers_and_cells():
    from rich.console import Console

    console = Console(record=True, width=120)
    console.print(rich_table(KERNELS))
    shown = console.export_text()
    assert "Top kernels" in shown and "total (ms)" in shown and "4.500" in shown and "gemm|fused" in shown


def test_a_runs_report_leaves_out_columns_without_values_and_large_plain_numbers_lose_decimals():
    steps = Table.of("step_time_breakdown", "Step time breakdown", ["step", "duration_ns", "computing_ns", "mean"],
                     [(3, 1_959_000, None, 669_986_816.0), (4, 1_876_000, None, 12.5)])
    report = to_markdown([steps], values_only=True)
    assert "| step | duration (ms) | mean |" in report and "computing" not in report
    assert "| 3 | 1.959 | 669,986,816 |" in report and "| 4 | 1.876 | 12.500 |" in report
    # Compared runs keep every column; an empty one is in its table's time unit like the others.
    assert "computing (ms)" in to_markdown([steps])
    assert to_csv([steps]).splitlines()[0] == "step,duration_ns,computing_ns,mean"  # raw formats too


def test_a_row_never_reads_two_time_units_and_small_values_keep_two_digits():
    steps = Table.of("step_time_breakdown", "Step time breakdown", ["step", "duration_ns", "gc_ns", "other_ns"],
                     [(3, 1_169_628_000, 0, 8_722_000), (4, 714_650_000, 0, 5_532_000)])
    columns = display_columns(steps)
    # Each column alone would read s, ns and ms; the table reads ms: the largest stays below
    # 100,000 and the smallest ("other") keeps its digits (8.722, not 0.009 s).
    assert [column.header for column in columns] == ["step", "duration (ms)", "gc (ms)", "other (ms)"]
    assert [column.render(value) for column, value in zip(columns, steps.rows[0])] == \
        ["3", "1,169.628", "0.000", "8.722"]
    statistics = Table.of("step_statistics", "Step time statistics", ["count", "total_ns", "min_ns", "max_ns"],
                          [(2, 1_884_278_000, 714_650_000, 1_169_628_000)])
    assert [column.header for column in display_columns(statistics)] == ["count", "total (s)", "min (s)", "max (s)"]
    # Values far apart: the largest's unit wins where the smallest in a finer one would pass 100,000.
    operators = Table.of("top_operators", "Top operators", ["name", "total_ns", "min_ns"],
                         [("aten::mm", 709_678_000, 1_200), ("aten::add", 1_000_000, 900)])
    assert [column.header for column in display_columns(operators)][1:] == ["total (ms)", "min (ms)"]


def test_rows_with_their_own_unit_read_in_a_readable_one():
    telemetry = Table.of("telemetry_statistics", "Telemetry",
                         ["counter", "instance", "samples", "mean", "minimum", "maximum"],
                         [("CPU Usage (%)", "all", 10, 41.5, 12.0, 98.0),
                          ("Process RSS (bytes)", "process", 10, 669_986_816.0, 650 << 20, 700 << 20),
                          ("Disk Write (bytes/s)", "sda", 9, 1536.0, 0, 4096)])
    report = to_markdown([telemetry])
    assert "| CPU Usage (%) | all | 10 | 41.500 | 12.000 | 98.000 |" in report
    assert "| Process RSS (MiB) | process | 10 | 638.949 | 650.000 | 700.000 |" in report
    assert "| Disk Write (KiB/s) | sda | 9 | 1.500 | 0.000 | 4.000 |" in report
    assert "bytes" not in report
    info = Table.of("run_info", "Run", ["name", "value"], [("steps", "2"), ("window_duration_ns", "1898237883")])
    assert "| window_duration | 1.898 s |" in to_markdown([info]) and "| steps | 2 |" in to_markdown([info])
    # The machine formats keep the raw values.
    assert "Process RSS (bytes),process,10,669986816.0" in to_csv([telemetry])
    assert "window_duration_ns,1898237883" in to_csv([info])


def test_a_path_is_shortened_for_its_room_keeping_its_own_name(tmp_path, monkeypatch):
    import os

    from perfprof.cli._paths import readable_path, within

    run = tmp_path / "result" / "host_1234_20261123101500123456_perfprof"
    (run / "PERFPROF_OUTPUT").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert readable_path(str(run), 80) == os.path.join("result", run.name)  # below the working directory
    assert readable_path(str(run), 45) == os.path.join("…", run.name)  # leading folders give way first
    assert readable_path(str(run), 10) == os.path.join("…", run.name)  # the run's own name stays whole
    monkeypatch.setenv("HOME", str(tmp_path / "result"))
    monkeypatch.chdir("/")
    assert readable_path(str(run), 80) == os.path.join("~", run.name)
    assert within(str(run / "PERFPROF_OUTPUT" / "perfprof.db"), str(run)) == os.path.join("PERFPROF_OUTPUT",
                                                                                          "perfprof.db")
    assert within(str(tmp_path / "other.db"), str(run)) is None
