"""Delivered shares (``kernels/share.cu``): a small graph's search on several GPUs of one node run
by one rank on its copy of the whole graph, every other rank's labels and parents written into
that rank's share buffer through CUDA IPC, the buffers mapped once per graph
(``GraphResources.replica_shares``). Every rank searching its copy whole waits for the slowest
GPU (2-7% apart on one machine: benchmarks/RESULTS.md, "road network, 2 GPUs"); one searcher
costs its search and one copy kernel.

Invariants: a rank's share buffer is an allocation of its own (IPC maps whole allocations),
zeroed before any peer maps it; delivery e is written only once every peer took e - 1, so no
buffer is overwritten while it is read; a rank takes its share into new arrays, so a result
outlives the next search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from ...constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE
from ...errors import DeviceError
from ...graph import DistGraph
from ..base import SearchState
from .buffers import allocate, fill_bytes
from .counters import COUNTER_DTYPE
from .host_memory import host_empty, host_view
from .kernels import SHARE_HEADER_WORDS
from .launch_policy import PEER_TIMEOUT_SECONDS, LaunchPolicy
from .search import persistent_grid

SHARE_MAX_VERTICES = 1 << 20
"""Largest replicated graph whose searches one rank runs for every rank: up to here its copy
of another rank's part (12 bytes a vertex, 12 MB) costs tens of microseconds, against the
slowest GPU's search on every copy; past it every rank searches its copy (the 4096^2 grid:
100 MB a peer, its delivered searches 0.5 ms slower than every rank's, of 24 ms:
benchmarks/RESULTS.md, "road network, 2 GPUs")."""

_FAILED = 0
"""The word of a share's status (mapped host memory, written by the kernels) that says a wait
timed out."""


@dataclass
class ReplicaShares:
    """This rank's share buffer (``array``: the header, then ``capacity`` labels and as many
    parents), the status its kernels leave in mapped host memory, every rank's buffer as
    mapped here (``addresses``, an int64 device array, set once mapped) and the deliveries
    made or taken so far (``epoch``)."""

    array: Any
    capacity: int
    status: Any
    addresses: Any = None
    epoch: int = 0


def share_bytes(capacity: int) -> int:
    """Bytes of a share buffer of ``capacity`` vertices: the header, the labels (rounded up to
    whole parents), the parents."""
    label_bytes = capacity * np.dtype(DISTANCE_DTYPE).itemsize
    pred_size = np.dtype(PREDECESSOR_DTYPE).itemsize
    label_bytes = -(-label_bytes // pred_size) * pred_size
    header = SHARE_HEADER_WORDS * COUNTER_DTYPE.itemsize
    return header + label_bytes + capacity * pred_size


def make_shares(graph: DistGraph) -> ReplicaShares | None:
    """This rank's share buffer for ``graph``'s searches (every rank's holds the most any rank
    owns, so every rank knows every layout), zeroed; None past ``SHARE_MAX_VERTICES`` or where
    the device has no room for it (the ranks then each search their copy whole)."""
    if graph.n > SHARE_MAX_VERTICES:
        return None
    capacity = -(-graph.n // graph.size)
    try:
        memory = cupy.cuda.Memory(share_bytes(capacity))  # cudaMalloc: IPC maps it whole
    except cupy.cuda.memory.OutOfMemoryError:
        return None
    array = cupy.ndarray((memory.size,), np.uint8, cupy.cuda.MemoryPointer(memory, 0))
    fill_bytes(array, 0)
    cupy.cuda.get_current_stream().synchronize()  # zero before any peer can write into it
    status = host_empty(1, COUNTER_DTYPE)
    host_view(status)[:] = 0
    return ReplicaShares(array, capacity, status)


def deliver(
    policy: LaunchPolicy,
    memo: dict[int, int],
    kernels: Any,
    graph: DistGraph,
    labels: Any,
    preds: Any | None,
    shares: ReplicaShares,
) -> None:
    """Write every other rank's labels (and parents, where ``preds``) from this rank's search of
    the whole graph (``labels``, ``preds``: global order) into its share buffer and post the
    delivery (queued: returns at once; collective with ``take``, which the other ranks start
    once told, and whose kernel waits the last microseconds for the post)."""
    _check(graph, shares, "a peer rank did not take the last delivery")
    shares.epoch += 1
    blocks = min(persistent_grid(policy, memo), -(-shares.capacity // policy.block_threads))
    kernels["deliver_shares"](
        (max(1, blocks),),
        (policy.block_threads,),
        (
            labels,
            preds,
            np.int64(graph.n),
            shares.addresses,
            np.int32(graph.rank),
            np.int32(graph.size),
            np.int64(shares.capacity),
            np.int64(shares.epoch),
            np.int64(int(PEER_TIMEOUT_SECONDS * 1e9)),
            shares.status,
        ),
    )


def take(
    policy: LaunchPolicy,
    memo: dict[int, int],
    kernels: Any,
    graph: DistGraph,
    shares: ReplicaShares,
    predecessors: bool,
) -> tuple[Any, Any | None]:
    """This rank's labels and parents (None unless ``predecessors``), local order, from the
    searcher's delivery (queued by the time the searcher says so; collective with
    ``deliver``)."""
    nlocal = graph.nlocal
    nbytes = nlocal * (np.dtype(DISTANCE_DTYPE).itemsize + np.dtype(PREDECESSOR_DTYPE).itemsize)
    labels = allocate(graph, "labels", nlocal, np.dtype(DISTANCE_DTYPE), nbytes)
    preds = None
    if predecessors:
        preds = allocate(graph, "predecessors", nlocal, np.dtype(PREDECESSOR_DTYPE), nbytes)
    shares.epoch += 1
    blocks = min(persistent_grid(policy, memo), -(-nlocal // policy.block_threads))
    kernels["take_share"](
        (max(1, blocks),),
        (policy.block_threads,),
        (
            shares.array,
            np.int64(shares.capacity),
            np.int64(nlocal),
            labels,
            preds,
            np.int64(shares.epoch),
            np.int64(int(PEER_TIMEOUT_SECONDS * 1e9)),
            shares.status,
        ),
    )
    cupy.cuda.get_current_stream().synchronize()
    _check(graph, shares, "the searching rank did not deliver this rank's share")
    return labels, preds


def _check(graph: DistGraph, shares: ReplicaShares, what: str) -> None:
    """Raise if a share kernel of ``shares`` timed out waiting for a peer."""
    if host_view(shares.status)[_FAILED]:
        raise DeviceError(f"rank {graph.rank}: {what} within {PEER_TIMEOUT_SECONDS:g} s")


class ReplicaShareStages:
    """The delivered-share stages of the ``Backend`` protocol (``make_replica_shares``,
    ``deliver_shares``, ``take_share``), mixed into ``CudaBackend``: its launch policy and
    grid memo."""

    policy: LaunchPolicy
    _persistent: dict[int, int]

    def make_replica_shares(self, graph: DistGraph, resources: Any) -> ReplicaShares | None:
        shares = make_shares(graph)
        if shares is not None:
            resources.kernels.built("take_share")  # the module builds behind the first search
        return shares

    def deliver_shares(
        self, graph: DistGraph, resources: Any, state: SearchState, shares: Any
    ) -> None:
        kernels, labels, preds = resources.kernels, state.labels, state.preds
        deliver(self.policy, self._persistent, kernels, graph, labels, preds, shares)

    def take_share(
        self, graph: DistGraph, resources: Any, shares: Any, predecessors: bool
    ) -> tuple[Any, Any | None]:
        return take(self.policy, self._persistent, resources.kernels, graph, shares, predecessors)
