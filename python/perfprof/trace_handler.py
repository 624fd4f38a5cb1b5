"""tensorboard_trace_handler: one run directory per saved cycle, written in the layout
:mod:`perfprof._run_directory` defines (and documents) for every writer and reader (or, with
``layout="flat"``, torch.profiler's flat folder of traces: :mod:`perfprof._flat_traces`)."""
from __future__ import annotations

import concurrent.futures
import datetime
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional

if TYPE_CHECKING:
    from .plots import AutoPlot, AutoPlotError

from . import _start_faults
from ._files import make_directory, new_directory, remove_stale_temporaries
from ._flat_traces import FlatTraceHandler
from ._logging import logger
from ._writer_thread import background_writer
from ._run_directory import (CAPTURE_FILE, INFO_FILE, METADATA_FILE, OUTPUT_DIR, RUN_DIR_SUFFIX, records_beyond_trace,
                             remove_run_temporaries, trace_dir_of, trace_file_name, write_json, write_outputs)
from .run_metadata import captured_environment, default_worker_name, distributed_info, versions


class TraceHandler:
    """The ``on_trace_ready`` callable returned by :func:`tensorboard_trace_handler`."""

    def __init__(self, dir_name: str, worker_name: Optional[str], analyse_flag: bool, async_mode: bool,
                 auto_plot: "AutoPlot", use_gzip: bool = False) -> None:
        self.dir_name = dir_name
        self.worker_name = worker_name or default_worker_name()
        self.analyse_flag = analyse_flag
        self.async_mode = async_mode
        self.use_gzip = use_gzip
        self.auto_plot = auto_plot
        self.run_dirs: List[str] = []
        #: Failures of required auto-plots (plot_required), in async mode too, where they cannot be raised.
        self.plot_failures: List["AutoPlotError"] = []
        self._pending: List[concurrent.futures.Future] = []
        self._cycle_run_dir: Optional[str] = None  # made when the cycle began recording
        if not analyse_flag:
            logger.info("perfprof: analyse_flag=False: run directories get the capture only; "
                        "`perfprof analyse DIR` builds their traces later")
        _remove_stale_temporaries_under(dir_name)

    def begin_cycle(self) -> Optional[str]:
        """Make the run directory of the cycle that begins recording; returns where its capture
        is written while it records (None when the directory cannot be made: the cycle is then
        held in memory, and the directory made when it is ready; if that fails too, one line
        says so)."""
        try:
            self._cycle_run_dir = self._new_run_dir()
            _start_faults.reached("run directory")
        except Exception as error:  # never hurt the job; the cycle's end tries again, and warns if it fails too
            logger.info("perfprof: the cycle's run directory cannot be made in %r now (%r); the cycle is held in "
                        "memory, and its end tries again", self.dir_name, error)
            return None
        return os.path.join(self._cycle_run_dir, CAPTURE_FILE)

    def end_cycle_without_trace(self) -> None:
        """The cycle's trace could not be built: its run directory (listed in ``run_dirs``) keeps
        the capture only, for ``perfprof analyse`` to build later; one left empty (the cycle could
        not start) goes."""
        run_dir, self._cycle_run_dir = self._cycle_run_dir, None
        if run_dir is None:
            return
        _remove_if_empty(run_dir)
        if os.path.isdir(run_dir):
            self.run_dirs.append(run_dir)

    def __call__(self, prof: Any) -> None:
        """Write the run directory of `prof`'s latest trace, then auto-plot it. I/O errors are
        logged, never raised; a required auto-plot's failure is raised (:class:`AutoPlotError`)
        in sync mode, logged as an error in async mode, and in both kept in ``plot_failures``."""
        try:
            run_dir, self._cycle_run_dir = self._cycle_run_dir or self._new_run_dir(), None
            job = _RunDirectoryJob(prof, run_dir, self.worker_name, self.analyse_flag,
                                   with_database=self.auto_plot.enabled, use_gzip=self.use_gzip)
        except Exception as error:  # never hurt the job: a full disk must not stop training
            logger.error("perfprof: cannot create a run directory in %r: %s; this cycle's trace is not written "
                         "(prof.trace holds it until the next cycle)", self.dir_name, error)
            return
        self.run_dirs.append(run_dir)
        if self.async_mode:
            self._pending = [f for f in self._pending if not f.done()]
            self._pending.append(background_writer().submit(self._write_and_plot, job))
        else:
            self._write_and_plot(job)

    def wait(self, timeout: Optional[float] = None) -> None:
        """Block until every run directory submitted in async mode is written (and plotted)."""
        concurrent.futures.wait(self._pending, timeout=timeout)

    def _write_and_plot(self, job: "_RunDirectoryJob") -> None:
        # Plotted in the thread that wrote the run directory: after its outputs, never before.
        from .plots import AutoPlotError

        if not job.write_logging_errors():
            if not os.path.isdir(job.run_dir):  # nothing of the cycle is there: not a run directory
                self.run_dirs.remove(job.run_dir)
            return
        try:
            self.auto_plot.after_write(job.run_dir)
        except AutoPlotError as error:
            self.plot_failures.append(error)
            if not self.async_mode:
                raise
            logger.error("perfprof: %s (plot_required)", error)  # the writer thread has no caller to raise to

    def _new_run_dir(self) -> str:
        stamp = datetime.datetime.now().strftime("%Y%m%d%H%M%S%f")
        base = os.path.join(self.dir_name, f"{self.worker_name}_{stamp}{RUN_DIR_SUFFIX}")
        run_dir, attempt = base, 0
        make_directory(self.dir_name)
        while True:
            try:
                new_directory(run_dir)
                return run_dir
            except FileExistsError:
                attempt += 1
                run_dir = f"{base}_{attempt}"


