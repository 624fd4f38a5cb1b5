"""The run database (ExportType.Db): its tables against the trace model and the Chrome trace."""
from __future__ import annotations

import csv
import gc
import json
import os

import pytest
import torch

import fake_cupti
import perfprof
from database_checks import NSYS_KERNEL_SUMMARY, assert_sound, query, us_to_ns
from perfprof import mstx
from perfprof.analysis._run_database import SCHEMA_VERSION
from trace_checks import load_trace

GLOBAL = 0x1000000  # nsys: globalTid = pid * 0x1000000 + tid


def export(prof, tmp_path, name="run.db"):
    path = str(tmp_path / name)
    prof.trace.export_database(path, [("user", '"value"')])
    assert_sound(path)
    return path


def pytorch_api(path):
    return query(path, """SELECT s.value, a.startNs, a.endNs, a.globalTid, a.type FROM PYTORCH_API a
                          JOIN StringIds s ON s.id = a.name ORDER BY a.startNs, s.value""")


def test_cpu_run_ranges_steps_and_shapes_match_the_trace(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True,
                          schedule=perfprof.schedule(wait=0, warmup=0, active=2, repeat=1)) as prof:
        for _ in range(3):
            model(torch.randn(3, 8)).sum().backward()
            prof.step()
    path = export(prof, tmp_path)
    offset, pid = prof.trace.unix_offset_ns, os.getpid()
    expected = sorted((name, begin + offset, end + offset, pid * GLOBAL + tid)
                      for name, category, tid, begin, end, _, _ in prof.trace.ranges()
                      if category not in ("cuda_runtime", "cuda_driver", "gc"))
    assert sorted(row[:4] for row in pytorch_api(path)) == expected
    steps = [(name, begin + offset, end + offset) for name, _, _, begin, end, _, _ in prof.trace.ranges()
             if name.startswith("ProfilerStep#")]
    assert len(steps) == 2
    types = dict(query(path, "SELECT name, id FROM ENUM_API_TYPE"))
    type_of = {row[0]: row[4] for row in pytorch_api(path)}
    assert type_of[steps[0][0]] == types["step"] and type_of["aten::addmm"] == types["op"]
    assert query(path, "SELECT 'ProfilerStep#' || id, startNs, endNs FROM STEP_TIME ORDER BY id") == steps

    chrome = load_trace(prof_export(prof, tmp_path))
    addmm = [e for e in chrome["traceEvents"] if e.get("name") == "aten::addmm"]
    shapes = query(path, """SELECT d.value, s.value FROM PYTORCH_API a JOIN StringIds n ON n.id = a.name
                            JOIN StringIds s ON s.id = a.inputShapes JOIN StringIds d ON d.id = a.inputDtypes
                            WHERE n.value = 'aten::addmm'""")
    assert [(json.loads(d), json.loads(s)) for d, s in shapes] == [
        (e["args"]["Input type"], e["args"]["Input Dims"]) for e in addmm]
    # Autograd's backward operators know their forward operator's thread.
    assert query(path, "SELECT count(*) FROM PYTORCH_API WHERE fwdThreadId IS NOT NULL")[0][0] > 0

    threads = query(path, "SELECT s.value, t.globalTid FROM ThreadNames t JOIN StringIds s ON s.id = t.nameId")
    assert sorted(threads) == sorted((name, pid * GLOBAL + tid) for tid, name in prof.trace.thread_names.items())
    meta = dict(query(path, "SELECT name, value FROM META_DATA"))
    assert meta["schema_version"] == str(SCHEMA_VERSION) and meta["user"] == '"value"' and meta["rank"] == "0"
    assert query(path, "SELECT pid, globalPid FROM PROCESSES") == [(pid, pid * GLOBAL)]


def multiply_in_place_of_a_layer(a, b):
    return torch.mm(a, b)


