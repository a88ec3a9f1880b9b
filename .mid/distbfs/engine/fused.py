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
every rank: the fused levels of several ranks are checked to agree (one all-reduce). A run never
labels past the search's depth limit: ``run`` gets the level the search stops at (``limit``,
``UNLIMITED`` without one) and hands the backend ``max_levels = limit - level``, the levels it
may still label.
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
    ) -> int:
        graph, backend, comm = plan.graph, plan.backend, plan.comm
        edges = comm.allreduce(backend.frontier_edges(graph, state))  # m_f over all ranks
        entry = (frontier_size, edges)
        span = backend.run_peer_levels(
            graph, state, level, self.whole, self.mailbox, entry, max_levels=limit - level
        )
        return _agreed(comm, span)


def _agreed(comm: Any, span: int) -> int:
    """``span``, checked equal on every rank (each ran the same deterministic levels)."""
    most, fewest = comm.allreduce(np.array([span, -span], np.int64), op="max").tolist()
    if most != -fewest:
        raise RuntimeError(f"fused levels differ between ranks: {-fewest} to {most}")
    return span


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