def tensorboard_trace_handler(
    dir_name: "os.PathLike[str] | str",
    worker_name: Optional[str] = None,
    analyse_flag: bool = True,
    async_mode: bool = False,
    auto_plot: Optional[bool] = None,
    plot_required: bool = False,
    plot: "Mapping[str, Any] | os.PathLike[str] | str | None" = None,
    *,
    use_gzip: bool = False,
    use_python_export: bool = False,
    layout: str = "run_dir",
) -> "TraceHandler | FlatTraceHandler":
    """Return an ``on_trace_ready`` callback that writes a run directory per saved cycle (or,
    with ``layout="flat"``, a trace per saved cycle as torch.profiler's handler does).

    Args:
        dir_name: the folder run directories are created in (created if missing).
        worker_name: prefix of the run directory and trace names; unique per worker in
            distributed jobs. Default ``{hostname}_{pid}``.
        analyse_flag: when False, a run directory gets the capture (and its JSON descriptions)
            only, which is cheaper at the end of each cycle; ``perfprof analyse DIR`` (or
            :func:`perfprof.analyse`) writes the trace and tables from it later.
        async_mode: write in a background thread so ``step()`` does not wait for the disk.
            Pending writes finish before the interpreter exits; ``handler.wait()`` waits for them.
        auto_plot: draw the run's plots (``perfprof plot``) into ``<run>/plots/`` after each run
            directory is written, in the thread that wrote it. Default (None): on when `plot`
            is given, else off. The run database is then written even without ExportType.Db.
        plot_required: a failed auto-plot raises :class:`perfprof.plots.AutoPlotError` (in
            async mode: logged as an error and kept in ``handler.plot_failures``) instead of
            one WARNING. No effect while auto-plot is off.
        plot: the plot configuration of this run's plots: a mapping of plot-config keys, or the
            path of a plot-config file (docs/plots.md). Written into the run directory as
            ``.perfprof-plot-config.yaml``, so ``perfprof plot RUN`` draws the same plots later.
        use_gzip: write the Chrome trace gzip-compressed (``.pt.trace.json.gz``, which
            HolisticTraceAnalysis, TensorBoard's plugin and Perfetto read), now and when
            ``perfprof analyse`` writes it later; torch.profiler's keyword.
        use_python_export: torch.profiler's choice between its two writers, accepted for
            scripts that pass it; perfprof has one.
        layout: ``"run_dir"`` (default): the run directory above. ``"flat"``: torch.profiler's
            layout, ``{dir_name}/{worker_name}.{time_ns}.pt.trace.json[.gz]`` and nothing else,
            for scripts and tools that glob ``dir/*.pt.trace.json`` (``perfprof summary``,
            ``plot`` and ``compare`` read such traces and their folder). It has no capture, so
            ``analyse_flag=False`` and auto-plot, which need the run directory, are refused with
            it; the handler's ``trace_files`` lists the traces.
    """
    if not isinstance(dir_name, (str, os.PathLike)):
        raise TypeError(f"tensorboard_trace_handler: 'dir_name' must be a path, got {type(dir_name).__name__}")
    dir_name = os.fspath(dir_name)
    if not dir_name:
        raise ValueError("tensorboard_trace_handler: 'dir_name' is empty")
    if worker_name is not None:
        if not isinstance(worker_name, str):
            raise TypeError(f"tensorboard_trace_handler: 'worker_name' must be str, got {type(worker_name).__name__}")
        if not worker_name or os.sep in worker_name or (os.altsep and os.altsep in worker_name):
            raise ValueError(f"tensorboard_trace_handler: 'worker_name' {worker_name!r} must be a non-empty file name")
    for field, value in (("analyse_flag", analyse_flag), ("async_mode", async_mode), ("plot_required", plot_required),
                         ("use_gzip", use_gzip), ("use_python_export", use_python_export)):
        if not isinstance(value, bool):
            raise TypeError(f"tensorboard_trace_handler: '{field}' must be a bool, got {type(value).__name__}")
    if auto_plot is not None and not isinstance(auto_plot, bool):
        raise TypeError("tensorboard_trace_handler: 'auto_plot' must be a bool or None, "
                        f"got {type(auto_plot).__name__}")
    if plot is not None and not isinstance(plot, (Mapping, str, os.PathLike)):
        raise TypeError("tensorboard_trace_handler: 'plot' must be a mapping or the path of a plot-config file, "
                        f"got {type(plot).__name__}")
    if not isinstance(layout, str):
        raise TypeError(f"tensorboard_trace_handler: 'layout' must be a str, got {type(layout).__name__}")
    if layout not in _LAYOUTS:
        raise ValueError(f"tensorboard_trace_handler: 'layout' got {layout!r}; expected one of {list(_LAYOUTS)}")
    if layout == "flat":
        return _flat_handler(dir_name, worker_name, analyse_flag, async_mode, auto_plot, plot, use_gzip)
    from .plots import AutoPlot

    envelope = os.fspath(plot) if isinstance(plot, os.PathLike) else plot
    return TraceHandler(dir_name, worker_name, analyse_flag, async_mode,
                        AutoPlot.resolve(auto_plot, plot_required, envelope), use_gzip)