def test_operators_carry_their_flops_and_their_python_stack(tmp_path):
    a, b = torch.ones(8, 16), torch.ones(16, 4)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True, with_flops=True,
                          with_stack=True) as prof:
        multiply_in_place_of_a_layer(a, b)
        multiply_in_place_of_a_layer(a, b)
    path = export(prof, tmp_path)
    rows = query(path, """SELECT a.flops, a.callchainId FROM PYTORCH_API a JOIN StringIds n ON n.id = a.name
                          WHERE n.value = 'aten::mm'""")
    assert [flops for flops, _ in rows] == [2 * 8 * 16 * 4] * 2  # multiply-adds count 2, as torch counts them
    chrome = load_trace(prof_export(prof, tmp_path))
    assert [e["args"]["flops"] for e in chrome["traceEvents"] if e.get("name") == "aten::mm"] == [1024, 1024]
    # Both calls share one stack, stored once, innermost frame first, as the trace nests them.
    (chain,) = {chain for _, chain in rows}
    frames = query(path, """SELECT s.value FROM PYTORCH_CALLCHAINS c JOIN StringIds s ON s.id = c.stack
                            WHERE c.id = ? ORDER BY c.stackDepth""", chain)
    names = [frame for (frame,) in frames]
    assert "built-in method mm" in names[0]  # torch.mm's own call, then who called it
    caller = next(k for k, name in enumerate(names) if "multiply_in_place_of_a_layer" in name)
    assert caller > 0 and any("test_operators_carry_their_flops" in name for name in names[caller + 1:])
    assert query(path, "SELECT count(*) FROM PYTORCH_API WHERE flops IS NOT NULL AND callchainId IS NULL") == [(0,)]
    assert dict(query(path, "SELECT name, value FROM META_DATA_EXPORT")) == {
        "EXPORT_PROGRAM": "perfprof", "EXPORT_SCHEMA_VERSION": str(SCHEMA_VERSION),
        "TIME_UNIT": "ns since the Unix epoch"}


def prof_export(prof, tmp_path, name="trace.json"):
    path = str(tmp_path / name)
    prof.export_chrome_trace(path)
    return path


GPU_RUN = """
import perfprof
config = perfprof.ExperimentalConfig(profiler_level=perfprof.ProfilerLevel.Level1)
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      experimental_config=config) as prof:
    with perfprof.record_function("train step"):
        correlations = [kernel("void at::native::gemm_kernel<float, 4>(float*, int)"), kernel("relu_kernel"),
                        kernel("void at::native::gemm_kernel<float, 4>(float*, int)", stream=9, duration_ns=70_000)]
        correlations.append(fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000))
        correlations.append(fake.fake_cupti_memset(4096, 5, 0, 1, 7, 5_000))
        fake.fake_cupti_synchronize(0, 1, 7, 30_000)
trace_path, db_path = os.path.join(os.environ["TMP"], "trace.json"), os.path.join(os.environ["TMP"], "run.db")
prof.export_chrome_trace(trace_path)
prof.trace.export_database(db_path, [])
prof.trace.export_summaries(os.environ["TMP"])
print(json.dumps(dict(trace=load_trace(trace_path), db=db_path, offset=prof.trace.unix_offset_ns,
                      correlations=correlations, pid=os.getpid())))
"""


