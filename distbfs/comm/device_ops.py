"""The device operations the GPU communicators use (``CupyOps``: CuPy's, on the current device
and stream; tests substitute host-memory doubles with the same methods), and the buffers they
reuse from one exchange to the next (``GrowingBuffer``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DeviceError, out_of_device_memory

MIN_BUFFER_BYTES = 1 << 16
"""Smallest receive or staging buffer allocated (bytes)."""

GROWTH = 2
"""A buffer that is too small is replaced by one at least ``GROWTH`` times its size."""

Plan = tuple[Any, np.ndarray, Any, np.ndarray]
"""One payload's transfer: (send bytes, send byte offsets, receive bytes, receive byte offsets);
the offsets have ``size + 1`` entries, segment ``r`` being what goes to / comes from rank r."""


class CupyOps:
    """The few device operations the GPU communicators use, on CuPy's current device and stream.

    Tests substitute an object with the same methods over host memory.
    """

    def __init__(self) -> None:
        import cupy

        from ..arrays import empty_pinned

        self._cupy = cupy
        self._side: Any = None
        self._empty_pinned = empty_pinned
        runtime = cupy.cuda.runtime
        self._memcpy_async = runtime.memcpyAsync
        self._kind = {
            "h2d": runtime.memcpyHostToDevice,
            "d2h": runtime.memcpyDeviceToHost,
            "d2d": runtime.memcpyDeviceToDevice,
        }

    def is_device(self, array: Any) -> bool:
        return isinstance(array, self._cupy.ndarray)

    def empty(self, nbytes: int, what: str) -> Any:
        """A device byte array; ``DeviceError`` naming ``what`` when memory runs out."""
        try:
            return self._cupy.empty(int(nbytes), dtype=np.uint8)
        except self._cupy.cuda.memory.OutOfMemoryError:
            raise DeviceError(
                f"out of GPU memory allocating the {what} ({int(nbytes)} bytes): use more GPUs "
                "(ranks) or a smaller graph"
            ) from None

    def pinned(self, nbytes: int, what: str) -> np.ndarray:
        """A page-locked host byte array (fast, asynchronous copies to and from the device)."""
        try:
            return self._empty_pinned(int(nbytes), dtype=np.uint8)
        except Exception as exc:  # cudaHostAlloc failed
            raise DeviceError(f"cannot allocate the {what} ({int(nbytes)} bytes): {exc}") from None

    def device_ptr(self, array: Any) -> int:
        return int(array.data.ptr)

    @staticmethod
    def host_ptr(array: np.ndarray) -> int:
        return int(array.ctypes.data)

    def stream(self) -> int:
        """Handle of the current stream (what NCCL calls take)."""
        return int(self._cupy.cuda.get_current_stream().ptr)

    def copy(self, dst: int, src: int, nbytes: int, kind: str, stream: int | None = None) -> None:
        """Copy ``nbytes`` on ``stream`` (None: the current one); ``kind`` is ``h2d``, ``d2h``
        or ``d2d`` (device to device, also into another process's mapped allocation: a copy
        engine moves it over the GPUs' link)."""
        if nbytes > 0:
            stream = self.stream() if stream is None else stream
            try:
                self._memcpy_async(dst, src, int(nbytes), self._kind[kind], stream)
            except Exception as exc:  # name the copy: a failure here is a bug to report
                raise DeviceError(
                    f"{kind} copy of {int(nbytes)} bytes from {src:#x} to {dst:#x} failed: {exc}"
                ) from exc

    def synchronize(self, stream: int | None = None) -> None:
        """Wait for ``stream`` (None: the current one; before MPI reads or writes device or
        pinned memory)."""
        if stream is None:
            self._cupy.cuda.get_current_stream().synchronize()
        else:
            self._cupy.cuda.runtime.streamSynchronize(stream)

    def allocation(self, nbytes: int, what: str) -> Any:
        """A device byte array that is a whole allocation of its own (cudaMalloc, not CuPy's
        pool), as CUDA IPC maps whole allocations; ``DeviceError`` naming ``what`` when memory
        runs out. Freed when the array is."""
        cuda = self._cupy.cuda
        try:
            memory = cuda.Memory(int(nbytes))
        except Exception as exc:
            if not out_of_device_memory(exc):
                raise
            raise DeviceError(
                f"out of GPU memory allocating the {what} ({int(nbytes)} bytes): use more GPUs "
                "(ranks), a smaller graph or fewer graphs held at once"
            ) from None
        pointer = cuda.MemoryPointer(memory, 0)
        return self._cupy.ndarray((int(nbytes),), dtype=np.uint8, memptr=pointer)

    def side_stream(self) -> int:
        """Handle of this object's second stream (made once): transfers that may overlap the
        current stream's kernels run there."""
        if self._side is None:
            self._side = self._cupy.cuda.Stream(non_blocking=True)
        return int(self._side.ptr)

    def record(self, stream: int | None = None) -> Any:
        """An event marking the work issued so far on ``stream`` (None: the current stream)."""
        event = self._cupy.cuda.Event(block=False, disable_timing=True)
        self._cupy.cuda.runtime.eventRecord(event.ptr, self.stream() if stream is None else stream)
        return event

    def wait(self, event: Any, stream: int | None = None) -> None:
        """Make ``stream`` (None: the current stream) run later work after ``event``."""
        target = self.stream() if stream is None else stream
        self._cupy.cuda.runtime.streamWaitEvent(target, event.ptr, 0)

    def contiguous(self, array: Any) -> Any:
        return self._cupy.ascontiguousarray(array)

    def ipc_handle(self, array: Any) -> bytes:
        """The CUDA IPC handle of ``array``'s allocation (``array`` must start it)."""
        return bytes(self._cupy.cuda.runtime.ipcGetMemHandle(int(array.data.ptr)))

    def ipc_open(self, handle: bytes) -> int:
        """Map another process's allocation here (peer access enabled on first use)."""
        runtime = self._cupy.cuda.runtime
        return int(runtime.ipcOpenMemHandle(handle, runtime.cudaIpcMemLazyEnablePeerAccess))

    def ipc_close(self, address: int) -> None:
        self._cupy.cuda.runtime.ipcCloseMemHandle(address)

    def to_device(self, array: Any) -> Any:
        return self._cupy.asarray(array)

    def to_host(self, array: Any) -> np.ndarray:
        return self._cupy.asnumpy(array)


class GrowingBuffer:
    """A byte buffer reused across calls and replaced by a larger one when a call needs more.

    ``allocations`` counts the allocations so far (a warmed-up search makes none).
    """

    def __init__(self, allocate: Callable[[int, str], Any], what: str) -> None:
        self._allocate = allocate
        self.what = what
        self.array: Any = None
        self.allocations = 0

    @property
    def capacity(self) -> int:
        return 0 if self.array is None else int(self.array.nbytes)

    def get(self, nbytes: int) -> Any:
        """The first ``nbytes`` bytes of the buffer, growing it first if it is smaller."""
        if self.array is None or nbytes > self.capacity:
            wanted = max(int(nbytes), GROWTH * self.capacity, MIN_BUFFER_BYTES)
            self.array = None  # give the old one back before taking the new one
            self.array = self._allocate(wanted, self.what)
            self.allocations += 1
        return self.array[: int(nbytes)]


class Arrival:
    """``Bins.in_flight`` of received bins whose remote segments move on a side stream."""

    def __init__(self, ops: Any, event: Any) -> None:
        self._ops = ops
        self._event = event

    def wait(self) -> None:
        """Order the current stream's later work after the segments' arrival (no host wait)."""
        self._ops.wait(self._event)


def as_bytes(array: Any) -> Any:
    """A contiguous 1-d array seen as bytes (no copy)."""
    return array.reshape(-1).view(np.uint8)
