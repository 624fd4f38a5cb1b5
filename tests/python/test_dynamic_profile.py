"""Dynamic profiling in one process: when collections start and end, dp.start/dp.init
precedence, logs, path checks and the node's single config reader
(tests/python/test_dynamic_profile.py; the subprocess scenarios are in test_dynamic_jobs.py)."""
from __future__ import annotations

import json
import logging
import os
import shutil
import stat
import time

import pytest

from perfprof import dynamic_profile as dp
from perfprof._dynamic_config import CONFIG_FILE, parse
from perfprof._dynamic_log import MAX_LOG_BYTES, DynamicLogs
from perfprof import _dynamic_profiler, _session
from perfprof._dynamic_profiler import DynamicProfiler, _Request
from perfprof._node_config import NodeConfigReader
from trace_checks import load_trace, names, run_dirs, trace_file_of


def request(**fields) -> _Request:
    fields.setdefault("activities", ["CPU"])
    fields.setdefault("analyse", True)
    config, problems = parse(json.dumps(fields))
    assert problems == []
    return _Request(config, "test")


def steps_of(run_dir: str):
    return sorted(name for name in names(load_trace(trace_file_of(run_dir))) if name.startswith("ProfilerStep#"))


def log_text(profiler: DynamicProfiler) -> str:
    return "".join(open(path).read() for path in profiler.logs.files)


@pytest.fixture
def engine(tmp_path, monkeypatch):
    """A DynamicProfiler on tmp_path/config (no monitor thread: requests are posted by the test),
    run directories under tmp_path/out."""
    monkeypatch.chdir(tmp_path)
    profiler = DynamicProfiler(str(tmp_path / "config"), watch=False)
    yield profiler
    profiler.close()


def run_steps(profiler: DynamicProfiler, count: int) -> None:
    for _ in range(count):
        profiler.step()


def test_start_step_minus_one_collects_active_steps_from_the_next_step(engine, tmp_path):
    run_steps(engine, 3)
    engine.post(request(start_step=-1, warmup=1, active=2, prof_dir="out"))
    run_steps(engine, 10)
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    # Taken at the boundary into step 4: step 4 is warm-up, steps 5 and 6 are recorded.
    assert steps_of(run_dir) == ["ProfilerStep#5", "ProfilerStep#6"]
    assert engine.run_dirs == [os.path.join("out", os.path.basename(run_dir))]


def test_a_future_start_step_waits_for_it_and_a_passed_one_is_logged_and_ignored(engine, tmp_path):
    engine.post(request(start_step=6, active=1, prof_dir="later"))
    run_steps(engine, 10)
    (run_dir,) = run_dirs(str(tmp_path / "later"))
    assert steps_of(run_dir) == ["ProfilerStep#6"]
    engine.post(request(start_step=4, active=1, prof_dir="passed"))
    run_steps(engine, 3)
    assert not (tmp_path / "passed").exists()
    assert "asks for step 4, which has passed; the config is ignored" in log_text(engine)


def test_start_step_zero_collects_nothing(engine, tmp_path):
    engine.post(request(start_step=0, prof_dir="out"))
    run_steps(engine, 5)
    assert not (tmp_path / "out").exists()
    assert "start_step 0: nothing is collected" in log_text(engine)


def test_a_config_changed_during_a_collection_starts_a_new_one_after_it_ends(engine, tmp_path):
    engine.post(request(start_step=-1, active=3, prof_dir="first"))
    run_steps(engine, 2)  # the collection runs steps 1-3
    engine.post(request(start_step=-1, active=2, prof_dir="second"))
    run_steps(engine, 10)
    assert steps_of(run_dirs(str(tmp_path / "first"))[0]) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    assert steps_of(run_dirs(str(tmp_path / "second"))[0]) == ["ProfilerStep#4", "ProfilerStep#5"]


