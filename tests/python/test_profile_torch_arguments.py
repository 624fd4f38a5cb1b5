"""profile()'s arguments that torch.profiler has beyond the Ascend spec, for a script that
switches imports: acc_events (every cycle's events), custom_trace_id_callback / get_trace_id
(``trace_id`` at the top of every trace perfprof writes), execution_trace_observer (torch's
execution trace over the kept window), post_processing_timeout_s, and
tensorboard_trace_handler(use_gzip=True). Against torch.profiler where it has the behaviour."""
from __future__ import annotations

import gzip
import json
import logging
import re
import sqlite3
from collections import Counter

import pytest

import perfprof

torch = pytest.importorskip("torch")


def model_and_step():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))

    def step():
        model(torch.ones(8, 16)).sum().backward()

    step()  # the grads exist before either profiler
    return step


def two_cycles(profiler, step, **options):
    """A loop of two back-to-back cycles of two recorded steps each."""
    ready = []
    with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                          schedule=profiler.schedule(wait=0, warmup=1, active=2, repeat=2),
                          on_trace_ready=lambda p: ready.append(p.get_trace_id()), **options) as prof:
        for _ in range(6):
            step()
            prof.step()
    return prof, ready


def counts(rows):
    return Counter({row.key: row.count for row in rows})


def test_acc_events_keeps_every_cycles_events_as_torch_does():
    step = model_and_step()
    ours, _ = two_cycles(perfprof, step, acc_events=True)
    theirs, _ = two_cycles(torch.profiler, step, acc_events=True)
    assert counts(ours.key_averages()) == counts(theirs.key_averages())
    assert counts(ours.key_averages())["aten::addmm"] == 2 * 2 * 2  # 2 layers, 2 steps, 2 cycles
    assert len(ours.events()) == len(theirs.events())
    assert [event.id for event in ours.events()] == list(range(len(ours.events())))
    last_only, _ = two_cycles(perfprof, step)
    assert counts(last_only.key_averages())["aten::addmm"] == 2 * 2


def test_a_trace_id_per_cycle_at_the_top_of_every_trace(tmp_path):
    step = model_and_step()
    ids = iter(["first", "second"])
    prof, ready = two_cycles(perfprof, step, custom_trace_id_callback=lambda: next(ids))
    assert ready == ["first", "second"] and prof.get_trace_id() == "second"
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    assert json.load(open(tmp_path / "t.json"))["trace_id"] == "second"

    random_ids, ready = two_cycles(perfprof, step)
    assert len(set(ready)) == 2 and all(re.fullmatch(r"[0-9A-F]{32}", trace_id) for trace_id in ready)
    assert perfprof.profile().get_trace_id() is None  # before any start, as torch's
    with pytest.raises(ValueError, match="reserved"):
        random_ids.add_metadata("trace_id", "mine")


def test_the_run_directory_and_its_later_analysis_carry_the_trace_id(tmp_path):
    step = model_and_step()
    config = perfprof.ExperimentalConfig(export_type=[perfprof.ExportType.Text, perfprof.ExportType.Db])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], experimental_config=config,
                          custom_trace_id_callback=lambda: "job-42",
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path / "now"))):
        step()
    (run_dir,) = (tmp_path / "now").iterdir()
    (trace,) = (run_dir / "PERFPROF_OUTPUT").glob("*.pt.trace.json")
    assert json.load(open(trace))["trace_id"] == "job-42"
    assert json.load(open(run_dir / "profiler_info.json"))["trace_id"] == "job-42"
    (database,) = (run_dir / "PERFPROF_OUTPUT").glob("*.db")
    with sqlite3.connect(database) as db:
        assert db.execute("SELECT value FROM META_DATA WHERE name = 'trace_id'").fetchall() == [('"job-42"',)]

    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], custom_trace_id_callback=lambda: "job-43",
                          on_trace_ready=perfprof.tensorboard_trace_handler(str(tmp_path / "later"),
                                                                            analyse_flag=False)):
        step()
    (run_dir,) = (tmp_path / "later").iterdir()
    (result,) = perfprof.analyse(str(run_dir))
    assert result.ok, result.message
    (trace,) = (run_dir / "PERFPROF_OUTPUT").glob("*.pt.trace.json")
    assert json.load(open(trace))["trace_id"] == "job-43"


def test_a_failing_trace_id_callback_costs_one_warning_and_the_cycle_a_random_id(caplog):
    step = model_and_step()

    def broken():
        raise RuntimeError("no id service")

    with caplog.at_level(logging.WARNING, logger="perfprof"):
        prof, ready = two_cycles(perfprof, step, custom_trace_id_callback=broken)
    assert all(re.fullmatch(r"[0-9A-F]{32}", trace_id) for trace_id in ready)
    said = [r.getMessage() for r in caplog.records if "custom_trace_id_callback" in r.getMessage()]
    assert len(said) <= 1  # once per process: an earlier test may have said it
    assert len(set(ready)) == 2
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], custom_trace_id_callback=broken)
    prof.set_custom_trace_id_callback(lambda: "fixed")
    with prof:
        step()
    assert prof.get_trace_id() == "fixed"
    with pytest.raises(TypeError, match="custom_trace_id_callback"):
        prof.set_custom_trace_id_callback("fixed")


def test_an_execution_trace_observer_records_the_kept_window(tmp_path):
    step = model_and_step()
    observer = torch.profiler.ExecutionTraceObserver().register_callback(str(tmp_path / "et.json"))
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], execution_trace_observer=observer,
                          schedule=perfprof.schedule(wait=1, warmup=1, active=1, repeat=1)) as prof:
        for _ in range(4):
            step()
            prof.step()
    nodes = json.load(open(tmp_path / "et.json"))["nodes"]
    addmm = [node for node in nodes if node["name"] == "aten::addmm"]
    assert len(addmm) == 2  # the one kept step's two layers, not the others'
    assert Counter(event.name for event in prof.events())["aten::addmm"] == 2  # perfprof's cycle, beside it
    with pytest.raises(TypeError, match="execution_trace_observer"):
        perfprof.profile(execution_trace_observer=object())


def test_post_processing_timeout_is_checked_and_keeps_everything():
    step = model_and_step()
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], post_processing_timeout_s=0.0) as prof:
        step()
    assert counts(prof.key_averages())["aten::addmm"] == 2
    for bad, error in ((-1, ValueError), (float("nan"), ValueError), ("1", TypeError)):
        with pytest.raises(error, match="post_processing_timeout_s"):
            perfprof.profile(post_processing_timeout_s=bad)
    with pytest.raises(TypeError, match="acc_events"):
        perfprof.profile(acc_events=1)


def test_use_gzip_writes_the_run_directorys_trace_compressed(tmp_path):
    step = model_and_step()
    for folder, analyse_flag in (("now", True), ("later", False)):
        with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                              on_trace_ready=perfprof.tensorboard_trace_handler(
                                  str(tmp_path / folder), use_gzip=True, analyse_flag=analyse_flag)):
            step()
        (run_dir,) = (tmp_path / folder).iterdir()
        if not analyse_flag:
            (result,) = perfprof.analyse(str(run_dir))
            assert result.ok, result.message
        (trace,) = (run_dir / "PERFPROF_OUTPUT").glob("*.pt.trace.json*")
        assert trace.name.endswith(".pt.trace.json.gz")
        names = Counter(e["name"] for e in json.loads(gzip.decompress(trace.read_bytes()))["traceEvents"])
        assert names["aten::addmm"] == 2
    with pytest.raises(TypeError, match="use_gzip"):
        perfprof.tensorboard_trace_handler(str(tmp_path), use_gzip="yes")
