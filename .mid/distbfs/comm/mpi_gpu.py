"""MPI transport for GPU runs: the bin exchange of section 6.1 with device bins, through MPI.

Used when the backend is cuda and NCCL is not (``--comm mpi``, or ``auto`` without NCCL on every
rank). Counts travel as one MPI_Alltoall of host int64 (they are on the host already). Payloads:

- CUDA-aware MPI (``MPIX_Query_cuda_support()`` is 1, or ``DISTBFS_MPI_CUDA_AWARE=1``): the
  stream is synchronized (MPI must see finished buffers), then one MPI_Alltoallv per payload
  reads and writes the device buffers directly;
- otherwise staged: the remote segments are copied device -> pinned host buffers on the stream,
  the stream is synchronized once, MPI_Alltoallv runs between pinned buffers, and the received
  segments are copied pinned -> device on the stream (no wait: the contract kernels queue behind
  them). Pinned buffers, like the device receive buffers, are reused and grown geometrically.

Either way the rank's own bin is a device-to-device copy and never goes through MPI. Every rank
takes the same path (CUDA-aware only if MPI says so on every rank). The bottom-up frontier bitmap
(``allgather_equal``) is one MPI_Allgather on the same path; other collectives of device arrays
go through host memory (they are not on the level loop's path).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
from mpi4py import MPI

from .base import Communicator
from .device_ops import GrowingBuffer, Plan
from .gpu import GPUCommunicator

CUDA_AWARE_VAR = "DISTBFS_MPI_CUDA_AWARE"
"""Set to 1 or 0 to say whether MPI is CUDA-aware, overriding the library's answer."""

_YES = ("1", "yes", "true", "on")
_NO = ("0", "no", "false", "off")


def _mpi_library_symbol(name: str) -> Callable[[], int] | None:
    """Function ``name`` of the MPI library loaded in this process (None if it has none)."""
    try:
        with open("/proc/self/maps") as maps:
            paths = [line.split()[-1] for line in maps if "/libmpi" in line]
    except OSError:
        return None
    for path in dict.fromkeys(paths):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        function = getattr(library, name, None)
        if function is not None:
            function.restype = ctypes.c_int
            function.argtypes = []
            return function
    return None


