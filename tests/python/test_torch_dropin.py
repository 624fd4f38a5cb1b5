"""A script that switches its import from torch.profiler to perfprof behaves the same (issue 32,
part A): each test runs one snippet under both profilers and compares what a user of
torch.profiler reads, in events(), key_averages() and the Chrome trace.

- torch's own record_function in profiled code (libraries call it) is a user annotation;
- events() has torch 2.13's FunctionEvent fields;
- _RecordFunctionFast's keyword inputs (torch.compile's Triton launchers: grid, stream) are in
  the trace's args;
- the trace carries Kineto's window markers."""
from __future__ import annotations

import json
from typing import Any, Callable, Dict, List

import pytest

import perfprof

torch = pytest.importorskip("torch")

# What the "annotated" snippet opens: the torch ranges a library or torch.compile opens.
ANNOTATIONS = ("plain", "## TEST 1 ##", "fast")


def profiled(profiler: Any, body: Callable[[], None], **options: Any) -> Any:
    """`body` run under `profiler`'s profile (torch.profiler or perfprof), CPU activity."""
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options) as prof:
        body()
    return prof


def both(body: Callable[[], None], **options: Any):
    """(torch.profiler's profile, perfprof's) of the same `body`."""
    return profiled(torch.profiler, body, **options), profiled(perfprof, body, **options)


def trace_events(prof: Any, path) -> List[Dict[str, Any]]:
    prof.export_chrome_trace(str(path))
    with open(path) as f:
        return json.load(f)["traceEvents"]


def annotated() -> None:
    """torch's record_function with and without args, and the fast context manager torch.compile's
    launchers use, with keyword inputs (its "scope" makes it a user annotation when recorded)."""
    x = torch.ones(4)
    with torch.profiler.record_function("plain"):
        x.mul(2)
    with torch.autograd.profiler.record_function("## TEST 1 ##", "1, 2, 3"):
        x.mul(2)
    with torch._C._profiler._RecordFunctionFast("fast", [x], {"grid": "grid(4,)", "stream": 0, "num_warps": 4,
                                                                "scope": "user_scope"}):
        x.add(1)


def by_name(events, names=ANNOTATIONS) -> Dict[str, Any]:
    return {event.name: event for event in events if event.name in names}


# -- torch's record_function --------------------------------------------------------------------

@pytest.mark.parametrize("options", [{}, {"record_shapes": True}, {"with_stack": True}],
                         ids=["operators", "shapes", "stack"])
def test_torchs_record_function_is_a_user_annotation_as_in_torch(options, tmp_path):
    theirs, ours = both(annotated, **options)
    expected = {name: event.is_user_annotation for name, event in by_name(theirs.events()).items()}
    assert expected["plain"] and expected["## TEST 1 ##"]
    assert {name: event.is_user_annotation for name, event in by_name(ours.events()).items()} == expected
    rows = {row.key: row.is_user_annotation for row in ours.key_averages() if row.key in ANNOTATIONS}
    assert rows == expected
    categories = {event["name"]: event["cat"] for event in trace_events(ours, tmp_path / "ours.json")
                  if event.get("name") in ANNOTATIONS}
    assert categories == {event["name"]: event["cat"] for event in trace_events(theirs, tmp_path / "theirs.json")
                          if event.get("name") in ANNOTATIONS}


def test_record_functions_args_are_one_input_as_in_torch():
    theirs, ours = both(annotated, record_shapes=True)
    assert by_name(theirs.events())["## TEST 1 ##"].input_shapes == [[]]
    assert {name: event.input_shapes for name, event in by_name(ours.events()).items()} == \
        {name: event.input_shapes for name, event in by_name(theirs.events()).items()}


def test_operators_stay_operators_and_torch_is_given_back_its_record_function(tmp_path):
    """The operators inside an annotation are cpu_op, and once profiling stops torch's
    record_function is torch's own again."""
    enter = torch.autograd.profiler.record_function.__dict__["__enter__"]
    theirs, ours = both(annotated)
    assert torch.autograd.profiler.record_function.__dict__["__enter__"] is enter
    operators = [event.name for event in ours.events() if not event.is_user_annotation]
    assert operators == [event.name for event in theirs.events() if not event.is_user_annotation]
    assert "aten::mul" in operators


# -- events(): torch 2.13's FunctionEvent fields ---------------------------------------------------

# Fields whose values are the same under both profilers, event for event.
SAME_FIELDS = ("structured_input_shapes", "structured_input_strides", "input_dtypes", "concrete_inputs", "kwinputs",
               "activity_type", "is_python_function", "flow_type", "flow_start", "device_index", "is_user_annotation")


def training_step() -> None:
    """Forward and backward (fwdbwd flows), a tensor list input, scalars of each kind, and a
    launch with keyword inputs."""
    x = torch.ones(4, requires_grad=True)
    y = (x * 2).sum()
    y.backward()
    torch.cat([x, x]).clamp(min=0.5, max=3).div(2, rounding_mode="floor")
    fast_launch()


