"""An inbound level on the CUDA backend (``distbfs.traversals.bfs.inbound_level``;
``kernels/inbound.cu``): the all-gathered frontier bitmaps become the rows to expand (the frontier
vertices whose inbound rows here are not empty, with their lengths; one kernel, one read), CUB's
scan makes the lengths the rows' ends in their edge sequence, and one kernel visits every edge
of those rows, balanced over the grid by that sequence, labeling the heads it reaches first.

No edge queue, no filter pass and no bins: every head is this rank's own, so its label decides
at once (atomicCAS), where a top-down level writes each edge to the edge queue, reads it back to
filter it and bins the survivors for their owners. The rows and their ends (12 bytes a vertex
of the graph) are the graph's kept queues where it keeps them (``search_queue``).

Invariants: the level's counts begin here and are read once at its end, like a contraction's
(``contract.new_frontier``: the labeled vertices, local ids, become the frontier, with their
out-edges m_f).
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...graph import DistGraph
from ..base import SearchState
from .bottom_up import gathered_words
from .buffers import check_graph, queues_of, search_queue, zeroed_tally
from .contract import new_frontier
from .counters import COUNTER_DTYPE
from .kernels import Counter
from .launch_policy import LaunchPolicy


def inbound_level(
    policy: LaunchPolicy,
    graph: DistGraph,
    inbound: DistGraph,
    state: SearchState,
    frontier: Any,
    level: int,
) -> tuple[int, int]:
    """Expand every rank's frontier vertices (the gathered ``frontier``, ``(size, bytes)``
    uint8 on the device) through the ``inbound`` rows and label the heads not yet labeled with
    ``level``; they become the frontier. Returns (edges expanded, vertices labeled)."""
    queues = queues_of(state)
    if check_graph(inbound) != queues.vertex_dtype:
        raise TypeError("the inbound rows must have the graph's column dtype")
    gathered = gathered_words(graph, frontier)
    n, dtype, resources = graph.n, queues.vertex_dtype, queues.resources
    total = n * (dtype.itemsize + COUNTER_DTYPE.itemsize)
    rows = search_queue(resources, graph, "inbound rows", max(1, n), dtype, total)
    ends = search_queue(resources, graph, "inbound row ends", max(1, n), COUNTER_DTYPE, total)
    tally = zeroed_tally(queues)
    threads = policy.block_threads
    queues.kernels["inbound_frontier"](
        (queues.grid(gathered.shape[0], threads),),
        (threads,),
        (
            gathered,
            np.int64(gathered.shape[0] // graph.size),
            np.int32(graph.size),
            inbound.row_offsets,
            rows,
            ends,
            tally,
        ),
    )
    count, edges = (int(x) for x in tally.get())
    counts = queues.begin_level(edge_bound=0)
    if count:
        cupy.cumsum(ends[:count], out=ends[:count])  # CUB's device scan, in place
        queues.kernels["inbound_visit"](
            (queues.grid(edges, policy.tile_items),),  # a tile of edges a block
            (threads,),
            (
                rows,
                ends,
                np.int64(count),
                np.int64(edges),
                inbound.row_offsets,
                inbound.column_indices,
                np.int32(graph.size),
                np.int32(level),
                state.labels,
                state.preds,
                state.visited_mask,
                graph.row_offsets,
                queues.frontier,
                np.int64(queues.frontier.shape[0]),
                queues.counters,
            ),
        )
    host = counts.read(int(Counter.BINS))
    new_frontier(state, queues, host)
    return edges, int(host[Counter.FRONTIER])