def mpi_cuda_aware(environ: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """(whether MPI can take device buffers, why we think so). Call after MPI is initialized."""
    env = os.environ if environ is None else environ
    forced = env.get(CUDA_AWARE_VAR, "").strip().lower()
    if forced in _YES or forced in _NO:
        return forced in _YES, f"{CUDA_AWARE_VAR}={env[CUDA_AWARE_VAR]}"
    query = _mpi_library_symbol("MPIX_Query_cuda_support")
    if query is None:
        return False, "the MPI library has no MPIX_Query_cuda_support"
    answer = int(query())
    return answer == 1, f"MPIX_Query_cuda_support() returned {answer}"


def _segments_counts(offsets: np.ndarray, me: int) -> tuple[np.ndarray, np.ndarray]:
    """(byte counts, byte displacements) for MPI with this rank's own segment left out."""
    counts = np.diff(offsets)
    counts[me] = 0
    return counts, np.ascontiguousarray(offsets[:-1])


class MPIGPUCommunicator(GPUCommunicator):
    """Ranks of a GPU job whose device data moves through MPI (CUDA-aware or staged).

    Parameters
    ----------
    host : MPICommunicator
        The job's MPI communicator (``host.comm`` is the mpi4py communicator).
    cuda_aware : bool, optional
        Whether MPI takes device buffers (default: ``mpi_cuda_aware()``, agreed over ranks).
    ops : CupyOps, optional
        Device operations (default: CuPy's).
    peer_copies : bool, default True
        Bins move by copy engines into the peers' mapped receive areas where every rank can
        map every other's memory (``GPUCommunicator``); MPI moves them otherwise.
    """

    kind = "mpi"

    def __init__(
        self,
        host: Communicator,
        *,
        cuda_aware: bool | None = None,
        ops: Any = None,
        peer_copies: bool = True,
    ):
        mpi = getattr(host, "comm", None)
        if not isinstance(mpi, MPI.Comm):
            raise TypeError(f"host: expected an MPI communicator, got {type(host).__name__}")
        super().__init__(host, ops, peer_copies=peer_copies)
        self._mpi = mpi
        if cuda_aware is None:
            cuda_aware, self.cuda_aware_reason = mpi_cuda_aware()
        else:
            self.cuda_aware_reason = "given"
        self.cuda_aware = all(host.allgather_object(bool(cuda_aware)))
        # Pinned staging buffers per payload position (vertices, parents, ...): (send, receive).
        self._stages: list[tuple[GrowingBuffer, GrowingBuffer]] = []
        self.path["exchange_counts"] = "mpi"

    @property
    def transport(self) -> str:
        return "mpi-cuda-aware" if self.cuda_aware else "mpi-staged"

    def _exchange_counts(self, send_counts: np.ndarray) -> np.ndarray:
        send = np.ascontiguousarray(send_counts, dtype=np.int64)
        received = np.empty(self.size, dtype=np.int64)
        self._mpi.Alltoall(send, received)
        return received

    def _move(self, plans: list[Plan], ready: Any = None) -> None:
        # MPI moves the bytes from the host thread: it waits for the whole current stream (the
        # work issued after ``ready`` too), then the moves are in place in stream order.
        me, ops = self.rank, self.ops
        if self.cuda_aware:
            ops.synchronize()  # MPI reads the bins and writes the receive buffers now
            for send_bytes, send_offsets, recv_bytes, recv_offsets in plans:
                self._mpi.Alltoallv(
                    [send_bytes, _segments_counts(send_offsets, me), MPI.BYTE],
                    [recv_bytes, _segments_counts(recv_offsets, me), MPI.BYTE],
                )
            return
        staged = []
        for i, (send_bytes, send_offsets, _, recv_offsets) in enumerate(plans):
            send_stage, recv_stage = self._stage(i)
            send_host = send_stage.get(int(send_offsets[-1]))
            recv_host = recv_stage.get(int(recv_offsets[-1]))
            for start, end in ((0, send_offsets[me]), (send_offsets[me + 1], send_offsets[-1])):
                ops.copy(
                    ops.host_ptr(send_host) + int(start),
                    ops.device_ptr(send_bytes) + int(start),
                    int(end - start),
                    "d2h",
                )
            staged.append((send_host, recv_host))
        ops.synchronize()  # the staged sends are in host memory
        for (send_host, recv_host), (_, send_offsets, recv_bytes, recv_offsets) in zip(
            staged, plans, strict=True
        ):
            self._mpi.Alltoallv(
                [send_host, _segments_counts(send_offsets, me), MPI.BYTE],
                [recv_host, _segments_counts(recv_offsets, me), MPI.BYTE],
            )
            for start, end in ((0, recv_offsets[me]), (recv_offsets[me + 1], recv_offsets[-1])):
                ops.copy(
                    ops.device_ptr(recv_bytes) + int(start),
                    ops.host_ptr(recv_host) + int(start),
                    int(end - start),
                    "h2d",
                )

    def _allgather_equal_device(self, array: Any) -> Any:
        """The bottom-up frontier bitmap: one MPI_Allgather, of device buffers when MPI is
        CUDA-aware, else staged through pinned buffers (one synchronization, copies on the
        stream)."""
        ops, nbytes = self.ops, int(array.nbytes)
        out_bytes = ops.empty(self.size * nbytes, "all-gather result")
        if nbytes:
            if self.cuda_aware:
                ops.synchronize()
                self._mpi.Allgather([array.view(np.uint8), MPI.BYTE], [out_bytes, MPI.BYTE])
            else:
                send_stage, recv_stage = self._stage(0)
                send_host = send_stage.get(nbytes)
                recv_host = recv_stage.get(self.size * nbytes)
                ops.copy(ops.host_ptr(send_host), ops.device_ptr(array), nbytes, "d2h")
                ops.synchronize()
                self._mpi.Allgather([send_host, MPI.BYTE], [recv_host, MPI.BYTE])
                ops.copy(
                    ops.device_ptr(out_bytes), ops.host_ptr(recv_host), out_bytes.nbytes, "h2d"
                )
        self.path["allgather_equal"] = self.transport
        return out_bytes.view(array.dtype).reshape(self.size, array.size)

    def _stage(self, position: int) -> tuple[GrowingBuffer, GrowingBuffer]:
        """The pinned (send, receive) staging buffers of payload ``position``."""
        while len(self._stages) <= position:
            what = "parents" if len(self._stages) == 1 else f"payload {len(self._stages)}"
            what = "vertices" if not self._stages else what
            self._stages.append(
                (
                    GrowingBuffer(self.ops.pinned, f"pinned send staging buffer ({what})"),
                    GrowingBuffer(self.ops.pinned, f"pinned receive staging buffer ({what})"),
                )
            )
        return self._stages[position]

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["cuda_aware"] = self.cuda_aware
        info["cuda_aware_reason"] = self.cuda_aware_reason
        return info
