"""PyTorch host capture: operators (forward and backward), shapes, modules, Python calls, threads.

The reference is torch.profiler itself, run on the same loop in the same process.
"""
from __future__ import annotations

import threading
from collections import Counter
from typing import Any, Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import perfprof  # noqa: E402
from perfprof import ProfilerActivity  # noqa: E402
from trace_checks import assert_slices_nest, load_trace  # noqa: E402

STEPS = 4
SCHEDULE = dict(wait=1, warmup=1, active=2)


def mlp_adam() -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, y = torch.randn(16, 32), torch.randint(0, 10, (16,))

    def step() -> None:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


def convnet_sgd() -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
                          nn.Linear(8 * 8 * 8, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    x, y = torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))

    def step() -> None:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()

    return step


WORKLOADS = {"mlp_adam": mlp_adam, "convnet_sgd": convnet_sgd}


def run_torch(make_step: Callable[[], Callable[[], None]], path: str, **options: Any) -> Dict[str, Any]:
    step = make_step()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                schedule=torch.profiler.schedule(**SCHEDULE), **options) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
    prof.export_chrome_trace(path)
    return load_trace(path)


def run_perfprof(make_step: Callable[[], Callable[[], None]], path: str, **options: Any) -> Dict[str, Any]:
    step = make_step()
    with perfprof.profile(activities=[ProfilerActivity.CPU], schedule=perfprof.schedule(**SCHEDULE),
                          **options) as prof:
        for _ in range(STEPS):
            step()
            prof.step()
    prof.export_chrome_trace(path)
    return load_trace(path)


def ops_per_step(trace: Dict[str, Any]) -> Dict[str, List[Dict[str, Any]]]:
    """aten operators inside each ProfilerStep#N, in start order."""
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    steps = [e for e in slices if e["name"].startswith("ProfilerStep#")]
    out = {}
    for step in steps:
        begin, end = step["ts"], step["ts"] + step["dur"]
        ops = [e for e in slices if e.get("cat") == "cpu_op" and e["name"].startswith("aten::")
               and begin <= e["ts"] <= end]
        out[step["name"]] = sorted(ops, key=lambda e: e["ts"])
    return out


def overlap(mine: Counter, theirs: Counter) -> Tuple[float, float]:
    common = sum((mine & theirs).values())
    return common / max(1, sum(mine.values())), common / max(1, sum(theirs.values()))


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_operators_match_torch_profiler_per_step(workload, tmp_path):
    theirs = ops_per_step(run_torch(WORKLOADS[workload], str(tmp_path / "torch.json")))
    mine = ops_per_step(run_perfprof(WORKLOADS[workload], str(tmp_path / "perfprof.json")))
    assert sorted(mine) == sorted(theirs) == ["ProfilerStep#2", "ProfilerStep#3"]
    for step in theirs:
        names_mine = Counter(e["name"] for e in mine[step])
        names_theirs = Counter(e["name"] for e in theirs[step])
        assert "aten::mm" in names_mine  # backward ran and was captured
        precision, recall = overlap(names_mine, names_theirs)
        assert precision >= 0.95 and recall >= 0.95, (step, names_mine - names_theirs, names_theirs - names_mine)


@pytest.mark.parametrize("workload", sorted(WORKLOADS))
def test_inputs_match_torch_profiler(workload, tmp_path):
    theirs = ops_per_step(run_torch(WORKLOADS[workload], str(tmp_path / "torch.json"), record_shapes=True))
    mine = ops_per_step(run_perfprof(WORKLOADS[workload], str(tmp_path / "perfprof.json"), record_shapes=True))
    for step in theirs:
        def inputs(ops):
            return Counter((e["name"], repr(e["args"].get("Input Dims")), repr(e["args"].get("Input type")),
                            repr(e["args"].get("Concrete Inputs"))) for e in ops)

        precision, recall = overlap(inputs(mine[step]), inputs(theirs[step]))
        assert precision >= 0.95 and recall >= 0.95, (inputs(mine[step]) - inputs(theirs[step]))
        assert any(e["args"].get("Sequence number") is not None for e in mine[step])
    addmm = next(e for e in mine["ProfilerStep#2"] if e["name"] == "aten::addmm")
    assert addmm["args"]["Input type"] == ["float", "float", "float", "Scalar", "Scalar"]
    assert addmm["args"]["Concrete Inputs"] == ["", "", "", "1", "1"]


