"""Contraction with a min-reduction (delta-stepping) over the array module: the owner keeps, per
vertex, the smallest of its distance and every received one (in a tree pass, where distances
are final: the lexicographically smallest (pass, parent) among the requests equal to its
distance); the vertices that improved are re-examined, those below the current bucket's end
being the next frontier.

Invariant: a vertex's value never increases.
"""

from __future__ import annotations

from typing import Any

from ...comm.base import Bins
from ...graph import DistGraph
from ...partition import local_id
from ..base import PathState
from .ops import min_per_vertex


def contract_min(xp: Any, graph: DistGraph, state: PathState, received: Bins, end: float) -> int:
    """Apply the received requests (lexicographic minimum per owned vertex); the improved
    vertices below ``end`` become the frontier. Returns how many vertices improved."""
    total = int(received.offsets[-1])
    local = local_id(received.vertices[:total].astype(xp.int64), graph.size)
    payloads = tuple(field[:total] for field in received.payloads)
    if graph.size > 1:  # several ranks may have sent the same vertex
        keep = min_per_vertex(xp, local, payloads)
        local = local[keep]
        payloads = tuple(field[keep] for field in payloads)
    distances, current = payloads[0], state.distances[local]
    if state.preds is None:  # the search: a shorter distance
        better = distances < current
    else:  # a tree pass over final distances: a tight edge, the earlier pass, the smaller parent
        passes, parents, known = payloads[1], payloads[2], state.passes[local]
        tie = distances == current
        better = tie & ((passes < known) | ((passes == known) & (parents < state.preds[local])))
    improved = xp.flatnonzero(better)
    local = local[improved]
    state.distances[local] = distances[improved]
    if state.preds is not None:
        state.passes[local] = payloads[1][improved]
        state.preds[local] = payloads[2][improved]
    state.scratch["pending"].append(local)
    state.frontier = local[state.distances[local] < end]
    state.frontier_size = int(state.frontier.shape[0])
    return int(local.shape[0])