def operator_events(prof: Any) -> Dict[tuple, Any]:
    """The operator and annotation events by (name, how many of that name came before)."""
    seen: Dict[str, int] = {}
    events = {}
    for event in prof.events():
        if event.activity_type in ("cpu_op", "user_annotation"):
            events[(event.name, seen.get(event.name, 0))] = event
            seen[event.name] = seen.get(event.name, 0) + 1
    return events


@pytest.mark.parametrize("options", [{}, {"record_shapes": True}], ids=["operators", "shapes"])
def test_events_have_torchs_fields_with_torchs_values(options):
    theirs, ours = both(training_step, **options)
    their_events, our_events = operator_events(theirs), operator_events(ours)
    assert their_events.keys() == our_events.keys()
    # Without record_shapes perfprof records no autograd sequence numbers, so no fwdbwd flows
    # (docs/trace_format.md); torch does.
    fields = SAME_FIELDS if options else tuple(f for f in SAME_FIELDS if not f.startswith("flow_"))
    for key, their_event in their_events.items():
        assert {field: getattr(our_events[key], field) for field in fields} == \
            {field: getattr(their_event, field) for field in fields}, key
    if options:
        assert their_events[("aten::cat", 0)].structured_input_shapes == [[[4], [4]], []]
        assert their_events[("aten::clamp", 0)].concrete_inputs == [None, 0.5, 3]
        assert their_events[("triton_poi_fused_add_0", 0)].kwinputs == KEYWORDS


def test_each_forward_and_backward_pair_shares_a_flow_as_in_torch():
    theirs, ours = both(training_step, record_shapes=True)

    def pairs(prof):
        flows: Dict[int, Dict[bool, str]] = {}
        for event in prof.events():
            if event.flow_type == 1:
                flows.setdefault(event.flow_id, {})[event.flow_start] = event.name
        return sorted((ends[True], ends[False]) for ends in flows.values())

    assert pairs(ours) == pairs(theirs) == [("aten::mul", "MulBackward0"), ("aten::sum", "SumBackward0")]


def test_the_events_ids_are_those_of_the_trace(tmp_path):
    """python_id and the fwdbwd flow ids read the same in events() as in the Chrome trace."""
    ours = profiled(perfprof, training_step, record_shapes=True, with_stack=True)
    trace = trace_events(ours, tmp_path / "t.json")
    python_ids = {(event["tid"], round(event["ts"], 3), event["name"]): event["args"]["Python id"]
                  for event in trace if event.get("cat") == "python_function" and event["ph"] in ("X", "b")}
    frames = [event for event in ours.events() if event.is_python_function]
    assert frames and len(frames) == len(python_ids)
    assert {(e.thread, round(e.time_range.start, 3), e.name): e.python_id for e in frames} == python_ids
    flow_ends = {(event["id"], event["ph"] == "s"): (event["tid"], round(event["ts"], 3))
                 for event in trace if event.get("cat") == "fwdbwd"}
    linked = [event for event in ours.events() if event.flow_type == 1]
    assert linked and len(linked) == len(flow_ends)
    for event in linked:
        assert flow_ends[(event.flow_id, event.flow_start)] == (event.thread, round(event.time_range.start, 3))
    assert all(event.python_id == -1 and not event.is_python_function for event in ours.events()
               if event.activity_type != "python_function")


def test_gpu_events_ids_flows_and_devices_are_those_of_the_trace(tmp_path):
    """With GPU collection (the CUPTI test double): each event's external_id, ac2g flow, category
    and device_index are its trace event's (External id, the flow's id, cat, the GPU's pid)."""
    from fake_cupti import run

    result = run("""
import perfprof
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA]) as prof:
    with perfprof.record_function("train step"):
        kernel("gemm_kernel", device=0)
        kernel("relu_kernel", device=0, stream=9)
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
fields = [[e.name, e.activity_type, e.external_id, e.flow_id, e.flow_type, e.flow_start, e.device_index,
           e.device_type] for e in prof.events()]
print(json.dumps({"trace": load_trace(path), "events": fields, "pid": os.getpid()}))
""", tmp_path)
    trace = result["trace"]["traceEvents"]
    events = {name: dict(zip(("cat", "external", "flow", "type", "start", "device", "device_type"), rest))
              for name, *rest in result["events"]}
    (step,) = [e for e in trace if e.get("name") == "train step"]
    assert events["train step"]["external"] == step["args"]["External id"] != 0
    assert events["train step"]["device"] == result["pid"]
    flows = {(e["id"], e["ph"]) for e in trace if e.get("cat") == "ac2g"}
    for name in ("gemm_kernel", "relu_kernel"):
        (kernel,) = [e for e in trace if e.get("name") == name]
        event = events[name]
        assert (event["cat"], event["device_type"], event["device"]) == ("kernel", "CUDA", kernel["pid"])
        assert event["external"] == kernel["args"]["External id"] == step["args"]["External id"]
        assert (event["type"], event["start"]) == (2, False) and (event["flow"], "f") in flows
        assert event["flow"] == kernel["args"]["correlation"]
    launches = [e for e in trace if e.get("cat") == "cuda_runtime"]
    assert len(launches) == 2
    assert {(e["args"]["correlation"], "s") for e in launches} <= flows
    assert events["cudaLaunchKernel"]["type"] == 2 and events["cudaLaunchKernel"]["start"] is True


