"""Relaxation (delta-stepping, Meyer & Sanders 2003) over the array module, and the bookkeeping
of a shortest-path search's buckets.

``relax``: the light (weight <= delta) or heavy (weight > delta) out-edges of some owned vertices
become requests (target, d(u) + w), gathered like expansion's edge frontier. A request that
cannot win is culled here: each rank keeps, over all n vertices, the smallest distance it has
requested so far (``sent``; its own vertices' distances can only be smaller), and a request at
or above it would lose at the owner anyway. This plays the part of BFS's visited mask.

The shortest-path tree is built after the search from the final distances
(``distbfs.traversals.sssp.shortest_path_tree``): ``tree_start`` marks every reached vertex but
the source unresolved, ``tight_requests`` makes the requests (target, d(u) + w, pass, u) of the
tight edges, found against every rank's distances (one all-gather, so only tight edges travel;
pass 0: d(u) + w > d(u), the strictly closer parents; pass k >= 1: the plateau edges
d(u) + w = d(u) from the vertices resolved in pass k - 1), and the owner's lexicographic
minimum of (distance, pass, parent) (``contract_min``) resolves a vertex in the first pass that
reaches it, with its smallest parent. ``tree_finish`` ends it.

Chunks: ``relax`` and ``tight_requests`` read the rows of at most ``CHUNK_EDGES`` edges at a
time (a bucket of a large graph reaches billions of edges, and every gathered edge takes a few
words of temporaries); each chunk's requests are reduced to one per target (the smallest
payload, as the owner reduces them) before the next is read, and a relaxation's cull against
``sent`` sees what the chunks before it requested.

Buckets: ``pending`` lists the owned vertices that improved since they were last settled (a
vertex enters once per improvement; duplicates and settled ones are dropped when the list is
scanned), so finding the next bucket and its members costs what has changed, not n.

Invariant: a settled vertex's distance never changes again.
"""

from __future__ import annotations

import itertools
from typing import Any

from ...constants import NO_PATH, PATH_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ...graph import DistGraph
from ...partition import local_id, owner, rank_major
from ..base import PathState, Relaxations
from .ops import gather_ranges, min_per_vertex

CHUNK_EDGES = 1 << 26
"""Edges ``relax`` and ``tight_requests`` gather at a time (a row longer than this alone)."""


def path_start(
    xp: Any, graph: DistGraph, source: int, predecessors: bool, resources: Any
) -> PathState:
    """Distances NO_PATH (pass 0, predecessors UNREACHED), the source at 0 on its owner, its
    own parent, pending for the first bucket. ``predecessors``: the state of a tree pass."""
    nlocal = graph.nlocal
    distances = xp.full(nlocal, NO_PATH, dtype=PATH_DTYPE)
    passes = xp.zeros(nlocal, dtype=xp.int64) if predecessors else None
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
    return PathState(distances, passes, preds, settled, empty, 0, scratch, resources)


def chunk_bounds(xp: Any, offsets: Any, vertices: Any) -> list[int]:
    """Positions [0, ..., len(vertices)] that cut ``vertices`` into runs whose rows (at
    ``offsets``) hold about ``CHUNK_EDGES`` edges each (a longer row alone)."""
    count = int(vertices.shape[0])
    if count == 0:
        return [0, 0]
    ends = xp.cumsum(offsets[vertices + 1] - offsets[vertices])
    total = int(ends[-1])
    if total <= CHUNK_EDGES:
        return [0, count]
    cuts = xp.searchsorted(ends, xp.arange(CHUNK_EDGES, total, CHUNK_EDGES)) + 1
    inner = sorted({int(c) for c in cuts.tolist() if 0 < int(c) < count})
    return [0, *inner, count]


def reduced(xp: Any, part: Relaxations) -> Relaxations:
    """One chunk's requests, one per target (the smallest payload, as the owner keeps)."""
    keep = min_per_vertex(xp, part.vertices, part.payloads)
    return Relaxations(*(field[keep] for field in (part.vertices, *part.payloads)))


def joined(xp: Any, parts: list[Relaxations]) -> Relaxations:
    """The requests of every chunk, concatenated (the owner's reduction takes the minima)."""
    if len(parts) == 1:
        return parts[0]
    fields = zip(*((p.vertices, *p.payloads) for p in parts), strict=True)
    return Relaxations(*(xp.concatenate(list(field)) for field in fields))