def test_a_collection_that_cannot_start_leaves_the_next_one_collecting(engine, tmp_path, monkeypatch):
    """One collection of a long-running job fails to start (here the recording limit the core
    cannot hold): it was logged, but kept the recorder claimed, and every later collection of the
    job failed with 'another profiler is already collecting'."""
    with monkeypatch.context() as patch:
        patch.setattr(_session, "_record_limit_bytes", lambda limit_mb: 2 ** 100)
        engine.post(request(start_step=-1, active=1, prof_dir="first"))
        run_steps(engine, 3)
    assert not (tmp_path / "first").exists()
    assert "cannot start the collection of test: recording limit: TypeError(" in log_text(engine)
    engine.post(request(start_step=-1, active=2, prof_dir="second"))
    run_steps(engine, 4)
    (run_dir,) = run_dirs(str(tmp_path / "second"))
    assert steps_of(run_dir) == ["ProfilerStep#4", "ProfilerStep#5"]


def test_a_rank_outside_rank_list_does_not_collect(engine, tmp_path):
    engine.post(request(start_step=-1, prof_dir="out", is_rank=True, rank_list=[1, 2]))
    run_steps(engine, 4)
    assert not (tmp_path / "out").exists()
    assert "rank 0 is not in rank_list [1, 2]" in log_text(engine)
    engine.post(request(start_step=-1, prof_dir="out", is_rank=True, rank_list=[0]))
    run_steps(engine, 4)
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert os.listdir(run_dir).count("PERFPROF_OUTPUT") == 0  # is_rank: analysed offline, as the spec says


def write_config(path, **fields) -> str:
    fields.setdefault("activities", ["CPU"])
    fields.setdefault("analyse", True)
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(path, "w") as file:
        json.dump(fields, file)
    return str(path)


def test_dp_start_collects_from_the_call_and_has_no_effect_during_a_collection(engine, tmp_path):
    start_file = write_config(tmp_path / "start" / CONFIG_FILE, active=2, prof_dir="started", start_step=40)
    run_steps(engine, 2)
    engine.start_now(start_file)  # start_step is not used: the collection begins in step 2
    run_steps(engine, 1)
    engine.start_now(start_file)  # during the collection: logged, no effect
    run_steps(engine, 5)
    (run_dir,) = run_dirs(str(tmp_path / "started"))
    assert steps_of(run_dir) == ["ProfilerStep#2", "ProfilerStep#3"]
    assert "a collection (dp.start(" in log_text(engine) and "this call has no effect" in log_text(engine)


def test_dp_start_without_a_valid_file_uses_the_watched_config(engine, tmp_path):
    write_config(tmp_path / "config" / CONFIG_FILE, active=1, prof_dir="watched")
    bad = tmp_path / "bad" / CONFIG_FILE
    bad.parent.mkdir()
    bad.write_text("{ not json")
    engine.start_now(str(bad))
    run_steps(engine, 3)
    assert len(run_dirs(str(tmp_path / "watched"))) == 1
    assert "not valid JSON" in log_text(engine)


def test_a_watched_change_during_dp_start_collection_starts_after_it(engine, tmp_path):
    start_file = write_config(tmp_path / "start" / CONFIG_FILE, active=2, prof_dir="started")
    engine.start_now(start_file)
    engine.post(request(start_step=-1, active=1, prof_dir="watched"))
    run_steps(engine, 6)
    assert steps_of(run_dirs(str(tmp_path / "started"))[0]) == ["ProfilerStep#0", "ProfilerStep#1"]
    assert steps_of(run_dirs(str(tmp_path / "watched"))[0]) == ["ProfilerStep#2"]


def test_the_job_ending_during_a_collection_writes_what_it_recorded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    profiler = DynamicProfiler(str(tmp_path / "config"), watch=False)
    profiler.post(request(start_step=-1, active=5, prof_dir="out"))
    run_steps(profiler, 3)  # steps 1 and 2 recorded, 3 under way
    profiler.close()
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert steps_of(run_dir) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]


def test_metadata_and_options_of_the_config_reach_the_run_directory(engine, tmp_path):
    engine.post(request(start_step=-1, active=1, prof_dir="out", record_shapes=True, metadata={"lr": 0.1}))
    run_steps(engine, 3)
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    info = json.load(open(os.path.join(run_dir, "profiler_info.json")))
    assert info["config"]["record_shapes"] is True
    assert json.load(open(os.path.join(run_dir, "profiler_metadata.json")))["metadata"] == {"lr": 0.1}


