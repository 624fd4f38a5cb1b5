"""Every trace is an input: a run directory written with the default options (its Chrome trace
alone) and a trace torch.profiler wrote are summarised, plotted and compared, their database
built from the trace by the streaming importer (perfprof._trace_import, csrc/import/)."""
from __future__ import annotations

import collections
import gzip
import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from child_process import child_env

torch = pytest.importorskip("torch")

# A training loop of the test's own: the `perfprof run` target.
TRAIN_SCRIPT = """\
import torch
model = torch.nn.Sequential(torch.nn.Linear(32, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.randn(16, 32)
for _ in range(6):
    model(x).sum().backward()
    optimizer.step()
    optimizer.zero_grad()
"""


def perfprof(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perfprof", *args], cwd=str(cwd), env=child_env(),
                          capture_output=True, text=True, timeout=300)


def the_run_dir(output: Path) -> Path:
    (run_dir,) = [entry for entry in output.iterdir() if entry.name.endswith("_perfprof")]
    return run_dir


def test_a_default_perfprof_run_is_summarised_plotted_and_compared(tmp_path):
    (tmp_path / "train.py").write_text(TRAIN_SCRIPT)
    for output in ("r", "r2"):
        result = perfprof("run", "-o", output, "train.py", cwd=tmp_path)
        assert result.returncode == 0, result.stderr
    run_dir = the_run_dir(tmp_path / "r")
    # The default options: the trace is written, neither a database nor the capture is kept.
    outputs = os.listdir(run_dir / "PERFPROF_OUTPUT")
    assert [name for name in outputs if name.endswith(".pt.trace.json")] and "perfprof.db" not in outputs
    assert not (run_dir / "capture.ppcap").exists()

    summary = perfprof("summary", "r", "--format", "json", "-a", "step_statistics", cwd=tmp_path)
    assert summary.returncode == 0, summary.stderr
    database = run_dir / "PERFPROF_OUTPUT" / "perfprof.db"
    assert f"building the database of {run_dir.relative_to(tmp_path)} from its Chrome trace" in summary.stderr
    assert stat.S_IMODE(database.stat().st_mode) == 0o640
    steps = json.loads(summary.stdout)["analyses"]["step_statistics"]["rows"]
    assert steps and steps[0][1] >= 6  # a step per optimizer.step()

    plot = perfprof("plot", "r", cwd=tmp_path)
    assert plot.returncode == 0, plot.stderr
    assert "step_times.png" in plot.stdout + plot.stderr

    compare = perfprof("compare", "r", "r2", cwd=tmp_path)
    assert compare.returncode == 0, compare.stderr
    assert "from its Chrome trace" in compare.stderr  # r2's database, built as r's was


def profiled_steps(trace_path: str) -> Any:
    """A small training loop profiled by torch.profiler itself, its trace exported to `trace_path`."""
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.randn(32, 64)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True, profile_memory=True,
                 schedule=schedule(wait=0, warmup=1, active=3, repeat=1),
                 on_trace_ready=lambda done: done.export_chrome_trace(trace_path)) as prof:
        for _ in range(4):
            with record_function("forward"):
                loss = model(x).sum()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            prof.step()
    return prof


def summary_rows(path: str, analysis: str, cwd: Path) -> List[Dict[str, Any]]:
    result = perfprof("summary", path, "--format", "json", "-a", analysis, "--top", "1000", cwd=cwd)
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)["analyses"][analysis]
    return [dict(zip(table["columns"], row)) for row in table["rows"]]


