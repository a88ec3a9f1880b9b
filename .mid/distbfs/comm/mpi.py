"""MPI communicator through mpi4py: bin exchange as MPI_Alltoall (counts) + MPI_Alltoallv (data);
the bottom-up frontier bitmap as one MPI_Allgather of equal chunks.

Device (CuPy) arrays are staged through host memory: the stream is synchronized by the copy
before MPI sees the buffer. GPU runs use ``mpi_gpu.MPIGPUCommunicator`` (CUDA-aware MPI, or pinned
staging buffers) or NCCL instead.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np
from mpi4py import MPI

from .base import Communicator

ABORT_GRACE_SECONDS = 0.25
"""How long a rank that ends the job waits after flushing its output before MPI_Abort: the
launcher (mpiexec, srun) forwards a rank's output as it reads it and drops what is unread when
the abort kills the job (four ranks on a 2-core CI machine lost a rank's traceback so)."""

_OPS = {"sum": MPI.SUM, "max": MPI.MAX, "min": MPI.MIN}


def _to_host(array: Any) -> tuple[np.ndarray, Any]:
    """(host copy or view, array module the caller expects back)."""
    if isinstance(array, np.ndarray):
        return np.ascontiguousarray(array), np
    import cupy  # only reached with device arrays

    return cupy.asnumpy(array), cupy


class MPICommunicator(Communicator):
    """Ranks of an MPI job (``mpirun -n P python -m distbfs``)."""

    kind = "mpi"

    def __init__(self, comm: MPI.Comm | None = None) -> None:
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    def alltoallv(self, offsets: np.ndarray, *payloads: Any) -> tuple[np.ndarray, tuple[Any, ...]]:
        send_counts = np.diff(np.asarray(offsets, dtype=np.int64))
        recv_counts = np.empty(self.size, dtype=np.int64)
        self.comm.Alltoall(send_counts, recv_counts)
        recv_offsets = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum(recv_counts, out=recv_offsets[1:])
        send_displs = np.asarray(offsets[:-1], dtype=np.int64)
        received = []
        for payload in payloads:
            host, xp = _to_host(payload)
            out = np.empty(int(recv_offsets[-1]), dtype=host.dtype)
            self.comm.Alltoallv(
                [host, (send_counts, send_displs)], [out, (recv_counts, recv_offsets[:-1])]
            )
            received.append(out if xp is np else xp.asarray(out))
        return recv_offsets, tuple(received)

    def allreduce(self, value: Any, op: str = "sum") -> Any:
        if isinstance(value, np.ndarray):
            out = np.empty_like(value)
            self.comm.Allreduce(np.ascontiguousarray(value), out, op=_OPS[op])
            return out
        return self.comm.allreduce(value, op=_OPS[op])

    def allgather_object(self, obj: Any) -> list[Any]:
        return self.comm.allgather(obj)

    def allgather_array(self, array: Any) -> Any:
        host, xp = _to_host(array)
        counts = np.array(self.comm.allgather(host.size), dtype=np.int64)
        out = np.empty(int(counts.sum()), dtype=host.dtype)
        displs = np.zeros(self.size, dtype=np.int64)
        np.cumsum(counts[:-1], out=displs[1:])
        self.comm.Allgatherv(host, [out, (counts, displs)])
        return out if xp is np else xp.asarray(out)

    def allgather_equal(self, array: Any) -> Any:
        host, xp = _to_host(array)
        out = np.empty((self.size, host.shape[0]), dtype=host.dtype)
        self.comm.Allgather(host, out)
        return out if xp is np else xp.asarray(out)

    def broadcast_array(self, array: Any, root: int) -> Any:
        host, xp = _to_host(array)
        self.comm.Bcast(host, root=root)
        return host if xp is np else xp.asarray(host)

    def exscan(self, value: int) -> int:
        result = self.comm.exscan(value, op=MPI.SUM)
        return 0 if result is None else result

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        return self.comm.bcast(obj, root=root)

    def barrier(self) -> None:
        self.comm.Barrier()

    def abort(self, code: int) -> None:
        sys.stdout.flush()
        sys.stderr.flush()
        time.sleep(ABORT_GRACE_SECONDS)  # the launcher forwards what was printed, then kills
        self.comm.Abort(code)
