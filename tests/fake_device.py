"""Host stand-ins for CuPy's device operations and for ``cupy.cuda.nccl``, so the GPU
communicators' logic (counts, offsets, own-bin copies, buffer reuse, grouped send/recv, padding
of all-gathers, staging) runs and is checked on CPUs under mpiexec, against the MPI communicator.

``DeviceArray`` is host memory that the communicators treat as a device array; ``HostOps`` moves
bytes with ``memmove`` and records every copy; ``FakeNccl`` carries out NCCL calls with MPI on
the raw pointers it is given (grouped sends and receives at ``groupEnd``), and records them.
"""

from __future__ import annotations

import ctypes

import numpy as np
from mpi4py import MPI


class DeviceArray(np.ndarray):
    """A host array that plays a device array (views and slices stay DeviceArrays)."""


def device(array) -> DeviceArray:
    """A "device" copy of ``array``."""
    return np.array(array).view(DeviceArray)


def host_view(pointer: int, nbytes: int) -> np.ndarray:
    """The ``nbytes`` bytes at ``pointer`` as a numpy byte array (no copy)."""
    if nbytes == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.ctypeslib.as_array((ctypes.c_uint8 * nbytes).from_address(pointer))


class HostOps:
    """The operations of ``distbfs.comm.gpu.CupyOps`` on host memory, with a log of copies.

    ``shared`` (an MPI communicator of ranks on one host): ``allocation`` is MPI shared memory
    (collective over it) and the IPC calls map the other ranks' allocations, as CUDA IPC
    maps device memory, so peer copies land in the other processes' memory. Without it there
    is no IPC (``ipc_handle`` raises, as a driver that refuses would).
    """

    def __init__(self, shared: MPI.Comm | None = None) -> None:
        self.copies: list[tuple[str, int]] = []
        self.allocations: list[tuple[str, int]] = []
        self.synchronizations = 0
        self.events = self.waits = 0
        self.shared = shared
        self.windows: list[MPI.Win] = []  # kept open: a test's few allocations
        self.mapped = self.closed = 0

    def is_device(self, array) -> bool:
        return isinstance(array, DeviceArray)

    def empty(self, nbytes: int, what: str) -> DeviceArray:
        self.allocations.append((what, int(nbytes)))
        return np.empty(int(nbytes), dtype=np.uint8).view(DeviceArray)

    def pinned(self, nbytes: int, what: str) -> np.ndarray:
        self.allocations.append((what, int(nbytes)))
        return np.empty(int(nbytes), dtype=np.uint8)

    def device_ptr(self, array) -> int:
        assert isinstance(array, DeviceArray), "a host array was used as a device pointer"
        return int(array.ctypes.data)

    def host_ptr(self, array) -> int:
        assert not isinstance(array, DeviceArray), "a device array was used as a host pointer"
        return int(array.ctypes.data)

    def stream(self) -> int:
        return 0

    def copy(self, dst: int, src: int, nbytes: int, kind: str, stream: int | None = None) -> None:
        assert kind in ("h2d", "d2h", "d2d")
        if nbytes > 0:
            ctypes.memmove(dst, src, int(nbytes))
            self.copies.append((kind, int(nbytes)))

    def synchronize(self, stream: int | None = None) -> None:
        self.synchronizations += 1

    def allocation(self, nbytes: int, what: str) -> DeviceArray:
        if self.shared is None:
            return self.empty(nbytes, what)
        self.allocations.append((what, int(nbytes)))
        window = MPI.Win.Allocate_shared(int(nbytes), 1, comm=self.shared)
        self.windows.append(window)
        buffer, _ = window.Shared_query(self.shared.rank)
        return np.frombuffer(buffer, dtype=np.uint8, count=int(nbytes)).view(DeviceArray)

    def ipc_handle(self, array) -> tuple[int, int]:
        """(window, rank): the handle of the last shared allocation ``array`` starts."""
        if self.shared is None:
            raise RuntimeError("no IPC without shared memory")
        for index, window in enumerate(self.windows):
            buffer, _ = window.Shared_query(self.shared.rank)
            if np.frombuffer(buffer, dtype=np.uint8).ctypes.data == self.device_ptr(array):
                return index, self.shared.rank
        raise ValueError("not an allocation of its own")

    def ipc_open(self, handle: tuple[int, int]) -> int:
        index, rank = handle
        buffer, _ = self.windows[index].Shared_query(rank)
        self.mapped += 1
        return int(np.frombuffer(buffer, dtype=np.uint8).ctypes.data)

    def ipc_close(self, address: int) -> None:
        self.closed += 1

    # Streams and events: host copies and the fake NCCL finish before they return, so every
    # ordering holds already; the calls are counted (waits must follow side-stream moves).
    def side_stream(self) -> int:
        return 1

    def record(self, stream: int | None = None) -> tuple[str, int]:
        self.events += 1
        return ("event", self.events)

    def wait(self, event, stream: int | None = None) -> None:
        assert event[0] == "event"
        self.waits += 1

    def contiguous(self, array):
        if array.flags.c_contiguous:
            return array
        return np.ascontiguousarray(array).view(DeviceArray)

    def to_device(self, array) -> DeviceArray:
        return device(array)

    def to_host(self, array) -> np.ndarray:
        return np.array(array).view(np.ndarray)

    def copied(self, kind: str) -> int:
        """Bytes copied so far with ``kind``."""
        return sum(n for k, n in self.copies if k == kind)


