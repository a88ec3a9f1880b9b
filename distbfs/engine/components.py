"""The plan of a connected-components run (Afforest: Sutton, Ben-Nun & Barak, "Optimizing
Parallel Graph Connectivity Computation via Subgraph Sampling", IPDPS 2018; gapbs ``cc.cc``) and
the statistics of its rounds.

Plan. ``sample_rounds`` (gapbs's ``neighbor_rounds``, 2): how many neighbours of every vertex
are linked first, one round each, to approximate the components on a sparse subgraph.
``samples`` (gapbs's ``num_samples``, 1024): how many vertices' labels are read to find the
largest intermediate component, whose vertices then skip their remaining edges. The sampled
vertices are a counter hash (``distbfs.hashing.splitmix64``) of the sample index under a fixed
key, so they, the component found and every round are the same at any rank count and on either
backend. A directed graph is linked through its out- and in-neighbours (weakly connected
components): the plan holds the in-neighbour CSR (``GraphResources.in_neighbours``, built once
per graph).

The giant component by a search. On an undirected graph of average degree ``SEARCH_DEGREE`` or
more (the power-law and random graphs whose giant component a direction-optimizing BFS crosses
in a handful of levels), a breadth-first search from the highest-degree vertex (``hub``) replaces
the sampled subgraph: every vertex it reaches is in one component, so each takes the smallest
reached id as its label (one tree, a star) before any link, and a finished search has found
that component whole, which the finish then skips as it skips the sampled largest one. The
search stops at its tail (``distbfs.traversals.bfs``: where it turns top-down again after
bottom-up levels; a few vertices a level on such graphs, each level a barrier): the rows it did
not reach are then linked as a whole search's are, with the reached vertices at its label, so the
tail's vertices join through their edges into the last frontier. That holds the labels' rule
where the label is ``first_row``, the smallest vertex with an edge (no row left can be smaller),
and on replicas where every rank's rows left have at most n / size edges (the room
``replica_bytes`` counts); otherwise the stopped search counts as a partial one. A search
stopped by ``search_levels`` (a high-diameter part) leaves a partial tree, still a valid forest:
the sampled passes then run on top of it. The caller passes the graph's search plan (a factory,
called only where the plan searches).

Linking in place. A backend with ``link_in_place`` (CUDA) joins a whole set of links in one
lock-free union-find pass over a label array of every vertex and compresses, in place of the
rounds of the striped path (``in_place``). One rank holds that array; on several ranks each holds
a replica (``replicated``, where every rank's device has room for it, ``REPLICA_METHODS``),
links the rows it owns into it, and a merge after the sampled passes and after the finish makes
the replicas equal (``distbfs.traversals.cc``). The labels, the largest component and the links
are the same. After a search that found a whole component, a pass in place links only the rows
the search left that have edges (``reached_bits``'s rows; on a Kronecker graph a few thousand of the
vertices outside the giant component, the rest isolated) and compresses only their vertices:
every other vertex is the star's or a root already, so no pass reads every label. On several
ranks the run then keeps only its owned labels, and the edges of every rank's rows left,
all-gathered, are linked whole by every rank in a replica of their ends' labels alone
(``remainder``), so no merge follows; the striped rounds link them in a
run of their own, whose few hooked trees are all its compress moves (``distbfs.traversals.cc``).

Statistics. Every round (one pass of: read the labels of the links' far ends, keep the links
joining different labels, hook, compress) is one ``RoundStats`` row: its counters summed over
ranks, its pointer jumps (the same on every rank) and, with a timer, the slowest rank's seconds
per phase. An in-place pass is one row per set of links (one compress: ``jumps`` 1; no hook
requests or label requests travel).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..hashing import derive_keys, splitmix64
from ..memory import fits
from .plan import require_search

DEFAULT_SAMPLE_ROUNDS = 2
"""Neighbours of every vertex linked before the largest component is sampled (gapbs's)."""
DEFAULT_SAMPLES = 1024
"""Vertices whose labels are read to find the largest intermediate component (gapbs's)."""
SAMPLE_SEED = 0xAFF0
SAMPLE_TAG = 0xCC
"""Key of the sampled vertices: ``derive_keys(SAMPLE_SEED, SAMPLE_TAG, 1)`` (a tag of its own,
apart from the generators' ``distbfs.hashing.TAG_*``)."""

SEARCH_DEGREE = 8.0
"""Average degree (stored edges per vertex) from which a run finds its giant component by a
search from the highest-degree vertex: Kronecker and uniform graphs (32 stored edges a vertex
at Graph500's edge factor), not road networks (2-3) or meshes (4-6), whose searches take a
level per hop."""
SEARCH_LEVELS = 64
"""Levels that search runs at most: past them the graph is not the low-diameter kind the search
is for, and sampling goes on from the partial tree."""

COMPONENT_METHODS = (
    "components_start",
    "reached_bits",
    "seed_labels",
    "take_labels",
    "sample_links",
    "remaining_links",
    "owned_labels",
    "component_roots",
    "label_queries",
    "answer_labels",
    "take_answers",
    "cross",
    "partition_hooks",
    "apply_hooks",
    "jump_start",
    "jump",
    "jumping_labels",
)
"""The backend methods of connected components (``distbfs.backends.base``)."""
REPLICA_METHODS = (
    "link_in_place",
    "replica_start",
    "replica_bytes",
    "hooked_pairs",
    "link_pairs",
    "listed_pairs",
    "reached_ends",
    "replica_owned",
)
"""The backend methods of a run over replicated labels (several ranks linking in place)."""


def sample_vertices(n: int, count: int) -> np.ndarray:
    """``count`` vertex ids in ``[0, n)`` (int64, host), hashed from the sample index: the same
    at any rank count. None for an empty graph."""
    if n == 0 or count == 0:
        return np.zeros(0, dtype=np.int64)
    key = derive_keys(SAMPLE_SEED, SAMPLE_TAG, 1)[0]
    hashed = splitmix64(key, np.arange(count, dtype=np.uint64))
    return (hashed % np.uint64(n)).astype(np.int64)


def highest_degree_vertex(graph: Any, comm: Any) -> int:
    """The vertex of highest out-degree, the smallest among equals (collective: one all-gather
    of every rank's best); -1 for a graph without vertices."""
    degrees = graph.local_degrees()
    best = (-1, 0)
    if degrees.shape[0]:
        i = int(degrees.argmax())  # the first of the rank's highest: its smallest id
        best = (int(degrees[i]), -(i * graph.size + graph.rank))
    degree, negated = max(comm.allgather_object(best))
    return -negated if degree >= 0 else -1


def first_row(graph: Any, comm: Any) -> int:
    """The smallest vertex with an out-edge, n where none (collective: one all-reduce)."""
    has = graph.local_degrees() > 0
    i = int(has.argmax()) if has.shape[0] else 0
    mine = i * graph.size + graph.rank if has.shape[0] and bool(has[i]) else graph.n
    return int(comm.allreduce(np.array([mine], dtype=np.int64), op="min")[0])


def most_frequent(labels: np.ndarray) -> int:
    """The most frequent of ``labels`` (the smallest among equals); -1 when there is none."""
    if labels.shape[0] == 0:
        return -1
    values, counts = np.unique(labels, return_counts=True)
    return int(values[int(np.argmax(counts))])


class ComponentPlan:
    """Connected components (Afforest) over the shared ``GraphResources`` of a graph.

    Attributes
    ----------
    graph, backend, comm
        As in ``resources``.
    in_graph : DistGraph
        The in-neighbours of a directed graph (the graph itself when undirected).
    in_place : bool
        Each set of links is one union-find pass, not rounds (``link_in_place``). By default
        where it can be: a backend that has it, and one rank or room on every rank for a
        replica of the labels (``replica_bytes``); False forces the rounds.
    replicated : bool
        In place on several ranks: every rank links into its replica of the labels.
    sample_rounds : int
    samples : numpy array of int64
        The sampled vertices (global ids, the same on every rank).
    search : SearchPlan or None
        The BFS plan that finds the giant component (module docstring): ``search()`` called
        where ``search`` is given and the graph is undirected (a BFS follows out-edges only)
        with an average degree of at least ``search_degree``; None: sampling alone.
    hub : int
        The search's source: the highest-degree vertex (-1 without a search).
    first_row : int
        The smallest vertex with an edge (-1 without a search): a search stopped at its tail
        whose smallest reached vertex is this one leaves no row that could lower its label.
    search_levels : int
        Levels the search runs at most.
    """

    def __init__(
        self,
        resources: Any,
        sample_rounds: int = DEFAULT_SAMPLE_ROUNDS,
        samples: int = DEFAULT_SAMPLES,
        in_place: bool | None = None,
        search: Callable[[], Any] | None = None,
        search_degree: float = SEARCH_DEGREE,
        search_levels: int = SEARCH_LEVELS,
    ) -> None:
        backend = resources.backend
        if not all(callable(getattr(backend, name, None)) for name in COMPONENT_METHODS):
            raise ValueError(f"the {backend.name} backend has no connected-components stages")
        if sample_rounds < 0 or samples < 0 or search_levels < 1:
            raise ValueError(
                "sample_rounds and samples must be >= 0 and search_levels >= 1, got "
                f"{sample_rounds}, {samples}, {search_levels}"
            )
        self.resources = resources
        self.graph, self.backend, self.comm = resources.graph, backend, resources.comm
        require_search(resources, "components", f"components of {self.graph.n:,} vertices")
        self.in_graph = resources.in_neighbours()
        can = in_place is not False and self._can_link_in_place()
        if in_place and not can:
            raise ValueError(f"the {backend.name} backend cannot link in place on this graph")
        self.in_place = can
        self.replicated = can and self.comm.size > 1
        self.sample_rounds = int(sample_rounds)
        self.samples = sample_vertices(self.graph.n, int(samples))
        graph = self.graph
        read = self.samples  # the samples this rank reads: its own, or all in a replica
        if not self.replicated:
            read = read[read % graph.size == graph.rank]
        self._read_samples = backend.xp.asarray(read)
        dense = graph.n > 0 and graph.num_edges >= search_degree * graph.n
        searches = search is not None and dense and not graph.directed
        self.search = search() if searches else None
        self.hub = highest_degree_vertex(graph, self.comm) if self.search is not None else -1
        self.first_row = first_row(graph, self.comm) if self.search is not None else -1
        self.search_levels = int(search_levels)

    def _can_link_in_place(self) -> bool:
        """Whether the backend links in place here: one rank, or on several the replica
        methods and every rank's room for a replica (collective where several)."""
        backend = self.backend
        if not callable(getattr(backend, "link_in_place", None)):
            return False
        if self.comm.size == 1:
            return True
        if not all(callable(getattr(backend, name, None)) for name in REPLICA_METHODS):
            return False
        return fits(backend.replica_bytes(self.graph), backend.xp, self.comm)

    def start(self, seeded: bool = False, replica: bool | None = None) -> Any:
        """A new run's state: every vertex its own label (the owned ones', or a replica's where
        ``replica``, by default where the plan is ``replicated``); ``seeded``: the labels left
        unset, for the backend's ``seed_labels`` to write."""
        replica = self.replicated if replica is None else replica
        start = self.backend.replica_start if replica else self.backend.components_start
        return start(self.graph, self.resources.backend_resources, seeded=seeded)

    def remainder(self, listed: Any, reached: Any = None, label: int = -1) -> Any:
        """A replica of the labels of the vertices ``listed`` alone (global ids, every rank's:
        a whole search's remainder); with ``reached`` (a flag for each, OR-reduced over the
        ranks: a search stopped at its tail) the flagged ones hold ``label``."""
        resources = self.resources.backend_resources
        return self.backend.replica_start(
            self.graph, resources, listed=listed, reached=reached, label=label
        )

    def seed_bounds(self, smallest: int, edges: int, whole: bool) -> tuple[int, int]:
        """The hub search's label, the smallest vertex any rank reached, and where the search
        was ``whole`` on replicas the most out-edges any rank's rows left have (else 0): one
        all-reduce (collective)."""
        pairs = whole and self.replicated
        low = self.comm.allreduce(np.array([smallest, -edges if pairs else 0]), op="min")
        return int(low[0]), -int(low[1])

    def owned(self, state: Any) -> Any:
        """The run's state over the owned vertices' labels (local order): a replica's share."""
        return self.backend.replica_owned(self.graph, state) if self.replicated else state

    def largest_label(self, state: Any) -> Any:
        """The most frequent label among the sampled vertices (collective on striped labels: one
        all-gather of their labels; a replica reads them all), the smallest among equals: the
        largest intermediate component. An int,
        or where the plan links in place and the backend can, a 0-d device array never
        read to the host (``int()`` reads it)."""
        if self.in_place and callable(getattr(self.backend, "largest_in_place", None)):
            label = self.backend.largest_in_place(self.graph, state, self._read_samples)
            if label is not None:
                return label
        if self.replicated:  # every label is here, the same on every rank
            labels = state.labels[self._read_samples]
        else:
            labels = self.backend.owned_labels(self.graph, state, self._read_samples)
        labels = np.asarray(self.backend.to_host(labels), dtype=np.int64)
        if self.comm.size > 1 and not self.replicated:
            labels = np.concatenate(self.comm.allgather_object(labels))
        return most_frequent(labels)


COUNTERS = ("links", "crossing", "hooks_sent", "hooks_sent_remote", "hooked", "label_requests")
"""Per-round counters kept on each rank and summed over ranks after the run: links whose labels
were compared, those joining different labels, hook requests sent after the local reduction
(and those to other ranks), roots hooked, and labels asked of other ranks (far ends of links and
pointer jumps; none on one rank)."""


@dataclass
class RoundStats:
    """One round of a connected-components run, summed over ranks; ``seconds``: slowest rank.
    ``phase``: ``search`` (the giant component's search: ``hooked`` counts the vertices it
    joined under the smallest one, nothing else), ``sample R`` (linking neighbour R of every
    vertex) or ``finish`` (the remaining edges), and ``merge ...`` on replicas; ``round``: its
    index within the phase; ``jumps``: pointer-jumping steps of its compress."""

    phase: str
    round: int
    links: int
    crossing: int
    hooks_sent: int
    hooks_sent_remote: int
    hooked: int
    label_requests: int
    jumps: int
    seconds: dict[str, float] = field(default_factory=dict)


IN_PLACE_COUNTERS = (COUNTERS.index("links"), COUNTERS.index("crossing"), COUNTERS.index("hooked"))
"""The COUNTERS that a pass in place counts (``link_in_place``'s three, in this order)."""
SENT_COUNTERS = (COUNTERS.index("hooks_sent"), COUNTERS.index("hooks_sent_remote"))
"""The COUNTERS of a merge's pairs sent (every one to other ranks)."""


class RoundLog:
    """The rounds of one run on this rank: (phase, round, jumps) and the COUNTERS; a pass in
    place leaves its three counts on the device (``in_place``), read once by ``stats``."""

    def __init__(self) -> None:
        self.names: list[tuple[str, int, int]] = []
        self.rows: list[Any] = []

    def round(self, phase: str, index: int, jumps: int, counters: list[int]) -> None:
        self.names.append((phase, index, jumps))
        self.rows.append(list(counters))

    def in_place(self, phase: str, counts: Any, sent: int = 0, everywhere: bool = False) -> None:
        """One pass in place (one round, one compress): ``counts`` as IN_PLACE_COUNTERS, in an
        array the backend's ``to_host`` reads; ``sent``: hook requests sent to other ranks (a
        merge's pairs); ``everywhere``: every rank ran the same pass (a whole search's
        remainder), counted once."""
        self.names.append((phase, 0, 1))
        self.rows.append((counts, sent, everywhere))

    def stats(self, comm: Any, timer: Any, to_host: Any = np.asarray) -> list[RoundStats]:
        """Sum the counters over ranks (one all-reduce) and take the slowest phase times;
        ``to_host`` reads the counts of passes in place."""
        local = np.zeros((len(self.rows), len(COUNTERS)), dtype=np.int64)
        for i, row in enumerate(self.rows):
            if isinstance(row, list):
                local[i] = row
            else:
                counts, sent, everywhere = row
                if comm.rank == 0 or not everywhere:
                    local[i, list(IN_PLACE_COUNTERS)] = to_host(counts)
                local[i, list(SENT_COUNTERS)] = sent
        totals = comm.allreduce(local)
        phases = timer.per_level()
        names = sorted({name for row in phases for name in row})
        seconds = np.array([[row.get(k, 0.0) for k in names] for row in phases], np.float64)
        if seconds.size:
            seconds = comm.allreduce(seconds, op="max")
        out = []
        for i, (phase, index, jumps) in enumerate(self.names):
            counts = dict(zip(COUNTERS, (int(x) for x in totals[i]), strict=True))
            times = dict(zip(names, seconds[i].tolist(), strict=True)) if seconds.size else {}
            out.append(RoundStats(phase, index, jumps=jumps, seconds=times, **counts))
        return out


__all__ = [
    "COMPONENT_METHODS",
    "COUNTERS",
    "DEFAULT_SAMPLES",
    "DEFAULT_SAMPLE_ROUNDS",
    "REPLICA_METHODS",
    "SEARCH_DEGREE",
    "SEARCH_LEVELS",
    "ComponentPlan",
    "RoundLog",
    "RoundStats",
    "highest_degree_vertex",
    "most_frequent",
    "sample_vertices",
]
