"""The BFS level loop of Merrill, Garland & Grimshaw 2012, section 6.1, on any number of ranks.

Each level, every rank: expands its vertex frontier into an edge frontier; filters it against its
visited mask and culls duplicates, binning the survivors by owner (fused filter+partition);
exchanges bins with every other rank; contracts what it received (status lookup against its own
labels) into the next vertex frontier. An all-reduce of the frontier sizes is the level barrier
and the termination test. The stages come from a backend, the exchange from a communicator: this
module imports neither cupy nor mpi4py.

Invariants: labels are final when set (level-synchronous search); the loop ends after the first
level whose global frontier is empty; every rank runs the same number of levels.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backends.base import Backend, SearchState
from .comm.base import Communicator
from .graph import DistGraph

# Per-level counters kept on each rank and summed over ranks once, after the search.
COUNTERS = ("edges_expanded", "items_sent", "items_sent_remote", "items_received", "discovered")


@dataclass
class LevelStats:
    """One level, summed over ranks. ``seconds`` holds the slowest rank's time per phase."""

    level: int
    frontier: int
    edges_expanded: int
    items_sent: int
    items_sent_remote: int
    items_received: int
    discovered: int
    seconds: dict[str, float] = field(default_factory=dict)


@dataclass
class SearchResult:
    """This rank's part of one search: labels and preds of its owned vertices (local order)."""

    source: int
    distances: Any
    predecessors: Any | None
    levels: list[LevelStats]
    state: SearchState


def bfs_levels(
    graph: DistGraph,
    source: int,
    backend: Backend,
    comm: Communicator,
    *,
    predecessors: bool = False,
    timer: Any = None,
) -> SearchResult:
    """Run one level-synchronous BFS from global vertex ``source`` (collective)."""
    timer = backend.make_timer(False) if timer is None else timer
    state = backend.start(graph, source, predecessors)
    counts: list[list[int]] = []
    frontiers: list[int] = []
    level, frontier_size = 0, 1
    while frontier_size > 0:
        with timer.phase("expand"):
            edge_frontier = backend.expand(graph, state)
        with timer.phase("filter_partition"):
            bins = backend.filter_partition(state, edge_frontier, comm.size)
        with timer.phase("exchange"):
            received = comm.exchange_bins(bins)
        with timer.phase("contract"):
            backend.contract(graph, state, received, level + 1)
        with timer.phase("termination"):
            next_size = comm.allreduce(state.frontier_size)
        sent = bins.counts
        counts.append(
            [
                edge_frontier.size,
                int(sent.sum()),
                int(sent.sum() - sent[comm.rank]),
                int(received.offsets[-1]),
                state.frontier_size,
            ]
        )
        frontiers.append(frontier_size)
        timer.next_level()
        level, frontier_size = level + 1, next_size
    return SearchResult(
        source, state.labels, state.preds, _level_stats(comm, frontiers, counts, timer), state
    )


def _level_stats(
    comm: Communicator, frontiers: list[int], counts: list[list[int]], timer: Any
) -> list[LevelStats]:
    """Sum the per-level counters over ranks (one all-reduce) and take the slowest phase times."""
    totals = comm.allreduce(np.array(counts, dtype=np.int64).reshape(-1, len(COUNTERS)))
    phases = timer.per_level()
    names = sorted({name for level in phases for name in level})
    seconds = np.array([[lv.get(k, 0.0) for k in names] for lv in phases], dtype=np.float64)
    if seconds.size:
        seconds = comm.allreduce(seconds, op="max")
    stats = []
    for i, frontier in enumerate(frontiers):
        row = dict(zip(COUNTERS, (int(x) for x in totals[i]), strict=True))
        times = dict(zip(names, seconds[i].tolist(), strict=True)) if seconds.size else {}
        stats.append(LevelStats(level=i, frontier=frontier, seconds=times, **row))
    return stats