_TYPES = {
    "NCCL_INT8": np.int8,
    "NCCL_UINT8": np.uint8,
    "NCCL_INT32": np.int32,
    "NCCL_UINT32": np.uint32,
    "NCCL_INT64": np.int64,
    "NCCL_UINT64": np.uint64,
    "NCCL_FLOAT16": np.float16,
    "NCCL_FLOAT32": np.float32,
    "NCCL_FLOAT64": np.float64,
}
_OPS = {"NCCL_SUM": MPI.SUM, "NCCL_PROD": MPI.PROD, "NCCL_MAX": MPI.MAX, "NCCL_MIN": MPI.MIN}


class FakeNccl:
    """Module-like stand-in for ``cupy.cuda.nccl`` over an mpi4py communicator."""

    def __init__(self, mpi: MPI.Comm) -> None:
        self.mpi = mpi
        self.available = True
        self._group: list[tuple[str, int, int, int]] | None = None
        self.sent: list[tuple[int, int]] = []  # (peer, bytes) of every send
        self.groups = 0
        self.comms: list[FakeNcclCommunicator] = []
        for code, name in enumerate(_TYPES):
            setattr(self, name, code)
        for code, name in enumerate(_OPS):
            setattr(self, name, code)
        self._dtypes = {code: np.dtype(t) for code, t in enumerate(_TYPES.values())}
        self._ops = dict(enumerate(_OPS.values()))

    def get_unique_id(self) -> bytes:
        return bytes(range(128))

    def groupStart(self) -> None:
        assert self._group is None, "nested NCCL group"
        self._group = []

    def groupEnd(self) -> None:
        group, self._group = self._group, None
        assert group is not None, "groupEnd without groupStart"
        requests = []
        for what, pointer, nbytes, peer in group:
            buffer = [host_view(pointer, nbytes), MPI.BYTE]
            if what == "send":
                requests.append(self.mpi.Isend(buffer, dest=peer, tag=77))
            else:
                requests.append(self.mpi.Irecv(buffer, source=peer, tag=77))
        MPI.Request.Waitall(requests)
        self.groups += 1

    def NcclCommunicator(self, ndev: int, unique_id, rank: int):
        assert unique_id == self.get_unique_id(), "the unique id was not broadcast from rank 0"
        assert ndev == self.mpi.Get_size() and rank == self.mpi.Get_rank()
        comm = FakeNcclCommunicator(self)
        self.comms.append(comm)
        return comm


class FakeNcclCommunicator:
    """Stand-in for ``cupy.cuda.nccl.NcclCommunicator`` (send/recv only inside a group)."""

    def __init__(self, module: FakeNccl) -> None:
        self.module = module
        self.aborted = False

    def _queue(self, what: str, pointer: int, count: int, datatype: int, peer: int) -> None:
        module = self.module
        assert module._group is not None, f"{what} outside ncclGroupStart/End"
        assert peer != module.mpi.Get_rank(), f"{what} to this rank itself through NCCL"
        nbytes = count * module._dtypes[datatype].itemsize
        module._group.append((what, pointer, nbytes, peer))
        if what == "send":
            module.sent.append((peer, nbytes))

    def send(self, sendbuf: int, count: int, datatype: int, peer: int, stream: int) -> None:
        self._queue("send", sendbuf, count, datatype, peer)

    def recv(self, recvbuf: int, count: int, datatype: int, peer: int, stream: int) -> None:
        self._queue("recv", recvbuf, count, datatype, peer)

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream) -> None:
        dtype = self.module._dtypes[datatype]
        send = host_view(sendbuf, count * dtype.itemsize).view(dtype)
        recv = host_view(recvbuf, count * dtype.itemsize).view(dtype)
        self.module.mpi.Allreduce(send.copy(), recv, op=self.module._ops[op])

    def allGather(self, sendbuf, recvbuf, count, datatype, stream) -> None:
        nbytes = count * self.module._dtypes[datatype].itemsize
        send = host_view(sendbuf, nbytes).copy()
        recv = host_view(recvbuf, nbytes * self.module.mpi.Get_size())
        self.module.mpi.Allgather([send, MPI.BYTE], [recv, MPI.BYTE])

    def broadcast(self, sendbuf, recvbuf, count, datatype, root, stream) -> None:
        nbytes = count * self.module._dtypes[datatype].itemsize
        buffer = host_view(recvbuf, nbytes)
        if self.module.mpi.Get_rank() == root:
            buffer[:] = host_view(sendbuf, nbytes)
        self.module.mpi.Bcast([buffer, MPI.BYTE], root=root)

    def abort(self) -> None:
        self.aborted = True
