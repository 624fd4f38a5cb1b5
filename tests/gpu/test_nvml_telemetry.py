"""GPU telemetry through the real libnvidia-ml (the NVML double covers the plumbing in
tests/python/test_gpu_telemetry.py): what a GPU session must see of gpu_telemetry and
sys_interconnection on hardware."""
import os
import sqlite3
import time

import pytest

import perfprof
from perfprof import ExperimentalConfig, ExportType, ProfilerActivity

torch = pytest.importorskip("torch")


def profile_matmuls(tmp_path, config: ExperimentalConfig, seconds: float = 1.5) -> str:
    """Profiles `seconds` of idling, then of large matmuls holding 1 GiB more; returns the database."""
    config.export_type = [ExportType.Text, ExportType.Db]
    handler = perfprof.tensorboard_trace_handler(str(tmp_path))
    with perfprof.profile(activities=[ProfilerActivity.CPU], experimental_config=config, on_trace_ready=handler):
        time.sleep(seconds / 2)
        held = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
        a = torch.randn(8192, 8192, device="cuda")
        end = time.monotonic() + seconds / 2
        while time.monotonic() < end:
            a = (a @ a).clamp_(-1, 1)
            torch.cuda.synchronize()
        del held
    (database,) = tmp_path.glob("*/PERFPROF_OUTPUT/*.db")
    return str(database)


def test_nvml_is_available_on_a_gpu_machine():
    status = perfprof.nvml_status()
    assert status["available"], status["reason"]
    assert status["devices"] >= torch.cuda.device_count()


def test_utilization_and_memory_follow_the_work(tmp_path):
    database = profile_matmuls(tmp_path, ExperimentalConfig(gpu_telemetry=True))
    gpu = f"GPU {torch.cuda.current_device()}"  # NVML's index; equal to CUDA's with one visible GPU
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT timestamp, utilization, memoryUsedBytes, powerWatts, smClockMHz, "
                                  "temperatureC FROM GPU_TELEMETRY WHERE gpu = ? ORDER BY timestamp",
                                  (gpu,)).fetchall()
    assert len(rows) >= 50
    half = len(rows) // 2
    idle, busy = rows[: half // 2], rows[half + half // 4:]
    assert max(r[1] for r in busy) >= 90 > min(r[1] for r in idle)
    assert min(r[2] for r in busy) - min(r[2] for r in idle) >= (1 << 30)
    assert all(r[3] is None or 10 < r[3] < 1500 for r in rows)  # watts
    assert all(r[4] is None or 100 < r[4] < 3000 for r in rows)  # MHz
    assert all(r[5] is None or 10 < r[5] < 110 for r in rows)  # C


def test_interconnect_counters_are_sampled(tmp_path):
    database = profile_matmuls(tmp_path, ExperimentalConfig(sys_interconnection=True), seconds=1.0)
    with sqlite3.connect(database) as connection:
        pcie = connection.execute("SELECT count(*), max(receiveBytesPerSec) FROM GPU_PCIE").fetchone()
        nvlink = connection.execute("SELECT count(*), min(min(receiveBytesPerSec), min(transmitBytesPerSec)) "
                                    "FROM GPU_NVLINK").fetchone()
    assert pcie[0] > 0 and pcie[1] >= 0
    # An H100 SXM has 18 NVLinks (rates of each active one); a PCIe card has none: no rows.
    assert nvlink[0] == 0 or nvlink[1] >= 0


def test_the_gpu_telemetry_plot_is_drawn(tmp_path):
    from perfprof.plots import plot

    database = profile_matmuls(tmp_path, ExperimentalConfig(gpu_telemetry=True), seconds=1.0)
    run_dir = os.path.dirname(os.path.dirname(database))  # <run>/PERFPROF_OUTPUT/perfprof.db
    result = plot([run_dir])
    assert result.ok, open(result.log_file).read()
    assert os.path.join(run_dir, "plots", "gpu_telemetry.png") in result.written