def test_record_op_args_alone_records_argument_values(tmp_path):
    config = perfprof.ExperimentalConfig(record_op_args=True)
    trace = run_perfprof(convnet_sgd, str(tmp_path / "t.json"), experimental_config=config)
    conv = next(e for e in trace["traceEvents"] if e.get("name") == "aten::conv2d")
    assert conv["args"]["Concrete Inputs"] == ["", "", "", "[1, 1]", "[1, 1]", "[1, 1]", "1"]
    assert conv["args"]["Input Dims"][:2] == [[4, 3, 16, 16], [8, 3, 3, 3]]


def test_backward_operators_share_the_forward_sequence_number(tmp_path):
    trace = run_perfprof(mlp_adam, str(tmp_path / "t.json"), record_shapes=True)
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    forward = {e["args"]["Sequence number"] for e in slices if e["name"] == "aten::addmm"}
    backward = {e["args"]["Sequence number"] for e in slices if e["name"] == "AddmmBackward0"}
    assert forward and forward == backward


def test_trace_nests_operators_in_modules_in_steps(tmp_path):
    trace = run_perfprof(mlp_adam, str(tmp_path / "t.json"), record_shapes=True, with_modules=True,
                         with_stack=True)
    assert_slices_nest(trace)
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]

    def enclosing(event):
        return [e for e in slices if e["tid"] == event["tid"] and e is not event
                and e["ts"] <= event["ts"] and event["ts"] + event["dur"] <= e["ts"] + e["dur"]]

    addmm = next(e for e in slices if e["name"] == "aten::addmm")
    around = {e["name"] for e in enclosing(addmm)}
    assert {"nn.Module: Linear_0", "nn.Module: Sequential_0"} & around
    assert any(name.startswith("ProfilerStep#") for name in around)
    modules = [e["name"] for e in slices if e["name"].startswith("nn.Module: ")]
    assert Counter(modules) == Counter({"nn.Module: Sequential_0": 2, "nn.Module: Linear_0": 2,
                                        "nn.Module: ReLU_0": 2, "nn.Module: Linear_1": 2})


def loss_module_per_step() -> Callable[[], None]:
    """A loop making its loss module anew each step (kept alive, so that no two share an
    address: torch.profiler tells modules apart by address)."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
    x, y = torch.randn(4, 8), torch.randint(0, 4, (4,))
    made = []

    def step() -> None:
        made.append(nn.CrossEntropyLoss())
        made[-1](model(x), y).backward()

    return step


def module_names(trace: Dict[str, Any]) -> Counter:
    return Counter(e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("nn.Module: "))


@pytest.mark.parametrize("schedule", [dict(wait=1, warmup=2, active=2), dict(wait=0, warmup=1, active=2, repeat=2)])
@pytest.mark.parametrize("with_stack", [False, True])
def test_modules_are_numbered_as_torch_numbers_them_after_warm_up(schedule, with_stack, tmp_path):
    """Instances of a class are numbered in the order the recorded steps first call them: modules
    made and called in warm-up steps take no number (CrossEntropyLoss_0 is the first recorded
    step's), and each cycle numbers from 0 again."""
    traces: Dict[str, List[Dict[str, Any]]] = {"torch": [], "perfprof": []}
    for name, profiler in (("torch", torch.profiler), ("perfprof", perfprof)):
        step = loss_module_per_step()

        def keep(prof: Any, name: str = name) -> None:
            path = str(tmp_path / f"{name}_{len(traces[name])}.json")
            prof.export_chrome_trace(path)
            traces[name].append(load_trace(path))

        # torch.profiler records modules through its Python tracer only (with_stack).
        options = dict(with_stack=True) if profiler is torch.profiler else dict(with_stack=with_stack)
        with profiler.profile(activities=[profiler.ProfilerActivity.CPU], schedule=profiler.schedule(**schedule),
                              on_trace_ready=keep, with_modules=True, **options) as prof:
            for _ in range(6):
                step()
                prof.step()
    cycles = 2 if schedule.get("repeat") else 1
    assert len(traces["torch"]) == len(traces["perfprof"]) == cycles
    for theirs, mine in zip(traces["torch"], traces["perfprof"]):
        assert module_names(theirs)["nn.Module: CrossEntropyLoss_0"] == 1
        assert module_names(mine) == module_names(theirs)


def test_the_python_frames_around_an_operator_are_its_call_stack(tmp_path):
    trace = run_perfprof(mlp_adam, str(tmp_path / "t.json"), with_stack=True)
    slices = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    addmm = next(e for e in slices if e["name"] == "aten::addmm")
    assert "Call stack" not in addmm.get("args", {})  # as in torch.profiler's traces: the frames carry it

    def span(event: Dict[str, Any]) -> Tuple[int, int]:
        begin = round(event["ts"] * 1000)
        return begin, begin + round(event["dur"] * 1000)

    frames = {e["args"]["Python id"]: e for e in slices if e.get("cat") == "python_function"}
    around = [e for e in frames.values() if e["tid"] == addmm["tid"]
              and span(e)[0] <= span(addmm)[0] and span(addmm)[1] <= span(e)[1]]
    frame = max(around, key=lambda e: span(e)[0])  # the innermost
    stack = []
    while frame is not None:
        stack.append(frame["name"])
        parent = frame["args"]["Python parent id"]
        frame = frames[parent] if parent is not None else None
    assert any("torch/nn/modules/linear.py" in frame and "forward" in frame for frame in stack)
    assert any("test_host_capture.py" in frame and "step" in frame for frame in stack)
    frames = [e["name"] for e in slices if e.get("cat") == "python_function"]
    assert not any("perfprof/" in frame for frame in frames)  # perfprof's own code is not traced


def test_child_threads_capture_only_when_enabled(tmp_path):
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU())
    x = torch.randn(2, 8)
    barrier = threading.Barrier(3)

    def infer(enable: bool) -> None:
        if enable:
            perfprof.profile.enable_profiler_in_child_thread(record_shapes=True, with_modules=True)
        barrier.wait()
        with torch.no_grad():
            for _ in range(3):
                model(x)
        if enable:
            perfprof.profile.disable_profiler_in_child_thread()

    threads = [threading.Thread(target=infer, args=(enable,), name=name)
               for name, enable in (("infer-a", True), ("infer-b", True), ("plain", False))]
    with perfprof.profile(activities=[ProfilerActivity.CPU]) as prof:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    trace = load_trace(str(path))
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "thread_name"}
    per_thread = Counter(names.get(e["tid"]) for e in trace["traceEvents"]
                         if e.get("ph") == "X" and e.get("cat") == "cpu_op")
    assert per_thread["infer-a"] == per_thread["infer-b"] > 0
    assert "plain" not in per_thread
    shaped = [e for e in trace["traceEvents"] if e.get("ph") == "X" and names.get(e["tid"]) == "infer-a"
              and e["name"] == "aten::addmm"]
    assert len(shaped) == 3 and shaped[0]["args"]["Input Dims"] == [[8], [2, 8], [8, 8], [], []]
    assert_slices_nest(trace)


