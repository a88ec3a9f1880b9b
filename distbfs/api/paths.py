"""``sssp``: shortest paths from one source (delta-stepping on the graph's path plan), returning
an ``SSSPResult`` in global vertex order: distances float64 with ``NO_PATH`` (inf) for vertices
not reached, predecessors int64 with ``predecessors[source] == source`` and ``UNREACHED`` (-1)
where not reached. An unweighted graph runs with weight 1 on every edge (its distances are BFS
levels). ``apsp``: every pair's distance for graphs small enough to hold an n x n matrix,
sources spread over the ranks.

The plan (the bucket width) is built once per graph and delta, outside the timing; the search's
time runs from just before the source is visited until the distances are in memory. A distance
limit (``max_distance``) stops the search past it: farther vertices are unreached.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..constants import NO_PATH, PATH_DTYPE, UNREACHED
from ..engine.buckets import BucketStats
from ..errors import InvalidArgumentType
from ..traversals.sssp import bucket_table, cut_beyond, delta_stepping, run_buckets
from .arguments import agreed_vertex, check_bool, check_max_distance
from .graph import Graph
from .search import LocalPart, gather_striped, later_owned_ids, start_clock, stop_clock


@dataclass
class SSSPResult(LocalPart):
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
        This rank's owned vertices only, in local order (the ids made when first read).
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
    rows : str or None
        How the search read the graph's rows where the backend chose (``PathPlan.rows``: on a
        GPU, a dense graph's rows "by weight", or "as stored" where the copy found no room,
        with the bytes), else None.
    """

    source: int
    distances: Any
    predecessors: Any
    local_distances: Any
    local_predecessors: Any
    buckets: list[BucketStats] = field(default_factory=list)
    delta: float = 1.0
    seconds: float = 0.0
    edges_traversed: int = 0
    validated: bool = False
    rows: str | None = None

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
    max_distance: float | None = None,
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
        ``distbfs.engine.buckets.choose_delta``; several GPUs take it 16 times wider,
        ``distbfs.engine.plan.PathPlan``).
    gather : bool, default True
        Assemble ``distances``/``predecessors`` in global order on every rank.
    validate : bool, default False
        Check the result against Graph500's SSSP rules, which need the tree: the search then
        keeps predecessors (and is timed so) even when ``predecessors`` is False.
    timing : bool, default False
        Record per-phase seconds in ``buckets[i].seconds``.
    max_distance : float, optional
        Stop before the first bucket whose lower bound exceeds it (>= 0): vertices farther
        than ``max_distance`` are unreached (``NO_PATH``, predecessor ``UNREACHED``); the
        others get their exact distance and the same tree as without a limit. None (the
        default) or inf: no limit. With ``validate``, the result is checked against a search
        without the limit (itself checked against Graph500's rules), cut at the limit.

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
    max_distance = check_max_distance(max_distance)
    plan = graph.path_plan(delta)
    comm, backend, dist = graph.comm, graph.backend, graph.dist
    source = agreed_vertex(comm, source, dist.n, "source")
    timer = backend.make_timer(timing)
    keep = predecessors or validate
    start = start_clock(comm, backend)
    run = run_buckets(plan, source, predecessors=keep, timer=timer, max_distance=max_distance)
    seconds = stop_clock(comm, backend, start)
    search = bucket_table(run, timer)
    if validate:
        validate_paths(graph, search, max_distance)
    result = _result(graph, search, seconds, predecessors, gather, validate)
    result.rows = plan.rows
    return result


def validate_paths(graph: Graph, search: Any, max_distance: float | None = None) -> None:
    """Graph500's SSSP rules on ``search`` (collective), the reached set compared with a BFS's.
    With ``max_distance``, the rules are checked on a search without the limit, and ``search``
    must equal it cut at the limit (``cut_beyond``; the trees are deterministic)."""
    from ..traversals.bfs import bfs_levels
    from ..validate import validate_sssp

    full = search
    if max_distance is not None:
        plan = graph.path_plan(search.delta)
        full = delta_stepping(plan, search.source, predecessors=True)
    reached = bfs_levels(graph.plan(), search.source).distances != UNREACHED
    validate_sssp(graph.dist, graph.comm, full.source, full.distances, full.predecessors, reached)
    if max_distance is not None:
        cut_beyond(full.distances, full.predecessors, max_distance)
        _check_same(graph, search, full, max_distance)


def _check_same(graph: Graph, search: Any, full: Any, max_distance: float) -> None:
    """``ValidationError`` on every rank unless ``search`` (limited to ``max_distance``) has the
    distances and predecessors of ``full`` cut at the limit; names the smallest vertex that
    differs."""
    from ..errors import ValidationError
    from ..validate import RULE_DISTANCE_VALUES, RULE_TREE_EDGES

    xp, dist, comm = graph.backend.xp, graph.dist, graph.comm
    vertices = dist.owned_vertices(xp)
    for rule, mine, theirs in (
        (RULE_DISTANCE_VALUES, search.distances, full.distances),
        (RULE_TREE_EDGES, search.predecessors, full.predecessors),
    ):
        differ = xp.flatnonzero(mine != theirs)
        first = int(vertices[differ].min()) if differ.shape[0] else dist.n
        first = int(comm.allreduce(first, op="min"))
        if first < dist.n:
            what = "distance" if rule == RULE_DISTANCE_VALUES else "predecessor"
            message = (
                f"vertex {first}: the {what} limited to max distance {max_distance:g} differs "
                "from the search without a limit, cut there"
            )
            raise ValidationError(rule, first, message)


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
        owned=later_owned_ids(dist, xp),
        buckets=search.buckets,
        delta=search.delta,
        seconds=seconds,
        edges_traversed=stats.traversed_edges(dist, comm, levels, graph.backend),
        validated=validated,
    )
    if gather:
        result.distances = gather_striped(comm, search.distances, dist.n, xp)
        if preds is not None:
            result.predecessors = gather_striped(comm, preds, dist.n, xp)
    return result


