"""Running perfprof against the CUPTI test double (tests/cupti_double) in a child process.

libcupti is loaded once per process, so each scenario runs as a script in a fresh interpreter
whose environment points PERFPROF_CUPTI_LIBRARY and PERFPROF_CUDA_DRIVER_LIBRARY at the double.
The script gets `fake` (the double, through ctypes) and `perfprof`, and prints one JSON value.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Optional

REPO = Path(__file__).resolve().parents[2]
LIBRARY_NAME = "libperfprof_fake_cupti.so"
CUPTI_ERROR_NOT_SUPPORTED = 27
CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED = 39

PRELUDE = """
import ctypes, json, os, sys, threading
fake = ctypes.CDLL(os.environ["PERFPROF_FAKE_CUPTI"])
u32, u64, i32, u16 = ctypes.c_uint32, ctypes.c_uint64, ctypes.c_int32, ctypes.c_uint16
fake.fake_cupti_launch_kernel.restype = u32
fake.fake_cupti_launch_kernel.argtypes = [ctypes.c_char_p, u32, u32, u32, u64, u32, u32, u16, i32, u32]
fake.fake_cupti_memcpy.restype = u32
fake.fake_cupti_memcpy.argtypes = [u64, ctypes.c_uint8, u32, u32, u32, u64]
fake.fake_cupti_memset.restype = u32
fake.fake_cupti_memset.argtypes = [u64, u32, u32, u32, u32, u64]
fake.fake_cupti_launch_kernel_at.restype = u32
fake.fake_cupti_launch_kernel_at.argtypes = [ctypes.c_char_p, u32, u32, u32, u64, u64, u64, u64]
fake.fake_cupti_memcpy_at.restype = u32
fake.fake_cupti_memcpy_at.argtypes = [u64, ctypes.c_uint8, u32, u32, u32, u64, u64, u64, u64]
fake.fake_cupti_memset_at.restype = u32
fake.fake_cupti_memset_at.argtypes = [u64, u32, u32, u32, u32, u64, u64, u64, u64]
fake.fake_cupti_now.restype = u64
fake.fake_cupti_synchronize.restype = u32
fake.fake_cupti_synchronize.argtypes = [u32, u32, u32, u64]
fake.fake_cupti_malloc.restype = u32
fake.fake_cupti_malloc.argtypes = [u64, u64, u32, ctypes.c_int]
fake.fake_cupti_graph_launch.restype = u32
fake.fake_cupti_graph_launch.argtypes = [u32, u32, u32, u32, u32, u64]
fake.fake_cupti_driver_launch_kernel.restype = u32
fake.fake_cupti_driver_launch_kernel.argtypes = [ctypes.c_char_p, u32, u32, u32, u64]
fake.fake_cupti_driver_call.restype = u32
fake.fake_cupti_driver_call.argtypes = [u32, u64]
fake.fake_cupti_set_in_flight.argtypes = [u32]
fake.fake_cupti_other_client_session.argtypes = [ctypes.c_int]
fake.fake_cupti_set_current_context.argtypes = [u32, u32]
fake.fake_cupti_add_device.argtypes = [u32, ctypes.c_char_p, u32, u64, u32, u32]
fake.fake_cupti_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
fake.fake_cupti_set_driver.argtypes = [ctypes.c_int, ctypes.c_int]
fake.fake_cupti_drop_next.argtypes = [u32]

def kernel(name, stream=7, duration_ns=50_000, device=0):
    return fake.fake_cupti_launch_kernel(name.encode(), device, 1, stream, duration_ns, 128, 256, 32, 0, 1024)

def load_trace(path):
    with open(path) as f:
        return json.load(f)

fake.fake_cupti_add_device(0, b"Fake GPU", 132, 80 << 30, 9, 0)
"""


def library_path() -> str:
    """The double's path: $PERFPROF_FAKE_CUPTI, the tests/run.sh build, or built here with CMake."""
    explicit = os.environ.get("PERFPROF_FAKE_CUPTI")
    if explicit:
        return explicit
    for build in ("build/tests", "build/pytest-fake-cupti"):
        candidate = REPO / build / "tests" / "cupti_double" / LIBRARY_NAME
        if candidate.exists():
            return str(candidate)
    build = REPO / "build" / "pytest-fake-cupti"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), "-DPERFPROF_BUILD_PYTHON=OFF",
                    "-DPERFPROF_BUILD_TESTS=ON"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "perfprof_fake_cupti", "-j2"],
                   check=True, capture_output=True)
    return str(build / "tests" / "cupti_double" / LIBRARY_NAME)


def run(script: str, tmp_path: Path, env: Optional[Dict[str, str]] = None) -> Dict[str, Any]:
    """Runs PRELUDE + script in a fresh interpreter; returns the JSON its last line printed."""
    library = library_path()
    environment = dict(os.environ, PERFPROF_FAKE_CUPTI=library, PERFPROF_CUPTI_LIBRARY=library,
                       PERFPROF_CUDA_DRIVER_LIBRARY=library, TMP=str(tmp_path))
    environment.update(env or {})
    code = PRELUDE + textwrap.dedent(script)
    result = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    if result.returncode != 0:
        raise AssertionError(f"script failed:\n{result.stdout}\n{result.stderr}")
    output = json.loads(result.stdout.strip().splitlines()[-1])
    output["_stderr"] = result.stderr
    return output