# -- _RecordFunctionFast's keyword inputs -------------------------------------------------------------

KEYWORDS = {"grid": "grid(4,)", "stream": 7, "num_warps": 4, "kernel_num_gb": 0.25, "flag": True, "scope": "user_scope"}


def fast_launch() -> None:
    """What torch.compile's Triton launcher records around a kernel launch."""
    x = torch.ones(4)
    with torch._C._profiler._RecordFunctionFast("triton_poi_fused_add_0", [x, 3], dict(KEYWORDS)):
        x.add(1)


def test_keyword_inputs_are_in_the_trace_as_torch_writes_them(tmp_path):
    theirs, ours = both(fast_launch, record_shapes=True)
    launch = "triton_poi_fused_add_0"
    (their_launch,) = [e for e in trace_events(theirs, tmp_path / "t.json") if e.get("name") == launch]
    (our_launch,) = [e for e in trace_events(ours, tmp_path / "o.json") if e.get("name") == launch]
    assert {key: their_launch["args"][key] for key in KEYWORDS} == KEYWORDS
    assert {key: our_launch["args"].get(key) for key in KEYWORDS} == KEYWORDS
    assert our_launch["cat"] == their_launch["cat"] == "user_annotation"  # the "scope" keyword
    for key in ("Input Dims", "Input type", "Concrete Inputs"):
        assert our_launch["args"][key] == their_launch["args"][key]


# -- Kineto's window markers ----------------------------------------------------------------------

ROUNDING_US = 2e-3  # two times written to the nanosecond (three decimals of us), added
WINDOW_MARKERS = ("PyTorch Profiler (0)", "Iteration Start: PyTorch Profiler", "Record Window End")


def markers(events) -> Dict[str, Dict[str, Any]]:
    found = {event["name"]: event for event in events if event.get("name") in WINDOW_MARKERS}
    assert len(found) == len([event for event in events if event.get("name") in WINDOW_MARKERS])  # once each
    return found


def without_times(event: Dict[str, Any]) -> Dict[str, Any]:
    return {key: value for key, value in event.items() if key not in ("ts", "dur")}


def test_the_trace_marks_its_window_as_kineto_does(tmp_path):
    theirs, ours = both(annotated)
    their_markers = markers(trace_events(theirs, tmp_path / "theirs.json"))
    events = trace_events(ours, tmp_path / "ours.json")
    our_markers = markers(events)
    assert {name: without_times(event) for name, event in our_markers.items()} == \
        {name: without_times(event) for name, event in their_markers.items()}
    span, start, end = (our_markers[name] for name in WINDOW_MARKERS)
    # The span covers the recorded window, every recorded event in it, from its start to its end
    # (times written to the nanosecond: a sum of two may be off by 2 ns).
    assert start["ts"] == span["ts"] and end["ts"] == pytest.approx(span["ts"] + span["dur"], abs=ROUNDING_US)
    recorded = [event for event in events if event.get("cat") in ("cpu_op", "user_annotation")]
    assert min(event["ts"] for event in recorded) >= span["ts"]
    assert max(event["ts"] + event["dur"] for event in recorded) <= end["ts"] + ROUNDING_US
    sort_index = [event for event in events if event.get("ph") == "M" and event.get("pid") == "Spans"]
    assert [event["args"] for event in sort_index] == [{"sort_index": 536870912}]  # Kineto's: last


def test_each_saved_cycle_has_its_own_window(tmp_path):
    """With a schedule, each cycle's trace marks that cycle's recorded steps, as torch's does."""
    handler = perfprof.tensorboard_trace_handler(str(tmp_path / "log"))
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], on_trace_ready=handler,
                          schedule=perfprof.schedule(wait=1, warmup=1, active=1, repeat=2)) as prof:
        for _ in range(7):
            torch.ones(4).add(1)
            prof.step()
    handler.wait()
    for run_dir in handler.run_dirs:
        (trace,) = [path for path in (tmp_path / "log").rglob("*.pt.trace.json") if str(run_dir) in str(path)]
        events = json.loads(trace.read_text())["traceEvents"]
        span = markers(events)["PyTorch Profiler (0)"]
        (step,) = [event for event in events if event.get("name", "").startswith("ProfilerStep#")]
        assert span["ts"] <= step["ts"] and step["ts"] + step["dur"] <= span["ts"] + span["dur"] + ROUNDING_US