def test_the_template_is_written_when_missing_and_never_replaces_a_users_file(tmp_path):
    config_dir = tmp_path / "config"
    profiler = DynamicProfiler(str(config_dir))
    try:
        template = json.loads((config_dir / CONFIG_FILE).read_text())
        assert template["start_step"] == 0 and "experimental_config" in template
    finally:
        profiler.close()
    (config_dir / CONFIG_FILE).write_text('{"start_step": 7}')
    DynamicProfiler(str(config_dir)).close()
    assert (config_dir / CONFIG_FILE).read_text() == '{"start_step": 7}'


def test_an_edit_saved_while_the_job_starts_watching_its_new_template_is_taken(tmp_path, monkeypatch):
    """The user saves a request between the job writing the template and its watcher reading
    the file: the change from the template the job wrote is a request, not the file's first state."""
    monkeypatch.chdir(tmp_path)
    config_dir = tmp_path / "config"

    def reader_after_an_edit(path, log):
        edit = {"start_step": -1, "active": 1, "prof_dir": "out", "analyse": True, "activities": ["CPU"]}
        (config_dir / CONFIG_FILE).write_text(json.dumps(edit))
        return NodeConfigReader(path, log)

    monkeypatch.setattr(_dynamic_profiler, "NodeConfigReader", reader_after_an_edit)
    monkeypatch.setattr(_dynamic_profiler, "FIRST_POLL_INTERVAL_S", 0.05)
    profiler = DynamicProfiler(str(config_dir))
    try:
        deadline = time.monotonic() + 30
        while not profiler.run_dirs and time.monotonic() < deadline:
            profiler.step()
            time.sleep(0.01)
    finally:
        profiler.close()
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert len(steps_of(run_dir)) == 1


# -- logs -----------------------------------------------------------------------------------------

def test_logs_rotate_at_200_kb_into_one_backup_with_private_permissions(tmp_path):
    logs = DynamicLogs(str(tmp_path / "config"), rank=3)
    try:
        line = "x" * 1000
        for _ in range(700):  # ~700 KB: rotates several times
            logs.actions.info(line)
        files = sorted(os.listdir(logs.directory))
        host_pid = f"{os.uname().nodename}_{os.getpid()}_rank_3"
        assert files == [f"dp_{host_pid}.log", f"dp_{host_pid}.log.1", f"monitor_dp_{host_pid}.log"]
        for name in files:
            path = os.path.join(logs.directory, name)
            assert os.path.getsize(path) <= MAX_LOG_BYTES
            assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
        assert stat.S_IMODE(os.stat(logs.directory).st_mode) == 0o750
        first = open(os.path.join(logs.directory, f"dp_{host_pid}.log")).readline()
        # time, level, pid, file: message
        assert f"[INFO] [{os.getpid()}] test_dynamic_profile.py: xxx" in first
    finally:
        logs.close()


def step_until(profiler: DynamicProfiler, done) -> None:
    """Step the job until `done()` (the monitor thread polls meanwhile); 60 s at most."""
    deadline = time.monotonic() + 60
    while not done() and time.monotonic() < deadline:
        profiler.step()
        time.sleep(0.01)


