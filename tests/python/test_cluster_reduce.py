"""The reduce step of perfprof cluster and its slow-rank detection on ranks written by hand
(the map step's Parquet tables), against hand computations: step statistics, collective
matching (transit, wait, the last to arrive), the point-to-point matrix and the outlier test."""
from __future__ import annotations

import csv
import json
import statistics
from pathlib import Path
from typing import List, Optional, Sequence

import pytest

pytest.importorskip("duckdb")

from cluster_jobs import reduce_tables  # noqa: E402
from perfprof.cluster import _slow_rank  # noqa: E402

MS = 1_000_000


def step_row(rank: int, step: int, computing: int, communication: int, free: int) -> List[object]:
    """A STEP_TRACE_TIME row of a 100 ms step with no overlap."""
    begin = step * 100 * MS
    return [rank, f"run{rank}", str(step), begin, begin + 100 * MS, computing, communication, 0, communication, free,
            100 * MS, 0, communication, 0]


def collective(rank: int, name: str, start: int, elapse: int, size: Optional[int] = 4000,
               peer: Optional[int] = None) -> List[object]:
    return [rank, f"run{rank}", name, "host", start, start + elapse, size, None if size is None else size // 4,
            "float", peer, "1"]


def reduce(tmp_path: Path, steps: Sequence[List[object]], communication: Sequence[List[object]] = ()):
    """Reduce the map step's tables of these rows; returns the slow ranks found."""
    ranks = sorted({row[0] for row in steps})
    run = [[r, f"run{r}", len(ranks), "gloo", "host", 1, 1] for r in ranks]
    slow, _ = reduce_tables(tmp_path, {"run": run, "steps": list(steps), "communication": list(communication)})
    return slow


def test_a_rank_computing_longer_is_named_with_its_excess_over_the_others_median(tmp_path):
    computing = {0: [40, 41, 39, 40], 1: [52, 53, 51, 52], 2: [40, 39, 41, 40]}  # ms per step
    steps = [step_row(rank, step, values[step] * MS, 10 * MS, (90 - values[step]) * MS)
             for rank, values in computing.items() for step in range(4)]
    slow = reduce(tmp_path, steps)
    # Rank 1 alone, on Computing alone: Free differs as much the other way (idling less is no
    # cause of a slow step), and nothing shows the others waiting for it (confidence medium).
    assert [(s.rank, s.confidence, s.dimensions) for s in slow] == [(1, "medium", ["Computing"])]
    (named,) = slow[0].evidence
    assert (named.count, named.out_of) == (4, 4)
    others = [statistics.median([computing[0][s], computing[2][s]]) for s in range(4)]
    assert named.excess_ns == pytest.approx(statistics.median(computing[1][s] - others[s] for s in range(4)) * MS)
    assert named.others_ns == pytest.approx(statistics.median(others) * MS)
    # Each step's z: the excess over max(1.4826 * the others' MAD, 1% of the 100 ms step).
    z = [(computing[1][s] - others[s]) / max(1.4826 * abs(computing[0][s] - others[s]), 1) for s in range(4)]
    assert named.z == pytest.approx(statistics.median(z))
    assert named.text == ("Computing: 12.000 ms per step more than the other ranks' median (+30.0%), median over "
                          f"its steps; it stands out in 4 of 4 steps (median z {statistics.median(z):.1f})")


def test_the_step_table_has_each_rank_then_max_min_and_mean(tmp_path):
    steps = [step_row(0, 7, 30 * MS, 5 * MS, 65 * MS), step_row(1, 7, 36 * MS, 2 * MS, 62 * MS)]
    reduce(tmp_path, steps)
    with open(tmp_path / "cluster_step_trace_time.csv", newline="") as file:
        rows = [(r["Step"], r["Type"], r["Index"], r["Computing"], r["Communication"], r["Free"])
                for r in csv.DictReader(file)]
    assert rows == [("7", "rank", "0", "30000.0", "5000.0", "65000.0"),
                    ("7", "rank", "1", "36000.0", "2000.0", "62000.0"),
                    ("7", "max", "", "36000.0", "5000.0", "65000.0"),
                    ("7", "min", "", "30000.0", "2000.0", "62000.0"),
                    ("7", "mean", "", "33000.0", "3500.0", "63500.0")]


def test_a_difference_under_the_floor_names_no_one(tmp_path):
    # Computing 42 vs 40 ms in 100 ms steps where the other ranks agree: z = 2 / (1% of 100 ms) = 2,
    # under 3.5; Free the same the other way.
    steps = [step_row(rank, step, (40 + 2 * (rank == 1)) * MS, 10 * MS, (50 - 2 * (rank == 1)) * MS)
             for rank in range(3) for step in range(6)]
    assert reduce(tmp_path, steps) == []
    assert "No slow rank" in "\n".join(_report_lines([]))


