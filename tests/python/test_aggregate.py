"""perfprof aggregate: the metrics of hand-made sweep results against values worked out by hand
(docs/experiments.md, "perfprof aggregate")."""
from __future__ import annotations

import csv
import math
from pathlib import Path
from typing import Dict, List, Optional

import pytest
from click.testing import CliRunner

from perfprof.cli.aggregate import aggregate as aggregate_command
from perfprof.experiments._aggregate import METRIC_COLUMNS
from perfprof.experiments._charts import chart_of
from perfprof.experiments import (FAIL, PASS, TIMEOUT, Baseline, RunRecord, SeriesMetrics, aggregate,
                                  parse_baseline, read_results)

T1, T2 = "2026-01-05T10:00:00+00:00", "2026-01-12T10:00:00+00:00"


def run(workload: str, config: Dict[str, str], timestamp: str, steps: List[int], status: str = PASS,
        repeat: int = 0, warmup: int = 0, compile_ns: Optional[float] = None, device: Optional[int] = None,
        host: Optional[int] = None, compile_source: str = "dynamo") -> RunRecord:
    return RunRecord(workload=workload, config=config, timestamp=timestamp, repeat=repeat, status=status,
                     step_times_ns=steps, warmup_steps=warmup, compile_time_ns=compile_ns,
                     compile_source=compile_source if compile_ns is not None else None,
                     peak_device_bytes=device, peak_host_bytes=host)


def write(folder: Path, records: List[RunRecord], name: str = "results.jsonl") -> str:
    path = folder / name
    path.write_text("".join(record.to_json() + "\n" for record in records))
    return str(path)


C1 = {"compile": "1"}


def two_sweeps() -> List[RunRecord]:
    """One series (compile=1), workloads a, b, c at T1 and T2, and d failing at T2.

    a: 100 -> 50 (two repeats at T2, [60, 40] after a warm-up step the run counted as start-up, and
       [50, 50]); device 1000 -> 500
    b: 200 -> 400; device 1000 host 800 at T1, host 200 only at T2 (compared by host bytes)
    c: 300 -> 100; no peaks
    """
    return [
        run("a.py", C1, T1, [100, 100], device=1000),
        run("b.py", C1, T1, [200, 200], device=1000, host=800),
        run("c.py", C1, T1, [300, 300]),
        run("a.py", C1, T2, [60, 40], warmup=1, compile_ns=2e9, device=400),
        run("a.py", C1, T2, [50, 50], repeat=1, device=500),
        run("b.py", C1, T2, [400, 400], compile_ns=4e9, host=200),
        run("c.py", C1, T2, [100, 100]),
        run("d.py", C1, T2, [], status=FAIL),
    ]


def metrics_at(metrics: List[SeriesMetrics], series: str, timestamp: str) -> SeriesMetrics:
    (found,) = [m for m in metrics if m.series == series and m.timestamp == timestamp]
    return found


def percentile(values: List[float], q: float) -> float:
    """Linear interpolation between the closest ranks, as numpy.percentile's default."""
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (rank - low) * (ordered[high] - ordered[low])


# -- the metrics --------------------------------------------------------------------------------

def test_oldest_baseline_metrics():
    result = aggregate(two_sweeps(), parse_baseline("oldest"))
    first, second = metrics_at(result.metrics, "compile=1", T1), metrics_at(result.metrics, "compile=1", T2)

    assert (first.geomean_speedup, first.workloads, first.left_out) == (1.0, 3, 0)
    assert first.pass_rate_text == "100%, 3/3"
    speedups = [100 / 50, 200 / 400, 300 / 100]
    assert second.geomean_speedup == pytest.approx((2 * 0.5 * 3) ** (1 / 3))
    assert second.p5_speedup == pytest.approx(0.5 + 0.1 * 1.5) == pytest.approx(percentile(speedups, 5))
    assert second.p50_speedup == pytest.approx(2.0)
    assert second.p95_speedup == pytest.approx(2 + 0.9 * 1) == pytest.approx(percentile(speedups, 95))
    assert (second.workloads, second.left_out) == (3, 1)                  # d failed
    assert (second.passed, second.total, second.pass_rate_pct) == (4, 5, 80.0)  # records: a ran twice
    assert second.pass_rate_text == "80%, 4/5"
    assert second.mean_compile_time_s == pytest.approx((2 + 4) / 2)
    assert first.mean_compile_time_s is None
    # a: device 1000 / max(400, 500); b: host 800 / 200 (its T2 run has no device peak); c: none
    assert second.compression_ratio == pytest.approx(math.sqrt(2 * 4))


