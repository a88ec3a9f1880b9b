"""Fused small-frontier levels on the CUDA backend (contract-expand, Merrill et al. 2012, sections
5.2 and 5.4; ``kernels/contract_expand.cu``): one persistent cooperative grid runs levels back
to back, one grid barrier per level, while the frontier is small: one launch and one host read
for the whole run.

Three ways in: ``run_small_levels`` (one rank, its CSR); ``CudaBackend.run_replicated_levels``
(several ranks: ``run_small_levels`` on a replica of the whole graph, then ``replica_share``
gives each rank its own vertices' part); and ``run_peer_levels`` (several ranks of one node: a
grid on each GPU, the items and the level barrier going through peer memory, ``PeerMailbox``,
mapped by the communicator over CUDA IPC).

Invariants: a fused run stops before a level whose frontier holds more than ``max_frontier``
vertices or more than ``fused_max_edges`` edges, or once it ran ``max_levels`` levels (a
search's depth limit: the kernels' ``max_levels`` parameter), and leaves the state exactly as
that many two-phase levels would (labels, predecessors, visited mask, frontier in
``queues.frontier``); the cooperative grid never exceeds what is resident at once
(``fused_grid``); peer runs end on the same level on every rank, or with an error on every rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from ...constants import UNLIMITED
from ...errors import DeviceError
from ...graph import DistGraph
from ..base import SearchState
from .buffers import (
    SearchQueues,
    as_vertices,
    check_graph,
    ensure_fused_queues,
    fill_bytes,
    level_of,
    queues_of,
)
from .counters import COUNTER_DTYPE
from .kernels import PEER_HEADER_WORDS, Counter
from .launch_policy import PEER_TIMEOUT_SECONDS, LaunchPolicy

KERNEL_LEVELS_LIMIT = 2**31 - 1
"""The largest ``max_levels`` the fused kernels take (an int): more levels than any run has."""


@dataclass
class PeerMailbox:
    """What one rank's fused peer levels receive: a header of ``PEER_HEADER_WORDS`` int64 per
    sender (flags, counts), then a segment of ``capacity`` (vertex, parent) pairs per sender
    (``kernels/contract_expand.cu``). ``array`` is an allocation of its own, zeroed (a CUDA IPC
    handle maps whole allocations); ``addresses`` (device int64, by rank): every rank's mailbox
    as this process addresses it, once the communicator mapped them; ``epoch``: the last level
    epoch used, advanced alike on every rank."""

    array: Any
    capacity: int
    addresses: Any = None
    epoch: int = 0


def run_small_levels(
    policy: LaunchPolicy,
    grids: dict[int, int],
    graph: DistGraph,
    state: SearchState,
    level: int,
    max_frontier: int,
    *,
    max_levels: int = UNLIMITED,
) -> int:
    """Run BFS levels in one cooperative grid while the frontier is small (one rank only).

    ``level`` is the label of the current frontier's vertices. Levels run until the
    frontier is empty, holds more than ``max_frontier`` vertices, or has more than
    ``LaunchPolicy.fused_max_edges`` edges, or ``max_levels`` levels ran (the last labels
    ``level + max_levels``: a search's depth limit); the state is then as after that many
    two-phase levels (labels, predecessors, bitmask, ``vertex_frontier``, ``frontier_size``).
    One launch and one read of the counters for the whole run, one more at each hand-over
    between one block and the full grid (``grids``: the backend's memo of ``fused_grid``).

    On a sparse graph, frontiers of few edges run in a grid of one block
    (``LaunchPolicy.fused_block_edges``), larger ones in the full grid; a run hands over
    between the two as the frontier grows and shrinks, one launch each way.

    Returns the number of levels run: 0 when the graph is striped over several ranks
    (levels need exchanges), the frontier is empty or too large to start, or
    ``max_levels`` < 1.
    """
    if graph.size != 1:
        return 0
    queues = queues_of(state)
    total = 0
    while total < max_levels:
        size = int(state.frontier_size)
        generation, edges = queues.frontier_edges
        known = generation == queues.generation
        if size == 0 or size > max_frontier or (known and edges > policy.fused_max_edges):
            break  # the grid would stop at once
        launch = (policy, grids, graph, state, queues, level + total, max_frontier)
        one_block = _takes_one_block(policy, graph, size, edges if known else None)
        ran = _launch_small_levels(*launch, max_levels - total, one_block)
        if ran == 0 and one_block:  # more edges than one block takes: the full grid
            ran = _launch_small_levels(*launch, max_levels - total, False)
        total += ran
        if ran == 0:
            break
    return total


def _takes_one_block(policy: LaunchPolicy, graph: DistGraph, size: int, edges: int | None) -> bool:
    """Whether the frontier (``size`` vertices, ``edges`` out-edges when known) runs in a grid
    of one block: a sparse graph's frontier of at most ``fused_block_edges`` edges (unknown:
    counted at the mean degree; the kernel stops at once on more)."""
    sparse = graph.num_local_edges <= policy.fused_block_degree * max(graph.nlocal, 1)
    if not sparse or policy.fused_block_edges == 0:
        return False
    if edges is None:
        edges = size * -(-graph.num_local_edges // max(graph.nlocal, 1))
    return edges <= policy.fused_block_edges


def _launch_small_levels(
    policy: LaunchPolicy,
    grids: dict[int, int],
    graph: DistGraph,
    state: SearchState,
    queues: SearchQueues,
    level: int,
    max_frontier: int,
    max_levels: int,
    one_block: bool,
) -> int:
    """One launch of fused levels from the current frontier: ONE block with the frontiers in
    shared memory (``block_levels_kernel``), which stops before a level of more than
    ``fused_block_edges`` edges, or the full cooperative grid (``contract_expand_kernel``),
    which stops before one of more than ``fused_max_edges`` or (on a sparse graph that takes
    one block) fewer than half of ``fused_block_edges``; returns the levels it ran."""
    size = int(state.frontier_size)
    _enter(state, queues)
    block = policy.fused_block_edges
    if one_block:
        queues.kernels["block_levels"](
            (1,),
            (policy.fused_threads,),
            (
                queues.frontier,
                queues.spare_frontier,
                np.int64(size),
                np.int64(max_frontier),
                _kernel_levels(max_levels),
                np.int64(min(block, policy.fused_max_edges)),
                graph.row_offsets,
                graph.column_indices,
                np.int32(level),
                state.labels,
                state.preds,
                state.visited_mask,
                queues.counters,
            ),
        )
        return _leave(state, queues, level_of(queues).read(int(Counter.BINS)))
    kernel = queues.kernels["contract_expand"]
    smallest = block // 2 if _takes_one_block(policy, graph, 1, 0) else 0
    kernel(
        (fused_grid(policy, grids, kernel),),
        (policy.fused_threads,),
        (
            queues.frontier,
            queues.spare_frontier,
            np.int64(size),
            np.int64(queues.frontier.shape[0]),
            np.int64(max_frontier),
            _kernel_levels(max_levels),
            np.int64(policy.fused_max_edges),
            np.int64(smallest),
            graph.row_offsets,
            graph.column_indices,
            np.int32(level),
            state.labels,
            state.preds,
            state.visited_mask,
            queues.heavy_vertices,
            queues.spare_heavy,
            np.int64(queues.heavy_capacity),
            queues.fused_scratch,
            queues.counters,
        ),
    )
    return _leave(state, queues, level_of(queues).read(int(Counter.BINS)))


def _kernel_levels(max_levels: int) -> np.int32:
    """The fused kernels' ``max_levels`` argument (their sixth, after ``max_frontier``): an
    int, so "no limit" (``UNLIMITED``) becomes the largest one."""
    return np.int32(min(max_levels, KERNEL_LEVELS_LIMIT))


def replica_share(graph: DistGraph, state: SearchState, whole: SearchState) -> None:
    """After fused levels on the replica (``whole``: the search of the whole graph as one
    rank's CSR), this rank's part of the outcome into ``state``: labels and predecessors of
    its vertices (every v with v % size == rank), the visited mask (global ids on both), its
    vertices of the frontier."""
    rank, size = graph.rank, graph.size
    state.labels[:] = whole.labels[rank::size]
    if state.preds is not None:
        state.preds[:] = whole.preds[rank::size]
    state.visited_mask[:] = whole.visited_mask
    queues = queues_of(state)
    state.frontier_size = 0
    if whole.frontier_size:  # (a search that ended fused, as on a mesh, has none)
        frontier = whole.vertex_frontier  # global ids (one rank: local == global)
        mine = frontier[frontier % size == rank] // size
        queues.frontier[: mine.shape[0]] = mine
        state.frontier_size = int(mine.shape[0])
    state.vertex_frontier = queues.frontier[: state.frontier_size]
    queues.advance(0, None)  # n_u, m_u: recounted when asked


def make_peer_mailbox(policy: LaunchPolicy, graph: DistGraph) -> PeerMailbox:
    """This rank's mailbox for ``run_peer_levels`` (zeroed, an allocation of its own):
    ``fused_max_edges`` pairs per sender, since no rank sends a peer more items in a level
    than the whole frontier has edges, and the fused levels stop before more."""
    dtype = check_graph(graph)
    capacity = policy.fused_max_edges
    nbytes = graph.size * (PEER_HEADER_WORDS * COUNTER_DTYPE.itemsize)
    nbytes += graph.size * 2 * capacity * dtype.itemsize
    try:
        memory = cupy.cuda.Memory(nbytes)  # cudaMalloc, not the pool: IPC maps it whole
    except cupy.cuda.memory.OutOfMemoryError:
        raise DeviceError(
            f"out of GPU memory allocating the peer mailbox ({nbytes} bytes) on rank "
            f"{graph.rank}: lower LaunchPolicy.fused_max_edges or turn peer_levels off"
        ) from None
    array = cupy.ndarray((nbytes,), dtype=np.uint8, memptr=cupy.cuda.MemoryPointer(memory, 0))
    fill_bytes(array, 0)
    cupy.cuda.get_current_stream().synchronize()  # zero before any peer can write into it
    return PeerMailbox(array, capacity)


def run_peer_levels(
    policy: LaunchPolicy,
    grids: dict[int, int],
    graph: DistGraph,
    state: SearchState,
    level: int,
    max_frontier: int,
    mailbox: PeerMailbox,
    entry: tuple[int, int],
    *,
    max_levels: int = UNLIMITED,
) -> int:
    """Several ranks of one node: levels in one cooperative grid per GPU while the whole
    frontier is small, exchanging through the peers' mailboxes (collective: every rank,
    the same ``entry``: the current frontier's vertices and out-edges over all ranks, and
    the same ``max_levels``).

    Stops as ``run_small_levels`` does, on the whole frontier (and before a level of more
    edges than a mailbox segment holds, or after ``max_levels`` levels); the state is then
    as after that many striped levels. Returns the levels run, the same on every rank (0:
    ``entry`` is over the limits or ``max_levels`` < 1, nothing ran).
    """
    vertices, edges = entry
    if vertices == 0 or vertices > max_frontier or edges > mailbox.capacity or max_levels < 1:
        return 0
    if edges > policy.fused_max_edges:
        return 0
    queues = queues_of(state)
    size = int(state.frontier_size)
    _enter(state, queues)
    kernel = queues.kernels["contract_expand_peers"]
    kernel(
        (fused_grid(policy, grids, kernel),),
        (policy.fused_threads,),
        (
            queues.frontier,
            queues.spare_frontier,
            np.int64(size),
            np.int64(queues.frontier.shape[0]),
            np.int64(max_frontier),
            _kernel_levels(max_levels),
            np.int64(vertices),
            np.int64(edges),
            graph.row_offsets,
            graph.column_indices,
            np.int32(graph.rank),
            np.int32(graph.size),
            np.int32(level),
            state.labels,
            state.preds,
            state.visited_mask,
            queues.heavy_vertices,
            queues.spare_heavy,
            np.int64(queues.heavy_capacity),
            queues.fused_scratch,
            mailbox.addresses,
            np.int64(mailbox.capacity),
            np.int64(mailbox.epoch),
            np.int64(int(PEER_TIMEOUT_SECONDS * 1e9)),
            queues.counters,
        ),
    )
    host = level_of(queues).read(int(Counter.BINS))
    _check_peers(graph, host)
    levels = _leave(state, queues, host)
    mailbox.epoch += 2 * levels
    return levels


def _check_peers(graph: DistGraph, host: np.ndarray) -> None:
    """Raise if the fused peer kernel reported a failure (``host``: its counters)."""
    failure = int(host[Counter.PEER_FAILURE])
    if failure:
        what = (
            f"a peer rank did not reach a level barrier within {PEER_TIMEOUT_SECONDS:g} s"
            if failure == 1
            else "a mailbox segment overflowed (a bug: the stop rule excludes it)"
        )
        raise DeviceError(f"fused peer levels on rank {graph.rank}: {what}")


def _enter(state: SearchState, queues: SearchQueues) -> None:
    """Before a fused kernel: its queues exist, the frontier is in queue A, counters zeroed."""
    ensure_fused_queues(queues)
    size = int(state.frontier_size)
    frontier = as_vertices(state.vertex_frontier, queues)
    if size and frontier.data.ptr != queues.frontier.data.ptr:  # set from elsewhere
        queues.frontier[:size] = frontier
    queues.begin_level(edge_bound=0)


def _leave(state: SearchState, queues: SearchQueues, host: np.ndarray) -> int:
    """After a fused kernel (``host``: its counters): the state as after the levels it ran
    (the final frontier is in queue B after an odd number); returns that number."""
    levels = int(host[Counter.FUSED_LEVELS])
    if levels % 2:
        queues.frontier, queues.spare_frontier = queues.spare_frontier, queues.frontier
    size = int(host[Counter.FRONTIER])
    state.frontier_size = size
    state.vertex_frontier = queues.frontier[:size]
    queues.advance(int(host[Counter.FUSED_LABELED]), int(host[Counter.FUSED_LABELED_EDGES]))
    queues.frontier_edges = (queues.generation, int(host[Counter.FRONTIER_EDGES]))
    return levels


def fused_grid(policy: LaunchPolicy, grids: dict[int, int], kernel: Any) -> int:
    """Blocks of the fused cooperative grid on the current device (memoized in ``grids`` by
    device id).

    ``fused_blocks_per_sm`` per multiprocessor, or fewer if the occupancy calculator says
    fewer blocks of the compiled kernel are resident at once: a cooperative launch needs
    every block resident, and CuPy would shrink a larger grid with a warning.
    """
    device = cupy.cuda.Device().id
    if device not in grids:
        processors = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
        resident = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, policy.fused_threads, 0
        )
        if resident < 1:
            raise DeviceError(
                f"the fused kernel does not fit a multiprocessor with "
                f"LaunchPolicy.fused_threads={policy.fused_threads}; lower it"
            )
        per_sm = min(policy.fused_blocks_per_sm, resident)
        grids[device] = processors * per_sm
    return grids[device]
