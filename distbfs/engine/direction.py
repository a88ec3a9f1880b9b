"""Which direction the next level runs (Beamer, Asanović & Patterson, SC 2012), and the
termination test that feeds it.

Every level ends with one all-reduce: the level barrier and the termination test. Under the
direction-optimizing strategy it sums a small vector (frontier vertices n_f, frontier out-edges
m_f, out-edges of the unlabeled vertices m_u, slots tested bottom-up) that also feeds the
heuristic, so a level has exactly two collectives: bins or bitmap, then that all-reduce. Every
rank decides from the same all-reduced numbers, so all run the same directions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from .strategy import DEFAULT_ALPHA, DEFAULT_BETA, NamedChoice


class Direction(NamedChoice):
    """The direction of one level (``Direction.TOP_DOWN == "top_down"``)."""

    TOP_DOWN = "top_down"
    BOTTOM_UP = "bottom_up"


TOP_DOWN, BOTTOM_UP = Direction.TOP_DOWN, Direction.BOTTOM_UP

GROWTH = 2.0
"""Top-down -> bottom-up only while the frontier grows at least this much per level (Beamer's
"growing", made strict: the exploding frontiers of low-diameter graphs, not the slowly widening
ones of meshes and road maps, on which bottom-up tests many more edges than top-down expands)."""


@dataclass
class FrontierCounts:
    """The global numbers the direction heuristic reads, the same on every rank (from the
    level's all-reduce): the frontier's vertices n_f and out-edges m_f, the previous frontier's
    vertices, the out-edges m_u and number n_u of the unlabeled vertices, and what the last
    bottom-up level showed: whether it lost (tested more slots than top-down would have
    expanded edges) and its realized alpha (m_u at its start / slots it tested). At level 0 the
    frontier is the sources: n_f of them, n_u = n - n_f; a search from several sources also
    sums their m_f and m_u (``DirectionOptimizing``), while one source leaves m_f = 0 standing
    in (its level 0 is top-down whatever m_f: see ``choose_direction``)."""

    n: int
    unvisited: int
    frontier: int = 1
    frontier_edges: int = 0
    previous: int = 0
    unexplored_edges: int = 0
    bottom_up_lost: bool = False
    seen_alpha: float = math.inf

    def advance(self, frontier: int, frontier_edges: int, unexplored: int, inspected: int) -> None:
        """The next frontier (just labeled) replaces the current one. ``inspected``: slots the
        level just run tested bottom-up (0 after a top-down level)."""
        if inspected:
            self.bottom_up_lost = inspected > self.frontier_edges
            self.seen_alpha = self.unexplored_edges / inspected
        self.previous, self.frontier, self.frontier_edges = self.frontier, frontier, frontier_edges
        self.unexplored_edges = unexplored
        self.unvisited -= frontier

    def recount(self, frontier: int, frontier_edges: int, unexplored: int, unvisited: int) -> None:
        """Everything recounted from the labels (after fused levels, which keep no counts); the
        frontier before the last fused level is unknown: ``previous`` = 0."""
        self.frontier, self.frontier_edges = frontier, frontier_edges
        self.unexplored_edges, self.unvisited = unexplored, unvisited
        self.previous, self.bottom_up_lost, self.seen_alpha = 0, False, math.inf


def choose_direction(
    direction: Direction | str,
    counts: FrontierCounts,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
) -> Direction:
    """The direction of the next level: Beamer's heuristic (SC 2012) with three safeguards.

    Top-down -> bottom-up when all of:

    - m_f > m_u / alpha (Beamer: the frontier's out-edges against the out-edges of the
      unlabeled vertices, of which early exits are expected to test about 1 / alpha);
    - m_f > n_u: a bottom-up level touches every unlabeled vertex at least once (so level 0
      from a single source, whose m_f is at most n - 1 = n_u, is always top-down);
    - the frontier at least doubled (``GROWTH``; Beamer: "growing"): meshes and road maps
      widen slowly and keep top-down, Kronecker and social graphs explode.

    Bottom-up -> top-down when the frontier shrinks below n / beta vertices (Beamer), or when
    the last bottom-up level lost, testing more slots than top-down would have expanded edges,
    and the test above fails with alpha lowered to the m_u / slots that level realized: Beamer's
    estimate fails where most unlabeled vertices have no frontier neighbour (clustered social
    graphs, directed graphs that reach few of their vertices), and this bounds the loss.
    ``alpha = 0`` never leaves top-down; a huge ``alpha`` goes bottom-up at the first level
    that passes the two safeguards; a huge ``beta`` stays bottom-up unless a level loses; a
    tiny one comes back as soon as the frontier shrinks.
    """
    c = counts
    if direction == TOP_DOWN or c.bottom_up_lost:
        if c.frontier < GROWTH * c.previous or c.frontier_edges <= c.unvisited:
            return TOP_DOWN
        worth = c.frontier_edges * min(alpha, c.seen_alpha) > c.unexplored_edges
        return BOTTOM_UP if worth else TOP_DOWN
    return TOP_DOWN if c.frontier < c.previous and c.frontier * beta < c.n else BOTTOM_UP


class TopDownOnly:
    """Termination of the top-down strategies: one all-reduce of the next frontier's size, and
    of its out-edges m_f where the plan may run a level over the gathered frontier (its
    ``inbound`` rows; ``SearchPlan.gathers`` reads m_f)."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan
        self.edges: int | None = None  # the current frontier's m_f over all ranks, if summed

    def choose(self, direction: Direction) -> Direction:
        return TOP_DOWN

    def end_level(self, state: Any, direction: Direction, inspected: int) -> int:
        """The global size of the frontier just labeled (the level barrier)."""
        return self._sum(state)

    def after_fused(self, state: Any) -> int:
        """The global size of the frontier after fused levels."""
        return self._sum(state)

    def _sum(self, state: Any) -> int:
        plan = self.plan
        if plan.inbound is None:
            return plan.comm.allreduce(state.frontier_size)
        edges = plan.backend.frontier_edges(plan.graph, state)  # free after a level's labels
        mine = np.array([state.frontier_size, edges], np.int64)
        size, self.edges = plan.comm.allreduce(mine).tolist()
        return size

    def frontier_edges(self) -> int | None:
        """The current frontier's out-edges over all ranks where already summed (a plan with
        inbound rows), else None."""
        return self.edges


class DirectionOptimizing:
    """Termination and heuristic input of the direction-optimizing strategy: each level's
    all-reduce sums (n_f, m_f, m_u, slots tested) into ``counts``; this rank keeps its own m_u
    (its unlabeled vertices' out-edges) by subtracting each new frontier's out-edges. A search
    from ``sources`` > 1 vertices starts with their m_f and m_u summed (one all-reduce): many
    sources may make level 0 bottom-up. A search from one source whose level 0 the fused path
    takes counts nothing at the start: that level is top-down whatever m_f, and m_u is recounted
    after it (``after_fused``), or after the level should it run in two phases after all."""

    def __init__(self, plan: Any, state: Any, sources: int = 1) -> None:
        self.plan = plan
        graph, backend = plan.graph, plan.backend
        self.counts = FrontierCounts(graph.n, unvisited=graph.n - sources, frontier=sources)
        self.unexplored: int | None = None  # this rank's m_u (None: recounted when needed)
        self.summed = False  # counts.frontier_edges is the current frontier's m_f
        if sources == 1 and plan.fused.takes(0, sources):
            return
        edges = backend.frontier_edges(graph, state)
        self.unexplored = graph.num_local_edges - edges
        if sources > 1:
            summed = plan.comm.allreduce(np.array([edges, self.unexplored], np.int64)).tolist()
            self.counts.frontier_edges, self.counts.unexplored_edges = summed
            self.summed = True

    def choose(self, direction: Direction) -> Direction:
        return choose_direction(direction, self.counts, self.plan.alpha, self.plan.beta)

    def end_level(self, state: Any, direction: Direction, inspected: int) -> int:
        """One all-reduce: the level barrier, the termination test and the heuristic's input."""
        graph, backend = self.plan.graph, self.plan.backend
        edges = backend.frontier_edges(graph, state)
        if self.unexplored is None:  # level 0 was the fused path's, and ran in two phases
            self.unexplored = backend.unexplored(graph, state)[1]
        else:
            self.unexplored -= edges
        inspected = inspected if direction == BOTTOM_UP else 0
        mine = np.array([state.frontier_size, edges, self.unexplored, inspected], np.int64)
        next_size, *totals = self.plan.comm.allreduce(mine).tolist()
        self.counts.advance(next_size, *totals)
        self.summed = True
        return next_size

    def after_fused(self, state: Any) -> int:
        """Fused levels keep no counts: when the search goes on, recount everything from the
        labels (one more all-reduce)."""
        next_size = self.plan.comm.allreduce(state.frontier_size)
        if next_size:
            graph, backend = self.plan.graph, self.plan.backend
            unvisited, self.unexplored = backend.unexplored(graph, state)
            edges = backend.frontier_edges(graph, state)
            mine = np.array([state.frontier_size, edges, self.unexplored, unvisited], np.int64)
            self.counts.recount(*self.plan.comm.allreduce(mine).tolist())
            self.summed = True
        return next_size

    def frontier_edges(self) -> int | None:
        """The current frontier's out-edges over all ranks (m_f), summed by the last level's
        all-reduce; None before any (one source whose level 0 the fused path takes)."""
        return self.counts.frontier_edges if self.summed else None
