"""The backend interface: an array module plus the stage functions of one BFS level.

Stages follow Merrill et al. 2012, section 6.1, and the level loop in
``distbfs.traversals.bfs`` calls them in this order: ``expand`` (vertex frontier -> edge
frontier), ``filter_partition`` (visited-mask and duplicate culling, binning by owner),
``contract_local`` (may label the own bin early), [exchange by the communicator], ``contract``
(status lookup against owned labels; labels and the next vertex frontier). ``numpy``
implements them on the host; ``cuda`` with CUDA kernels from ``kernels/``. Which backend runs is
decided in exactly one place, ``distbfs.runtime.get_backend``. Per-graph resources
(``prepare``) are built once per graph by the search plan (``distbfs.engine.plan``), which keeps
them while the graph is searched.

Direction-optimizing search (Beamer, Asanović & Patterson, SC 2012) adds bottom-up levels, which
a backend offers by four more methods (``distbfs.engine.strategy.supports_bottom_up`` tells
whether it has them):
``frontier_edges`` (this rank's share of m_f, the heuristic's input), ``frontier_bitmap``
(queue -> this rank's packed frontier bits), [all-gather of the bitmaps by the communicator],
``bottom_up`` (every unvisited owned vertex scans its in-neighbours for one in the global
frontier and stops at the first; found vertices become the next frontier queue directly), and
``unexplored`` (this rank's unlabeled vertices and their out-edges, recounted from the labels
after fused levels, which keep no per-level counts).

Connected components (Afforest, Sutton et al. 2018; ``distbfs.traversals.cc``) use the methods
``distbfs.engine.components.COMPONENT_METHODS`` names, written once over the array module for both
backends (``distbfs.backends.arrays.component_stages.ArrayComponentStages``; the state and links in
``arrays.components``, the steps in ``arrays.hook``): ``components_start`` (every owned vertex its
own label), ``reached_bits`` / [all-gather on replicas] / ``seed_labels`` (the vertices a BFS
reached, packed as a frontier bitmap, take one label: the giant component's search; after a search
that found a whole component, the same pass lists the owned vertices it did not reach that have
edges: the only rows left to link), ``sample_links`` (neighbour r of every owned vertex) and
``remaining_links`` (every neighbour of the owned vertices outside the largest intermediate
component), ``owned_labels`` (labels of owned vertices by global id), ``label_queries`` /
[exchange] / ``answer_labels`` / [exchange] / ``take_answers`` (the labels of far vertices, asked
of their owners), ``cross`` (keep the links joining different labels), ``partition_hooks`` /
[exchange] / ``apply_hooks`` (each crossing link's larger label, a root, takes the smallest smaller
label requested for it, at its owner), ``jump_start`` / ``jump`` / ``jumping_labels`` (pointer
jumping until every tree is a star), ``component_roots`` (the owned vertices that are their own
label) and ``take_labels`` (the labels of the rows a whole search left, from the run that linked
them). A backend may also offer ``link_in_place`` (the CUDA backend does): on one rank, which holds
every label, a set of links is joined in one lock-free union-find pass and compressed, instead of
in rounds, and after a whole search only the rows left are linked and compressed; with the methods
``REPLICA_METHODS`` names, several ranks each link their rows into a replica of every label
(``replica_start``, ``replica_bytes``), send the roots they hooked (``hooked_pairs``), link the
others' (``link_pairs``) and keep their share at the end (``replica_owned``).

A backend may offer ``unlabeled`` (the CUDA backend does): this rank's owned vertices a search
left UNREACHED and their out-edges, counted where the labels are in one pass, for a search's
statistics (``distbfs.stats.search_sums``; without it they are summed in the array module).

Frontier bitmap layout (shared by every backend and the communicator): rank r's bitmap has
``frontier_bitmap_bytes(n, size)`` bytes (a multiple of 8, so it is also a whole number of
little-endian uint32 or uint64 words); bit k (bit ``k % 8`` of byte ``k // 8``, numpy's
``bitorder="little"``) is its local vertex k, global vertex ``k * size + r``. The all-gather
stacks the ranks' bitmaps into a ``(size, bytes)`` array: global vertex v is row ``v % size``,
bit ``v // size``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..comm.base import Bins
from ..graph import DistGraph

BITMAP_ALIGN_BYTES = 8
"""Each rank's frontier bitmap is padded to whole 64-bit words."""


