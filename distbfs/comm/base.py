"""The one communication interface of distbfs (Merrill et al. 2012, section 6.1: bin exchange).

A ``Communicator`` connects the ranks of one job. The level loop needs ``exchange_bins``
(all-to-all-v of the owner bins made by filter+partition, top-down levels), ``allgather_equal``
(the frontier bitmap of bottom-up levels, direction-optimizing strategy) and ``allreduce``
(termination, direction heuristic and statistics); graph construction and validation also use
``alltoallv`` and ``allgather``; a search from one vertex of a long row, ``broadcast_array``
(the row, from its owner to every rank).
Implementations: one rank (``single``), MPI through mpi4py (``mpi``), and for device arrays NCCL
(``nccl``) or a GPU-aware MPI transport (``mpi_gpu``), both on ``gpu.GPUCommunicator``. Which one
runs is decided in exactly one place, ``distbfs.runtime.get_communicator``.

``map_peer_memory`` maps every rank's device buffer into each rank (GPU communicators, all
ranks on one node: CUDA IPC), for the backend's fused small levels over peer memory.

Invariants: every method is collective (all ranks call it, in the same order); arrays handed in
may be numpy or cupy and come back in the same array module; ``Bins`` segments are ordered by
destination rank going in and by source rank coming out.
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass
class Bins:
    """Items grouped by rank: segment ``r`` is ``[offsets[r], offsets[r + 1])`` of every array.

    ``offsets`` is a host int64 array of length ``size + 1``. ``vertices`` holds global vertex
    ids; ``payloads`` the typed data that travels with each item, one array per field, aligned
    with ``vertices`` (what they mean is the traversal's: a BFS sends the parent of each item
    when predecessors are kept, else nothing; a min-reduction such as SSSP's sends a tentative
    distance and a parent; connected components a label). ``in_flight`` (received device bins
    only): the other ranks' segments may still be moving; its ``wait()`` orders the current
    stream's later work after their arrival (the own segment is in place already). None:
    everything is in place. ``ready`` (device bins about to be sent): an event after which they
    are written; a transport that moves them on a side stream waits for it instead of for
    everything issued so far (the CUDA backend contracts the own bin between writing the bins
    and exchanging them). None: the bins are written in stream order. ``own_contracted`` (device
    bins about to be sent): the backend has labeled the own segment already
    (``contract_local``), so a device exchange need not copy it into the received bins; on
    received bins, that their own segment was left unwritten.
    """

    offsets: np.ndarray
    vertices: Any
    payloads: tuple[Any, ...] = ()
    in_flight: Any | None = None
    ready: Any | None = None
    own_contracted: bool = False

    @property
    def counts(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def arrays(self) -> tuple[Any, ...]:
        """``vertices`` then every payload: what the exchange moves."""
        return (self.vertices, *self.payloads)


class Communicator(ABC):
    """Collective operations among the ranks of one job."""

    kind: str
    rank: int
    size: int

    @abstractmethod
    def alltoallv(self, offsets: np.ndarray, *payloads: Any) -> tuple[np.ndarray, tuple[Any, ...]]:
        """Send segment ``r`` of each payload to rank ``r``.

        Returns ``(received_offsets, received_payloads)``: what came from rank ``s`` is segment
        ``s``. Payloads keep their dtypes and array module.
        """

    def exchange_bins(self, bins: Bins, *, overlap: bool = False) -> Bins:
        """Exchange owner bins (section 6.1): counts first, then vertices and payloads.

        ``overlap``: the caller reads the own segment first and waits for ``in_flight`` before
        the others (device transports may then return before the other segments arrive);
        otherwise every segment is in place (in stream order) on return."""
        offsets, received = self.alltoallv(bins.offsets, *bins.arrays)
        return Bins(offsets, received[0], tuple(received[1:]))

    @abstractmethod
    def allreduce(self, value: Any, op: str = "sum") -> Any:
        """Reduce a Python number or a host numpy array over all ranks (op: sum, max, min)."""

    @abstractmethod
    def allgather_object(self, obj: Any) -> list[Any]:
        """Every rank's ``obj`` (small, picklable), ordered by rank."""

    def hosts(self) -> int:
        """How many hosts the ranks run on (their host names told apart)."""
        return len(set(self.allgather_object(socket.gethostname())))

    @abstractmethod
    def allgather_array(self, array: Any) -> Any:
        """Concatenation of every rank's 1-d array, in rank order (same array module)."""

    def allgather_equal(self, array: Any) -> Any:
        """Every rank's 1-d array, all of one length L, stacked: shape ``(size, L)``, row r from
        rank r (same array module). Moves ``size * L`` items and no counts (the bottom-up
        frontier bitmap). This default goes through ``allgather_array``."""
        return self.allgather_array(array).reshape(self.size, array.shape[0])

    def broadcast_array(self, array: Any, root: int) -> Any:
        """Rank ``root``'s 1-d ``array`` on every rank (same array module). Every rank passes an
        array of the root's length and dtype; the others' contents are not read, and may be
        overwritten with the result. This default goes through ``allgather_array``, the other
        ranks contributing nothing."""
        return self.allgather_array(array if self.rank == root else array[:0])

    @abstractmethod
    def exscan(self, value: int) -> int:
        """Sum of ``value`` over the ranks before this one (0 on rank 0)."""

    @abstractmethod
    def bcast_object(self, obj: Any, root: int = 0) -> Any:
        """``obj`` of rank ``root`` on every rank."""

    @abstractmethod
    def barrier(self) -> None:
        """Wait until every rank arrives."""

    @abstractmethod
    def abort(self, code: int) -> None:
        """End every rank of the job now with exit status ``code`` (never returns)."""

    def map_peer_memory(self, array: Any) -> list[int] | None:
        """Addresses, in this process, of every rank's ``array`` (a device allocation of its
        own, the same size on every rank), by rank; None where ranks cannot reach each other's
        device memory (the default: host communicators, several nodes). Collective."""
        return None

    def unmap_peer_memory(self, addresses: list[int]) -> None:
        """End the mappings of other ranks' memory that ``map_peer_memory`` returned (the
        default maps none)."""
        del addresses
