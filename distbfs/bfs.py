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

STRATEGIES = ("hybrid", "two_phase", "contract_expand")
"""How levels are run (section 5): ``two_phase`` runs every level as separate stages;
``contract_expand`` hands every level it can to the backend's fused one-block path;
``hybrid`` hands it the levels whose frontier is small (``backend.small_frontier_limit``) and runs
the others in two phases. The fused path exists on one rank of a backend that has one (CUDA);
elsewhere every strategy runs two phases."""

_UNLIMITED = 2**62

# Per-level counters kept on each rank and summed over ranks once, after the search.
COUNTERS = ("edges_expanded", "items_sent", "items_sent_remote", "items_received", "discovered")


@dataclass
class LevelStats:
    """One level (or ``span`` fused levels), summed over ranks; ``seconds``: slowest rank.

    A row of fused levels (``span`` levels run by one kernel) carries its first frontier only:
    the fused kernel keeps no other counters.
    """

    level: int
    frontier: int
    edges_expanded: int
    items_sent: int
    items_sent_remote: int
    items_received: int
    discovered: int
    span: int = 1
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
    strategy: str = "hybrid",
    timer: Any = None,
) -> SearchResult:
    """Run one level-synchronous BFS from global vertex ``source`` (collective)."""
    timer = backend.make_timer(False) if timer is None else timer
    fused_limit = _fused_frontier_limit(strategy, backend, comm)
    state = backend.start(graph, source, predecessors)
    rows: list[list[int]] = []  # level, frontier, span, then COUNTERS
    level, frontier_size = 0, 1
    while frontier_size > 0:
        if frontier_size <= fused_limit:
            with timer.phase("contract_expand"):
                span = backend.run_small_levels(graph, state, level, fused_limit)
            if span:
                rows.append([level, frontier_size, span, 0, 0, 0, 0, 0])
                timer.next_level()
                level, frontier_size = level + span, state.frontier_size
                continue
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
        remote = int(sent.sum() - sent[comm.rank])
        counters = [edge_frontier.size, int(sent.sum()), remote, int(received.offsets[-1])]
        rows.append([level, frontier_size, 1, *counters, state.frontier_size])
        timer.next_level()
        level, frontier_size = level + 1, next_size
    return SearchResult(source, state.labels, state.preds, _level_stats(comm, rows, timer), state)


def _fused_frontier_limit(strategy: str, backend: Backend, comm: Communicator) -> int:
    """Largest frontier handed to the fused path under ``strategy`` (0: never)."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy={strategy!r}: choose from {', '.join(STRATEGIES)}")
    if strategy == "two_phase" or comm.size > 1 or not backend.small_frontier_limit:
        return 0
    return backend.small_frontier_limit if strategy == "hybrid" else _UNLIMITED


def _level_stats(comm: Communicator, rows: list[list[int]], timer: Any) -> list[LevelStats]:
    """Sum the per-level counters over ranks (one all-reduce) and take the slowest phase times."""
    local = np.array(rows, dtype=np.int64).reshape(-1, 3 + len(COUNTERS))
    totals = comm.allreduce(local[:, 3:])
    phases = timer.per_level()
    names = sorted({name for level in phases for name in level})
    seconds = np.array([[lv.get(k, 0.0) for k in names] for lv in phases], dtype=np.float64)
    if seconds.size:
        seconds = comm.allreduce(seconds, op="max")
    stats = []
    for i, (level, frontier, span) in enumerate(local[:, :3].tolist()):
        counts = dict(zip(COUNTERS, (int(x) for x in totals[i]), strict=True))
        times = dict(zip(names, seconds[i].tolist(), strict=True)) if seconds.size else {}
        stats.append(LevelStats(level, frontier, span=span, seconds=times, **counts))
    return stats
