"""Batched BFS's per-backend stages on the host (``distbfs.backends.arrays.lanes`` holds the
state and the push expansion): the OR-contraction of received push items, the pull level (a
segmented OR over in-neighbour rows, ``np.bitwise_or.reduceat``) and settling a level's found
lanes (their distances written through an unpacked bit matrix)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...comm.base import Bins
from ...graph import DistGraph
from ...partition import local_id
from ..arrays.lanes import WORD, LaneState
from ..arrays.ops import gather_ranges


def contract_lanes(graph: DistGraph, state: LaneState, received: Bins) -> None:
    """OR every received word into its vertex's ``found`` word."""
    if received.vertices.shape[0]:
        local = local_id(received.vertices, graph.size)
        np.bitwise_or.at(state.found, local, received.payloads[0])


def pull_lanes(in_graph: DistGraph, state: LaneState, frontier: np.ndarray) -> None:
    """Every owned vertex not visited in all lanes ORs its in-neighbours' frontier words into
    ``found``; ``frontier``: every rank's words, shape (size, owned vertices of rank 0)."""
    offsets = in_graph.row_offsets
    degrees = offsets[1:] - offsets[:-1]
    rows = np.flatnonzero((state.visited != np.uint64(state.all_lanes)) & (degrees > 0))
    if rows.shape[0] == 0:
        return
    slots, _ = gather_ranges(np, offsets[rows], degrees[rows])
    neighbours = in_graph.column_indices[slots]
    size = frontier.shape[0]
    words = frontier[neighbours % size, neighbours // size]
    segment_starts = np.concatenate(([0], np.cumsum(degrees[rows])[:-1]))
    state.found[rows] |= np.bitwise_or.reduceat(words, segment_starts)


def settle_lanes(graph: DistGraph, state: LaneState, level: int) -> int:
    """Keep the lanes found this level that had not visited their vertex: visited, at
    distance ``level``, the next frontier. Returns how many (vertex, lane) pairs."""
    new = state.found & ~state.visited
    state.visited |= new
    state.frontier = new
    state.found = np.zeros_like(new)
    rows = np.flatnonzero(new)
    as_bytes = new[rows].astype("<u8").view(np.uint8).reshape(-1, 8)  # byte k: lanes 8k..
    bits = np.unpackbits(as_bytes, axis=1, bitorder="little")[:, : state.lanes]
    which, lanes = np.nonzero(bits)
    state.distances[lanes, rows[which]] = level
    degrees = graph.row_offsets[rows + 1] - graph.row_offsets[rows]
    state.frontier_edges = int(degrees.sum())
    return int(which.shape[0])


def frontier_words(graph: DistGraph, state: LaneState) -> Any:
    """This rank's frontier words padded to ``ceil(n / size)`` (what a pull level gathers:
    every rank's words of one length)."""
    words = np.zeros(-(-graph.n // graph.size), dtype=WORD)
    words[: graph.nlocal] = state.frontier
    return words
