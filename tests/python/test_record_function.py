import asyncio
import threading

import pytest

import perfprof
from trace_checks import assert_slices_nest, events, names


def test_context_manager_nesting_and_args(export):
    with perfprof.profile() as prof:
        with perfprof.record_function("outer"):
            with perfprof.record_function("inner", args="batch=3"):
                pass
    trace = export(prof)
    slices = {e["name"]: e for e in events(trace, "X")}
    assert slices["inner"]["args"] == {"args": "batch=3"}
    assert "args" not in slices["outer"]
    assert slices["outer"]["cat"] == "user_annotation"
    assert_slices_nest(trace)


def test_decorator_records_every_call_including_recursion(export):
    @perfprof.record_function("fib")
    def fib(n):
        return n if n < 2 else fib(n - 1) + fib(n - 2)

    with perfprof.profile() as prof:
        assert fib(6) == 8
    trace = export(prof)
    assert names(trace).count("fib") == 25
    assert_slices_nest(trace)
    assert fib.__name__ == "fib"


def test_async_functions_are_timed_until_they_finish(export):
    @perfprof.record_function("coroutine")
    async def nap():
        await asyncio.sleep(0.01)
        return "done"

    with perfprof.profile() as prof:
        assert asyncio.run(nap()) == "done"
    (event,) = [e for e in events(export(prof), "X") if e["name"] == "coroutine"]
    assert event["dur"] >= 10_000 * 0.9


def test_exceptions_propagate_and_the_range_is_closed(export):
    with perfprof.profile() as prof:
        with pytest.raises(KeyError):
            with perfprof.record_function("failing"):
                raise KeyError("x")
    trace = export(prof)
    assert names(trace) == ["failing"]
    assert trace["perfprofStats"]["unfinished_ranges"] == 0


def test_not_recorded_without_cpu_activity(export, caplog):
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CUDA]) as prof:
        with perfprof.record_function("invisible"):
            pass
    assert "invisible" not in names(export(prof))
    if not perfprof.cuda_status()["available"]:
        assert "CUDA is not supported here" in caplog.text


def test_ranges_open_at_stop_are_closed_at_the_window_end(export):
    prof = perfprof.profile()
    prof.start()
    annotation = perfprof.record_function("still running")
    annotation.__enter__()
    prof.stop()
    annotation.__exit__(None, None, None)
    (event,) = events(export(prof), "X")
    assert event["args"] == {"unfinished": True}


def test_reentering_the_same_instance_is_an_error():
    annotation = perfprof.record_function("once")
    with annotation:
        with pytest.raises(RuntimeError, match="already entered"):
            annotation.__enter__()


@pytest.mark.parametrize("args, message", [((3,), "'name' must be str"), (("n", 5), "'args' must be str")])
def test_bad_arguments(args, message):
    with pytest.raises(TypeError, match=message):
        perfprof.record_function(*args)


def test_threads_record_on_their_own_named_tracks(export):
    def work(index):
        for _ in range(100):
            with perfprof.record_function(f"task {index}"):
                pass

    with perfprof.profile() as prof:
        threads = [threading.Thread(target=work, args=(i,), name=f"worker-{i}") for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()  # these threads end before stop(): their events must be kept
    trace = export(prof)
    thread_names = {e["tid"]: e["args"]["name"] for e in events(trace, "M") if e["name"] == "thread_name"}
    for i in range(4):
        tids = {e["tid"] for e in events(trace, "X") if e["name"] == f"task {i}"}
        assert len(tids) == 1 and thread_names[tids.pop()] == f"worker-{i}"
        assert names(trace).count(f"task {i}") == 100
