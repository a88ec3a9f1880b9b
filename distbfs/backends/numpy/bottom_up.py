"""Bottom-up levels of direction-optimizing search (Beamer, Asanović & Patterson, SC 2012) on
the host, and the counts the direction heuristic reads.

The candidates (unlabeled owned vertices with in-edges) scan their in-neighbours in rounds of
doubling width: round j tests row positions ``[2**j - 1, 2**(j + 1) - 1)`` of the candidates
still unfound, against the global frontier unpacked to one byte per vertex. A candidate leaves
at the round of its first hit, its parent that hit, so the slots tested are at most about twice
those of a scan that stops at the first hit, in about log2(max degree) rounds. The found
vertices are the next frontier queue (direct queue emission); the unfound candidates are kept
for the next level when it is bottom-up too.

Invariant: a vertex found bottom-up is labeled once, with the level, and its parent is an
in-neighbour in the previous frontier.
"""

from __future__ import annotations

import numpy as np

from ...constants import PREDECESSOR_DTYPE, UNREACHED
from ...graph import DistGraph
from ...partition import global_id
from ..base import SearchState, frontier_bitmap_bytes
from .search import EMPTY, frontier_rows

BOTTOM_UP_BLOCK = 16384
"""Bottom-up scans this many candidates through all their rounds at a time, so the adjacency
cache lines a round loads are still cached in the next (benchmarks/RESULTS.md, "numpy backend:
bottom-up blocks")."""


def frontier_edges(graph: DistGraph, state: SearchState) -> int:
    """m_f on this rank: out-edges of the vertex frontier."""
    return frontier_rows(graph, state)[2] if state.frontier_size else 0


def unexplored(graph: DistGraph, state: SearchState) -> tuple[int, int]:
    """(unlabeled owned vertices, their out-edges): n_u and m_u of this rank."""
    unlabeled = state.labels == UNREACHED
    return int(np.count_nonzero(unlabeled)), int(state.resources.degrees[unlabeled].sum())


def frontier_bitmap(graph: DistGraph, state: SearchState) -> np.ndarray:
    """The vertex frontier as this rank's packed bitmap (one byte per vertex, then packed)."""
    flags = np.zeros(8 * frontier_bitmap_bytes(graph.n, graph.size), dtype=np.bool_)
    flags[state.vertex_frontier] = True
    return np.packbits(flags, bitorder="little")


