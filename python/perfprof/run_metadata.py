"""What a run directory records about the run: environment, versions, rank."""
from __future__ import annotations

import os
import platform
import socket
import sys
from dataclasses import dataclass
from typing import Dict, Optional

# Variables that change how a GPU job behaves; exact names and prefixes.
ENVIRONMENT_VARIABLES = (
    "CUDA_VISIBLE_DEVICES", "CUDA_LAUNCH_BLOCKING", "CUDA_DEVICE_MAX_CONNECTIONS",
    "CUDA_MODULE_LOADING", "CUDA_DEVICE_ORDER", "CUBLAS_WORKSPACE_CONFIG", "CUBLASLT_WORKSPACE_SIZE",
    "NVIDIA_TF32_OVERRIDE", "PYTORCH_CUDA_ALLOC_CONF", "PYTORCH_ALLOC_CONF",
    "PYTORCH_NO_CUDA_MEMORY_CACHING", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
    "MASTER_ADDR", "MASTER_PORT", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE",
    "GROUP_RANK", "CUDA_HOME", "LD_PRELOAD",
)
ENVIRONMENT_PREFIXES = ("NCCL_", "TORCH_NCCL_", "TORCH_DISTRIBUTED_", "CUDNN_", "NVTE_", "NVSHMEM_")


def captured_environment(environ: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    """The environment variables that matter for GPU jobs, sorted by name."""
    environ = dict(os.environ) if environ is None else environ
    return {
        name: value
        for name, value in sorted(environ.items())
        if name in ENVIRONMENT_VARIABLES or name.startswith(ENVIRONMENT_PREFIXES)
    }


@dataclass(frozen=True)
class DistributedInfo:
    backend: str
    rank: int
    world_size: int

    def to_dict(self) -> Dict[str, object]:
        return {"backend": self.backend, "rank": self.rank, "world_size": self.world_size}


def distributed_info() -> DistributedInfo:
    """Rank and world size from torch.distributed when initialised, else from RANK/WORLD_SIZE."""
    dist = _initialised_torch_distributed()
    if dist is not None:
        return DistributedInfo(str(dist.get_backend()), dist.get_rank(), dist.get_world_size())
    return DistributedInfo("", _int_env("RANK", 0), _int_env("WORLD_SIZE", 1))


def versions() -> Dict[str, Optional[str]]:
    from . import __version__

    torch = sys.modules.get("torch")
    return {
        "perfprof": __version__,
        "python": platform.python_version(),
        "torch": getattr(torch, "__version__", None) if torch else None,
        "platform": platform.platform(),
    }


def default_worker_name() -> str:
    return f"{socket.gethostname()}_{os.getpid()}"


def _initialised_torch_distributed():  # type: ignore[no-untyped-def]
    torch = sys.modules.get("torch")  # never import torch on the user's behalf
    dist = getattr(torch, "distributed", None) if torch else None
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return dist
    except Exception:  # a half-initialised process group must not break profiling
        return None
    return None


def _int_env(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default
