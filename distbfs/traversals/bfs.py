"""Breadth-first search: the level loop of Merrill, Garland & Grimshaw 2012, section 6.1, on
any number of ranks, with the direction-optimizing levels of Beamer, Asanović & Patterson
(SC 2012).

Top-down level, every rank: expands its vertex frontier into an edge frontier; filters it against
its visited mask and culls duplicates, binning the survivors by owner (fused filter+partition);
exchanges the bins (vertex, parent) with every other rank; contracts what it received (status
lookup against its own labels) into the next vertex frontier. The own bin never travels, so a
backend may contract it before the exchange (``contract_local``) while the other bins move.
Inbound level (a top-down level of many long rows, ``SearchPlan.gathers``, where the
graph's inbound rows fit): the frontier is all-gathered as bitmaps, as a bottom-up level's, and
every rank expands all of it through its inbound rows, the edges into the vertices it owns;
so every vertex is reached, filtered and contracted by its owner alone, where a bin exchange
would send a vertex once for every rank that reached it.
Bottom-up level, every rank: packs its frontier into a bitmap; all-gathers the bitmaps (n/8
bytes: the global frontier); every unlabeled owned vertex scans its in-neighbours and stops at
the first one in the frontier, which becomes its parent. Small top-down frontiers go to the
plan's fused path (many levels per launch). A search from one vertex of a long row (a hub)
starts with that row broadcast to every rank, which labels the neighbours it owns
(``broadcast_level``) and builds the next frontier's bitmaps from it, where a bottom-up level
would all-gather them. One all-reduce per level is the level barrier and the termination test
(``distbfs.engine.direction``). The stages come from a backend, the exchanges from a
communicator: this module imports neither cupy nor mpi4py.

Several sources: all of them form level 0 (each labeled 0, its own parent), so every level is
the distance to the nearest source. A depth limit D stops the search once level D is labeled:
levels past D are never run (the fused paths stop there too), and farther vertices stay
UNREACHED. A search told to stop at its tail (``tail``: connected components' search for the
giant component) stops where a direction-optimizing search turns top-down again after bottom-up
levels, its frontier labeled: on a low-diameter graph the levels left reach a few vertices each
and cost a level barrier apiece. Either way every unreached vertex adjacent to a reached one is
adjacent to the last frontier only.

Small graphs on several ranks (``SearchPlan.whole``): every rank holds a copy and runs each
search whole on it, as one rank, with no exchange, then keeps its own vertices' labels and
parents. Every rank computes the same labels; a parent is any valid one, so the parts of
several ranks' trees form a valid tree.

A search is its levels (``run_levels``); the level table (``level_table``: the queues released,
the log summed over ranks, a replica's share made contiguous) is statistics, made after a caller
has taken the search's time.

Invariants: labels are final when set (level-synchronous search); the loop ends after the first
level whose global frontier is empty, or once level D is labeled; every rank runs the same
number of levels, in the same directions (decided from all-reduced numbers only).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..engine.direction import BOTTOM_UP, TOP_DOWN
from ..engine.levels import LevelLog, LevelStats
from ..engine.plan import SearchPlan, distinct_sources, level_limit
from ..partition import contiguous, owned_view, owner


@dataclass
class SearchResult:
    """This rank's part of one search: labels and preds of its owned vertices (local order);
    ``sources``: the distinct sources, sorted (host int64); ``state``: the search's (the
    replica's, for a search run whole on every rank: ``own_share``)."""

    sources: Any
    distances: Any
    predecessors: Any | None
    levels: Sequence[LevelStats]
    state: Any

    @property
    def source(self) -> int | tuple[int, ...]:
        """The source (an int) of a single-source search, else the sources (a tuple)."""
        ids = [int(v) for v in self.sources]
        return ids[0] if len(ids) == 1 else tuple(ids)


@dataclass
class LevelRun:
    """A search whose levels have run (``run_levels``), before its level table
    (``level_table``): the plan that ran them (a plan's ``whole`` one for a search of the whole
    graph), the distinct sources, this rank's labels and parents (local order), the state, the
    level log, whether its depth limit or its tail stopped it with a frontier left
    (``at_limit``: farther vertices may remain), and whether its tail did (``tail``)."""

    plan: SearchPlan
    sources: Any
    distances: Any
    predecessors: Any | None
    state: Any
    log: LevelLog
    at_limit: bool = False
    tail: bool = False


def bfs_levels(
    plan: SearchPlan,
    sources: Sequence[int] | int,
    *,
    predecessors: bool = False,
    depth_limit: int | None = None,
    timer: Any = None,
) -> SearchResult:
    """Run one level-synchronous BFS from the global vertices ``sources`` (one or several), up
    to level ``depth_limit`` (None: no limit), and make its level table (collective)."""
    timer = plan.backend.make_timer(False) if timer is None else timer
    run = run_levels(plan, sources, predecessors=predecessors, depth_limit=depth_limit, timer=timer)
    return level_table(run, timer)


