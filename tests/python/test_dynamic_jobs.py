"""Dynamic profiling of whole jobs: a training script that never imports perfprof, profiled
through PERFPROF_CONFIG_PATH (one process, and two ranks under torchrun) and through
`perfprof run`."""
from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from child_process import child_env
from trace_checks import load_trace, names, run_dirs, trace_file_of

pytest.importorskip("torch")

TRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dp_train.py")
TIMEOUT_S = 90


def steps_of(run_dir: str):
    return sorted((name for name in names(load_trace(trace_file_of(run_dir))) if name.startswith("ProfilerStep#")),
                  key=lambda name: int(name.split("#")[1]))


def wait_for(condition, what: str, process=None, timeout: float = TIMEOUT_S):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            raise AssertionError(f"the job ended ({process.returncode}) while waiting for {what}:\n"
                                 f"{process.stdout.read()}{process.stderr.read()}")
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def stop_job(job: subprocess.Popen, stop_file: str):
    """Ask the training loop to stop (it checks `stop_file` each step); its stdout and stderr.
    A job that does not stop in time is killed with its whole session (started with
    start_new_session=True)."""
    open(stop_file, "w").close()
    try:
        return job.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGKILL)  # the job's own session: torchrun's workers too
        return job.communicate()


def write_config(path: str, content: str, mtime: float = None) -> None:
    """Replace the config as an editor saving it would; `mtime` sets its modification time."""
    with open(path, "w") as file:
        file.write(content)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


def analysed_run_dirs(root: str):
    return [run_dir for run_dir in run_dirs(root) if glob.glob(os.path.join(run_dir, "PERFPROF_OUTPUT", "*.json"))]


def read_logs(config_dir: str, prefix: str) -> str:
    return "".join(open(path).read() for path in sorted(glob.glob(os.path.join(config_dir, "log", f"{prefix}*.log"))))


def wait_until_watching(config_dir: str, processes: int, job: subprocess.Popen) -> None:
    """Until each of the job's `processes` logs that it watches the config: what the file holds
    before then is the job's starting state, not a request."""
    wait_for(lambda: read_logs(config_dir, "dp_").count("watching ") == processes,
             f"{processes} process(es) to watch the config", job)


