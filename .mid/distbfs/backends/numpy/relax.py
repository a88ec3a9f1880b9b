"""Shortest paths (delta-stepping) on the host: the relax stage, the state of a search and its
buckets, and the scatter-min that ``partition_min`` and ``contract_min`` reduce requests with.
numpy's scatter operations (``np.minimum.at``, index stores) replace the sorts of the
array-module stages (``distbfs.backends.arrays``, which CuPy runs).

- ``relax``: the light or heavy out-edges of some owned vertices, gathered by a range gather
  (``expand.gather_ranges``; each tail's distance repeated over its row), culled against
  ``sent``: the smallest distance this rank has requested for each vertex. Light edges come
  from an index of them (``LightEdges``, per graph and delta), so a light phase, which may run
  many times per bucket, reads only light edges: with GAP's weights 1..255 and delta ~4, 2% of
  the edges.
- ``min_per_vertex``: one item per distinct vertex, the lexicographic minimum of (distance,
  pass, parent) (the pass and parent: requests of a tree pass, ``distbfs.backends.arrays.relax``):
  a scatter-min of the distances, then among the items equal to it a scatter-min of the tie keys
  ``pass << 32 | parent``.
- Buckets: an owned vertex that improves is queued once (``queued``) until it settles, so
  finding the next bucket scans the queued vertices, not n.
- A search that records its tree (``path_start``'s ``records``: positive integer weights, the
  tree asked for): its requests carry their tails as parents (pass 0), a request equal to
  ``sent`` survives the culling (a smaller tail may tie), and ``contract_min`` keeps the
  smallest tail that gives a vertex its distance. No tree pass then reads every edge.

The results are those of the array-module stages: the same distances, and from the tree passes
the same tree, on every backend and rank count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...constants import NO_PATH, PATH_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ...graph import DistGraph
from ...partition import local_id, owner, rank_major
from ..arrays import relax as array_relax
from ..base import PathState, Relaxations
from .expand import gather_ranges
from .search import EMPTY, first_of_each

TIE_KEY_LIMIT = 2**31
"""Parents and pass numbers below this pack into one int64 tie key, ``pass << 32 | parent``."""
NO_KEY = np.iinfo(np.int64).max
"""The tie key of no request (scratch arrays of the scatter-min start at it)."""


def path_start(
    graph: DistGraph, source: int, predecessors: bool, resources: Any, records: bool = False
) -> PathState:
    """Distances NO_PATH, the source at 0 (its own parent) on its owner, queued; the scratch
    arrays of the scatter-mins, allocated once per search. ``predecessors``: the state of a
    tree pass; ``records``: a search that records its tree (positive weights: each request
    carries its tail, and a vertex keeps the smallest tail of those that give its distance)."""
    keyed = predecessors or records
    if keyed and graph.n >= TIE_KEY_LIMIT:
        raise ValueError(f"{graph.n} vertices: the host's tie keys hold fewer than 2**31")
    nlocal = graph.nlocal
    distances = np.full(nlocal, NO_PATH, dtype=PATH_DTYPE)
    passes = np.zeros(nlocal, dtype=np.int64) if keyed else None
    preds = np.full(nlocal, UNREACHED, dtype=PREDECESSOR_DTYPE) if keyed else None
    slot = np.int32 if max(graph.n, graph.num_local_edges) < 2**31 else np.int64
    scratch: dict[str, Any] = {
        "sent": np.full(graph.n, NO_PATH, dtype=PATH_DTYPE),
        "sent_key": np.full(graph.n, NO_KEY, dtype=np.int64) if keyed else None,
        "best": np.full(nlocal, NO_PATH, dtype=PATH_DTYPE),
        "best_key": np.full(nlocal, NO_KEY, dtype=np.int64) if keyed else None,
        "slot": np.empty(max(graph.n, 1), dtype=slot),
        "queued": np.zeros(nlocal, dtype=np.bool_),
        "pending": [EMPTY],
        "records": records,
    }
    if owner(source, graph.size) == graph.rank:
        mine = local_id(source, graph.size)
        distances[mine] = 0.0
        if preds is not None:
            preds[mine] = source
        scratch["pending"] = [np.array([mine], dtype=np.int64)]
        scratch["queued"][mine] = True
    settled = np.zeros(nlocal, dtype=np.bool_)
    return PathState(distances, passes, preds, settled, EMPTY, 0, scratch, resources)


def records_tree(state: PathState) -> bool:
    """Whether ``state`` is a search that records its tree (``path_start``'s ``records``; the
    array stages' searches, whose pulls this module makes too, never do)."""
    return bool(state.scratch.get("records", False))


@dataclass
class LightEdges:
    """The light out-edges (weight <= ``delta``) of a rank's owned vertices: those of local
    vertex i are ``column_indices[slots[offsets[i]:offsets[i + 1]]]``."""

    delta: float
    offsets: np.ndarray
    slots: np.ndarray


def light_edges(graph: DistGraph, resources: Any, delta: float) -> LightEdges:
    """The light edges of ``graph`` for ``delta``, kept in ``resources`` (the graph's
    ``HostGraphResources``; None: not kept) until a search asks for another delta."""
    kept = getattr(resources, "light_edges", None)
    if kept is not None and kept.delta == delta:
        return kept
    slot = np.int32 if graph.num_local_edges < 2**31 else np.int64
    slots = np.flatnonzero(graph.weights <= delta).astype(slot)
    offsets = np.searchsorted(slots, graph.row_offsets)  # light slots before each row
    light = LightEdges(delta, offsets, slots)
    if resources is not None:
        resources.light_edges = light
    return light


RELAX_CHUNK_EDGES = 1 << 20
"""Edges a relaxation gathers at a time: a bucket's heavy step can reach tens of millions,
whose temporaries would each be fresh pages (the chunks' are reused)."""


def relax(
    graph: DistGraph, state: PathState, vertices: np.ndarray, delta: float, heavy: bool
) -> Relaxations:
    """The requests along the light or heavy out-edges of ``vertices`` (owned local ids),
    culled against ``sent``, in chunks of about ``RELAX_CHUNK_EDGES`` edges."""
    weighted = graph.weights is not None
    if not weighted and heavy == (delta >= 1):  # every edge weighs 1: light for any delta >= 1
        return requests_of(state, EMPTY, np.zeros(0, dtype=PATH_DTYPE), EMPTY)
    light = light_edges(graph, state.resources, delta) if weighted and not heavy else None
    offsets = graph.row_offsets if light is None else light.offsets
    starts = offsets[vertices]
    lengths = offsets[vertices + 1] - starts
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.shape[0] else 0
    cuts = np.searchsorted(ends, np.arange(RELAX_CHUNK_EDGES, total, RELAX_CHUNK_EDGES))
    bounds = np.unique(
        np.concatenate([[0], cuts + 1, [vertices.shape[0]]]).clip(max=vertices.shape[0])
    )
    parts = [
        relax_rows(graph, state, vertices[a:b], starts[a:b], lengths[a:b], light, delta, heavy)
        for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)
    ]
    if not parts:
        return requests_of(state, EMPTY, np.zeros(0, PATH_DTYPE), EMPTY)
    return requests_of(state, *(np.concatenate(part) for part in zip(*parts, strict=True)))