def test_a_consistent_but_negligible_difference_names_no_one(tmp_path):
    # Rank 1 computes 0.5 ms longer in every 100 ms step: 22% of Computing's mean, flagged each
    # time, yet 0.5% of the step.
    steps = [step_row(rank, step, (2 * MS if rank != 1 else 2 * MS + MS // 2), 10 * MS, 80 * MS)
             for rank in range(3) for step in range(6)]
    assert reduce(tmp_path, steps) == []


def _report_lines(slow: List[_slow_rank.SlowRank]) -> List[str]:
    from perfprof.cluster._report import slow_rank_lines

    return slow_rank_lines(slow)


def test_collectives_are_matched_by_order_and_the_last_to_arrive_waits_least(tmp_path):
    steps = [step_row(rank, 1, 10 * MS, 10 * MS, 80 * MS) for rank in range(4)]
    # Eight all-reduces: rank 3 arrives last at each (the exchange is 1 ms once it does), so
    # the others wait 2, 3 and 4 ms. One broadcast where rank 0 arrives last.
    communication = []
    for k in range(8):
        base = 100 * MS + k * 10 * MS
        communication += [collective(rank, "gloo:all_reduce", base + rank * MS // 10, (1 + wait) * MS)
                          for rank, wait in ((0, 2), (1, 3), (2, 4), (3, 0))]
    communication += [collective(rank, "gloo:broadcast", 190 * MS, (1 + (rank != 0)) * MS) for rank in range(4)]
    slow = reduce(tmp_path, steps, communication)
    document = json.loads((tmp_path / "cluster_communication.json").read_text())
    all_reduce = document["collectives"]["gloo:all_reduce"]
    assert (all_reduce["instances"], all_reduce["ranks"]) == (8, 4)
    assert all_reduce["per_rank"]["0"] == {"count": 8, "elapse_ns": 24 * MS, "transit_ns": 8 * MS, "wait_ns": 16 * MS,
                                           "bytes": 32000, "data_type": "float", "late_arrivals": 0,
                                           "bandwidth_gb_s": round(32000 / (8 * MS), 6)}
    assert all_reduce["per_rank"]["3"]["wait_ns"] == 0 and all_reduce["per_rank"]["3"]["late_arrivals"] == 8
    assert document["collectives"]["gloo:broadcast"]["per_rank"]["0"]["late_arrivals"] == 1
    # Rank 3 alone, the others waiting for it with nothing in its steps to say why (medium).
    assert [(s.rank, s.confidence, s.dimensions) for s in slow] == [(3, "medium", ["Collectives"])]
    (late,) = slow[0].evidence
    # 8 of 9 (chance 9/4; variance 9 * 3/16): z = (8 - 0.5 - 2.25) / 1.299 = 4.04.
    assert (late.count, late.out_of) == (8, 9)
    assert late.z == pytest.approx((8 - 0.5 - 9 / 4) / (9 * 3 / 16) ** 0.5)
    assert late.caused_wait_ns == 8 * 3 * MS  # the others' median wait (2, 3, 4 ms), summed over the one step


def test_point_to_point_traffic_makes_the_matrix_and_stays_out_of_the_collectives(tmp_path):
    steps = [step_row(rank, 1, 10 * MS, 10 * MS, 80 * MS) for rank in range(2)]
    communication = [collective(0, "gloo:send", 150 * MS, 2 * MS, 8000, peer=1),
                     collective(0, "gloo:send", 160 * MS, 2 * MS, 8000, peer=1),
                     collective(1, "gloo:recv", 150 * MS, 4 * MS, 8000, peer=0),
                     collective(1, "gloo:recv", 160 * MS, 4 * MS, 8000, peer=0),
                     collective(1, "gloo:send", 170 * MS, 1 * MS, None, peer=0)]
    reduce(tmp_path, steps, communication)
    pairs = json.loads((tmp_path / "cluster_communication_matrix.json").read_text())["pairs"]
    assert pairs == [
        {"src": 0, "dst": 1, "op": "recv", "count": 2, "bytes": 16000, "time_ns": 8 * MS, "bandwidth_gb_s": 0.002},
        {"src": 0, "dst": 1, "op": "send", "count": 2, "bytes": 16000, "time_ns": 4 * MS, "bandwidth_gb_s": 0.004},
        {"src": 1, "dst": 0, "op": "send", "count": 1, "bytes": None, "time_ns": 1 * MS, "bandwidth_gb_s": None}]
    assert json.loads((tmp_path / "cluster_communication.json").read_text())["collectives"] == {}


def test_a_rank_profiled_many_times_is_refused_naming_five_of_its_runs(tmp_path):
    from perfprof.cluster import ClusterError

    runs = [f"run{index:02d}" for index in range(30)]
    steps = [[0, run, *step_row(0, 1, 50 * MS, 0, 50 * MS)[2:]] for run in runs]
    tables = {"run": [[0, run, 1, "gloo", "host", 1, 0] for run in runs], "steps": steps, "communication": []}
    with pytest.raises(ClusterError) as refused:
        reduce_tables(tmp_path, tables)
    assert str(refused.value) == ("rank 0 has step 1 in 30 run directories (run00, run01, run02, run03, run04, "
                                  "… and 25 more): they come from different runs of the job; give perfprof cluster "
                                  "a folder that holds one run of the job")
