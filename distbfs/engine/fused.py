"""The fused small-frontier paths (Merrill et al. 2012, sections 5.2 and 5.4: contract-expand):
many levels run by one launch while the frontier is small, so high-diameter graphs do not pay
a launch, an exchange and a reduction per level. The search plan chooses one per graph:

- ``NoFusedLevels``: the strategy or the backend has none; every level runs in two phases.
- ``OneRankFusedLevels``: one rank, the backend's fused kernel on its CSR. Several ranks that
  each hold a copy of a small graph (``backend.replica_limit_bytes``) search it whole, as one
  rank, and take this path on it (``SearchPlan.whole``).
- ``PeerFusedLevels``: several ranks of one node whose GPUs map each other's memory: the fused
  kernel runs on every GPU at once, the items and the level barriers going through peer memory
  (the mailboxes the communicator maps: ``map_peer_memory``).

Each ``run`` returns how many levels ran (0: none; the level runs in two phases), the same on
every rank: the peer kernel's stop rule reads the same all-rank sums on every GPU. A run never
labels past the search's depth limit: ``run`` gets the level the search stops at (``limit``,
``UNLIMITED`` without one) and hands the backend ``max_levels = limit - level``, the levels it
may still label. ``edges``: the frontier's out-edges over all ranks where the caller has them
(the direction-optimizing counts), else None.

The peer path needs, before its launch, at most how many out-edges the whole entry frontier has
(its stop rule: no level of more edges than a mailbox segment holds). It takes them with no
collective where it can: ``edges`` when given, and a bound for one source at level 0 (its row
is not a long one, or the search would have broadcast it: ``out_degree_bound``); else one
all-reduce of every rank's count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..constants import UNLIMITED


class NoFusedLevels:
    """No fused path: every level runs in two phases."""

    def takes(self, level: int, frontier_size: int) -> bool:
        return False

    def run(
        self,
        plan: Any,
        state: Any,
        sources: np.ndarray,
        level: int,
        frontier_size: int,
        limit: int,
        edges: int | None = None,
    ) -> int:
        return 0


class OneRankFusedLevels:
    """One rank: the backend's fused kernel while the frontier holds at most ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def takes(self, level: int, frontier_size: int) -> bool:
        return frontier_size <= self.limit

    def run(
        self,
        plan: Any,
        state: Any,
        sources: np.ndarray,
        level: int,
        frontier_size: int,
        limit: int,
        edges: int | None = None,
    ) -> int:
        return plan.backend.run_small_levels(
            plan.graph, state, level, self.limit, max_levels=limit - level
        )


class PeerFusedLevels:
    """Several ranks of one node: fused levels on every GPU at once through peer memory, while
    the whole frontier holds at most ``limit`` vertices per rank."""

    def __init__(self, limit: int, mailbox: Any, ranks: int) -> None:
        self.mailbox = mailbox
        self.whole = min(limit * ranks, UNLIMITED)  # contract_expand: no limit at all

    def takes(self, level: int, frontier_size: int) -> bool:
        return frontier_size <= self.whole

    def run(
        self,
        plan: Any,
        state: Any,
        sources: np.ndarray,
        level: int,
        frontier_size: int,
        limit: int,
        edges: int | None = None,
    ) -> int:
        graph, backend = plan.graph, plan.backend
        if edges is None and level == 0 and len(sources) == 1:
            edges = plan.resources.out_degree_bound(int(sources[0]))
        if edges is None:
            edges = plan.comm.allreduce(backend.frontier_edges(graph, state))  # m_f, all ranks
        entry = (frontier_size, edges)
        return backend.run_peer_levels(
            graph, state, level, self.whole, self.mailbox, entry, max_levels=limit - level
        )


FusedPath = NoFusedLevels | OneRankFusedLevels | PeerFusedLevels


def choose_fused_path(resources: Any, limit: int) -> FusedPath:
    """The fused path for frontiers of at most ``limit`` vertices (0: none), collective: on
    several ranks the graph's mapped peer mailbox (``GraphResources``) if it has one, else
    none."""
    if limit == 0:
        return NoFusedLevels()
    if resources.comm.size == 1:
        return OneRankFusedLevels(limit)
    mailbox = resources.peer_mailbox()
    if mailbox is not None:
        return PeerFusedLevels(limit, mailbox, resources.comm.size)
    return NoFusedLevels()