def test_no_operator_capture_outside_collection(tmp_path):
    step = mlp_adam()
    with perfprof.profile(activities=[ProfilerActivity.CPU], schedule=perfprof.schedule(wait=1, active=1)) as prof:
        for _ in range(3):
            step()
            prof.step()
    # After the cycle the observer state is off: torch's profiler can run on this thread again.
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        step()


def test_child_thread_options_are_validated():
    with pytest.raises(TypeError, match="with_stack"):
        perfprof.profile.enable_profiler_in_child_thread(with_stack="yes")


@pytest.mark.parametrize("record_shapes", [False, True])
def test_running_torch_profiler_is_reported_not_broken(record_shapes):
    step = mlp_adam()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as theirs:
        with perfprof.profile(activities=[ProfilerActivity.CPU], record_shapes=record_shapes):
            step()
    assert any(e.name == "aten::addmm" for e in theirs.events())


def test_torch_profiler_on_another_thread_leaves_shapes_without_types(tmp_path):
    """torch's own profiler state is process-wide: while torch.profiler runs, perfprof falls back
    to the observer that records shapes but not types, instead of starting a second session."""
    step = mlp_adam()
    started, done = threading.Event(), threading.Event()

    def run_torch_profiler() -> None:
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
            started.set()
            done.wait()

    other = threading.Thread(target=run_torch_profiler)
    other.start()
    started.wait()
    try:
        with perfprof.profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
            step()
    finally:
        done.set()
        other.join()
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    addmm = [e for e in load_trace(str(path))["traceEvents"] if e.get("name") == "aten::addmm"]
    assert addmm and addmm[0]["args"]["Input Dims"] == [[64], [16, 32], [32, 64], [], []]
    assert "Input type" not in addmm[0]["args"]


