"""Host-resident graph arrays: pinned host memory mapped into the GPU's address space, read by
the kernels over the host link (zero-copy; EMOGI, and the Friendster paper's host-resident CSR).
An array placed there is a ``cupy.ndarray`` like any other: every kernel and CuPy routine takes
it unchanged, and each read of it crosses the link (PCIe Gen5 x16 on the H100 machine: 48 GB/s
read sequentially by a kernel, 5.2 GB/s in random 128-byte lines, ../shared/DEVICE.md and
#20), so the rows a warp reads whole are the ones that go fast.

The memory comes from ``cudaHostAlloc`` (mapped, portable) and goes back with ``cudaFreeHost``
when the last array viewing it is gone.
"""

from __future__ import annotations

import ctypes
from typing import Any

import cupy
import numpy as np

from ...errors import DeviceError


class MappedHostMemory:
    """``nbytes`` of pinned host memory mapped for the current device; ``device_ptr`` is its
    address in the device's space (the host's own under unified addressing)."""

    def __init__(self, nbytes: int) -> None:
        runtime = cupy.cuda.runtime
        flags = runtime.hostAllocMapped | runtime.hostAllocPortable
        try:
            self.ptr = runtime.hostAlloc(max(1, int(nbytes)), flags)
        except runtime.CUDARuntimeError as exc:
            raise DeviceError(
                f"cannot pin {nbytes:,} bytes of host memory for a host-resident graph ({exc}): "
                "more ranks or nodes, or the graph on the device"
            ) from None
        self.nbytes = int(nbytes)
        self.device_ptr = int(runtime.pointerGetAttributes(self.ptr).devicePointer)

    def __del__(self) -> None:
        ptr, self.ptr = getattr(self, "ptr", None), None
        if ptr is not None:
            try:
                cupy.cuda.runtime.freeHost(ptr)
            except Exception:  # at interpreter exit the runtime may be gone: the OS frees it
                pass


def host_empty(length: int, dtype: Any) -> Any:
    """An uninitialized ``cupy.ndarray`` of ``length`` elements in mapped host memory."""
    dtype = cupy.dtype(dtype)
    memory = MappedHostMemory(length * dtype.itemsize)
    device = cupy.cuda.Device().id
    unowned = cupy.cuda.UnownedMemory(memory.device_ptr, max(1, memory.nbytes), memory, device)
    return cupy.ndarray((length,), dtype, cupy.cuda.MemoryPointer(unowned, 0))


def host_view(array: Any) -> np.ndarray:
    """A numpy view of a ``host_empty`` array (the same memory, read and written by the host;
    under unified addressing its device address is the host's). The view does not keep the
    memory alive: hold ``array`` as long as the view is used."""
    if array.size == 0:
        return np.empty(0, dtype=array.dtype)
    words = ctypes.c_byte * array.nbytes
    return np.frombuffer(words.from_address(array.data.ptr), dtype=array.dtype)


def to_host_memory(array: Any) -> Any:
    """A copy of the device array ``array`` in mapped host memory, as a ``cupy.ndarray`` the
    kernels read over the link."""
    array = cupy.ascontiguousarray(array)
    placed = host_empty(array.size, array.dtype).reshape(array.shape)
    if array.nbytes:
        cupy.cuda.runtime.memcpy(
            placed.data.ptr, array.data.ptr, array.nbytes, cupy.cuda.runtime.memcpyDefault
        )
    return placed


def in_host_memory(array: Any) -> bool:
    """Whether the device array ``array`` lives in (mapped) host memory, as the runtime says."""
    if array.data.ptr == 0:
        return False
    runtime = cupy.cuda.runtime
    try:
        kind = runtime.pointerGetAttributes(array.data.ptr).type
    except runtime.CUDARuntimeError:  # memory the runtime does not know: not ours
        return False
    return kind == runtime.memoryTypeHost


__all__ = ["MappedHostMemory", "host_empty", "host_view", "in_host_memory", "to_host_memory"]