def requests_of(
    state: PathState, targets: np.ndarray, distances: np.ndarray, tails: np.ndarray
) -> Relaxations:
    """A search's requests; with their tails as parents (pass 0) where it records its tree."""
    if not records_tree(state):
        return Relaxations(targets, distances)
    return Relaxations(targets, distances, np.zeros(targets.shape[0], np.int64), tails)


def relax_rows(
    graph: DistGraph,
    state: PathState,
    vertices: np.ndarray,
    starts: np.ndarray,
    lengths: np.ndarray,
    light: LightEdges | None,
    delta: float,
    heavy: bool,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``relax`` for one chunk of rows: (targets as int64, distances, tails as global ids; an
    empty array where the search records no tree) of the surviving requests: those below
    ``sent``, or equal to it where the search records its tree (a smaller tail may tie)."""
    slots = gather_ranges(starts, lengths)
    if light is not None:
        slots = light.slots[slots]
    targets = graph.column_indices[slots]
    if graph.weights is None:
        distances = np.repeat(state.distances[vertices] + 1.0, lengths)
    else:
        weights = graph.weights[slots]  # added in float64 below, without a converted copy
        distances = np.repeat(state.distances[vertices], lengths)
        distances += weights
    records = records_tree(state)
    sent = state.scratch["sent"][targets]
    keep = distances <= sent if records else distances < sent
    if graph.weights is not None and heavy:
        keep &= weights > delta
    keep = np.flatnonzero(keep)
    tails = EMPTY
    if records:  # each kept edge's row, found among the rows' ends (few survive the culling)
        rows = np.searchsorted(np.cumsum(lengths), keep, side="right")
        tails = vertices[rows].astype(np.int64) * graph.size + graph.rank
    return targets[keep].astype(np.int64), distances[keep], tails


TREE_CHUNK_EDGES = 1 << 20
"""Edges a chunk of tree pass 0 reads at a time (its temporaries stay a few MB)."""


def tight_requests(
    graph: DistGraph, state: PathState, vertices: np.ndarray, k: int, everywhere: np.ndarray
) -> Relaxations:
    """Tree pass ``k``'s requests (``distbfs.backends.arrays.relax.tight_requests``). Pass 0
    reads every row in CSR order, in chunks of about ``TREE_CHUNK_EDGES`` edges (each tail's
    distance repeated over its row; an unreached tail's edges are never strictly closer),
    without gathering ``vertices``' rows."""
    if k:
        return array_relax.tight_requests(np, graph, state, vertices, k, everywhere)
    offsets, nlocal = graph.row_offsets, graph.nlocal
    bounds = np.unique(np.searchsorted(offsets, np.arange(0, offsets[-1], TREE_CHUNK_EDGES)))
    bounds = np.append(bounds[bounds < nlocal], nlocal)
    found: list[tuple[np.ndarray, ...]] = []
    for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        rows = offsets[first : last + 1] - offsets[first]
        edges = slice(int(offsets[first]), int(offsets[last]))
        own = np.repeat(state.distances[first:last], np.diff(rows))
        distances = own + (1.0 if graph.weights is None else graph.weights[edges])
        targets = graph.column_indices[edges]
        if graph.size > 1:
            there = everywhere[rank_major(targets.astype(np.int64), graph.n, graph.size)]
        else:
            there = everywhere[targets]
        keep = np.flatnonzero((distances == there) & (distances > own))
        tails = first + np.searchsorted(rows, keep, side="right") - 1
        found.append((targets[keep].astype(np.int64), distances[keep], tails))
    targets, distances, tails = (
        (np.concatenate(part) for part in zip(*found, strict=True))
        if found
        else (EMPTY, np.zeros(0, dtype=PATH_DTYPE), EMPTY)
    )
    requests = Relaxations(targets, distances)
    requests.passes = np.zeros(targets.shape[0], dtype=np.int64)
    requests.parents = tails * graph.size + graph.rank
    return requests


def row_edges(graph: DistGraph, vertices: np.ndarray) -> int:
    """The out-edges of ``vertices`` (owned local ids)."""
    offsets = graph.row_offsets
    return int((offsets[vertices + 1] - offsets[vertices]).sum())


def pull_requests(
    graph: DistGraph, state: PathState, everywhere: np.ndarray, lower: float, end: float
) -> Relaxations:
    """A heavy step pulled (``distbfs.traversals.sssp.heavy_requests``; an undirected graph, so
    a row lists the in-edges too): for every unsettled owned vertex v, the requests
    d(u) + w(u, v) < d(v) from its neighbours u with d(u) in [lower, end) (the bucket just
    settled; ``everywhere``: every rank's distances, ``rank_major`` order). Reads every row in
    CSR order, in chunks of about ``TREE_CHUNK_EDGES`` edges."""
    offsets, nlocal = graph.row_offsets, graph.nlocal
    bounds = np.unique(np.searchsorted(offsets, np.arange(0, offsets[-1], TREE_CHUNK_EDGES)))
    bounds = np.append(bounds[bounds < nlocal], nlocal)
    found: list[tuple[np.ndarray, np.ndarray]] = []
    for first, last in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        heads = np.repeat(np.arange(first, last), np.diff(offsets[first : last + 1]))
        edges = slice(int(offsets[first]), int(offsets[last]))
        tails = graph.column_indices[edges].astype(np.int64)
        there = everywhere[rank_major(tails, graph.n, graph.size) if graph.size > 1 else tails]
        distances = there + (1.0 if graph.weights is None else graph.weights[edges])
        own = state.distances[heads]
        closer = distances <= own if records_tree(state) else distances < own
        keep = np.flatnonzero((there >= lower) & (there < end) & closer & ~state.settled[heads])
        found.append((heads[keep] * graph.size + graph.rank, distances[keep], tails[keep]))
    if not found:
        return requests_of(state, EMPTY, np.zeros(0, dtype=PATH_DTYPE), EMPTY)
    return requests_of(state, *(np.concatenate(part) for part in zip(*found, strict=True)))


def min_per_vertex(
    vertices: np.ndarray,
    payloads: tuple[np.ndarray, ...],
    best: np.ndarray,
    best_key: np.ndarray | None,
    slot: np.ndarray,
) -> np.ndarray:
    """Positions of one item per distinct vertex, the lexicographically smallest: a scatter-min
    of the distances into ``best`` (already at most each distance, or above), then of the tie
    keys into ``best_key`` (reset where touched) among the items that equal it; without tie
    keys, one of the equal items."""
    distances = payloads[0]
    np.minimum.at(best, vertices, distances)
    win = np.flatnonzero(distances == best[vertices])
    if best_key is None:
        return win[first_of_each(vertices[win], slot)]
    keys = (payloads[1][win] << 32) | payloads[2][win]
    best_key[vertices[win]] = NO_KEY
    np.minimum.at(best_key, vertices[win], keys)
    win = win[keys == best_key[vertices[win]]]
    return win[first_of_each(vertices[win], slot)]  # equal items: duplicate edges


def next_bucket(state: PathState) -> float:
    """The smallest distance of a queued, unsettled owned vertex (NO_PATH: none)."""
    pending = np.concatenate(state.scratch["pending"])
    pending = pending[~state.settled[pending]]
    state.scratch["pending"] = [pending]
    return float(state.distances[pending].min()) if pending.size else NO_PATH


def bucket_members(state: PathState, end: float) -> np.ndarray:
    """Queued, unsettled owned vertices below ``end``."""
    pending = state.scratch["pending"][0]
    return pending[state.distances[pending] < end]


def settle(state: PathState, members: list[np.ndarray]) -> np.ndarray:
    """Mark the vertices relaxed in the bucket settled; returns them, each once."""
    members = np.concatenate(members)
    done = members[first_of_each(members, state.scratch["slot"])]
    state.settled[done] = True
    return done
