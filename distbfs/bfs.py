"""The BFS level loop of Merrill, Garland & Grimshaw 2012, section 6.1, on any number of ranks,
with the direction-optimizing levels of Beamer, Asanović & Patterson (SC 2012).

Top-down level, every rank: expands its vertex frontier into an edge frontier; filters it against
its visited mask and culls duplicates, binning the survivors by owner (fused filter+partition);
exchanges bins with every other rank; contracts what it received (status lookup against its own
labels) into the next vertex frontier. The own bin never travels, so a backend may contract it
before the exchange (``contract_local``) while the other bins move. Bottom-up level, every rank:
packs its frontier into a bitmap; all-gathers the bitmaps (n/8 bytes: the global frontier);
every unlabeled owned vertex scans its in-neighbours and stops at the first one in the
frontier, which becomes its parent.
One all-reduce per level is the level barrier and the termination test; under the
direction-optimizing strategy it sums a small vector (frontier vertices n_f, frontier out-edges
m_f, out-edges of unlabeled vertices m_u, slots tested bottom-up) that also feeds the direction
heuristic, so each level has exactly two collectives: bins or bitmap, then that all-reduce.
Small frontiers (hybrid and direction-optimizing) go to the backend's fused path, many levels
per launch: on one rank always, on several ranks from the source when every rank can keep the
whole graph (``replicated``: each runs the same levels on its copy, with no communication, and
keeps its own vertices' labels), otherwise on the ranks of one node together, exchanging
through peer memory (``peer_mailboxes``). The stages come from a backend, the exchanges from a
communicator: this module imports neither cupy nor mpi4py.

Invariants: labels are final when set (level-synchronous search); the loop ends after the first
level whose global frontier is empty; every rank runs the same number of levels, in the same
directions (decided from all-reduced numbers only).
"""

from __future__ import annotations

import math
import numbers
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .backends.base import Backend, SearchState, supports_bottom_up
from .comm.base import Communicator
from .comm.single import SingleRankCommunicator
from .graph import DistGraph, build_graph
from .partition import global_id

STRATEGIES = ("hybrid", "two_phase", "contract_expand", "direction_optimizing")
"""How levels are run (section 5): ``two_phase`` runs every level as separate stages;
``contract_expand`` hands every level it can to the backend's fused path (CUDA: one cooperative
grid running many levels);
``hybrid`` hands it the levels whose frontier is small (``backend.small_frontier_limit``) and runs
the others in two phases. The fused path exists on one rank of a backend that has one (CUDA),
and on several ranks for the first levels of a search when the graph is small enough to keep
whole on every rank (``replicated``); elsewhere those three run two phases.
``direction_optimizing`` (Beamer et al. 2012) runs each level top-down or bottom-up as
``choose_direction`` says, top-down levels as ``hybrid`` does;
it needs a backend with bottom-up stages (``supports_bottom_up``: numpy and CUDA). Directed
graphs run bottom-up levels over their in-neighbours (the reverse CSR, built collectively once
per graph and kept while the graph lives)."""

DEFAULT_ALPHA = 15.0
"""Top-down -> bottom-up when the frontier's edges exceed the unexplored edges / alpha (GAP;
larger: earlier bottom-up)."""
DEFAULT_BETA = 18.0
"""Bottom-up -> top-down when the shrinking frontier holds fewer than n / beta vertices (GAP)."""

SHARE_FRONTIER = 32
"""Several ranks, top-down strategies: after a level whose new global frontier grew and holds at
least n / SHARE_FRONTIER vertices, the ranks all-gather its bitmap (n / 8 bytes) into their
visited masks. A rank's mask otherwise knows only the vertices it sent or owns, and sends the
others again when the next level reaches them; on Kronecker graphs that was a third of the items
of the largest level on 4 GPUs (166 M sent for 60 M new), and a gather costs n / 64 items."""

GROWTH = 2.0
"""Top-down -> bottom-up only while the frontier grows at least this much per level (Beamer's
"growing", made strict: the exploding frontiers of low-diameter graphs, not the slowly widening
ones of meshes and road maps, on which bottom-up tested 10x the edges top-down expands)."""

TOP_DOWN, BOTTOM_UP = "top_down", "bottom_up"
DIRECTIONS = (TOP_DOWN, BOTTOM_UP)

_UNLIMITED = 2**62

# Per-level counters kept on each rank and summed over ranks once, after the search.
COUNTERS = (
    "edges_expanded",
    "items_sent",
    "items_sent_remote",
    "items_received",
    "discovered",
    "edges_inspected",
)
_KEYS = 4  # a row of the level log: level, frontier, span, direction index, then COUNTERS