@pytest.mark.parametrize("name", ["t.json", "t.pt.trace.json.gz"])
def test_a_torch_profiler_trace_is_summarised_as_torch_counts_it(tmp_path, name):
    trace = str(tmp_path / name)
    prof = profiled_steps(trace)
    if name.endswith(".gz"):
        assert open(trace, "rb").read(2) == b"\x1f\x8b"
    operators = {row["name"]: row for row in summary_rows(trace, "top_operators", tmp_path)}

    # Independent of perfprof: torch's own key_averages on the same run. Self times agree for
    # every operator; counts and totals where torch does not merge a nested call of the same
    # operator into its caller (docs/analysis.md, top_operators).
    events = json.loads(gzip.open(trace).read() if name.endswith(".gz") else open(trace).read())["traceEvents"]
    in_trace = collections.Counter(event["name"] for event in events if event.get("cat") == "cpu_op")
    torch_operators = [average for average in prof.key_averages() if average.key in in_trace]
    assert len(torch_operators) > 20
    assert set(operators) == {average.key for average in torch_operators}
    for average in torch_operators:
        row = operators[average.key]
        assert row["self_ns"] == pytest.approx(average.self_cpu_time_total * 1000, rel=0.01, abs=2), average.key
        assert row["count"] == in_trace[average.key]
        if average.count == in_trace[average.key]:
            assert row["total_ns"] == pytest.approx(average.cpu_time_total * 1000, rel=0.01, abs=2), average.key

    steps = summary_rows(trace, "step_times", tmp_path)
    assert [row["step"] for row in steps] == [1, 2, 3]  # step 0 was the warm-up
    peaks = {row["category"]: row["peak_bytes"] for row in summary_rows(trace, "memory_peaks", tmp_path)}
    assert peaks["TOTAL"] > 0


