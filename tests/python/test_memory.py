"""Memory profiling: allocator events, categories, the memory timeline exports and the CSV tables.

The reference for categories is torch.profiler's own export_memory_timeline, run on the same loop
in the same process.
"""
from __future__ import annotations

import csv
import glob
import gzip
import json
import warnings
from typing import Callable, Dict, List, Tuple

import pytest

torch = pytest.importorskip("torch")
from torch import nn  # noqa: E402

import perfprof  # noqa: E402
from perfprof import ProfilerActivity  # noqa: E402
from perfprof.memory import CATEGORIES  # noqa: E402

STEPS = 4


def profiled(work: Callable[[], None], **options) -> perfprof.profile:
    with perfprof.profile(activities=[ProfilerActivity.CPU], profile_memory=True, **options) as prof:
        work()
    return prof


def timeline(prof) -> Tuple[List[int], List[Dict[str, int]]]:
    times, sizes, _, _ = prof.trace.memory_timeline(0, -1)
    return times, [dict(zip(CATEGORIES, point)) for point in sizes]


def peak(prof, category: str) -> int:
    return max(point[category] for point in timeline(prof)[1])


def allocation_rows(prof, tmp_path) -> List[Dict[str, str]]:
    record, operators = tmp_path / "memory_record.csv", tmp_path / "operator_memory.csv"
    prof.trace.export_memory_tables(str(record), str(operators))
    with open(operators, newline="") as file:
        return list(csv.DictReader(file))


def nbytes(*tensors) -> int:
    return sum(t.untyped_storage().nbytes() for t in tensors)


# -- one category at a time ----------------------------------------------------------------------

def test_parameters_count_whole_from_the_first_point_even_without_backward():
    model = nn.Linear(100, 50)
    x = torch.randn(8, 100)
    prof = profiled(lambda: model(x))
    _, points = timeline(prof)
    assert {point["PARAMETER"] for point in points} == {nbytes(model.weight, model.bias)}


def test_gradients_made_by_backward_without_an_optimizer():
    model = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 4))
    x = torch.randn(16, 64)
    prof = profiled(lambda: model(x).sum().backward())
    assert peak(prof, "GRADIENT") == nbytes(*(p.grad for p in model.parameters()))
    assert peak(prof, "PARAMETER") == nbytes(*model.parameters())


def test_adam_state_created_by_the_first_step():
    model = nn.Linear(64, 32)
    optimizer = torch.optim.Adam(model.parameters())

    def step() -> None:
        model(torch.randn(8, 64)).sum().backward()
        optimizer.step()

    prof = profiled(step)
    state = [t for s in optimizer.state.values() for t in s.values()]
    assert len(state) == 6  # step, exp_avg, exp_avg_sq per parameter
    assert peak(prof, "OPTIMIZER_STATE") == nbytes(*state)


def test_input_batch_and_activation_freed_in_backward(tmp_path):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))

    def step() -> None:
        x, y = torch.randn(32, 64), torch.randn(32, 10)
        nn.functional.mse_loss(model(x), y).backward()

    prof = profiled(step, with_modules=True)
    rows = allocation_rows(prof, tmp_path)
    batch, target = rows[0], rows[1]
    assert (batch["Category"], float(batch["Size(KiB)"])) == ("INPUT", 32 * 64 * 4 / 1024)
    assert (target["Category"], float(target["Size(KiB)"])) == ("INPUT", 32 * 10 * 4 / 1024)

    relu_output = next(r for r in rows if r["Module"] == "ReLU_0")
    assert relu_output["Category"] == "ACTIVATION"
    backward_begin_us = min(begin for name, _, _, begin, *_ in prof.trace.ranges()
                            if name.startswith("autograd::engine::evaluate_function")) / 1e3
    backward_begin_us += prof.trace.unix_offset_ns / 1e3
    assert float(relu_output["Release Time(us)"]) > backward_begin_us  # kept for backward, then freed


