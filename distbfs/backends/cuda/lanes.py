"""Batched BFS's per-backend stages on the device (``kernels/lanes.cu``; a push on several ranks
over compressed rows: ``distbfs.backends.arrays.lanes``).

State (``DeviceLaneState``): ``visited`` and ``found`` words per owned vertex, and the frontier
words of the last ``HISTORY_LEVELS`` levels in a ring. A vertex's frontier word at level L is
exactly the lanes that first reached it at L, so the ring doubles as the record of distances:
they are written once per run of levels (``flush``, when the ring is full and at the end),
each (lane, vertex) entry once, in coalesced stores, instead of lane by lane as each level
settles. Settling (after a push level; a pull level settles each vertex as it ends its row)
writes every vertex's next-level word and queues the vertices with new lanes, the rows the
next push level expands (after a pull level they are taken from the words). One small count
array per level carries the pairs settled, their out-edges and the queue's length back to the
host.

Gather order. A pull level reads an in-neighbour's frontier word for every edge it scans, at
random: on a Kronecker graph most of a level's memory traffic, as the words (8 bytes a vertex)
outgrow L2. With plain columns in device memory, the pull reads every rank's gathered words from
a copy laid out in descending out-degree order (of every vertex of the graph: the ranks
all-gather their out-degrees once), through in-neighbour columns relabeled once per graph
(``GatherOrder``): the words most often read share cache lines and stay in L2, and a column
is a place in that copy, with no owner and row to work out. Each row's relabeled columns are
sorted, so a row reads its hubs first: a vertex that every lane reaches through a hub stops
after a few words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from ...comm.base import Bins
from ...graph import DistGraph
from ...memory import available_bytes
from ...partition import bin_by_owner
from ..arrays.lanes import WORD, LaneState, lane_words
from . import host_memory
from .buffers import CudaGraphResources, check_graph
from .compressed import column_args, kernel_name
from .kernels import get_kernel
from .launch_policy import LaunchPolicy
from .search import ResidentGrids, resident_grid

HISTORY_LEVELS = 8
"""Levels of frontier words the ring holds (at most the 16 ``flush_lanes`` takes at once): 64
bytes a vertex beside the distances' 256; a Kronecker search writes its bulk in one flush."""
GATHER_ORDER_SHARE = 0.25
"""The gather order is built only while its bytes (a column a stored edge, a position and a
word a vertex) are at most this share of the device's free memory; else pulls read the words
in vertex order."""
GATHER_CHUNK = 1 << 28
"""Columns relabeled at a time (CuPy counts a gather's items in 32 bits)."""
SORT_CHUNK = 1 << 25
"""Relabeled columns sorted at a time (their keys and the sort's temporaries: about 1 GB)."""
FLUSH_VERTICES = 4
"""Vertices a thread of ``flush_lanes`` writes (its ``kFlushVertices``)."""
STATE_BYTES = 8 * (HISTORY_LEVELS + 2 + 2 + 1)
"""Device bytes of one batch's state a vertex: the ring, visited and found, the two queues and
a pull's words in gather order."""
PAIRS, EDGES, QUEUED = range(3)
"""Slots of the per-level count array (``kernels/lanes.cu``)."""


@dataclass
class GatherOrder:
    """Batched BFS's gather order of one in-neighbour graph (module docstring): ``position[s]``
    is the place in descending out-degree order of the vertex at slot s of the gathered words
    (rank r's local vertex k at r * ceil(n / size) + k; on one rank vertex s; a padding slot
    after every vertex), ``columns`` the in-neighbour columns through it (each row sorted when
    the ids are 32-bit)."""

    in_graph: DistGraph
    position: Any
    columns: Any


