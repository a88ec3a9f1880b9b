"""Batched BFS from up to 64 sources at once (bit lanes: Then et al., "The More the Merrier:
Efficient Multi-Source Graph Traversal", VLDB 2015; Liu & Huang, "iBFS", SIGMOD 2016), the
parts written once over the array module: the state of one batch on one rank, and the push
level's expansion and binning by owner. The OR-contraction, the pull level and the settling of
found lanes are each backend's (``numpy.lanes``, ``cuda.lanes``).

State. One 64-bit word per owned vertex (local order) in each of ``visited``, ``frontier`` and
``found``: bit i is lane i, the search from ``sources[i]``. ``found`` collects the lanes
reaching a vertex during a level (ORed, unfiltered); settling keeps the new ones
(``found & ~visited``), marks them visited, writes their distance and makes them the next
frontier. ``distances``: (lanes, owned vertices) int32, ``UNREACHED`` until found.

Push level: every frontier vertex sends its frontier word to each out-neighbour, as items
(neighbour, word) binned by the neighbour's owner (the engine's exchange), ORed into ``found``
there. Pull level: the frontier words of all ranks are gathered (``allgather_equal``), and
every owned vertex not yet visited in all lanes ORs the words of its in-neighbours.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...comm.base import Bins
from ...constants import UNREACHED
from ...graph import DistGraph
from ...partition import bin_by_owner
from .ops import gather_ranges

MAX_LANES = 64
"""Sources one batch carries: the bits of a word."""
WORD = np.uint64
"""The lane word's dtype."""


@dataclass
class LaneState:
    """One batch on one rank (module docstring). ``all_lanes``: the word with every lane's bit;
    ``frontier_edges``: out-edges of this rank's frontier vertices (the direction heuristic's
    m_f, kept by ``settle``)."""

    lanes: int
    all_lanes: int
    visited: Any
    frontier: Any
    found: Any
    distances: Any
    frontier_edges: int
    resources: Any = None


def lane_words(sources: np.ndarray, graph: DistGraph) -> tuple[np.ndarray, np.ndarray]:
    """(local ids, words) of the owned sources: lane i's bit on ``sources[i]``, ORed where two
    lanes share a source (host arrays)."""
    owned = sources % graph.size == graph.rank
    local = sources[owned] // graph.size
    bits = np.left_shift(np.uint64(1), np.flatnonzero(owned).astype(WORD))
    ids, where = np.unique(local, return_inverse=True)
    words = np.zeros(ids.shape[0], dtype=WORD)
    np.bitwise_or.at(words, where, bits)
    return ids.astype(np.int64), words


def lanes_start(xp: Any, graph: DistGraph, sources: np.ndarray, resources: Any) -> LaneState:
    """Lane i at ``sources[i]`` (global ids, at most ``MAX_LANES``): visited, in the frontier,
    at distance 0."""
    lanes = int(sources.shape[0])
    if not 0 < lanes <= MAX_LANES:
        raise ValueError(f"a batch holds 1 to {MAX_LANES} sources, not {lanes}")
    local, words = lane_words(np.asarray(sources, dtype=np.int64), graph)
    visited = xp.zeros(graph.nlocal, dtype=WORD)
    visited[xp.asarray(local)] = xp.asarray(words)
    distances = xp.full((lanes, graph.nlocal), UNREACHED, dtype=xp.int32)
    owned = np.flatnonzero(sources % graph.size == graph.rank)
    distances[xp.asarray(owned), xp.asarray(sources[owned] // graph.size)] = 0
    degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
    edges = int(degrees[xp.asarray(local)].sum()) if local.shape[0] else 0
    all_lanes = (1 << lanes) - 1
    return LaneState(
        lanes,
        all_lanes,
        visited,
        visited.copy(),
        xp.zeros_like(visited),
        distances,
        edges,
        resources,
    )


def expand_lanes(xp: Any, graph: DistGraph, state: LaneState) -> tuple[Any, Any]:
    """(neighbours, words): one item per out-edge of every frontier vertex, its frontier word
    (neighbours as global ids, int64)."""
    rows = xp.flatnonzero(state.frontier)
    starts = graph.row_offsets[rows]
    slots, owners = gather_ranges(xp, starts, graph.row_offsets[rows + 1] - starts)
    return graph.column_indices[slots].astype(xp.int64), state.frontier[rows][owners]


def partition_lanes(xp: Any, heads: Any, words: Any, nbins: int) -> Bins:
    """The push items binned by the owner of their vertex (payload: the word)."""
    offsets, vertices, (payload,) = bin_by_owner(xp, heads, nbins, words)
    return Bins(offsets, vertices, (payload,))


class ArrayLaneStages:
    """Batched BFS's stages written over the backend's ``xp`` (``lanes_start``, ``bin_lanes``,
    ``lanes_prepare``, ``lanes_distances``); each backend adds ``contract_lanes``,
    ``frontier_words``, ``pull_lanes`` and ``settle_lanes``."""

    xp: Any

    def lanes_start(self, graph: DistGraph, sources: np.ndarray, resources: Any) -> LaneState:
        return lanes_start(self.xp, graph, sources, resources)

    def bin_lanes(self, graph: DistGraph, state: LaneState, nbins: int) -> Bins:
        """A push level's items (neighbour, word), one per out-edge of every frontier vertex,
        binned by the neighbour's owner (a backend may offer those it owns in place: its own
        bin is then empty)."""
        return partition_lanes(self.xp, *expand_lanes(self.xp, graph, state), nbins)

    def lanes_prepare(self, resources: Any) -> None:
        """Build what every batch of the graph reuses (``resources``: its ``GraphResources``;
        collective): the in-neighbour graph."""
        resources.in_neighbours()

    def lanes_distances(self, graph: DistGraph, state: LaneState) -> Any:
        """The (lanes, owned vertices) distances once the batch has ended (written as each
        level settles)."""
        return state.distances
