"""Slow-rank detection on synthetic data-parallel jobs of 2 to 64 ranks (cluster_jobs: each
rank's kernels and NCCL all-reduces played step by step, summarised as the map step does).

Issue 31: a symmetric job must get "No slow rank"; a planted slow rank (its kernels 1.6x longer,
last at every all-reduce) must be named, also when the first recorded step holds a host stall on
every rank, or on one other rank only; its numbers must equal a computation from the ranks' rows.
One job is also profiled through the CUPTI double into run directories and read by `perfprof
cluster`, as a real job's ranks are.
"""
from __future__ import annotations

import csv
import random
import statistics
import subprocess
import sys
from typing import Dict, List, Tuple

import pytest

pytest.importorskip("duckdb")

from child_process import child_env  # noqa: E402
from cluster_jobs import MS, US, Job, Row, rank_tables, reduce_tables, write_runs  # noqa: E402
from perfprof.cluster import slow_ranks_of  # noqa: E402
from perfprof.cluster._report import slow_rank_lines  # noqa: E402
from perfprof.cluster._slow_rank import verdict  # noqa: E402

# Columns of the steps table (cluster/_tables.py STEPS, after rank and run).
STEP, COMPUTING, COMMUNICATION = 2, 5, 8


def _stalls(ranks: int, slow_rank: int, where: str) -> Dict[int, int]:
    """The first step's host stalls (a first step compiling, or waiting for the data loader's
    workers): none, 6-10 s on every rank, or 8 s on one rank other than `slow_rank`."""
    if where == "every rank":
        draw = random.Random(ranks)
        return {rank: 6000 * MS + draw.randrange(4000 * MS) for rank in range(ranks)}
    if where == "one other rank":
        return {(slow_rank + 1) % ranks: 8000 * MS}
    return {}


def _host_bound(ranks: int, first_step_stalls: Dict[int, int]) -> Job:
    """A small model fed by a slow data loader: 5 ms of kernels in a 25 ms step. Rank 0 does
    what rank 0 does in a real job: 0.3 ms of logging each step (1% of the step), and 30 ms of
    one-off work in the first step (a checkpoint's metadata, say)."""
    return Job(ranks, seed=ranks, forward_ns=(300 * US,) * 4, backward_ns=(400 * US,) * 6, optimizer_ns=(100 * US,) * 2,
               bucket_bytes=(4 << 20, 4 << 20), transit_ns=(200 * US, 200 * US), host_gap_ns=20 * MS,
               extra_work=((0, None, 300 * US), (0, 0, 30 * MS)), first_step_stalls=first_step_stalls)


@pytest.mark.parametrize("first_step", ["steady", "every rank", "one other rank"])
@pytest.mark.parametrize("ranks", [2, 8])
def test_a_symmetric_job_has_no_slow_rank(tmp_path, ranks, first_step):
    slow, report = reduce_tables(tmp_path, rank_tables(_host_bound(ranks, _stalls(ranks, 0, first_step))))
    assert slow == []
    assert "## Slow ranks\n\nNo slow rank: no rank stands out" in report
    assert slow_ranks_of(tmp_path) == {"verdict": verdict([]), "slow_ranks": []}
    assert report.count("- **rank") == 0
    # Rank 0's first step does stand out, alone: it is listed among the steps, and is no verdict.
    assert "| 1 | Computing | 0 |" in report


def _median_excess(steps: List[Row], rank: int, column: int, sign: int = 1) -> float:
    """Over `rank`'s steps, the median of (its value - the other ranks' median) in `column`
    (sign -1: the other ranks' median - its value)."""
    by_step: Dict[str, Dict[int, int]] = {}
    for row in steps:
        by_step.setdefault(str(row[STEP]), {})[int(row[0])] = int(row[column])  # type: ignore[call-overload]
    return statistics.median(sign * (values[rank] - statistics.median(v for r, v in values.items() if r != rank))
                             for values in by_step.values())


def _late_arrivals(communication: List[Row], rank: int) -> Tuple[int, int, float]:
    """How many all-reduces `rank` arrived last to (the smallest elapse, the lowest rank on a
    tie) of how many, and over its steps the median of the other ranks' median wait summed over
    those it was last to; every rank runs them in the same order."""
    by_rank: Dict[int, List[Row]] = {}
    for row in communication:
        by_rank.setdefault(int(row[0]), []).append(row)  # type: ignore[call-overload]
    late, caused = 0, {str(row[10]): 0.0 for row in by_rank[rank]}
    for k, row in enumerate(by_rank[rank]):
        elapse = {r: int(rows[k][5]) - int(rows[k][4]) for r, rows in by_rank.items()}  # type: ignore[call-overload]
        if min(elapse, key=lambda r: (elapse[r], r)) == rank:
            late += 1
            caused[str(row[10])] += statistics.median(e - elapse[rank] for r, e in elapse.items() if r != rank)
    return late, len(by_rank[rank]), statistics.median(caused.values())


