"""Per-kernel GPU metrics (ExperimentalConfig.gpu_metrics, l2_cache) through the real collection
path, driven by the CUPTI test double: measured in the kept window only, on the kernels of the
stepping thread's CUDA context, and written to the trace, the database and kernel_details.csv."""
import csv
import sqlite3
from pathlib import Path

from fake_cupti import run
from perfprof import analysis

METRICS = """
fake.fake_cupti_set_device_chip.argtypes = [u32, ctypes.c_char_p]
fake.fake_cupti_add_chip_metric.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
fake.fake_cupti_set_kernel_metric.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double]
fake.fake_cupti_set_current_context.argtypes = [u32, u32]
fake.fake_cupti_set_device_chip(0, b"GH100")
for base in ["dram__bytes_read", "dram__bytes_write", "dram__throughput", "lts__t_sector_hit_rate"]:
    fake.fake_cupti_add_chip_metric(b"GH100", 0, base.encode())
fake.fake_cupti_set_current_context(1, 0)  # kernel() launches on context 1 of device 0

def measures(kernel_name, **values):
    for metric, value in values.items():
        fake.fake_cupti_set_kernel_metric(kernel_name.encode(), metric.encode(), value)

measures("gemm_kernel", **{"dram__bytes_read.sum": 4096, "dram__bytes_write.sum": 1024,
                            "dram__throughput.avg.pct_of_peak_sustained_elapsed": 12.5,
                            "lts__t_sector_hit_rate.pct": 75})
measures("relu_kernel", **{"dram__bytes_read.sum": 512, "dram__bytes_write.sum": 512,
                            "lts__t_sector_hit_rate.pct": 20})
"""

GEMM = {"DRAM Read (bytes)": 4096, "DRAM Write (bytes)": 1024, "DRAM Throughput (%)": 12.5, "L2 Hit Rate (%)": 75}
RELU = {"DRAM Read (bytes)": 512, "DRAM Write (bytes)": 512, "DRAM Throughput (%)": 0, "L2 Hit Rate (%)": 20}


def test_kernels_of_the_window_carry_their_metrics_in_trace_database_and_csv(tmp_path):
    result = run(METRICS + """
import perfprof
from perfprof import ExperimentalConfig, ExportType, ProfilerActivity
config = ExperimentalConfig(gpu_metrics="Memory", l2_cache=True, export_type=[ExportType.Text, ExportType.Db])
with perfprof.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], experimental_config=config,
                      schedule=perfprof.schedule(wait=0, warmup=1, active=1, repeat=1),
                      on_trace_ready=perfprof.tensorboard_trace_handler(
                          os.path.join(os.environ["TMP"], "runs"))) as prof:
    kernel("gemm_kernel")  # warm-up: not measured, not kept
    prof.step()
    correlations = [kernel("gemm_kernel"), kernel("relu_kernel"), kernel("gemm_kernel", stream=9)]
    prof.step()
print(json.dumps(dict(correlations=correlations, activities=prof.trace.gpu_activities())))
""", tmp_path)
    metrics = {a["correlation"]: a["metrics"] for a in result["activities"] if a["kind"] == "kernel"}
    gemm, relu, gemm_9 = result["correlations"]
    assert metrics == {gemm: GEMM, relu: RELU, gemm_9: GEMM}  # the warm-up kernel is not in the trace

    (run_dir,) = (tmp_path / "runs").iterdir()
    output = run_dir / "PERFPROF_OUTPUT"
    (trace,) = output.glob("*.json")
    kernels = {e["args"]["correlation"]: e["args"] for e in __import__("json").load(open(trace))["traceEvents"]
               if e.get("cat") == "kernel"}
    for correlation, expected in ((gemm, GEMM), (relu, RELU)):
        assert {key: kernels[correlation][key] for key in expected} == expected

    (database,) = output.glob("*.db")
    with sqlite3.connect(database) as db:
        rows = db.execute("SELECT m.correlationId, s.value, m.value FROM GPU_KERNEL_METRICS m "
                          "JOIN StringIds s ON s.id = m.metricNameId ORDER BY m.correlationId, s.value").fetchall()
    assert rows == sorted((c, name, value) for c, values in ((gemm, GEMM), (relu, RELU), (gemm_9, GEMM))
                          for name, value in values.items())

    with analysis.open_run(str(run_dir)) as opened:
        summary = analysis.kernel_metrics(opened).rows
    # gemm_kernel first: two measured kernels, the most device time; metrics in measured order.
    expected = ([["gemm_kernel", name, 2, value, value, value] for name, value in GEMM.items()]
                + [["relu_kernel", name, 1, value, value, value] for name, value in RELU.items()])
    assert [list(row) for row in summary] == expected

    (details,) = Path(run_dir).rglob("kernel_details.csv")
    table = list(csv.DictReader(open(details)))
    assert [row["DRAM Read (bytes)"] for row in table if row["Name"] == "relu_kernel"] == ["512"]
    assert list(table[0])[-4:] == list(GEMM)


def test_without_a_cuda_context_the_run_goes_on_and_says_why_once(tmp_path):
    result = run(METRICS + """
fake.fake_cupti_set_current_context(0, 0)
import perfprof
from perfprof import ExperimentalConfig, ProfilerActivity
config = ExperimentalConfig(gpu_metrics="Memory")
for _ in range(2):
    with perfprof.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                          experimental_config=config) as prof:
        kernel("gemm_kernel")
print(json.dumps(dict(activities=prof.trace.gpu_activities())))
""", tmp_path)
    (gemm,) = [a for a in result["activities"] if a["kind"] == "kernel"]
    assert gemm["metrics"] == {}
    assert result["_stderr"].count("per-kernel GPU metrics are not measured: no CUDA context is current") == 1


def test_a_group_the_chip_lacks_is_refused_by_name_and_activity_is_still_collected(tmp_path):
    result = run(METRICS + """
import perfprof
from perfprof import ExperimentalConfig, ProfilerActivity
config = ExperimentalConfig(gpu_metrics="Occupancy")
with perfprof.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], experimental_config=config) as prof:
    kernel("gemm_kernel")
print(json.dumps(dict(activities=prof.trace.gpu_activities())))
""", tmp_path)
    assert [a["name"] for a in result["activities"] if a["kind"] == "kernel"] == ["gemm_kernel"]
    assert "sm__warps_active" in result["_stderr"]


def test_supported_gpu_metrics_lists_what_the_chip_measures(tmp_path):
    result = run(METRICS + """
import perfprof
print(json.dumps(dict(groups=[g.value for g in perfprof.supported_gpu_metrics()])))
""", tmp_path)
    # The chip has DRAM and the L2 hit rate only: of the groups, Memory alone.
    assert result["groups"] == ["GpuMetricsNone", "Memory"]