def row_frontier(graph: DistGraph, row: np.ndarray, source: int) -> np.ndarray:
    """The gathered frontier bitmaps (``(size, bytes)``) of every vertex of ``row`` but
    ``source``: the frontier after a level from a row every rank holds (``contract_row``)."""
    ids = row[row != source]
    flags = np.zeros((graph.size, 8 * frontier_bitmap_bytes(graph.n, graph.size)), dtype=np.bool_)
    flags[ids % graph.size, ids // graph.size] = True
    return np.packbits(flags, axis=1, bitorder="little")


def mark_visited(graph: DistGraph, state: SearchState, frontier: np.ndarray) -> None:
    """Every vertex of the gathered ``frontier`` enters the visited mask."""
    state.visited_mask |= unpack_gathered(frontier, graph)


def bottom_up(
    graph: DistGraph, in_graph: DistGraph, state: SearchState, frontier: np.ndarray, level: int
) -> int:
    """One bottom-up level against the gathered ``frontier``; returns the slots tested."""
    size = graph.size
    in_frontier = unpack_gathered(frontier, graph)
    if size > 1:  # the vertices other ranks labeled last level, for later top-down filters
        state.visited_mask |= in_frontier
    candidates = _candidates(in_graph, state, level)
    found, parents, unfound, inspected = _scan_in_neighbours(in_graph, candidates, in_frontier)
    state.scratch["bottom_up_candidates"] = (level, unfound)
    state.labels[found] = level
    if state.preds is not None:
        state.preds[found] = parents
    state.visited_mask[global_id(found, graph.rank, size)] = True
    state.vertex_frontier = found
    state.frontier_size = int(found.shape[0])
    return inspected


def _candidates(in_graph: DistGraph, state: SearchState, level: int) -> np.ndarray:
    """Unlabeled owned vertices with in-edges (kept from the last level if it was bottom-up)."""
    kept = state.scratch.get("bottom_up_candidates")
    if kept is not None and kept[0] == level - 1:
        return kept[1]
    offsets = in_graph.row_offsets
    return np.flatnonzero((state.labels == UNREACHED) & (offsets[1:] != offsets[:-1]))


def _scan_in_neighbours(
    in_graph: DistGraph, candidates: np.ndarray, in_frontier: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Find each candidate's first in-neighbour in the frontier (``_scan_block`` by blocks).

    Returns (found local ids, their parents as global ids, the candidates left unfound, the
    number of neighbour slots tested).
    """
    found, parents, unfound, inspected = [EMPTY], [EMPTY], [EMPTY], 0
    for begin in range(0, candidates.shape[0], BOTTOM_UP_BLOCK):
        block = candidates[begin : begin + BOTTOM_UP_BLOCK]
        found_at, block_parents, tested = _scan_block(in_graph, block, in_frontier)
        missed = np.ones(block.shape[0], dtype=np.bool_)
        missed[found_at] = False
        found.append(block[found_at])
        parents.append(block_parents)
        unfound.append(block[missed])
        inspected += tested
    parents_ = np.concatenate(parents).astype(PREDECESSOR_DTYPE)
    return np.concatenate(found), parents_, np.concatenate(unfound), inspected


def _scan_block(
    in_graph: DistGraph, candidates: np.ndarray, in_frontier: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """The doubling rounds over one block of candidates: (positions in ``candidates`` found,
    their parents, slots tested)."""
    offsets, columns = in_graph.row_offsets, in_graph.column_indices
    starts = offsets[candidates]
    degrees = offsets[candidates + 1] - starts
    active = np.arange(candidates.shape[0])  # positions in ``candidates`` still scanning
    found_parts, parent_parts = [EMPTY], [columns[:0]]
    first, width, inspected = 0, 1, 0
    while active.shape[0]:
        take = np.minimum(degrees - first, width)
        if width == 1:
            slots = starts + first
        else:  # slots of candidate i: starts[i] + first + [0, take[i])
            ends = np.cumsum(take)
            owners = np.repeat(np.arange(active.shape[0]), take)
            slots = np.arange(int(ends[-1]), dtype=np.int64)
            slots += (starts + first - ends + take)[owners]
        neighbours = columns[slots]
        hits = np.flatnonzero(in_frontier[neighbours])
        inspected += int(slots.shape[0])
        if width > 1:  # keep each candidate's first hit
            segment = owners[hits]
            leading = np.ones(hits.shape[0], dtype=np.bool_)
            np.not_equal(segment[1:], segment[:-1], out=leading[1:])
            hits, segment = hits[leading], segment[leading]
        else:
            segment = hits
        found_parts.append(active[segment])
        parent_parts.append(neighbours[hits])
        more = degrees > first + width
        more[segment] = False
        keep = np.flatnonzero(more)  # (integer gathers: far faster than boolean masks here)
        active, starts, degrees = active[keep], starts[keep], degrees[keep]
        first, width = first + width, 2 * width
    return np.concatenate(found_parts), np.concatenate(parent_parts), inspected


def unpack_gathered(frontier: np.ndarray, graph: DistGraph) -> np.ndarray:
    """The all-gathered ``(size, bytes)`` frontier bitmaps as one bool per global vertex."""
    bits = np.unpackbits(frontier, axis=1, bitorder="little")  # row r, bit k: v = k*size + r
    return (bits[0] if graph.size == 1 else bits.T.reshape(-1))[: graph.n].view(np.bool_)
