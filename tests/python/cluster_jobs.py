"""Synthetic data-parallel jobs for the cluster tests, at any number of ranks in a second.

A :class:`Job` plays each rank's device timeline step by step, as a DDP training job on GPUs
runs: an optional host stall (the GPU idle), forward and backward compute kernels, the gradients'
two NCCL all-reduce buckets (the first overlapping the rest of the backward pass), then the
optimizer's kernels once the last bucket is reduced. Every rank runs the same model (the same
kernel durations) with its own jitter (seeded); an all-reduce instance ends on every rank when
the last rank has arrived plus the exchange itself, so the ranks that arrive earlier wait in it.

:func:`rank_tables` turns the timelines into the map step's tables (``cluster/_tables.py``: run,
steps, communication) as perfprof summarises a rank: the step breakdown by the formulas of
docs/formats/summaries.md (step_trace_time.csv) over the kernels, computed here with
``time_sets``; each NCCL kernel one collective operation of its rank, in the same order on every
rank. :func:`reduce_tables` runs the reduce step and slow-rank detection over such tables, in a
second at 64 ranks. :func:`write_runs` profiles the ranks through the CUPTI double into run
directories instead, as a real job writes them (the steps take their time: a few seconds at 8
ranks).
"""
from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

from time_sets import Intervals, intersection, inside, union

MS = 1_000_000
US = 1_000
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
BASE_NS = 1_764_000_000 * 10**9  # the job's first step, Unix time
Row = List[object]


@dataclass(frozen=True)
class Job:
    """A data-parallel job's shape; every time is the same on each rank but for the jitter."""

    ranks: int
    steps: int = 8
    seed: int = 0
    forward_ns: Tuple[int, ...] = (1_200 * US,) * 6  # the model's forward kernels
    backward_ns: Tuple[int, ...] = (2_000 * US,) * 8  # its backward kernels (about twice the forward)
    optimizer_ns: Tuple[int, ...] = (300 * US,) * 4
    bucket_bytes: Tuple[int, int] = (50 << 20, 50 << 20)  # the two gradient buckets
    transit_ns: Tuple[int, int] = (1_500 * US, 1_500 * US)  # each bucket's exchange once all ranks arrive
    kernel_jitter: float = 0.02  # standard deviation of each kernel's duration, relative
    host_gap_ns: int = 200 * US  # the GPU idle at each step's start (data loading, launches)
    slow_rank: Optional[int] = None
    slow_factor: float = 1.6  # the slow rank's kernels take this much longer
    # Host stalls at the start of the first step (the GPU idle): ns by rank.
    first_step_stalls: Mapping[int, int] = field(default_factory=dict)
    # Work only some ranks do: (rank, step or None for every step, ns) of compute at the step's start.
    extra_work: Sequence[Tuple[int, Optional[int], int]] = field(default_factory=tuple)


@dataclass
class _Step:
    """One rank's step: its window and its device work."""

    begin: int
    end: int = 0
    compute: Intervals = field(default_factory=list)
    collectives: List[Tuple[int, int, int]] = field(default_factory=list)  # (start, end, bucket)


def timelines(job: Job) -> List[List[_Step]]:
    """Every rank's steps, played together (the all-reduces tie them)."""
    rng = random.Random(job.seed)
    clocks = [BASE_NS + rng.randrange(20 * US) for _ in range(job.ranks)]
    played: List[List[_Step]] = [[] for _ in range(job.ranks)]
    for step in range(job.steps):
        steps = [_Step(clock) for clock in clocks]
        arrivals: List[List[int]] = [[], []]
        cursors = []
        for rank, current in enumerate(steps):
            cursor = current.begin + job.host_gap_ns + (job.first_step_stalls.get(rank, 0) if step == 0 else 0)
            for extra_rank, extra_step, extra_ns in job.extra_work:
                if extra_rank == rank and extra_step in (None, step):
                    cursor = _kernel(current, cursor, extra_ns)
            for duration in job.forward_ns:
                cursor = _kernel(current, cursor, _duration(job, rng, rank, duration))
            half = len(job.backward_ns) // 2
            for index, duration in enumerate(job.backward_ns):
                if index == half:
                    arrivals[0].append(cursor)  # the first bucket's gradients are ready
                cursor = _kernel(current, cursor, _duration(job, rng, rank, duration))
            cursors.append(cursor)
        first_end = max(arrivals[0]) + job.transit_ns[0]
        arrivals[1] = [max(cursor, first_end) for cursor in cursors]  # one NCCL stream: in order
        second_end = max(arrivals[1]) + job.transit_ns[1]
        for rank, current in enumerate(steps):
            current.collectives += [(arrivals[0][rank], first_end, 0), (arrivals[1][rank], second_end, 1)]
            cursor = second_end + 10 * US
            for duration in job.optimizer_ns:
                cursor = _kernel(current, cursor, _duration(job, rng, rank, duration))
            current.end = cursor + 50 * US
            clocks[rank] = current.end
            played[rank].append(current)
    return played


def _duration(job: Job, rng: random.Random, rank: int, duration: int) -> int:
    slow = job.slow_factor if rank == job.slow_rank else 1.0
    return max(1, round(duration * slow * (1 + rng.gauss(0, job.kernel_jitter))))


def _kernel(step: _Step, cursor: int, duration: int) -> int:
    """Queue a compute kernel at `cursor` (after a launch gap); returns its end."""
    start = cursor + 8 * US
    step.compute.append((start, start + duration))
    return start + duration