@dataclass
class LevelStats:
    """One level (or ``span`` fused levels), summed over ranks; ``seconds``: slowest rank.

    A row of fused levels (``span`` levels run by one kernel) carries its first frontier only:
    the fused kernel keeps no other counters. ``direction``: ``top_down`` or ``bottom_up``.
    ``edges_inspected``: neighbour slots read (top-down: the edges expanded; bottom-up: the
    in-neighbour slots tested before each vertex's first hit, rounded up to its scan chunk).
    Bottom-up levels send no items (their exchange is the bitmap all-gather).
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
    direction: str = TOP_DOWN
    edges_inspected: int = 0


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
    strategy: str | None = None,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    timer: Any = None,
) -> SearchResult:
    """Run one level-synchronous BFS from global vertex ``source`` (collective).

    ``strategy``: one of ``STRATEGIES`` (None: ``default_strategy(backend)``). ``alpha`` and
    ``beta``: the direction heuristic's thresholds (``choose_direction``), used by
    ``direction_optimizing`` only.
    """
    strategy = default_strategy(backend) if strategy is None else strategy
    optimizing = strategy == "direction_optimizing"
    if optimizing and not supports_bottom_up(backend):
        raise ValueError(
            f"strategy={strategy!r}: the {backend.name} backend has no bottom-up stages"
        )
    fused_limit = _fused_frontier_limit(strategy, backend)
    replica = replicated(graph, comm, backend) if fused_limit and comm.size > 1 else None
    peers = None
    if fused_limit and comm.size > 1 and replica is None:
        peers = peer_mailboxes(graph, comm, backend)
    if comm.size > 1 and replica is None and peers is None:
        fused_limit = 0
    shares_of_limit = comm.size if peers is not None else 1  # peers: the limit is per rank
    _check_thresholds(alpha, beta)
    timer = backend.make_timer(False) if timer is None else timer
    in_graph = in_neighbours(graph, comm, backend.xp) if optimizing else graph
    state = backend.start(graph, source, predecessors)
    shares = comm.size > 1 and not optimizing  # SHARE_FRONTIER
    rows: list[list[int]] = []  # level, frontier, span, direction, then COUNTERS
    level, frontier_size, direction = 0, 1, TOP_DOWN
    counts = FrontierCounts(graph.n, unvisited=graph.n - 1)  # global, after each all-reduce
    unexplored = graph.num_local_edges - backend.frontier_edges(graph, state) if optimizing else 0
    while frontier_size > 0:
        if optimizing:
            direction = choose_direction(direction, counts, alpha, beta)
        if frontier_size <= fused_limit * shares_of_limit and direction == TOP_DOWN:
            with timer.phase("contract_expand"):
                span = _fused_levels(
                    graph,
                    (replica, peers),
                    state,
                    backend,
                    comm,
                    (level, source, frontier_size),
                    fused_limit,
                )
            if span:
                several = comm.size > 1
                next_size = comm.allreduce(state.frontier_size) if several else state.frontier_size
                if optimizing and next_size:
                    with timer.phase("termination"):  # fused levels keep no counts: recount
                        unexplored = counts.resync(graph, state, backend, comm)
                rows.append([level, frontier_size, span, 0] + [0] * len(COUNTERS))
                timer.next_level()
                level, frontier_size = level + span, next_size
                continue
        if direction == BOTTOM_UP:
            counters = _bottom_up_level(graph, in_graph, state, backend, comm, timer, level)
        else:
            counters = _top_down_level(graph, state, backend, comm, timer, level)
        with timer.phase("termination"):
            if optimizing:  # one all-reduce: termination test and heuristic input
                edges = backend.frontier_edges(graph, state)
                unexplored -= edges  # this rank's m_u: out-edges of its unlabeled vertices
                inspected = counters[-1] if direction == BOTTOM_UP else 0
                mine = np.array([state.frontier_size, edges, unexplored, inspected], np.int64)
                next_size, *totals = comm.allreduce(mine).tolist()
                counts.advance(next_size, *totals)
            else:
                next_size = comm.allreduce(state.frontier_size)
        if shares and frontier_size < next_size and next_size * SHARE_FRONTIER >= graph.n:
            with timer.phase("exchange"):
                frontier = comm.allgather_equal(backend.frontier_bitmap(graph, state))
            backend.mark_visited(graph, state, frontier)
        rows.append([level, frontier_size, 1, DIRECTIONS.index(direction), *counters])
        timer.next_level()
        level, frontier_size = level + 1, next_size
    # The search's queues go back now (labels, predecessors and the visited mask stay), so what
    # runs next (validation, statistics) has their memory.
    state.scratch.clear()
    state.vertex_frontier = backend.xp.empty(0, dtype=state.vertex_frontier.dtype)
    return SearchResult(source, state.labels, state.preds, _level_stats(comm, rows, timer), state)


def _fused_levels(
    graph: DistGraph,
    paths: tuple[DistGraph | None, Any],
    state: SearchState,
    backend: Backend,
    comm: Communicator,
    at: tuple[int, int, int],
    limit: int,
) -> int:
    """Levels run by the backend's fused path: on this rank's graph (one rank); on several
    ranks from the source (level 0 only) by every rank alike on its replica of the whole graph;
    or on several ranks of one node together, through peer memory. ``paths``: (replica,
    peer mailbox), at most one of them set; ``at``: (level, source, global frontier size).
    Returns how many levels ran (0: none; the caller runs this level in two phases)."""
    replica, peers = paths
    level, source, frontier_size = at
    if replica is None and peers is None:
        return backend.run_small_levels(graph, state, level, limit)
    if peers is not None:  # every GPU takes up to ``limit`` vertices of the frontier
        edges = comm.allreduce(backend.frontier_edges(graph, state))  # m_f over all ranks
        entry = (frontier_size, edges)
        whole = min(limit * comm.size, _UNLIMITED)  # contract_expand: no limit at all
        span = backend.run_peer_levels(graph, state, level, whole, peers, entry)
    elif level != 0:
        return 0
    else:
        span = backend.run_replicated_levels(graph, replica, state, source, limit)
    most, fewest = comm.allreduce(np.array([span, -span], np.int64), op="max").tolist()
    if most != -fewest:  # every rank ran the same deterministic search: a bug otherwise
        raise RuntimeError(f"fused levels differ between ranks: {-fewest} to {most}")
    return span


def _top_down_level(
    graph: DistGraph,
    state: SearchState,
    backend: Backend,
    comm: Communicator,
    timer: Any,
    level: int,
) -> list[int]:
    """Expand, filter+partition, exchange bins, contract (section 6.1); this rank's COUNTERS.

    A frontier with more out-edges than the backend's edge queue holds is expanded and filtered
    in strips (``expansion_strips``); the survivors of every strip are binned after the last."""
    edge_frontiers, bins = [], None
    for strip in range(backend.expansion_strips(graph, state)):
        with timer.phase("expand"):
            edge_frontiers.append(backend.expand(graph, state, strip))
        with timer.phase("filter_partition"):
            bins = backend.filter_partition(state, edge_frontiers[-1], comm.size)
    assert bins is not None, "filter_partition returns the bins after the last strip"
    with timer.phase("contract"):  # the own bin never travels: it is labeled meanwhile
        backend.contract_local(graph, state, bins, level + 1)
    with timer.phase("exchange"):
        received = comm.exchange_bins(bins, overlap=True)
    with timer.phase("contract"):
        backend.contract(graph, state, received, level + 1)
    sent = bins.counts
    remote = int(sent.sum() - sent[comm.rank])
    expanded = sum(edges.size for edges in edge_frontiers)
    received_count = int(received.offsets[-1])
    return [expanded, int(sent.sum()), remote, received_count, state.frontier_size, expanded]


def _bottom_up_level(
    graph: DistGraph,
    in_graph: DistGraph,
    state: SearchState,
    backend: Backend,
    comm: Communicator,
    timer: Any,
    level: int,
) -> list[int]:
    """Frontier queue -> bitmap, all-gather of the bitmaps, bottom-up scan; this rank's COUNTERS."""
    with timer.phase("bitmap"):
        bitmap = backend.frontier_bitmap(graph, state)
    with timer.phase("exchange"):
        frontier = comm.allgather_equal(bitmap)
    with timer.phase("bottom_up"):
        inspected = backend.bottom_up(graph, in_graph, state, frontier, level + 1)
    return [0, 0, 0, 0, state.frontier_size, inspected]