def test_temporary_allocated_and_freed_inside_one_operator(tmp_path):
    prediction, target = torch.randn(32, 10), torch.randn(32, 10)
    prof = profiled(lambda: nn.functional.mse_loss(prediction, target))
    rows = allocation_rows(prof, tmp_path)
    # mse_loss computes the squared differences into a buffer it frees before returning.
    buffer = [r for r in rows if r["Category"] == "TEMPORARY" and float(r["Size(KiB)"]) == 32 * 10 * 4 / 1024]
    assert len(buffer) == 1 and buffer[0]["Release Time(us)"]


def test_autograd_detail_is_what_backward_makes_besides_gradients(tmp_path):
    model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
    x = torch.randn(32, 64)
    prof = profiled(lambda: model(x).sum().backward())
    rows = allocation_rows(prof, tmp_path)
    # threshold_backward (ReLU's gradient) is neither a parameter's gradient nor kept.
    detail = [r for r in rows if r["Name"] == "aten::threshold_backward"]
    assert [r["Category"] for r in detail] == ["AUTOGRAD_DETAIL"]


# -- the same loops through torch.profiler -------------------------------------------------------

def mlp_adam() -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
    optimizer = torch.optim.Adam(model.parameters())

    def step() -> None:
        x, y = torch.randn(64, 256), torch.randn(64, 10)
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def convnet_sgd_momentum(compiled: bool = False) -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(32, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    forward = torch.compile(model) if compiled else model

    def step() -> None:
        x, y = torch.randn(16, 3, 32, 32), torch.randint(0, 10, (16,))
        nn.functional.cross_entropy(forward(x), y).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def train_then_evaluate_no_grad() -> Callable[[], None]:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(128, 256), nn.ReLU(), nn.Linear(256, 10))
    optimizer = torch.optim.Adam(model.parameters())

    def step() -> None:
        nn.functional.mse_loss(model(torch.randn(32, 128)), torch.randn(32, 10)).backward()
        optimizer.step()
        optimizer.zero_grad()
        with torch.no_grad():
            for _ in range(2):
                model(torch.randn(64, 128)).sum()

    return step


def torch_timeline(make_loop, tmp_path, schedule=None):
    """torch.profiler's ([times, sizes], raw changes) for the loop; with `schedule`, STEPS steps
    with prof.step() after each."""
    step = make_loop()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                profile_memory=True, with_stack=True,
                                schedule=schedule and torch.profiler.schedule(**schedule)) as prof:
        for _ in range(STEPS):
            step()
            if schedule:
                prof.step()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # torch deprecates its own exporter
        prof.export_memory_timeline(str(tmp_path / "torch.json"), device="cpu")
        prof.export_memory_timeline(str(tmp_path / "torch.raw.json.gz"), device="cpu")
    with gzip.open(tmp_path / "torch.raw.json.gz", "rt") as raw:
        return json.loads((tmp_path / "torch.json").read_text()), json.load(raw)


def perfprof_timeline(make_loop, tmp_path, schedule=None):
    """perfprof's ([times, sizes], raw changes) for the loop, run as torch_timeline runs it."""
    step = make_loop()
    with perfprof.profile(activities=[ProfilerActivity.CPU], profile_memory=True,
                          schedule=schedule and perfprof.schedule(**schedule)) as prof:
        for _ in range(STEPS):
            step()
            if schedule:
                prof.step()
    prof.export_memory_timeline(str(tmp_path / "perfprof.json"), device="cpu")
    prof.export_memory_timeline(str(tmp_path / "perfprof.raw.json"), device="cpu")
    return (json.loads((tmp_path / "perfprof.json").read_text()),
            json.loads((tmp_path / "perfprof.raw.json").read_text()))


def peaks(timeline_json) -> Dict[str, int]:
    """Each category's peak in a [times, sizes] timeline (sizes hold a leading 0, then the
    categories in the order perfprof uses)."""
    return {name: max(point[i + 1] for point in timeline_json[1]) for i, name in enumerate(CATEGORIES)}


def totals_by_change(raw) -> List[int]:
    """Total bytes after each allocation or free (category changes move bytes, not add them)."""
    totals, total = [], 0
    for _, action, size, _ in sorted(raw, key=lambda change: (change[0], change[1])):
        total += size
        if action != 3:
            totals.append(total)
    return totals


