"""Every numeric option is checked when it is given, against the range the core can hold: a value
outside raises ValueError naming the field and its range (TypeError for a value that is not a
number, bool included), and the top of the range the error names is accepted and collects.

The options are found from their definitions (ExperimentalConfig's signature, schedule's, the
dynamic config's fields), so an option added later is checked here without a list to update."""
from __future__ import annotations

import inspect
import json
import logging
import re
import typing
from typing import Dict, List, Tuple

import pytest
import torch.profiler

import perfprof
from perfprof import ExperimentalConfig, ProfilerActivity
from perfprof._dynamic_config import _COLLECTION_FIELDS, DynamicConfig, parse


def field_types(field: str) -> set:
    """The types ExperimentalConfig's signature gives `field` (None's included)."""
    hint = typing.get_type_hints(ExperimentalConfig.__init__)[field]
    return set(typing.get_args(hint) or (hint,))


def numeric_fields() -> List[str]:
    """ExperimentalConfig's fields whose type is a number (or None)."""
    return [field for field in ExperimentalConfig.FIELDS if {int, float} & field_types(field)]


def test_the_numeric_fields_are_found():
    assert set(numeric_fields()) >= {"capture_buffer_mb", "record_limit_mb", "gc_detect_threshold",
                                     "sample_interval_ms"}


_RANGE = re.compile(r"'(?P<field>\w+)' must be from (?P<low>[-\w.*+ ]+?) to (?P<high>[\w.*+]+(?: - 1)?)"
                    r"(?: (?P<unit>MiB|ms|s))?, got ")


def number(text: str) -> float:
    """A bound as the error writes it: 60000, 1e+12, 2**30, 2**62 - 1."""
    power = re.fullmatch(r"2\*\*(\d+)( - 1)?", text)
    if power:
        return 2 ** int(power.group(1)) - (1 if power.group(2) else 0)
    return float(text) if re.search(r"[.e]", text) else int(text)


def stated_range(error: pytest.ExceptionInfo, field: str) -> Tuple[float, float]:
    """The range a ValueError names for `field`."""
    match = _RANGE.search(str(error.value))
    assert match and match.group("field") == field, str(error.value)
    return number(match.group("low")), number(match.group("high"))


@pytest.mark.parametrize("field", numeric_fields())
def test_an_experimental_config_number_outside_its_range_names_the_field_and_the_range(field):
    with pytest.raises(ValueError) as too_large:
        ExperimentalConfig(**{field: 2 ** 80})  # 2**80 MiB once passed, then failed inside the first step()
    low, high = stated_range(too_large, field)
    for refused in (low - 1, high * 2):
        with pytest.raises(ValueError, match=f"'{field}'"):
            ExperimentalConfig(**{field: refused})
    for refused in (float("nan"), float("inf"), -float("inf")):  # a float for an int field: TypeError
        with pytest.raises(ValueError if float in field_types(field) else TypeError, match=f"'{field}'"):
            ExperimentalConfig(**{field: refused})
    for wrong_type in (True, "1", [1]):
        with pytest.raises(TypeError, match=f"'{field}'"):
            ExperimentalConfig(**{field: wrong_type})
    assert getattr(ExperimentalConfig(**{field: high}), field) == high


@pytest.mark.parametrize("field", numeric_fields())
def test_the_top_of_each_range_collects(field, tmp_path, caplog):
    """The largest value accepted is one the core holds: the profile records, with no failure
    logged (gc_detect_threshold's top, the int64 limit in ms, once overflowed in its collector)."""
    with pytest.raises(ValueError) as too_large:
        ExperimentalConfig(**{field: 2 ** 80})
    _, high = stated_range(too_large, field)
    config = ExperimentalConfig(**{field: high}, host_sys=["cpu"])  # host_sys: the sampler starts
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="w")  # the capture file is written
    with caplog.at_level(logging.WARNING, logger="perfprof"):
        with perfprof.profile(activities=[ProfilerActivity.CPU], experimental_config=config,
                              on_trace_ready=handler) as prof:
            with perfprof.record_function("work"):
                pass
    assert [event.name for event in prof.events() if event.name == "work"] == ["work"]
    assert [record.getMessage() for record in caplog.records] == []