def test_logs_go_to_the_config_directory_made_again_while_the_job_runs(tmp_path, monkeypatch, caplog):
    """The configuration directory is deleted, then made again with a new request, while the
    job steps: the collection it starts is logged there (its logs went to the removed files)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(_dynamic_profiler, "FIRST_POLL_INTERVAL_S", 0.05)
    config_dir = tmp_path / "config"
    profiler = DynamicProfiler(str(config_dir))
    try:
        first_logs = profiler.logs.files
        shutil.rmtree(config_dir)
        with caplog.at_level(logging.WARNING, logger="perfprof"):
            profiler.logs.actions.info("while the directory is gone")  # left out, said once
            profiler.logs.actions.info("still gone")
        assert [record.getMessage() for record in caplog.records] == [
            f"perfprof: dynamic_profile: the log {first_logs[0]} cannot be written ([Errno 2] No such file or "
            f"directory: '{config_dir / 'log'}'); its lines are left out until its directory is back"]
        config_dir.mkdir()
        request = {"start_step": -1, "active": 1, "prof_dir": "out", "analyse": True, "activities": ["CPU"]}
        (config_dir / CONFIG_FILE).write_text(json.dumps(request))
        step_until(profiler, lambda: profiler.run_dirs)
    finally:
        profiler.close()
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert sorted(os.listdir(config_dir / "log")) == sorted(os.path.basename(path) for path in first_logs)
    actions, monitor = (open(path).read() for path in first_logs)
    assert "while the directory is gone" not in actions
    assert "collection started from" in actions and f"collection from {config_dir / CONFIG_FILE} done" in actions
    assert "Dynamic profiler process load json success" in monitor and "Dynamic profiler process done" in monitor
    assert stat.S_IMODE(os.stat(config_dir / "log").st_mode) == 0o750


def test_log_warnings_also_reach_perfprofs_logger(tmp_path, caplog):
    logs = DynamicLogs(str(tmp_path), rank=0)
    try:
        with caplog.at_level(logging.INFO, logger="perfprof"):
            logs.actions.info("only in the file")
            logs.actions.warning("in the file and on stderr")
        assert [record.getMessage() for record in caplog.records] == [
            "perfprof: dynamic_profile: in the file and on stderr"]
    finally:
        logs.close()


# -- paths ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["has space", "semi;colon", "dot.name", "star*"])
def test_init_refuses_paths_with_characters_outside_letters_digits_underscore_hyphen(tmp_path, bad):
    with pytest.raises(ValueError, match=r"dynamic_profile\.init: .* may hold only letters, digits, '_' and '-'"):
        dp.init(str(tmp_path / bad))
    assert not (tmp_path / bad).exists()


def test_init_refuses_a_symbolic_link_and_a_non_path(tmp_path):
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    with pytest.raises(ValueError, match="is a symbolic link"):
        dp.init(str(tmp_path / "link" / "config"))
    with pytest.raises(TypeError, match=r"dynamic_profile\.init: the path must be a str or os\.PathLike, got int"):
        dp.init(3)


def test_dp_step_before_init_does_nothing_and_a_second_init_is_ignored(tmp_path, monkeypatch, caplog):
    monkeypatch.chdir(tmp_path)
    dp.step()
    dp.init(str(tmp_path / "one"))
    try:
        with caplog.at_level(logging.WARNING, logger="perfprof"):
            dp.init(str(tmp_path / "two"))
        assert "already started by dp.init(" in caplog.text
        assert not (tmp_path / "two").exists()
        dp.step()
        assert dp._profiler.step_num == 1
    finally:
        dp._close()
    dp.step()  # after the end: nothing


# -- one reader per node --------------------------------------------------------------------------

def test_one_process_reads_the_shared_file_and_the_others_read_its_copy(tmp_path):
    shared = tmp_path / CONFIG_FILE
    shared.write_text("one")
    said = []
    first, second = NodeConfigReader(str(shared), said.append), NodeConfigReader(str(shared), said.append)
    try:
        assert first.read() == b"one" and first.is_reader
        assert second.read() == b"one" and not second.is_reader
        shared.write_text("two")
        assert second.read() == b"one"  # the copy changes when the reader reads
        assert first.read() == b"two" and second.read() == b"two"
        shared.unlink()
        assert first.read() is None and second.read() is None
        shared.write_text("three")
        first.close()  # the reader goes: the next poll of another process takes over
        assert second.read() == b"three" and second.is_reader
        assert sum("reads" in line and "for the node" in line for line in said) == 2
    finally:
        first.close()
        second.close()


def test_a_copy_left_by_a_killed_reader_is_not_taken_for_the_file(tmp_path):
    shared = tmp_path / CONFIG_FILE
    shared.write_text("current")
    killed = NodeConfigReader(str(shared), lambda line: None)
    killed.read()
    mirror = killed._mirror_path
    os.close(killed._lock_fd)  # as the kernel does when the reader is SIGKILLed: the copy stays
    killed._lock_fd = None
    with open(mirror, "w") as file:
        file.write("stale")
    reader = NodeConfigReader(str(shared), lambda line: None)
    try:
        assert reader.read() == b"current"
        assert open(mirror).read() == "current"
    finally:
        reader.close()
    assert not os.path.exists(mirror)  # a reader that closes takes its copy with it


def test_the_poll_interval_follows_the_jobs_step_time_not_the_writing_of_run_directories(engine, monkeypatch):
    from perfprof import _dynamic_profiler
    from perfprof.trace_handler import TraceHandler

    now = [1000.0]
    monkeypatch.setattr(_dynamic_profiler, "_clock", lambda: now[0])
    write = TraceHandler.__call__

    def slow_write(handler, prof):
        now[0] += 30.0  # writing the run directory takes long: not a step of the job
        write(handler, prof)

    monkeypatch.setattr(TraceHandler, "__call__", slow_write)
    assert engine.poll_interval_s == 2.0
    engine.post(request(start_step=-1, active=2, prof_dir="out"))
    for _ in range(4):
        engine.step()
        now[0] += 1.5  # each step of the job takes 1.5 s
    assert engine.poll_interval_s == 1.5
    engine.post(request(start_step=-1, active=2, prof_dir="out"))
    for _ in range(4):
        engine.step()
        now[0] += 0.01
    assert engine.poll_interval_s == 1.0  # never below one second


def test_a_bad_metadata_entry_is_left_out_and_the_collection_goes_on(engine, tmp_path):
    engine.post(request(start_step=-1, active=1, prof_dir="out", metadata={"traceEvents": 1, "": 2, "lr": 0.1}))
    run_steps(engine, 3)
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert json.load(open(os.path.join(run_dir, "profiler_metadata.json")))["metadata"] == {"lr": 0.1}
    assert "metadata 'traceEvents' is left out" in log_text(engine) and "metadata '' is left out" in log_text(engine)


def test_a_config_file_that_is_a_symbolic_link_is_not_read(engine, tmp_path):
    real = tmp_path / "real.json"
    real.write_text(json.dumps({"start_step": -1, "active": 1, "prof_dir": "linked", "activities": ["CPU"]}))
    (tmp_path / "start").mkdir()
    link = tmp_path / "start" / CONFIG_FILE
    link.symlink_to(real)
    engine.start_now(str(link))  # refused; the watched config (the template: start_step 0) is used instead
    run_steps(engine, 3)
    assert not (tmp_path / "linked").exists()
    assert "is a symbolic link" in log_text(engine)
    said = []
    reader = NodeConfigReader(str(link), said.append)
    try:
        assert reader.read() is None and reader.read() is None
        assert sum("is a symbolic link: it is not read" in line for line in said) == 1
    finally:
        reader.close()


def test_dp_init_after_dp_start_without_init_starts_watching(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    start_file = write_config(tmp_path / "start" / CONFIG_FILE, active=1, prof_dir="started")
    try:
        dp.start(start_file)
        dp.step()
        dp.step()
        assert len(run_dirs(str(tmp_path / "started"))) == 1
        dp.init(str(tmp_path / "config"))
        assert (tmp_path / "config" / CONFIG_FILE).exists()
        assert dp._profiler.config_path == str(tmp_path / "config" / CONFIG_FILE)
    finally:
        dp._close()


def test_dp_start_in_a_directory_that_cannot_be_used_collects_nothing_and_does_not_raise(tmp_path, caplog):
    with caplog.at_level(logging.WARNING, logger="perfprof"):
        dp.start(str(tmp_path / "bad name" / CONFIG_FILE))
        dp.start("/proc/no_such_dir/profiler_config.json")
    assert dp._profiler is None
    assert "may hold only letters" in caplog.text