def run_levels(
    plan: SearchPlan,
    sources: Sequence[int] | int,
    *,
    predecessors: bool = False,
    depth_limit: int | None = None,
    timer: Any = None,
    tail: bool = False,
) -> LevelRun:
    """The levels of one BFS from ``sources`` up to level ``depth_limit``, or where ``tail``
    until it turns top-down after bottom-up levels (collective): the search itself, whose time
    a caller takes before the level table is made."""
    timer = plan.backend.make_timer(False) if timer is None else timer
    if plan.whole is not None:
        options = dict(predecessors=predecessors, depth_limit=depth_limit, timer=timer, tail=tail)
        return own_share(plan, run_levels(plan.whole, sources, **options))
    sources, limit = distinct_sources(sources), level_limit(depth_limit)
    state = plan.start(sources, predecessors)
    termination = plan.termination(state, len(sources))
    log = LevelLog()
    level, frontier_size, direction = 0, len(sources), TOP_DOWN
    row_edges = plan.broadcast_rows.get(int(sources[0]), 0) if len(sources) == 1 else 0
    tailed = False
    while frontier_size > 0 and level < limit:
        direction, before = termination.choose(direction), direction
        if tail and before == BOTTOM_UP and direction == TOP_DOWN:
            tailed = True  # the tail: its frontier labeled, not expanded
            break
        broadcast = level == 0 and row_edges > 0  # one source's long row, on every rank
        if direction == TOP_DOWN and not broadcast and plan.fused.takes(level, frontier_size):
            with timer.phase("contract_expand"):
                edges = termination.frontier_edges()
                span = plan.fused.run(plan, state, sources, level, frontier_size, limit, edges)
            if span:
                with timer.phase("termination"):
                    next_size = termination.after_fused(state)
                log.fused(level, frontier_size, span)
                timer.next_level()
                level, frontier_size = level + span, next_size
                continue
        if broadcast:
            counters = broadcast_level(plan, state, timer, int(sources[0]), row_edges)
        elif direction == BOTTOM_UP:
            counters = bottom_up_level(plan, state, timer, level)
        elif plan.gathers(frontier_size, termination.frontier_edges()):
            counters = inbound_level(plan, state, timer, level)
        else:
            counters = top_down_level(plan, state, timer, level)
        with timer.phase("termination"):
            next_size = termination.end_level(state, direction, counters[-1])
        if plan.shares(frontier_size, next_size, termination.frontier_edges()):
            share_frontier(plan, state, timer, level + 1)
        log.level(level, frontier_size, direction, counters)
        timer.next_level()
        level, frontier_size = level + 1, next_size
    if frontier_size > 0:  # the depth limit or the tail: a frontier labeled, not expanded
        log.at_limit(level, frontier_size)
    at_limit = frontier_size > 0
    return LevelRun(plan, sources, state.labels, state.preds, state, log, at_limit, tailed)


def level_table(run: LevelRun, timer: Any) -> SearchResult:
    """The ``SearchResult`` of ``run`` (collective): its queues released, its level log
    summed over the ranks of the plan that ran it into the level table (statistics) and its
    labels made contiguous; no part of the search's time."""
    plan, state = run.plan, run.state
    fused = plan.backend.fused_level_log(state)
    release_queues(plan, state)
    levels = run.log.stats(plan.comm, timer, fused)
    labels, preds = (contiguous(plan.backend.xp, a) for a in (run.distances, run.predecessors))
    return SearchResult(run.sources, labels, preds, levels, state)


def own_share(plan: SearchPlan, whole: LevelRun) -> LevelRun:
    """This rank's part of a search of the whole graph (every vertex, in global order): its
    vertices' labels and parents in local order (``v // size`` for ``v % size == rank``), as
    strided views of the replica's arrays, which are in memory when the search ends
    (``level_table`` makes them contiguous, after the search's time). The level table is the
    whole search's, the same on every rank."""
    rank, size = plan.comm.rank, plan.comm.size
    labels = owned_view(whole.distances, rank, size)
    preds = owned_view(whole.predecessors, rank, size)
    return replace(whole, distances=labels, predecessors=preds)


def top_down_level(plan: SearchPlan, state: Any, timer: Any, level: int) -> list[int]:
    """Expand, filter+partition, exchange bins, contract (section 6.1); this rank's COUNTERS."""
    graph, backend, comm = plan.graph, plan.backend, plan.comm
    bins, edge_frontiers = expand_and_filter(plan, graph, state, timer, comm.size)
    with timer.phase("contract"):  # the own bin never travels: it is labeled meanwhile
        backend.contract_local(graph, state, bins, level + 1)
    with timer.phase("exchange"):
        received = comm.exchange_bins(bins, overlap=True)
    with timer.phase("contract"):
        backend.contract(graph, state, received, level + 1)
    expanded = sum(edges.size for edges in edge_frontiers)
    sent = bins.counts
    remote = int(sent.sum() - sent[comm.rank])
    received_count = int(received.offsets[-1])
    return [expanded, int(sent.sum()), remote, received_count, state.frontier_size, expanded]