@pytest.mark.parametrize("make_loop", [mlp_adam, convnet_sgd_momentum, train_then_evaluate_no_grad])
def test_category_peaks_and_total_agree_with_torch_profiler(make_loop, tmp_path):
    reference, reference_raw = torch_timeline(make_loop, tmp_path)
    ours, our_raw = perfprof_timeline(make_loop, tmp_path)
    reference_peaks, our_peaks = peaks(reference), peaks(ours)
    for name in CATEGORIES:
        if reference_peaks[name]:
            assert our_peaks[name] == pytest.approx(reference_peaks[name], rel=0.10), name

    # Total bytes over the run. The two runs differ in speed (each profiler has its own
    # overhead), so the curves are compared along the run's allocations and frees rather than
    # by clock: the same program makes the same ones in the same order.
    ours_total, reference_total = totals_by_change(our_raw), totals_by_change(reference_raw)
    assert len(ours_total) == pytest.approx(len(reference_total), rel=0.05)
    tolerance = 0.05 * max(reference_total)
    for percent in range(101):
        at_ours = ours_total[(len(ours_total) - 1) * percent // 100]
        at_reference = reference_total[(len(reference_total) - 1) * percent // 100]
        assert abs(at_ours - at_reference) <= tolerance, f"{percent}% through the run"


def embedding_with_cache() -> Callable[[], None]:
    """Token embeddings and one attention whose keys and values go through a cache that starts
    as an empty tensor, as transformers' DynamicCache starts (GPT-2 and others)."""
    torch.manual_seed(0)
    embedding, project, head = nn.Embedding(100, 32), nn.Linear(32, 64), nn.Linear(32, 100)
    optimizer = torch.optim.AdamW([*embedding.parameters(), *project.parameters(), *head.parameters()])

    def step() -> None:
        tokens = torch.randint(0, 100, (4, 16))
        x = embedding(tokens)
        k, v = project(x).chunk(2, dim=-1)
        keys, values = torch.cat([torch.tensor([]), k], dim=-2), torch.cat([torch.tensor([]), v], dim=-2)
        attended = nn.functional.scaled_dot_product_attention(x, keys, values)
        nn.functional.cross_entropy(head(attended).flatten(0, 1), tokens.flatten()).backward()
        optimizer.step()
        optimizer.zero_grad()

    return step


def test_operator_no_schema_accepts_makes_its_output_from_nothing(tmp_path):
    """torch.profiler matches an operator to its schemas by the type of each recorded input: a
    list holding a tensor without storage (the empty cache) is no Tensor[], so that aten::cat is
    no node of the data flow and the keys and values it allocates are INPUT, not ACTIVATION."""
    reference, _ = torch_timeline(embedding_with_cache, tmp_path)
    ours, _ = perfprof_timeline(embedding_with_cache, tmp_path)
    assert peaks(ours) == peaks(reference)

    step = embedding_with_cache()
    prof = profiled(step)
    cache_rows = [r for r in allocation_rows(prof, tmp_path) if r["Name"] == "aten::cat"
                  and float(r["Size(KiB)"]) == 4 * 16 * 32 * 4 / 1024]
    assert [r["Category"] for r in cache_rows] == ["INPUT", "INPUT"]


def test_schemas_are_matched_by_the_kinds_of_recorded_inputs():
    from perfprof.memory import write_flags

    assert write_flags("aten::cat", "Li") == [False, False]  # Tensor[] tensors, int dim
    assert write_flags("aten::cat", "li") is None  # a list with a tensor without identity
    assert write_flags("aten::add_", "TTi") == [True, False, False]  # add_.Tensor(Tensor(a!) self, ...)
    assert write_flags("aten::mul", "TT") == [False, False]
    assert write_flags("aten::mul", "NT") is None  # torch takes a tensor without identity for None
    assert write_flags("aten::view", "TN") == [False, False]  # int lists are recorded as None
    assert write_flags("aten::index", "TL") == [False, False]
    assert write_flags("aten::add_", "TT") is None  # no schema of two inputs
    assert write_flags("MmBackward0", "") is None  # no operator name


def test_an_unreadable_event_is_counted_and_the_others_read():
    from perfprof import _core
    from perfprof.memory import write_flags

    class Unreadable:
        @property
        def extra_fields(self):
            raise RuntimeError("a field torch no longer has")

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                                profile_memory=True) as prof:
        torch.ones(1000).mul(2)
    roots = prof.profiler.kineto_results.experimental_event_tree()
    try:
        alone = _core.TorchMemoryImport(roots, write_flags).add_to_recorder({})
        _core.discard()
        mixed = _core.TorchMemoryImport([Unreadable(), *roots], write_flags).add_to_recorder({})
    finally:
        _core.discard()
    assert alone["allocations"] == mixed["allocations"] >= 4 and alone["failed_reads"] == 0
    assert mixed["failed_reads"] == 2  # its extra fields and its children
    assert "extra_fields: RuntimeError: a field torch no longer has" in mixed["first_failure"]


def test_warm_up_steps_change_no_category(tmp_path):
    """What the warm-up steps saw (gradients of those steps, freed before the window) is no
    memory of the window: torch.profiler does not record warm-up steps at all."""
    schedule = dict(wait=0, warmup=2, active=2, repeat=1)
    reference, _ = torch_timeline(mlp_adam, tmp_path, schedule)
    ours, _ = perfprof_timeline(mlp_adam, tmp_path, schedule)
    assert peaks(ours) == peaks(reference)
    assert peaks(ours)["GRADIENT"] > 0


def test_compiled_model_sees_no_global_hook_and_keeps_one_graph(tmp_path, recwarn):
    """Module parameters are seen through perfprof's module-call wrapper, which torch.compile
    traces as the plain Module.__call__: no "global hooks" warning at each call, no graph break
    (fullgraph=True raises at one), and torch.profiler's categories."""

    def compiled_mlp() -> Callable[[], None]:
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        compiled = torch.compile(model, backend="aot_eager", fullgraph=True)  # dynamo and autograd as
        optimizer = torch.optim.Adam(model.parameters())  # inductor runs them, without its C++ build

        def step() -> None:
            nn.functional.mse_loss(compiled(torch.randn(32, 64)), torch.randn(32, 10)).backward()
            optimizer.step()
            optimizer.zero_grad()

        return step

    torch._dynamo.reset()
    ours, _ = perfprof_timeline(compiled_mlp, tmp_path)  # compiles inside the window
    assert not [w for w in recwarn if "global hooks" in str(w.message)]
    torch._dynamo.reset()
    reference, _ = torch_timeline(compiled_mlp, tmp_path)
    assert peaks(ours) == peaks(reference)
    assert peaks(ours)["PARAMETER"] > 0


@pytest.fixture(scope="module")
def compiled_convnet_step() -> Callable[[], None]:
    torch._dynamo.reset()
    step = convnet_sgd_momentum(compiled=True)
    step()  # compiles (inductor) before any profiler runs
    return step


@pytest.mark.parametrize("schedule", [None, dict(wait=1, warmup=1, active=2),
                                      dict(wait=0, warmup=0, active=2, repeat=1),
                                      dict(wait=0, warmup=2, active=2, repeat=1)])
def test_compiled_training_loop_categories_equal_torch_profilers(compiled_convnet_step, schedule, tmp_path):
    """Inductor's backward gives the conv weight gradients in another layout than the weights',
    so AccumulateGrad copies each into a new tensor every step. torch.profiler knows an optimizer's
    gradients from its first recorded step() only (its Python tracer keeps the tensors it saw
    then): the later steps' copies are AUTOGRAD_DETAIL, and perfprof's hooks see them so too.
    Every category's peak, to the byte, with and without warm-up steps."""
    reference, _ = torch_timeline(lambda: compiled_convnet_step, tmp_path, schedule)
    ours, _ = perfprof_timeline(lambda: compiled_convnet_step, tmp_path, schedule)
    assert peaks(ours) == peaks(reference)
    assert peaks(ours)["AUTOGRAD_DETAIL"] > 0 and peaks(ours)["GRADIENT"] > 0


# -- export formats and errors -------------------------------------------------------------------

@pytest.fixture(scope="module")
def trained():
    step = mlp_adam()
    with perfprof.profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        for _ in range(2):
            step()
    return prof


def test_json_gz_and_raw_files_tell_the_same_story(trained, tmp_path):
    plain = json.loads(open(trained.export_memory_timeline(str(tmp_path / "m.json"))).read())
    with gzip.open(trained.export_memory_timeline(str(tmp_path / "m.json.gz")), "rt") as file:
        assert json.load(file) == plain
    raw = json.loads(open(trained.export_memory_timeline(str(tmp_path / "m.raw.json"))).read())
    with gzip.open(trained.export_memory_timeline(str(tmp_path / "m.raw.json.gz")), "rt") as file:
        assert json.load(file) == raw

    times, sizes = plain
    assert len(times) == len(sizes) and times == sorted(set(times))
    assert all(len(point) == 1 + len(CATEGORIES) and point[0] == 0 for point in sizes)
    final = [0] * len(CATEGORIES)
    for time_ns, action, size, category in raw:
        assert action in (1, 2, 3, 4) and 0 <= category < len(CATEGORIES)
        assert time_ns == -1 or time_ns // 1000 >= times[0]
        final[category] += size
    assert final == sizes[-1][1:]


def test_html_is_a_self_contained_plot(trained, tmp_path):
    page = open(trained.export_memory_timeline(str(tmp_path / "memory.html"))).read()
    assert "<svg" in page and "Peak total of the categories" in page and "Allocator's max allocated" in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page
    for name in CATEGORIES:
        assert name in page


def test_html_renders_in_headless_chromium(trained, tmp_path):
    from chromium_check import find_chromium, non_background_fraction, screenshot

    if find_chromium() is None:
        pytest.skip("no Chromium on this machine (scripts/install-deps.sh --test installs it)")
    page = trained.export_memory_timeline(str(tmp_path / "memory.html"))
    picture = tmp_path / "memory.png"
    screenshot(page, str(picture))
    assert non_background_fraction(str(picture)) > 0.05


def test_export_errors_name_the_problem(trained, tmp_path):
    with pytest.raises(ValueError, match="unknown suffix"):
        trained.export_memory_timeline(str(tmp_path / "m.csv"))
    with pytest.raises(ValueError, match="no memory events on device 'cuda:0'.*cpu"):
        trained.export_memory_timeline(str(tmp_path / "m.json"), device="cuda:0")
    with pytest.raises(TypeError, match="'device' must be a str"):
        trained.export_memory_timeline(str(tmp_path / "m.json"), device=0)
    with pytest.raises(TypeError, match="'path'"):
        trained.export_memory_timeline(3)

    without = perfprof.profile(activities=[ProfilerActivity.CPU])
    with pytest.raises(RuntimeError, match="no trace yet"):
        without.export_memory_timeline(str(tmp_path / "m.json"))
    with without:
        torch.ones(4) + 1
    with pytest.raises(ValueError, match="without profile_memory=True"):
        without.export_memory_timeline(str(tmp_path / "m.json"))


def test_no_allocation_in_the_window_is_a_clear_error(tmp_path):
    prof = profiled(lambda: None)
    with pytest.raises(ValueError, match="no memory events were recorded"):
        prof.export_memory_timeline(str(tmp_path / "m.json"))


# -- the trace and the run directory -------------------------------------------------------------

def test_trace_memory_events_are_written_as_torch_writes_them(trained, export):
    trace = export(trained)
    events = [e for e in trace["traceEvents"] if e.get("name") == "[memory]"]
    assert len(events) == trained.trace.num_memory_events > 0
    op_threads = {e["tid"] for e in trace["traceEvents"] if e.get("cat") == "cpu_op"}
    for event in events:
        assert (event["ph"], event["s"], event["cat"]) == ("i", "t", "cpu_instant_event")
        assert set(event["args"]) == {"Total Reserved", "Total Allocated", "Bytes", "Addr", "Device Type", "Device Id"}
        assert (event["args"]["Device Type"], event["args"]["Device Id"]) == (0, -1)
        assert event["tid"] in op_threads
    allocated = [e["args"]["Bytes"] for e in events]
    assert any(b > 0 for b in allocated) and any(b < 0 for b in allocated)
    assert sum(e["args"]["Bytes"] for e in events if e["args"]["Bytes"] > 0) > 0


def test_run_directory_has_the_memory_tables(tmp_path):
    step = mlp_adam()
    with perfprof.profile(activities=[ProfilerActivity.CPU], profile_memory=True, with_modules=True,
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path))):
        step()
    output = perfprof.trace_dir_of(glob.glob(str(tmp_path / "*_perfprof"))[0])
    with open(f"{output}/memory_record.csv", newline="") as file:
        record = list(csv.DictReader(file))
    with open(f"{output}/operator_memory.csv", newline="") as file:
        operators = list(csv.DictReader(file))
    assert record and all(r["Component"] == "PyTorch" and r["Device Type"] == "CPU" for r in record)
    assert {r["Category"] for r in operators} >= {"INPUT", "ACTIVATION", "GRADIENT", "OPTIMIZER_STATE"}
    assert {r["Module"] for r in operators} >= {"Linear_0", "ReLU_0"}
    released = [r for r in operators if r["Release Time(us)"]]
    assert released and all(float(r["Duration(us)"]) >= 0 for r in released)


