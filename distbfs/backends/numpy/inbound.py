"""The frontier of an inbound level on the host (``distbfs.traversals.bfs.inbound_level``): the
all-gathered frontier bitmaps as the global ids of every rank's frontier vertices whose inbound
rows here are not empty, ascending, which the level then expands through this rank's inbound
rows (one rank's CSR of all n rows).

Invariant: the level's contraction makes the frontier this rank's own (local ids) again.
"""

from __future__ import annotations

import numpy as np

from ...graph import DistGraph
from ..base import Inbound, SearchState
from .bottom_up import unpack_gathered


def inbound_frontier(
    graph: DistGraph, inbound: Inbound, state: SearchState, frontier: np.ndarray
) -> None:
    """Every rank's frontier vertices (the gathered ``frontier``) with inbound edges here
    become the vertex frontier, as global ids: the rows of ``inbound.graph`` to expand."""
    vertices = np.flatnonzero(unpack_gathered(frontier, graph))
    offsets = inbound.graph.row_offsets
    vertices = vertices[offsets[vertices + 1] > offsets[vertices]]
    state.vertex_frontier = vertices
    state.frontier_size = int(vertices.shape[0])
