"""perfprof sweep --verify: a script records its outputs (perfprof.experiments.record_output),
perfprof aggregate compares each run's with its baseline's (mean relative error, --tolerance)."""
from __future__ import annotations

import csv
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy
import pytest
import torch
from click.testing import CliRunner

from child_process import child_env
from perfprof.cli.aggregate import aggregate as aggregate_command
from perfprof.experiments import (PASS, RunRecord, aggregate, check_tolerance, parse_baseline, read_results,
                                  record_output)
from perfprof.experiments._outputs import (MISMATCH, NO_BASELINE_OUTPUT, NO_OUTPUT, OUTPUTS_ENV, VERIFIED,
                                           read_outputs, verify)

T1 = "2026-01-05T10:00:00+00:00"


def test_record_output_writes_nothing_outside_a_verified_run(monkeypatch, tmp_path):
    monkeypatch.delenv(OUTPUTS_ENV, raising=False)
    assert record_output("logits", torch.ones(2)) is None
    monkeypatch.setenv(OUTPUTS_ENV, str(tmp_path / "out"))
    path = record_output("logits", torch.tensor([1.5, 2.5], dtype=torch.bfloat16))
    assert path == str(tmp_path / "out" / "logits.npy")
    (name, value), = read_outputs(str(tmp_path / "out")).items()
    assert name == "logits" and value.dtype == numpy.float64 and value.tolist() == [1.5, 2.5]
    record_output("logits", [[1, 2]])  # again: replaced
    assert read_outputs(str(tmp_path / "out"))["logits"].tolist() == [[1, 2]]


@pytest.mark.parametrize("name, error", [(3, TypeError), ("", ValueError), ("a/b", ValueError), ("..", ValueError)])
def test_a_bad_output_name_is_refused(name, error):
    with pytest.raises(error, match="record_output: 'name'"):
        record_output(name, torch.ones(1))


def save(folder: Path, **outputs) -> str:
    folder.mkdir(parents=True)
    for name, value in outputs.items():
        numpy.save(folder / f"{name}.npy", numpy.asarray(value, dtype=numpy.float64))
    return str(folder)


def test_mean_relative_error_by_hand(tmp_path):
    base = save(tmp_path / "base", a=[1.0, -2.0, 4.0], b=[0.0, 0.0])
    run = save(tmp_path / "run", a=[1.0, -2.5, 4.5], b=[0.0, 0.0])
    # a: (0 + 0.5 + 0.5) / (1 + 2 + 4) = 1/7; b: both zero, 0. Mean over the two outputs: 1/14.
    assert verify(run, base) == (VERIFIED, pytest.approx(1 / 14))
    assert verify(base, base) == (VERIFIED, 0.0)
    assert verify(save(tmp_path / "other", a=[1.0, 2.0]), base) == (MISMATCH, None)
    assert verify(save(tmp_path / "shape", a=[1.0, 2.0], b=[0.0, 0.0]), base) == (MISMATCH, None)
    assert verify(None, base) == (NO_OUTPUT, None)
    assert verify(run, None) == (NO_BASELINE_OUTPUT, None)
    assert verify(save(tmp_path / "zero", a=[0.0]), save(tmp_path / "z", a=[0.0])) == (VERIFIED, 0.0)
    assert verify(save(tmp_path / "x", a=[1.0]), save(tmp_path / "y", a=[0.0])) == (VERIFIED, float("inf"))


def record(config: dict, outputs: str, steps=(100, 100), repeat: int = 0) -> RunRecord:
    return RunRecord(workload="w.py", config=config, timestamp=T1, repeat=repeat, status=PASS,
                     step_times_ns=list(steps), outputs_dir=outputs)


