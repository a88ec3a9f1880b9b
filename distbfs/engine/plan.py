"""The search plan: everything a traversal needs about one graph, built once and kept while the
graph is searched, so a timed search does no setup.

``GraphResources`` holds what every search of one graph shares on this rank, each part built
the first time a plan needs it (collectively: every rank builds plans in the same order): the
backend's per-graph resources (``backend.prepare``: the CUDA edge queue, degree bounds and
kernels, the numpy degrees), the in-neighbour CSR that bottom-up levels scan on a directed graph
(one all-to-all), the whole-graph replica of small graphs on several ranks (two all-gathers) and
the peer mailbox of fused levels through peer memory. ``SearchPlan`` is one strategy with its
thresholds over those resources: it checks them once and chooses the fused small-frontier path
(``distbfs.engine.fused``); on several ranks that each hold the replica, its one-rank plan over
the replica (``SearchPlan.whole``), which every rank searches whole. A plan holds no search
state: a search's labels and queues live in the ``SearchState`` that ``start`` returns. Nothing
here is keyed by ``id()``: the resources are an object the caller keeps (``distbfs.Graph`` keeps
one per graph) and drops with the graph.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..backends.base import Inbound, Replica
from ..comm.base import Communicator
from ..comm.single import SingleRankCommunicator
from ..constants import UNLIMITED
from ..errors import InvalidArgumentValue
from ..graph import (
    DistGraph,
    build_graph,
    build_local_graph,
    inbound_bytes,
    inbound_keys_fit,
    inbound_rows,
)
from ..memory import fits, require
from ..partition import owner
from .buckets import WeightSummary, check_delta, choose_delta
from .direction import DirectionOptimizing, TopDownOnly
from .fused import FusedPath, NoFusedLevels, choose_fused_path
from .strategy import DEFAULT_ALPHA, DEFAULT_BETA, Strategy, check_strategy, check_thresholds

SHARE_FRONTIER = 32
"""Several ranks, top-down strategies: after a level whose new global frontier grew and holds at
least n / SHARE_FRONTIER vertices, the ranks all-gather its bitmap (n / 8 bytes) into their
visited masks. A rank's mask otherwise knows only the vertices it sent or owns, and sends the
others again when the next level reaches them (benchmarks/RESULTS.md, "shared frontiers"); a
gather costs n / 64 items."""

GATHER_DEGREE = 256.0
"""Several ranks: a top-down level whose frontier has at least n out-edges (m_f, over all ranks),
and at least GATHER_DEGREE a frontier vertex, runs over the all-gathered frontier
(``distbfs.traversals.bfs.inbound_level``; inf: never), where the graph's inbound rows fit
(``GraphResources.inbound``). Such a level's every rank expands every frontier vertex, where a
bin level's expands its own: the vertices cost it more than the bins it saves, unless their
rows are long (benchmarks/RESULTS.md, "inbound levels")."""

_UNSET = object()


def distinct_sources(sources: Sequence[int] | int) -> np.ndarray:
    """The distinct vertex ids of ``sources`` (a vertex id, or a sequence or array of them),
    sorted, as a host int64 array: a search from several sources labels each once (the caller
    checks the ids: ``distbfs.api.arguments.check_sources``)."""
    if isinstance(sources, int | np.integer):  # one source: nothing to sort
        return np.array([sources], dtype=np.int64)
    return np.unique(np.asarray(sources, dtype=np.int64).reshape(-1))


def level_limit(depth_limit: int | None) -> int:
    """The level a search stops at once it is labeled: ``depth_limit``, or ``UNLIMITED`` for
    none (a level no search reaches)."""
    return UNLIMITED if depth_limit is None else int(depth_limit)


SEARCH_FIX = "more ranks (mpiexec -n P, on more nodes), or a smaller graph"
"""What the refusal of a search too large for the memory left beside the graph suggests."""


def require_search(resources: Any, traversal: str, what: str) -> None:
    """Refuse (``distbfs.memory.require``, collective) a ``traversal`` whose peak would not fit
    beside the graph, where the backend estimates it (``search_bytes``: the numpy backend,
    whose host allocations Linux would grant and then kill the process for touching)."""
    estimate = getattr(resources.backend, "search_bytes", None)
    if callable(estimate):
        needed = estimate(resources.graph, traversal)
        require(needed, resources.backend.xp, resources.comm, what, SEARCH_FIX)


WEIGHT_CHUNK = 1 << 28
"""Weights ``least_positive`` reads at a time (its temporary: a chunk, not the whole array)."""


def weight_extremes(xp: Any, weights: Any) -> tuple[float, float, bool]:
    """The least weight, the least positive one (inf where none) and whether every weight is
    an integer, a chunk at a time and without a boolean gather (CuPy counts a gather's items in
    32 bits: past 2**31 weights it overflows)."""
    least, positive, integral = math.inf, math.inf, True
    for start in range(0, weights.shape[0], WEIGHT_CHUNK):
        part = weights[start : start + WEIGHT_CHUNK]
        least = min(least, float(part.min()))
        positive = min(positive, float(xp.where(part > 0, part, math.inf).min()))
        integral = integral and bool((xp.floor(part) == part).all())
    return least, positive, integral


class GraphResources:
    """What the searches of one graph share on this rank, each part built on first need.

    Attributes
    ----------
    graph, backend, comm
        The graph this rank holds, the stages and the exchange.
    backend_resources
        ``backend.prepare(graph)``, built at once unless given.
    """

    def __init__(
        self, graph: DistGraph, backend: Any, comm: Communicator, backend_resources: Any = None
    ) -> None:
        self.graph, self.backend, self.comm = graph, backend, comm
        prepared = backend_resources is not None
        self.backend_resources = backend_resources if prepared else backend.prepare(graph)
        self._in_graph: DistGraph | None = None
        self._whole: DistGraph | None = None
        self._replica: Any = _UNSET
        self._replica_resources: Any = _UNSET
        self._mailbox: Any = _UNSET
        self._inbound: Any = _UNSET
        self._long_rows: dict[int, int] | None = None
        self._long_row_limit = 0  # the out-degree past which a row is in _long_rows (0: none is)
        self._held_row: tuple[int, Any] | None = None  # the last broadcast row: (source, row)
        self._weights: WeightSummary | None = None

    def load_kernels(self) -> None:
        """Compile (or load from the kernel cache) every kernel this graph's searches may run,
        on a backend that otherwise compiles each at its first use (CUDA): a benchmark's timed
        searches then pay none of it, whatever stages its warm-up search ran."""
        load = getattr(self.backend, "load_kernels", None)
        if load is not None:
            load(self.backend_resources)

    def weight_summary(self) -> WeightSummary:
        """The graph's weights over all ranks (collective on first use: two all-reduces); an
        unweighted graph weighs 1 on every edge. A graph without edges has no smallest weight
        (inf) and counts as integral."""
        if self._weights is None:
            graph, comm = self.graph, self.comm
            edges = graph.num_local_edges
            total, positive, largest, least, integral = 0.0, math.inf, 0.0, math.inf, True
            if edges and graph.weights is None:
                total, positive, largest, least = float(edges), 1.0, 1.0, 1.0
            elif edges:
                weights = graph.weights
                total, largest = float(weights.sum(dtype=np.float64)), float(weights.max())
                least, positive, integral = weight_extremes(self.backend.xp, weights)
            fractional = 0.0 if integral else 1.0  # ranks with a weight that is not an integer
            sums = comm.allreduce(np.array([edges, total, fractional], dtype=np.float64))
            low = comm.allreduce(np.array([positive, -largest, least]), op="min")
            self._weights = WeightSummary(
                int(sums[0]),
                float(sums[1]),
                float(low[0]),
                -float(low[1]),
                float(low[2]),
                integral=not sums[2],
            )
        return self._weights

    def in_neighbours(self) -> DistGraph:
        """The graph of in-neighbours bottom-up levels scan (collective on first use): an
        undirected graph is its own; a directed one gets its reverse CSR, built through
        ``build_graph`` from the reversed edges (one all-to-all)."""
        if self._in_graph is None:
            graph, xp = self.graph, self.backend.xp
            if graph.directed:
                tails, heads = graph.stored_edges(xp)
                self._in_graph = build_graph(self.comm, heads, tails, graph.n, directed=True, xp=xp)
                if graph.compressed:  # coded as the graph is
                    on_backend = getattr(self.backend, "compress_graph", None)
                    compress = on_backend if callable(on_backend) else DistGraph.compress
                    self._in_graph = compress(self._in_graph)
                memory = getattr(self.backend, "graph_memory", None)
                if callable(memory) and memory(graph) == "host":
                    self._in_graph = self.backend.place_graph(self._in_graph, "host")
            else:
                self._in_graph = graph
        return self._in_graph

    def whole(self) -> DistGraph:
        """The whole graph as one rank's CSR (with its weights) on every rank (collective on
        first use: all-gathers of the stored edges); the graph itself on one rank."""
        if self._whole is None:
            graph, xp, comm = self.graph, self.backend.xp, self.comm
            if comm.size == 1:
                self._whole = graph
                return graph
            tails, heads, weights = graph.stored_edges(xp, with_weights=True)
            tails, heads = comm.allgather_array(tails), comm.allgather_array(heads)
            if weights is not None:
                weights = comm.allgather_array(weights)
            # the stored edges, both directions of an undirected graph among them
            one = build_local_graph(tails, heads, graph.n, directed=True, xp=xp, weights=weights)
            self._whole = DistGraph(
                graph.n,
                graph.num_edges,
                graph.directed,
                0,
                1,
                one.row_offsets,
                one.column_indices,
                one.weights,
            )
        return self._whole

    def inbound(self) -> Inbound | None:
        """This rank's inbound rows (``distbfs.graph.inbound_rows``) with the backend's
        resources for them (collective on first use: one all-gather of the memory check);
        None on one rank, for a directed graph (its rows list out-edges), for columns
        compressed or in host memory (the expansion reads plain device rows), past 3 G
        vertices (``inbound_keys_fit``), and where a rank lacks ``inbound_bytes`` beside the
        graph and as much again for a search."""
        if self._inbound is _UNSET:
            self._inbound = None
            graph, backend, comm = self.graph, self.backend, self.comm
            memory = getattr(backend, "graph_memory", None)
            on_host = callable(memory) and memory(graph) == "host"
            plain = not (graph.directed or graph.compressed or on_host)
            plain = plain and inbound_keys_fit(graph.n)
            if comm.size > 1 and plain:
                needed = inbound_bytes(graph) + graph.nbytes()
                if fits(needed, backend.xp, comm):
                    rows = inbound_rows(graph, backend.xp)
                    self._inbound = Inbound(rows, backend.prepare(rows))
        return self._inbound

    def replica(self) -> Replica | None:
        """The whole graph on every rank (``whole``), which every rank then searches whole
        (``replica_resources``, ``SearchPlan.whole``; shortest paths in place), when its CSR
        takes at most ``backend.replica_limit_bytes`` (collective on first use); None on one
        rank, with the limit 0, or for a larger graph."""
        if self._replica is _UNSET:
            self._replica = None
            graph, backend, comm = self.graph, self.backend, self.comm
            limit = getattr(backend, "replica_limit_bytes", 0)
            if comm.size > 1 and limit and comm.allreduce(graph.nbytes()) <= limit:
                whole = self.whole()
                self._replica = Replica(whole, backend.prepare(whole))
        return self._replica

    def replica_resources(self) -> GraphResources | None:
        """The replica (``replica``) as a one-rank graph of its own, with the backend's
        resources for it: what the searches every rank runs whole on its copy share
        (collective on first use, as ``replica``); None where there is no replica."""
        if self._replica_resources is _UNSET:
            replica = self.replica()
            self._replica_resources = None
            if replica is not None:
                one = SingleRankCommunicator()
                self._replica_resources = GraphResources(
                    replica.graph, self.backend, one, replica.resources
                )
        return self._replica_resources

    def long_rows(self) -> dict[int, int]:
        """Every rank's rows of more than ``backend.broadcast_row_edges`` out-edges: global
        vertex -> out-degree, the same on every rank (collective on first use: one
        all-gather); empty on one rank or where the backend broadcasts no row of this graph.
        A search from one of them starts with its row on every rank
        (``SearchPlan.broadcast_rows``)."""
        if self._long_rows is None:
            self._long_rows = {}
            backend, comm = self.backend, self.comm
            limit = getattr(backend, "broadcast_row_edges", 0)
            if comm.size > 1 and limit:
                every = comm.allgather_object(
                    backend.long_rows(self.graph, self.backend_resources, limit)
                )
                if all(rows is not None for rows in every):
                    for rows in every:
                        self._long_rows.update(rows)
                    self._long_row_limit = limit
        return self._long_rows

    def held_row(self, source: int, edges: int, state: Any) -> Any:
        """The row of ``source`` (``edges`` out-edges, a long row) on every rank, global ids
        (collective): its owner's broadcast (``backend.source_row``; ``state``: the search's
        from it), kept for the next search from the same vertex, one row at a time: connected
        components search from the hub on every run, and a row does not change."""
        if self._held_row is None or self._held_row[0] != source:
            row = self.backend.source_row(self.graph, state, edges)
            row = self.comm.broadcast_array(row, owner(source, self.comm.size))
            self._held_row = (source, row)
        return self._held_row[1]

    def out_degree_bound(self, vertex: int) -> int | None:
        """At most how many out-edges ``vertex`` has, known on every rank with no
        communication: its degree where its row is a long one (``long_rows``), else the limit
        those were collected at; None where none were (one rank, no broadcast rows)."""
        rows = self.long_rows()
        if not self._long_row_limit:
            return None
        return rows.get(vertex, self._long_row_limit)

    def peer_mailbox(self) -> Any | None:
        """This rank's mailbox for fused levels through peer memory, with every rank's mapped
        here (collective on first use); None on one rank, for a backend without the path or
        with it off, or where the ranks cannot map each other's memory (several nodes, GPUs
        hidden from each other)."""
        if self._mailbox is _UNSET:
            self._mailbox = None
            backend, comm = self.backend, self.comm
            if comm.size > 1 and getattr(backend, "peer_levels", False):
                mailbox = backend.make_peer_mailbox(self.graph)
                addresses = comm.map_peer_memory(mailbox.array)
                if addresses is not None:
                    mailbox.addresses = backend.xp.asarray(np.array(addresses, dtype=np.int64))
                    # the peers' mailboxes unmapped when this one goes, so a process that
                    # builds graph after graph does not keep every peer's old ones alive (at
                    # exit the process's end frees them)
                    weakref.finalize(mailbox, comm.unmap_peer_memory, addresses).atexit = False
                    self._mailbox = mailbox
        return self._mailbox


class SearchPlan:
    """One strategy and its thresholds over the shared ``GraphResources`` of a graph.

    Attributes
    ----------
    graph, backend, comm
        As in ``resources``.
    strategy : Strategy
    alpha, beta : float
        The direction heuristic's thresholds (``direction_optimizing`` only).
    in_graph : DistGraph
        The in-neighbours bottom-up levels scan (``graph`` itself unless the strategy optimizes
        the direction of a directed graph).
    fused
        The fused small-frontier path (``distbfs.engine.fused``).
    shares_frontier : bool
        Whether large new frontiers are all-gathered into the visited masks (``SHARE_FRONTIER``).
    inbound : Inbound or None
        Several ranks, top-down strategies: the inbound rows (``GraphResources.inbound``) that
        top-down levels of many long rows expand from the all-gathered frontier (``gathers``);
        None: every top-down level sends bins. A direction-optimizing search builds none: its
        levels of many long rows run bottom-up, and its top-down ones are small (kron27 on two
        GPUs ran no inbound level with them: benchmarks/RESULTS.md, "inbound levels").
    broadcast_rows : dict
        Several ranks: the long rows (``GraphResources.long_rows``, global vertex ->
        out-degree) a search from one of whose vertices starts with the row on every rank.
    whole : SearchPlan or None
        Several ranks that each hold the graph's replica (``GraphResources.replica``: small
        graphs): the same strategy's plan over the replica on one rank. Every rank runs each
        search whole on its copy, with no exchange at all, and keeps its own vertices' part
        (``distbfs.traversals.bfs``): a small graph's levels are latency, which striping only
        adds to (benchmarks/RESULTS.md, "road network, 2 GPUs"). This plan's own paths then
        go unused: it builds no in-neighbours and no fused path.
    """

    def __init__(
        self,
        resources: GraphResources,
        strategy: Strategy | str | None = None,
        alpha: float = DEFAULT_ALPHA,
        beta: float = DEFAULT_BETA,
    ) -> None:
        self.resources = resources
        self.graph, self.backend, self.comm = resources.graph, resources.backend, resources.comm
        self.strategy = check_strategy(strategy, self.backend)
        self.alpha, self.beta = check_thresholds(alpha, beta)
        self.optimizing = self.strategy is Strategy.DIRECTION_OPTIMIZING
        fused_only = self.strategy is Strategy.CONTRACT_EXPAND and self.backend.small_frontier_limit
        if fused_only and self.graph.compressed:
            raise InvalidArgumentValue(
                "strategy: contract_expand runs every level in the fused kernel, which reads "
                "plain rows; a compressed graph takes hybrid, direction_optimizing or two_phase"
            )
        require_search(resources, "bfs", f"a BFS of {self.graph.n:,} vertices")
        replica = resources.replica_resources() if self.comm.size > 1 else None  # collective
        self.whole = None if replica is None else SearchPlan(replica, strategy, alpha, beta)
        self.in_graph = self.graph
        if self.optimizing and self.whole is None:
            self.in_graph = resources.in_neighbours()
        self.fused: FusedPath = NoFusedLevels()
        if self.whole is None:
            self.fused = choose_fused_path(resources, self._fused_limit())
        self.shares_frontier = self.comm.size > 1 and not self.optimizing
        self.gather_degree = GATHER_DEGREE if self.whole is None else math.inf
        self.inbound = None
        if self.gather_degree < math.inf and not self.optimizing:
            self.inbound = resources.inbound()  # collective
        self.broadcast_rows = resources.long_rows() if self.whole is None else {}

    @classmethod
    def build(
        cls,
        graph: DistGraph,
        backend: Any,
        comm: Communicator,
        strategy: Strategy | str | None = None,
        alpha: float = DEFAULT_ALPHA,
        beta: float = DEFAULT_BETA,
    ) -> SearchPlan:
        """A plan over resources of its own (one-off searches, tests, benchmarks of one
        strategy); several plans of one graph should share one ``GraphResources``."""
        return cls(GraphResources(graph, backend, comm), strategy, alpha, beta)

    def start(self, sources: Sequence[int] | int, predecessors: bool) -> Any:
        """A new search's state: every source labeled 0 on its owner (``backend.start``;
        ``sources``: distinct vertex ids, ``distinct_sources``)."""
        return self.backend.start(
            self.graph, sources, predecessors, self.resources.backend_resources
        )

    def termination(self, state: Any, sources: int = 1) -> DirectionOptimizing | TopDownOnly:
        """The level barrier of one search from ``sources`` distinct vertices: with the
        direction heuristic's counts when the strategy optimizes the direction."""
        if self.optimizing:
            return DirectionOptimizing(self, state, sources)
        return TopDownOnly(self)

    def shares(self, frontier_size: int, next_size: int, next_edges: int | None = None) -> bool:
        """Whether the new frontier (``next_size`` vertices, after ``frontier_size``; with
        ``next_edges`` out-edges over all ranks, where known) is shared with every rank's
        visited mask (``SHARE_FRONTIER``): not where the next level gathers it anyway."""
        grew = frontier_size < next_size and next_size * SHARE_FRONTIER >= self.graph.n
        return self.shares_frontier and grew and not self.gathers(next_size, next_edges)

    def gathers(self, frontier_size: int, frontier_edges: int | None) -> bool:
        """Whether a top-down level of ``frontier_size`` vertices with ``frontier_edges``
        out-edges (over all ranks; None: not known) runs over the all-gathered frontier and
        the inbound rows (``GATHER_DEGREE``)."""
        if self.inbound is None or frontier_edges is None:
            return False
        return frontier_edges >= max(self.graph.n, self.gather_degree * frontier_size)

    def _fused_limit(self) -> int:
        """Largest frontier handed to the fused path (0: never). ``direction_optimizing`` hands
        it small top-down frontiers as ``hybrid`` does."""
        small = self.backend.small_frontier_limit
        if self.strategy is Strategy.TWO_PHASE or not small or self.graph.compressed:
            return 0  # (the fused kernels read plain rows)
        return UNLIMITED if self.strategy is Strategy.CONTRACT_EXPAND else small


