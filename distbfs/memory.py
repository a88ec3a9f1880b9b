"""How much memory a rank has, and the one-line refusal when work would not fit.

Checked before the allocation, collectively: if any rank lacks the bytes, every rank raises the
same ``InputError`` naming what needs them, the bytes needed and available on the rank that
lacks them, and what would make it fit (exit status 2 on the command line, never a killed
process). Host memory: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else the free physical
pages; device memory: the free bytes the driver reports plus the blocks CuPy's pool holds free.
"""

from __future__ import annotations

import os
from typing import Any

from .comm.base import Communicator
from .errors import InputError


def available_host_bytes() -> int:
    """Bytes of host memory available to a new allocation on this node."""
    try:
        with open("/proc/meminfo") as info:
            for line in info:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return int(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))


def available_bytes(xp: Any) -> int:
    """Bytes available to a new array of the module ``xp`` (numpy: host; cupy: this rank's
    device)."""
    if xp.__name__ == "numpy":
        return available_host_bytes()
    free, _ = xp.cuda.runtime.memGetInfo()
    return int(free + xp.get_default_memory_pool().free_bytes())


def require(needed: int, xp: Any, comm: Communicator, what: str, fix: str) -> None:
    """Raise ``InputError`` on every rank unless every rank has ``needed`` bytes available for
    arrays of ``xp`` (collective: one all-gather)."""
    available = available_bytes(xp)
    short = comm.allgather_object(None if needed <= available else (needed, available))
    for rank, item in enumerate(short):
        if item is not None:
            where = "device" if xp.__name__ != "numpy" else "host"
            raise InputError(
                f"{what} needs {item[0]:,} bytes of {where} memory on rank {rank}, "
                f"{item[1]:,} are available: {fix}"
            )
