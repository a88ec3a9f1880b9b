"""A search's state on the host: the per-graph resources every search of a graph reuses (the
owned vertices' out-degrees, for dense expansion), and the state a search starts from (labels
and predecessors UNREACHED, every source labeled 0 and its own parent on its owner, the visited
mask knowing every source on every rank).

The visited mask is one byte per global vertex (the paper's bitmask, kept as bytes, which numpy
gathers faster than packed bits); the duplicate-culling slots are scratch arrays over the
vertices, allocated once per search.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ...graph import DistGraph
from ...partition import global_id, local_id, owner
from ..base import SearchState

EMPTY = np.zeros(0, dtype=np.int64)
"""An empty queue of local ids."""


@dataclass
class HostGraphResources:
    """What every search of one graph reuses on the host: its owned vertices' out-degrees, and
    for shortest paths the light edges of the last delta searched with (``relax.LightEdges``,
    built on first need)."""

    degrees: np.ndarray
    light_edges: Any = None


def prepare(graph: DistGraph) -> HostGraphResources:
    """The per-graph resources of ``graph`` (rank-local)."""
    return HostGraphResources(degrees=np.asarray(graph.local_degrees()))


def long_rows(graph: DistGraph, resources: HostGraphResources, limit: int) -> dict[int, int]:
    """This rank's rows of more than ``limit`` out-edges: global vertex -> out-degree."""
    rows = np.flatnonzero(resources.degrees > limit)
    ids = global_id(rows, graph.rank, graph.size).tolist()
    return dict(zip(ids, resources.degrees[rows].tolist(), strict=True))


def start(
    graph: DistGraph, sources: Any, predecessors: bool, resources: HostGraphResources
) -> SearchState:
    """Labels and predecessors UNREACHED, every source (a vertex id or several; duplicates are
    one) labeled 0 and its own parent on its owner, whose frontier they form (sorted local
    ids), every source in every visited mask."""
    nlocal = graph.nlocal
    sources = np.unique(np.asarray(sources, dtype=np.int64).reshape(-1))
    labels = np.full(nlocal, UNREACHED, dtype=DISTANCE_DTYPE)
    preds = np.full(nlocal, UNREACHED, dtype=PREDECESSOR_DTYPE) if predecessors else None
    visited_mask = np.zeros(graph.n, dtype=np.bool_)
    visited_mask[sources] = True  # every rank knows the sources are labeled
    slot_dtype = np.int32 if max(graph.num_local_edges, graph.n) < 2**31 else np.int64
    scratch = {
        "filter_slot": np.empty(graph.n, dtype=slot_dtype),
        "contract_slot": np.empty(nlocal, dtype=slot_dtype) if graph.size > 1 else None,
    }
    mine = sources[owner(sources, graph.size) == graph.rank]
    frontier = local_id(mine, graph.size) if mine.size else EMPTY
    labels[frontier] = 0
    if preds is not None:
        preds[frontier] = mine
    return SearchState(
        labels, preds, visited_mask, frontier, int(frontier.shape[0]), scratch, resources
    )


def first_of_each(values: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Boolean mask keeping exactly one item per distinct value (``slot``: scratch over the
    values' range): the item whose position survives the scatter is the one kept, as warp and
    history culling keep one copy."""
    positions = np.arange(values.shape[0], dtype=slot.dtype)
    slot[values] = positions
    return slot[values] == positions


def frontier_rows(graph: DistGraph, state: SearchState) -> tuple[np.ndarray, np.ndarray, int]:
    """(row starts, row lengths, their sum) of the vertex frontier, computed once per frontier:
    ``frontier_edges`` (direction-optimizing, after each level) and ``expand`` (the next level)
    share them, so m_f costs nothing extra on graphs of thousands of small levels."""
    frontier = state.vertex_frontier
    cached = state.scratch.get("frontier_rows")
    if cached is not None and cached[0] is frontier:
        return cached[1:]
    starts = graph.row_offsets[frontier]
    lengths = graph.row_offsets[frontier + 1] - starts
    rows = (starts, lengths, int(lengths.sum()))
    state.scratch["frontier_rows"] = (frontier, *rows)
    return rows
