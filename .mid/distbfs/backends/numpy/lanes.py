"""Batched BFS's per-backend stages on the host (``distbfs.backends.arrays.lanes`` holds the
state and the push expansion): one rank's push level (the expansion ORed straight into
``found``), the OR-contraction of received push items, the pull level (a
segmented OR over in-neighbour rows, ``np.bitwise_or.reduceat``) and settling a level's found
lanes (their distances written through an unpacked bit matrix)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...comm.base import Bins
from ...graph import DistGraph
from ...partition import local_id
from ..arrays.lanes import WORD, LaneState, expand_lanes
from ..arrays.ops import gather_ranges


def push_lanes(graph: DistGraph, state: LaneState) -> None:
    """One rank's push level: every frontier word ORed into ``found`` of each out-neighbour."""
    heads, words = expand_lanes(np, graph, state)
    np.bitwise_or.at(state.found, heads, words)


def contract_lanes(graph: DistGraph, state: LaneState, received: Bins) -> None:
    """OR every received word into its vertex's ``found`` word."""
    if received.vertices.shape[0]:
        local = local_id(received.vertices, graph.size)
        np.bitwise_or.at(state.found, local, received.payloads[0])


def pull_lanes(in_graph: DistGraph, state: LaneState, frontier: np.ndarray) -> None:
    """Every owned vertex not visited in all lanes ORs its in-neighbours' frontier words into
    ``found``; ``frontier``: every rank's words, shape (size, owned vertices of rank 0). While
    most vertices are open the OR runs over every row (one gather of all in-edges, no ranges
    to build; ``found`` of closed rows is masked off when settling), else over the open rows."""
    offsets = in_graph.row_offsets
    degrees = offsets[1:] - offsets[:-1]
    words = frontier.reshape(-1)
    open_rows = (state.visited != np.uint64(state.all_lanes)) & (degrees > 0)
    if in_graph.compressed:
        _pull_compressed(in_graph, state, words, frontier.shape, np.flatnonzero(open_rows))
        return
    if 4 * int(np.count_nonzero(open_rows)) >= in_graph.nlocal:
        rows = np.flatnonzero(degrees)
        gathered = words[frontier_positions(in_graph.column_indices, frontier.shape)]
        state.found[rows] |= np.bitwise_or.reduceat(gathered, offsets[rows])
        return
    rows = np.flatnonzero(open_rows)
    if rows.shape[0] == 0:
        return
    slots, _ = gather_ranges(np, offsets[rows], degrees[rows])
    gathered = words[frontier_positions(in_graph.column_indices[slots], frontier.shape)]
    segment_starts = np.concatenate(([0], np.cumsum(degrees[rows])[:-1]))
    state.found[rows] |= np.bitwise_or.reduceat(gathered, segment_starts)


def _pull_compressed(
    in_graph: DistGraph, state: LaneState, words: np.ndarray, shape: tuple[int, int], rows: Any
) -> None:
    """``pull_lanes`` over compressed rows: the open rows decoded a piece of about
    ``PULL_PIECE_EDGES`` columns at a time, so the columns are never all plain at once."""
    degrees = in_graph.row_offsets[rows + 1] - in_graph.row_offsets[rows]
    ends = np.cumsum(degrees)
    first = 0
    while first < rows.shape[0]:
        done = int(ends[first - 1]) if first else 0
        last = int(np.searchsorted(ends, done + PULL_PIECE_EDGES, side="right"))
        last = min(rows.shape[0], max(first + 1, last))
        piece = rows[first:last]
        columns = in_graph.column_indices.rows(piece)
        gathered = words[frontier_positions(columns, shape)]
        starts = np.cumsum(degrees[first:last]) - degrees[first:last]
        state.found[piece] |= np.bitwise_or.reduceat(gathered, starts)
        first = last


PULL_PIECE_EDGES = 1 << 22
"""Columns of compressed rows a pull level decodes at a time."""


def frontier_positions(vertices: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """Where each global vertex's word sits in the gathered frontier (flattened; one rank:
    the ids themselves)."""
    size, per_rank = shape
    if size == 1:
        return vertices
    return (vertices % size) * per_rank + vertices // size


def settle_lanes(graph: DistGraph, state: LaneState, level: int) -> int:
    """Keep the lanes found this level that had not visited their vertex: visited, at
    distance ``level``, the next frontier. Returns how many (vertex, lane) pairs. Distances
    are written one lane at a time: over the rows with new lanes, or, when those are many,
    as a mask over the whole lane (no index arrays)."""
    new = state.found & ~state.visited
    state.visited |= new
    state.frontier = new
    state.found = np.zeros_like(new)
    rows = np.flatnonzero(new)
    dense = 8 * rows.shape[0] >= new.shape[0]
    words = new if dense else new[rows]
    bit = np.empty_like(words)
    for lane in range(state.lanes):
        np.bitwise_and(words, np.uint64(1 << lane), out=bit)
        if dense:
            np.putmask(state.distances[lane], bit, level)
        else:
            state.distances[lane, rows[bit != 0]] = level
    pairs = np.unpackbits(words.view(np.uint8)).sum(dtype=np.int64)
    degrees = graph.row_offsets[rows + 1] - graph.row_offsets[rows]
    state.frontier_edges = int(degrees.sum())
    return int(pairs)


def frontier_words(graph: DistGraph, state: LaneState) -> Any:
    """This rank's frontier words padded to ``ceil(n / size)`` (what a pull level gathers:
    every rank's words of one length)."""
    words = np.zeros(-(-graph.n // graph.size), dtype=WORD)
    words[: graph.nlocal] = state.frontier
    return words