def test_latest_baseline_metrics():
    result = aggregate(two_sweeps(), parse_baseline("latest"))
    first, second = metrics_at(result.metrics, "compile=1", T1), metrics_at(result.metrics, "compile=1", T2)

    speedups = [50 / 100, 400 / 200, 100 / 300]
    assert first.geomean_speedup == pytest.approx((0.5 * 2 / 3) ** (1 / 3))
    assert first.p5_speedup == pytest.approx(percentile(speedups, 5)) == pytest.approx(1 / 3 + 0.1 * (0.5 - 1 / 3))
    assert first.p50_speedup == pytest.approx(0.5)
    assert first.p95_speedup == pytest.approx(0.5 + 0.9 * 1.5)
    assert first.compression_ratio == pytest.approx(math.sqrt((500 / 1000) * (200 / 800)))
    assert (first.pass_rate_text, first.left_out) == ("100%, 3/3", 0)
    assert (second.geomean_speedup, second.p5_speedup, second.p95_speedup) == (1.0, 1.0, 1.0)
    assert (second.compression_ratio, second.left_out, second.pass_rate_text) == (1.0, 1, "80%, 4/5")


def config_sweeps() -> List[RunRecord]:
    """Series compile=0 / compile=1 over workloads bs=8, bs=16 (and bs=32, compile=1 only)."""
    def grid(bs: str, compiled: str) -> Dict[str, str]:
        return {"bs": bs, "compile": compiled}
    return [
        run("train.py", grid("8", "0"), T1, [100, 100], compile_ns=1e9, device=800),
        run("train.py", grid("16", "0"), T1, [200, 200], compile_ns=3e9, device=1600),
        run("train.py", grid("8", "0"), T2, [80, 80], device=800),
        run("train.py", grid("16", "0"), T2, [250, 250], device=1600),
        run("train.py", grid("8", "1"), T1, [50, 50], compile_ns=5e9, device=400),
        run("train.py", grid("16", "1"), T1, [100, 100], compile_ns=7e9, device=400),
        run("train.py", grid("32", "1"), T1, [10, 10]),                     # no compile=0 run: no baseline
        run("train.py", grid("8", "1"), T2, [25, 25], device=1000),
        run("train.py", grid("16", "1"), T2, [], status=TIMEOUT),
    ]


def test_config_baseline_metrics():
    result = aggregate(config_sweeps(), parse_baseline("compile=0"))
    assert result.baseline_series == "compile=0"
    assert result.series == ["compile=0", "compile=1"]
    base_t1, base_t2 = (metrics_at(result.metrics, "compile=0", t) for t in (T1, T2))
    run_t1, run_t2 = (metrics_at(result.metrics, "compile=1", t) for t in (T1, T2))

    assert (base_t1.geomean_speedup, base_t1.compression_ratio, base_t1.pass_rate_text) == (1.0, 1.0, "100%, 2/2")
    assert base_t1.mean_compile_time_s == pytest.approx(2.0)
    assert base_t2.geomean_speedup == pytest.approx(math.sqrt(100 / 80 * 200 / 250))  # = 1
    assert (base_t2.p5_speedup, base_t2.p95_speedup) == (pytest.approx(0.8 + 0.05 * 0.45),
                                                         pytest.approx(0.8 + 0.95 * 0.45))
    assert run_t1.geomean_speedup == pytest.approx(2.0)                    # 100/50, 200/100
    assert (run_t1.workloads, run_t1.left_out, run_t1.pass_rate_text) == (2, 1, "100%, 3/3")
    assert run_t1.mean_compile_time_s == pytest.approx((5 + 7) / 2)
    assert run_t1.compression_ratio == pytest.approx(math.sqrt(800 / 400 * 1600 / 400))
    assert run_t2.geomean_speedup == pytest.approx(4.0)                    # against compile=0 at T1: 100/25
    assert (run_t2.p5_speedup, run_t2.p50_speedup, run_t2.p95_speedup) == (4.0, 4.0, 4.0)
    assert (run_t2.workloads, run_t2.left_out, run_t2.pass_rate_text) == (1, 1, "50%, 1/2")
    assert run_t2.compression_ratio == pytest.approx(0.8)                   # 800 / 1000
    assert run_t2.mean_compile_time_s is None
    workloads = {s.workload for s in result.speedups}
    assert workloads == {"train.py [bs=8]", "train.py [bs=16]"}


