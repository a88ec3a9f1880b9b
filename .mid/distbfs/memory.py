"""How much memory a rank has, and the one-line refusal when work would not fit.

Checked before the allocation, collectively: if any rank lacks the bytes (ranks on one node's
host memory, or on one GPU, count together), every rank raises the same ``InputError`` naming
what needs them, the bytes needed and available on the rank that lacks them, and what would make
it fit (exit status 2 on the command line, never a killed process). Host memory:
``MemAvailable`` of ``/proc/meminfo`` (Linux), else the free physical pages; device memory: the
free bytes the driver reports plus the blocks CuPy's pool holds free.
"""

from __future__ import annotations

import os
import socket
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


def on_device(xp: Any) -> bool:
    """Whether arrays of the module ``xp`` live on a GPU (CuPy) rather than in host memory
    (numpy, and the tests' host stand-ins for CuPy)."""
    return hasattr(xp, "cuda")


def available_bytes(xp: Any) -> int:
    """Bytes available to a new array of the module ``xp`` (numpy: host; cupy: this rank's
    device)."""
    if not on_device(xp):
        return available_host_bytes()
    free, _ = xp.cuda.runtime.memGetInfo()
    return int(free + xp.get_default_memory_pool().free_bytes())


def memory_owner(xp: Any) -> tuple[str, ...]:
    """What the bytes of ``xp`` arrays come from, the same for ranks that share it: this node's
    host memory, or this node's GPU (its PCI bus id)."""
    if not on_device(xp):
        return (socket.gethostname(),)
    device = xp.cuda.Device()
    try:
        return (socket.gethostname(), str(device.pci_bus_id))
    except Exception:  # no bus id from the driver: the runtime's device number names it
        return (socket.gethostname(), f"device {device.id}")


def require(needed: int, xp: Any, comm: Communicator | None, what: str, fix: str) -> None:
    """Raise ``InputError`` on every rank unless every rank has ``needed`` bytes available for
    arrays of ``xp`` (collective: one all-gather; ``comm`` None: this rank alone). Ranks that
    draw on the same memory (one node's host, one GPU) must fit together."""
    short = shortfall(needed, xp, comm)
    if short is not None:
        rank, wanted, together, available = short
        where = "device" if on_device(xp) else "host"
        shared = ""
        if together > wanted:
            shared = f" ({together:,} with the other ranks sharing that memory)"
        raise InputError(
            f"{what} needs {wanted:,} bytes of {where} memory on rank {rank}{shared}, "
            f"{available:,} are available: {fix}"
        )


def fits(needed: int, xp: Any, comm: Communicator | None) -> bool:
    """Whether every rank has ``needed`` bytes available for arrays of ``xp`` (collective, as
    ``require``; the same answer on every rank)."""
    return shortfall(needed, xp, comm) is None


def shortfall(needed: int, xp: Any, comm: Communicator | None) -> tuple[int, int, int, int] | None:
    """The first rank lacking ``needed`` bytes (collective, as ``require``): (rank, its bytes,
    the bytes of all ranks sharing its memory, the bytes available); None when all fit."""
    mine = (memory_owner(xp), int(needed), available_bytes(xp))
    ranks = [mine] if comm is None else comm.allgather_object(mine)
    together: dict[tuple[str, ...], int] = {}
    for owner, wanted, _ in ranks:
        together[owner] = together.get(owner, 0) + wanted
    for rank, (owner, wanted, available) in enumerate(ranks):
        if together[owner] > available:
            return rank, wanted, together[owner], available
    return None
