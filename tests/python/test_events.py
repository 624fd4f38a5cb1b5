"""prof.events(): torch.profiler's list of events one by one (issue 20's drop-in parity), checked
against torch.profiler's own events() on the same model step."""
from __future__ import annotations

from collections import Counter

import pytest

import perfprof

torch = pytest.importorskip("torch")


def model_step(model):
    model(torch.ones(8, 16)).relu().sum().backward()


@pytest.fixture(scope="module")
def both():
    """perfprof's and torch.profiler's events of the same step (after a step that made the grads)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    model_step(model)
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], record_shapes=True) as prof:
        model_step(model)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as reference:
        model_step(model)
    return prof, prof.events(), reference.events()


def shape(event):
    """What identifies an event in the tree: its name, shapes, parent and children."""
    return (event.name, str(event.input_shapes), event.cpu_parent.name if event.cpu_parent else None,
            tuple(child.name for child in event.cpu_children), event.is_async)


def test_the_events_and_their_tree_are_torch_profilers(both):
    _, events, reference = both
    assert [shape(e) for e in events] == [shape(e) for e in reference]


def test_times_and_the_tree_add_up(both):
    _, events, _ = both
    for event in events:
        assert event.cpu_time_total == pytest.approx(event.time_range.elapsed_us(), abs=1e-3)
        assert event.count == 1 and event.key == event.name
        if event.cpu_parent is not None:
            assert event in event.cpu_parent.cpu_children
            assert event.cpu_parent.time_range.start <= event.time_range.start
            assert event.time_range.end <= event.cpu_parent.time_range.end
        if not event.is_async:
            children = sum(child.cpu_time_total for child in event.cpu_children)
            assert event.self_cpu_time_total == pytest.approx(event.cpu_time_total - children, abs=1e-3)
    starts = [(e.time_range.start, -e.time_range.end) for e in events]
    assert starts == sorted(starts)  # torch's order: by start, longer events first
    assert [e.id for e in events] == list(range(len(events)))


def test_key_averages_are_the_events_summed(both):
    prof, events, _ = both
    counts = Counter(event.key for event in events)
    assert {row.key: row.count for row in prof.key_averages()} == dict(counts)
    for row in prof.key_averages():
        total = sum(e.self_cpu_time_total for e in events if e.key == row.key)
        assert row.self_cpu_time_total == pytest.approx(total, abs=1e-3)


def test_events_table_prints_one_row_per_event(both):
    _, events, _ = both
    table = events.table(row_limit=-1)
    assert "Input Shapes" in table
    assert table.count("aten::addmm ") == Counter(e.name for e in events)["aten::addmm"]


def test_events_before_the_profiler_stopped_is_an_error():
    prof = perfprof.profile(activities=[perfprof.ProfilerActivity.CPU])
    with pytest.raises(RuntimeError, match="events: no trace yet"):
        prof.events()
