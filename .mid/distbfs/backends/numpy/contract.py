"""Contraction (Merrill et al. 2012, section 6.1) on the host: the received items' status
lookup against the owned labels, duplicate culling among items several ranks sent, labeling,
and the next vertex frontier.

``contract_min`` (shortest paths) keeps per owned vertex the lexicographic minimum of its
(distance, pass, parent) and the received ones (``relax.min_per_vertex`` first reduces what
several ranks sent); the vertices whose distance fell below the bucket's end are the next
frontier.

Invariant: after ``contract`` every owned vertex is labeled at most once, with its BFS level.
"""

from __future__ import annotations

import numpy as np

from ...comm.base import Bins
from ...constants import NO_PATH, UNREACHED
from ...graph import DistGraph
from ...partition import global_id, local_id
from ..base import PathState, SearchState
from .relax import min_per_vertex, records_tree
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


def contract_row(
    graph: DistGraph, state: SearchState, row: np.ndarray, parent: int, level: int
) -> None:
    """Level 0 of a search from ``parent``, whose out-neighbours ``row`` (global ids) every
    rank holds: label the ones this rank owns; they become the frontier. Every rank marks the
    whole row visited (its owners label all of it at this level)."""
    state.visited_mask[row] = True
    local = local_id(row[row % graph.size == graph.rank], graph.size)
    local = local[state.labels[local] == UNREACHED]  # a row holds each vertex once
    state.labels[local] = level
    if state.preds is not None:
        state.preds[local] = parent
    state.vertex_frontier = local
    state.frontier_size = int(local.shape[0])


def contract_min(graph: DistGraph, state: PathState, received: Bins, end: float) -> int:
    """Apply the received requests (lexicographic minimum per owned vertex); the improved
    vertices below ``end`` become the frontier. Returns how many vertices improved."""
    local = local_id(received.vertices.astype(np.int64, copy=False), graph.size)
    payloads = received.payloads
    if graph.size > 1:  # several ranks may have sent the same vertex
        scratch = state.scratch
        best, best_key = scratch["best"], scratch["best_key"]
        keep = min_per_vertex(local, payloads, best, best_key, scratch["slot"])
        scratch["best"][local] = NO_PATH  # untouched elsewhere: reset where items arrived
        local = local[keep]
        payloads = tuple(field[keep] for field in payloads)
    distances, current = payloads[0], state.distances[local]
    shorter = distances < current
    if state.preds is None:  # the search: a shorter distance
        better = shorter
    elif records_tree(state):  # a search that records its tree: or a smaller tail
        better = shorter | ((distances == current) & (payloads[2] < state.preds[local]))
    else:  # a tree pass over final distances: a tight edge, the earlier pass, the smaller parent
        keys = (payloads[1] << 32) | payloads[2]
        known = (state.passes[local] << 32) | state.preds[local]
        better = shorter = (distances == current) & (keys < known)
    improved = np.flatnonzero(better)
    if state.preds is not None:
        state.passes[local[improved]] = payloads[1][improved]
        state.preds[local[improved]] = payloads[2][improved]
    if better is not shorter:  # a recording search: a smaller tail alone moves no distance
        improved = np.flatnonzero(shorter)
    local = local[improved]
    state.distances[local] = distances[improved]
    queued = state.scratch["queued"]
    fresh = local[~queued[local]]
    queued[fresh] = True
    state.scratch["pending"].append(fresh)
    state.frontier = local[state.distances[local] < end]
    state.frontier_size = int(state.frontier.shape[0])
    return int(local.shape[0])