def test_error_propagation():
    records = [run("w.py", C1, T1, [90, 110]), run("w.py", C1, T2, [45, 55])]
    (first, second) = aggregate(records, parse_baseline("oldest")).speedups
    m_b, s_b, m_r, s_r = 100.0, math.sqrt(200), 50.0, math.sqrt(50)           # sample standard deviations
    assert (first.speedup, first.speedup_error) == (1.0, 0.0)               # the baseline against itself
    assert second.speedup == pytest.approx(m_b / m_r)
    assert second.speedup_error == pytest.approx(2 * math.sqrt((s_b / m_b) ** 2 + (s_r / m_r) ** 2))
    assert second.speedup_error == pytest.approx(0.4)
    assert (second.baseline_mean_ns, second.mean_ns) == (m_b, m_r)


def test_error_bars_never_go_below_zero():
    # A noisy run: speedup 100/50 = 2 with an error of about 2.8, more than the speedup itself.
    records = [run("w.py", C1, T1, [100, 100]), run("w.py", C1, T2, [1, 99])]
    (line,) = chart_of(aggregate(records, parse_baseline("oldest")), "latest").lines
    (speedup,) = line.y
    below, above = line.error
    assert speedup == pytest.approx(2.0) and above[0] > speedup
    assert below == [speedup]  # the bar reaches 0, not below
    assert all(y - low >= 0 for y, low in zip(line.y, below))


def test_one_sweep_without_a_baseline_says_how_to_pick_one(tmp_path):
    one_sweep = [record for record in config_sweeps() if record.timestamp == T1]
    result = invoke(write(tmp_path, one_sweep))
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "every speedup would be 1.000" in message
    assert "--baseline bs=8" in message and "the grid varies bs, compile" in message
    assert not (tmp_path / "speedups.csv").exists()
    chosen = invoke(write(tmp_path, one_sweep), "--baseline", "compile=0")
    assert chosen.exit_code == 0, chosen.output
    speedups = read_csv(tmp_path / "speedups.csv")
    assert {row["speedup"] for row in speedups} != {"1.0"}
    # Several sweeps keep the default, each configuration's oldest sweep.
    assert aggregate(config_sweeps()).baseline == parse_baseline("oldest")


def test_the_mean_compile_time_says_what_it_is():
    eager = [run("w.py", C1, T1, [100, 100], compile_ns=1e7, compile_source="first_step_excess"),
             run("w.py", C1, T2, [100, 100], compile_ns=3e7, compile_source="first_step_excess")]
    metrics = aggregate(eager, parse_baseline("oldest")).metrics
    assert [(m.mean_compile_time_s, m.compile_time_source) for m in metrics] == [
        (pytest.approx(0.01), "first_step_excess"), (pytest.approx(0.03), "first_step_excess")]
    (column,) = [column for column in METRIC_COLUMNS if column.heading == "mean compile time (s)"]
    assert column.text(metrics[0]) == "0.01 (first_step_excess)"


def test_left_out_workloads():
    records = [
        run("a.py", C1, T1, [100]), run("a.py", C1, T2, [100]),
        run("fails.py", C1, T1, [], status=FAIL), run("fails.py", C1, T2, [100]),  # T1 no sample; T2 its own baseline
        run("new.py", {"compile": "0"}, T2, [100]),
        run("x.py", {"compile": "0"}, T1, [], status=FAIL),
        run("x.py", {"compile": "0"}, T2, [], warmup=3),                     # PASS with no step after warm-up
    ]
    result = aggregate(records, parse_baseline("oldest"))
    assert [(m.series, m.timestamp, m.workloads, m.left_out) for m in result.metrics] == [
        ("compile=0", T1, 0, 1), ("compile=0", T2, 1, 1), ("compile=1", T1, 1, 1), ("compile=1", T2, 2, 0)]
    assert metrics_at(result.metrics, "compile=0", T1).geomean_speedup is None
    configured = aggregate(config_sweeps(), Baseline("config", (("compile", "0"),)))
    assert [m.left_out for m in configured.metrics] == [0, 0, 1, 1]          # bs=32 has no baseline; bs=16 timed out


# -- the command --------------------------------------------------------------------------------

NO_FLAGS = ("--min-pass-rate", "0", "--min-compression", "0")  # config_sweeps' compile=1 is below both defaults


