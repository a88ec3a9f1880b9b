"""Contraction (Merrill et al. 2012, section 6.1) on the host: the received items' status
lookup against the owned labels, duplicate culling among items several ranks sent, labeling,
and the next vertex frontier.

Invariant: after ``contract`` every owned vertex is labeled at most once, with its BFS level.
"""

from __future__ import annotations

import numpy as np

from ...comm.base import Bins
from ...constants import UNREACHED
from ...graph import DistGraph
from ...partition import global_id, local_id
from ..base import SearchState
from .search import first_of_each


def contract(graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
    """Label the received vertices not yet labeled with ``level`` (their parents from the
    payload); they become the vertex frontier."""
    local = local_id(received.vertices.astype(np.int64, copy=False), graph.size)
    unlabeled = np.flatnonzero(state.labels[local] == UNREACHED)
    local = local[unlabeled]
    parents = received.payloads[0][unlabeled] if state.preds is not None else None
    if graph.size > 1:  # several ranks may have sent the same vertex
        keep = first_of_each(local, state.scratch["contract_slot"])
        local = local[keep]
        parents = None if parents is None else parents[keep]
        state.visited_mask[global_id(local, graph.rank, graph.size)] = True
    state.labels[local] = level
    if state.preds is not None:
        state.preds[local] = parents
    state.vertex_frontier = local
    state.frontier_size = int(local.shape[0])