def test_cuda_builds_without_gpu_collection_keep_cupti_free(tmp_path, monkeypatch):
    """torch's own state would take CUPTI on a CUDA build; without perfprof's GPU collection
    holding it, shapes come from the observer instead."""
    monkeypatch.setattr(torch.version, "cuda", "13.0")
    trace = run_perfprof(mlp_adam, str(tmp_path / "t.json"), record_shapes=True)
    addmm = next(e for e in trace["traceEvents"] if e.get("name") == "aten::addmm")
    assert addmm["args"]["Input Dims"] == [[64], [16, 32], [32, 64], [], []]
    assert "Input type" not in addmm["args"]


class Failing(nn.Module):
    def forward(self, x):
        raise ValueError("from forward")


def test_module_calls_keep_python_semantics_while_wrapped(tmp_path):
    linear = nn.Linear(4, 4)
    x = torch.randn(2, 4)
    with perfprof.profile(activities=[ProfilerActivity.CPU], with_modules=True) as prof:
        assert torch.equal(linear.__call__(x), linear(x))  # the attribute still binds
        with pytest.raises(ValueError, match="from forward"):
            Failing()(x)
        linear(x)
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    trace = load_trace(str(path))
    assert_slices_nest(trace)
    modules = Counter(e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("nn.Module: "))
    assert modules == Counter({"nn.Module: Linear_0": 3, "nn.Module: Failing_0": 1})
    assert prof.trace.stats["unfinished_ranges"] == 0


def test_module_call_wrapper_is_removed_after_profiling():
    original = nn.Module.__dict__["__call__"]
    step = mlp_adam()
    with perfprof.profile(activities=[ProfilerActivity.CPU], with_modules=True):
        assert nn.Module.__dict__["__call__"] is not original
        assert nn.Module.__call__ is original  # read on the class, as torch.compile reads it
        step()
    assert nn.Module.__dict__["__call__"] is original


def test_compiling_while_modules_are_captured_keeps_one_graph():
    """torch.compile reads Module.__call__ on the class to trace a module call; it must get the
    function, not the C wrapper (fullgraph=True raises at a graph break)."""
    torch._dynamo.reset()
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    with perfprof.profile(activities=[ProfilerActivity.CPU], with_modules=True) as prof:
        compiled(torch.randn(2, 8)).sum().backward()
    modules = {name for name, *_ in prof.trace.ranges() if name.startswith("nn.Module: ")}
    assert modules == {"nn.Module: OptimizedModule_0"}  # the compiled graph calls no module


def profiled_mlp(**options: Any) -> perfprof.profile:
    step = mlp_adam()
    with perfprof.profile(activities=[ProfilerActivity.CPU], **options) as prof:
        for _ in range(2):
            step()
    return prof


def test_export_stacks_writes_folded_stacks_summing_to_self_times(tmp_path):
    prof = profiled_mlp(with_stack=True)
    path = prof.export_stacks(str(tmp_path / "stacks.txt"))
    lines = open(path).read().splitlines()
    assert lines
    total = 0
    for line in lines:
        stack, value = line.rsplit(" ", 1)
        frames = stack.split(";")
        assert all(frames) and int(value) > 0
        total += int(value)
    assert any("aten::addmm" == line.rsplit(" ", 1)[0].split(";")[-1] for line in lines)
    assert any("test_host_capture.py" in line for line in lines)
    # The operators' self times (Python frames inside them not taken out) partition the time the
    # outermost operators and annotations cover.
    prof.export_chrome_trace(str(tmp_path / "trace.json"))
    slices = sorted((event["tid"], event["ts"], event["ts"] + event["dur"])
                    for event in load_trace(str(tmp_path / "trace.json"))["traceEvents"]
                    if event.get("ph") == "X" and event.get("cat") in ("cpu_op", "user_annotation"))
    covered_us, covered_until = 0.0, {}
    for tid, begin, end in slices:
        covered_us += max(0.0, end - max(begin, covered_until.get(tid, begin)))
        covered_until[tid] = max(end, covered_until.get(tid, end))
    assert abs(total - covered_us) <= len(lines)  # each line rounds to whole microseconds


def test_key_averages_table_matches_trace_totals(tmp_path):
    prof = profiled_mlp(record_shapes=True)
    rows = prof.key_averages()
    by_name = {row.key: row for row in rows}
    assert by_name["aten::addmm"].count == 4  # 2 Linear layers x 2 steps
    assert by_name["aten::addmm"].self_cpu_time_total <= by_name["aten::addmm"].cpu_time_total
    assert by_name["aten::linear"].cpu_time_total >= by_name["aten::addmm"].cpu_time_total / 2
    table = rows.table(sort_by="self_cpu_time_total", row_limit=5)
    lines = table.splitlines()
    assert "Self CPU %" in lines[1] and "# of Calls" in lines[1]
    assert len([line for line in lines if line.startswith("aten::")]) <= 5
    shaped = prof.key_averages(group_by_input_shape=True)
    assert sorted(row.input_shapes for row in shaped if row.key == "aten::addmm") == [
        [[10], [16, 64], [64, 10], [], []], [[64], [16, 32], [32, 64], [], []]]
    with pytest.raises(ValueError, match="sort_by"):
        rows.table(sort_by="nonsense")
    with pytest.raises(ValueError, match="group_by_stack_n"):
        prof.key_averages(group_by_stack_n=-1)


