"""Batched BFS: up to 64 breadth-first searches in one traversal, one bit lane each (MS-BFS: Then
et al., "The More the Merrier: Efficient Multi-Source Graph Traversal", VLDB 2015; iBFS: Liu &
Huang, SIGMOD 2016), on the striped graph with the engine's exchange.

Every owned vertex holds a 64-bit word per set (visited, frontier, found; bit i: the search
from ``sources[i]``; ``distbfs.backends.arrays.lanes``). A level moves whole words, so the
searches that reach a vertex at the same level share its edges: a push level sends each
frontier vertex's word along its out-edges as (neighbour, word) items, binned by owner,
exchanged and ORed into ``found`` at the owner (Merrill et al.'s expand -> partition -> exchange
-> contract, with an OR as the contraction); a pull level gathers every rank's frontier words
and lets each vertex not yet visited in every lane OR its in-neighbours' words (Beamer's
bottom-up, the early exit once all lanes are seen). Settling keeps the lanes new to each vertex,
writes their distance and makes them the next frontier. One all-reduce per level carries the
(vertex, lane) pairs found (termination) and the new frontier's out-edges m_f (direction: pull
while m_f exceeds the graph's edges / ``alpha``: ``LANES_ALPHA``).

Invariants: a lane's bit enters a vertex's visited word once, at its BFS level, so row i of the
distances is the BFS from ``sources[i]`` alone (duplicated sources give equal rows); every rank
runs the same levels in the same directions (decided from all-reduced numbers only). This
module imports neither cupy nor mpi4py.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..engine.direction import BOTTOM_UP, TOP_DOWN
from ..engine.levels import LevelLog, LevelStats
from ..engine.plan import level_limit

LANES_ALPHA = 4.0
"""Pull while the frontier's out-edges exceed the graph's edges / ``LANES_ALPHA``. Lower than a
single search's 15 (Beamer): a pull level stops reading a vertex's in-edges only once every lane
has reached it, so until most lanes have arrived it reads nearly every edge, while a push reads
the frontier's out-edges only (benchmarks/RESULTS.md, batched BFS)."""


@dataclass
class BatchSearch:
    """This rank's part of one batch: ``distances`` (lanes, owned vertices) int32, local order
    (the batch's other state is freed once it ends)."""

    sources: np.ndarray
    distances: Any
    levels: Sequence[LevelStats]


def batched_levels(
    resources: Any,
    sources: np.ndarray,
    *,
    depth_limit: int | None = None,
    alpha: float = LANES_ALPHA,
    timer: Any = None,
) -> BatchSearch:
    """BFS from each of ``sources`` (global ids, 1 to 64, duplicates allowed) at once, up to
    level ``depth_limit`` (None: no limit) (collective)."""
    backend, comm, graph = resources.backend, resources.comm, resources.graph
    timer = backend.make_timer(False) if timer is None else timer
    limit, edges = level_limit(depth_limit), comm.allreduce(graph.num_local_edges)
    state = backend.lanes_start(graph, sources, resources.backend_resources)
    log = LevelLog()
    level, active = 0, len(sources)  # (vertex, lane) pairs in the frontier, all ranks
    frontier_edges = comm.allreduce(state.frontier_edges)
    while active and level < limit:
        pull = frontier_edges * alpha > edges
        if pull:
            counters = pull_level(resources, state, timer)
        else:
            counters = push_level(resources, state, timer)
        with timer.phase("settle"):
            found = backend.settle_lanes(graph, state, level + 1)
        with timer.phase("termination"):
            totals = comm.allreduce(np.array([found, state.frontier_edges], dtype=np.int64))
        counters[4] = found
        log.level(level, active, BOTTOM_UP if pull else TOP_DOWN, counters)
        timer.next_level()
        level, active, frontier_edges = level + 1, int(totals[0]), int(totals[1])
    if active:  # the depth limit: level D labeled, its frontier not expanded
        log.at_limit(level, active)
    distances = backend.lanes_distances(graph, state)
    return BatchSearch(sources, distances, log.stats(comm, timer))


def push_level(resources: Any, state: Any, timer: Any) -> list[int]:
    """Frontier words along out-edges: expand and bin by owner -> exchange -> OR at the owner
    (one rank: expanded straight into the OR); this rank's COUNTERS (``distbfs.engine.levels``:
    items sent count what the bins held).
    """
    backend, comm, graph = resources.backend, resources.comm, resources.graph
    if comm.size == 1:  # the frontier's out-edges: settled with it
        with timer.phase("expand"):
            backend.push_lanes(graph, state)
        return [state.frontier_edges, 0, 0, 0, 0, state.frontier_edges]
    expanded = int(state.frontier_edges)
    with timer.phase("expand"):  # a backend may OR the words its own vertices get in place
        bins = backend.bin_lanes(graph, state, comm.size)
    with timer.phase("exchange"):
        received = comm.exchange_bins(bins)
    with timer.phase("contract"):
        backend.contract_lanes(graph, state, received)
    sent = bins.counts
    remote = int(sent.sum() - sent[comm.rank])
    return [expanded, int(sent.sum()), remote, int(received.offsets[-1]), 0, expanded]


def pull_level(resources: Any, state: Any, timer: Any) -> list[int]:
    """Every rank's frontier words gathered; each vertex ORs its in-neighbours' words (the
    edges a pull level reads are not counted); this rank's COUNTERS."""
    backend, comm, graph = resources.backend, resources.comm, resources.graph
    with timer.phase("exchange"):
        frontier = comm.allgather_equal(backend.frontier_words(graph, state))
    with timer.phase("bottom_up"):
        backend.pull_lanes(resources.in_neighbours(), state, frontier)
    return [0, 0, 0, 0, 0, 0]