def frontier_bitmap_bytes(n: int, size: int) -> int:
    """Bytes of every rank's frontier bitmap for ``n`` vertices on ``size`` ranks (equal on all
    ranks: room for the largest rank's ``ceil(n / size)`` vertices, whole 64-bit words)."""
    largest = -(-n // size)
    return BITMAP_ALIGN_BYTES * max(1, -(-largest // (8 * BITMAP_ALIGN_BYTES)))


@dataclass
class EdgeFrontier:
    """Neighbours gathered by expansion: global ids, and the expanding vertex of each (preds).
    ``last``: the level's last strip (see ``Backend.expansion_strips``)."""

    vertices: Any
    parents: Any | None = None
    last: bool = True

    @property
    def size(self) -> int:
        return int(self.vertices.shape[0])


@dataclass
class SearchState:
    """Everything one search keeps on one rank between levels.

    ``labels``: distance of each owned vertex (UNREACHED until labeled). ``preds``: global id of
    the parent of each owned vertex, or None when predecessors are not kept. ``visited_mask``:
    best-effort mask over all n vertices of those this rank knows are labeled or already sent
    (a cache in front of the owners' labels). ``vertex_frontier``: local ids of the vertices
    labeled at the last level. ``frontier_size``: its length, a host int. ``scratch``: the
    backend's queues and buffers of this search. ``resources``: the backend's per-graph
    resources it started from (``Backend.prepare``). ``row``: after a level from a broadcast
    row (``contract_row``), the label its vertices got, the source and the row, which every
    rank holds: that frontier whole (``row_frontier``); else None.
    """

    labels: Any
    preds: Any | None
    visited_mask: Any
    vertex_frontier: Any
    frontier_size: int
    scratch: dict[str, Any]
    resources: Any = None
    row: tuple[int, int, Any] | None = None

    def payloads(self, parents: Any | None) -> tuple[Any, ...]:
        """The payload a BFS item carries: its parent when predecessors are kept, else none."""
        return () if self.preds is None else (parents,)


@dataclass
class PathState:
    """Everything one shortest-path search (delta-stepping) keeps on one rank between steps.

    ``distances``: tentative distance of each owned vertex (``NO_PATH`` until reached; final
    once settled). ``passes`` and ``preds``, kept by the state of a tree pass after the search
    (``distbfs.traversals.sssp.shortest_path_tree``): the pass that resolved each vertex and
    its parent's global id, the lexicographic minimum of (distance, pass, parent) over the
    requests it received. ``settled``: owned vertices whose bucket is done.
    ``frontier``: local ids improved by the last contraction below the current bucket's end,
    ``frontier_size`` its length. ``scratch``: the backend's buffers; ``resources``: as
    ``SearchState``'s. ``overflowed`` (set by ``path_finish``): the search kept its distances
    in a form too narrow for one of them and has no result (the traversal searches again).
    """

    distances: Any
    passes: Any | None
    preds: Any | None
    settled: Any
    frontier: Any
    frontier_size: int
    scratch: dict[str, Any]
    resources: Any = None
    overflowed: bool = False


@dataclass
class Relaxations:
    """Relaxation requests made by one rank: for each, the target vertex (global id) and the
    payload its owner reduces by lexicographic minimum: tentative distance, then (a tree pass's
    requests) the pass and the parent (global id)."""

    vertices: Any
    distances: Any
    passes: Any | None = None
    parents: Any | None = None

    @property
    def size(self) -> int:
        return int(self.vertices.shape[0])

    @property
    def payloads(self) -> tuple[Any, ...]:
        """What travels with each request: (distances,) or (distances, passes, parents)."""
        if self.passes is None:
            return (self.distances,)
        return (self.distances, self.passes, self.parents)


FUSED_LOG_COLUMNS = ("vertices", "own_vertices", "own_edges")
"""Columns of a row of the fused levels' log (``Backend.fused_level_log``), one row per level: its
frontier's vertices over all ranks, this rank's vertices of it and their out-edges."""


@dataclass
class Replica:
    """The whole graph as one rank's CSR, kept by every rank of a job (graphs small enough:
    ``Backend.replica_limit_bytes``), with the backend's resources for it: every rank runs a
    search of such a graph whole on its copy (``SearchPlan.whole``; shortest paths:
    ``PathPlan.replica``)."""

    graph: DistGraph
    resources: Any


@dataclass
class Inbound:
    """This rank's inbound rows (``distbfs.graph.inbound_rows``: every vertex's edges into the
    vertices this rank owns, one rank's CSR of all n rows) with the backend's resources for them
    (``Backend.prepare``): what a top-down level over the all-gathered frontier expands
    (``distbfs.traversals.bfs.inbound_level``)."""

    graph: DistGraph
    resources: Any


class Backend(Protocol):
    """What a backend provides to the level loop."""

    name: str
    xp: Any
    small_frontier_limit: int
    """Largest vertex frontier ``run_small_levels`` should take under the hybrid strategy; 0 when
    the backend has no fused small-frontier path."""
    replica_limit_bytes: int
    """Several ranks: largest whole CSR (bytes) every rank keeps a copy of and searches whole
    (``Replica``; 0: never)."""
    peer_levels: bool
    """Several ranks of one node: whether small frontiers may run fused through peer memory
    (``make_peer_mailbox``, ``run_peer_levels``; ``distbfs.engine.fused``)."""
    broadcast_row_edges: int
    """Several ranks: a search from one vertex of more out-edges than this starts with that
    row on every rank (``long_rows``, ``source_row``, ``contract_row``; 0: never)."""

    def prepare(self, graph: DistGraph) -> Any:
        """This backend's resources for searching ``graph`` (rank-local, no communication): what
        every search of the graph reuses, built once by the search plan (numpy: out-degrees;
        CUDA: the edge queue, degree bounds, kernels by role)."""
        ...

    def start(
        self, graph: DistGraph, sources: Any, predecessors: bool, resources: Any
    ) -> SearchState:
        """Labels all UNREACHED, every source labeled 0 (and its own parent) on its owner, where
        the owned sources form the vertex frontier (``frontier_size``: their number on this
        rank); every source in every rank's visited mask. ``sources``: a vertex id or a
        sequence (host array) of them, duplicates counting once; ``resources``:
        ``prepare(graph)``."""
        ...

    def expansion_strips(self, graph: DistGraph, state: SearchState) -> int:
        """How many strips the vertex frontier's expansion takes: 1 unless its out-edges exceed
        what the backend's edge queue holds (CUDA), so memory stays bounded on any level."""
        ...

    def expand(self, graph: DistGraph, state: SearchState, strip: int = 0) -> EdgeFrontier:
        """Gather the neighbours of every vertex of the vertex frontier (of strip ``strip`` of
        ``expansion_strips``: the strips together hold every edge once)."""
        ...

    def filter_partition(self, state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins | None:
        """Drop neighbours marked in the visited mask and local duplicates; bin by owner. Strips
        are filtered in order, and the bins returned after the last hold the survivors of all
        (a backend may return None before it)."""
        ...

    def contract_local(self, graph: DistGraph, state: SearchState, bins: Bins, level: int) -> None:
        """Before the exchange of ``bins`` (this rank's, from ``filter_partition``): a backend
        may contract their own-rank segment now, so it overlaps the exchange of the others, and
        ``contract`` then skips it; or do nothing (numpy: nothing to overlap on the host)."""
        ...

    def contract(self, graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
        """Label the received vertices not yet labeled with ``level``; make them the frontier."""
        ...

    def long_rows(self, graph: DistGraph, resources: Any, limit: int) -> dict[int, int] | None:
        """This rank's rows of more than ``limit`` out-edges: global vertex -> out-degree (host
        ints; a handful, the hubs); None where ``source_row`` cannot hand them out (nothing is
        known of the rows' lengths then)."""
        ...

    def source_row(self, graph: DistGraph, state: SearchState, edges: int) -> Any:
        """At level 0 of a search from one vertex of ``edges`` out-edges: its row (global ids)
        on its owner; on the other ranks an array of as many ids of the same dtype, whose
        contents the row's broadcast replaces (``Communicator.broadcast_array``)."""
        ...

    def contract_row(
        self, graph: DistGraph, state: SearchState, row: Any, parent: int, level: int
    ) -> None:
        """Label with ``level`` (parent ``parent``) the vertices of ``row``, one vertex's
        out-neighbours that every rank holds, that this rank owns and has not labeled; they
        become the vertex frontier. Every vertex of the row enters the visited mask."""
        ...

    def frontier_edges(self, graph: DistGraph, state: SearchState) -> int:
        """Out-edges of the owned vertices of the current vertex frontier (host int): this
        rank's share of m_f. A backend may compute it while contracting and return it here."""
        ...

    def frontier_bitmap(self, graph: DistGraph, state: SearchState) -> Any:
        """The current vertex frontier as this rank's packed bitmap (uint8, layout in the module
        docstring): zeroed words and one bit set per frontier vertex, O(nlocal / 8 + frontier)
        (numpy sets one byte per vertex and packs them, which is faster there)."""
        ...

    def row_frontier(self, graph: DistGraph, state: SearchState, row: Any, source: int) -> Any:
        """The gathered frontier (``(size, bytes)`` bitmaps, as every rank's ``frontier_bitmap``
        all-gathered) after ``contract_row`` labeled ``row`` from ``source``: every vertex of
        the row but the source, built from the row every rank holds, with no exchange."""
        ...

    def mark_visited(self, graph: DistGraph, state: SearchState, frontier: Any) -> None:
        """Mark every vertex of ``frontier`` (the all-gathered ``(size, bytes)`` bitmaps) in the
        visited mask: the vertices all ranks labeled last level, so this rank's next top-down
        filter culls them instead of sending them to their owners again."""
        ...

    def inbound_frontier(
        self, graph: DistGraph, inbound: Inbound, state: SearchState, frontier: Any
    ) -> None:
        """Make the all-gathered ``frontier`` (``(size, bytes)`` bitmaps) the search's vertex
        frontier over ``inbound``'s rows: every rank's frontier vertices whose inbound rows are
        not empty, as global ids, with their inbound out-edges (the next
        ``expand(inbound.graph, ...)``'s m_f). The level's ``contract`` makes the frontier
        this rank's own again."""
        ...

    def bottom_up(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: SearchState,
        frontier: Any,
        level: int,
    ) -> int:
        """One bottom-up level: label with ``level`` every unlabeled owned vertex that has an
        in-neighbour in ``frontier`` (the all-gathered ``(size, bytes)`` bitmaps), its parent
        the first such neighbour in ``in_graph``'s row order; the found vertices become the
        vertex frontier (a queue of local ids: no scan of all owned vertices to rebuild it) and
        enter the visited mask (the numpy backend also ORs the gathered frontier into it, so
        later top-down levels send fewer items). ``in_graph`` holds in-neighbours (``graph``
        itself when undirected; same striping). Returns the number of neighbour slots tested
        (edges inspected), a host int."""
        ...

    def unexplored(self, graph: DistGraph, state: SearchState) -> tuple[int, int]:
        """(unlabeled owned vertices, their out-edges), host ints: this rank's n_u and m_u,
        recounted from the labels (the level loop keeps them per level, but fused levels keep
        no counts)."""
        ...

    def run_small_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        *,
        max_levels: int = ...,
    ) -> int:
        """Contract-expand (sections 5.2, 5.4): run levels in one fused kernel while the frontier
        holds at most ``max_frontier`` vertices, and at most ``max_levels`` levels (a search's
        depth limit: the last labels ``level + max_levels``; default: no limit), one rank only;
        return how many levels ran."""
        ...

    def fused_level_log(self, state: SearchState) -> Any:
        """The log of the levels this search ran fused (host int64 rows of
        ``FUSED_LOG_COLUMNS``, read once, after the search): a row per level of every fused run
        in order, each run's rows followed by one for the frontier it stopped before. None when
        none ran fused or the backend keeps no log (the level table then has one row per run)."""
        ...

    def make_peer_mailbox(self, graph: DistGraph) -> Any:
        """This rank's mailbox for ``run_peer_levels``: an object whose ``array`` the
        communicator maps on every rank (``map_peer_memory``) and whose ``addresses`` the
        level loop then sets to the mapped addresses (only when ``peer_levels``)."""
        ...

    def run_peer_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        mailbox: Any,
        entry: tuple[int, int],
        *,
        max_levels: int = ...,
    ) -> int:
        """Several ranks of one node, collectively: run levels fused on every rank at once
        while the whole frontier is small, and at most ``max_levels`` levels (the same on every
        rank), exchanging through the mailboxes; ``entry``: the current frontier's vertices over
        all ranks and at most how many out-edges they have (a bound: only the stop rule reads
        it). Returns how many levels ran, the same on every rank (only
        when ``peer_levels``)."""
        ...

    def make_timer(self, enabled: bool) -> Any:
        """A phase timer suited to this backend (see ``distbfs.timing``)."""
        ...

    def to_host(self, array: Any) -> Any:
        """A numpy copy (or view) of a backend array."""
        ...
