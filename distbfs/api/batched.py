"""``bfs_many``: breadth-first searches from many sources at once, up to 64 per traversal as bit
lanes (``distbfs.traversals.batched``), larger counts in batches of 64 on the same striped graph
(every rank and GPU takes part in every batch). Returns a (sources, vertices) int32 matrix of
distances, row i the BFS from ``sources[i]``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.arrays.lanes import MAX_LANES
from ..comm.base import Communicator
from ..engine.levels import LevelStats
from ..errors import InvalidArgumentType
from ..traversals.batched import batched_levels
from .arguments import agreed_sources, check_bool, check_depth_limit, check_thresholds
from .graph import Graph
from .search import LocalPart, later_owned_ids, start_clock, stop_clock


@dataclass
class BatchedBFSResult(LocalPart):
    """The result of ``bfs_many``.

    Attributes
    ----------
    sources : numpy array of int64
        The sources, in the order given (duplicates kept: equal rows).
    distances : array of int32 (sources x vertices) or None
        Row i: BFS level of every vertex from ``sources[i]`` (``UNREACHED`` = -1 when not
        reached, or farther than the depth limit), on every rank; numpy, or cupy on the cuda
        backend. None when ``gather=False``.
    local_distances : array of int32 (sources x owned vertices)
        This rank's owned vertices only (local order).
    local_vertices : array of int64
        Global ids of the owned vertices, made when first read.
    batches : list of list of LevelStats
        Per batch of up to 64 sources, its levels summed over ranks; a row's ``frontier`` and
        ``discovered`` count (vertex, source) pairs.
    seconds : float
        Wall time of all batches (slowest rank); gathering and validation not included.
    edges_traversed : int
        Sum over the sources of each search's Graph500 edge count.
    validated : bool
        Whether every row was checked by ``distbfs.validate.validate`` (exact levels).
    """

    sources: np.ndarray
    distances: Any
    local_distances: Any
    batches: list[Sequence[LevelStats]] = field(default_factory=list)
    seconds: float = 0.0
    edges_traversed: int = 0
    validated: bool = False

    @property
    def searches_per_second(self) -> float:
        """Sources searched per second."""
        return self.sources.shape[0] / self.seconds if self.seconds > 0 else float("inf")

    @property
    def teps(self) -> float:
        """Aggregate traversed edges per second (``edges_traversed / seconds``)."""
        if self.seconds > 0:
            return self.edges_traversed / self.seconds
        return float("inf") if self.edges_traversed else 0.0


def bfs_many(
    graph: Graph,
    sources: Any,
    *,
    gather: bool = True,
    validate: bool = False,
    timing: bool = False,
    depth_limit: int | None = None,
    alpha: float | None = None,
) -> BatchedBFSResult:
    """Breadth-first search from every vertex of ``sources``, 64 at a time as the bit lanes of
    one traversal (collective).

    Parameters
    ----------
    graph : Graph
    sources : sequence or array of int
        Vertex ids in ``[0, graph.num_vertices)``; order kept, duplicates allowed.
    gather : bool, default True
        Assemble ``distances`` (sources x n) on every rank.
    validate : bool, default False
        Check every row (``distbfs.validate.validate``: exact BFS levels).
    timing : bool, default False
        Record per-phase seconds in the level rows.
    depth_limit : int, optional
        Stop once level ``depth_limit`` is labeled; farther vertices stay ``UNREACHED``.
    alpha : float, optional
        A level pulls while the frontier's out-edges exceed the graph's edges / ``alpha``
        (0: push only; default ``distbfs.traversals.batched.LANES_ALPHA``).

    Raises
    ------
    TypeError, ValueError
        Bad arguments, e.g. "sources: vertex 99 is out of range for a graph of 10 vertices"
        (raised on every rank).
    InputError
        The distance matrix needs more memory than a rank has (bytes needed and available).
    """
    from .. import stats
    from .. import validate as validation

    if not isinstance(graph, Graph):
        raise InvalidArgumentType(f"graph: expected a distbfs.Graph, got {type(graph).__name__}")
    flags = {"gather": gather, "validate": validate, "timing": timing}
    gather, validate, timing = (check_bool(name, v) for name, v in flags.items())
    depth_limit = check_depth_limit(depth_limit)
    direction = check_thresholds(alpha, None)
    comm, backend, dist = graph.comm, graph.backend, graph.dist
    ids = agreed_sources(comm, sources, dist.n, "sources", distinct=False)
    xp, k = backend.xp, int(ids.shape[0])
    require_matrix(graph, k, gather)
    backend.lanes_prepare(graph.resources)  # built once per graph, outside the timing
    start = start_clock(comm, backend)
    options = {"depth_limit": depth_limit, **direction}
    searches = [
        batched_levels(
            graph.resources, ids[i : i + MAX_LANES], timer=backend.make_timer(timing), **options
        )
        for i in range(0, k, MAX_LANES)
    ]
    seconds = stop_clock(comm, backend, start)
    rows = [search.distances for search in searches]
    local = rows[0] if len(rows) == 1 else xp.concatenate(rows)  # one batch: no copy
    if validate:
        for i, source in enumerate(ids.tolist()):
            validation.validate(dist, comm, source, local[i], depth_limit=depth_limit)
    edges = sum(stats.traversed_edges(dist, comm, row, backend) for row in local)
    return BatchedBFSResult(
        sources=ids,
        distances=gather_rows(comm, local, dist.n, xp) if gather else None,
        local_distances=local,
        owned=later_owned_ids(dist, xp),
        batches=[search.levels for search in searches],
        seconds=seconds,
        edges_traversed=edges,
        validated=validate,
    )


def require_matrix(graph: Graph, k: int, gather: bool) -> None:
    """Refuse (every rank, ``InputError``) distances from ``k`` sources that would not fit: the
    rank's (k, owned) block, and with ``gather`` the whole (k, n) matrix, beside one batch's
    state where the backend counts it by vertex (``lane_state_bytes``: the device's)."""
    from ..engine.plan import require_search
    from ..memory import require

    dist = graph.dist
    matrix = 4 * k * (dist.n if gather else dist.nlocal) + 4 * k * dist.nlocal
    matrix += getattr(graph.backend, "lane_state_bytes", 0) * dist.nlocal
    fix = "pass fewer sources per call, or gather=False"
    require(matrix, graph.backend.xp, graph.comm, f"the distances from {k:,} sources", fix)
    require_search(graph.resources, "lanes", f"searches from {k:,} sources as bit lanes")


def gather_rows(comm: Communicator, local: Any, n: int, xp: Any) -> Any:
    """The (rows, n) matrix in global vertex order from every rank's (rows, owned) block (one
    all-gather of the transposed blocks)."""
    rows = int(local.shape[0])
    if comm.size == 1:
        return local
    flat = comm.allgather_array(xp.ascontiguousarray(local.T).reshape(-1))
    out = xp.empty((rows, n), dtype=local.dtype)
    begin = 0
    for r in range(comm.size):
        count = len(range(r, n, comm.size))
        out[:, r :: comm.size] = flat[begin : begin + count * rows].reshape(count, rows).T
        begin += count * rows
    return out