def inbound_level(plan: SearchPlan, state: Any, timer: Any, level: int) -> list[int]:
    """A top-down level over the all-gathered frontier (``SearchPlan.gathers``): frontier queue
    -> bitmap, all-gather of the bitmaps (which also mark the visited mask), then every rank
    expands every frontier vertex through its inbound rows (``plan.inbound``: the edges into
    its own vertices), filters and contracts: each vertex is reached, kept and labeled by its
    owner alone, and no bins travel; this rank's COUNTERS."""
    graph, backend = plan.graph, plan.backend
    frontier = gathered_frontier(plan, state, timer, level)
    with timer.phase("expand"):
        backend.mark_visited(graph, state, frontier)
        backend.inbound_frontier(graph, plan.inbound, state, frontier)
    bins, edge_frontiers = expand_and_filter(plan, plan.inbound.graph, state, timer, 1)
    with timer.phase("contract"):
        backend.contract(graph, state, bins, level + 1)
    expanded = sum(edges.size for edges in edge_frontiers)
    kept = int(bins.offsets[-1])
    return [expanded, kept, 0, kept, state.frontier_size, expanded]


def expand_and_filter(
    plan: SearchPlan, rows: Any, state: Any, timer: Any, nbins: int
) -> tuple[Any, list[Any]]:
    """Expand the frontier through ``rows`` and filter it into ``nbins`` owner bins; the bins
    and the edge frontiers (their sizes are read after the level's contraction, whose read of
    the counters they share). A frontier with more out-edges than the backend's edge queue
    holds is expanded and filtered in strips (``expansion_strips``); the survivors of every
    strip are binned after the last."""
    backend, bins, edge_frontiers = plan.backend, None, []
    for strip in range(backend.expansion_strips(rows, state)):
        with timer.phase("expand"):
            edge_frontier = backend.expand(rows, state, strip)
        with timer.phase("filter_partition"):
            bins = backend.filter_partition(state, edge_frontier, nbins)
        edge_frontiers.append(edge_frontier)
    assert bins is not None, "filter_partition returns the bins after the last strip"
    return bins, edge_frontiers


def bottom_up_level(plan: SearchPlan, state: Any, timer: Any, level: int) -> list[int]:
    """Frontier queue -> bitmap, all-gather of the bitmaps, bottom-up scan; this rank's COUNTERS."""
    graph, backend = plan.graph, plan.backend
    frontier = gathered_frontier(plan, state, timer, level)
    with timer.phase("bottom_up"):
        inspected = backend.bottom_up(graph, plan.in_graph, state, frontier, level + 1)
    return [0, 0, 0, 0, state.frontier_size, inspected]


def gathered_frontier(plan: SearchPlan, state: Any, timer: Any, label: int) -> Any:
    """The frontier of the vertices labeled ``label`` as every rank's bitmap (``(size,
    bytes)``, the global frontier; n/8 bytes): this rank's queue -> its bitmap, all-gathered;
    or, where a broadcast level labeled them (``state.row``), built from the row every rank
    holds, with no all-gather."""
    if state.row is not None and state.row[0] == label:
        _, source, row = state.row
        with timer.phase("bitmap"):
            return plan.backend.row_frontier(plan.graph, state, row, source)
    with timer.phase("bitmap"):
        bitmap = plan.backend.frontier_bitmap(plan.graph, state)
    with timer.phase("exchange"):
        return plan.comm.allgather_equal(bitmap)


def broadcast_level(plan: SearchPlan, state: Any, timer: Any, source: int, edges: int) -> list[int]:
    """Level 0 from a vertex of a long row (``SearchPlan.broadcast_rows``: ``edges`` out-edges)
    on several ranks: its owner broadcasts the row (``GraphResources.held_row``: once for
    repeated searches from it) and every rank labels the neighbours it owns at once, where the
    owner alone would expand, filter and send them while the others wait for its bins (the
    hubs' "delegates" of Pearce, Gokhale & Amato, IPDPS 2013: every rank visits a hub's
    edges); this rank's COUNTERS."""
    graph, backend, comm = plan.graph, plan.backend, plan.comm
    with timer.phase("exchange"):
        row = plan.resources.held_row(source, edges, state)
    with timer.phase("contract"):
        backend.contract_row(graph, state, row, source, 1)
    state.row = (1, source, row)  # the next frontier, which every rank then holds whole
    expanded = edges if comm.rank == owner(source, comm.size) else 0
    return [expanded, 0, 0, 0, state.frontier_size, expanded]


def share_frontier(plan: SearchPlan, state: Any, timer: Any, label: int) -> None:
    """All-gather the new frontier's bitmap (its vertices labeled ``label``) into every rank's
    visited mask (``SHARE_FRONTIER``), so the next level does not resend what other ranks
    labeled."""
    frontier = gathered_frontier(plan, state, timer, label)
    plan.backend.mark_visited(plan.graph, state, frontier)


def release_queues(plan: SearchPlan, state: Any) -> None:
    """The search's queues go back (labels, predecessors and the visited mask stay), so what
    runs next (validation, statistics) has their memory."""
    state.scratch.clear()
    state.vertex_frontier = plan.backend.xp.empty(0, dtype=state.vertex_frontier.dtype)