def test_a_trace_file_is_imported_once_into_the_cache(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("PERFPROF_CACHE_DIR", str(cache))
    trace = tmp_path / "t.json"
    profiled_steps(str(trace))
    first = perfprof("summary", str(trace), "-a", "run_info", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert f"importing {trace} (its database is cached in {cache}" in first.stderr
    (database,) = (cache / "imported").iterdir()
    assert stat.S_IMODE(database.stat().st_mode) == 0o640
    assert stat.S_IMODE((cache / "imported").stat().st_mode) == 0o750
    assert sorted(os.listdir(tmp_path)) == ["cache", "t.json"]  # nothing written beside the trace

    again = perfprof("summary", str(trace), "-a", "run_info", cwd=tmp_path)
    assert again.returncode == 0 and "importing" not in again.stderr
    trace.write_text(trace.read_text().replace('"aten::mm"', '"aten::mm_renamed"'))
    changed = perfprof("summary", str(trace), "-a", "top_operators", "--top", "1000", cwd=tmp_path)
    assert changed.returncode == 0 and "importing" in changed.stderr and "aten::mm_renamed" in changed.stdout


def test_a_folder_of_torch_traces_is_a_folder_of_runs(tmp_path):
    from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler

    handler = tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w")
    with profile(activities=[ProfilerActivity.CPU], schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=handler) as prof:
        for _ in range(4):
            torch.randn(8, 8).mm(torch.randn(8, 8))
            prof.step()
    traces = sorted((tmp_path / "log").glob("*.pt.trace.json"))
    assert len(traces) == 2
    result = perfprof("summary", "log", "--format", "csv", "-a", "run_info", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert [f"# run: {os.path.join('log', trace.name)}" for trace in traces] == \
        [line for line in result.stdout.splitlines() if line.startswith("# run:")]


def test_a_bad_trace_is_one_line_naming_the_file(tmp_path):
    trace = tmp_path / "cut.json"
    profiled_steps(str(trace))
    text = trace.read_text()
    trace.write_text(text[:len(text) // 2])
    result = perfprof("summary", str(trace), cwd=tmp_path)
    assert result.returncode == 1
    (failure,) = [line for line in result.stderr.splitlines() if line.startswith("failed")]
    assert failure.startswith(f"failed {trace}: {trace}: byte ") and "cut short" in failure


# --- A Kineto trace with GPU kernels and NCCL: perfprof's analyses of the import and HTA's ---------

KINETO_TRACE = Path(__file__).parent / "data" / "kineto_gpu_nccl_rank1.pt.trace.json"
US = 1000
# Device 0, µs (hand-written, torch.profiler's layout): stream 7 gemm [1040,1100), copy [1180,1190),
# gemm [1240,1300); stream 13 NCCL all-reduce [1080,1160); stream 9 softmax [1250,1280).
# Compute [1040,1100) + [1240,1300) = 120; busy [1040,1160) + [1180,1190) + [1240,1300) = 190;
# span 1040-1300 = 260, idle 70; the all-reduce overlaps compute in [1080,1100): 20 of its 80.
KINETO_COMPUTE, KINETO_BUSY, KINETO_SPAN = 120 * US, 190 * US, 260 * US


@pytest.fixture(scope="module")
def kineto_run(tmp_path_factory):
    from perfprof import analysis

    with pytest.MonkeyPatch.context() as environment:
        environment.setenv("PERFPROF_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        with analysis.open_run(KINETO_TRACE) as run:
            yield run


@pytest.fixture(scope="module")
def kineto_hta(tmp_path_factory):
    import shutil

    from hta.trace_analysis import TraceAnalysis

    folder = tmp_path_factory.mktemp("hta")
    shutil.copy(KINETO_TRACE, folder)
    return TraceAnalysis(trace_dir=str(folder))


def test_the_kineto_trace_gives_its_rank_devices_and_links(kineto_run):
    from perfprof import analysis

    info = {row["name"]: row["value"] for row in analysis.ANALYSES["run_info"](kineto_run, top=10).to_dicts()}
    assert (info["rank"], info["world_size"], info["steps"], info["kernels"]) == ("1", "2", "3", "4")
    assert info["metadata.trace_id"] == '"0123456789ABCDEF0123456789ABCDEF"'
    launches = {row["correlationId"]: row for row in analysis.kernel_launches(kineto_run).to_dicts()}
    # Each GPU activity linked to its launch by correlation id, delayed from the launch's end.
    assert sorted(launches) == [11, 12, 13, 21, 22]
    assert (launches[12]["name"], launches[12]["cpu_duration_ns"], launches[12]["gpu_duration_ns"],
            launches[12]["launch_delay_ns"]) == ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", 5 * US, 80 * US,
                                                 (1080 - 1065) * US)


def test_gpu_analyses_of_the_kineto_trace_agree_with_hta(kineto_run, kineto_hta):
    from perfprof import analysis

    (ours,) = analysis.temporal_breakdown(kineto_run).to_dicts()
    assert (ours["compute_ns"], ours["non_compute_ns"], ours["idle_ns"], ours["total_ns"]) == \
        (KINETO_COMPUTE, KINETO_BUSY - KINETO_COMPUTE, KINETO_SPAN - KINETO_BUSY, KINETO_SPAN)
    (theirs,) = kineto_hta.get_temporal_breakdown(visualize=False).to_dict("records")
    assert ours["compute_ns"] == theirs["compute_time(us)"] * US
    assert ours["non_compute_ns"] == theirs["non_compute_time(us)"] * US
    assert ours["idle_ns"] == theirs["idle_time(us)"] * US

    (overlap,) = analysis.comm_comp_overlap(kineto_run).to_dicts()
    assert overlap["overlap_pct"] == pytest.approx(25.0)
    (theirs,) = kineto_hta.get_comm_comp_overlap(visualize=False).to_dict("records")
    assert overlap["overlap_pct"] == pytest.approx(theirs["comp_comm_overlap_pctg"])

    _, kernels = kineto_hta.get_gpu_kernel_breakdown(visualize=False, include_memory_kernels=True)
    top = {row["name"]: row for row in analysis.top_kernels(kineto_run).to_dicts()}
    assert {row["name"] for row in kernels.to_dict("records")} == set(top)
    for row in kernels.to_dict("records"):
        assert top[row["name"]]["total_ns"] == row["sum (us)"] * US, row["name"]

    idle = kineto_hta.get_idle_time_breakdown(ranks=[1], visualize=False)[0].to_dict("records")
    ours_idle = {(row["streamId"], row["category"]): row["idle_ns"]
                 for row in analysis.idle_time_breakdown(kineto_run).to_dicts()}
    assert idle
    for row in idle:
        assert ours_idle[row["stream"], row["idle_category"]] == row["idle_time"] * US, row


def test_hints_name_the_perfprof_run_flag_on_the_command_line_and_the_option_in_python(tmp_path):
    from click.testing import CliRunner

    from perfprof.cli import main
    from perfprof.plots._catalogue import SINGLE_RUN_PLOTS

    memory = SINGLE_RUN_PLOTS["memory_over_time"].needs
    assert str(memory) == "memory events (profile_memory=True)"
    trace = tmp_path / "t.json"
    trace.write_text(KINETO_TRACE.read_text())
    result = CliRunner().invoke(main, ["plot", str(trace), "-o", str(tmp_path / "plots")])
    assert result.exit_code == 0, result.output
    log = (tmp_path / "plots" / "perfprof_plot.log").read_text()
    assert "it needs memory events (`perfprof run --profile-memory`)" in log
    assert str(memory) == "memory events (profile_memory=True)"  # the command's words end with it


def test_a_jobs_chrome_traces_alone_are_clustered_as_its_run_directories_are(tmp_path):
    """Two GPU ranks through the CUPTI double; `perfprof cluster` on their Chrome traces alone (a
    folder of *.pt.trace.json, as torch's tensorboard_trace_handler leaves) gives the step table
    and the collectives it gives on the run directories."""
    import shutil

    from analysis_runs import US, Activity, constructed_run

    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    traces = tmp_path / "traces"
    traces.mkdir()
    for rank in range(2):
        activities = [Activity("kernel", 7, 0, 10 * US, (100 + 50 * rank) * US, name="gemm")]
        activities += [Activity("kernel", 13, (200 + 300 * k) * US, (300 + 300 * k + 100 * rank) * US,
                                (150 - 100 * rank) * US, name=nccl) for k in range(4)]
        run_dir = constructed_run(activities, tmp_path, env={"RANK": str(rank), "WORLD_SIZE": "2"})
        (trace,) = (run_dir / "PERFPROF_OUTPUT").glob("*.pt.trace.json")
        shutil.copy(trace, traces / f"rank{rank}.pt.trace.json")
    outputs = {}
    for name, path in (("runs", tmp_path / "runs"), ("traces", traces)):
        result = perfprof("cluster", str(path), "-o", str(tmp_path / f"out_{name}"), cwd=tmp_path)
        assert result.returncode == 0, result.stderr
        outputs[name] = tmp_path / f"out_{name}"
    assert "from its Chrome trace" not in result.stderr and "importing" in result.stderr
    steps = {name: (out / "cluster_step_trace_time.csv").read_text() for name, out in outputs.items()}
    assert steps["traces"] == steps["runs"] and "rank" in steps["traces"]
    collectives = {name: json.loads((out / "cluster_communication.json").read_text())["collectives"][nccl]
                   for name, out in outputs.items()}
    assert collectives["traces"] == collectives["runs"]
    assert collectives["traces"]["per_rank"]["0"]["wait_ns"] == 4 * 100 * US


def test_a_run_recording_what_its_trace_cannot_carry_writes_its_database_at_stop(tmp_path):
    """Memory categories need the tensor roles only the capture or the database keeps: with the
    capture removed (the default), such a run writes its database at stop; a default run does not
    (docs/performance.md: the first summary builds it from the trace at about the same cost)."""
    (tmp_path / "train.py").write_text(TRAIN_SCRIPT)
    result = perfprof("run", "-o", "memory", "--profile-memory", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run_dir = the_run_dir(tmp_path / "memory")
    assert (run_dir / "PERFPROF_OUTPUT" / "perfprof.db").is_file() and not (run_dir / "capture.ppcap").exists()
    peaks = summary_rows("memory", "memory_peaks", tmp_path)
    assert {row["category"] for row in peaks if row["peak_bytes"]} >= {"PARAMETER", "TOTAL"}
    # The same when `perfprof analyse` writes the run later and removes its capture.
    result = perfprof("run", "-o", "later", "--no-analyse", "--profile-memory", "train.py", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    run_dir = the_run_dir(tmp_path / "later")
    assert perfprof("analyse", str(run_dir), cwd=tmp_path).returncode == 0
    assert (run_dir / "PERFPROF_OUTPUT" / "perfprof.db").is_file() and not (run_dir / "capture.ppcap").exists()
