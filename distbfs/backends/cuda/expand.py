"""Expansion on the CUDA backend (Merrill et al. 2012, section 4.1; ``kernels/expand.cu``): the
vertex frontier's adjacency lists gathered into the graph's edge queue by scan+warp+CTA
gathering, with the expanding vertex per item when predecessors are kept; lists longer than
``heavy_degree`` (hubs) are cut into pieces that the whole grid gathers.

The frontier's out-edge count m_f is known exactly before expansion, so the edge queue grows to
it; a frontier with more out-edges than the queue's limit is expanded in strips, equal windows
of its edge sequence (``strip_count``), each filtered before the next overwrites the queue.

A search from one vertex whose row is longer than the fused levels take starts, on several
ranks, with that row on every rank (``source_row``: the owner's columns, the others' receive
buffer; the engine broadcasts it), so that no rank waits for the owner to expand it alone.

Invariants: the strips of a level together hold every edge of the frontier exactly once; the
kernels store nothing past the edge queue's capacity (the level's counters report any
overflow); a whole level's length stays on the device until the level's one read.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...graph import DistGraph
from ...partition import global_id
from ..base import EdgeFrontier, SearchState
from .buffers import (
    CudaGraphResources,
    SearchQueues,
    allocate,
    as_vertices,
    ensure_heavy_pieces,
    fit_edge_queue,
    grow_edge_queue,
    level_of,
    queues_of,
)
from .compressed import column_args
from .counters import COUNTER_DTYPE, LevelCounts, zero_counter
from .host_memory import in_host_memory
from .kernels import Counter
from .launch_policy import LaunchPolicy


class DeviceEdgeFrontier(EdgeFrontier):
    """The edge frontier (or one strip of it) in the preallocated edge queue.

    A whole level's length stays on the device until the level's counters are read (by
    ``contract``); ``size``, ``vertices`` and ``parents`` read them first if that has not
    happened yet. A strip's length is known on the host (``window``: its edges' range in the
    frontier's edge sequence).
    """

    def __init__(  # no dataclass fields of its own
        self,
        counts: LevelCounts,
        window: tuple[int, int] | None = None,
        last: bool = True,
    ) -> None:
        self.counts = counts
        self.window = window
        self.last = last

    @property
    def size(self) -> int:  # type: ignore[override]
        if self.window is not None:
            return self.window[1] - self.window[0]
        return self.counts.value(Counter.EDGES)

    @property
    def vertices(self) -> Any:  # type: ignore[override]
        return self.counts.queues.edge_vertices[: self.size]

    @property
    def parents(self) -> Any | None:  # type: ignore[override]
        parents = self.counts.queues.edge_parents
        return None if parents is None else parents[: self.size]


def strip_count(state: SearchState, need: int) -> int:
    """Strips an expansion of ``need`` edges (m_f) takes: 1 unless they exceed the edge queue's
    limit (lowered first where the device cannot hold the queue: ``fit_edge_queue``); then as
    few equal strips as fit it."""
    queues = queues_of(state)
    fit_edge_queue(queues, need)
    return max(1, -(-need // queues.edge.limit))


def expand(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: SearchState,
    strip: int,
    need: int,
    strips: int,
) -> DeviceEdgeFrontier:
    """Strip ``strip`` of ``strips`` of the frontier's expansion (``need``: m_f, exact) into the
    edge queue. The first strip begins the level's counts; later ones keep them (kept items
    accumulate) and zero only the hub-piece count."""
    queues = queues_of(state)
    size = int(state.frontier_size)
    if not 0 <= strip < strips:
        raise ValueError(f"strip {strip}: this frontier's expansion has {strips} strips")
    window = None
    if strips > 1:  # edges [begin, end) of the frontier's edge sequence
        width = -(-need // strips)
        window = (strip * width, min(need, (strip + 1) * width))
    length = need if window is None else window[1] - window[0]
    grow_edge_queue(queues, length)
    if strip == 0:
        counts = queues.begin_level(edge_bound=min(queues.edge_capacity, length))
    else:  # the level's counts go on (kept items accumulate); this strip's hub pieces
        counts = level_of(queues)
        counts.edge_bound = length
        zero_counter(queues, Counter.HEAVY)
    if size > 0 and length > 0:
        _launch(policy, graph, state, queues, window, strip == 0, length)
    return DeviceEdgeFrontier(counts, window, last=strip == strips - 1)


def _launch(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: SearchState,
    queues: SearchQueues,
    window: tuple[int, int] | None,
    first: bool,
    length: int,
) -> None:
    """The expand kernel over the frontier (``window``: the strip's edges, None: all; ``first``:
    the level's first strip), then, if the strip has lists for grid gathering (more than
    ``heavy_degree`` edges, or ``spread_degree`` in a frontier of at most ``spread_frontier``
    vertices), their pieces, over the whole grid."""
    size = int(state.frontier_size)
    frontier = as_vertices(state.vertex_frontier, queues)
    threads = policy.block_threads
    grid = queues.grid(size, threads)
    if window is not None and first:  # the level's list ends, for every strip
        scan_frontier_ends(policy, queues, frontier, size, graph)
    ends = None if window is None else queues.frontier_ends
    spread = size <= policy.spread_frontier
    piece_above = min(policy.spread_degree, policy.heavy_degree) if spread else policy.heavy_degree
    hubs = length > piece_above and ensure_heavy_pieces(queues, policy.spread_frontier) > 0
    heavy = (
        (queues.piece_vertices, queues.heavy_columns, queues.heavy_slots)
        if hubs
        else (None, None, None)
    )
    edge_queue = (queues.edge_vertices, queues.edge_parents, np.int64(queues.edge_capacity))
    graph_args = (graph.row_offsets, *column_args(graph))
    where = (np.int32(graph.rank), np.int32(graph.size))
    begin, end = (0, 0) if window is None else window
    queues.kernels["expand"](
        (grid,),
        (threads,),
        (
            frontier,
            np.int64(size),
            ends,
            np.int64(begin),
            np.int64(end),
            *graph_args,
            *where,
            *edge_queue,
            *heavy,
            np.int64(queues.heavy_pieces if hubs else 0),
            np.int64(piece_above),
            queues.counters,
        ),
    )
    if hubs:  # their pieces, over the whole grid (the piece count stays on the device)
        queues.kernels["expand_heavy"](
            (queues.persistent_grid,),
            (threads,),
            (
                *heavy,
                np.int64(queues.heavy_pieces),
                *graph_args,
                *where,
                *edge_queue,
                queues.counters,
            ),
        )


def scan_frontier_ends(
    policy: LaunchPolicy, queues: SearchQueues, frontier: Any, size: int, graph: DistGraph
) -> None:
    """``queues.frontier_ends``: the end of each frontier vertex's list in the frontier's
    edge sequence (an inclusive scan of the list lengths; allocated at the search's first
    striped level, and again for a longer frontier)."""
    if queues.frontier_ends is None or queues.frontier_ends.shape[0] < size:
        length = max(size, queues.frontier.shape[0])  # an inbound level's: up to n
        queues.frontier_ends = allocate(
            graph, "frontier list ends", length, COUNTER_DTYPE, length * 8
        )
    ends = queues.frontier_ends[:size]
    threads = policy.block_threads
    queues.kernels["frontier_lengths"](
        (queues.grid(size, threads),),
        (threads,),
        (frontier, np.int64(size), graph.row_offsets, ends),
    )
    cupy.cumsum(ends, out=ends)  # CUB's device scan, in place


def long_rows(
    policy: LaunchPolicy, graph: DistGraph, resources: CudaGraphResources, limit: int
) -> dict[int, int] | None:
    """This rank's rows of more than ``limit`` out-edges: global vertex -> out-degree (host
    ints). From the resources' ``long_rows`` when ``limit`` is at least the fused levels' edge
    budget (the hubs, known without a pass), else one pass over the degrees. None for columns
    compressed or in host memory: ``source_row`` hands out plain device columns."""
    columns = graph.column_indices
    if graph.compressed or in_host_memory(columns):
        return None
    if limit >= policy.fused_max_edges:
        known = resources.long_rows.items()
        rows = {row: degree for row, (_, degree) in known if degree > limit}
    else:
        degrees = cupy.diff(graph.row_offsets)
        picked = cupy.flatnonzero(degrees > limit)
        rows = dict(zip(picked.get().tolist(), degrees[picked].get().tolist(), strict=True))
    return {int(global_id(r, graph.rank, graph.size)): int(d) for r, d in rows.items()}


def source_row(graph: DistGraph, state: SearchState, edges: int) -> Any:
    """The out-neighbours (global ids) of the search's one source, ``edges`` of them: on its
    owner a view of the columns (the row's place known from ``long_rows``, else read), on the
    other ranks an uninitialized array of as many ids to receive them."""
    queues = queues_of(state)
    row = queues.source_row
    if row < 0:  # not this rank's
        return cupy.empty(edges, dtype=graph.column_indices.dtype)
    known = queues.resources.long_rows.get(row)
    start = known[0] if known is not None else int(graph.row_offsets[row].get())
    return graph.column_indices[start : start + edges]
