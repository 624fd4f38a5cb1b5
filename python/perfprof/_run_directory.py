"""The run-directory contract: its layout, and writing the outputs it holds beside its capture.

The one module the writers (tensorboard_trace_handler, ``perfprof analyse``, the trace
importer) and the readers (the analyses, plots, cluster) share, so that none of them imports
another for a file name. Layout of a run directory::

    {dir_name}/{worker_name}_{timestamp}_perfprof/
        capture.ppcap               the cycle's capture, written while it records (a step at a
                                    time): everything below is built from it, now or later by
                                    ``perfprof analyse`` (docs/formats/capture.md)
        profiler_info.json          configuration, versions, rank, collection window, trace stats
        profiler_metadata.json      add_metadata()/add_metadata_json() values and GPU-relevant
                                    environment variables
        PERFPROF_OUTPUT/            (with analyse_flag=True, or after ``perfprof analyse``)
            {worker_name}.{timestamp}.pt.trace.json    the Chrome trace (.json.gz with use_gzip)
            memory_record.csv           with profile_memory: the allocator's totals after each event
            operator_memory.csv         with profile_memory: each allocation, its operator, module,
                                        category, size and lifetime
            kernel_details.csv          with GPU activities: one row per kernel, copy and memset
            op_statistic.csv            with kernels: per kernel name (nsys cuda_gpu_kern_sum)
            api_statistic.csv           with CUDA API calls: per API name (nsys cuda_api_sum)
            operator_details.csv        with operators: per name and input shapes, host and device time
            step_trace_time.csv         with schedule steps: each step's device time by activity
            data_preprocess.csv         with steps and DataLoader fetches: fetch time per step
                                        (the summary tables: docs/formats/summaries.md)
            perfprof.db                 with ExportType.Db, or auto-plot: the run database
        plots/                      with auto-plot: the PNGs and perfprof_plot.log (docs/plots.md)
        .perfprof-plot-config.yaml  with auto-plot and a ``plot`` configuration: that configuration

The trace sits in its own folder because HolisticTraceAnalysis reads every ``.json`` file of the
folder it is given as a rank's trace: point it (and TensorBoard's profiler plugin, which finds
``*.pt.trace.json`` files) at ``PERFPROF_OUTPUT``, or use :func:`trace_dir_of`.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

from ._files import make_directory, remove_stale_temporaries, replaced_whole

OUTPUT_DIR = "PERFPROF_OUTPUT"
RUN_DIR_SUFFIX = "_perfprof"
TRACE_SUFFIX = ".pt.trace.json"
CAPTURE_FILE = "capture.ppcap"
INFO_FILE = "profiler_info.json"
METADATA_FILE = "profiler_metadata.json"


def trace_dir_of(run_dir: "os.PathLike[str] | str") -> str:
    """The folder of a run directory that holds its trace (give it to HolisticTraceAnalysis)."""
    return os.path.join(os.fspath(run_dir), OUTPUT_DIR)


def trace_file_name(run_dir: str, worker_name: str, use_gzip: bool = False) -> str:
    """The trace's file name in a run directory: ``{worker_name}.{timestamp}.pt.trace.json``
    (``.gz`` after it with `use_gzip`)."""
    stamp = os.path.basename(os.path.normpath(run_dir))[len(worker_name) + 1:].split(RUN_DIR_SUFFIX)[0]
    return f"{worker_name}.{stamp}{TRACE_SUFFIX}{'.gz' if use_gzip else ''}"


def database_file_name(rank: int, world_size: int) -> str:
    """``perfprof.db``, or ``perfprof_{rank}.db`` for a rank of a distributed run."""
    return f"perfprof_{rank}.db" if world_size > 1 or rank > 0 else "perfprof.db"


def wants_database(config: Dict[str, Any]) -> bool:
    """Whether a run's configuration (profiler_info.json's "config") has ExportType.Db in export_type."""
    return "db" in ((config.get("experimental_config") or {}).get("export_type") or [])


def records_beyond_trace(config: Dict[str, Any]) -> bool:
    """Whether a run's configuration (profiler_info.json's "config") records what its Chrome trace
    cannot carry, so that only its database or capture keeps it: memory profiling's tensor roles
    (the memory categories) and per-kernel hardware metrics. A default run records neither, and
    its database is built from the trace when first asked for (docs/performance.md)."""
    experimental = config.get("experimental_config") or {}
    return bool(config.get("profile_memory") or experimental.get("l2_cache") or
                experimental.get("gpu_metrics") not in (None, "GpuMetricsNone"))


def write_outputs(trace: Any, run_dir: str, trace_file: str, metadata_items: List[Any], rank: int, world_size: int,
                  backend: str, config: Optional[Dict[str, Any]] = None,
                  environment: Optional[Dict[str, str]] = None, with_database: bool = False) -> None:
    """Write what a run directory holds beside its capture (in ``PERFPROF_OUTPUT``): the Chrome
    trace, the summary tables the trace has data for, with memory events the memory tables, and
    with ExportType.Db in the run's ``config`` (or `with_database`) the run database (its
    META_DATA: the user's metadata, the configuration and the captured ``environment``). Raises
    ``OSError`` when they cannot be written."""
    output_dir = trace_dir_of(run_dir)
    make_directory(output_dir)
    trace.export_chrome_trace(os.path.join(output_dir, trace_file), metadata_items, rank, world_size, backend)
    trace.export_summaries(output_dir)
    if trace.num_memory_events:
        trace.export_memory_tables(os.path.join(output_dir, "memory_record.csv"),
                                   os.path.join(output_dir, "operator_memory.csv"))
    if with_database or (config is not None and wants_database(config)):
        write_database(trace, run_dir, metadata_items, rank, world_size, backend, config or {}, environment)


def write_database(trace: Any, run_dir: str, metadata_items: List[Any], rank: int, world_size: int, backend: str,
                   config: Dict[str, Any], environment: Optional[Dict[str, str]]) -> str:
    """Write a run directory's database (``PERFPROF_OUTPUT/perfprof[_rank].db``) from its trace;
    its META_DATA gets the user's metadata, the configuration and the captured environment.
    Returns its path; raises ``OSError`` when it cannot be written."""
    output_dir = trace_dir_of(run_dir)
    make_directory(output_dir)
    path = os.path.join(output_dir, database_file_name(rank, world_size))
    meta = list(metadata_items) + [("config", json.dumps(config)),
                                   ("environment_variables", json.dumps(environment or {}))]
    trace.export_database(path, meta, rank, world_size, backend)
    return path


def remove_run_temporaries(run_dir: str) -> int:
    """Remove the temporary files killed writers left in a run directory and its PERFPROF_OUTPUT;
    returns how many."""
    return remove_stale_temporaries(run_dir) + remove_stale_temporaries(trace_dir_of(run_dir))


def write_json(path: str, value: Dict[str, Any]) -> None:
    """Write `value` as indented JSON, replacing `path` whole (never half-written; _files.py)."""
    with replaced_whole(path) as file:
        json.dump(value, file, indent=2, sort_keys=False)
        file.write("\n")