@dataclass
class FrontierCounts:
    """The global numbers the direction heuristic reads, the same on every rank (from the
    level's all-reduce): the frontier's vertices n_f and out-edges m_f, the previous frontier's
    vertices, the out-edges m_u and number n_u of the unlabeled vertices, and what the last
    bottom-up level showed: whether it lost (tested more slots than top-down would have
    expanded edges) and its realized alpha (m_u at its start / slots it tested). At level 0 only
    n_f and n_u are known (m_f = 0 stands in: see ``choose_direction``)."""

    n: int
    unvisited: int
    frontier: int = 1
    frontier_edges: int = 0
    previous: int = 0
    unexplored_edges: int = 0
    bottom_up_lost: bool = False
    seen_alpha: float = math.inf

    def resync(
        self, graph: DistGraph, state: SearchState, backend: Backend, comm: Communicator
    ) -> int:
        """Recount everything from the labels after fused levels (one all-reduce); returns this
        rank's m_u. The frontier before the last fused level is unknown: ``previous`` = 0."""
        unvisited, unexplored = backend.unexplored(graph, state)
        edges = backend.frontier_edges(graph, state)
        mine = np.array([state.frontier_size, edges, unexplored, unvisited], np.int64)
        totals = comm.allreduce(mine).tolist()
        self.frontier, self.frontier_edges, self.unexplored_edges, self.unvisited = totals
        self.previous, self.bottom_up_lost, self.seen_alpha = 0, False, math.inf
        return unexplored

    def advance(self, frontier: int, frontier_edges: int, unexplored: int, inspected: int) -> None:
        """The next frontier (just labeled) replaces the current one. ``inspected``: slots the
        level just run tested bottom-up (0 after a top-down level)."""
        if inspected:
            self.bottom_up_lost = inspected > self.frontier_edges
            self.seen_alpha = self.unexplored_edges / inspected
        self.previous, self.frontier, self.frontier_edges = self.frontier, frontier, frontier_edges
        self.unexplored_edges = unexplored
        self.unvisited -= frontier


