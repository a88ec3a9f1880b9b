"""Relaxation (delta-stepping, Meyer & Sanders 2003) over the array module, and the bookkeeping
of a shortest-path search's buckets.

``relax``: the light (weight <= delta) or heavy (weight > delta) out-edges of some owned vertices
become requests (target, d(u) + w, and with predecessors hops(u) + 1 and u), gathered like
expansion's edge frontier. A request that cannot win is culled here: each rank keeps, over all
n vertices, the smallest distance it has requested so far (``sent``; its own vertices' distances
can only be smaller), and a request above it would lose at the owner anyway (with predecessors
an equal one may still win on hops, so it stays). This plays the part of BFS's visited mask.

Buckets: ``pending`` lists the owned vertices that improved since they were last settled (a
vertex enters once per improvement; duplicates and settled ones are dropped when the list is
scanned), so finding the next bucket and its members costs what has changed, not n.

Invariant: a settled vertex's (distance, hops, parent) never changes again.
"""

from __future__ import annotations

from typing import Any

from ...constants import NO_PATH, PATH_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ...graph import DistGraph
from ...partition import local_id, owner
from ..base import PathState, Relaxations
from .ops import gather_ranges


def path_start(
    xp: Any, graph: DistGraph, source: int, predecessors: bool, resources: Any
) -> PathState:
    """Distances NO_PATH (hops 0, predecessors UNREACHED), the source at 0 on its owner, its
    own parent, pending for the first bucket."""
    nlocal = graph.nlocal
    distances = xp.full(nlocal, NO_PATH, dtype=PATH_DTYPE)
    hops = xp.zeros(nlocal, dtype=xp.int64) if predecessors else None
    preds = xp.full(nlocal, UNREACHED, dtype=PREDECESSOR_DTYPE) if predecessors else None
    empty = xp.zeros(0, dtype=xp.int64)
    scratch = {"sent": xp.full(graph.n, NO_PATH, dtype=PATH_DTYPE), "pending": [empty]}
    if owner(source, graph.size) == graph.rank:
        mine = local_id(source, graph.size)
        distances[mine] = 0.0
        if preds is not None:
            preds[mine] = source
        scratch["pending"] = [xp.full(1, mine, dtype=xp.int64)]
    settled = xp.zeros(nlocal, dtype=xp.bool_)
    return PathState(distances, hops, preds, settled, empty, 0, scratch, resources)


def relax(
    xp: Any, graph: DistGraph, state: PathState, vertices: Any, delta: float, heavy: bool
) -> Relaxations:
    """The requests along the light (``heavy`` False) or heavy out-edges of ``vertices`` (owned
    local ids), culled against what this rank already sent."""
    starts = graph.row_offsets[vertices]
    slots, tails = gather_ranges(xp, starts, graph.row_offsets[vertices + 1] - starts)
    targets = graph.column_indices[slots]
    if graph.weights is None:  # every edge weighs 1: light for any delta >= 1
        weights = xp.ones(targets.shape[0], dtype=PATH_DTYPE)
        keep = xp.full(targets.shape[0], heavy != (delta >= 1), dtype=xp.bool_)
    else:
        weights = graph.weights[slots].astype(PATH_DTYPE)
        keep = weights > delta if heavy else weights <= delta
    del slots
    distances = state.distances[vertices][tails] + weights
    best = state.scratch["sent"][targets]
    keep &= distances <= best if state.preds is not None else distances < best
    keep = xp.flatnonzero(keep)
    requests = Relaxations(targets[keep].astype(xp.int64), distances[keep])
    if state.preds is not None:
        tails = vertices[tails[keep]]
        requests.hops = state.hops[tails] + 1
        requests.parents = tails * graph.size + graph.rank
    return requests


def next_bucket(xp: Any, state: PathState) -> float:
    """The smallest distance of an unsettled reached owned vertex (NO_PATH: none), after
    compacting ``pending``."""
    pending = xp.unique(xp.concatenate(state.scratch["pending"]))
    pending = pending[~state.settled[pending]]
    state.scratch["pending"] = [pending]
    return float(state.distances[pending].min()) if pending.shape[0] else NO_PATH


def bucket_members(state: PathState, end: float) -> Any:
    """Unsettled reached owned vertices below ``end`` (``next_bucket`` compacted the list)."""
    pending = state.scratch["pending"][0]
    return pending[state.distances[pending] < end]


def settle(xp: Any, state: PathState, members: list[Any]) -> Any:
    """Mark the vertices relaxed in the bucket settled; returns them, each once."""
    done = xp.unique(xp.concatenate(members))
    state.settled[done] = True
    return done
