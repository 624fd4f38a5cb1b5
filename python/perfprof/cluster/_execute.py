"""Where the map step runs: worker processes on this machine (``local``), or the workers of a
Dask distributed cluster (``dask``: a scheduler's address, or a LocalCluster started here).

Dask workers read the run directories and write the Parquet files at the paths this machine
gives them, so on a real cluster both must be on a file system every worker mounts.
"""
from __future__ import annotations

import concurrent.futures
import os
from typing import Iterator, Optional, Sequence

from ._map import RunSummary, summarize_run

MODES = ("local", "dask")


class MissingDependencyError(RuntimeError):
    """A package the chosen mode needs is not installed."""


def default_jobs() -> int:
    """Workers by default: the CPUs this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def map_runs(run_dirs: Sequence[str], parquet_dir: str, mode: str, jobs: int,
             scheduler: Optional[str] = None) -> Iterator[RunSummary]:
    """Summarize every run directory (``_map.summarize_run``) into `parquet_dir`, `jobs` at a
    time; yields each summary as its run finishes."""
    if mode == "local":
        return _map_locally(run_dirs, parquet_dir, jobs)
    if mode == "dask":
        return _map_on_dask(run_dirs, parquet_dir, jobs, scheduler)
    raise ValueError(f"mode: expected one of {', '.join(MODES)}, got {mode!r}")


def _map_locally(run_dirs: Sequence[str], parquet_dir: str, jobs: int) -> Iterator[RunSummary]:
    if jobs == 1 or len(run_dirs) == 1:
        for index, run_dir in enumerate(run_dirs):
            yield summarize_run(run_dir, index, parquet_dir)
        return
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(jobs, len(run_dirs))) as pool:
        futures = [pool.submit(summarize_run, run_dir, index, parquet_dir) for index, run_dir in enumerate(run_dirs)]
        for future in concurrent.futures.as_completed(futures):
            yield future.result()


def _map_on_dask(run_dirs: Sequence[str], parquet_dir: str, jobs: int,
                 scheduler: Optional[str]) -> Iterator[RunSummary]:
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise MissingDependencyError("--mode dask needs Dask's distributed scheduler: "
                                     "pip install 'perfprof[cluster]'") from None
    cluster: Optional[LocalCluster] = None
    if scheduler is None:
        # Processes, one thread each: the map step holds the GIL while it reads SQLite rows.
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(scheduler if scheduler is not None else cluster)
    try:
        count = len(run_dirs)
        futures = client.map(summarize_run, list(run_dirs), list(range(count)), [parquet_dir] * count, pure=False)
        for future in as_completed(futures):
            yield future.result()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