def test_flops_from_shapes(tmp_path):
    prof = profiled_mlp(with_flops=True)
    path = tmp_path / "t.json"
    prof.export_chrome_trace(str(path))
    trace = load_trace(str(path))
    flops = {tuple(map(tuple, e["args"]["Input Dims"][1:3])): e["args"].get("flops")
             for e in trace["traceEvents"] if e.get("name") == "aten::addmm"}
    assert flops[((16, 32), (32, 64))] == 2 * 16 * 32 * 64
    assert flops[((16, 64), (64, 10))] == 2 * 16 * 64 * 10
    total = sum(row.flops for row in prof.key_averages())
    mm_rows = [row for row in prof.key_averages() if row.key in ("aten::addmm", "aten::mm")]
    assert total == sum(row.flops for row in mm_rows) + sum(
        row.flops for row in prof.key_averages() if row.key in ("aten::mul", "aten::add"))
    # torch's header: the unit of the smallest count (1000s), each count in it, "--" for none.
    smallest = min(row.flops for row in prof.key_averages() if row.flops > 0)
    unit = ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs"][len(str(smallest)) // 3 - (len(str(smallest)) % 3 == 0)]
    table = prof.key_averages().table(row_limit=-1)
    assert f"Total {unit}" in table.splitlines()[1]
    addmm = next(line for line in table.splitlines() if line.startswith("aten::addmm"))
    scale = 1000 ** ["FLOPs", "KFLOPs", "MFLOPs", "GFLOPs"].index(unit)
    assert addmm.split()[-1] == f"{sum(row.flops for row in mm_rows if row.key == 'aten::addmm') / scale:.3f}"


def test_export_stacks_puts_the_step_and_user_ranges_at_the_root_then_the_scripts_frames(tmp_path):
    step = mlp_adam()

    def train_step():
        with perfprof.record_function("my block"):
            step()

    with perfprof.profile(activities=[ProfilerActivity.CPU], with_stack=True,
                          schedule=perfprof.schedule(wait=0, warmup=0, active=2, repeat=1)) as prof:
        for _ in range(2):
            train_step()
            prof.step()
    stacks = [line.rsplit(" ", 1)[0].split(";") for line in open(prof.export_stacks(str(tmp_path / "s.txt")))]
    operators = [frames for frames in stacks if frames[-1] == "aten::addmm"]
    assert operators
    for frames in operators:
        # A flame graph per step, then per user range, then the script's frames down to the operator.
        assert frames[0] in ("ProfilerStep#0", "ProfilerStep#1") and frames[1] == "my block"
        assert any("test_host_capture.py" in frame and frame.endswith(": train_step") for frame in frames[2:])
        assert not any(frame.startswith("ProfilerStep#") or frame == "my block" for frame in frames[2:])


def test_export_stacks_rejects_bad_input(tmp_path):
    prof = profiled_mlp()
    with pytest.raises(ValueError, match="metric"):
        prof.export_stacks(str(tmp_path / "s.txt"), metric="wall")
    with pytest.raises(TypeError, match="path"):
        prof.export_stacks(42)
    with pytest.raises(RuntimeError, match="no trace"):
        perfprof.profile().export_stacks(str(tmp_path / "s.txt"))


IMPORT_AFTER_START = """
import sys
import perfprof

before = len(sys.meta_path)
seen = []
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                      schedule=perfprof.schedule(wait=0, warmup=0, active=1, repeat=30),
                      on_trace_ready=lambda prof: seen.extend(r[0] for r in prof.trace.ranges())) as prof:
    for _ in range(29):  # cycles before torch is imported: one import hook, not one per cycle
        prof.step()
    hooks = len(sys.meta_path) - before
    import torch
    torch.ones(2).add(1)
    prof.step()
print(hooks, [name for name in seen if name == "aten::add"])
"""


def test_operators_are_captured_from_an_import_of_torch_after_the_profile_began():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", IMPORT_AFTER_START], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[-2] == "1 ['aten::add']"