def test_memory_is_not_recorded_while_torch_profiler_runs(tmp_path, caplog):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]):
        prof = profiled(lambda: torch.ones(1000) * 2)
    assert prof.trace.num_memory_events == 0
    with pytest.raises(ValueError, match="no memory events were recorded"):
        prof.export_memory_timeline(str(tmp_path / "m.json"))


def test_memory_by_operator_and_the_allocations_of_a_time_range(tmp_path):
    """Float32 tensors of known sizes, two kept past the stop: torch.empty(256) twice (1 KiB each,
    held), torch.ones(1024) (4 KiB, allocated by its aten::empty, freed) and torch.zeros(512)
    (2 KiB in aten::empty, freed) + 1 (2 KiB in aten::add, held)."""
    from perfprof import analysis

    config = perfprof.ExperimentalConfig(export_type=["text", "db"])
    with perfprof.profile(activities=[ProfilerActivity.CPU], profile_memory=True, experimental_config=config,
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path))):
        kept = [torch.empty(256), torch.empty(256)]
        ones = torch.ones(1024)
        del ones
        kept.append(torch.zeros(512) + 1)
    (run_dir,) = [path for path in tmp_path.iterdir() if path.is_dir()]
    with analysis.open_run(str(run_dir)) as run:
        rows = {row["operator"]: row for row in analysis.memory_by_operator(run, top=-1).to_dicts()}
        allocations = analysis.memory_allocations(run).to_dicts()
        times = [row["allocation_time_ns"] for row in allocations]
        second_and_third = analysis.memory_allocations(run, start_ns=times[1], end_ns=times[3]).to_dicts()
    empty, add = rows["aten::empty"], rows["aten::add"]
    assert (empty["deviceType"], empty["allocations"], empty["allocated_bytes"], empty["largest_bytes"],
            empty["freed"], empty["held_bytes"]) == ("CPU", 4, 1024 + 1024 + 4096 + 2048, 4096, 2, 2048)
    assert (add["allocations"], add["allocated_bytes"], add["freed"], add["held_bytes"], add["avg_lifetime_ns"]) == \
        (1, 2048, 0, 2048, None)
    assert empty["avg_lifetime_ns"] > 0
    assert list(rows)[0] == "aten::empty"  # most bytes first
    # Every allocation, in allocation order: the factories' first (kept, kept, freed ones).
    assert [(row["operator"], row["size_bytes"]) for row in allocations[:4]] == \
        [("aten::empty", 1024), ("aten::empty", 1024), ("aten::empty", 4096), ("aten::empty", 2048)]
    assert times == sorted(times) and (allocations[0]["release_time_ns"], allocations[0]["lifetime_ns"]) == (None, None)
    assert allocations[2]["lifetime_ns"] == allocations[2]["release_time_ns"] - times[2] > 0
    assert len(allocations) == sum(row["allocations"] for row in rows.values())
    assert [row["size_bytes"] for row in second_and_third] == [1024, 4096]  # [start, end): the 4th is out
