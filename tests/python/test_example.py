"""The quick-start example end to end: run directory, trace structure, HolisticTraceAnalysis."""
import json
import os
import sqlite3
import subprocess
import sys

import pytest

import perfprof
from trace_checks import assert_slices_nest, events, load_trace, names, run_dirs, tensorboard_views, trace_file_of

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train_demo.py")


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    home = tmp_path_factory.mktemp("home")  # auto-plot makes ~/.perfprof/plot_config.yaml
    subprocess.run([sys.executable, EXAMPLE, "--out", str(out)], check=True, timeout=300,
                   env=dict(os.environ, HOME=str(home)))
    (directory,) = run_dirs(str(out))
    return directory


@pytest.fixture(scope="module")
def trace(run_dir):
    return load_trace(trace_file_of(run_dir))


def test_run_directory_layout(run_dir):
    assert sorted(os.listdir(run_dir)) == ["PERFPROF_OUTPUT", "memory_timeline.html", "plots", "profiler_info.json",
                                           "profiler_metadata.json"]
    assert trace_file_of(run_dir).endswith(".pt.trace.json")
    output = sorted(os.listdir(os.path.join(run_dir, "PERFPROF_OUTPUT")))
    # The memory tables, the database, the summary tables of a CPU run with steps, and the trace.
    assert output[:-1] == ["memory_record.csv", "operator_details.csv", "operator_memory.csv", "perfprof.db",
                           "step_trace_time.csv"]
    assert output[-1].endswith(".pt.trace.json")


def test_only_recorded_steps_are_present(trace):
    assert sorted(n for n in names(trace) if n.startswith("ProfilerStep#")) == ["ProfilerStep#3", "ProfilerStep#4"]


def test_every_slice_nests_on_its_thread(trace):
    assert_slices_nest(trace)
    assert not events(trace, "b"), "the example has no cross-thread ranges"


def test_training_phases_nest_inside_their_step(trace):
    slices = events(trace, "X")
    for step in (e for e in slices if e["name"].startswith("ProfilerStep#")):
        inside = {e["name"] for e in slices if e["tid"] == step["tid"] and step["ts"] <= e["ts"]
                  and e["ts"] + e["dur"] <= step["ts"] + step["dur"] and e is not step}
        assert {"forward", "backward", "optimizer", "wait for batch"} <= inside


def test_loader_thread_has_its_own_named_track(trace):
    thread_names = {e["tid"]: e["args"]["name"] for e in events(trace, "M") if e["name"] == "thread_name"}
    assert "data-loader" in thread_names.values()
    loader_tid = next(tid for tid, name in thread_names.items() if name == "data-loader")
    loads = [e for e in events(trace, "X") if e["tid"] == loader_tid]
    assert loads and all(e["name"].startswith("load batch") and e["args"]["domain"] == "data" for e in loads)


def test_host_telemetry_spans_the_recorded_steps(run_dir, trace):
    steps = [e for e in events(trace, "X") if e["name"].startswith("ProfilerStep#")]
    begin = min(e["ts"] for e in steps)
    usage = [e for e in events(trace, "C") if e["name"] == "Process CPU Usage (%)"]
    # Sampled every 20 ms and at the stop (the demo's two steps take a few ms), none from the warm-up.
    assert usage and all(begin <= e["ts"] for e in usage)
    assert all(0 <= e["args"]["process"] <= 100 * (os.cpu_count() or 1) for e in usage)
    database = os.path.join(run_dir, "PERFPROF_OUTPUT", "perfprof.db")
    with sqlite3.connect(database) as connection:
        rows = connection.execute("SELECT count(*), min(processRssBytes) FROM HOST_MEM_USAGE").fetchone()
    assert rows[0] == len([e for e in events(trace, "C") if e["name"] == "Process RSS (bytes)"]) and rows[1] > 0


