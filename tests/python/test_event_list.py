"""EventList, FunctionEventAvg and FunctionEvent as torch.profiler has them, for a user who
switches imports: the lists' own key_averages, total_average, self_cpu_time_total,
export_stacks and export_chrome_trace, table's top_level_events_only and time_unit, rows
grouped by input shapes holding lists, and the profile's torch arguments perfprof has no use for
(group_by_overload_name, use_python_export, preset_metadata_json). Each against torch.profiler on
the same step where torch has the behaviour."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest

import perfprof

torch = pytest.importorskip("torch")


def model_step(model):
    with torch.profiler.record_function("loss"):
        loss = model(torch.ones(8, 16)).relu().sum()
    loss.backward()


def profiled(profiler, activity, model, **options):
    with profiler.profile(activities=[activity.CPU], record_shapes=True, **options) as prof:
        model_step(model)
    return prof


@pytest.fixture(scope="module")
def both():
    """perfprof's and torch.profiler's profiles of the same step (after one that made the grads)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    model_step(model)
    ours = profiled(perfprof, perfprof.ProfilerActivity, model)
    theirs = profiled(torch.profiler, torch.profiler.ProfilerActivity, model)
    return ours, theirs


def counts(rows):
    return Counter({(row.key, str(row.input_shapes)): row.count for row in rows})


def test_the_events_own_key_averages_are_the_profilers(both):
    ours, theirs = both
    from_events = ours.events().key_averages()
    assert counts(from_events) == counts(ours.key_averages())
    assert counts(from_events) == counts(theirs.events().key_averages())
    by_key = {row.key: row for row in ours.key_averages()}
    for row in from_events:
        assert row.cpu_time_total == pytest.approx(by_key[row.key].cpu_time_total)
        assert row.self_cpu_time_total == pytest.approx(by_key[row.key].self_cpu_time_total)


def test_rows_grouped_by_input_shapes_hold_torchs_lists(both):
    ours, theirs = both
    grouped = ours.key_averages(group_by_input_shape=True)
    assert counts(grouped) == counts(theirs.key_averages(group_by_input_shape=True))
    addmm = sorted(row.input_shapes for row in grouped if row.key == "aten::addmm")
    assert addmm == [[[4], [8, 16], [16, 4], [], []], [[16], [8, 16], [16, 16], [], []]]
    assert all(row.input_shapes == "" for row in ours.key_averages())  # ungrouped, as torch
    by_list = ours.events().key_averages(group_by_input_shapes=True)
    assert counts(by_list) == counts(grouped)


def test_totals_of_a_list_add_up_its_rows(both):
    ours, theirs = both
    rows = ours.key_averages()
    assert rows.self_cpu_time_total == pytest.approx(sum(row.self_cpu_time_total for row in rows))
    total = rows.total_average()
    assert total.key == "Total"
    assert total.count == sum(row.count for row in rows) == theirs.key_averages().total_average().count
    assert total.cpu_time_total == pytest.approx(sum(row.cpu_time_total for row in rows))
    assert total.cpu_time == pytest.approx(total.cpu_time_total / total.count)
    assert ours.events().total_average().count == len(ours.events())


def test_rows_add_up_like_torchs_and_refuse_another_key(both):
    ours, _ = both
    rows = {row.key: row for row in ours.key_averages()}
    linear = rows["aten::linear"]
    doubled = ours.key_averages()[[row.key for row in ours.key_averages()].index("aten::linear")]
    doubled += linear
    assert doubled.count == 2 * linear.count
    assert doubled.self_cpu_time_total == pytest.approx(2 * linear.self_cpu_time_total)
    with pytest.raises(ValueError, match="keys differ"):
        doubled.add(rows["aten::addmm"])


def test_time_texts_are_torchs(both):
    ours, theirs = both
    for mine, torchs in zip(ours.events(), theirs.events()):
        assert (mine.trace_name, mine.kernels, mine.self_cuda_memory_usage) == \
            (torchs.trace_name, torchs.kernels, torchs.self_device_memory_usage)
    row = next(row for row in ours.key_averages() if row.key == "aten::addmm")
    assert re.fullmatch(r"\d+\.\d{3}(us|ms|s)", row.self_cpu_time_total_str)
    assert row.cpu_time_str == perfprof.summary._format_time(row.cpu_time_total / row.count)
    assert "key=aten::addmm" in repr(row) and "self_cpu_time=" in repr(row)


def test_top_level_only_leaves_out_the_nested_rows_as_torch_does(both):
    ours, theirs = both

    def names(table):
        return {line.split()[0] for line in table.splitlines()[4:-2] if line and not line.startswith("-")}

    ours_table = ours.key_averages().table(top_level_events_only=True, row_limit=-1)
    theirs_table = theirs.key_averages().table(top_level_events_only=True, row_limit=-1)
    assert "This report only display top-level ops statistics" in ours_table
    assert names(ours_table) == names(theirs_table)
    assert "aten::addmm" not in names(ours_table) and "loss" in names(ours_table)


def test_one_time_unit_for_every_time(both):
    ours, _ = both
    table = ours.key_averages().table(time_unit="ms")
    times = re.findall(r"\d+\.\d{3}(us|ms|s)\b", table)
    assert times and set(times) == {"ms"}
    with pytest.raises(ValueError, match="time_unit"):
        ours.key_averages().table(time_unit="min")
    assert str(ours.key_averages()) == ours.key_averages().table()


def test_a_lists_stacks_and_chrome_trace(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(16, 4))
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], with_stack=True) as prof:
        model(torch.ones(8, 16))
    events = prof.events()
    assert {"self_cpu_time_total", "self_cuda_time_total"} <= set(events.supported_export_stacks_metrics())
    path = events.export_stacks(tmp_path / "stacks.txt", "self_cpu_time_total")
    lines = open(path).read().splitlines()
    expected = [event for event in events if event.stack and int(event.self_cpu_time_total) > 0]
    assert len(lines) == len(expected) > 0
    for line, event in zip(lines, expected):
        frames, value = line.rsplit(" ", 1)
        assert int(value) == int(event.self_cpu_time_total)
        assert frames.split(";")[-1] == event.stack[0].translate(str.maketrans(" ;\t\n", "____"))
    with pytest.raises(ValueError, match="metric"):
        events.export_stacks(tmp_path / "x.txt", "cpu_time")
    trace = json.loads(open(events.export_chrome_trace(tmp_path / "events.json")).read())
    assert [(e["name"], e["tid"]) for e in trace] == [(e.name, e.thread) for e in events]
    assert all(e["ph"] == "X" and e["pid"] == "CPU functions" for e in trace)
    with pytest.raises(TypeError, match="key_averages"):
        prof.key_averages().export_chrome_trace(tmp_path / "rows.json")


def test_torchs_arguments_perfprof_has_no_use_for(tmp_path, both):
    ours, _ = both
    assert counts(ours.key_averages(group_by_overload_name=True)) == counts(ours.key_averages())
    with pytest.raises(TypeError, match="group_by_overload_name"):
        ours.key_averages(group_by_overload_name=1)
    ours.export_chrome_trace(str(tmp_path / "t.json"), use_python_export=True)
    with pytest.raises(TypeError, match="use_python_export"):
        ours.export_chrome_trace(str(tmp_path / "t.json"), use_python_export="yes")
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU])
    prof.preset_metadata_json("run", '{"lr": 0.1}')
    with prof:
        torch.ones(2).add(1)
    prof.export_chrome_trace(str(tmp_path / "m.json"))
    assert json.load(open(tmp_path / "m.json"))["run"] == {"lr": 0.1}
