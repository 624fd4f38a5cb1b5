import re
import warnings

import pytest
import torch.profiler

import perfprof
from trace_checks import load_trace, names, run_dirs, trace_file_of


def run_perfprof(schedule_args, steps, on_trace_ready):
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU],
                          schedule=perfprof.schedule(**schedule_args),
                          on_trace_ready=on_trace_ready) as prof:
        for _ in range(steps):
            prof.step()


def ready_steps_of_torch(schedule_args, steps):
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                    schedule=torch.profiler.schedule(**schedule_args),
                                    on_trace_ready=lambda p: seen.append(p.step_num)) as prof:
            for _ in range(steps):
                prof.step()
    return seen


SCHEDULES = [
    dict(wait=1, warmup=1, active=2, repeat=3),
    dict(wait=0, warmup=0, active=1, repeat=0),
    dict(wait=2, warmup=1, active=3, repeat=2, skip_first=3),
    dict(wait=1, warmup=2, active=1, repeat=0, skip_first=1, skip_first_wait=1),
    dict(wait=0, warmup=1, active=2, repeat=1),
]


@pytest.mark.parametrize("schedule_args", SCHEDULES)
@pytest.mark.parametrize("steps", [5, 18])
def test_on_trace_ready_fires_at_the_same_steps_as_torch(schedule_args, steps):
    seen = []
    run_perfprof(schedule_args, steps, lambda p: seen.append(p.step_num))
    assert seen == ready_steps_of_torch(schedule_args, steps)


def test_three_cycles_give_three_calls_and_three_run_directories(tmp_path):
    calls = []
    handler = perfprof.tensorboard_trace_handler(str(tmp_path))

    def on_ready(prof):
        calls.append(prof.step_num)
        handler(prof)

    run_perfprof(dict(wait=1, warmup=1, active=2, repeat=3), 18, on_ready)
    assert calls == [4, 8, 12]
    dirs = run_dirs(str(tmp_path))
    assert len(dirs) == 3
    recorded = [sorted(n for n in names(load_trace(trace_file_of(d))) if n.startswith("ProfilerStep#")) for d in dirs]
    assert recorded == [["ProfilerStep#2", "ProfilerStep#3"], ["ProfilerStep#6", "ProfilerStep#7"],
                        ["ProfilerStep#10", "ProfilerStep#11"]]


def test_warmup_steps_are_discarded_and_recorded_steps_kept(export):
    with perfprof.profile(schedule=perfprof.schedule(wait=1, warmup=2, active=2, repeat=1)) as prof:
        for step in range(7):
            with perfprof.record_function(f"work {step}"):
                pass
            prof.step()
    trace = export(prof)
    assert sorted(n for n in names(trace) if n.startswith("work")) == ["work 3", "work 4"]
    assert sorted(n for n in names(trace) if n.startswith("ProfilerStep")) == ["ProfilerStep#3", "ProfilerStep#4"]


def test_without_schedule_everything_is_recorded_and_no_step_ranges(export):
    ready = []
    with perfprof.profile(on_trace_ready=ready.append) as prof:
        for _ in range(3):
            with perfprof.record_function("work"):
                pass
            prof.step()
    assert ready == [prof]
    trace = export(prof)
    assert names(trace).count("work") == 3
    assert not [n for n in names(trace) if n.startswith("ProfilerStep")]


def test_step_ranges_cover_the_work_of_their_step(export):
    with perfprof.profile(schedule=perfprof.schedule(wait=0, active=3, repeat=1)) as prof:
        for _ in range(3):
            with perfprof.record_function("work"):
                pass
            prof.step()
    trace = export(prof)
    steps = sorted((e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"].startswith("ProfilerStep")),
                   key=lambda e: e["ts"])
    work = sorted((e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "work"), key=lambda e: e["ts"])
    assert [int(re.sub(r"\D", "", s["name"])) for s in steps] == [0, 1, 2]
    for step, item in zip(steps, work):
        assert step["ts"] <= item["ts"] and item["ts"] + item["dur"] <= step["ts"] + step["dur"]


def test_incorrect_schedule_is_logged_not_raised(caplog):
    def schedule(step):
        return [perfprof.ProfilerAction.WARMUP, perfprof.ProfilerAction.NONE][step % 2]

    with perfprof.profile(schedule=schedule) as prof:
        prof.step()
    assert "WARMUP followed by NONE" in caplog.text


def test_torch_schedules_and_actions_are_accepted():
    seen = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch_schedule = torch.profiler.schedule(wait=1, warmup=0, active=1, repeat=2)
    with perfprof.profile(schedule=torch_schedule, on_trace_ready=lambda p: seen.append(p.step_num)) as prof:
        for _ in range(6):
            prof.step()
    assert seen == [2, 4]


def test_a_schedule_returning_garbage_is_a_clear_error():
    with pytest.raises(ValueError, match="schedule returned 'record' for step 0"):
        with perfprof.profile(schedule=lambda step: "record"):
            pass


def test_restarting_a_profiler_continues_its_steps_like_torch():
    def drive(prof):
        for _ in range(2):
            prof.start()
            prof.step()
            prof.step()
            prof.stop()

    seen, torch_seen = [], []
    drive(perfprof.profile(schedule=perfprof.schedule(wait=0, active=2),
                           on_trace_ready=lambda p: seen.append(p.step_num)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        drive(torch.profiler.profile(schedule=torch.profiler.schedule(wait=0, warmup=0, active=2),
                                     on_trace_ready=lambda p: torch_seen.append(p.step_num)))
    assert seen == torch_seen == [2, 2, 4, 4]