def test_aggregate_verifies_each_run_against_its_baseline_and_flags_past_the_tolerance(tmp_path):
    base = save(tmp_path / "base", y=[1.0, 2.0])
    close = save(tmp_path / "close", y=[1.01, 2.0])   # 0.01 / 3
    far = save(tmp_path / "far", y=[1.5, 2.0])         # 0.5 / 3
    records = [record({"c": "0"}, base), record({"c": "1"}, close), record({"c": "2"}, far, steps=(50, 50)),
               record({"c": "2"}, None, repeat=1)]
    result = aggregate(records, parse_baseline("c=0"))
    assert [(v.series, v.repeat, v.code, v.mean_rel_error) for v in result.verifications] == [
        ("c=0", 0, VERIFIED, 0.0), ("c=1", 0, VERIFIED, pytest.approx(0.01 / 3)),
        ("c=2", 0, VERIFIED, pytest.approx(0.5 / 3)), ("c=2", 1, NO_OUTPUT, None)]
    assert check_tolerance(result, None) == []
    assert [str(flag) for flag in check_tolerance(result, 0.02)] == [
        "FLAG series=c=2 workload=w.py repeat 0: mean relative error 0.167 > tolerance 0.02",
        "FLAG series=c=2 workload=w.py repeat 1: outputs not verified (NO_OUTPUT)"]

    path = tmp_path / "results.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in records))
    runner = CliRunner()
    quiet = runner.invoke(aggregate_command, [str(path), "--baseline", "c=0"])
    assert quiet.exit_code == 0, quiet.output  # verified, but no tolerance asked
    with open(tmp_path / "verification.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert [(row["series"], row["code"], row["mean_rel_error"]) for row in rows][2:] == [
        ("c=2", VERIFIED, repr(0.5 / 3)), ("c=2", NO_OUTPUT, "")]
    flagged = runner.invoke(aggregate_command, [str(path), "--baseline", "c=0", "--tolerance", "0.02"])
    assert flagged.exit_code == 1
    assert "mean relative error 0.167 > tolerance 0.02" in flagged.stderr


def test_results_without_verification_write_no_verification_csv(tmp_path):
    path = tmp_path / "results.jsonl"
    path.write_text("".join(r.to_json() + "\n" for r in [record({"c": "0"}, None), record({"c": "1"}, None)]))
    assert CliRunner().invoke(aggregate_command, [str(path), "--baseline", "c=0", "--tolerance", "0"]).exit_code == 0
    assert not (tmp_path / "verification.csv").exists()


SCRIPT = textwrap.dedent("""
    import os
    import torch
    from perfprof.experiments import record_output

    torch.manual_seed(0)
    model = torch.nn.Linear(8, 4)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(16, 8)
    for _ in range(3):
        model(x).sum().backward()
        optimizer.step()
        optimizer.zero_grad()
    with torch.no_grad():
        record_output("logits", model(x) + float(os.environ["NOISE"]))
""")


def test_sweep_verify_end_to_end(tmp_path):
    (tmp_path / "train.py").write_text(SCRIPT)
    swept = subprocess.run([sys.executable, "-m", "perfprof", "sweep", "--grid", "NOISE=0,0.5", "--verify", "-o",
                            "out", "train.py"], cwd=tmp_path, env=child_env(), capture_output=True, text=True,
                           timeout=600)
    assert swept.returncode == 0, swept.stderr
    records = read_results([str(tmp_path / "out" / "results.jsonl")])
    assert [r.status for r in records] == [PASS, PASS] and all(r.outputs_dir for r in records)
    base, noisy = (read_outputs(r.outputs_dir)["logits"] for r in records)
    expected = numpy.abs(noisy - base).sum() / numpy.abs(base).sum()
    assert numpy.allclose(noisy - base, 0.5)
    (_, verified) = aggregate(records, parse_baseline("NOISE=0")).verifications
    assert verified.mean_rel_error == pytest.approx(expected, rel=1e-12)
    flagged = subprocess.run([sys.executable, "-m", "perfprof", "aggregate", "out/results.jsonl", "--baseline",
                              "NOISE=0", "--tolerance", "0.02"], cwd=tmp_path, env=child_env(),
                             capture_output=True, text=True, timeout=300)
    assert flagged.returncode == 1
    assert f"FLAG series=NOISE=0.5 workload=train.py repeat 0: mean relative error {expected:.3g}" in flagged.stderr
