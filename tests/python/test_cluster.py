"""perfprof cluster on a real multi-rank job: a 4-rank torchrun job over gloo on CPU, profiled
from outside with `perfprof run`, one rank sleeping 20% longer every step. The cluster analysis
must name that rank and the dimension, its step table must equal a computation by hand from the
ranks' databases, and Dask's mode must give the same outputs as local processes."""
from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from child_process import child_env
from database_checks import query
from time_sets import inside, intersection, union
from trace_checks import WINDOW_MARKER_PIDS

pytest.importorskip("duckdb")

TRAIN = str(Path(__file__).with_name("dp_train.py"))
RANKS = 4
SLOW_RANK = 2
STEP_SECONDS = 0.05  # each step's sleep; the slow rank's is 20% longer (10 ms)
# Ranges of torch.distributed as the documented host breakdown counts them (host_collectives.h).
COLLECTIVE_PREFIXES = ("c10d::", "gloo:", "nccl:", "mpi:", "ucc:")
CSV_COLUMNS = ("Computing", "Communication(Not Overlapped)", "Overlapped", "Communication", "Free", "Preparing")


def perfprof_command(*arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perfprof", *arguments], env=child_env(), capture_output=True,
                          text=True, timeout=300)


@pytest.fixture(scope="module")
def job(tmp_path_factory) -> Path:
    """The run directories of the 4-rank job (two cycles per rank: 8 steps, then one holding the
    tail alone, ProfilerStep#12, which the profiler stopped in: no step)."""
    if shutil.which("torchrun") is None:
        pytest.skip("torchrun is not installed")
    out = tmp_path_factory.mktemp("job")
    result = subprocess.run(
        ["torchrun", "--standalone", f"--nproc_per_node={RANKS}", "--no-python", sys.executable, "-m", "perfprof",
         "run", "-o", str(out), "--export-type", "text,db", "--record-shapes",
         "--schedule", "wait=1,warmup=1,active=8", TRAIN, "--distributed", "--steps", "12",
         "--step-seconds", str(STEP_SECONDS), "--slow-rank", str(SLOW_RANK), "--slow-factor", "1.2"],
        cwd=str(out), env=dict(child_env(), OMP_NUM_THREADS="1"), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def local_output(job, tmp_path_factory) -> Tuple[Path, subprocess.CompletedProcess]:
    output = tmp_path_factory.mktemp("local")
    return output, perfprof_command("cluster", str(job), "-o", str(output), "-j", "2")


def test_the_slow_rank_and_its_dimension_are_named(local_output):
    output, result = local_output
    assert result.returncode == 0, result.stderr
    assert f"rank {SLOW_RANK} is slow" in result.stdout
    report = (output / "cluster_report.md").read_text()
    named = [line for line in report.splitlines() if line.startswith("- **rank")]
    # Free first (the cause: it sleeps longer), then what the others see of it (they wait for it
    # in Communication and at the collectives), as far as this machine's noise lets them show.
    assert named[0].startswith(f"- **rank {SLOW_RANK}** is slow (Free"), report
    assert len(named) == 1, report  # no other rank
    assert f"{RANKS} ranks (world size {RANKS})" in report
    # perfprof summary prints the report again.
    again = perfprof_command("summary", str(output))
    assert again.returncode == 0 and f"rank {SLOW_RANK} is slow" in again.stdout
    document = json.loads(perfprof_command("summary", str(output), "--format", "json").stdout)
    (slow,) = document["slow_ranks"]
    assert slow["rank"] == SLOW_RANK and document["verdict"].startswith(f"1 slow rank: rank {SLOW_RANK} (confidence ")
    free = next(evidence for evidence in slow["evidence"] if evidence["dimension"] == "Free")
    # The printed summary, the report and the database say the same, in the same words.
    printed = " ".join(result.stdout.split())
    sentences = [document["verdict"], slow["summary"].split(": ", 1)[1]] + [e["evidence"] for e in slow["evidence"]]
    for sentence in sentences:
        assert sentence in report and " ".join(sentence.split()) in printed, sentence
    # About 20% of the step's sleep: 10 ms more Free time than the other ranks.
    assert 0.6 * 0.2 * STEP_SECONDS * 1e9 < free["excess_ns"] < 1.6 * 0.2 * STEP_SECONDS * 1e9


def _by_hand(database: str) -> Tuple[int, Dict[str, Dict[str, float]]]:
    """The rank of a database and its steps' breakdown (microseconds), from PYTORCH_API's rows:
    C the operators that are not torch.distributed's, M torch.distributed's ranges."""
    connection = sqlite3.connect(database)
    rank = int(connection.execute("SELECT value FROM META_DATA WHERE name = 'rank'").fetchone()[0])
    rows = connection.execute("""SELECT p.startNs, p.endNs, s.value, t.name FROM PYTORCH_API p
                                 JOIN StringIds s ON s.id = p.name JOIN ENUM_API_TYPE t ON t.id = p.type""").fetchall()
    # The steps are the ProfilerStep ranges that ended at a step boundary: STEP_TIME's.
    step_ids = {f"ProfilerStep#{step}" for (step,) in connection.execute("SELECT id FROM STEP_TIME")}
    connection.close()
    compute = union([(b, e) for b, e, name, kind in rows if kind == "op" and not name.startswith(COLLECTIVE_PREFIXES)])
    communication = union([(b, e) for b, e, name, kind in rows
                            if kind in ("op", "annotation") and name.startswith(COLLECTIVE_PREFIXES)])
    overlapped = intersection(compute, communication)
    busy = union(compute + communication)
    steps = {}
    for begin, end, name, kind in rows:
        if kind != "step" or name not in step_ids:
            continue
        computing, comm, overlap = (inside(s, begin, end) for s in (compute, communication, overlapped))
        first = min((max(b, begin) for b, e in busy if e > begin and b < end), default=end)
        values = {"Computing": computing, "Communication(Not Overlapped)": comm - overlap, "Overlapped": overlap,
                  "Communication": comm, "Free": (end - begin) - inside(busy, begin, end), "Preparing": first - begin}
        steps[name.split("#")[1]] = {column: value / 1e3 for column, value in values.items()}
    return rank, steps


def test_the_step_table_equals_a_computation_by_hand_from_the_ranks_databases(job, local_output):
    output, _ = local_output
    expected: Dict[Tuple[str, str, str], Dict[str, float]] = {}
    for database in job.glob("*_perfprof/PERFPROF_OUTPUT/perfprof_*.db"):
        rank, steps = _by_hand(str(database))
        for step, values in steps.items():
            expected[(step, "rank", str(rank))] = values
    by_step: Dict[str, List[Dict[str, float]]] = {}
    for (step, _, _), values in expected.items():
        by_step.setdefault(step, []).append(values)
    for step, ranks in by_step.items():
        for statistic, combine in (("max", max), ("min", min), ("mean", lambda v: sum(v) / len(v))):
            expected[(step, statistic, "")] = {column: combine([r[column] for r in ranks]) for column in CSV_COLUMNS}
    with open(output / "cluster_step_trace_time.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    # The 8 recorded steps; the tail the profiler stopped in (the second cycle's ProfilerStep#12) is
    # no step (it once was a 9th).
    assert len({row["Step"] for row in rows}) == 8
    assert {(row["Step"], row["Type"], row["Index"]) for row in rows} == set(expected)
    for row in rows:
        hand = expected[(row["Step"], row["Type"], row["Index"])]
        for column in CSV_COLUMNS:
            assert float(row[column]) == pytest.approx(hand[column], abs=0.0011), (row["Step"], row["Type"], column)
    assert [row["Type"] for row in rows[:RANKS + 3]] == ["rank"] * RANKS + ["max", "min", "mean"]


def test_each_ranks_step_table_reads_the_same_in_the_cluster_outputs(job, local_output):
    """The consistency harness on a 4-rank gloo job: each rank's own step_trace_time.csv (written by
    the rank's process) and its rows in cluster_step_trace_time.csv, the cluster database's table
    and `perfprof summary OUTPUT --format csv` are one table."""
    import duckdb

    output, _ = local_output
    per_rank = {}
    for database in job.glob("*_perfprof/PERFPROF_OUTPUT/perfprof_*.db"):
        (rank,) = query(str(database), "SELECT value FROM META_DATA WHERE name = 'rank'")[0]
        with open(database.with_name("step_trace_time.csv"), newline="") as file:
            for row in csv.DictReader(file):
                per_rank[(row["Step"], str(rank))] = tuple(round(float(row[c]), 3) for c in CSV_COLUMNS)
    assert len(per_rank) == RANKS * 8
    with open(output / "cluster_step_trace_time.csv", newline="") as file:
        text = file.read()
    rows = list(csv.DictReader(io.StringIO(text)))
    clustered = {(row["Step"], row["Index"]): tuple(round(float(row[c]), 3) for c in CSV_COLUMNS)
                 for row in rows if row["Type"] == "rank"}
    assert clustered == per_rank
    with duckdb.connect(str(output / "cluster_analysis.duckdb"), read_only=True) as connection:
        columns = ", ".join(f'"{column}"' for column in CSV_COLUMNS)
        stored = connection.execute(f'SELECT CAST("Step" AS VARCHAR), CAST("Index" AS VARCHAR), {columns} '
                                    "FROM cluster_step_trace_time WHERE \"Type\" = 'rank'").fetchall()
    assert {(step, index): tuple(round(float(v), 3) for v in values) for step, index, *values in stored} == per_rank
    assert perfprof_command("summary", str(output), "--format", "csv").stdout == text


def test_collectives_are_matched_across_ranks_with_their_sizes(local_output):
    output, _ = local_output
    communication = json.loads((output / "cluster_communication.json").read_text())
    all_reduce = communication["collectives"]["gloo:all_reduce"]
    assert all_reduce["ranks"] == RANKS and set(all_reduce["per_rank"]) == {str(r) for r in range(RANKS)}
    model_bytes = 4 * ((16 * 32 + 32) + (32 * 4 + 4))  # DDP's one bucket: dp_train.py's parameters, float32
    for totals in all_reduce["per_rank"].values():
        assert totals["count"] == all_reduce["instances"] == 8
        assert totals["bytes"] == 8 * model_bytes and totals["data_type"] == "float"
        assert totals["elapse_ns"] == totals["transit_ns"] + totals["wait_ns"]
    slow = all_reduce["per_rank"][str(SLOW_RANK)]
    assert slow["late_arrivals"] >= 6 and slow["wait_ns"] == min(r["wait_ns"] for r in all_reduce["per_rank"].values())
    assert json.loads((output / "cluster_communication_matrix.json").read_text()) == {"pairs": []}  # no send/recv


def test_dask_mode_gives_the_outputs_of_local_mode(job, local_output, tmp_path):
    pytest.importorskip("distributed")
    local, _ = local_output
    result = perfprof_command("cluster", str(job), "-o", str(tmp_path), "--mode", "dask", "-j", "2")
    assert result.returncode == 0, result.stderr
    for name in ("cluster_step_trace_time.csv", "cluster_communication.json", "cluster_communication_matrix.json",
                 "cluster_report.md"):
        assert (tmp_path / name).read_text() == (local / name).read_text(), name


def test_a_scheduler_address_runs_the_map_step_on_that_dask_cluster(job, local_output, tmp_path):
    distributed = pytest.importorskip("distributed")
    from perfprof.cluster import analyse_cluster

    local, _ = local_output
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as dask_cluster:
        result = analyse_cluster(job, tmp_path, mode="dask", scheduler=dask_cluster.scheduler_address)
    # Only the second cycles are left out: each holds the tail alone, no step.
    assert result.ranks == list(range(RANKS)) and len(result.notes) == RANKS
    assert all("no step was recorded" in note for note in result.notes)
    assert (tmp_path / "cluster_step_trace_time.csv").read_text() == (local / "cluster_step_trace_time.csv").read_text()


def test_a_rank_that_cannot_be_read_is_left_out_and_named(job, tmp_path):
    copy = tmp_path / "job"
    shutil.copytree(job, copy, ignore=shutil.ignore_patterns("cluster_analysis_output"))
    broken = sorted(copy.glob("*_perfprof/PERFPROF_OUTPUT/perfprof_3.db"))[0]
    broken.write_bytes(b"not a database")
    result = perfprof_command("cluster", str(copy), "-j", "1")
    assert result.returncode == 1  # not everything was analysed
    assert f"failed {broken.parent.parent}" in " ".join(result.stderr.split())
    report = (copy / "cluster_analysis_output" / "cluster_report.md").read_text()
    assert f"left out {broken.parent.parent}" in report
    assert f"**rank {SLOW_RANK}** is slow" in report  # the other ranks are still analysed


def test_runs_of_two_jobs_or_none_are_refused_with_what_to_do(job, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = perfprof_command("cluster", str(empty))
    assert result.returncode == 1 and "no run directory there" in result.stderr
    twice = tmp_path / "twice"
    shutil.copytree(job, twice / "a", ignore=shutil.ignore_patterns("cluster_analysis_output"))
    shutil.copytree(job, twice / "b", ignore=shutil.ignore_patterns("cluster_analysis_output"))
    result = perfprof_command("cluster", str(twice))
    assert result.returncode == 1 and "in 2 run directories" in result.stderr
    assert "give perfprof cluster a folder that holds one run of the job" in " ".join(result.stderr.split())
    result = perfprof_command("cluster", str(job), "--scheduler", "tcp://localhost:1")
    assert result.returncode == 2 and "needs --mode dask" in result.stderr


def test_runs_written_as_captures_get_their_databases_built_first(tmp_path):
    run = subprocess.run([sys.executable, "-m", "perfprof", "run", "-o", str(tmp_path), "--no-analyse",
                          "--schedule", "wait=0,warmup=1,active=3,repeat=1", TRAIN, "--steps", "6",
                          "--step-seconds", "0.01"], env=child_env(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert not list(tmp_path.glob("*_perfprof/PERFPROF_OUTPUT"))  # the capture only
    result = perfprof_command("cluster", str(tmp_path), "--merge-trace")
    assert result.returncode == 0, result.stderr
    assert "building the database of" in result.stderr and "from its capture" in result.stderr
    assert "1 rank analysed" in result.stdout
    # The merged trace built the run's Chrome trace from its capture too.
    with gzip.open(tmp_path / "cluster_analysis_output" / "cluster_trace.json.gz", "rt") as file:
        names = {e["name"] for e in json.load(file)["traceEvents"]}
    assert len({name for name in names if name.startswith("ProfilerStep#")}) == 3  # active=3
    with open(tmp_path / "cluster_analysis_output" / "cluster_step_trace_time.csv", newline="") as file:
        assert {row["Type"] for row in csv.DictReader(file)} == {"rank", "max", "min", "mean"}


def test_gpu_ranks_are_compared_on_their_device_work_and_nccl_kernels(tmp_path):
    """Two ranks through the CUPTI double: a GEMM, then eight NCCL all-reduces that end together
    on both ranks; rank 1 starts each 100 us late (150 us on rank 0, 50 us on rank 1)."""
    from analysis_runs import US, Activity, constructed_run

    nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
    for rank in range(2):
        activities = [Activity("kernel", 7, 0, 10 * US, (100 + 50 * rank) * US, name="gemm")]
        activities += [Activity("kernel", 13, (200 + 300 * k) * US, (300 + 300 * k + 100 * rank) * US,
                                (150 - 100 * rank) * US, name=nccl) for k in range(8)]
        constructed_run(activities, tmp_path, env={"RANK": str(rank), "WORLD_SIZE": "2"})
    result = perfprof_command("cluster", str(tmp_path / "runs"), "-o", str(tmp_path / "out"), "--merge-trace")
    assert result.returncode == 0, result.stderr
    with gzip.open(tmp_path / "out" / "cluster_trace.json.gz", "rt") as file:
        processes = {e["pid"]: e["args"]["name"] for e in json.load(file)["traceEvents"] if e["name"] == "process_name"}
    assert processes == {0: "rank 0", 1: "rank 0: GPU 0", 1000: "rank 1", 1001: "rank 1: GPU 0"}
    report = (tmp_path / "out" / "cluster_report.md").read_text()
    assert "the step breakdown measures the device." in report
    assert "- **rank 1** is slow (Collectives)" in report
    assert "it arrived last at 8 of 8 collectives" in report
    communication = json.loads((tmp_path / "out" / "cluster_communication.json").read_text())["collectives"][nccl]
    assert communication["instances"] == 8
    assert communication["per_rank"]["0"]["wait_ns"] == 8 * 100 * US
    assert communication["per_rank"]["1"]["late_arrivals"] == 8 and communication["per_rank"]["1"]["wait_ns"] == 0
    assert communication["per_rank"]["0"]["bytes"] is None  # no nccl:* range with shapes around the launch
    with open(tmp_path / "out" / "cluster_step_trace_time.csv", newline="") as file:
        scenario = [row for row in csv.DictReader(file) if row["Type"] == "rank" and float(row["Communication"]) > 0]
    assert [(row["Index"], float(row["Computing"]), float(row["Communication"])) for row in scenario] == [
        ("0", 100.0, 8 * 150.0), ("1", 150.0, 8 * 50.0)]


def test_sends_and_receives_make_the_matrix_with_their_peers(tmp_path):
    if shutil.which("torchrun") is None:
        pytest.skip("torchrun is not installed")
    job = subprocess.run(["torchrun", "--standalone", "--nproc_per_node=2", str(Path(__file__).with_name("p2p_job.py")),
                          str(tmp_path / "job")], env=dict(child_env(), OMP_NUM_THREADS="1"), capture_output=True,
                         text=True, timeout=300)
    assert job.returncode == 0, job.stderr[-3000:]
    result = perfprof_command("cluster", str(tmp_path / "job"))
    assert result.returncode == 0, result.stderr
    output = tmp_path / "job" / "cluster_analysis_output"
    pairs = json.loads((output / "cluster_communication_matrix.json").read_text())["pairs"]
    # Each side of each direction, two steps of one 4000-byte message each.
    assert [(p["src"], p["dst"], p["op"], p["count"], p["bytes"]) for p in pairs] == [
        (0, 1, "recv", 2, 8000), (0, 1, "send", 2, 8000), (1, 0, "recv", 2, 8000), (1, 0, "send", 2, 8000)]
    assert all(p["bandwidth_gb_s"] == pytest.approx(p["bytes"] / p["time_ns"], abs=1e-6) for p in pairs)
    collectives = json.loads((output / "cluster_communication.json").read_text())["collectives"]
    assert set(collectives) == {"gloo:all_reduce"}  # sends and receives are not matched as collectives
    assert collectives["gloo:all_reduce"]["per_rank"]["0"]["bytes"] == 2 * 4000


def _trace(run_dir: Path) -> dict:
    (trace,) = run_dir.glob("PERFPROF_OUTPUT/*.pt.trace.json")
    return json.loads(trace.read_text())


def test_the_merged_trace_holds_every_rank_as_its_own_process(job, tmp_path):
    result = perfprof_command("cluster", str(job), "-o", str(tmp_path), "--merge-trace")
    assert result.returncode == 0, result.stderr
    with gzip.open(tmp_path / "cluster_trace.json.gz", "rt") as file:
        merged = json.load(file)
    events = merged["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {rank * 1000: f"rank {rank}" for rank in range(RANKS)}
    # Every event of every rank's traces, once, in its rank's process (process metadata and
    # Kineto's window markers aside), its time moved onto the merged trace's base (each
    # process's base differs by a few ns).
    expected, found = [], []
    for database in job.glob("*_perfprof/PERFPROF_OUTPUT/perfprof_*.db"):
        if not query(str(database), "SELECT id FROM STEP_TIME"):
            continue  # a cycle holding the tail alone: left out of the analysis, and of the merged trace
        rank = int(database.stem.split("_")[1])
        trace = _trace(database.parent.parent)
        shift = (trace["baseTimeNanoseconds"] - merged["baseTimeNanoseconds"]) / 1000
        expected += [(rank, e["ph"], e["name"], e["ts"] + shift if shift else e["ts"], e.get("tid"))
                     for e in trace["traceEvents"]
                     if not e["name"].startswith("process_") and e.get("pid") not in WINDOW_MARKER_PIDS]
    found = [(e["pid"] // 1000, e["ph"], e["name"], e.get("ts"), e.get("tid")) for e in events
             if not e["name"].startswith("process_")]
    assert sorted(found, key=repr) == sorted(expected, key=repr)
    # Flows still pair within their rank, and no two ranks share an id.
    starts = {(e["pid"], e["id"]) for e in events if e["ph"] == "s"}
    assert starts and starts == {(e["pid"], e["id"]) for e in events if e["ph"] == "f"}
    assert len({flow_id for _, flow_id in starts}) == len(starts)
    assert len(merged["distributedInfo"]["ranks"]) == RANKS


def test_a_merged_trace_leaves_out_unreadable_traces_and_says_where_it_cannot_write(tmp_path):
    from analysis_runs import US, Activity, constructed_run
    from perfprof.cluster._merged_trace import write_merged_trace

    runs = [constructed_run([Activity("kernel", 7, 0, 10 * US, 100 * US, name="gemm")], tmp_path,
                            env={"RANK": str(rank), "WORLD_SIZE": "2"}) for rank in range(2)]
    (trace,) = runs[1].glob("PERFPROF_OUTPUT/*.pt.trace.json")
    trace.write_text("{not json")
    merged = write_merged_trace([(0, str(runs[0])), (1, str(runs[1]))], str(tmp_path / "merged.json"))
    assert merged.ranks == 1 and merged.skipped == [f"rank 1 ({runs[1]}): {trace} is not a readable trace: "
                                                    + merged.skipped[0].split("is not a readable trace: ")[1]]
    assert merged.events == len(json.loads((tmp_path / "merged.json").read_text())["traceEvents"])
    with pytest.raises(OSError, match="cannot write the merged trace .*missing/merged.json"):
        write_merged_trace([(0, str(runs[0]))], str(tmp_path / "missing" / "merged.json"))
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".merged")) == []


def test_merged_flow_ids_stay_paired_within_a_rank_whatever_their_type(tmp_path):
    from perfprof.cluster._merged_trace import write_merged_trace

    runs = []
    for rank in range(2):
        output = tmp_path / f"r{rank}_perfprof" / "PERFPROF_OUTPUT"
        output.mkdir(parents=True)
        events = [{"ph": "s", "id": 7, "pid": 1, "tid": 1, "ts": 1.0, "name": "a"},
                  {"ph": "f", "id": 7, "pid": 1, "tid": 1, "ts": 2.0, "name": "a", "bp": "e"},
                  {"ph": "b", "id": "0x1f", "pid": 1, "tid": 1, "ts": 1.0, "name": "b", "cat": "c"},
                  {"ph": "e", "id": "0x1f", "pid": 1, "tid": 1, "ts": 3.0, "name": "b", "cat": "c"}]
        (output / "w.pt.trace.json").write_text(json.dumps({"traceEvents": events, "baseTimeNanoseconds": 0}))
        runs.append((rank, str(output.parent)))
    merged = write_merged_trace(runs, str(tmp_path / "merged.json"))
    events = json.loads((tmp_path / "merged.json").read_text())["traceEvents"]
    ids = {(e["pid"] // 1000, e["ph"]): e["id"] for e in events if "id" in e}
    assert merged.ranks == 2 and merged.skipped == []
    assert ids[(0, "s")] == ids[(0, "f")] != ids[(1, "s")] == ids[(1, "f")]
    assert ids[(0, "b")] == ids[(0, "e")] != ids[(1, "b")] == ids[(1, "e")]