PATH_METHODS = (
    "path_start",
    "path_finish",
    "relax",
    "partition_min",
    "contract_min",
    "next_bucket",
    "bucket_members",
    "settle",
    "row_edges",
    "path_words",
    "pull_requests",
    "tree_start",
    "tree_tails",
    "tight_requests",
    "tree_unresolved",
    "tree_finish",
)
"""The backend methods of shortest-path searches (``distbfs.backends.base``) and of their trees
(``distbfs.traversals.sssp.shortest_path_tree``)."""


class PathPlan:
    """Shortest paths (delta-stepping) over the shared ``GraphResources`` of a graph: the
    bucket width, checked or chosen once (``distbfs.engine.buckets.choose_delta``).

    Attributes
    ----------
    graph, backend, comm
        As in ``resources``.
    delta : float
        The caller's, else ``choose_delta``'s; searches run as striped steps multiply the
        chosen one by the backend's ``striped_delta_factor`` where it has one (the CUDA
        backend's steps cost host round trips, and fewer, wider buckets take fewer steps).
    heavy : bool
        Whether a bucket has a heavy step: where an edge is heavier than delta, or the backend
        splits a bucket's edges by where they land (``heavy_by_landing``: its steps relax those
        that land inside, its heavy step the others, which any weight may be).
    pull_above : float
        Striped steps on an undirected graph: a bucket's heavy step pulls (every unsettled
        vertex reads its row for tails the bucket settled, from every rank's distances) instead
        of pushing the settled vertices' heavy edges where their out-edges exceed this many
        times the unsettled vertices' (0: always, ``inf``: never): the backend's
        ``heavy_pull_above`` where it has one (the CUDA backend, whose pull reads rows
        ascending by weight no further than an edge that cannot improve), else never (the
        numpy backend's pull reads every row: slower than pushing). Directed graphs push: a
        row lists out-edges, not in-edges. So do ranks on several hosts: a pull all-gathers 8
        bytes a vertex of the graph, which across nodes costs more than it saves (RESULTS.md,
        "Several nodes").
    positive_integers : bool
        Every weight a positive integer (``WeightSummary.positive_integers``): a search may
        record the shortest-path tree as it goes (the CUDA backend's tied words; the numpy
        backend's striped steps, where the tree is asked for).
    rows : str or None
        How the searches read the graph's rows where the backend chose (its
        ``prepare_paths``, per graph: the CUDA backend on a dense graph "by weight", a copy of
        the rows each ascending by weight, or "as stored" and why), else None.
    in_place : bool
        The whole search runs on the device that holds the whole graph
        (``shortest_paths_in_place``, ``shortest_path_tree_in_place``), not as striped steps
        with exchanges. By default where it can: a backend that has it, on one rank or on
        several that each hold the graph's replica (``GraphResources.replica``: small graphs,
        road networks and meshes among them, whose thousands of buckets would each cost the
        striped steps' exchanges); False forces the striped steps.
    replica : Replica or None
        The replica every rank searches in place (several ranks); each then keeps its own
        vertices' part of the outcome.
    in_place_graph, in_place_resources
        What an in-place search runs on: the graph and its backend resources, or the replica's.
    """

    def __init__(
        self,
        resources: GraphResources,
        delta: float | None = None,
        in_place: bool | None = None,
    ) -> None:
        backend = resources.backend
        if not all(callable(getattr(backend, name, None)) for name in PATH_METHODS):
            raise ValueError(f"the {backend.name} backend has no shortest-path stages")
        self.resources = resources
        self.graph, self.backend, self.comm = resources.graph, backend, resources.comm
        require_search(resources, "paths", f"a shortest-path search of {self.graph.n:,} vertices")
        summary = resources.weight_summary()
        has = callable(getattr(backend, "shortest_paths_in_place", None))
        self.replica = None
        if has and self.comm.size > 1 and in_place is not False:  # the same on every rank
            self.replica = resources.replica()  # collective
        can = has and (self.comm.size == 1 or self.replica is not None)
        if in_place and not can:
            raise ValueError(f"the {backend.name} backend cannot search paths in place here")
        self.in_place = can if in_place is None else bool(in_place)
        whole = self.replica if self.in_place else None
        self.in_place_graph = self.graph if whole is None else whole.graph
        self.in_place_resources = resources.backend_resources if whole is None else whole.resources
        if delta is None:  # striped steps may take wider buckets (striped_delta_factor)
            widen = 1 if self.in_place else getattr(backend, "striped_delta_factor", 1)
            self.delta = choose_delta(summary, self.graph.n) * widen
        else:
            self.delta = check_delta(delta)
        self.heavy = summary.largest > self.delta or getattr(backend, "heavy_by_landing", False)
        self.pull_above = getattr(backend, "heavy_pull_above", math.inf)
        if self.pull_above < math.inf and (self.graph.directed or self.comm.hosts() > 1):
            self.pull_above = math.inf  # (the same on every rank)
        self.positive_integers = summary.positive_integers
        prepare = getattr(backend, "prepare_paths", None)
        self.rows: str | None = None
        if callable(prepare):  # per graph, before any search is timed
            self.rows = prepare(self.in_place_graph, self.in_place_resources)

    def start(
        self, source: int, predecessors: bool, integers: bool = False, tree: bool = False
    ) -> Any:
        """A new search's state: the source at distance 0 on its owner. ``integers``: the
        backend may keep integer distances tied to their parents (``positive_integers``);
        ``tree``: the caller wants the shortest-path tree, which such a backend may then
        record as it searches (``state.preds``)."""
        resources = self.resources.backend_resources
        return self.backend.path_start(self.graph, source, predecessors, resources, integers, tree)
