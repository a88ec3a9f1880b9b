"""NCCL communicator: the bin exchange of section 6.1 GPU to GPU through ``cupy.cuda.nccl``.

Setup: rank 0 makes the NCCL unique id and the host communicator (MPI) broadcasts it; every rank
then joins one NCCL communicator on the GPU ``distbfs.device.bind_device`` chose for it.

Per level (``exchange_bins``), all on CuPy's current stream (the backend's):

1. counts: the ``size`` int64 bin lengths are on the host already (the receive buffers must be
   sized and the contract stage needs the offsets there), so by default (``counts="host"``) they
   travel through the host communicator: one MPI all-to-all of host memory, no device
   synchronization. With ``counts="nccl"`` they are copied to a small device buffer, one grouped
   ncclSend/ncclRecv (one int64 to and from every other rank) exchanges them, and one small
   device-to-host read brings what arrives back. The host path is the default because it is
   faster where it matters, levels with small frontiers (benchmarks/RESULTS.md, "NCCL
   communicator: bin counts through the host");
2. payloads: one ncclGroupStart/ncclGroupEnd holding, for every other rank, the send of its
   vertex segment (and parent segment: predecessors travel as (vertex, parent) pairs) and the
   receive of its segment, as bytes, into receive buffers that grow geometrically and are
   reused; the rank's own bin is a device-to-device copy and never goes through NCCL. The group
   runs on a side stream that first waits for the bins to be written (their ``ready`` event:
   the CUDA backend has already launched the own bin's contraction, ``contract_local``, which
   the moves need not wait for); the received ``Bins`` carry its arrival event
   (``in_flight``), so the contract stage waits, on the device, only before the others.

The level barrier is this exchange plus the termination all-reduce; nothing else waits for the
device. Reductions of host values (the termination test, the statistics) go through the host
communicator, because the values are already on the host (see ``GPUCommunicator.allreduce``);
device arrays are reduced with ncclAllReduce and gathered with ncclAllGather (``allgather_array``:
lengths from a host all-gather, segments padded to the longest; ``allgather_equal``, the
bottom-up frontier bitmap: one ncclAllGather, no lengths). ``abort`` calls ncclCommAbort and
then the host communicator's abort (MPI_Abort), so no rank is left waiting inside NCCL.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DeviceError
from .base import Communicator
from .device_ops import Plan
from .gpu import GPUCommunicator

COUNTS_TRANSPORTS = ("host", "nccl")
"""How the bin lengths travel: NCCL on device buffers, or the host communicator."""

_NCCL_TYPES = {
    np.dtype(np.int8): "NCCL_INT8",
    np.dtype(np.uint8): "NCCL_UINT8",
    np.dtype(np.int32): "NCCL_INT32",
    np.dtype(np.uint32): "NCCL_UINT32",
    np.dtype(np.int64): "NCCL_INT64",
    np.dtype(np.uint64): "NCCL_UINT64",
    np.dtype(np.float16): "NCCL_FLOAT16",
    np.dtype(np.float32): "NCCL_FLOAT32",
    np.dtype(np.float64): "NCCL_FLOAT64",
}
_NCCL_OPS = {"sum": "NCCL_SUM", "max": "NCCL_MAX", "min": "NCCL_MIN"}


def nccl_module() -> tuple[Any, str]:
    """(``cupy.cuda.nccl`` or None, why it is not usable)."""
    try:
        from cupy.cuda import nccl
    except Exception as exc:  # no CuPy, or CuPy without its NCCL wrapper
        return None, f"cupy.cuda.nccl is not importable ({exc})"
    if not getattr(nccl, "available", True):
        return None, (
            "CuPy finds no NCCL library (install nvidia-nccl-cu12 or nvidia-nccl-cu13, the "
            "distbfs[cuda12] / [cuda13] extras)"
        )
    return nccl, ""


class NCCLCommunicator(GPUCommunicator):
    """Ranks of a multi-GPU job whose device data moves through NCCL.

    Parameters
    ----------
    host : Communicator
        The job's host communicator (MPI; one rank works too): broadcasts the NCCL id and carries
        object collectives, scans, host arrays and host reductions.
    counts : {"host", "nccl"}, default "host"
        How the bin lengths of each exchange travel (see the module docstring).
    ops : CupyOps, optional
        Device operations (default: CuPy's; tests pass host stand-ins).
    nccl : module, optional
        The NCCL wrapper (default ``cupy.cuda.nccl``; tests pass a stand-in).
    peer_copies : bool, default True
        Bins move by copy engines into the peers' mapped receive areas where every rank can
        map every other's memory (``GPUCommunicator``); NCCL moves them otherwise.

    Raises
    ------
    DeviceError
        NCCL could not set up its communicator on this rank (for example two ranks on one GPU).
    """

    kind = "nccl"

    def __init__(
        self,
        host: Communicator,
        *,
        counts: str = "host",
        ops: Any = None,
        nccl: Any = None,
        peer_copies: bool = True,
    ) -> None:
        if counts not in COUNTS_TRANSPORTS:
            raise ValueError(f"counts={counts!r}: choose from {', '.join(COUNTS_TRANSPORTS)}")
        super().__init__(host, ops, peer_copies=peer_copies)
        if nccl is None:
            nccl, why = nccl_module()
            if nccl is None:
                raise DeviceError(f"NCCL is not available: {why}")
        self._lib = nccl
        self.counts_via = counts
        unique_id = host.bcast_object(nccl.get_unique_id() if host.rank == 0 else None)
        try:
            self._nccl = nccl.NcclCommunicator(self.size, unique_id, self.rank)
        except Exception as exc:
            raise DeviceError(
                f"NCCL could not start on rank {self.rank} of {self.size}: {exc} (each rank "
                "needs its own GPU: check the binding with python -m distbfs.device)"
            ) from None
        self._counts_device = self.ops.empty(16 * self.size, "NCCL count buffer")
        self._counts_host = self.ops.pinned(16 * self.size, "NCCL count staging buffer").view(
            np.int64
        )
        self.path["exchange_counts"] = "nccl" if counts == "nccl" else host.kind

    @property
    def transport(self) -> str:
        return "nccl"

    def _datatype(self, dtype: np.dtype) -> int | None:
        name = _NCCL_TYPES.get(np.dtype(dtype))
        return None if name is None else getattr(self._lib, name)

    def _exchange_counts(self, send_counts: np.ndarray) -> np.ndarray:
        if self.counts_via == "host" or self.size == 1:
            return self._host_alltoall(send_counts)
        size, me, ops, lib = self.size, self.rank, self.ops, self._lib
        staged = self._counts_host  # [0, size): sent; [size, 2 size): received
        staged[:size] = send_counts
        device = ops.device_ptr(self._counts_device)
        host = ops.host_ptr(staged)
        ops.copy(device, host, 8 * size, "h2d")
        stream = ops.stream()
        lib.groupStart()
        try:
            for peer in range(size):
                if peer != me:
                    self._nccl.send(device + 8 * peer, 1, lib.NCCL_INT64, peer, stream)
                    self._nccl.recv(device + 8 * (size + peer), 1, lib.NCCL_INT64, peer, stream)
        finally:
            lib.groupEnd()
        ops.copy(host + 8 * size, device + 8 * size, 8 * size, "d2h")
        ops.synchronize()  # the level's one wait for the device inside the exchange
        received = staged[size:].copy()
        received[me] = send_counts[me]
        return received

    def _host_alltoall(self, send_counts: np.ndarray) -> np.ndarray:
        """Counts through the host communicator (one MPI_Alltoall of ``size`` int64)."""
        send = np.ascontiguousarray(send_counts, dtype=np.int64)
        mpi = getattr(self.host, "comm", None)
        if mpi is not None and hasattr(mpi, "Alltoall"):
            received = np.empty(self.size, dtype=np.int64)
            mpi.Alltoall(send, received)
            return received
        _, (received,) = self.host.alltoallv(np.arange(self.size + 1, dtype=np.int64), send)
        return np.asarray(received, dtype=np.int64)

    def _move(self, plans: list[Plan], ready: Any = None) -> Any:
        size, me, ops, lib = self.size, self.rank, self.ops, self._lib
        # On the side stream, once the bins are written: the receiver contracts its own bin
        # meanwhile, and waits for the returned event before it reads the others.
        stream = ops.side_stream()
        ops.wait(ops.record() if ready is None else ready, stream)
        lib.groupStart()
        try:
            for send_bytes, send_offsets, recv_bytes, recv_offsets in plans:
                for peer in range(size):
                    if peer == me:
                        continue
                    nbytes = int(send_offsets[peer + 1] - send_offsets[peer])
                    if nbytes:
                        start = ops.device_ptr(send_bytes) + int(send_offsets[peer])
                        self._nccl.send(start, nbytes, lib.NCCL_UINT8, peer, stream)
                    nbytes = int(recv_offsets[peer + 1] - recv_offsets[peer])
                    if nbytes:
                        start = ops.device_ptr(recv_bytes) + int(recv_offsets[peer])
                        self._nccl.recv(start, nbytes, lib.NCCL_UINT8, peer, stream)
        finally:
            lib.groupEnd()
        return ops.record(stream)

    def _allreduce_device(self, array: Any, op: str) -> Any:
        datatype = self._datatype(array.dtype)
        if op not in _NCCL_OPS:
            raise ValueError(f"op={op!r}: choose from {', '.join(_NCCL_OPS)}")
        if datatype is None:  # e.g. bool: NCCL has no such type
            return super()._allreduce_device(array, op)
        ops = self.ops
        out_bytes = ops.empty(array.nbytes, "all-reduce result")
        if array.size:
            self._nccl.allReduce(
                ops.device_ptr(array),
                ops.device_ptr(out_bytes),
                array.size,
                datatype,
                getattr(self._lib, _NCCL_OPS[op]),
                ops.stream(),
            )
        self.path["allreduce_device"] = "nccl"
        return out_bytes.view(array.dtype).reshape(array.shape)

    def _allgather_device(self, array: Any) -> Any:
        ops = self.ops
        array = array.reshape(-1)
        counts = [int(c) for c in self.host.allgather_object(int(array.size))]
        item = array.dtype.itemsize
        widest, total = max(counts), sum(counts)
        out_bytes = ops.empty(total * item, "all-gather result")
        if widest == 0:
            return out_bytes.view(array.dtype)
        if array.size == widest:
            send = ops.device_ptr(array)
        else:  # NCCL gathers equal lengths: pad this rank's part to the longest
            padded = ops.empty(widest * item, "all-gather send buffer")
            send = ops.device_ptr(padded)
            ops.copy(send, ops.device_ptr(array), array.nbytes, "d2d")
        equal = all(c == widest for c in counts)
        gathered = out_bytes if equal else ops.empty(self.size * widest * item, "all-gather buffer")
        self._nccl.allGather(
            send, ops.device_ptr(gathered), widest * item, self._lib.NCCL_UINT8, ops.stream()
        )
        if not equal:
            position = 0
            for rank, count in enumerate(counts):
                ops.copy(
                    ops.device_ptr(out_bytes) + position,
                    ops.device_ptr(gathered) + rank * widest * item,
                    count * item,
                    "d2d",
                )
                position += count * item
        self.path["allgather_array"] = "nccl"
        return out_bytes.view(array.dtype)

    def _allgather_equal_device(self, array: Any) -> Any:
        ops, item = self.ops, array.dtype.itemsize
        out_bytes = ops.empty(self.size * array.nbytes, "all-gather result")
        if array.size:
            self._nccl.allGather(
                ops.device_ptr(array),
                ops.device_ptr(out_bytes),
                array.size * item,
                self._lib.NCCL_UINT8,
                ops.stream(),
            )
        self.path["allgather_equal"] = "nccl"
        return out_bytes.view(array.dtype).reshape(self.size, array.size)

    def _broadcast_device(self, array: Any, root: int) -> Any:
        datatype = self._datatype(array.dtype)
        if datatype is None or array.size >= 1 << 31:  # NCCL counts in a C int
            return super()._broadcast_device(array, root)
        if array.size:
            pointer = self.ops.device_ptr(array)  # in place: the root's read, the others' written
            self._nccl.broadcast(pointer, pointer, array.size, datatype, root, self.ops.stream())
        self.path["broadcast_array"] = "nccl"
        return array

    def abort(self, code: int) -> None:
        """ncclCommAbort (pending NCCL work is cancelled), then end the job (MPI_Abort)."""
        try:
            self._nccl.abort()
        except Exception:  # already aborted or broken: ending the job is what matters
            pass
        self.host.abort(code)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info["counts"] = self.counts_via
        return info