def test_editing_the_config_of_a_job_started_with_perfprof_config_path_profiles_it(tmp_path):
    config_dir, out, stop = str(tmp_path / "config"), str(tmp_path / "out"), str(tmp_path / "stop")
    env = dict(child_env(), PERFPROF_CONFIG_PATH=config_dir)
    job = subprocess.Popen([sys.executable, TRAIN, "--until", stop, "--step-seconds", "0.02"], cwd=str(tmp_path),
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        config = os.path.join(config_dir, "profiler_config.json")
        wait_until_watching(config_dir, 1, job)
        assert json.load(open(config))["start_step"] == 0
        request = {"start_step": -1, "active": 2, "prof_dir": out, "analyse": True, "activities": ["CPU"]}
        write_config(config, json.dumps(request))
        first_mtime = os.stat(config).st_mtime
        wait_for(lambda: len(analysed_run_dirs(out)) == 1, "the first run directory", job)

        write_config(config, '{"start_step": -1, "active": ', mtime=first_mtime)  # torn or wrong: changes nothing
        wait_for(lambda: "not valid JSON" in read_logs(config_dir, "monitor_dp_"), "the invalid file logged", job)

        # Saved with the same modification time as the first edit: only its content tells it changed.
        write_config(config, json.dumps(dict(request, metadata={"edit": 2})), mtime=first_mtime)
        wait_for(lambda: len(analysed_run_dirs(out)) == 2, "the second run directory", job)
        # Two edits within one second (the same mtime again): the second is seen too.
        write_config(config, json.dumps(dict(request, metadata={"edit": 3})), mtime=first_mtime)
        wait_for(lambda: len(analysed_run_dirs(out)) == 3, "the third run directory", job)
    finally:
        stdout, stderr = stop_job(job, stop)
    assert job.returncode == 0, stderr
    assert "rank 0 trained" in stdout
    collected = run_dirs(out)
    assert len(collected) == 3  # the invalid file made none
    for run_dir in collected:
        steps = steps_of(run_dir)
        assert len(steps) == 2 and int(steps[0].split("#")[1]) >= 1, steps  # counted on optimizer steps
        assert int(steps[1].split("#")[1]) == int(steps[0].split("#")[1]) + 1
    metadata = [json.load(open(os.path.join(d, "profiler_metadata.json")))["metadata"] for d in collected]
    assert metadata == [{}, {"edit": 2}, {"edit": 3}]
    actions = read_logs(config_dir, "dp_")
    assert actions.count("collection started") == 3 and actions.count("done:") == 3
    assert "Dynamic profiler process done" in read_logs(config_dir, "monitor_dp_")


def test_without_perfprof_config_path_nothing_is_imported_at_start_up():
    probe = "import sys; print(sorted(m for m in sys.modules if 'perfprof' in m))"
    env = {key: value for key, value in child_env().items() if key != "PERFPROF_CONFIG_PATH"}
    unset = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert unset.stdout.strip() == "[]"
    armed = subprocess.run([sys.executable, "-c", probe], env=dict(env, PERFPROF_CONFIG_PATH="unused_dir"),
                           capture_output=True, text=True, check=True)
    # Set: only the hook that waits for torch.optim; perfprof itself loads at the first optimizer step.
    assert armed.stdout.strip() == "['_perfprof_autostart']"


@pytest.mark.skipif(shutil.which("torchrun") is None, reason="torchrun is not installed")
def test_under_torchrun_only_the_ranks_in_rank_list_collect_and_one_process_reads_the_config(tmp_path):
    config_dir, out, stop = str(tmp_path / "config"), str(tmp_path / "out"), str(tmp_path / "stop")
    env = dict(child_env(), PERFPROF_CONFIG_PATH=config_dir, OMP_NUM_THREADS="1")
    job = subprocess.Popen(["torchrun", "--standalone", "--nproc_per_node=2", TRAIN, "--distributed",
                            "--until", stop, "--step-seconds", "0.02"], cwd=str(tmp_path), env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        config = os.path.join(config_dir, "profiler_config.json")
        wait_until_watching(config_dir, 2, job)
        write_config(config, json.dumps({"start_step": -1, "active": 2, "prof_dir": out, "is_rank": True,
                                         "rank_list": [1], "activities": ["CPU"]}))
        wait_for(lambda: read_logs(config_dir, "dp_").count("rank_list") + read_logs(config_dir, "dp_").count(" done:")
                 == 2, "both ranks to act on the config", job)
    finally:
        stdout, stderr = stop_job(job, stop)
    assert job.returncode == 0, stderr
    assert "rank 0 trained" in stdout and "rank 1 trained" in stdout  # both kept training
    (run_dir,) = run_dirs(out)  # rank 1 only
    info = json.load(open(os.path.join(run_dir, "profiler_info.json")))
    assert (info["rank"], info["world_size"], info["backend"]) == (1, 2, "gloo")
    assert "rank 0 is not in rank_list [1]" in read_logs(config_dir, "dp_")
    readers = [path for path in glob.glob(os.path.join(config_dir, "log", "monitor_dp_*.log"))
               if "for the node" in open(path).read()]
    assert len(readers) == 1  # one process of the node read the shared file at a time


# -- perfprof run ---------------------------------------------------------------------------------

def perfprof_run(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "perfprof", "run", *args], cwd=cwd, env=child_env(),
                          capture_output=True, text=True, timeout=TIMEOUT_S)


def test_perfprof_run_counts_optimizer_steps_and_passes_the_exit_code_through(tmp_path):
    result = perfprof_run("-o", "out", "--schedule", "wait=1,warmup=1,active=2,repeat=1", "--activities", "cpu",
                          TRAIN, "--steps", "8", "--step-seconds", "0", "--exit-code", "3", cwd=str(tmp_path))
    assert result.returncode == 3, result.stderr
    assert "rank 0 trained 8 steps" in result.stdout
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert steps_of(run_dir) == ["ProfilerStep#2", "ProfilerStep#3"]
    assert f"perfprof: run directory: {os.path.join('out', os.path.basename(run_dir))}" in result.stderr
    assert "aten::addmm" in names(load_trace(trace_file_of(run_dir)))


def test_perfprof_run_dash_m_records_every_step_without_a_schedule(tmp_path):
    shutil.copy(TRAIN, tmp_path / "train_module.py")
    result = perfprof_run("-o", "out", "--activities", "cpu", "--record-shapes", "--host-sys", "cpu,mem",
                          "-m", "train_module", "--steps", "3", "--step-seconds", "0", cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    assert steps_of(run_dir) == ["ProfilerStep#0", "ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]
    info = json.load(open(os.path.join(run_dir, "profiler_info.json")))
    assert info["config"]["record_shapes"] is True
    assert info["config"]["experimental_config"]["host_sys"] == ["cpu", "mem"]
    # Profiling began before the script imported torch: its operators are captured from the import on.
    addmm = [event for event in load_trace(trace_file_of(run_dir))["traceEvents"] if event.get("name") == "aten::addmm"]
    assert len(addmm) >= 3 and all("Input Dims" in event["args"] for event in addmm)


def test_perfprof_run_with_a_config_collects_from_its_start_step(tmp_path):
    config = tmp_path / "profiler_config.json"
    config.write_text(json.dumps({"start_step": 3, "active": 2, "prof_dir": "dp_out", "analyse": True,
                                  "activities": ["CPU"]}))
    result = perfprof_run("--config", str(config), TRAIN, "--steps", "8", "--step-seconds", "0", cwd=str(tmp_path))
    assert result.returncode == 0, result.stderr
    (run_dir,) = run_dirs(str(tmp_path / "dp_out"))
    assert steps_of(run_dir) == ["ProfilerStep#3", "ProfilerStep#4"]


def test_perfprof_run_explicit_steps_and_a_failing_script_still_write_the_trace(tmp_path):
    script = tmp_path / "explicit.py"
    script.write_text("from perfprof import dynamic_profile as dp\n"
                      "for step in range(3):\n"
                      "    dp.step()\n"
                      "raise RuntimeError('the script failed')\n")
    result = perfprof_run("-o", "out", "--activities", "cpu", "--steps-on", "explicit", str(script), cwd=str(tmp_path))
    assert result.returncode == 1
    assert "RuntimeError: the script failed" in result.stderr
    (run_dir,) = run_dirs(str(tmp_path / "out"))
    # The script calls no torch.nn.Module: its first step begins at the first step boundary, what
    # comes before is start-up (no ProfilerStep#0); #3, which the script failed in, is the tail.
    assert steps_of(run_dir) == ["ProfilerStep#1", "ProfilerStep#2", "ProfilerStep#3"]


def test_perfprof_run_refuses_a_bad_command_line(tmp_path):
    missing = perfprof_run("no_such_script.py", cwd=str(tmp_path))
    assert missing.returncode == 2 and "no such script: no_such_script.py" in missing.stderr
    bad_group = perfprof_run("--gpu-metrics", "Bogus", TRAIN, cwd=str(tmp_path))
    assert bad_group.returncode == 2 and "gpu_metrics" in bad_group.stderr
    bad_schedule = perfprof_run("--schedule", "wait=x", TRAIN, cwd=str(tmp_path))
    assert bad_schedule.returncode == 2 and "'wait=x' is not NAME=INTEGER" in bad_schedule.stderr
    config = tmp_path / "profiler_config.json"
    config.write_text("{}")
    both = perfprof_run("--config", str(config), "--record-shapes", TRAIN, cwd=str(tmp_path))
    assert both.returncode == 2 and "--record-shapes cannot be used with it" in both.stderr