def test_marks_and_metadata(trace):
    marks = [name for name in names(trace, "i") if name != "[memory]"]
    assert len(marks) == 2 and all(m.startswith("step ") for m in marks)
    assert "[memory]" in names(trace, "i")  # profile_memory=True
    assert trace["model"] == "mlp-256-512-512-10"
    assert trace["hyperparameters"] == {"lr": 0.001, "batch_size": 64}
    assert trace["distributedInfo"]["rank"] == 0
    assert trace["perfprofStats"]["dropped_events"] == 0


def test_run_metadata_files(run_dir):
    with open(os.path.join(run_dir, "profiler_info.json")) as f:
        info = json.load(f)
    assert info["config"]["activities"] == ["CPU"]
    assert info["config"]["experimental_config"]["mstx"] is True
    assert info["config"]["schedule"].startswith("wait=1 warmup=1 active=2")  # by its parameters, not a repr
    assert info["versions"]["perfprof"] == perfprof.__version__
    assert info["versions"]["torch"]
    assert info["window"]["end_unix_ns"] > info["window"]["begin_unix_ns"]
    with open(os.path.join(run_dir, "profiler_metadata.json")) as f:
        metadata = json.load(f)
    assert metadata["metadata"] == {"model": "mlp-256-512-512-10", "hyperparameters": {"lr": 0.001, "batch_size": 64}}
    assert isinstance(metadata["environment_variables"], dict)


def test_holistic_trace_analysis_loads_the_run(run_dir):
    from hta.trace_analysis import TraceAnalysis

    analysis = TraceAnalysis(trace_dir=perfprof.trace_dir_of(run_dir))
    frame = analysis.t.get_trace(0)
    step_names = {analysis.t.symbol_table.sym_table[i] for i in frame["name"].unique()}
    # HTA leaves out the last ProfilerStep of a trace (it does so for torch.profiler traces too).
    assert {"ProfilerStep#3", "forward", "backward", "optimizer"} <= step_names


def test_tensorboard_profiler_plugin_reads_the_run(run_dir):
    result = tensorboard_views(trace_file_of(run_dir))
    assert {"overall", "operator", "trace"} <= set(result["views"])
    assert result["steps"] == ["3", "4"]



def test_the_run_is_plotted_right_after_it_is_written(run_dir):
    from test_plots import NOT_BLANK, pixel_variance

    plots = os.path.join(run_dir, "plots")
    written = sorted(name for name in os.listdir(plots) if name.endswith(".png"))
    assert written == ["host_telemetry.png", "memory_over_time.png", "step_time_breakdown.png", "step_times.png",
                       "top_operators.png"]
    assert all(pixel_variance(os.path.join(plots, name)) > NOT_BLANK for name in written)
    log = open(os.path.join(plots, "perfprof_plot.log")).read()
    assert "skipped top_kernels: no data" in log and "done: 5 written, 4 skipped, 0 failed" in log


def test_summary_of_the_demo_in_a_terminal(run_dir):
    result = subprocess.run([sys.executable, "-m", "perfprof", "summary", run_dir], capture_output=True, text=True,
                            env=dict(os.environ, COLUMNS="200"), timeout=120, check=True)
    out = result.stdout
    for title in ("Run", "Step time statistics", "Step time breakdown", "Top operators", "Annotated ranges",
                  "Memory peaks"):
        assert f"\n{title}" in out, title
    assert "aten::addmm" in out and "load batch" not in out.split("Annotated ranges")[0]
    # A CPU run has no GPU section: one sentence (wrapped at the terminal's width) names its analyses.
    flat = " ".join(out.split())
    assert ("GPU time: compute, non-compute and idle; Why streams were idle; GPU time by kind of activity; "
            "Top GPU kernels;") in flat
    assert "Memory copy bandwidth; Launch queue length: no data in this run" in flat
    document = subprocess.run([sys.executable, "-m", "perfprof", "summary", run_dir, "--format", "json", "-a",
                               "step_statistics"], capture_output=True, text=True, timeout=120, check=True).stdout
    statistics = json.loads(document)["analyses"]["step_statistics"]
    assert dict(zip(statistics["columns"], statistics["rows"][0]))["count"] == 2  # ProfilerStep#3 and #4