def test_gpu_run_kernel_summary_written_for_nsight_gives_the_chrome_totals(tmp_path):
    result = fake_cupti.run(GPU_RUN, tmp_path)
    path, trace = result["db"], result["trace"]
    assert_sound(path)
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    by_name = {}
    for e in kernels:
        by_name.setdefault(e["name"], []).append(us_to_ns(e["dur"]))
    expected = sorted(((name, len(d), sum(d), sum(d) / len(d), min(d), max(d)) for name, d in by_name.items()),
                      key=lambda row: -row[2])
    assert query(path, NSYS_KERNEL_SUMMARY) == expected
    assert [row[1] for row in expected] == [2, 1]
    # The same numbers in op_statistic.csv and in the database's OP_STATISTIC table.
    with open(tmp_path / "op_statistic.csv", newline="") as file:
        statistic = [(row["Name"], int(row["Instances"]), int(row["Total Time (ns)"]), int(row["Min (ns)"]),
                      int(row["Max (ns)"])) for row in csv.DictReader(file)]
    totals = [(name, count, total, low, high) for name, count, total, _, low, high in expected]
    assert statistic == totals
    assert query(path, """SELECT s.value, o.instances, o.totalTime, o.min, o.max FROM OP_STATISTIC o
                          JOIN StringIds s ON s.id = o.nameId ORDER BY o.totalTime DESC""") == totals

    rows = query(path, """SELECT start, end, deviceId, streamId, correlationId, globalPid, s.value, gridX, blockX,
                                 registersPerThread, dynamicSharedMemory
                          FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.shortName ORDER BY start""")
    offset = result["offset"]
    assert [(r[0], r[1], r[3], r[4]) for r in rows] == sorted(
        (us_to_ns(e["ts"]) + offset, us_to_ns(e["ts"] + e["dur"]) + offset, e["args"]["stream"],
         e["args"]["correlation"]) for e in kernels)
    assert {r[6] for r in rows} == {"gemm_kernel", "relu_kernel"}
    assert {r[5] for r in rows} == {result["pid"] * GLOBAL}
    assert query(path, "SELECT bytes, copyKind, streamId FROM CUPTI_ACTIVITY_KIND_MEMCPY") == [(1 << 20, 1, 7)]
    assert query(path, "SELECT bytes, value FROM CUPTI_ACTIVITY_KIND_MEMSET") == [(4096, 5)]
    assert query(path, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_SYNCHRONIZATION") == [(1,)]
    assert query(path, "SELECT id, name, smCount, totalMemory, computeMajor FROM TARGET_INFO_GPU") == [
        (0, "Fake GPU", 132, 80 << 30, 9)]

    # Each launch is a runtime call with the correlation of its GPU work, linked to "train step".
    runtime = [e for e in trace["traceEvents"] if e.get("cat") == "cuda_runtime"]
    api = query(path, "SELECT start, end, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start")
    assert api == sorted((us_to_ns(e["ts"]) + offset, us_to_ns(e["ts"] + e["dur"]) + offset,
                          e["args"]["correlation"]) for e in runtime)
    launched = query(path, """SELECT c.connectionId FROM PYTORCH_API a JOIN StringIds s ON s.id = a.name
                              JOIN CONNECTION_IDS c ON c.id = a.connectionId WHERE s.value = 'train step'""")
    assert sorted(row[0] for row in launched) == sorted(result["correlations"] + [
        e["args"]["correlation"] for e in runtime if e["args"]["correlation"] not in result["correlations"]])


LAUNCH_RUN = """
import torch
import perfprof

@torch.library.custom_op("dbtest::inner", mutates_args=())
def inner(x: torch.Tensor) -> None:
    kernel("inner_kernel")

@torch.library.custom_op("dbtest::outer", mutates_args=())
def outer(x: torch.Tensor) -> None:
    kernel("outer_kernel")
    torch.ops.dbtest.inner(x)

x = torch.zeros(1)
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    torch.ops.dbtest.outer(x)
    kernel("bare_kernel")
    with perfprof.record_function("scope"):
        torch.ops.dbtest.inner(x)
        fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000)
db_path = os.path.join(os.environ["TMP"], "run.db")
prof.trace.export_database(db_path, [])
print(json.dumps(dict(db=db_path)))
"""


def test_kernel_details_carry_their_launch_and_the_operators_around_it(tmp_path):
    path = fake_cupti.run(LAUNCH_RUN, tmp_path)["db"]
    assert_sound(path)
    # The launch columns are the CUDA call of the same correlation id, for every activity.
    joined = query(path, """SELECT k.launchNameId, k.launchStart, k.launchEnd, k.launchGlobalTid,
                                   r.nameId, r.start, r."end", r.globalTid
                            FROM KERNEL_DETAILS k
                            JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId""")
    assert len(joined) == query(path, "SELECT count(*) FROM KERNEL_DETAILS")[0][0] == 5
    assert all(row[:4] == row[4:] for row in joined)
    # The innermost and the outermost operator around each launch; none for a bare launch, and
    # record_function's scope is no operator.
    launched = query(path, """SELECT n.value, inner_name.value, outer_name.value FROM KERNEL_DETAILS k
                              JOIN StringIds n ON n.id = k.nameId
                              LEFT JOIN PYTORCH_API i ON i.id = k.operatorId
                              LEFT JOIN StringIds inner_name ON inner_name.id = i.name
                              LEFT JOIN PYTORCH_API o ON o.id = k.rootOperatorId
                              LEFT JOIN StringIds outer_name ON outer_name.id = o.name
                              ORDER BY k.start""")
    assert launched == [("outer_kernel", "dbtest::outer", "dbtest::outer"),
                        ("inner_kernel", "dbtest::inner", "dbtest::outer"),
                        ("bare_kernel", None, None),
                        ("inner_kernel", "dbtest::inner", "dbtest::inner"),
                        ("Memcpy HtoD", None, None)]
    assert query(path, """SELECT count(*) FROM KERNEL_DETAILS k JOIN PYTORCH_API a ON a.id = k.operatorId
                          WHERE k.operatorNameId IS NOT a.name""") == [(0,)]
    # An operator's typeParentId is its calling operator, across other types in between.
    parents = query(path, """SELECT n.value, p.value FROM PYTORCH_API a JOIN StringIds n ON n.id = a.name
                             LEFT JOIN PYTORCH_API up ON up.id = a.typeParentId LEFT JOIN StringIds p ON p.id = up.name
                             WHERE n.value IN ('dbtest::outer', 'dbtest::inner', 'scope') ORDER BY a.startNs""")
    assert parents == [("dbtest::outer", None), ("dbtest::inner", "dbtest::outer"), ("scope", None),
                       ("dbtest::inner", None)]


def same_type_parents(rows):
    """Reference typeParentId: a stack per thread and type over (id, type, thread, start, end) rows
    in (thread, start, longest first, id) order; a range ending where the next begins holds nothing."""
    parents, stacks = {}, {}
    for row_id, kind, thread, start, end in rows:
        stack = stacks.setdefault((thread, kind), [])
        while stack and stack[-1][1] <= start:
            stack.pop()
        parents[row_id] = stack[-1][0] if stack else None
        stack.append((row_id, end))
    return parents


def test_type_parents_nest_each_type_on_its_own_thread_by_thread(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU())
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True, with_modules=True) as prof:
        for _ in range(2):
            with perfprof.record_function("outer"), perfprof.record_function("inner"):
                model(torch.randn(3, 8)).sum().backward()
    path = export(prof, tmp_path)
    rows = query(path, "SELECT id, type, globalTid, startNs, endNs FROM PYTORCH_API "
                       "ORDER BY globalTid, startNs, endNs DESC, id")
    written = dict(query(path, "SELECT id, typeParentId FROM PYTORCH_API"))
    assert written == same_type_parents(rows)
    # Each type nests: operators in operators, Python calls in Python calls, annotations in annotations.
    types = dict(query(path, "SELECT name, id FROM ENUM_API_TYPE"))
    nested = dict(query(path, """SELECT a.type, count(*) FROM PYTORCH_API a JOIN PYTORCH_API p ON p.id = a.typeParentId
                                 WHERE p.type = a.type GROUP BY a.type"""))
    assert all(nested.get(types[kind], 0) > 0 for kind in ("op", "python_function", "annotation"))
    assert query(path, """SELECT count(*) FROM PYTORCH_API a JOIN PYTORCH_API p ON p.id = a.typeParentId
                          WHERE p.type <> a.type OR p.globalTid <> a.globalTid""") == [(0,)]