def rank_tables(job: Job) -> Dict[str, List[Row]]:
    """The map step's rows of every rank, by table name (run, steps, communication, kernels,
    operators), each row starting with rank and run as ``_tables`` says."""
    tables: Dict[str, List[Row]] = {"run": [], "steps": [], "communication": [], "kernels": [], "operators": []}
    for rank, steps in enumerate(timelines(job)):
        run = f"rank{rank}_perfprof"
        for number, step in enumerate(steps, start=1):
            tables["steps"].append([rank, run, *_breakdown(str(number), step)])
            tables["communication"] += [
                [rank, run, ALL_REDUCE, "device", start, end, job.bucket_bytes[bucket], job.bucket_bytes[bucket] // 4,
                 "float", None, str(number)] for start, end, bucket in step.collectives]
        tables["run"].append([rank, run, job.ranks, "nccl", "device", len(steps), 2 * len(steps)])
    return tables


def _breakdown(step: str, s: _Step) -> Row:
    """A STEP_TRACE_TIME row: docs/formats/summaries.md's formulas over the step's kernels."""
    compute = union(s.compute)
    communication = union([(start, end) for start, end, _ in s.collectives])
    busy = union(compute + communication)
    computing, comm = inside(compute, s.begin, s.end), inside(communication, s.begin, s.end)
    overlapped = inside(intersection(compute, communication), s.begin, s.end)
    length = s.end - s.begin
    first = min((max(b, s.begin) for b, e in busy if e > s.begin and b < s.end), default=s.end)
    return [step, s.begin, s.end, computing, comm - overlapped, overlapped, comm, length - inside(busy, s.begin, s.end),
            length, 0, comm - overlapped, first - s.begin]


# Each rank's run in turn through the CUPTI double, one profiled step per synthetic step (after a
# warm-up step): the step's kernels played at their offsets from a base 1 ms ahead of the double's
# clock, the step lasting until that clock has passed the synthetic step's end.
_RUNS_SCRIPT = """
import time
import perfprof

ranks = json.loads({ranks!r})
run_dirs = []
for rank, steps in enumerate(ranks):
    os.environ.update(RANK=str(rank), WORLD_SIZE=str(len(ranks)))
    handler = perfprof.tensorboard_trace_handler(os.environ["TMP"] + "/runs", worker_name=f"rank{{rank}}")
    with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                          schedule=perfprof.schedule(wait=0, warmup=1, active=len(steps), repeat=1),
                          on_trace_ready=handler,
                          experimental_config=perfprof.ExperimentalConfig(export_type=["text", "db"])) as prof:
        prof.step()
        for length, kernels in steps:
            base = (fake.fake_cupti_now() + 1_000_000) // 1000 * 1000
            for name, stream, offset, duration in kernels:
                fake.fake_cupti_launch_kernel_at(name.encode(), 0, 1, stream, base + offset - 3000, 2000,
                                                 base + offset, duration)
            while fake.fake_cupti_now() <= base + length:
                time.sleep(0.0002)
            prof.step()
    run_dirs.append(handler.run_dirs[-1])
print(json.dumps(dict(run_dirs=run_dirs)))
"""
COMPUTE_STREAM, NCCL_STREAM = 7, 13


def write_runs(job: Job, folder: Path) -> Path:
    """Profile each rank of `job` through the CUPTI double into a run directory with its database
    (under ``folder/runs``, returned), as the ranks of a real job write them. Each step's kernels
    keep their durations and their offsets from the step's start; the profiled step begins about
    1 ms earlier and ends a little later (the host's clock), so Free differs from
    :func:`rank_tables`' and Computing and Communication do not."""
    import fake_cupti

    def kernels(s: Any) -> List[List[Any]]:
        """A step's kernels, each (name, stream, start in the step, duration), by start."""
        return sorted([[ALL_REDUCE, NCCL_STREAM, start - s.begin, end - start] for start, end, _ in s.collectives]
                      + [["gemm", COMPUTE_STREAM, start - s.begin, end - start] for start, end in s.compute],
                      key=lambda kernel: kernel[2])

    ranks = [[(s.end - s.begin, kernels(s)) for s in steps] for steps in timelines(job)]
    fake_cupti.run(_RUNS_SCRIPT.format(ranks=json.dumps(ranks)), folder)
    return folder / "runs"


def reduce_tables(folder: Path, tables: Dict[str, List[Row]]):
    """Write `tables` as the map step's Parquet files, then run the reduce step, slow-rank
    detection and the report as ``perfprof cluster`` does, into `folder`; returns the slow ranks
    and the report's text."""
    from perfprof.cluster import _reduce, _report, _slow_rank
    from perfprof.cluster._map import write_parquet
    from perfprof.cluster._tables import RANK_TABLES

    files = {}
    for table in RANK_TABLES:
        files[table.name] = [str(folder / "ranks" / f"{table.name}.parquet")]
        write_parquet(table, tables.get(table.name, []), files[table.name][0])
    runs = sorted({str(row[1]) for row in tables["run"]})
    with _reduce.new_database(str(folder)) as connection:
        _reduce.load_tables(connection, files, runs)
        _reduce.check_steps_are_unique(connection)
        _reduce.derive_tables(connection)
        _reduce.write_files(connection, str(folder))
        slow = _slow_rank.detect(connection)
        return slow, _report.report(connection, str(folder), slow, [])
