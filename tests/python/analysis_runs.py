"""Constructed runs for the analysis tests: GPU timelines with exact times, profiled by perfprof.

A scenario is a list of :class:`Activity` entries, each one CUDA call and the device work it
queued, at offsets from a base time. :func:`constructed_run` plays it through the CUPTI test
double (tests/cupti_double, whose ``fake_cupti_*_at`` calls take explicit times) inside a
profiled run written by ``tensorboard_trace_handler`` with a Chrome trace and a database, so
the analyses (from the database) and HolisticTraceAnalysis (from the trace) read the same run.

Offsets are whole microseconds in the scenarios here: the Chrome trace has microsecond
timestamps, and HTA rounds fractional ones, so whole microseconds compare exactly.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Optional, Sequence

import fake_cupti

US = 1_000  # ns


@dataclass(frozen=True)
class Activity:
    """One CUDA call of a scenario and its device work; times are ns after the run's base."""

    kind: str                   # "kernel", "memcpy" or "memset"
    stream: int
    api_start_ns: int           # the runtime call (cudaLaunchKernel, cudaMemcpyAsync, ...)
    gpu_start_ns: int           # its device work
    duration_ns: int            # of the device work
    name: str = ""              # kernels: the kernel's name
    bytes: int = 0              # copies and sets: their size
    copy_kind: int = 1          # copies: CUpti_ActivityMemcpyKind (1 HtoD, 2 DtoH, 8 DtoD)
    device: int = 0
    api_duration_ns: int = 2 * US

    @property
    def end_ns(self) -> int:
        """When the last thing this entry records ends."""
        return max(self.gpu_start_ns + self.duration_ns, self.api_start_ns + self.api_duration_ns)


# Three profiled steps: a warm-up, the scenario, and an empty last step. HTA leaves out the work
# launched in a trace's last profiler step; the empty one keeps the scenario in its view too.
# The base lies 1 ms after the scenario's step began, so every record falls inside the
# profiling window; the step lasts until the double's clock has passed the last record.
_SCRIPT = """
import time
import perfprof

activities = json.loads({activities!r})
for device in sorted({{a["device"] for a in activities}} - {{0}}):
    fake.fake_cupti_add_device(device, b"Fake GPU", 132, 80 << 30, 9, 0)

def play(base, a):
    timing = (base + a["api_start_ns"], a["api_duration_ns"], base + a["gpu_start_ns"], a["duration_ns"])
    if a["kind"] == "kernel":
        fake.fake_cupti_launch_kernel_at(a["name"].encode(), a["device"], 1, a["stream"], *timing)
    elif a["kind"] == "memcpy":
        fake.fake_cupti_memcpy_at(a["bytes"], a["copy_kind"], a["device"], 1, a["stream"], *timing)
    elif a["kind"] == "memset":
        fake.fake_cupti_memset_at(a["bytes"], 0, a["device"], 1, a["stream"], *timing)
    else:
        raise ValueError(a["kind"])

handler = perfprof.tensorboard_trace_handler(os.environ["TMP"] + "/runs", worker_name="constructed")
config = perfprof.ExperimentalConfig(export_type=["text", "db"])
with perfprof.profile(activities=[perfprof.ProfilerActivity.CPU, perfprof.ProfilerActivity.CUDA],
                      schedule=perfprof.schedule(wait=0, warmup=1, active=2, repeat=1),
                      on_trace_ready=handler, experimental_config=config) as prof:
    for step in range(3):
        if step == 1:
            with perfprof.record_function("constructed scenario"):
                base = (fake.fake_cupti_now() + 1_000_000) // 1000 * 1000
                for a in sorted(activities, key=lambda a: a["api_start_ns"]):
                    play(base, a)
                last_end = base + {last_end_ns}
                while fake.fake_cupti_now() <= last_end:
                    time.sleep(0.0002)
        prof.step()
print(json.dumps(dict(run_dir=handler.run_dirs[-1])))
"""


def constructed_run(activities: Sequence[Activity], tmp_path: Path, env: Optional[Dict[str, str]] = None) -> Path:
    """Profile `activities` through the CUPTI double (with `env` added to the child's
    environment: ``RANK`` and ``WORLD_SIZE`` for a rank of a job); the run directory it wrote.

    The run directory holds ``PERFPROF_OUTPUT/perfprof.db`` and the Chrome trace
    (``perfprof.trace_dir_of(run_dir)``). In the database the scenario's time 0 lies wherever
    the run happened: compare times relative to each other.
    """
    entries = [dataclasses.asdict(activity) for activity in activities]
    last_end_ns = max(activity.end_ns for activity in activities)
    script = _SCRIPT.format(activities=json.dumps(entries), last_end_ns=last_end_ns)
    result = fake_cupti.run(script, tmp_path, env)
    return Path(result["run_dir"])