def test_memory_run_tables_match_the_memory_csvs(tmp_path):
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], profile_memory=True, with_modules=True) as prof:
        model = torch.nn.Sequential(torch.nn.Linear(16, 16))
        model(torch.randn(4, 16)).sum().backward()
    path = export(prof, tmp_path)
    record, operators = tmp_path / "memory_record.csv", tmp_path / "operator_memory.csv"
    prof.trace.export_memory_tables(str(record), str(operators))
    with open(record, newline="") as f:
        records = list(csv.DictReader(f))
    with open(operators, newline="") as f:
        allocations = list(csv.DictReader(f))
    assert prof.trace.num_memory_events == len(records) > 0
    db_records = query(path, """SELECT timestamp, totalAllocated, totalReserved, d.value FROM MEMORY_RECORD m
                                JOIN StringIds d ON d.id = m.deviceType ORDER BY m.rowid""")
    assert [(f"{a / 2**20:.6f}", d) for _, a, _, d in db_records] == [
        (r["Total Allocated(MiB)"], r["Device Type"]) for r in records]
    assert [f"{t // 1000}.{t % 1000:03d}" for t, *_ in db_records] == [r["Timestamp(us)"] for r in records]
    db_ops = query(path, """SELECT n.value, m.value, c.value, o.size, o.duration FROM OP_MEMORY o
                            JOIN StringIds n ON n.id = o.name JOIN StringIds m ON m.id = o.module
                            JOIN StringIds c ON c.id = o.category ORDER BY o.rowid""")
    assert [(n, m, c, f"{size / 1024:.3f}", "" if d is None else f"{d / 1000:.3f}") for n, m, c, size, d in db_ops] == [
        (r["Name"], r["Module"], r["Category"], r["Size(KiB)"], r["Duration(us)"]) for r in allocations]
    assert len(db_ops) > 0 and any(r["Module"] for r in allocations)

    # The memory timeline, as export_memory_timeline writes it ([times_us, sizes per category]).
    timeline_path = tmp_path / "timeline.json"
    prof.export_memory_timeline(str(timeline_path), "cpu")
    times, sizes = json.loads(timeline_path.read_text())
    categories = [c for (c,) in query(path, "SELECT DISTINCT s.value FROM MEMORY_CATEGORIES m "
                                            "JOIN StringIds s ON s.id = m.category ORDER BY m.rowid")]
    assert len(categories) == len(sizes[0]) - 1  # torch's sizes begin with a 0
    rows = query(path, """SELECT m.timestamp, s.value, m.bytes FROM MEMORY_CATEGORIES m
                          JOIN StringIds s ON s.id = m.category ORDER BY m.rowid""")
    assert rows == [(t * 1000, category, size[k + 1]) for t, size in zip(times, sizes)
                    for k, category in enumerate(categories)]

    # The module hierarchy: Linear ran inside Sequential.
    modules = query(path, """SELECT m.id, m.parentId, s.value FROM MODULES m JOIN StringIds s ON s.id = m.nameId
                             ORDER BY m.id""")
    assert [(parent, name) for _, parent, name in modules] == [(None, "nn.Module: Sequential_0"),
                                                               (modules[0][0], "nn.Module: Linear_0")]


