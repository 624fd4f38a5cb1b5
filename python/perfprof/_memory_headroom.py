"""How much more memory this process can use: what the automatic recording limit is a share of.

Three ceilings can stop an allocation, and a job may run under any of them: the system's free
memory, the address-space limit (``ulimit -v``, counted in virtual memory) and the memory limit
of the process's cgroup (containers, batch schedulers). The headroom is the least room left
under any of them.
"""
from __future__ import annotations

import os
import resource
from typing import Iterator, Optional, Tuple

_CGROUP_ROOT = "/sys/fs/cgroup"


def memory_headroom() -> Optional[int]:
    """Bytes the process can still allocate, or None when no ceiling can be read."""
    rooms = [room for room in _rooms() if room is not None]
    return max(0, min(rooms)) if rooms else None


def _rooms() -> Iterator[Optional[int]]:
    yield _meminfo_bytes("MemAvailable")
    yield _address_space_room()
    yield _cgroup_room()


def _meminfo_bytes(field: str) -> Optional[int]:
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                name, _, value = line.partition(":")
                if name == field:
                    return int(value.split()[0]) * 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _address_space_room() -> Optional[int]:
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/statm") as statm:
            virtual = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
    return soft - virtual


def _cgroup_room() -> Optional[int]:
    """Room under the memory limit of the process's cgroup (v2, else v1); None without one."""
    for controllers, path in _own_cgroups():
        if controllers == "":  # v2: one unified hierarchy
            group = os.path.join(_CGROUP_ROOT, path.lstrip("/"))
            limit_file, usage_file = "memory.max", "memory.current"
        elif "memory" in controllers.split(","):
            group = os.path.join(_CGROUP_ROOT, "memory", path.lstrip("/"))
            limit_file, usage_file = "memory.limit_in_bytes", "memory.usage_in_bytes"
        else:
            continue
        limit = _read_int(os.path.join(group, limit_file))
        usage = _read_int(os.path.join(group, usage_file))
        if limit is not None and usage is not None and limit < _NO_LIMIT:
            return limit - usage
    return None


# cgroup v1 writes "no limit" as a number near 2**63; v2 writes "max" (read as None).
_NO_LIMIT = 1 << 60


def _own_cgroups() -> Iterator[Tuple[str, str]]:
    """(controllers, path) of each hierarchy /proc/self/cgroup lists ("" controllers: v2)."""
    try:
        with open("/proc/self/cgroup") as cgroups:
            lines = cgroups.read().splitlines()
    except OSError:
        return
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            yield parts[1], parts[2]


def _read_int(path: str) -> Optional[int]:
    """The integer in `path`; None when it cannot be read or says "max" (no limit)."""
    try:
        with open(path) as file:
            return int(file.read().strip())
    except (OSError, ValueError):
        return None
