"""Host backend: the level stages of Merrill et al. 2012 (section 6.1) as vectorized numpy.

- expand: multi-range gather of the frontier's adjacency lists (one ``repeat`` + ``arange``
  instead of the paper's scan-based gathering; no Python loop over vertices or edges).
- filter_partition: culling against the visited mask over all n vertices (the paper's bitmask,
  kept here as one byte per vertex, which numpy gathers faster than packed bits), then exact
  local duplicate culling (a scatter of item positions into a per-vertex slot array: the item
  whose position survives is the one kept, as warp/history culling keep one copy), then a stable
  counting sort by owner (the GPU kernel's bin layout).
- contract: status lookup against owned labels, duplicate culling among items received from
  several ranks, labeling, and the next vertex frontier.
- bottom_up (direction-optimizing levels, Beamer et al. 2012): the candidates (unlabeled owned
  vertices with in-edges) scan their in-neighbours in rounds of doubling width: round j tests
  row positions ``[2**j - 1, 2**(j + 1) - 1)`` of the candidates still unfound, against the
  global frontier unpacked to one byte per vertex. A candidate leaves at the round of its first
  hit, its parent that hit, so the slots tested are at most about twice those of a scan that
  stops at the first hit, in about log2(max degree) rounds. The found vertices are the next
  frontier queue (direct queue emission); the unfound candidates are kept for the next level
  when it is bottom-up too.

Invariants: after ``filter_partition`` every vertex is sent at most once per rank per search;
after ``contract`` and ``bottom_up`` every owned vertex is labeled at most once, with its BFS
level.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from ..comm.base import Bins
from ..constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ..graph import DistGraph
from ..partition import bin_by_owner, global_id, local_id, owner
from ..timing import HostTimer, NullTimer
from .base import EdgeFrontier, SearchState, frontier_bitmap_bytes

_EMPTY = np.zeros(0, dtype=np.int64)

DENSE_EXPAND_FRACTION = 0.3
"""Expansion gathers through one boolean pass over all local edges once the frontier's edges
exceed this fraction of them (about 1.5 ns per local edge against 5 ns per gathered edge for the
range gather, measured on a 2-core CI-class machine)."""


BOTTOM_UP_BLOCK = 16384
"""Bottom-up scans this many candidates through all their rounds at a time, so the adjacency
cache lines a round loads are still cached in the next (2 MiB L2: about 1.6x faster on kron 20)."""


def _gather_ranges(starts: np.ndarray, lengths: np.ndarray, total: int | None = None) -> np.ndarray:
    """Indices ``starts[i] .. starts[i] + lengths[i] - 1`` for every i, concatenated
    (``total``: ``lengths.sum()`` when the caller has it)."""
    total = int(lengths.sum()) if total is None else total
    if total == 0:
        return _EMPTY
    ends = np.cumsum(lengths)
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


def _first_of_each(values: np.ndarray, slot: np.ndarray) -> np.ndarray:
    """Boolean mask keeping exactly one item per distinct value (``slot``: scratch over values)."""
    positions = np.arange(values.shape[0], dtype=slot.dtype)
    slot[values] = positions
    return slot[values] == positions


class NumpyBackend:
    """Vectorized numpy stages; the reference every other backend is compared with."""

    name = "numpy"
    xp = np
    small_frontier_limit = 0  # the host stages have no launch cost to save
    replica_limit_bytes = 0  # so no replicated small-frontier path either
    peer_levels = False  # nor fused levels through peer memory

    def run_small_levels(
        self, graph: DistGraph, state: SearchState, level: int, max_frontier: int
    ) -> int:
        return 0

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def make_timer(self, enabled: bool) -> HostTimer | NullTimer:
        return HostTimer() if enabled else NullTimer()

    def start(self, graph: DistGraph, source: int, predecessors: bool) -> SearchState:
        nlocal = graph.nlocal
        labels = np.full(nlocal, UNREACHED, dtype=DISTANCE_DTYPE)
        preds = np.full(nlocal, UNREACHED, dtype=PREDECESSOR_DTYPE) if predecessors else None
        visited_mask = np.zeros(graph.n, dtype=np.bool_)
        visited_mask[source] = True  # every rank knows the source is labeled
        slot_dtype = np.int32 if max(graph.num_local_edges, graph.n) < 2**31 else np.int64
        scratch = {
            "filter_slot": np.empty(graph.n, dtype=slot_dtype),
            "contract_slot": np.empty(nlocal, dtype=slot_dtype) if graph.size > 1 else None,
        }
        frontier = _EMPTY
        if owner(source, graph.size) == graph.rank:
            src_local = local_id(source, graph.size)
            labels[src_local] = 0
            if preds is not None:
                preds[src_local] = source
            frontier = np.array([src_local], dtype=np.int64)
        return SearchState(labels, preds, visited_mask, frontier, 1, scratch)

    def expansion_strips(self, graph: DistGraph, state: SearchState) -> int:
        return 1  # host memory: the whole edge frontier at once

    def expand(self, graph: DistGraph, state: SearchState, strip: int = 0) -> EdgeFrontier:
        if strip != 0:
            raise ValueError(f"strip {strip}: the numpy backend expands in one strip")
        frontier = state.vertex_frontier
        starts, lengths, total = _frontier_rows(graph, state)
        if total > DENSE_EXPAND_FRACTION * graph.num_local_edges:
            in_frontier = np.zeros(graph.nlocal, dtype=np.bool_)
            in_frontier[frontier] = True
            vertices = graph.column_indices[np.repeat(in_frontier, _degrees(graph))]
            frontier = np.sort(frontier)  # the order in which the boolean pass emits rows
            lengths = graph.row_offsets[frontier + 1] - graph.row_offsets[frontier]
        else:
            vertices = graph.column_indices[_gather_ranges(starts, lengths, total)]
        parents = None
        if state.preds is not None:
            parents = np.repeat(global_id(frontier, graph.rank, graph.size), lengths)
        return EdgeFrontier(vertices, parents)

    def filter_partition(self, state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins:
        vertices, parents = edges.vertices, edges.parents
        unvisited = np.flatnonzero(~state.visited_mask[vertices])  # (gathers beat bool masks)
        vertices = vertices[unvisited]
        keep = np.flatnonzero(_first_of_each(vertices, state.scratch["filter_slot"]))
        vertices = vertices[keep]
        state.visited_mask[vertices] = True
        payload = () if parents is None else (parents[unvisited[keep]],)
        offsets, vertices, payload = bin_by_owner(np, vertices, nbins, *payload)
        return Bins(offsets, vertices, payload[0] if payload else None)

    def contract_local(self, graph: DistGraph, state: SearchState, bins: Bins, level: int) -> None:
        """Nothing: on the host the exchange has no device time to overlap."""

    def contract(self, graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
        local = local_id(received.vertices.astype(np.int64, copy=False), graph.size)
        unlabeled = np.flatnonzero(state.labels[local] == UNREACHED)
        local = local[unlabeled]
        parents = None if received.parents is None else received.parents[unlabeled]
        if graph.size > 1:  # several ranks may have sent the same vertex
            keep = _first_of_each(local, state.scratch["contract_slot"])
            local = local[keep]
            parents = None if parents is None else parents[keep]
            state.visited_mask[global_id(local, graph.rank, graph.size)] = True
        state.labels[local] = level
        if state.preds is not None:
            state.preds[local] = parents
        state.vertex_frontier = local
        state.frontier_size = int(local.shape[0])

    # --- direction-optimizing levels (Beamer et al. 2012) ---------------------------------------

    def frontier_edges(self, graph: DistGraph, state: SearchState) -> int:
        return _frontier_rows(graph, state)[2] if state.frontier_size else 0

    def unexplored(self, graph: DistGraph, state: SearchState) -> tuple[int, int]:
        unlabeled = state.labels == UNREACHED
        degrees = np.diff(graph.row_offsets)
        return int(np.count_nonzero(unlabeled)), int(degrees[unlabeled].sum())

    def frontier_bitmap(self, graph: DistGraph, state: SearchState) -> np.ndarray:
        flags = np.zeros(8 * frontier_bitmap_bytes(graph.n, graph.size), dtype=np.bool_)
        flags[state.vertex_frontier] = True
        return np.packbits(flags, bitorder="little")

    def mark_visited(self, graph: DistGraph, state: SearchState, frontier: np.ndarray) -> None:
        state.visited_mask |= _unpack_gathered(frontier, graph)

    def bottom_up(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: SearchState,
        frontier: np.ndarray,
        level: int,
    ) -> int:
        size = graph.size
        in_frontier = _unpack_gathered(frontier, graph)
        if size > 1:  # the vertices other ranks labeled last level, for later top-down filters
            state.visited_mask |= in_frontier
        candidates = self._candidates(in_graph, state, level)
        found, parents, unfound, inspected = _scan_in_neighbours(in_graph, candidates, in_frontier)
        state.scratch["bottom_up_candidates"] = (level, unfound)
        state.labels[found] = level
        if state.preds is not None:
            state.preds[found] = parents
        state.visited_mask[global_id(found, graph.rank, size)] = True
        state.vertex_frontier = found
        state.frontier_size = int(found.shape[0])
        return inspected

    @staticmethod
    def _candidates(in_graph: DistGraph, state: SearchState, level: int) -> np.ndarray:
        """Unlabeled owned vertices with in-edges (kept from the last level if it was bottom-up)."""
        kept = state.scratch.get("bottom_up_candidates")
        if kept is not None and kept[0] == level - 1:
            return kept[1]
        offsets = in_graph.row_offsets
        return np.flatnonzero((state.labels == UNREACHED) & (offsets[1:] != offsets[:-1]))


def _frontier_rows(graph: DistGraph, state: SearchState) -> tuple[np.ndarray, np.ndarray, int]:
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


_DEGREES: dict[int, np.ndarray] = {}


def _degrees(graph: DistGraph) -> np.ndarray:
    """Out-degrees of the owned vertices, kept while ``graph`` lives."""
    degrees = _DEGREES.get(id(graph))
    if degrees is None:
        degrees = _DEGREES[id(graph)] = graph.local_degrees()
        weakref.finalize(graph, _DEGREES.pop, id(graph), None)
    return degrees


def _scan_in_neighbours(
    in_graph: DistGraph, candidates: np.ndarray, in_frontier: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Find each candidate's first in-neighbour in the frontier (``_scan_block`` by blocks).

    Returns (found local ids, their parents as global ids, the candidates left unfound, the
    number of neighbour slots tested).
    """
    found, parents, unfound, inspected = [_EMPTY], [_EMPTY], [_EMPTY], 0
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
    found_parts, parent_parts = [_EMPTY], [columns[:0]]
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


def _unpack_gathered(frontier: np.ndarray, graph: DistGraph) -> np.ndarray:
    """The all-gathered ``(size, bytes)`` frontier bitmaps as one bool per global vertex."""
    bits = np.unpackbits(frontier, axis=1, bitorder="little")  # row r, bit k: v = k*size + r
    return (bits[0] if graph.size == 1 else bits.T.reshape(-1))[: graph.n].view(np.bool_)