def choose_direction(
    direction: str,
    counts: FrontierCounts,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
) -> str:
    """The direction of the next level: Beamer's heuristic (SC 2012) with three safeguards.

    Top-down -> bottom-up when all of:

    - m_f > m_u / alpha (Beamer: the frontier's out-edges against the out-edges of the
      unlabeled vertices, of which early exits are expected to test about 1 / alpha);
    - m_f > n_u: a bottom-up level touches every unlabeled vertex at least once (so level 0,
      a single vertex, is always top-down);
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


def default_strategy(backend: Backend) -> str:
    """``direction_optimizing`` where the backend has bottom-up stages, else ``hybrid``."""
    return "direction_optimizing" if supports_bottom_up(backend) else "hybrid"


_IN_NEIGHBOURS: dict[int, DistGraph] = {}


def in_neighbours(graph: DistGraph, comm: Communicator, xp: Any = np) -> DistGraph:
    """The graph of in-neighbours that bottom-up levels scan (collective on first use).

    An undirected graph is its own; a directed one gets its reverse CSR, built through
    ``build_graph`` from the reversed edges (one all-to-all) and cached until ``graph`` is freed.
    """
    if not graph.directed:
        return graph
    reverse = _IN_NEIGHBOURS.get(id(graph))
    if reverse is None:
        tails, heads = _stored_edges(graph, xp)
        reverse = build_graph(comm, heads, tails, graph.n, directed=True, xp=xp)  # reversed
        _IN_NEIGHBOURS[id(graph)] = reverse
        weakref.finalize(graph, _IN_NEIGHBOURS.pop, id(graph), None)
    return reverse


_REPLICAS: dict[int, DistGraph | None] = {}
_ONE_RANK = SingleRankCommunicator()


def replicated(graph: DistGraph, comm: Communicator, backend: Backend) -> DistGraph | None:
    """The whole graph as a one-rank CSR on every rank, for the replicated small-frontier path
    (collective on first use; cached, also when the answer is None, while ``graph`` lives: the
    first backend's limit decides).

    On several ranks a level costs an exchange and a reduction (tens of microseconds), which
    high-diameter graphs pay thousands of times. When the whole CSR fits in
    ``backend.replica_limit_bytes``, every rank keeps a copy (two all-gathers of the edges),
    and searches start with the backend's fused path on that copy: every rank runs the same
    levels, with no communication, while the frontier stays small, then keeps its own
    vertices' labels (``run_replicated_levels``). None on one rank, for a backend without a
    fused path, or for a larger graph.
    """
    if comm.size == 1 or not getattr(backend, "replica_limit_bytes", 0):
        return None
    if id(graph) not in _REPLICAS:
        whole = comm.allreduce(graph.nbytes())
        replica = None
        if whole <= backend.replica_limit_bytes:
            xp = backend.xp
            tails, heads = _stored_edges(graph, xp)
            tails, heads = comm.allgather_array(tails), comm.allgather_array(heads)
            one = build_graph(_ONE_RANK, tails, heads, graph.n, directed=True, xp=xp)
            replica = DistGraph(
                graph.n, graph.num_edges, graph.directed, 0, 1, one.row_offsets, one.column_indices
            )
        _REPLICAS[id(graph)] = replica
        weakref.finalize(graph, _REPLICAS.pop, id(graph), None)
    return _REPLICAS[id(graph)]


_PEERS: dict[int, Any] = {}


def peer_mailboxes(graph: DistGraph, comm: Communicator, backend: Backend) -> Any | None:
    """The backend's mailbox for fused levels over peer memory, with every rank's mapped here
    (collective on first use; cached, also when the answer is None, while ``graph`` lives).

    Several ranks of one node whose GPUs reach each other's memory (the communicator maps the
    mailboxes: ``map_peer_memory``) run small frontiers fused on every GPU at once
    (``run_peer_levels``): a level costs two cross-GPU barriers instead of a host exchange and
    a reduction. None on one rank, for a backend without the path or with it off, or when the
    ranks cannot map each other's memory (several nodes, GPUs hidden from each other).
    """
    if comm.size == 1 or not getattr(backend, "peer_levels", False):
        return None
    if id(graph) not in _PEERS:
        mailbox = backend.make_peer_mailbox(graph)
        addresses = comm.map_peer_memory(mailbox.array)
        if addresses is None:
            mailbox = None
        else:
            mailbox.addresses = backend.xp.asarray(np.array(addresses, dtype=np.int64))
        _PEERS[id(graph)] = mailbox
        weakref.finalize(graph, _PEERS.pop, id(graph), None)
    return _PEERS[id(graph)]


def _stored_edges(graph: DistGraph, xp: Any) -> tuple[Any, Any]:
    """(tail, head) global ids of every edge this rank stores, int64, in CSR order."""
    # the row of every stored edge (searchsorted: CuPy's repeat takes no array of counts)
    slots = xp.arange(graph.num_local_edges, dtype=xp.int64)
    rows = xp.searchsorted(graph.row_offsets, slots, side="right") - 1
    del slots
    return global_id(rows, graph.rank, graph.size), graph.column_indices.astype(xp.int64)


def _check_thresholds(alpha: float, beta: float) -> None:
    """alpha >= 0 (0: never bottom-up), beta > 0 (inf allowed for both)."""
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not isinstance(value, numbers.Real) or isinstance(value, bool) or not value >= 0:
            raise ValueError(f"{name}={value!r}: must be a non-negative number")
    if beta == 0:
        raise ValueError("beta=0: must be positive (n / beta is the bottom-up -> top-down size)")


def _fused_frontier_limit(strategy: str, backend: Backend) -> int:
    """Largest frontier handed to the fused path under ``strategy`` (0: never; several ranks
    also need a replica, ``replicated``). ``direction_optimizing`` hands it small top-down
    frontiers as ``hybrid`` does, then recounts the heuristic's numbers from the labels."""
    if strategy not in STRATEGIES:
        raise ValueError(f"strategy={strategy!r}: choose from {', '.join(STRATEGIES)}")
    if strategy == "two_phase" or not backend.small_frontier_limit:
        return 0
    return backend.small_frontier_limit if strategy != "contract_expand" else _UNLIMITED


def _level_stats(comm: Communicator, rows: list[list[int]], timer: Any) -> list[LevelStats]:
    """Sum the per-level counters over ranks (one all-reduce) and take the slowest phase times."""
    local = np.array(rows, dtype=np.int64).reshape(-1, _KEYS + len(COUNTERS))
    totals = comm.allreduce(local[:, _KEYS:])
    phases = timer.per_level()
    names = sorted({name for level in phases for name in level})
    seconds = np.array([[lv.get(k, 0.0) for k in names] for lv in phases], dtype=np.float64)
    if seconds.size:
        seconds = comm.allreduce(seconds, op="max")
    stats = []
    for i, (level, frontier, span, direction) in enumerate(local[:, :_KEYS].tolist()):
        counts = dict(zip(COUNTERS, (int(x) for x in totals[i]), strict=True))
        times = dict(zip(names, seconds[i].tolist(), strict=True)) if seconds.size else {}
        way = DIRECTIONS[direction]
        stats.append(LevelStats(level, frontier, span=span, seconds=times, direction=way, **counts))
    return stats