def invoke(*args: str, columns: int = 100):
    return CliRunner().invoke(aggregate_command, list(args), env={"COLUMNS": str(columns), "LINES": "40"})


def read_csv(path: Path) -> List[Dict[str, str]]:
    with open(path, newline="") as file:
        return list(csv.DictReader(file))


def test_csv_files(tmp_path):
    path = write(tmp_path, two_sweeps())
    result = invoke(path, "--min-pass-rate", "0")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [str(tmp_path / "metric_report.csv"), str(tmp_path / "speedups.csv")]
    with open(tmp_path / "metric_report.csv", newline="") as file:
        header = next(csv.reader(file))
    assert header == ["series", "timestamp", "workloads", "left_out", "geomean_speedup", "p5_speedup", "p50_speedup",
                      "p95_speedup", "passed", "total", "pass_rate_pct", "mean_compile_time_s", "compile_time_source",
                      "compression_ratio"]
    first, second = read_csv(tmp_path / "metric_report.csv")
    assert first == {"series": "compile=1", "timestamp": T1, "workloads": "3", "left_out": "0",
                     "geomean_speedup": "1.0", "p5_speedup": "1.0", "p50_speedup": "1.0", "p95_speedup": "1.0",
                     "passed": "3", "total": "3", "pass_rate_pct": "100.0", "mean_compile_time_s": "",
                     "compile_time_source": "", "compression_ratio": "1.0"}
    assert float(second["geomean_speedup"]) == pytest.approx(3 ** (1 / 3))
    assert (second["left_out"], second["passed"], second["total"], second["pass_rate_pct"]) == ("1", "4", "5", "80.0")
    assert float(second["mean_compile_time_s"]) == pytest.approx(3.0)
    assert second["compile_time_source"] == "dynamo"
    speedups = read_csv(tmp_path / "speedups.csv")
    assert list(speedups[0]) == ["series", "workload", "timestamp", "speedup", "speedup_error", "baseline_mean_ns",
                                 "mean_ns"]
    later = {row["workload"]: row for row in speedups if row["timestamp"] == T2}
    assert sorted(later) == ["a.py", "b.py", "c.py"]
    assert [float(later[w]["speedup"]) for w in ("a.py", "b.py", "c.py")] == pytest.approx([2.0, 0.5, 3.0])
    a = later["a.py"]
    pooled_std = math.sqrt((10 ** 2 + 10 ** 2) / 3)                         # [60, 40, 50, 50] around 50
    assert float(a["speedup_error"]) == pytest.approx(2 * pooled_std / 50)
    assert (float(a["baseline_mean_ns"]), float(a["mean_ns"])) == (100.0, 50.0)
    assert len(speedups) == 6


def test_output_dir_option(tmp_path):
    path = write(tmp_path, two_sweeps())
    result = invoke(path, "-o", str(tmp_path / "out"), "--min-pass-rate", "0")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "metric_report.csv").is_file() and (tmp_path / "out" / "speedups.csv").is_file()


@pytest.mark.parametrize("report,title", [("speedup", "Geomean speedup per series"),
                                          ("histogram", "Speedup percentiles p5, p50, p95"),
                                          ("latest", "Speedups at each series' latest sweep")])
def test_ascii_chart(tmp_path, report, title):
    path = write(tmp_path, config_sweeps())
    result = invoke(path, "--baseline", "compile=0", "--report", report, "--format", "ascii", *NO_FLAGS)
    assert result.exit_code == 0, result.output
    chart = result.stdout
    assert title in chart
    assert "compile=0" in chart and "compile=1" in chart                    # the legend
    assert ("workload number" if report == "latest" else "sweep (UTC)") in chart
    assert ("geomean speedup" if report == "speedup" else "speedup") in chart
    if report != "latest":
        assert "2026-01-05" in chart and "2026-01-12" in chart                # the sweeps on the x axis
    assert max(len(line) for line in chart.splitlines()) <= 100
    assert len(chart.splitlines()) >= 15
    assert "\x1b[" not in chart                                               # no colour codes off a terminal
    assert f"wrote {tmp_path / 'metric_report.csv'}" in result.stderr


def test_ascii_chart_follows_the_terminal_width(tmp_path):
    path = write(tmp_path, config_sweeps())
    result = invoke(path, "--baseline", "compile=0", "--format", "ascii", *NO_FLAGS, columns=70)
    assert max(len(line) for line in result.stdout.splitlines()) == 70


