"""Expansion (Merrill et al. 2012, section 4.1) on the host: the vertex frontier's adjacency
lists gathered into the edge frontier, with the expanding vertex of each item as its parent
when predecessors are kept.

A multi-range gather (one ``repeat`` + ``arange`` instead of the paper's scan-based gathering;
no Python loop over vertices or edges); a frontier holding a large share of the rank's edges is
gathered through one boolean pass over all of them instead (``DENSE_EXPAND_FRACTION``). Either
way every edge of every frontier vertex appears once.
"""

from __future__ import annotations

import numpy as np

from ...graph import DistGraph
from ...partition import global_id
from ..base import EdgeFrontier, SearchState
from .search import EMPTY, frontier_rows

DENSE_EXPAND_FRACTION = 0.3
"""Expansion gathers through one boolean pass over all local edges once the frontier's edges
exceed this fraction of them (a boolean pass costs about a third of a range gather per edge on
a CI-class machine: benchmarks/RESULTS.md, "numpy backend: dense expansion")."""


def gather_ranges(starts: np.ndarray, lengths: np.ndarray, total: int | None = None) -> np.ndarray:
    """Indices ``starts[i] .. starts[i] + lengths[i] - 1`` for every i, concatenated
    (``total``: ``lengths.sum()`` when the caller has it)."""
    total = int(lengths.sum()) if total is None else total
    if total == 0:
        return EMPTY
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def expand(graph: DistGraph, state: SearchState, strip: int = 0) -> EdgeFrontier:
    """The edge frontier of the current vertex frontier, in one strip (host memory holds it)."""
    if strip != 0:
        raise ValueError(f"strip {strip}: the numpy backend expands in one strip")
    frontier = state.vertex_frontier
    starts, lengths, total = frontier_rows(graph, state)
    columns = graph.column_indices
    if total > DENSE_EXPAND_FRACTION * graph.num_local_edges:
        if graph.compressed:  # decoded in the order the boolean pass emits rows
            vertices = columns.rows(np.sort(frontier))
        else:
            in_frontier = np.zeros(graph.nlocal, dtype=np.bool_)
            in_frontier[frontier] = True
            vertices = columns[np.repeat(in_frontier, graph.local_degrees())]
        frontier = np.sort(frontier)  # the order in which the boolean pass emits rows
        lengths = graph.row_offsets[frontier + 1] - graph.row_offsets[frontier]
    elif graph.compressed:  # the frontier's rows decoded, in frontier order
        vertices = columns.rows(frontier)
    else:
        vertices = columns[gather_ranges(starts, lengths, total)]
    parents = None
    if state.preds is not None:
        parents = np.repeat(global_id(frontier, graph.rank, graph.size), lengths)
    return EdgeFrontier(vertices, parents)


def source_row(graph: DistGraph, state: SearchState, edges: int) -> np.ndarray:
    """The out-neighbours (global ids, int64) of the search's one source, ``edges`` of them:
    on its owner (whose frontier it is at level 0) its row, elsewhere an uninitialized array
    of as many ids to receive them."""
    if state.frontier_size != 1:  # not this rank's
        return np.empty(edges, dtype=np.int64)
    row = int(state.vertex_frontier[0])
    if graph.compressed:
        return graph.column_indices.rows(np.array([row]), dtype=np.int64)
    start, stop = graph.row_offsets[row], graph.row_offsets[row + 1]
    return graph.column_indices[start:stop].astype(np.int64)
