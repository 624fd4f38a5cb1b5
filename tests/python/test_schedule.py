import itertools
import json
import warnings

import pytest
import torch.profiler

import perfprof
from perfprof import ProfilerAction


GRID = itertools.product(range(3), range(3), range(1, 4), range(3), range(4), range(2))


def test_actions_match_torch_for_every_combination():
    checked = 0
    for wait, warmup, active, repeat, skip_first, skip_first_wait in GRID:
        ours = perfprof.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                 skip_first=skip_first, skip_first_wait=skip_first_wait)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat,
                                             skip_first=skip_first, skip_first_wait=skip_first_wait)
        for step in range(40):
            parameters = (wait, warmup, active, repeat, skip_first, skip_first_wait, step)
            assert ours(step).name == theirs(step).name, parameters
            checked += 1
    assert checked == 3 * 3 * 3 * 3 * 4 * 2 * 40


def test_positional_arguments_follow_the_spec_order():
    s = perfprof.schedule(1, 2, 1, 1, 1)  # wait, active, warmup, repeat, skip_first
    assert [s(i) for i in range(6)] == [
        ProfilerAction.NONE, ProfilerAction.NONE, ProfilerAction.WARMUP,
        ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE, ProfilerAction.NONE,
    ]


@pytest.mark.parametrize("field, value", [
    ("wait", -1), ("active", 0), ("warmup", -1), ("repeat", -2), ("skip_first", -1), ("skip_first_wait", -1),
])
def test_invalid_values_name_the_field(field, value):
    arguments = dict(wait=0, active=1)
    arguments[field] = value
    with pytest.raises(ValueError, match=field):
        perfprof.schedule(**arguments)


@pytest.mark.parametrize("value", [1.5, "2", None, True])
def test_non_integer_arguments_are_type_errors(value):
    with pytest.raises(TypeError, match="wait"):
        perfprof.schedule(wait=value, active=1)


def test_negative_step_is_rejected():
    with pytest.raises(ValueError, match="step"):
        perfprof.schedule(wait=0, active=1)(-1)


def test_repr_shows_the_arguments():
    assert repr(perfprof.schedule(wait=1, active=2, warmup=3)) == (
        "schedule(wait=1, active=2, warmup=3, repeat=0, skip_first=0, skip_first_wait=0)"
    )


def test_a_run_records_its_schedule_by_its_parameters(tmp_path):
    from perfprof.schedule import describe_schedule

    assert describe_schedule(perfprof.schedule(wait=1, active=2, warmup=1, repeat=1, skip_first=1)) == \
        "wait=1 warmup=1 active=2 repeat=1 skip_first=1"
    assert describe_schedule(perfprof.schedule(wait=0, active=3, skip_first_wait=1)) == \
        "wait=0 warmup=0 active=3 repeat=0 skip_first=0 skip_first_wait=1"
    # torch.profiler's schedule functions too, read from their closures; another callable by its name.
    assert describe_schedule(torch.profiler.schedule(wait=1, warmup=1, active=2, repeat=1, skip_first=1)) == \
        "wait=1 warmup=1 active=2 repeat=1 skip_first=1"

    def every_other(step: int) -> ProfilerAction:
        return ProfilerAction.RECORD_AND_SAVE if step % 2 else ProfilerAction.NONE

    assert describe_schedule(every_other) == (
        f"{__name__}.test_a_run_records_its_schedule_by_its_parameters.<locals>.every_other")

    handler = perfprof.tensorboard_trace_handler(str(tmp_path))
    with perfprof.profile(schedule=torch.profiler.schedule(wait=0, warmup=1, active=1, repeat=1),
                          on_trace_ready=handler) as prof:
        for _ in range(2):
            prof.step()
    with open(f"{handler.run_dirs[-1]}/profiler_info.json") as file:
        assert json.load(file)["config"]["schedule"] == "wait=0 warmup=1 active=1 repeat=1 skip_first=0"