def test_table_report(tmp_path):
    path = write(tmp_path, config_sweeps())
    result = invoke(path, "--baseline", "compile=0", "--report", "table", "--format", "ascii", *NO_FLAGS,
                    columns=200)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert any("geomean speedup" in line and "pass rate" in line for line in lines)
    (row,) = [line for line in lines if "compile=1" in line and "2026-01-12" in line]
    assert "4.000" in row and "50%, 1/2" in row
    assert "draws no" not in result.stderr
    assert max(len(line) for line in lines) <= 200
    narrow = invoke(path, "--baseline", "compile=0", "--report", "table", *NO_FLAGS, columns=80).stdout.splitlines()
    assert max(len(line) for line in narrow) <= 80                             # one block of lines per row
    assert sum("│ pass rate " in line for line in narrow) == 4
    assert any("│ 50%, 1/2" in line for line in narrow) and any("│ 2026-01-12 10:00:00" in line for line in narrow)
    drawn = invoke(path, "--baseline", "compile=0", "--report", "table", "--format", "png", *NO_FLAGS)
    assert "--report table draws no png" in drawn.stderr
    assert not list(tmp_path.glob("*.png"))


@pytest.mark.parametrize("report", ["speedup", "histogram", "latest"])
@pytest.mark.parametrize("image_format", ["png", "svg"])
def test_chart_files(tmp_path, report, image_format):
    path = write(tmp_path, config_sweeps() + [run("train.py", {"bs": "8", "compile": "1"}, "2026-01-19T10:00:00+00:00",
                                                  [20, 30])])
    result = invoke(path, "--baseline", "compile=0", "--report", report, "--format", image_format, *NO_FLAGS)
    assert result.exit_code == 0, result.output
    chart = tmp_path / f"{report}.{image_format}"
    assert result.stdout.splitlines()[-1] == str(chart)
    if image_format == "png":
        import matplotlib.image

        assert float(matplotlib.image.imread(str(chart))[..., :3].var()) > 1e-3
    else:
        assert "<svg" in chart.read_text()


# -- thresholds and errors ----------------------------------------------------------------------

def regressed() -> List[RunRecord]:
    """Series compile=1: w 100 -> 110 (speedup 0.909...), device 100 -> 125 (compression 0.8),
    and a failing workload at the latest sweep (pass rate 50%)."""
    return [run("w.py", C1, T1, [100], device=100), run("w.py", C1, T2, [110], device=125),
            run("v.py", C1, T2, [], status=FAIL)]


THRESHOLDS = ("--min-speedup", "0.95", "--min-compression", "0.9", "--min-pass-rate", "90")


def test_thresholds_flag_each_metric(tmp_path):
    result = invoke(write(tmp_path, regressed()), *THRESHOLDS)
    assert result.exit_code == 1
    flags = [line for line in result.stderr.splitlines() if line.startswith("FLAG")]
    assert flags == ["FLAG series=compile=1: geomean speedup 0.91 < 0.95",
                     "FLAG series=compile=1: compression ratio 0.80 < 0.9",
                     "FLAG series=compile=1: pass rate 50%, 1/2 < 90%"]


def test_custom_thresholds_are_honoured(tmp_path):
    path = write(tmp_path, regressed())
    assert invoke(path, "--min-speedup", "0.9", "--min-compression", "0.8", "--min-pass-rate", "50").exit_code == 0
    result = invoke(path, "--min-speedup", "0.92", "--min-compression", "0.8", "--min-pass-rate", "50")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("FLAG")] == [
        "FLAG series=compile=1: geomean speedup 0.91 < 0.92"]


def test_without_thresholds_nothing_is_flagged_and_it_exits_0(tmp_path):
    # A regressed series, but the user asked for no threshold: aggregate reports, and exits 0.
    result = invoke(write(tmp_path, regressed()))
    assert result.exit_code == 0, result.output
    assert "FLAG" not in result.output


def test_no_flag_exits_0(tmp_path):
    result = invoke(write(tmp_path, two_sweeps()[:-1]), *THRESHOLDS)         # without the failing d
    assert result.exit_code == 0, result.output
    assert "FLAG" not in result.output


