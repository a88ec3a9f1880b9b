"""An inbound level on the host (``distbfs.traversals.bfs.inbound_level``): the all-gathered
frontier bitmaps as the global ids of every rank's frontier vertices whose inbound rows here are
not empty, expanded through those rows (one rank's CSR of all n rows), filtered against the
visited mask and contracted, all by the stages of a top-down level on one bin: every head is
this rank's own, so no bin travels.

Invariant: the contraction makes the frontier this rank's own (local ids) again.
"""

from __future__ import annotations

import numpy as np

from ...graph import DistGraph
from ..base import SearchState
from .bottom_up import unpack_gathered
from .contract import contract
from .expand import expand
from .filter_partition import filter_partition


def inbound_level(
    graph: DistGraph, inbound: DistGraph, state: SearchState, frontier: np.ndarray, level: int
) -> tuple[int, int]:
    """Expand the gathered ``frontier`` through the ``inbound`` rows and label the heads not
    yet labeled with ``level``; returns (edges expanded, vertices labeled)."""
    vertices = np.flatnonzero(unpack_gathered(frontier, graph))
    offsets = inbound.row_offsets
    state.vertex_frontier = vertices[offsets[vertices + 1] > offsets[vertices]]
    state.frontier_size = int(state.vertex_frontier.shape[0])
    edges = expand(inbound, state)
    kept = filter_partition(state, edges, 1)
    contract(graph, state, kept, level)
    return edges.size, state.frontier_size
