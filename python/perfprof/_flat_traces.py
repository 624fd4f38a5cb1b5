"""tensorboard_trace_handler's ``layout="flat"``: torch.profiler's layout, one Chrome trace per
saved cycle straight in the folder (``{dir_name}/{worker_name}.{time_ns}.pt.trace.json[.gz]``),
for scripts and tools that glob ``dir/*.pt.trace.json``. No run directory, so no capture,
summary tables or database beside it: ``perfprof summary``/``plot``/``compare`` build a trace's
database from the trace itself when given the file or its folder."""
from __future__ import annotations

import concurrent.futures
import functools
import os
import time
from typing import Any, List, Optional

from ._files import make_directory
from ._logging import logger
from ._run_directory import TRACE_SUFFIX
from ._writer_thread import background_writer
from .run_metadata import DistributedInfo, distributed_info


class FlatTraceHandler:
    """The ``on_trace_ready`` callable :func:`perfprof.tensorboard_trace_handler` returns with
    ``layout="flat"``. ``trace_files`` lists the traces written (and submitted, in async mode);
    ``wait()`` waits for async writes."""

    def __init__(self, dir_name: str, worker_name: str, async_mode: bool, use_gzip: bool) -> None:
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.async_mode = async_mode
        self.use_gzip = use_gzip
        self.trace_files: List[str] = []
        self._pending: List[concurrent.futures.Future] = []

    def __call__(self, prof: Any) -> None:
        """Write `prof`'s latest trace as ``{worker_name}.{time_ns}.pt.trace.json`` in the folder
        (the time in ns, as torch names it); an I/O error is logged, never raised."""
        path = os.path.join(self.dir_name, f"{self.worker_name}.{time.time_ns()}{TRACE_SUFFIX}"
                                           f"{'.gz' if self.use_gzip else ''}")
        # Taken now: in async mode the next cycle may replace the profiler's trace before it is written.
        write = functools.partial(self._write, prof.trace, prof._metadata_items(), distributed_info(), path)
        self.trace_files.append(path)
        if self.async_mode:
            self._pending = [future for future in self._pending if not future.done()]
            self._pending.append(background_writer().submit(write))
        else:
            write()

    def wait(self, timeout: Optional[float] = None) -> None:
        """Block until every trace submitted in async mode is written."""
        concurrent.futures.wait(self._pending, timeout=timeout)

    def _write(self, trace: Any, metadata_items: List[Any], dist: DistributedInfo, path: str) -> None:
        try:
            make_directory(self.dir_name)
            trace.export_chrome_trace(path, metadata_items, dist.rank, dist.world_size, dist.backend)
        except Exception as error:  # never hurt the job: a full disk must not stop training
            self.trace_files.remove(path)
            logger.error("perfprof: writing trace %s failed: %s; this cycle's trace is not written "
                         "(prof.trace holds it until the next cycle)", path, error)