def test_gc_run_has_one_record_per_pause(tmp_path):
    config = perfprof.ExperimentalConfig(gc_detect_threshold=0)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config) as prof:
        for _ in range(2):
            cycle = {}
            cycle["self"] = cycle
            del cycle
            gc.collect()
    path = export(prof, tmp_path)
    offset = prof.trace.unix_offset_ns
    pauses = sorted((begin + offset, end + offset) for _, category, _, begin, end, _, _ in prof.trace.ranges()
                    if category == "gc")
    assert len(pauses) >= 2
    assert query(path, "SELECT startNs, endNs FROM GC_RECORD ORDER BY startNs") == pauses
    full = query(path, "SELECT globalTid, collected FROM GC_RECORD WHERE generation = 2")
    assert len(full) >= 2 and all(tid == os.getpid() * GLOBAL + __import__("threading").get_native_id()
                                  and collected >= 1 for tid, collected in full)
    assert query(path, "SELECT count(*) FROM PYTORCH_API a JOIN ENUM_API_TYPE t ON t.id = a.type "
                       "WHERE t.name = 'gc'") == [(0,)]


def test_mstx_run_marks_ranges_and_domains_as_nsys_writes_nvtx(tmp_path):
    config = perfprof.ExperimentalConfig(mstx=True)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config) as prof:
        mstx.mark("default mark")
        mstx.mark("data mark", domain="data")
        mstx.range_end(mstx.range_start("load", domain="data"), domain="data")
        mstx.range_end(mstx.range_start("train", domain="model"), domain="model")
        mstx.range_end(mstx.range_start("plain"))
    path = export(prof, tmp_path)
    rows = query(path, """SELECT eventType, text, domainId, end IS NULL FROM NVTX_EVENTS
                          ORDER BY eventType, domainId, text""")
    assert rows == [(34, "default mark", 0, 1), (34, "data mark", 1, 1), (60, "plain", 0, 0), (60, "load", 1, 0),
                    (60, "train", 2, 0), (75, "data", 1, 1), (75, "model", 2, 1)]
    offset, tid = prof.trace.unix_offset_ns, os.getpid() * GLOBAL + __import__("threading").get_native_id()
    ranges = sorted((name, begin + offset, end + offset) for name, _, _, begin, end, _, _ in prof.trace.ranges())
    assert query(path, "SELECT text, start, end FROM NVTX_EVENTS WHERE eventType = 60 ORDER BY text") == ranges
    assert query(path, "SELECT DISTINCT globalTid, endGlobalTid FROM NVTX_EVENTS WHERE eventType = 60") == [(tid, tid)]
    assert query(path, "SELECT count(*) FROM PYTORCH_API") == [(0,)]


