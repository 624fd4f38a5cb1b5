"""GPU collection through CUPTI, and GPU telemetry through NVML: finding their libraries, and what
the user can ask about them."""
from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path
from typing import Any, Dict, List, Optional

from . import _core

SONAMES = ("libcupti.so.13", "libcupti.so.12", "libcupti.so")
LIBRARY_VARIABLE = "PERFPROF_CUPTI_LIBRARY"
DRIVER_VARIABLE = "PERFPROF_CUDA_DRIVER_LIBRARY"
# Where libnvidia-ml is looked for (alone, when set); else libnvidia-ml.so.1 from the loader's path.
NVML_LIBRARY_VARIABLE = "PERFPROF_NVML_LIBRARY"

_lock = threading.Lock()
_status: Optional[_core.CuptiStatus] = None


def cuda_status() -> Dict[str, Any]:
    """Whether GPU activity can be collected, and if not, why.

    Returns a dict: ``available`` (bool), ``library`` (path of the libcupti in use, or None),
    ``version`` (CUPTI API version), ``devices`` (CUDA devices the driver reports), ``reason``
    (why not available, "" when it is) and ``tried`` (every location tried, with its outcome).
    Available means libcupti loaded and the CUDA driver (``libcuda.so.1``, or
    ``$PERFPROF_CUDA_DRIVER_LIBRARY``) initialised with at least one device. libcupti is searched
    for in this order:
    ``$PERFPROF_CUPTI_LIBRARY`` (alone, when set); a libcupti already loaded in the process
    (e.g. by torch); the ``nvidia-cuda-cupti`` wheel beside the installed CUDA Python packages;
    ``$CUDA_HOME`` / ``$CUDA_PATH``; the dynamic loader's default path.
    """
    global _status
    with _lock:
        if _status is None:
            explicit = os.environ.get(LIBRARY_VARIABLE, "")
            driver = os.environ.get(DRIVER_VARIABLE, "")
            _status = _core.cupti_load(explicit, [] if explicit else cupti_candidates(), driver)
        return dict(_status)


def cupti_candidates() -> List[str]:
    """Locations tried for libcupti after the already-loaded check, in order."""
    folders: List[Path] = []
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        folders.extend(sorted(Path(root).glob("*/lib")))  # nvidia/cu13/lib, nvidia/cuda_cupti/lib
    for variable in ("CUDA_HOME", "CUDA_PATH"):
        home = os.environ.get(variable)
        if home:
            folders += [Path(home) / "extras" / "CUPTI" / "lib64", Path(home) / "lib64",
                        Path(home) / "targets" / "x86_64-linux" / "lib"]
    found = [str(folder / name) for folder in folders for name in SONAMES if (folder / name).exists()]
    return found + list(SONAMES)


def is_available() -> bool:
    return bool(cuda_status()["available"])


def nvml_status() -> Dict[str, Any]:
    """Whether GPU telemetry (``gpu_telemetry``, ``sys_io``, ``sys_interconnection``) can be
    sampled, and if not, why.

    Returns a dict: ``available`` (bool), ``library`` (the libnvidia-ml location loaded or tried:
    ``$PERFPROF_NVML_LIBRARY`` when set, else ``libnvidia-ml.so.1`` from the dynamic loader's
    path), ``devices`` (GPUs NVML reports) and ``reason`` (why not available, "" when it is).
    NVML is initialised for the question and shut down again.
    """
    return dict(_core.nvml_status(os.environ.get(NVML_LIBRARY_VARIABLE, "")))