def relax(
    xp: Any, graph: DistGraph, state: PathState, vertices: Any, delta: float, heavy: bool
) -> Relaxations:
    """The requests along the light (``heavy`` False) or heavy out-edges of ``vertices`` (owned
    local ids), culled against what this rank already sent, a chunk of rows at a time."""
    bounds = chunk_bounds(xp, graph.row_offsets, vertices)
    if len(bounds) == 2:
        return relax_rows(xp, graph, state, vertices, delta, heavy)
    parts = []
    for a, b in itertools.pairwise(bounds):
        parts.append(reduced(xp, relax_rows(xp, graph, state, vertices[a:b], delta, heavy)))
        # the chunks after it cull against these (each below sent; partition_min writes them)
        state.scratch["sent"][parts[-1].vertices] = parts[-1].distances
    return joined(xp, parts)


def relax_rows(
    xp: Any, graph: DistGraph, state: PathState, vertices: Any, delta: float, heavy: bool
) -> Relaxations:
    """``relax`` of one chunk of rows."""
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
    keep &= distances < state.scratch["sent"][targets]
    keep = xp.flatnonzero(keep)
    return Relaxations(targets[keep].astype(xp.int64), distances[keep])


UNRESOLVED = 1 << 30
"""Pass number of a reached vertex without a parent yet in a tree pass (above any pass run)."""


def tree_start(xp: Any, state: PathState, distances: Any) -> Any:
    """Make ``state`` (``path_start`` with predecessors) a tree pass over the final
    ``distances``: every reached owned vertex but the source unresolved. Returns the reached
    owned vertices (local ids), the tails of pass 0."""
    state.distances = distances
    reached = xp.flatnonzero(distances < NO_PATH)
    unresolved = reached[state.preds[reached] == UNREACHED]  # all but the source
    state.passes[unresolved] = UNRESOLVED
    state.preds[unresolved] = 0
    return reached


def tight_requests(
    xp: Any, graph: DistGraph, state: PathState, vertices: Any, k: int, everywhere: Any
) -> Relaxations:
    """Tree pass ``k``: the requests (target, d(u) + w, k, u) along the out-edges of
    ``vertices`` that are tight, d(u) + w = d(v) by ``everywhere`` (every rank's distances,
    ``partition.rank_major`` order), with d(u) + w > d(u) (pass 0) or d(u) + w = d(u) (pass
    k >= 1); a chunk of rows at a time, each chunk's reduced to one per target."""
    bounds = chunk_bounds(xp, graph.row_offsets, vertices)
    if len(bounds) == 2:
        return tight_rows(xp, graph, state, vertices, k, everywhere)
    parts = [
        reduced(xp, tight_rows(xp, graph, state, vertices[a:b], k, everywhere))
        for a, b in itertools.pairwise(bounds)
    ]
    return joined(xp, parts)


def tight_rows(
    xp: Any, graph: DistGraph, state: PathState, vertices: Any, k: int, everywhere: Any
) -> Relaxations:
    """``tight_requests`` of one chunk of rows."""
    starts = graph.row_offsets[vertices]
    slots, tails = gather_ranges(xp, starts, graph.row_offsets[vertices + 1] - starts)
    if graph.weights is None:
        weights = xp.ones(slots.shape[0], dtype=PATH_DTYPE)
    else:
        weights = graph.weights[slots].astype(PATH_DTYPE)
    own = state.distances[vertices][tails]
    distances = own + weights
    targets = graph.column_indices[slots].astype(xp.int64)
    tight = distances == everywhere[rank_major(targets, graph.n, graph.size)]
    keep = xp.flatnonzero(tight & (distances > own if k == 0 else distances == own))
    tails = vertices[tails[keep]]
    requests = Relaxations(targets[keep], distances[keep])
    requests.passes = xp.full(keep.shape[0], k, dtype=xp.int64)
    requests.parents = tails * graph.size + graph.rank
    return requests


def tree_tails(xp: Any, state: PathState, reached: Any, k: int) -> Any:
    """The tails of tree pass ``k``: every reached owned vertex (pass 0), else those resolved
    in pass k - 1."""
    return reached if k == 0 else reached[state.passes[reached] == k - 1]


def tree_unresolved(xp: Any, state: PathState) -> int:
    """Owned vertices still without a parent in a tree pass."""
    return int(xp.count_nonzero(state.passes == UNRESOLVED))


def tree_finish(state: PathState) -> Any:
    """The predecessors of a tree pass (a vertex left unresolved, which the passes never leave:
    ``UNREACHED``)."""
    state.preds[state.passes == UNRESOLVED] = UNREACHED
    return state.preds


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