@pytest.mark.parametrize("first_step", ["steady", "every rank", "one other rank"])
@pytest.mark.parametrize("ranks", [2, 8, 32, 64])
def test_the_planted_slow_rank_is_named_whatever_its_first_step(tmp_path, ranks, first_step):
    slow_rank = ranks * 5 // 8
    job = Job(ranks, seed=ranks, slow_rank=slow_rank, first_step_stalls=_stalls(ranks, slow_rank, first_step))
    tables = rank_tables(job)
    slow, report = reduce_tables(tmp_path, tables)
    assert [s.rank for s in slow] == [slow_rank], report
    (named,) = slow
    # It computes longer (the cause) and the others wait for it (the effect).
    assert named.confidence == "high"
    assert named.dimensions == ["Computing", "Communication", "Collectives"]
    evidence = {item.dimension: item for item in named.evidence}
    steps = tables["steps"]
    assert evidence["Computing"].excess_ns == pytest.approx(_median_excess(steps, slow_rank, COMPUTING))
    assert evidence["Communication"].excess_ns == pytest.approx(_median_excess(steps, slow_rank, COMMUNICATION, -1))
    # 1.6x of 24.4 ms of kernels: about 14.6 ms more, the others waiting about as long.
    assert 13 * MS < evidence["Computing"].excess_ns < 16 * MS
    late = evidence["Collectives"]
    count, out_of, caused_wait_ns = _late_arrivals(tables["communication"], slow_rank)
    assert (late.count, late.out_of) == (count, out_of)
    assert count >= 2 * job.steps - 2  # last everywhere but where a longer stall came first
    assert late.caused_wait_ns == pytest.approx(caused_wait_ns)
    # The report (and the printed summary: the same lines) and the database say the same.
    lines = slow_rank_lines(slow)
    assert lines[0] == verdict(slow) == f"1 slow rank: rank {slow_rank} (confidence high)."
    assert "\n".join(lines) in report
    stored = slow_ranks_of(tmp_path)
    assert stored["verdict"] == lines[0]
    assert [(s["rank"], s["confidence"], s["dimensions"]) for s in stored["slow_ranks"]] == [
        (slow_rank, "high", named.dimensions)]
    assert [(e["dimension"], e["count"], e["out_of"], e["excess_ns"], e["caused_wait_ns"], e["evidence"])
            for e in stored["slow_ranks"][0]["evidence"]] == [
        (e.dimension, e.count, e.out_of, e.excess_ns, e.caused_wait_ns, e.text) for e in named.evidence]
    assert all(f"  - {e.text}" in lines for e in named.evidence)


def test_two_slow_ranks_are_both_named_most_consistent_first(tmp_path):
    job = Job(16, seed=3, slow_rank=5, slow_factor=1.6, extra_work=((11, None, 10 * MS),))
    slow, _ = reduce_tables(tmp_path, rank_tables(job))
    assert [(s.rank, s.confidence) for s in slow] == [(5, "high"), (11, "high")]


def test_a_job_profiled_into_run_directories_gets_the_same_verdict_everywhere(tmp_path):
    """The 8-rank job profiled through the CUPTI double, each rank into its run directory and
    database, then `perfprof cluster`: perfprof's own step breakdown equals the one computed here
    (but Free: the profiled steps are longer), the evidence's numbers equal those of the tables
    computed here, and the printed summary, the report and the database say the same."""
    job = Job(8, seed=8, slow_rank=5)
    runs = write_runs(job, tmp_path)
    result = subprocess.run([sys.executable, "-m", "perfprof", "cluster", str(runs), "-o", str(tmp_path / "out"),
                             "-j", "2"], env=child_env(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    tables = rank_tables(job)
    with open(tmp_path / "out" / "cluster_step_trace_time.csv", newline="") as file:
        profiled = {(row["Step"], int(row["Index"])): (float(row["Computing"]), float(row["Communication"]))
                    for row in csv.DictReader(file) if row["Type"] == "rank"}
    assert profiled == {(row[STEP], row[0]): (row[COMPUTING] / 1e3, row[COMMUNICATION] / 1e3)  # type: ignore[operator]
                        for row in tables["steps"]}
    expected, _ = reduce_tables(tmp_path / "direct", tables)
    stored = slow_ranks_of(tmp_path / "out")
    # Only Free depends on the host's clock here: another rank could stand out there, not as the slow one.
    assert [s["rank"] for s in stored["slow_ranks"] if s["confidence"] == "high"] == [job.slow_rank]
    assert stored["slow_ranks"][0]["dimensions"] == expected[0].dimensions
    for found, computed in zip(stored["slow_ranks"][0]["evidence"], expected[0].evidence):
        assert (found["count"], found["out_of"]) == (computed.count, computed.out_of)
        assert (found["excess_ns"], found["caused_wait_ns"]) == (computed.excess_ns, computed.caused_wait_ns)
    report = (tmp_path / "out" / "cluster_report.md").read_text()
    printed = " ".join(result.stdout.split())
    (slow,) = [s for s in stored["slow_ranks"] if s["rank"] == job.slow_rank]
    for sentence in [stored["verdict"], slow["summary"].split(": ", 1)[1]] + [e["evidence"] for e in slow["evidence"]]:
        assert sentence in report and " ".join(sentence.split()) in printed, sentence
