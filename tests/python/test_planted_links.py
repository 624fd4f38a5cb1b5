"""Temporary files perfprof writes through are created exclusively under random names (issue 20's
file faults): a symbolic link planted at a name perfprof used to pick (``<path>.tmp<pid>.<n>``,
``profiler_info.json.tmp<pid>``) is never followed, so its target is never overwritten."""
from __future__ import annotations

import os
import stat

import perfprof
from perfprof._run_directory import write_json

VICTIM_TEXT = "not perfprof's to overwrite\n"


def plant(victim, names) -> None:
    victim.write_text(VICTIM_TEXT)
    for name in names:
        os.symlink(victim, name)


def test_an_export_never_writes_through_a_link_planted_at_a_temporary_name(tmp_path):
    target = tmp_path / "trace.json"
    pid = os.getpid()
    plant(tmp_path / "victim", [f"{target}.tmp{pid}.{n}" for n in range(200)])
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU]) as prof:
        with perfprof.record_function("work"):
            pass
    prof.export_chrome_trace(str(target))
    assert (tmp_path / "victim").read_text() == VICTIM_TEXT
    assert '"work"' in target.read_text()
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_run_directory_files_never_write_through_a_planted_link(tmp_path):
    target = tmp_path / "profiler_info.json"
    plant(tmp_path / "victim", [f"{target}.tmp{os.getpid()}"])
    write_json(str(target), {"rank": 0})
    assert (tmp_path / "victim").read_text() == VICTIM_TEXT
    assert target.read_text() == '{\n  "rank": 0\n}\n'
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp" in p.name) == [f"profiler_info.json.tmp{os.getpid()}"]


def test_a_capture_is_created_exclusively_with_mode_0640(tmp_path):
    from perfprof import _core

    plant(tmp_path / "victim", [tmp_path / "capture.ppcap"])
    planted = _core.CaptureStream(str(tmp_path / "capture.ppcap"))
    assert not planted.ok and "capture.ppcap" in planted.error
    assert (tmp_path / "victim").read_text() == VICTIM_TEXT

    fresh = _core.CaptureStream(str(tmp_path / "fresh.ppcap"))
    assert fresh.ok, fresh.error
    assert stat.S_IMODE((tmp_path / "fresh.ppcap").stat().st_mode) == 0o640


def test_a_link_planted_at_perfprof_output_is_not_written_through(tmp_path):
    import subprocess
    import sys

    from child_process import child_env

    out = tmp_path / "out"
    script = ("import sys, perfprof\n"
              "with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU], on_trace_ready="
              "perfprof.tensorboard_trace_handler(sys.argv[1], analyse_flag=False)) as prof:\n"
              "    pass\n")
    subprocess.run([sys.executable, "-c", script, str(out)], env=child_env(), check=True, timeout=120)
    (run_dir,) = out.iterdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, run_dir / "PERFPROF_OUTPUT")
    analysed = subprocess.run([sys.executable, "-m", "perfprof", "analyse", str(run_dir)], env=child_env(),
                              capture_output=True, text=True, timeout=120)
    assert analysed.returncode != 0
    said = analysed.stdout + analysed.stderr
    assert "PERFPROF_OUTPUT" in said and "symbolic link" in said
    assert list(elsewhere.iterdir()) == []
