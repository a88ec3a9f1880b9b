"""What the GPU communicators share: the bin exchange of section 6.1 on device buffers.

``GPUCommunicator`` runs the exchange every level needs, whatever moves the bytes: counts first (a
host array of ``size`` int64), then the vertices and every payload (parents when predecessors are
kept: each item travels as a (vertex, parent) pair, the two arrays in one transfer step) into
receive buffers that are allocated once and grown geometrically, so no level allocates once the
largest level has run. The rank's own bin is copied device to device on the current stream and never
goes through the transport. A subclass says how counts and remote segments move
(``NCCLCommunicator``: grouped ncclSend/ncclRecv; ``MPIGPUCommunicator``: CUDA-aware or staged MPI);
object collectives, scans and broadcasts go through the host communicator it wraps (one rank, or
MPI). Where every rank maps every other's memory (the ranks of one node with peer access, CUDA IPC),
``exchange_bins`` skips the transport: each rank copies its segments with copy engines straight into
the other ranks' receive areas (``PeerArea``), then the ranks meet at a host barrier. Two areas take
turns, so the peers' copies of one exchange never land where the previous exchange's views are still
being read (a reply computed from a request, on the device, while the peers already send theirs).
Copy engines take no multiprocessor from the kernels running meanwhile (the own bin's contraction),
which NCCL's copy kernels would wait for (benchmarks/RESULTS.md, "peer copies").

Invariants: every device operation is issued on CuPy's current stream, the stream the backend's
kernels run on, except a transport's remote moves, which may run on a side stream ordered after the
current stream's work so far (``Bins.in_flight`` says when they are done: the reader waits for it on
the device), so no level needs a host synchronization besides the ones the counts require (peer
copies: the side stream's, while the own bin's contraction runs); ``exchange_bins`` returns views of
the receive buffers, valid until the next ``exchange_bins`` returns (work on them issued before it
is done reading before anything is written there again); ``alltoallv`` and ``allgather_array``
return fresh arrays. ``path`` records which transport each operation took, ``stats`` counts the bin
exchanges and the bytes that crossed ranks in them and in ``allgather_equal``.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import DeviceError
from .base import Bins, Communicator
from .device_ops import GROWTH, MIN_BUFFER_BYTES, Arrival, CupyOps, GrowingBuffer, Plan, as_bytes


@dataclass
class PeerArea:
    """The receive area of ``exchange_bins`` through peer copies: one allocation per rank, of
    one size on every rank, mapped into every other rank (``addresses[r]``: rank r's area as
    seen here; ``opened``: the mappings this rank made)."""

    array: Any
    addresses: list[int]
    opened: list[int]

    @property
    def nbytes(self) -> int:
        return int(self.array.nbytes)


class GPUCommunicator(Communicator):
    """A communicator for device arrays that wraps a host communicator (one rank, or MPI).

    Parameters
    ----------
    host : Communicator
        Carries everything that is not on a device (object collectives, scans, host arrays) and
        the small host data of the exchange where the subclass says so.
    ops : CupyOps, optional
        Device operations (default: CuPy's).
    peer_copies : bool, default True
        Move the bins of ``exchange_bins`` with copy engines straight into the other ranks'
        receive areas when every rank can map every other's memory (ranks of one node with
        peer access: ``map_peer_memory``); the transport moves them otherwise.
    """

    kind = "gpu"

    def __init__(self, host: Communicator, ops: Any = None, *, peer_copies: bool = True) -> None:
        self.host = host
        self.rank = host.rank
        self.size = host.size
        self.ops = CupyOps() if ops is None else ops
        self.peer_copies = peer_copies
        self._areas: list[PeerArea | None] = [None, None]  # taking turns, one per exchange
        self._mapped = True  # False: the ranks cannot map each other's memory
        self._turn = 0  # the area the next exchange through peers writes
        self.path: dict[str, str] = {}
        self.stats: dict[str, int] = {"exchanges": 0, "bytes_sent": 0, "bytes_received": 0}
        self._arrival: Any = None  # the last side-stream move's event (``_after_moves``)
        self._receive: list[GrowingBuffer] = []  # per position: vertices, then payloads

    # -- what a transport provides ----------------------------------------------------------

    @property
    @abstractmethod
    def transport(self) -> str:
        """Name of what moves the bins' bytes (recorded in ``path``)."""

    @abstractmethod
    def _exchange_counts(self, send_counts: np.ndarray) -> np.ndarray:
        """Host int64 counts of what every rank sends to this one (entry ``rank`` included)."""

    @abstractmethod
    def _move(self, plans: list[Plan], ready: Any = None) -> Any:
        """Move every remote segment of every plan (the own segment is already in place), once
        ``ready`` (an event, ``Bins.ready``; None: the current stream's work so far) says the
        sent bytes are written. Returns None when they are in place on the current stream's
        order, or an event (``ops.record``) after which they are: the current stream must
        ``ops.wait`` for it."""

    def _allreduce_device(self, array: Any, op: str) -> Any:
        """All-reduce of a device array (default: through host memory and the host comm)."""
        self.path["allreduce_device"] = f"{self.host.kind}-staged"
        return self.ops.to_device(self.host.allreduce(self.ops.to_host(array), op))

    def _allgather_device(self, array: Any) -> Any:
        """All-gather of a device array (default: through host memory and the host comm)."""
        self.path["allgather_array"] = f"{self.host.kind}-staged"
        return self.ops.to_device(self.host.allgather_array(self.ops.to_host(array)))

    def _broadcast_device(self, array: Any, root: int) -> Any:
        """Broadcast of a device array (default: through host memory and the host comm)."""
        self.path["broadcast_array"] = f"{self.host.kind}-staged"
        return self.ops.to_device(self.host.broadcast_array(self.ops.to_host(array), root))

    # -- the bin exchange -------------------------------------------------------------------

    def exchange_bins(self, bins: Bins, *, overlap: bool = False) -> Bins:
        """Exchange owner bins (section 6.1): counts, then vertices and payloads GPU to GPU.

        The result's arrays are views of receive buffers reused by the next call. With
        ``overlap`` the other ranks' segments may still be moving (``in_flight``).
        """
        if self.size == 1 or not self.ops.is_device(bins.vertices):
            # One rank: the single bin stays where it is (the CUDA backend's one-bin contract
            # recognizes it). Host bins (numpy backend): the host communicator moves them.
            if self.size > 1:
                self.path["exchange"] = self.host.kind
            return bins if self.size == 1 else self.host.exchange_bins(bins)
        if hasattr(bins, "resolve"):  # the CUDA backend's PendingBins: read the length now
            bins = bins.resolve()
        payloads = list(bins.arrays)
        offsets = np.asarray(bins.offsets, dtype=np.int64)
        copy_own = not bins.own_contracted
        if self.peer_copies and self._mapped:
            copied = self._exchange_through_peers(offsets, payloads, bins.ready, copy_own)
            if copied is not None:
                self.path["exchange"] = "cuda-ipc"
                offsets, (vertices, *fields) = copied
                return Bins(offsets, vertices, tuple(fields), own_contracted=bins.own_contracted)
        offsets, received, arrival = self._exchange(
            offsets, payloads, reuse=True, ready=bins.ready, copy_own=copy_own
        )
        self.path["exchange"] = self.transport
        in_flight = None
        if arrival is not None and overlap:
            in_flight = Arrival(self.ops, arrival)
        elif arrival is not None:
            self.ops.wait(arrival)
        fields = tuple(received[1:])
        return Bins(offsets, received[0], fields, in_flight, own_contracted=bins.own_contracted)

    def alltoallv(self, offsets: np.ndarray, *payloads: Any) -> tuple[np.ndarray, tuple[Any, ...]]:
        """Send segment ``r`` of each payload to rank ``r`` (device payloads GPU to GPU).

        Host payloads go through the host communicator; a mix is moved on the device and the
        host ones come back as host arrays.
        """
        offsets = np.asarray(offsets, dtype=np.int64)
        on_device = [self.ops.is_device(p) for p in payloads]
        if not any(on_device):
            self.path["alltoallv"] = self.host.kind
            return self.host.alltoallv(offsets, *payloads)
        moved = [
            p if dev else self.ops.to_device(p) for p, dev in zip(payloads, on_device, strict=True)
        ]
        recv_offsets, received, arrival = self._exchange(offsets, moved, reuse=False)
        if arrival is not None:
            self.ops.wait(arrival)
        self.path["alltoallv"] = self.transport
        out = [
            r if dev else self.ops.to_host(r) for r, dev in zip(received, on_device, strict=True)
        ]
        return recv_offsets, tuple(out)

    def _exchange_through_peers(
        self, offsets: np.ndarray, payloads: list[Any], ready: Any, copy_own: bool
    ) -> tuple[np.ndarray, list[Any]] | None:
        """``exchange_bins`` through peer copies (collective): every rank learns every rank's
        counts (one host all-gather), so each computes where its segments go in the others'
        receive areas; it copies them there with copy engines on the side stream (no
        multiprocessor is taken from the kernels running meanwhile, such as the own bin's
        contraction), waits for its copies and meets the others at a host barrier, after which
        everything sent to it is in its own area. Returns (received offsets, payload views of
        the area), or None when the ranks cannot map each other's memory (decided alike on
        every rank, once; the transport moves the bins then).

        The views stay valid until the next exchange returns: it writes the other area, and
        the work on these views issued before it was done before this rank's copies of it were
        (the side stream waits for the current one), so before its closing barrier.
        """
        size, me, ops = self.size, self.rank, self.ops
        if offsets.shape != (size + 1,):
            raise ValueError(f"offsets: expected {size + 1} entries, got {offsets.shape}")
        send_counts = np.diff(offsets)
        matrix = self._count_matrix(send_counts)  # [s, r]: items rank s sends rank r
        items = [int(p.dtype.itemsize) for p in payloads]
        most = -(-int(matrix.sum(axis=0).max()) // 8) * 8  # most any rank receives, rounded
        area = self._peer_area(most * sum(items), self._turn)
        if area is None:
            return None
        region = area.nbytes // sum(items) // 8 * 8  # items of each payload an area holds
        starts = np.zeros((size + 1, size), dtype=np.int64)  # [s, r]: s's first slot at r
        np.cumsum(matrix, axis=0, out=starts[1:])
        sent = [ops.contiguous(p) for p in payloads]
        if ready is None or any(c is not p for c, p in zip(sent, payloads, strict=True)):
            ready = ops.record()  # after the contiguous copies too
        side = ops.side_stream()
        ops.wait(ready, side)
        received, base = [], 0
        for payload, item in zip(sent, items, strict=True):
            source = ops.device_ptr(payload)
            for rank in range(size):
                count = int(matrix[me, rank])
                if count == 0 or (rank == me and not copy_own):
                    continue
                target = area.addresses[rank] + base + int(starts[me, rank]) * item
                stream = None if rank == me else side  # the own segment: on the current one
                ops.copy(target, source + int(offsets[rank]) * item, count * item, "d2d", stream)
            total = int(starts[size, me])
            received.append(area.array[base : base + total * item].view(payload.dtype))
            base += region * item
        self._turn = 1 - self._turn
        ops.synchronize(side)  # this rank's segments are in place at every peer
        self.host.barrier()  # and every peer's are in place here
        remote_sent = int(send_counts.sum() - send_counts[me])
        remote_received = int(starts[size, me] - matrix[me, me])
        self.stats["exchanges"] += 1
        self.stats["bytes_sent"] += remote_sent * sum(items)
        self.stats["bytes_received"] += remote_received * sum(items)
        return starts[:, me].copy(), received

    def _count_matrix(self, send_counts: np.ndarray) -> np.ndarray:
        """Every rank's bin lengths, row s from rank s (one host all-gather of ``size`` int64)."""
        send = np.ascontiguousarray(send_counts, dtype=np.int64)
        mpi = getattr(self.host, "comm", None)
        if mpi is not None and hasattr(mpi, "Allgather"):
            matrix = np.empty((self.size, self.size), dtype=np.int64)
            mpi.Allgather(send, matrix)
            return matrix
        rows = self.host.allgather_object(send.tolist())
        return np.array(rows, dtype=np.int64).reshape(self.size, self.size)

    def _peer_area(self, nbytes: int, turn: int) -> PeerArea | None:
        """Receive area ``turn`` (0 or 1), grown to ``nbytes`` if smaller (collective: every
        rank asks for the same size, so all grow together); None, from then on, when the ranks
        cannot map each other's memory (several hosts, no peer access, or no memory for the
        area)."""
        if not self._mapped:
            return None
        area = self._areas[turn]
        if area is not None and nbytes <= area.nbytes:
            return area
        wanted = max(int(nbytes), MIN_BUFFER_BYTES)
        if area is not None:
            wanted = max(wanted, GROWTH * area.nbytes)
            for address in area.opened:
                self.ops.ipc_close(address)
            self.host.barrier()  # no rank maps the old area any more: it can go
            self._areas[turn] = area = None
        try:
            array = self.ops.allocation(wanted, "bin exchange receive area")
        except DeviceError:  # no room: the transport's buffers grow with the need instead
            array = None
        addresses = self.map_peer_memory(array)  # None on every rank if on any
        if addresses is None:
            self._mapped = False
            for other in self._areas:  # the other turn's, mapped before
                for address in other.opened if other is not None else ():
                    self.ops.ipc_close(address)
            self._areas = [None, None]
            return None
        opened = [address for rank, address in enumerate(addresses) if rank != self.rank]
        self._areas[turn] = area = PeerArea(array, addresses, opened)
        return area

    def _receive_buffer(self, position: int) -> GrowingBuffer:
        """The reused receive buffer of ``exchange_bins`` for array ``position`` (0: vertices,
        then the payloads), made on first use."""
        while len(self._receive) <= position:
            what = "vertices" if not self._receive else f"payload {len(self._receive)}"
            self._receive.append(GrowingBuffer(self.ops.empty, f"bin exchange receive ({what})"))
        return self._receive[position]

    def _after_moves(self) -> None:
        """Order the current stream after the last side-stream move, before anything else
        goes through the transport: NCCL deadlocks if its operations on one communicator run
        in different orders on different ranks (idempotent; no host wait)."""
        if self._arrival is not None:
            self.ops.wait(self._arrival)

    def _exchange(
        self,
        offsets: np.ndarray,
        payloads: list[Any],
        *,
        reuse: bool,
        ready: Any = None,
        copy_own: bool = True,
    ) -> tuple[np.ndarray, list[Any], Any]:
        """Counts, then every payload; the own segment device to device unless ``copy_own`` is
        False (its place in the received payloads is then left unwritten) (collective). Returns
        the offsets and payloads received, and ``_move``'s arrival event (or None)."""
        self._after_moves()
        if offsets.shape != (self.size + 1,):
            raise ValueError(f"offsets: expected {self.size + 1} entries, got {offsets.shape}")
        send_counts = np.diff(offsets)
        recv_counts = np.asarray(self._exchange_counts(send_counts), dtype=np.int64)
        recv_offsets = np.zeros(self.size + 1, dtype=np.int64)
        np.cumsum(recv_counts, out=recv_offsets[1:])
        total = int(recv_offsets[-1])
        me = self.rank
        plans: list[Plan] = []
        received = []
        for i, payload in enumerate(payloads):
            payload = self.ops.contiguous(payload)
            dtype = payload.dtype
            item = dtype.itemsize
            if reuse:
                out_bytes = self._receive_buffer(i).get(total * item)
            else:
                out_bytes = self.ops.empty(total * item, "alltoallv receive buffer")
            received.append(out_bytes.view(dtype))
            send_bytes = as_bytes(payload)
            plan = (send_bytes, offsets * item, out_bytes, recv_offsets * item)
            own = int(send_counts[me]) * item if copy_own else 0
            if own:
                self.ops.copy(
                    self.ops.device_ptr(out_bytes) + int(plan[3][me]),
                    self.ops.device_ptr(send_bytes) + int(plan[1][me]),
                    own,
                    "d2d",
                )
            plans.append(plan)
        arrival = self._move(plans, ready) if self.size > 1 else None
        self._arrival = arrival
        remote_sent = int(send_counts.sum() - send_counts[me])
        remote_received = total - int(recv_counts[me])
        item_bytes = sum(p.dtype.itemsize for p in received)
        self.stats["exchanges"] += 1
        self.stats["bytes_sent"] += remote_sent * item_bytes
        self.stats["bytes_received"] += remote_received * item_bytes
        return recv_offsets, received, arrival

    # -- reductions and gathers -------------------------------------------------------------

    def allreduce(self, value: Any, op: str = "sum") -> Any:
        """Reduce a number or an array over all ranks (op: sum, max, min).

        Python numbers and host arrays go through the host communicator: the value is already
        on the host, and a host all-reduce costs a fraction of a copy to the device, a device
        all-reduce and a copy back (benchmarks/RESULTS.md, "host versus device all-reduce"); it
        adds no device synchronization to the level. Device arrays are reduced on the device.
        """
        if self.ops.is_device(value):
            self._after_moves()
            return self._allreduce_device(self.ops.contiguous(value), op)
        self.path["allreduce"] = self.host.kind
        return self.host.allreduce(value, op)

    def allgather_equal(self, array: Any) -> Any:
        """Every rank's 1-d array of one common length L, stacked to shape ``(size, L)`` (the
        bottom-up frontier bitmap): device arrays on the device, no counts exchanged."""
        crossing = int(array.nbytes) * (self.size - 1)
        self.stats["bytes_sent"] += crossing
        self.stats["bytes_received"] += crossing
        if self.ops.is_device(array):
            self._after_moves()
            return self._allgather_equal_device(self.ops.contiguous(array.reshape(-1)))
        self.path["allgather_equal"] = self.host.kind
        gather = getattr(self.host, "allgather_equal", None)
        if gather is not None:
            return gather(array)
        return self.host.allgather_array(array).reshape(self.size, array.shape[0])

    def _allgather_equal_device(self, array: Any) -> Any:
        """All-gather of equal-length device arrays (default: through host memory)."""
        self.path["allgather_equal"] = f"{self.host.kind}-staged"
        host = self.ops.to_host(array)
        gathered = self.host.allgather_array(host).reshape(self.size, host.shape[0])
        return self.ops.to_device(gathered)

    def allgather_array(self, array: Any) -> Any:
        """Concatenation of every rank's 1-d array in rank order (device arrays on the device)."""
        if self.ops.is_device(array):
            self._after_moves()
            return self._allgather_device(self.ops.contiguous(array))
        self.path["allgather_array"] = self.host.kind
        return self.host.allgather_array(array)

    def broadcast_array(self, array: Any, root: int) -> Any:
        """Rank ``root``'s 1-d array on every rank (device arrays on the device)."""
        if self.rank == root:
            self.stats["bytes_sent"] += int(array.nbytes) * (self.size - 1)
        else:
            self.stats["bytes_received"] += int(array.nbytes)
        if self.ops.is_device(array):
            self._after_moves()
            return self._broadcast_device(self.ops.contiguous(array), root)
        self.path["broadcast_array"] = self.host.kind
        return self.host.broadcast_array(array, root)

    def map_peer_memory(self, array: Any) -> list[int] | None:
        """Every rank's ``array`` mapped here through CUDA IPC when all ranks share one host
        and every mapping succeeds on every rank; None otherwise (collective; ``array`` None:
        this rank has none to map, so no rank maps). ``array`` must be an allocation of its
        own (not a pool's slice: a handle maps whole allocations). A peer's allocation must
        outlive the mapping here (``ops.ipc_close`` ends it)."""
        import socket

        handle = None
        try:
            handle = None if array is None else self.ops.ipc_handle(array)
        except Exception:  # no IPC here (a driver or allocation that refuses): no mapping
            handle = None
        everyone = self.host.allgather_object((socket.gethostname(), handle))
        hosts = {host for host, _ in everyone}
        if len(hosts) != 1 or any(h is None for _, h in everyone):
            return None
        addresses: list[int] = []
        opened: list[int] = []
        try:
            for rank, (_, peer) in enumerate(everyone):
                if rank == self.rank:
                    addresses.append(self.ops.device_ptr(array))
                else:
                    opened.append(self.ops.ipc_open(peer))
                    addresses.append(opened[-1])
            mapped = 1
        except Exception:  # peer access refused (GPUs hidden from each other, no P2P path)
            mapped = 0
        if self.host.allreduce(mapped, op="min") != 1:
            for address in opened:
                self.ops.ipc_close(address)
            return None
        self.path["peer_memory"] = "cuda-ipc"
        return addresses

    def unmap_peer_memory(self, addresses: list[int]) -> None:
        for rank, address in enumerate(addresses):
            if rank != self.rank:
                self.ops.ipc_close(address)

    # -- host collectives -------------------------------------------------------------------

    def allgather_object(self, obj: Any) -> list[Any]:
        return self.host.allgather_object(obj)

    def exscan(self, value: int) -> int:
        return self.host.exscan(value)

    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        return self.host.bcast_object(obj, root)

    def barrier(self) -> None:
        self.host.barrier()

    def abort(self, code: int) -> None:
        self.host.abort(code)

    def describe(self) -> dict[str, Any]:
        """Kind, transport, the path each operation took and the exchange statistics."""
        return {
            "kind": self.kind,
            "transport": self.transport,
            "path": dict(self.path),
            "stats": dict(self.stats),
            "receive_buffer_allocations": sum(b.allocations for b in self._receive),
        }
