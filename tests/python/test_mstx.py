import threading

import pytest

import perfprof
from perfprof import mstx
from trace_checks import assert_slices_nest, events, names


def profile_with(**config):
    return perfprof.profile(experimental_config=perfprof.ExperimentalConfig(**config))


def test_markers_are_recorded_only_with_mstx_on(export):
    with profile_with(mstx=False) as prof:
        mstx.range_end(mstx.range_start("hidden"))
        mstx.mark("hidden mark")
    assert "hidden" not in names(export(prof, "off.json"))
    with profile_with(mstx=True) as prof:
        mstx.range_end(mstx.range_start("shown"))
        mstx.mark("shown mark")
    trace = export(prof, "on.json")
    (shown,) = [e for e in events(trace, "X") if e["name"] == "shown"]
    assert shown["cat"] == "user_annotation" and shown["args"] == {"domain": "default"}
    (mark,) = events(trace, "i")
    assert mark["name"] == "shown mark" and mark["s"] == "t"


def test_msprof_tx_alias(export):
    with profile_with(msprof_tx=True) as prof:
        mstx.mark("via alias")
    assert names(export(prof), "i") == ["via alias"]


def test_domain_include_and_exclude(export):
    def mark_all():
        for domain in ("default", "d1", "d2"):
            mstx.mark(f"m-{domain}", domain=domain)
            mstx.range_end(mstx.range_start(f"r-{domain}", domain=domain), domain=domain)

    with profile_with(mstx=True, mstx_domain_include=["default", "d1"]) as prof:
        mark_all()
    trace = export(prof, "include.json")
    assert sorted(names(trace, "i")) == ["m-d1", "m-default"]
    assert sorted(names(trace)) == ["r-d1", "r-default"]

    with profile_with(mstx=True, mstx_domain_exclude=["d2"]) as prof:
        mark_all()
    trace = export(prof, "exclude.json")
    assert sorted(names(trace, "i")) == ["m-d1", "m-default"]
    assert trace["perfprofStats"]["unmatched_range_ends"] == 0, "filtered ranges leave no stray ends"

    with profile_with(mstx=True) as prof:
        mark_all()
    assert len(names(export(prof, "all.json"), "i")) == 3


def test_include_wins_over_exclude_with_a_warning(caplog, export):
    config = perfprof.ExperimentalConfig(mstx=True, mstx_domain_include=["d1"], mstx_domain_exclude=["d1"])
    assert config.mstx_domain_exclude == []
    with perfprof.profile(experimental_config=config) as prof:
        mstx.mark("kept", domain="d1")
    assert names(export(prof), "i") == ["kept"]


def test_range_started_and_ended_on_different_threads(export):
    with profile_with(mstx=True) as prof:
        range_id = mstx.range_start("handoff")
        worker = threading.Thread(target=mstx.range_end, args=(range_id,), name="finisher")
        worker.start()
        worker.join()
    trace = export(prof)
    (begin,) = [e for e in events(trace, "b") if e["name"] == "handoff"]
    (end,) = [e for e in events(trace, "e") if e["name"] == "handoff"]
    assert begin["id"] == end["id"] and begin["tid"] != end["tid"] and end["ts"] >= begin["ts"]
    assert_slices_nest(trace)


def test_mstx_range_context_manager_and_decorator(export):
    @mstx.mstx_range("decorated", domain="d")
    def work(x):
        return x * 2

    with profile_with(mstx=True) as prof:
        with mstx.mstx_range("block"):
            assert work(21) == 42
    trace = export(prof)
    slices = {e["name"]: e for e in events(trace, "X")}
    assert slices["decorated"]["args"]["domain"] == "d"
    block, decorated = slices["block"], slices["decorated"]
    assert block["ts"] <= decorated["ts"] and decorated["ts"] + decorated["dur"] <= block["ts"] + block["dur"]


def test_stream_argument_is_recorded(export):
    class FakeStream:
        cuda_stream = 1234

    with profile_with(mstx=True) as prof:
        mstx.range_end(mstx.range_start("on stream", FakeStream()))
        mstx.mark("raw handle", stream=7)
    trace = export(prof)
    assert [e["args"] for e in events(trace, "X")] == [{"domain": "default", "stream": 1234}]
    assert [e["args"] for e in events(trace, "i")] == [{"domain": "default", "stream": 7}]


@pytest.mark.parametrize("stream", [-1, 2 ** 63, 2 ** 64, 2 ** 70])
def test_a_stream_handle_outside_the_traces_64_bit_argument_is_refused_not_wrapped(stream):
    """A handle is a pointer's bits, an int64 argument in the trace: 2**64 was recorded as stream
    0, and 2**63 as -2**63."""
    for call, function in ((mstx.range_start, "range_start"), (mstx.mark, "mark")):
        with pytest.raises(ValueError, match=rf"^{function}\(\): 'stream' must be a stream handle from 0 to "
                                             rf"2\*\*63 - 1, got {stream}$"):
            call("m", stream)


def test_the_largest_stream_handle_is_recorded_as_given(export):
    with profile_with(mstx=True) as prof:
        mstx.mark("last handle", stream=2 ** 63 - 1)
    assert [e["args"] for e in events(export(prof), "i")] == [{"domain": "default", "stream": 2 ** 63 - 1}]


def test_ids_are_unique_and_returned_even_when_not_recording():
    ids = {mstx.range_start("x") for _ in range(1000)}
    assert len(ids) == 1000 and 0 not in ids
    for range_id in ids:
        mstx.range_end(range_id)


@pytest.mark.parametrize("call, message", [
    (lambda: mstx.mark(42), "'message' must be str"),
    (lambda: mstx.mark("m", domain=3), "'domain' must be str"),
    (lambda: mstx.range_start("m", stream="s0"), "'stream' must be None"),
    (lambda: mstx.range_end("1"), "'range_id' must be int"),
    (lambda: mstx.range_start(), "missing required argument 'message'"),
    (lambda: mstx.mark("m", colour="red"), "unexpected keyword argument 'colour'"),
    (lambda: mstx.mstx_range(b"bytes"), "'message' must be str"),
])
def test_bad_arguments_are_type_errors(call, message):
    with pytest.raises(TypeError, match=message):
        call()


def test_unencodable_message_still_records(export):
    with profile_with(mstx=True) as prof:
        mstx.mark("bad \udc80 surrogate")
    # One U+FFFD per byte of the invalid sequence, as Python's errors="replace" decoding gives.
    replaced = "bad \udc80 surrogate".encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    assert names(export(prof), "i") == [replaced]


def test_signature_is_visible_in_help():
    import inspect

    assert str(inspect.signature(mstx.range_start)) == "(message, stream=None, domain='default')"