def test_the_config_baseline_series_is_flagged_for_its_pass_rate_only(tmp_path):
    records = config_sweeps() + [run("train.py", {"bs": "64", "compile": "0"}, T2, [], status=FAIL)]
    result = invoke(write(tmp_path, records), "--baseline", "compile=0", "--min-speedup", "100",
                    "--min-compression", "100", "--min-pass-rate", "90")
    assert result.exit_code == 1
    assert [line for line in result.stderr.splitlines() if line.startswith("FLAG")] == [
        "FLAG series=compile=0: pass rate 66.7%, 2/3 < 90%",
        "FLAG series=compile=1: geomean speedup 4.00 < 100",
        "FLAG series=compile=1: compression ratio 0.80 < 100",
        "FLAG series=compile=1: pass rate 50%, 1/2 < 90%"]


def test_a_line_that_is_not_json_is_named(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text(run("w.py", C1, T1, [100]).to_json() + "\n{not json\n")
    result = invoke(str(path))
    assert result.exit_code == 1
    assert f"{path}:2: not a sweep result" in result.stderr
    with pytest.raises(ValueError, match=":2: not a sweep result"):
        read_results([str(path)])


def test_a_binary_file_is_named_with_its_line(tmp_path):
    """A file that is not text (a sweep's results.jsonl overwritten by something else) gives one
    line naming the file and line, not a bare UnicodeDecodeError."""
    path = tmp_path / "results.jsonl"
    path.write_bytes(run("w.py", C1, T1, [100]).to_json().encode() + b"\n\x89PNG\r\n\x1a\n\xdd\xff\n")
    result = invoke(str(path))
    assert result.exit_code == 1
    assert f"{path}:2: not a sweep result: 'utf-8' codec can't decode" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_line_with_a_huge_value_is_named_in_one_short_line(tmp_path):
    path = tmp_path / "results.jsonl"
    record = run("w.py", C1, T1, [100]).to_json().replace('"PASS"', '"' + "X" * 100_000 + '"')
    path.write_text(record + "\n")
    result = invoke(str(path))
    assert result.exit_code == 1
    (line,) = result.stderr.strip().splitlines()
    assert line.startswith(f"Error: {path}:1: not a sweep result: 'status' must be one of ")
    error = "'status' must be one of PASS, FAIL, TIMEOUT, SKIP, got '" + "X" * 100_000 + "'"
    assert line.endswith(f"… ({len(error):,} characters)") and len(line) < 400 + len(str(path))


def test_a_baseline_among_many_series_names_the_first_few(tmp_path):
    records = [run("w.py", {"bs": str(size)}, T1, [100]) for size in range(100)]
    result = invoke(write(tmp_path, records), "--baseline", "bs=1000")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "the series are: bs=0, bs=1, bs=10, bs=11, bs=12, … and 95 more" in message


def test_no_pass_record_is_an_error(tmp_path):
    result = invoke(write(tmp_path, [run("w.py", C1, T1, [], status=FAIL)]))
    assert result.exit_code == 1
    assert "no PASS record" in result.stderr


def test_unknown_baseline_name_is_a_usage_error(tmp_path):
    result = invoke(write(tmp_path, config_sweeps()), "--baseline", "compiled=0")
    assert result.exit_code == 2
    assert "unknown grid name 'compiled'" in result.stderr and "bs, compile" in result.stderr


def test_baseline_syntax_and_values(tmp_path):
    path = write(tmp_path, config_sweeps())
    assert invoke(path, "--baseline", "compile").exit_code == 2
    result = invoke(path, "--baseline", "compile=2")
    assert result.exit_code == 2 and "no record has compile=2" in result.stderr
    assert parse_baseline("bs=8, compile=0") == Baseline("config", (("bs", "8"), ("compile", "0")))


def test_several_results_files_and_the_main_command(tmp_path):
    from perfprof.cli import main

    main.add_command(aggregate_command)
    first = write(tmp_path, two_sweeps()[:3], "first.jsonl")
    second = write(tmp_path, two_sweeps()[3:], "second.jsonl")
    result = CliRunner().invoke(main, ["aggregate", first, second, "--min-pass-rate", "0"])
    assert result.exit_code == 0, result.output
    rows = read_csv(tmp_path / "metric_report.csv")
    assert [row["timestamp"] for row in rows] == [T1, T2]
    assert float(rows[1]["geomean_speedup"]) == pytest.approx(3 ** (1 / 3))


def test_import_stays_light():
    import subprocess
    import sys

    code = ("import sys, perfprof.experiments, perfprof.cli.aggregate; "
            "print(sorted(m for m in ('numpy', 'matplotlib', 'plotext') if m in sys.modules))")
    output = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert output.strip() == "[]"