@dataclass
class APSPResult:
    """Every pair's shortest distance.

    Attributes
    ----------
    distances : array of float64 (n x n) or None
        Row s: the distances from source s (``NO_PATH`` where not reached), on every rank.
        None when ``gather=False``.
    local_rows : array of float64
        The rows this rank computed: those of sources ``rank, rank + size, ...``.
    seconds : float
        Wall time (slowest rank), the gathering excluded.
    """

    distances: Any
    local_rows: Any
    seconds: float


def apsp(graph: Graph, *, delta: float | None = None, gather: bool = True) -> APSPResult:
    """All-pairs shortest paths of a graph small enough for an n x n matrix (collective).

    Every rank keeps the whole graph and computes the rows of sources ``rank, rank + size,
    ...`` alone, with no communication per search: shortest paths (delta-stepping) on a
    weighted graph, batched breadth-first search on an unweighted one (64 sources per
    traversal, ``distbfs.traversals.batched``). The rows are then gathered on
    every rank (``gather``). ``delta`` defaults to the largest weight: every edge is light, so
    a search of a small graph takes few buckets (its cost is per step there, not per edge).

    Raises
    ------
    InputError
        The rows (or, gathered, the whole matrix) need more memory than a rank has: the message
        names the bytes needed and available (``distbfs.memory``).
    """
    from ..backends.arrays.lanes import MAX_LANES
    from ..comm.single import SingleRankCommunicator
    from ..engine.plan import GraphResources, PathPlan
    from ..memory import require
    from ..traversals.batched import batched_levels

    if not isinstance(graph, Graph):
        raise InvalidArgumentType(f"graph: expected a distbfs.Graph, got {type(graph).__name__}")
    gather = check_bool("gather", gather)
    comm, backend, n = graph.comm, graph.backend, graph.num_vertices
    xp = backend.xp
    rows = len(range(comm.rank, n, comm.size))
    matrix_bytes = (n * n if gather else rows * n) * 8
    fix = "use fewer vertices, or gather=False (distbfs apsp writes rows without gathering)"
    require(matrix_bytes, xp, comm, f"the distance matrix of {n:,} vertices", fix)
    one = GraphResources(graph.resources.whole(), backend, SingleRankCommunicator())
    weighted = graph.weighted
    if weighted and delta is None:
        delta = one.weight_summary().largest or 1.0
    plan = PathPlan(one, delta) if weighted else None
    start = start_clock(comm, backend)
    local = xp.empty((rows, n), dtype=PATH_DTYPE)
    mine = np.arange(comm.rank, n, comm.size, dtype=np.int64)
    if weighted:
        for i, source in enumerate(mine.tolist()):
            local[i] = delta_stepping(plan, source).distances
    else:
        for first in range(0, rows, MAX_LANES):  # 64 searches per traversal
            levels = batched_levels(one, mine[first : first + MAX_LANES]).distances
            local[first : first + levels.shape[0]] = xp.where(levels == UNREACHED, NO_PATH, levels)
    seconds = stop_clock(comm, backend, start)
    distances = None
    if gather:
        distances = xp.empty((n, n), dtype=PATH_DTYPE)
        flat = comm.allgather_array(local.reshape(-1))
        for r, begin in enumerate(_row_starts(comm.size, n)):
            count = len(range(r, n, comm.size))
            distances[r :: comm.size] = flat[begin * n : (begin + count) * n].reshape(count, n)
    return APSPResult(distances, local, seconds)


def _row_starts(size: int, n: int) -> list[int]:
    """The first row of each rank's block in the all-gathered rows."""
    starts, begin = [], 0
    for r in range(size):
        starts.append(begin)
        begin += len(range(r, n, size))
    return starts