#: tensorboard_trace_handler's layouts: perfprof's run directory, torch.profiler's flat folder of traces.
_LAYOUTS = ("run_dir", "flat")


def _flat_handler(dir_name: str, worker_name: Optional[str], analyse_flag: bool, async_mode: bool,
                  auto_plot: Optional[bool], plot: object, use_gzip: bool) -> FlatTraceHandler:
    """The handler of ``layout="flat"``, refusing the options only a run directory has."""
    if not analyse_flag:
        raise ValueError("tensorboard_trace_handler: analyse_flag=False keeps a cycle's capture for later, which "
                         "only the run-directory layout has; layout='flat' writes the trace at once")
    if auto_plot or plot is not None:
        raise ValueError("tensorboard_trace_handler: auto-plot draws into a run directory's plots/; "
                         "layout='flat' has none (run `perfprof plot DIR` on the traces instead)")
    return FlatTraceHandler(dir_name, worker_name or default_worker_name(), async_mode, use_gzip)


class _RunDirectoryJob:
    """Everything a run directory needs, taken from the profiler at the moment the cycle ends."""

    def __init__(self, prof: Any, run_dir: str, worker_name: str, analyse: bool, with_database: bool,
                 use_gzip: bool) -> None:
        if prof.trace is None:
            raise RuntimeError("the profiler has no trace")
        self.prof_trace = prof.trace
        self.run_dir = run_dir
        self.capture_path = os.path.join(run_dir, CAPTURE_FILE)
        # Events the capture lacks because it could not be written (disk full): the trace has them.
        session = getattr(prof, "_session", None)
        self.capture_lacks: int = session.capture_lacks if session is not None else 0
        # Without a whole capture (the cycle could not stream one, or not all of it) the trace is
        # the only complete record: written.
        self.analyse = analyse or self.capture_lacks > 0 or not os.path.exists(self.capture_path)
        # data_simplification: once the outputs are written, the capture they came from goes.
        self.remove_capture = self.analyse and bool(prof.experimental_config.data_simplification)
        # Auto-plot reads the database: written from the trace in memory when analysing. Without
        # analysing, the plots build it from the capture (perfprof.analysis.open_run). A run
        # whose capture goes keeps in its database what its Chrome trace cannot carry.
        config = prof._config_description()
        self.with_database = with_database or (self.remove_capture and records_beyond_trace(config))
        self.trace_file = trace_file_name(run_dir, worker_name, use_gzip)
        self.metadata_items = prof._metadata_items()
        self.metadata: Dict[str, Any] = prof.metadata
        self.dist = distributed_info()
        self.info = {
            "worker_name": worker_name,
            "rank": self.dist.rank,
            "world_size": self.dist.world_size,
            "backend": self.dist.backend,
            "pid": os.getpid(),
            "trace_id": prof.get_trace_id(),
            "use_gzip": use_gzip,  # how `perfprof analyse` writes the trace when it writes it later
            "versions": versions(),
            "config": config,
            "window": {
                "begin_unix_ns": prof.trace.window_begin_ns + prof.trace.unix_offset_ns,
                "end_unix_ns": prof.trace.window_end_ns + prof.trace.unix_offset_ns,
            },
            "trace_stats": prof.trace.stats,
            "capture_file": CAPTURE_FILE if os.path.exists(self.capture_path) and not self.remove_capture else None,
            "trace_file": os.path.join(OUTPUT_DIR, self.trace_file) if self.analyse else None,
        }
        self.environment = captured_environment()

    def write_logging_errors(self) -> bool:
        """Write the run directory; whether it was written (a failure is logged)."""
        try:
            self.write()
        except Exception as error:
            reason = "out of memory" if isinstance(error, MemoryError) else error
            logger.error("perfprof: writing run directory %s failed: %s%s", self.run_dir, reason, self._what_is_kept())
            _remove_if_empty(trace_dir_of(self.run_dir))
            _remove_if_empty(self.run_dir)
            return False
        return True

    def _what_is_kept(self) -> str:
        if not os.path.exists(self.capture_path):
            return f"; the cycle's trace ({self.prof_trace.num_ranges} ranges) is lost"
        if self.capture_lacks:
            return (f"; its capture keeps all but the last {self.capture_lacks} events, which are lost "
                    f"(`perfprof analyse {self.run_dir}` writes the rest)")
        return f"; its capture is kept: `perfprof analyse {self.run_dir}` writes them later"

    def write(self) -> None:
        if self.analyse:
            write_outputs(self.prof_trace, self.run_dir, self.trace_file, self.metadata_items, self.dist.rank,
                          self.dist.world_size, self.dist.backend, self.info["config"], self.environment,
                          self.with_database)
        write_json(os.path.join(self.run_dir, METADATA_FILE),
                   {"metadata": self.metadata, "environment_variables": self.environment})
        write_json(os.path.join(self.run_dir, INFO_FILE), self.info)
        if self.remove_capture and os.path.exists(self.capture_path):
            os.remove(self.capture_path)


def _remove_stale_temporaries_under(dir_name: str) -> None:
    """Remove what exports killed while writing (SIGKILL, out of memory) left in the run
    directories under `dir_name`: temporary files of processes no longer running. One line says
    how many."""
    try:
        run_dirs = [entry.path for entry in os.scandir(dir_name) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return
    removed = remove_stale_temporaries(dir_name) + sum(remove_run_temporaries(run_dir) for run_dir in run_dirs)
    if removed:
        logger.warning("perfprof: removed %d temporary files that writers killed while writing left in %s",
                       removed, dir_name)


def _remove_if_empty(directory: str) -> None:
    """A directory a failed write left empty goes (one that holds anything stays)."""
    try:
        os.rmdir(directory)
    except OSError:
        pass
