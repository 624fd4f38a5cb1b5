"""toggle_collection_dynamic: what begins while an activity is paused is not recorded, what began
before is recorded whole; CPU against torch.profiler on the same script (every capture mode),
CUDA through the CUPTI test double."""
from __future__ import annotations

from collections import Counter

import pytest

import perfprof
from fake_cupti import run

torch = pytest.importorskip("torch")

NAMES = ("before", "spanning", "during", "after", "aten::add", "aten::mul", "aten::sub")


def paused_in_the_middle(profiler, **options):
    """The names recorded around a CPU pause, and the profiler."""
    x = torch.ones(4)
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU], **options) as prof:
        with torch.profiler.record_function("before"):
            x.add(1)
        with torch.profiler.record_function("spanning"):
            prof.toggle_collection_dynamic(False, [profiler.ProfilerActivity.CPU])
            with torch.profiler.record_function("during"):
                x.mul(2)
            prof.toggle_collection_dynamic(True, [profiler.ProfilerActivity.CPU])
        with torch.profiler.record_function("after"):
            x.sub(1)
    names = Counter(event.name for event in prof.events())
    return {name: names[name] for name in NAMES}, prof


@pytest.mark.parametrize("options", [{}, {"record_shapes": True}, {"profile_memory": True}, {"with_stack": True}],
                         ids=["operators", "shapes", "memory", "stack"])
def test_a_cpu_pause_leaves_out_what_began_in_it_as_torch_does(options, tmp_path):
    theirs, _ = paused_in_the_middle(torch.profiler, **options)
    ours, prof = paused_in_the_middle(perfprof, **options)
    assert ours == theirs == {"before": 1, "spanning": 1, "during": 0, "after": 1,
                              "aten::add": 1, "aten::mul": 0, "aten::sub": 1}
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    trace = perfprof_trace(tmp_path / "t.json")
    (spanning,) = [e for e in trace if e.get("name") == "spanning"]
    assert spanning["ph"] == "X"  # begun before the pause, ended during it: whole


def perfprof_trace(path):
    import json

    return json.load(open(path))["traceEvents"]


def test_toggling_checks_its_arguments_and_does_nothing_when_stopped():
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU])
    prof.toggle_collection_dynamic(False, [perfprof.ProfilerActivity.CPU])  # not collecting: no effect
    with prof:
        torch.ones(2).add(1)
    assert Counter(event.name for event in prof.events())["aten::add"] == 1
    with pytest.raises(TypeError, match="enable"):
        prof.toggle_collection_dynamic("no", [perfprof.ProfilerActivity.CPU])
    with pytest.raises(TypeError, match="activities"):
        prof.toggle_collection_dynamic(False, "CPU")
    with pytest.raises(ValueError, match="unknown activity"):
        prof.toggle_collection_dynamic(False, ["TPU"])


def test_a_pause_ends_with_its_cycle():
    x = torch.ones(4)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                          schedule=perfprof.schedule(wait=0, warmup=0, active=1, repeat=2)) as prof:
        prof.toggle_collection_dynamic(False, [perfprof.ProfilerActivity.CPU])
        x.mul(2)
        prof.step()  # the first cycle ends paused; the second records
        x.mul(2)
        prof.step()
    assert Counter(event.name for event in prof.events())["aten::mul"] == 1


def test_a_cuda_pause_leaves_out_the_gpu_work_launched_in_it(tmp_path):
    result = run("""
import perfprof
CUDA, CPU = perfprof.ProfilerActivity.CUDA, perfprof.ProfilerActivity.CPU
with perfprof.profile(activities=[CPU, CUDA]) as prof:
    with perfprof.record_function("step"):
        kernel("before_kernel")
        prof.toggle_collection_dynamic(False, [CUDA])
        kernel("paused_kernel")
        fake.fake_cupti_memcpy(1 << 20, 1, 0, 1, 7, 20_000)
        with perfprof.record_function("host_goes_on"):
            pass
        prof.toggle_collection_dynamic(True, [CUDA])
        kernel("after_kernel")
path = os.path.join(os.environ["TMP"], "trace.json")
prof.export_chrome_trace(path)
print(json.dumps(load_trace(path)))
""", tmp_path)
    kernels = [e["name"] for e in result["traceEvents"] if e.get("cat") == "kernel"]
    launches = [e for e in result["traceEvents"] if e.get("cat") == "cuda_runtime"]
    assert kernels == ["before_kernel", "after_kernel"]
    assert len(launches) == 2
    assert not [e for e in result["traceEvents"] if e.get("cat") == "gpu_memcpy"]
    assert any(e.get("name") == "host_goes_on" for e in result["traceEvents"])  # CPU was not paused


def test_a_pause_from_another_thread_says_what_it_cannot_pause(caplog):
    import logging
    import threading

    x = torch.ones(4)
    with caplog.at_level(logging.WARNING, logger="perfprof"):
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], profile_memory=True) as prof:
            other = threading.Thread(target=prof.toggle_collection_dynamic, args=(False, ["CPU"]))
            other.start()
            other.join()
            x.mul(2)  # torch's own collection of this thread is not paused from the other one
    assert Counter(event.name for event in prof.events())["aten::mul"] == 1
    assert any("another thread" in record.getMessage() for record in caplog.records)
