"""The NVML test double (tests/nvml_double) for Python tests of GPU telemetry.

perfprof loads libnvidia-ml once per process and location: point PERFPROF_NVML_LIBRARY at
library_path() in the environment of a fresh interpreter, and prepend PRELUDE to its script to
get `fake`, the double through ctypes, with the control functions of fake_nvml_control.h typed.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LIBRARY_NAME = "libperfprof_fake_nvml.so"
# nvmlReturn_t codes for fake.fake_nvml_fail.
NVML_ERROR_NOT_SUPPORTED = 3
NVML_ERROR_DRIVER_NOT_LOADED = 9
NVML_ERROR_UNKNOWN = 999

PRELUDE = """
import ctypes, os
fake = ctypes.CDLL(os.environ["PERFPROF_NVML_LIBRARY"])
uint, ull = ctypes.c_uint, ctypes.c_ulonglong
fake.fake_nvml_reset.argtypes = []
fake.fake_nvml_set_device_count.argtypes = [uint]
# device, utilization gpu %, memory %, memory used bytes, power mW, SM clock MHz, temperature C,
# PCIe rx KB/s, tx KB/s
fake.fake_nvml_set_device.argtypes = [uint, uint, uint, ull, uint, uint, uint, uint, uint]
fake.fake_nvml_set_link_active.argtypes = [uint, uint, ctypes.c_int]
fake.fake_nvml_add_link_traffic.argtypes = [uint, uint, ull, ull]
fake.fake_nvml_add_pcie_traffic.argtypes = [uint, ull, ull]
fake.fake_nvml_set_query_delay_us.argtypes = [uint]
fake.fake_nvml_fail.argtypes = [ctypes.c_char_p, ctypes.c_int]
fake.fake_nvml_init_count.argtypes = []
fake.fake_nvml_init_count.restype = ctypes.c_int
"""


def library_path() -> str:
    """The double's path: $PERFPROF_FAKE_NVML, the tests/run.sh build, or built here with CMake."""
    explicit = os.environ.get("PERFPROF_FAKE_NVML")
    if explicit:
        return explicit
    for build in ("build/tests", "build/pytest-fake-nvml"):
        candidate = REPO / build / "tests" / "nvml_double" / LIBRARY_NAME
        if candidate.exists():
            return str(candidate)
    build = REPO / "build" / "pytest-fake-nvml"
    subprocess.run(["cmake", "-S", str(REPO), "-B", str(build), "-DPERFPROF_BUILD_PYTHON=OFF",
                    "-DPERFPROF_BUILD_TESTS=ON"], check=True, capture_output=True)
    subprocess.run(["cmake", "--build", str(build), "--target", "perfprof_fake_nvml", "-j2"],
                   check=True, capture_output=True)
    return str(build / "tests" / "nvml_double" / LIBRARY_NAME)