def test_schedule_counts_and_their_sums_stay_within_the_step_counter():
    for field in inspect.signature(perfprof.schedule).parameters:
        with pytest.raises(ValueError) as error:
            perfprof.schedule(**{"wait": 0, "active": 1, field: 2 ** 62})
        assert stated_range(error, field)[1] == 2 ** 62 - 1
        with pytest.raises(TypeError, match=f"'{field}'"):
            perfprof.schedule(**{"wait": 0, "active": 1, field: True})
    # Each count fits, their sums do not (the core's int64 overflowed before: every step read NONE).
    with pytest.raises(ValueError, match=r"'wait' \+ 'warmup' \+ 'active' must be from 0 to 2\*\*62 - 1"):
        perfprof.schedule(wait=2 ** 61, warmup=2 ** 61, active=2 ** 61)
    with pytest.raises(ValueError, match=r"'repeat' \* \('wait' \+ 'warmup' \+ 'active'\)"):
        perfprof.schedule(wait=2 ** 31, active=2 ** 31, repeat=2 ** 31)


TOP = 2 ** 62 - 1  # the last step number


@pytest.mark.parametrize("arguments, expected", [
    (dict(wait=TOP - 2, warmup=1, active=1, repeat=1),  # one cycle as long as the step counter allows
     {0: "NONE", TOP - 3: "NONE", TOP - 2: "WARMUP", TOP - 1: "RECORD_AND_SAVE", TOP: "NONE"}),
    (dict(wait=1, warmup=1, active=TOP - 2, skip_first_wait=1),  # step + wait reaches 2**62
     {0: "WARMUP", 1: "RECORD", TOP - 3: "RECORD", TOP - 2: "RECORD_AND_SAVE", TOP - 1: "NONE", TOP: "WARMUP"}),
    (dict(wait=2 ** 40, warmup=0, active=2 ** 20, repeat=2 ** 21 - 1),  # repeat * cycle just below 2**62
     {0: "NONE", 2 ** 40: "RECORD", 2 ** 40 + 2 ** 20 - 1: "RECORD_AND_SAVE", 2 ** 40 + 2 ** 20: "NONE",
      (2 ** 21 - 1) * (2 ** 40 + 2 ** 20) - 1: "RECORD_AND_SAVE", TOP: "NONE"}),
    (dict(wait=0, warmup=0, active=1, skip_first=TOP), {0: "NONE", TOP - 1: "NONE", TOP: "RECORD_AND_SAVE"}),
])
def test_schedules_at_the_limits_give_the_actions_counted_by_hand(arguments, expected):
    ours, torchs = perfprof.schedule(**arguments), torch.profiler.schedule(**arguments)
    assert {step: ours(step).name for step in expected} == expected
    # torch.profiler's schedule agrees where its float division `step / cycle` is exact.
    assert {step: torchs(step).name for step in expected if step < 2 ** 53} == \
        {step: action for step, action in expected.items() if step < 2 ** 53}
    with pytest.raises(ValueError, match="'step'"):
        ours(TOP + 1)


def test_step_num_is_a_step_number_the_core_counts():
    prof = perfprof.profile()
    prof.step_num = 2 ** 62 - 1
    assert prof.step_num == 2 ** 62 - 1
    for value in (2 ** 62, 2 ** 64, -1):  # 2**64 was a raw pybind11 TypeError
        with pytest.raises(ValueError, match=r"'step_num' must be from 0 to 2\*\*62 - 1"):
            prof.step_num = value
    with pytest.raises(TypeError, match="'step_num'"):
        prof.step_num = 1.0


def test_post_processing_timeout_and_device_ranges():
    assert perfprof.profile(post_processing_timeout_s=float("inf")).post_processing_timeout_s == float("inf")
    # In torch.profiler's words, which scripts match (issue 32); its range is still 0 s or more.
    with pytest.raises(ValueError, match=r"post_processing_timeout_s must be non-negative, got -0.5"):
        perfprof.profile(post_processing_timeout_s=-0.5)
    with pytest.raises(ValueError, match=r"'device' must be from 0 to 2\*\*31 - 1, got 4294967296"):
        perfprof.supported_gpu_metrics(2 ** 32)  # a C int in CUPTI's calls: a raw pybind11 TypeError before