def gather_order(
    resources: CudaGraphResources, out_offsets: Any, in_graph: DistGraph, comm: Any = None
) -> GatherOrder | None:
    """The gather order of ``in_graph`` (built once, kept in ``resources``), or None where it
    does not apply or fit (module docstring). On several ranks only ``lanes_prepare`` builds
    it, with the job's ``comm`` (collective: the ranks agree that it fits on every one and
    all-gather their out-degrees); a pull level only finds it."""
    order = resources.gather_order
    if order is not None and order.in_graph is in_graph:
        return order
    size = in_graph.size
    if size > 1 and comm is None:
        return None
    columns = in_graph.column_indices
    row_words = -(-in_graph.n // size)  # the gathered words' rows (``frontier_words``)
    slots = size * row_words
    fits = not in_graph.compressed and not host_memory.in_host_memory(columns)
    if fits:
        needed = columns.nbytes + slots * (columns.itemsize + 2 * WORD().itemsize)
        fits = needed <= GATHER_ORDER_SHARE * available_bytes(cupy)
        fits = fits and slots <= np.iinfo(columns.dtype).max
    if size > 1:  # every rank, whatever it found: the same answer on all
        fits = bool(comm.allreduce(int(fits), op="min"))
    if not fits:
        return None
    degrees = cupy.full(row_words, -1, dtype=np.int64)  # a padding slot: after every vertex
    degrees[: in_graph.nlocal] = out_offsets[1:] - out_offsets[:-1]
    if size > 1:
        degrees = comm.allgather_equal(degrees).reshape(-1)
    position = cupy.empty(slots, dtype=columns.dtype)  # by gathered slot, not by vertex id
    position[cupy.argsort(-degrees)] = cupy.arange(slots, dtype=columns.dtype)
    del degrees
    relabeled = cupy.empty_like(columns)
    for start in range(0, columns.shape[0], GATHER_CHUNK):
        stop = start + GATHER_CHUNK
        ids = columns[start:stop]
        slot = ids if size == 1 else (ids % size) * row_words + ids // size
        relabeled[start:stop] = position[slot]
    if columns.dtype == np.int32:  # a row's key: (row, column) in 64 bits
        _sort_rows(in_graph.row_offsets, relabeled)
    resources.gather_order = GatherOrder(in_graph, position, relabeled)
    return resources.gather_order


def _sort_rows(offsets: Any, columns: Any) -> None:
    """Sort each row of int32 ``columns`` in place (rows of about ``SORT_CHUNK`` edges at a
    time, as (row, column) keys)."""
    n, first = offsets.shape[0] - 1, 0
    while first < n:
        begin = int(offsets[first])
        last = int(cupy.searchsorted(offsets, begin + SORT_CHUNK, side="right")) - 1
        last = min(n, max(first + 1, last))
        end = int(offsets[last])
        if end > begin:
            slots = cupy.arange(begin, end, dtype=np.int64)
            rows = cupy.searchsorted(offsets[first : last + 1], slots, side="right") - 1
            keys = (rows << 32) | columns[begin:end].astype(np.int64)
            keys.sort()
            columns[begin:end] = (keys & 0xFFFFFFFF).astype(np.int32)
        first = last


@dataclass
class DeviceLaneState(LaneState):
    """``LaneState`` on the device (module docstring): ``ring`` (levels held, owned vertices)
    with the frontier of ``level`` at row ``level % levels held`` (``frontier`` is that row);
    ``queues[0][:queued]`` the frontier's vertices (not after a pull level, which queues
    none), ``queues[1]`` the next frontier's as a push level settles; ``counts`` the
    level's counts; ``unflushed`` the first level whose distances are not written yet;
    ``settled``: the level's pull settled its vertices; ``out_offsets``: the row offsets of
    the out-edges (a pull level counts its new frontier's out-edges)."""

    ring: Any = None
    queues: tuple[Any, Any] = (None, None)
    queued: int = 0
    counts: Any = None
    level: int = 0
    unflushed: int = 0
    settled: bool = False
    out_offsets: Any = None


def _launch(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    graph: DistGraph,
    name: str,
    items: int,
    args: tuple[Any, ...],
) -> None:
    """Kernel ``name`` of ``kernels/lanes.cu`` over ``items`` (grid-stride, as many blocks as
    are resident at once: the levels wait on dependent loads)."""
    if items == 0:
        return
    kernel = get_kernel("lanes", name, policy, 8 * check_graph(graph).itemsize)
    grid = max(1, min(resident_grid(policy, grids, kernel), -(-items // policy.block_threads)))
    kernel((grid,), (policy.block_threads,), args)


def lanes_start(
    policy: LaunchPolicy, graph: DistGraph, sources: np.ndarray, resources: Any
) -> DeviceLaneState:
    """Lane i at ``sources[i]`` (global ids, 1 to 64): visited, level 0's frontier."""
    lanes = int(sources.shape[0])
    local, words = lane_words(np.asarray(sources, dtype=np.int64), graph)
    n = graph.nlocal
    ring = cupy.empty((HISTORY_LEVELS, n), dtype=WORD)
    ring[0].fill(0)
    ring[0][cupy.asarray(local)] = cupy.asarray(words)
    queues = (cupy.empty(n, dtype=np.int64), cupy.empty(n, dtype=np.int64))
    queues[0][: local.shape[0]] = cupy.asarray(local)
    offsets, rows = graph.row_offsets, cupy.asarray(local)
    edges = int((offsets[rows + 1] - offsets[rows]).sum()) if local.shape[0] else 0
    return DeviceLaneState(
        lanes=lanes,
        all_lanes=(1 << lanes) - 1,
        visited=ring[0].copy(),
        frontier=ring[0],
        found=cupy.zeros(n, dtype=WORD),
        distances=cupy.empty((lanes, n), dtype=np.int32),  # every entry written by flush
        frontier_edges=edges,
        resources=resources,
        ring=ring,
        queues=queues,
        queued=int(local.shape[0]),
        counts=cupy.zeros(3, dtype=np.uint64),
        out_offsets=offsets,
    )


def _next_frontier(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: DeviceLaneState
) -> Any:
    """Start a level: the ring row its found lanes go to (its distances flushed first when
    the ring is full) and zero counts. Settling writes every vertex's word of the row."""
    held = state.ring.shape[0]
    if state.level + 1 - state.unflushed >= held:
        flush(policy, grids, graph, state)
    state.counts.fill(0)
    return state.ring[(state.level + 1) % held]


def push_lanes(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: DeviceLaneState
) -> None:
    """One rank's push level: each frontier vertex offers its word to every out-neighbour, a
    thread per edge (``state.frontier_edges`` of them), or for compressed rows per stretch
    between two decode points."""
    rows = _frontier_rows(state)
    offsets = graph.row_offsets
    begin, end = offsets[rows], offsets[rows + 1]
    if graph.compressed:
        point = policy.decode_point_edges
        ends = cupy.cumsum(cupy.where(end > begin, (end - 1) // point - begin // point + 1, 0))
        total = int(ends[-1]) if rows.shape[0] else 0
    else:
        ends, total = cupy.cumsum(end - begin), int(state.frontier_edges)
    args = (rows, ends, np.int64(rows.shape[0]), np.int64(total), offsets, *column_args(graph))
    args += (state.frontier, state.visited, state.found)
    _launch(policy, grids, graph, kernel_name("push_lanes", graph), total, args)
    state.settled = False


def bin_lanes(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: DeviceLaneState
) -> Bins:
    """A push level's items on several ranks (plain rows), a thread per edge: a neighbour this
    rank owns gets the word at once, as ``push_lanes`` offers it; the others' (neighbour,
    word) items are queued and binned by owner, the own bin empty. One launch, one read."""
    rows = _frontier_rows(state)
    offsets = graph.row_offsets
    ends, total = cupy.cumsum(offsets[rows + 1] - offsets[rows]), int(state.frontier_edges)
    vertices = cupy.empty(total, dtype=np.int64)
    words = cupy.empty(total, dtype=WORD)
    queued = cupy.zeros(1, dtype=np.int64)
    args = (rows, ends, np.int64(rows.shape[0]), np.int64(total), offsets, graph.column_indices)
    args += (state.frontier, state.visited, state.found, np.int32(graph.rank))
    args += (np.int32(graph.size), vertices, words, queued)
    _launch(policy, grids, graph, "push_lanes_striped", total, args)
    state.settled = False
    remote = int(queued.get()[0])
    if graph.size == 2:  # every queued item is the other rank's
        bounds = np.array([0, 0 if graph.rank == 0 else remote, remote], dtype=np.int64)
        return Bins(bounds, vertices[:remote], (words[:remote],))
    bounds, vertices, (words,) = bin_by_owner(cupy, vertices[:remote], graph.size, words[:remote])
    return Bins(bounds, vertices, (words,))


def _frontier_rows(state: DeviceLaneState) -> Any:
    """The frontier's vertices (local ids): the queue a push level's settling wrote, or after
    a pull level (which queues none) the vertices with a frontier word."""
    return cupy.flatnonzero(state.frontier) if state.settled else state.queues[0][: state.queued]


def contract_lanes(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    graph: DistGraph,
    state: DeviceLaneState,
    received: Bins,
) -> None:
    """OR every received word into its vertex's ``found`` word."""
    count = int(received.vertices.shape[0])
    vertices = cupy.asarray(received.vertices).astype(cupy.int64, copy=False)
    words = cupy.asarray(received.payloads[0]).astype(WORD, copy=False)
    args = (vertices, words, np.int64(count), np.int32(graph.size), state.found)
    _launch(policy, grids, graph, "contract_lanes", count, args)
    state.settled = False


def pull_lanes(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    in_graph: DistGraph,
    state: DeviceLaneState,
    frontier: Any,
) -> None:
    """Every owned vertex not visited in all lanes ORs its in-neighbours' frontier words and
    settles the new lanes; ``frontier``: every rank's words, shape (size, words per rank)."""
    following = _next_frontier(policy, grids, in_graph, state)
    n = int(state.visited.shape[0])
    order = gather_order(state.resources, state.out_offsets, in_graph)
    columns = column_args(in_graph)
    if order is not None:  # every rank's words in the order the relabeled columns read them
        words = cupy.empty(order.position.shape[0], dtype=state.frontier.dtype)
        words[order.position] = frontier.reshape(-1)
        frontier, columns = words.reshape(1, -1), (order.columns,)
    where = (np.int32(frontier.shape[0]),)
    if in_graph.compressed:  # the row's global id: its head is coded against it
        where += (np.int32(in_graph.rank),)
    args = (
        in_graph.row_offsets,
        *columns,
        frontier,
        np.int64(frontier.shape[1]),
        *where,
        state.visited,
        following,
        state.out_offsets,
        state.counts,
        np.int64(n),
        np.uint64(state.all_lanes),
    )
    _launch(policy, grids, in_graph, kernel_name("pull_lanes", in_graph), n, args)
    state.settled = True


def settle_lanes(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    graph: DistGraph,
    state: DeviceLaneState,
    level: int,
) -> int:
    """End the level: the lanes found become visited and level ``level``'s frontier (after a
    push level here, a pull level settled its vertices already). Returns how many (vertex,
    lane) pairs."""
    if not state.settled:
        following = _next_frontier(policy, grids, graph, state)
        args = (state.found, state.visited, following, graph.row_offsets, state.queues[1])
        args += (state.counts, np.int64(graph.nlocal))
        _launch(policy, grids, graph, "settle_lanes", graph.nlocal, args)
    counts = [int(x) for x in state.counts.get()]
    state.level, state.frontier = level, state.ring[level % state.ring.shape[0]]
    state.queues = state.queues[::-1]
    state.queued = counts[QUEUED]
    state.frontier_edges = counts[EDGES]
    return counts[PAIRS]


def flush(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: DeviceLaneState
) -> None:
    """Write the distances of the levels from ``state.unflushed`` to ``state.level`` from
    the ring (the first flush writes every entry: ``UNREACHED`` where no level holds the
    lane)."""
    levels = state.level + 1 - state.unflushed
    n = int(state.visited.shape[0])
    fill = state.unflushed == 0
    args = (state.ring, np.int32(state.ring.shape[0]), np.int32(state.unflushed), np.int32(levels))
    args += (state.distances, np.int64(n), np.int32(state.lanes), np.int32(fill))
    _launch(policy, grids, graph, "flush_lanes", -(-n // FLUSH_VERTICES), args)
    state.unflushed = state.level + 1


def lanes_distances(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: DeviceLaneState
) -> Any:
    """The (lanes, owned vertices) distances once the batch has ended."""
    if state.unflushed <= state.level:
        flush(policy, grids, graph, state)
    return state.distances


def frontier_words(graph: DistGraph, state: LaneState) -> Any:
    """This rank's frontier words padded to ``ceil(n / size)`` (what a pull level gathers)."""
    width = -(-graph.n // graph.size)
    if width == graph.nlocal:
        return state.frontier
    words = cupy.zeros(width, dtype=WORD)
    words[: graph.nlocal] = state.frontier
    return words
