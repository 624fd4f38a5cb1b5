import json
import os
import subprocess
import sys
import threading

import pytest

import perfprof
from perfprof import trace_handler
from trace_checks import load_trace, names, run_dirs, trace_file_of


def one_cycle(handler, steps=2, **profile_args):
    with perfprof.profile(schedule=perfprof.schedule(wait=0, active=1, repeat=steps),
                          on_trace_ready=handler, **profile_args) as prof:
        prof.add_metadata("run", "nightly")
        prof.add_metadata_json("sizes", '{"batch": 8, "layers": [1, 2]}')
        for _ in range(steps):
            with perfprof.record_function("work"):
                pass
            prof.step()
    return prof


def test_metadata_reaches_the_trace_and_the_metadata_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1")
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    monkeypatch.setenv("OMP_NUM_THREADS", "4")
    monkeypatch.setenv("UNRELATED_SECRET", "x")
    one_cycle(perfprof.tensorboard_trace_handler(str(tmp_path), worker_name="w0"), steps=1)
    (run_dir,) = run_dirs(str(tmp_path))
    assert os.path.basename(run_dir).startswith("w0_")
    trace = load_trace(trace_file_of(run_dir))
    assert trace["run"] == "nightly" and trace["sizes"] == {"batch": 8, "layers": [1, 2]}
    with open(os.path.join(run_dir, "profiler_metadata.json")) as f:
        metadata = json.load(f)
    assert metadata["metadata"] == {"run": "nightly", "sizes": {"batch": 8, "layers": [1, 2]}}
    env = metadata["environment_variables"]
    assert env["CUDA_VISIBLE_DEVICES"] == "0,1" and env["NCCL_DEBUG"] == "INFO" and env["OMP_NUM_THREADS"] == "4"
    assert "UNRELATED_SECRET" not in env


def test_rank_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "8")
    one_cycle(perfprof.tensorboard_trace_handler(str(tmp_path)), steps=1)
    (run_dir,) = run_dirs(str(tmp_path))
    assert load_trace(trace_file_of(run_dir))["distributedInfo"] == {"backend": "", "rank": 3, "world_size": 8}
    with open(os.path.join(run_dir, "profiler_info.json")) as f:
        assert json.load(f)["rank"] == 3


@pytest.mark.parametrize("call, error, message", [
    (lambda p: p.add_metadata(1, "v"), TypeError, "key must be str"),
    (lambda p: p.add_metadata("k", 2), TypeError, "value for 'k' must be str"),
    (lambda p: p.add_metadata_json("k", "{not json"), ValueError, "value for 'k' is not valid JSON"),
    (lambda p: p.add_metadata_json("k", "NaN"), ValueError, "k"),
    (lambda p: p.add_metadata("traceEvents", "x"), ValueError, "reserved"),
])
def test_bad_metadata_is_rejected_clearly(call, error, message):
    with pytest.raises(error, match=message):
        call(perfprof.profile())


def test_async_mode_does_not_block_step(tmp_path, monkeypatch):
    # Each write waits until the test lets it go, after the training loop has returned: a loop
    # that waited for its writes would find none done when it returned, or hang until released.
    released, written = threading.Event(), []
    real_write = trace_handler._RunDirectoryJob.write

    def held_write(job):
        released.wait(timeout=60)
        real_write(job)
        written.append(job)

    monkeypatch.setattr(trace_handler._RunDirectoryJob, "write", held_write)
    handler = perfprof.tensorboard_trace_handler(str(tmp_path), async_mode=True)
    one_cycle(handler, steps=2)
    assert written == []  # both cycles handed over, neither written yet
    released.set()
    handler.wait()
    assert len(written) == 2
    dirs = run_dirs(str(tmp_path))
    assert len(dirs) == 2
    for run_dir in dirs:
        assert names(load_trace(trace_file_of(run_dir))).count("work") == 1


def test_unwritable_directory_is_logged_and_training_goes_on(tmp_path, caplog):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    prof = one_cycle(perfprof.tensorboard_trace_handler(str(blocker / "runs")), steps=2)
    assert "cannot create a run directory" in caplog.text
    assert prof.step_num == 2


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(dir_name=3), TypeError, "dir_name"),
    (dict(dir_name=""), ValueError, "dir_name"),
    (dict(dir_name="d", worker_name="a/b"), ValueError, "worker_name"),
    (dict(dir_name="d", worker_name=7), TypeError, "worker_name"),
    (dict(dir_name="d", async_mode="yes"), TypeError, "async_mode"),
    (dict(dir_name="d", analyse_flag=None), TypeError, "analyse_flag"),
])
def test_handler_arguments_are_validated(kwargs, error, message):
    with pytest.raises(error, match=message):
        perfprof.tensorboard_trace_handler(**kwargs)


def test_export_formats_and_errors(tmp_path):
    with perfprof.profile() as prof:
        with perfprof.record_function('quote " backslash \\ newline \n tab \t unicode 日本 🚀'):
            pass
    plain = prof.export_chrome_trace(str(tmp_path / "nested" / "t.json"))
    packed = prof.export_chrome_trace(tmp_path / "t.json.gz")
    assert load_trace(plain)["traceEvents"] == load_trace(str(packed))["traceEvents"]
    assert 'quote " backslash \\ newline \n tab \t unicode 日本 🚀' in names(load_trace(plain))
    with open(packed, "rb") as f:
        assert f.read(2) == b"\x1f\x8b"

    (tmp_path / "blocker").write_text("")
    with pytest.raises(OSError, match="blocker"):
        prof.export_chrome_trace(str(tmp_path / "blocker" / "t.json"))
    with pytest.raises(OSError, match="nested': Is a directory"):  # an explicit export names what it cannot write
        prof.export_chrome_trace(str(tmp_path / "nested"))
    with pytest.raises(TypeError, match="path"):
        prof.export_chrome_trace(5)


def test_export_before_any_trace_is_an_error(tmp_path):
    with pytest.raises(RuntimeError, match="no trace yet"):
        perfprof.profile().export_chrome_trace(str(tmp_path / "t.json"))


FULL_DISK_SCRIPT = """
import os, resource, signal, sys
import perfprof
target = sys.argv[1]
with perfprof.profile() as prof:
    with perfprof.record_function("small"):
        pass
prof.export_chrome_trace(target)
with perfprof.profile() as prof:
    for i in range(20000):
        with perfprof.record_function(f"range {i}"):
            pass
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a full disk: writes fail with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
try:
    prof.export_chrome_trace(target)
except OSError as error:
    print("OSError:", error)
"""


def test_a_failed_export_leaves_the_old_file_intact(tmp_path):
    target = tmp_path / "t.json"
    result = subprocess.run([sys.executable, "-c", FULL_DISK_SCRIPT, str(target)],
                            capture_output=True, text=True, timeout=120, check=True)
    assert "OSError: cannot write" in result.stdout and str(target) in result.stdout
    assert names(load_trace(str(target))) == ["small"]
    assert os.listdir(tmp_path) == ["t.json"], "no temporary file is left behind"