def numeric_dynamic_fields() -> List[str]:
    defaults = DynamicConfig(options=perfprof._options.ProfilerOptions())
    return [field for field in _COLLECTION_FIELDS
            if isinstance(getattr(defaults, field), int) and not isinstance(getattr(defaults, field), bool)]


@pytest.mark.parametrize("field", numeric_dynamic_fields())
def test_a_dynamic_config_number_outside_its_range_is_named_and_takes_its_default(field):
    default = getattr(parse("{}")[0], field)
    for refused in (2 ** 80, 2 ** 62, -2, True, "1", 1.5):
        config, problems = parse(json.dumps({field: refused}))
        assert getattr(config, field) == default and len(problems) == 1, refused
        assert problems[0].startswith(f"'{field}' must be ") and problems[0].endswith("; the default is used")
    config, problems = parse(json.dumps({field: 2 ** 62 - 1}))
    assert getattr(config, field) == 2 ** 62 - 1 and problems == []


def test_a_dynamic_configs_experimental_number_outside_its_range_takes_its_default():
    config, problems = parse(json.dumps({"experimental_config": {"record_limit_mb": 2 ** 80, "mstx": True}}))
    assert config.options.experimental_config.record_limit_mb is None
    assert config.options.experimental_config.mstx
    assert problems == [f"experimental_config: ExperimentalConfig: 'record_limit_mb' must be from 1 to 2**30 MiB, "
                        f"got {2 ** 80}; the default is used"]


def test_ranges_read_the_same_in_errors_and_in_docs_api():
    """docs/api.md states each ExperimentalConfig number's range as its errors do."""
    import pathlib

    table = (pathlib.Path(__file__).parents[2] / "docs" / "api.md").read_text()
    rows: Dict[str, str] = {re.sub(r"[`]", "", row.split("|")[1]).split()[0]: row
                            for row in table.splitlines() if row.startswith("| `")}
    for field in numeric_fields():
        with pytest.raises(ValueError) as error:
            ExperimentalConfig(**{field: 2 ** 80})
        stated = _RANGE.search(str(error.value))
        words = f"from {stated.group('low')} to {stated.group('high')}"
        assert words in rows[field], (field, words, rows[field])


@pytest.mark.parametrize("option, value, stated", [
    ("--gc-detect-threshold", "1e13", "10000000000000.0 is not in the range 0<=x<=1000000000000.0"),
    ("--warmup-steps", str(2 ** 62), f"{2 ** 62} is not in the range 0<=x<={2 ** 62 - 1}"),
])
def test_perfprof_run_refuses_a_number_outside_its_range_before_the_script_runs(option, value, stated, tmp_path):
    from click.testing import CliRunner

    from perfprof.cli import main

    script = tmp_path / "script.py"
    script.write_text("raise SystemExit('the script ran')\n")
    result = CliRunner().invoke(main, ["run", "-o", str(tmp_path / "out"), option, value, str(script)])
    assert result.exit_code == 2 and f"Invalid value for '{option}': {stated}" in result.output, result.output


def test_a_rank_list_holds_ranks_torch_distributed_can_number():
    assert parse(json.dumps({"rank_list": [0, 2 ** 31 - 1]}))[0].rank_list == (0, 2 ** 31 - 1)
    config, problems = parse(json.dumps({"rank_list": [1, 2 ** 31]}))
    assert config.rank_list == () and problems == [
        f"'rank_list' must be a list of ranks (integers from 0 to 2**31 - 1), got [1, {2 ** 31}]; the default is used"]


def test_group_by_stack_n_is_a_number_of_frames_the_core_counts():
    with perfprof.profile(activities=[ProfilerActivity.CPU]) as prof:
        with perfprof.record_function("work"):
            pass
    assert [row.key for row in prof.key_averages(group_by_stack_n=2 ** 31 - 1)] == ["work"]
    for events in (prof, prof.events()):  # the profiler's and an EventList's key_averages
        with pytest.raises(ValueError, match=r"'group_by_stack_n' must be from 0 to 2\*\*31 - 1, got 2147483648"):
            events.key_averages(group_by_stack_n=2 ** 31)  # a raw pybind11 TypeError before
        with pytest.raises(TypeError, match="'group_by_stack_n' must be an int"):
            events.key_averages(group_by_stack_n=True)
