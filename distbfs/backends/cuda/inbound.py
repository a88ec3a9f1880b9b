"""The frontier of an inbound level on the CUDA backend (``distbfs.traversals.bfs.inbound_level``;
``kernels/inbound.cu``): the all-gathered frontier bitmaps become a queue of the global ids of
every rank's frontier vertices whose inbound rows here are not empty, the rows that the level's
``expand`` then reads, with their inbound out-edges (its m_f) counted by the same kernel.

The queue holds up to n ids; the graph keeps it from one search to the next where it keeps its
queues (``search_queue``). The expansion's hub pieces grow to the inbound rows' own count
(``CudaGraphResources.hub_pieces`` of those rows), which may exceed the graph's.

Invariants: one launch and one read; the frontier's generation is not bumped (the level's
contraction makes this rank's own frontier current again, carrying n_u and m_u on), only its
m_f is that of the inbound rows until then.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph import DistGraph
from ..base import Inbound, SearchState
from .bottom_up import gathered_words
from .buffers import check_graph, ensure_heavy_pieces, queues_of, search_queue, zeroed_tally
from .launch_policy import LaunchPolicy


def inbound_frontier(
    policy: LaunchPolicy, graph: DistGraph, inbound: Inbound, state: SearchState, frontier: Any
) -> None:
    """Every rank's frontier vertices (the gathered ``frontier``, ``(size, bytes)`` uint8 on
    the device) with inbound edges here become the vertex frontier, as global ids: the rows of
    ``inbound.graph`` to expand."""
    queues = queues_of(state)
    rows, resources = inbound.graph, inbound.resources
    if check_graph(rows) != queues.vertex_dtype:
        raise TypeError("the inbound rows must have the graph's column dtype")
    gathered = gathered_words(graph, frontier)
    words = gathered.shape[0] // graph.size
    n, dtype = graph.n, queues.vertex_dtype
    vertices = search_queue(
        queues.resources, graph, "inbound frontier", max(1, n), dtype, n * dtype.itemsize
    )
    tally = zeroed_tally(queues)
    threads = policy.block_threads
    queues.kernels["inbound_frontier"](
        (queues.grid(gathered.shape[0], threads),),
        (threads,),
        (gathered, np.int64(words), np.int32(graph.size), rows.row_offsets, vertices, tally),
    )
    count, edges = (int(x) for x in tally.get())
    ensure_heavy_pieces(queues, policy.spread_frontier, resources.hub_pieces)
    state.vertex_frontier = vertices[:count]
    state.frontier_size = count
    queues.frontier_edges = (queues.generation, edges)
