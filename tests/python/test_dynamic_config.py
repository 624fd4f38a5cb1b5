"""profiler_config.json as dynamic profiling reads it: defaults, checks that never stop the job,
and changes seen by content (tests/python/test_dynamic_config.py)."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from perfprof import ExperimentalConfig, ExportType, ProfilerLevel
from perfprof._dynamic_config import CONFIG_FILE, ConfigWatcher, DynamicConfig, parse, template
from perfprof.activity import ProfilerActivity


def test_the_template_lists_every_field_with_its_default_and_reads_back_as_the_defaults():
    content = json.loads(template())
    assert list(content) == ["activities", "record_shapes", "profile_memory", "with_stack", "with_flops",
                             "with_modules", "start_step", "active", "warmup", "prof_dir", "analyse", "async_mode",
                             "is_rank", "rank_list", "metadata", "auto_plot", "plot_required", "plot",
                             "experimental_config"]
    assert content["start_step"] == 0 and content["active"] == 1 and content["prof_dir"] == "./"
    assert content["experimental_config"] == ExperimentalConfig().to_dict()
    config, problems = parse(template())
    assert problems == []
    empty, _ = parse("{}")
    assert dataclass_fields(config) == dataclass_fields(empty)  # left-out keys take their defaults
    assert empty.start_step == 0 and empty.rank_list == () and empty.metadata == {}


def dataclass_fields(config: DynamicConfig):
    return (config.start_step, config.active, config.warmup, config.prof_dir, config.analyse, config.async_mode,
            config.is_rank, config.rank_list, config.metadata, config.options.to_dict())


def test_the_spec_values_are_read_with_string_enums():
    config, problems = parse(json.dumps({
        "activities": ["CPU"], "record_shapes": True, "with_flops": True, "start_step": -1, "active": 2, "warmup": 1,
        "prof_dir": "runs/dp_1", "is_rank": True, "rank_list": [1, 3], "metadata": {"lr": 0.5},
        "experimental_config": {"profiler_level": "Level1", "export_type": ["text", "db"], "mstx": True,
                                "data_simplification": False}}))
    assert problems == []
    assert (config.start_step, config.active, config.warmup, config.prof_dir) == (-1, 2, 1, "runs/dp_1")
    assert config.options.activities == (ProfilerActivity.CPU,)
    assert config.options.record_shapes and config.options.with_flops and not config.options.profile_memory
    experimental = config.options.experimental_config
    assert experimental.profiler_level is ProfilerLevel.Level1 and experimental.mstx
    assert experimental.export_type == [ExportType.Text, ExportType.Db] and not experimental.data_simplification
    assert config.metadata == {"lr": 0.5}
    assert [config.collects_on_rank(rank) for rank in range(4)] == [False, True, False, True]
    assert parse('{"is_rank": false}')[0].collects_on_rank(7)


def test_bad_fields_are_named_and_take_their_defaults():
    config, problems = parse(json.dumps({
        "start_step": -2, "active": 0, "warmup": "1", "record_shapes": "yes", "rank_list": [1, -1], "typo_key": 1,
        "analyse": 1, "experimental_config": {"profiler_level": "Level9", "mstx": True, "no_such_option": 3}}))
    assert config is not None
    assert (config.start_step, config.active, config.warmup, config.analyse, config.rank_list) == (0, 1, 0, False, ())
    assert not config.options.record_shapes
    assert config.options.experimental_config.mstx  # the good field of experimental_config stays
    text = "\n".join(problems)
    for field in ("'start_step'", "'active'", "'warmup'", "'record_shapes'", "'rank_list'", "'typo_key'",
                  "'analyse'", "'profiler_level'", "'no_such_option'"):
        assert field in text, field
    assert len(problems) == 9


@pytest.mark.parametrize("text", ["{", '{"start_step": -1,', "[1, 2]", "", "null"])
def test_what_is_not_a_json_object_is_not_used(text):
    config, problems = parse(text)
    assert config is None and len(problems) == 1


def test_prof_dir_allows_letters_digits_underscore_and_hyphen_and_no_symbolic_link(tmp_path):
    for good in ("./", "result", "a/b_c-1", "../up", str(tmp_path / "runs")):
        assert parse(json.dumps({"prof_dir": good}))[0].prof_dir == good
    for bad in ("a b", "a;rm -rf", "$(id)", "x*", "dir\\name", ""):
        config, problems = parse(json.dumps({"prof_dir": bad}))
        assert config.prof_dir == "./" and "'prof_dir'" in problems[0], bad
    os.symlink(tmp_path, tmp_path / "link")
    config, problems = parse(json.dumps({"prof_dir": str(tmp_path / "link" / "runs")}))
    assert config.prof_dir == "./" and "symbolic link" in problems[0]


def test_changes_are_seen_by_content_not_by_modification_time(tmp_path):
    path = tmp_path / CONFIG_FILE
    path.write_text(template())
    reports = []
    watcher = ConfigWatcher(str(path), reports.append)
    assert watcher.poll() is None  # what the file held at init is not a request

    stat = os.stat(path)
    path.write_text(json.dumps({"start_step": -1, "active": 2}))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime: only the content tells
    assert watcher.poll().active == 2
    assert watcher.poll() is None  # taken once
    path.write_text(json.dumps({"start_step": -1, "active": 3}))  # a second edit within the second
    assert watcher.poll().active == 3

    older = tmp_path / "older.json"
    older.write_text(json.dumps({"start_step": 5}))
    os.utime(older, (1, 1))
    shutil.copy2(older, path)  # cp -p: an mtime older than the last one
    assert watcher.poll().start_step == 5
    assert reports == []


def test_a_torn_file_is_reported_once_and_read_again_until_it_parses(tmp_path):
    path = tmp_path / CONFIG_FILE
    reports = []
    watcher = ConfigWatcher(str(path), reports.append)
    assert watcher.poll() is None  # missing: nothing, and nothing reported
    path.write_text('{"start_step": -1, "act')  # being written
    assert watcher.poll() is None and watcher.poll() is None
    assert len(reports) == 1 and "not valid JSON" in reports[0] and str(path) in reports[0]
    path.write_text('{"start_step": -1, "active": 4}')
    assert watcher.poll().active == 4
