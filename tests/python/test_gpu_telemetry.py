"""GPU telemetry through NVML (gpu_telemetry, sys_io, sys_interconnection), against the NVML test
double (tests/nvml_double) in child processes: values reach the trace's counter tracks and the
database's GPU tables; a missing or failing libnvidia-ml costs one line and nothing else."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, List

import pytest

from child_process import child_env, perfprof_lines, trace_events
from database_checks import query
from fake_nvml import NVML_ERROR_DRIVER_NOT_LOADED, NVML_ERROR_UNKNOWN, PRELUDE, library_path

GIB = 1 << 30

PROFILE = """
import json, sys, time
import perfprof
from perfprof import ExperimentalConfig, ExportType, ProfilerActivity, profile

def run(config, while_recording=lambda: time.sleep(0.3)):
    config.export_type = [ExportType.Text, ExportType.Db]
    with profile(activities=[ProfilerActivity.CPU], experimental_config=config,
                 on_trace_ready=perfprof.tensorboard_trace_handler(sys.argv[1])):
        while_recording()
    print("finished")
"""


def run_child(script: str, tmp_path: Path, library: str = "") -> Dict[str, Any]:
    """Runs PROFILE + `script` with perfprof's libnvidia-ml at `library`, by default the double
    (then with PRELUDE: `fake` drives it)."""
    env = dict(child_env(), PERFPROF_NVML_LIBRARY=library or library_path())
    code = ("" if library else PRELUDE) + PROFILE + textwrap.dedent(script)
    result = subprocess.run([sys.executable, "-c", code, str(tmp_path / "runs")], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0 and "finished" in result.stdout, result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    (database,) = (run_dir / "PERFPROF_OUTPUT").glob("*.db")
    return {"events": trace_events(run_dir), "db": str(database), "lines": perfprof_lines(result.stderr)}


def counters(events: List[Dict[str, Any]], name: str) -> List[Dict[str, float]]:
    return [e["args"] for e in events if e.get("ph") == "C" and e["name"] == name]


def test_each_gpus_values_are_counter_tracks_and_table_rows(tmp_path):
    run = run_child("""
        fake.fake_nvml_set_device_count(2)
        fake.fake_nvml_set_device(0, 87, 45, 12 << 30, 312_500, 1980, 64, 0, 0)
        fake.fake_nvml_set_device(1, 3, 1, 512 << 20, 71_000, 345, 38, 0, 0)
        run(ExperimentalConfig(gpu_telemetry=True))
    """, tmp_path)
    assert run["lines"] == []
    power = counters(run["events"], "GPU Power (W)")
    assert len(power) >= 10 and all(args == {"GPU 0": 312.5, "GPU 1": 71.0} for args in power)
    assert all(args == {"GPU 0": 12 * GIB, "GPU 1": 512 << 20}
               for args in counters(run["events"], "GPU Memory Used (bytes)"))
    rows = set(query(run["db"], "SELECT gpu, utilization, memoryUtilization, memoryUsedBytes, powerWatts, smClockMHz, "
                                "temperatureC FROM GPU_TELEMETRY"))
    assert rows == {("GPU 0", 87, 45, 12 * GIB, 312.5, 1980, 64), ("GPU 1", 3, 1, 512 << 20, 71, 345, 38)}
    samples = query(run["db"], "SELECT count(*) FROM GPU_TELEMETRY WHERE gpu = 'GPU 0'")[0][0]
    assert samples == len(power)
    from perfprof.analysis import open_run, telemetry_statistics
    with open_run(Path(run["db"]).parent.parent) as opened:
        statistics = {(row["counter"], row["instance"]): row for row in telemetry_statistics(opened)}
    assert statistics[("GPU Power (W)", "GPU 1")] == {"counter": "GPU Power (W)", "instance": "GPU 1",
                                                      "samples": samples, "mean": 71, "minimum": 71, "maximum": 71}
    # gpu_telemetry alone samples neither PCIe nor NVLink.
    assert query(run["db"], "SELECT count(*) FROM GPU_PCIE") == [(0,)]
    assert query(run["db"], "SELECT count(*) FROM GPU_NVLINK") == [(0,)]


def test_interconnect_rates_add_up_to_the_traffic(tmp_path):
    run = run_child("""
        fake.fake_nvml_set_device(0, 50, 50, 1 << 30, 200_000, 1500, 50, 0, 0)
        fake.fake_nvml_set_link_active(0, 0, 1)
        fake.fake_nvml_set_link_active(0, 1, 0)
        fake.fake_nvml_set_link_active(0, 3, 1)
        fake.fake_nvml_add_pcie_traffic(0, 0, 0)

        def traffic():
            time.sleep(0.1)  # quiet samples first: the first rate's interval is not in the tables
            for _ in range(10):  # 10 x (4 MiB over PCIe, 8 MiB over NVLink 3) in 0.5 s
                fake.fake_nvml_add_pcie_traffic(0, 4 << 20, 1 << 20)
                fake.fake_nvml_add_link_traffic(0, 3, 8 << 10, 2 << 10)
                time.sleep(0.05)
            time.sleep(0.1)

        run(ExperimentalConfig(sys_interconnection=True), traffic)
    """, tmp_path)
    assert run["lines"] == []

    def moved(table: str, instance_column: str, instance: str, column: str) -> float:
        rows = query(run["db"], f"SELECT timestamp, {column} FROM {table} WHERE {instance_column} = ? "
                                "ORDER BY timestamp", instance)
        return sum(rate * (ts - previous) / 1e9 for (previous, _), (ts, rate) in zip(rows, rows[1:]))

    # Rates are over each interval since the previous sample: integrated, they give back the bytes.
    assert moved("GPU_PCIE", "gpu", "GPU 0", "receiveBytesPerSec") == pytest.approx(40 << 20, rel=1e-6)
    assert moved("GPU_PCIE", "gpu", "GPU 0", "transmitBytesPerSec") == pytest.approx(10 << 20, rel=1e-6)
    assert moved("GPU_NVLINK", "link", "GPU 0 NVLink 3", "receiveBytesPerSec") == pytest.approx(80 << 20, rel=1e-6)
    assert moved("GPU_NVLINK", "link", "GPU 0 NVLink 3", "transmitBytesPerSec") == pytest.approx(20 << 20, rel=1e-6)
    links = {link for link, in query(run["db"], "SELECT DISTINCT link FROM GPU_NVLINK")}
    assert links == {"GPU 0 NVLink 0", "GPU 0 NVLink 3"}  # the inactive link 1 is not sampled
    assert counters(run["events"], "NVLink Receive (bytes/s)")


def test_a_missing_library_costs_one_line_and_the_host_is_still_sampled(tmp_path):
    missing = str(tmp_path / "nowhere" / "libnvidia-ml.so.1")
    run = run_child("""
        run(ExperimentalConfig(gpu_telemetry=True, host_sys=["mem"]))
    """, tmp_path, library=missing)
    assert len(run["lines"]) == 1
    assert run["lines"][0].startswith(f"perfprof: GPU telemetry is not sampled: {missing} not found")
    assert counters(run["events"], "Process RSS (bytes)")
    assert query(run["db"], "SELECT count(*) FROM GPU_TELEMETRY") == [(0,)]


def test_nvml_that_cannot_initialise_gives_its_own_reason(tmp_path):
    run = run_child(f"""
        fake.fake_nvml_fail(b"nvmlInit_v2", {NVML_ERROR_DRIVER_NOT_LOADED})
        run(ExperimentalConfig(gpu_telemetry=True))
    """, tmp_path)
    assert run["lines"] == ["perfprof: GPU telemetry is not sampled: nvmlInit failed: Driver Not Loaded (9)"]


def test_a_query_failing_mid_run_is_reported_once_and_the_rest_is_sampled(tmp_path):
    run = run_child(f"""
        fake.fake_nvml_set_device(0, 10, 20, 1 << 30, 100_000, 1000, 40, 0, 0)

        def then_fail():
            time.sleep(0.2)
            fake.fake_nvml_fail(b"nvmlDeviceGetPowerUsage", {NVML_ERROR_UNKNOWN})
            time.sleep(0.2)

        run(ExperimentalConfig(gpu_telemetry=True), then_fail)
    """, tmp_path)
    assert run["lines"] == ["perfprof: telemetry: NVML: nvmlDeviceGetPowerUsage on GPU 0: Unknown Error (999); "
                            "its other counters were sampled"]
    power = query(run["db"], "SELECT count(powerWatts), count(temperatureC) FROM GPU_TELEMETRY")[0]
    assert 0 < power[0] < power[1]  # power until it failed, temperature throughout


STATUS = """
import json, perfprof
print(json.dumps(perfprof.nvml_status()))
"""


def nvml_status(library: str) -> Dict[str, Any]:
    result = subprocess.run([sys.executable, "-c", STATUS], env=dict(child_env(), PERFPROF_NVML_LIBRARY=library),
                            capture_output=True, text=True, timeout=60, check=True)
    return json.loads(result.stdout)


def test_nvml_status_says_whether_gpus_can_be_sampled(tmp_path):
    assert nvml_status(library_path()) == {"available": True, "library": library_path(), "devices": 1, "reason": ""}
    missing = str(tmp_path / "libnvidia-ml.so.1")
    status = nvml_status(missing)
    assert status["available"] is False and status["devices"] == 0 and status["library"] == missing
    assert status["reason"].startswith(f"{missing} not found: ")


def test_samples_a_slow_driver_skips_are_counted_and_reported(tmp_path):
    # Each NVML query takes 5 ms: a round of 6 queries (30 ms) overruns the 10 ms interval.
    run = run_child("""
        fake.fake_nvml_set_query_delay_us(5000)
        run(ExperimentalConfig(gpu_telemetry=True, sample_interval_ms=10), lambda: time.sleep(0.5))
    """, tmp_path)
    (line,) = run["lines"]
    match = re.fullmatch(r"perfprof: telemetry: (\d+) of (\d+) samples were skipped because reading the counters "
                         r"took longer than sample_interval_ms \(10 ms\); the rates span the longer intervals\. "
                         r"A larger sample_interval_ms samples evenly", line)
    assert match, line
    skipped, slots = int(match.group(1)), int(match.group(2))
    assert 0.5 <= skipped / slots < 1
    taken = len(counters(run["events"], "GPU Power (W)"))
    assert 0 < taken <= slots - skipped  # warm-up samples are not in the trace
