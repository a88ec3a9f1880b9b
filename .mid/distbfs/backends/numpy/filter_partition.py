"""Fused filter+partition (Merrill et al. 2012, sections 4.2 and 6.1) on the host.

Culling against the visited mask over all n vertices, then exact local duplicate culling (a
scatter of item positions into a per-vertex slot array: the item whose position survives is
the one kept), then a stable counting sort by owner (the GPU kernel's bin layout).

``partition_min`` (shortest paths) is the min-reduction form: one request per target, the
lexicographically smallest (``relax.min_per_vertex``), binned the same way.

Invariant: after ``filter_partition`` every vertex is sent at most once per rank per search
(it enters the visited mask as it is sent).
"""

from __future__ import annotations

import numpy as np

from ...comm.base import Bins
from ...partition import bin_by_owner
from ..base import EdgeFrontier, PathState, Relaxations, SearchState
from .relax import min_per_vertex
from .search import first_of_each


def filter_partition(state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins:
    """The unvisited, distinct neighbours of ``edges`` binned by owner, with their parents as
    payload when predecessors are kept; they enter the visited mask."""
    vertices, parents = edges.vertices, edges.parents
    unvisited = np.flatnonzero(~state.visited_mask[vertices])  # (gathers beat bool masks)
    vertices = vertices[unvisited]
    keep = np.flatnonzero(first_of_each(vertices, state.scratch["filter_slot"]))
    vertices = vertices[keep]
    state.visited_mask[vertices] = True
    payloads = () if parents is None else (parents[unvisited[keep]],)
    offsets, vertices, payloads = bin_by_owner(np, vertices, nbins, *payloads)
    return Bins(offsets, vertices, payloads)


def partition_min(state: PathState, requests: Relaxations, nbins: int) -> Bins:
    """One request per target vertex (the smallest payload), binned by owner; ``sent`` holds
    the smallest distance requested of each vertex."""
    scratch = state.scratch
    keep = min_per_vertex(
        requests.vertices, requests.payloads, scratch["sent"], scratch["sent_key"], scratch["slot"]
    )
    payloads = tuple(field[keep] for field in requests.payloads)
    offsets, vertices, payloads = bin_by_owner(np, requests.vertices[keep], nbins, *payloads)
    return Bins(offsets, vertices, payloads)
