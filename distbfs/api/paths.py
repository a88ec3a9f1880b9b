"""``sssp``: shortest paths from one source (delta-stepping on the graph's path plan), returning
an ``SSSPResult`` in global vertex order: distances float64 with ``NO_PATH`` (inf) for vertices
not reached, predecessors int64 with ``predecessors[source] == source`` and ``UNREACHED`` (-1)
where not reached. An unweighted graph runs with weight 1 on every edge (its distances are BFS
levels). ``apsp``: every pair's distance for graphs small enough to hold an n x n matrix.

The plan (the bucket width) is built once per graph and delta, outside the timing; the search's
time runs from just before the source is visited until the distances are in memory.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ..constants import NO_PATH, UNREACHED
from ..engine.buckets import BucketStats
from ..errors import InvalidArgumentType
from ..traversals.sssp import delta_stepping
from .arguments import agreed_vertex, check_bool
from .graph import Graph
from .search import gather_striped, synchronize


@dataclass
class SSSPResult:
    """The result of one shortest-path search.

    Attributes
    ----------
    source : int
    distances : array of float64 or None
        Shortest distance of every vertex in global order (``NO_PATH`` = inf when not reached),
        on every rank; numpy, or cupy on the cuda backend. None when ``gather=False``.
    predecessors : array of int64 or None
        Parent of every vertex in a shortest-path tree (among the shortest paths, one of the
        fewest edges, then the smallest parent id: the same tree on any backend and rank
        count), ``predecessors[source] == source``, ``UNREACHED`` when not reached. None unless
        ``predecessors=True`` and ``gather=True``.
    local_distances, local_predecessors, local_vertices : array
        This rank's owned vertices only, in local order.
    buckets : list of BucketStats
        Per-bucket counters summed over ranks (and per-phase seconds with ``timing=True``).
    delta : float
        The bucket width the search used.
    seconds : float
        Wall time of the search (slowest rank).
    edges_traversed : int
        Graph500 edge count of the reached component (undirected edges once).
    validated : bool
        Whether the result was checked against Graph500's SSSP rules.
    """

    source: int
    distances: Any
    predecessors: Any
    local_distances: Any
    local_predecessors: Any
    local_vertices: Any
    buckets: list[BucketStats] = field(default_factory=list)
    delta: float = 1.0
    seconds: float = 0.0
    edges_traversed: int = 0
    validated: bool = False

    @property
    def teps(self) -> float:
        """Traversed edges per second (``edges_traversed / seconds``)."""
        if self.seconds > 0:
            return self.edges_traversed / self.seconds
        return float("inf") if self.edges_traversed else 0.0

    @property
    def relaxations(self) -> int:
        """Relaxation requests the search made (all ranks)."""
        return sum(bucket.relaxations for bucket in self.buckets)


def sssp(
    graph: Graph,
    source: int,
    *,
    predecessors: bool = False,
    delta: float | None = None,
    gather: bool = True,
    validate: bool = False,
    timing: bool = False,
) -> SSSPResult:
    """Shortest paths from ``source`` (collective: every rank calls it alike).

    Parameters
    ----------
    graph : Graph
    source : int
        In ``[0, graph.num_vertices)``.
    predecessors : bool, default False
        Also compute a shortest-path tree.
    delta : float, optional
        Bucket width (default: chosen from the weights and degrees,
        ``distbfs.engine.buckets.choose_delta``).
    gather : bool, default True
        Assemble ``distances``/``predecessors`` in global order on every rank.
    validate : bool, default False
        Check the result against Graph500's SSSP rules, which need the tree: the search then
        keeps predecessors (and is timed so) even when ``predecessors`` is False.
    timing : bool, default False
        Record per-phase seconds in ``buckets[i].seconds``.

    Raises
    ------
    TypeError, ValueError
        Bad arguments (raised on every rank), e.g. "delta: expected a positive finite number".
    ValidationError
        ``validate=True`` and the result breaks a rule.
    """
    if not isinstance(graph, Graph):
        raise InvalidArgumentType(f"graph: expected a distbfs.Graph, got {type(graph).__name__}")
    predecessors = check_bool("predecessors", predecessors)
    gather, validate = check_bool("gather", gather), check_bool("validate", validate)
    timing = check_bool("timing", timing)
    plan = graph.path_plan(delta)
    comm, backend, dist = graph.comm, graph.backend, graph.dist
    source = agreed_vertex(comm, source, dist.n, "source")
    timer = backend.make_timer(timing)
    comm.barrier()
    start = time.perf_counter()
    search = delta_stepping(plan, source, predecessors=predecessors or validate, timer=timer)
    synchronize(backend)
    seconds = float(comm.allreduce(time.perf_counter() - start, op="max"))
    if validate:
        validate_paths(graph, search)
    return _result(graph, search, seconds, predecessors, gather, validate)


def validate_paths(graph: Graph, search: Any) -> None:
    """Graph500's SSSP rules on ``search`` (collective), the reached set compared with a BFS's."""
    from ..traversals.bfs import bfs_levels
    from ..validate import validate_sssp

    reached = bfs_levels(graph.plan(), search.source).distances != UNREACHED
    validate_sssp(
        graph.dist, graph.comm, search.source, search.distances, search.predecessors, reached
    )


def _result(
    graph: Graph, search: Any, seconds: float, predecessors: bool, gather: bool, validated: bool
) -> SSSPResult:
    """The ``SSSPResult`` of ``search``: its Graph500 edge count, gathered if asked."""
    from .. import stats

    comm, dist, xp = graph.comm, graph.dist, graph.backend.xp
    levels = xp.where(search.distances < NO_PATH, 0, UNREACHED).astype(xp.int32)
    preds = search.predecessors if predecessors else None
    result = SSSPResult(
        source=search.source,
        distances=None,
        predecessors=None,
        local_distances=search.distances,
        local_predecessors=preds,
        local_vertices=dist.owned_vertices(xp),
        buckets=search.buckets,
        delta=search.delta,
        seconds=seconds,
        edges_traversed=int(stats.traversed_edges(dist, comm, levels)),
        validated=validated,
    )
    if gather:
        result.distances = gather_striped(comm, search.distances, dist.n, xp)
        if preds is not None:
            result.predecessors = gather_striped(comm, preds, dist.n, xp)
    return result