def test_a_failed_export_names_the_path_and_leaves_no_file(tmp_path):
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU]) as prof:
        torch.ones(2) + 1
    missing = str(tmp_path / "no" / "run.db")
    with pytest.raises(OSError, match="no/run.db"):
        prof.trace.export_database(missing, [])
    # The rename onto a directory fails: the directory is left as it was, with no temporary file beside it.
    existing = tmp_path / "run.db"
    existing.mkdir()
    (existing / "kept").write_text("previous")
    with pytest.raises(OSError, match="run.db"):
        prof.trace.export_database(str(existing), [])
    assert os.listdir(tmp_path) == ["run.db"] and os.listdir(existing) == ["kept"]


def profiled_run_dir(tmp_path, export_type):
    config = perfprof.ExperimentalConfig(mstx=True, export_type=export_type, data_simplification=False)
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="worker")
    with perfprof.profile(schedule=perfprof.schedule(wait=1, warmup=1, active=2, repeat=1), on_trace_ready=handler,
                          experimental_config=config) as prof:
        prof.add_metadata("model", "toy")
        for step in range(4):
            with perfprof.record_function("forward"):
                mstx.mark(f"step {step}")
            prof.step()
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return run_dir / "PERFPROF_OUTPUT"


def dump(path):
    tables = [name for (name,) in query(path, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    return {table: sorted(query(path, f"SELECT * FROM {table}"), key=repr) for table in tables}


def test_export_type_db_writes_the_database_beside_the_trace_and_analyse_writes_it_again(tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    output = profiled_run_dir(tmp_path, [perfprof.ExportType.Text, perfprof.ExportType.Db])
    names = sorted(p.name for p in output.iterdir())
    assert "perfprof.db" in names and any(name.endswith(".pt.trace.json") for name in names)
    path = str(output / "perfprof.db")
    assert_sound(path)
    meta = dict(query(path, "SELECT name, value FROM META_DATA"))
    assert json.loads(meta["model"]) == "toy"
    assert json.loads(meta["config"])["experimental_config"]["export_type"] == ["text", "db"]
    assert isinstance(json.loads(meta["environment_variables"]), dict)
    assert query(path, "SELECT id FROM STEP_TIME ORDER BY id") == [(2,), (3,)]
    in_process = dump(path)
    for file in output.iterdir():
        file.unlink()
    (result,) = perfprof.analyse(str(tmp_path), data_simplification=False)
    assert result.ok, result
    assert dump(path) == in_process


def test_text_alone_writes_no_database_and_a_rank_names_the_file(tmp_path, monkeypatch):
    monkeypatch.delenv("RANK", raising=False)
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    text_only = profiled_run_dir(tmp_path / "text", perfprof.ExportType.Text)
    assert not [p for p in text_only.iterdir() if p.suffix == ".db"]
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    ranked = profiled_run_dir(tmp_path / "rank", perfprof.ExportType.Db)
    assert [p.name for p in ranked.iterdir() if p.suffix == ".db"] == ["perfprof_3.db"]
    meta = dict(query(str(ranked / "perfprof_3.db"), "SELECT name, value FROM META_DATA"))
    assert (meta["rank"], meta["world_size"]) == ("3", "4")
