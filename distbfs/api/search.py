"""``bfs``: one breadth-first search of a ``Graph``, from one source or several and optionally
up to a depth limit, returning a ``BFSResult`` in global vertex order (shaped like cuGraph's and
SciPy's results): distances int32 with ``UNREACHED`` for vertices not reached, predecessors
int64 with ``predecessors[s] == s`` for every source s.

The search runs on the graph's plan for the strategy (built once per graph and strategy, outside
the timing); its time runs from just before the root is visited until the labels are in memory
(the level table and the counts of the result are made after it).
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backends.base import Backend
from ..comm.base import Communicator
from ..engine.levels import LevelStats
from ..errors import InvalidArgumentType
from ..graph import DistGraph
from ..partition import num_local, owned_ids
from ..traversals.bfs import level_table, run_levels
from .arguments import agreed_sources, check_bool, check_depth_limit, check_thresholds
from .graph import Graph


@dataclass
class LocalPart:
    """What every result holds of this rank's part besides its arrays: ``local_vertices``, the
    owned vertices' global ids, made when first read (``owned``: ``later_owned_ids``)."""

    owned: Callable[[], Any] = field(repr=False, compare=False)

    @property
    def local_vertices(self) -> Any:
        """Global ids of the owned vertices (``rank, rank + size, ...``; int64)."""
        return self.owned()


def later_owned_ids(dist: DistGraph, xp: Any) -> Callable[[], Any]:
    """What makes a result's ``local_vertices`` on its first read and keeps them: n / size
    int64s that no search needs (1 GB a rank at Kronecker scale 27 on one GPU, and the
    device's time to write them, left running after the call), and no reference to the graph."""
    ids = functools.partial(owned_ids, dist.rank, dist.size, dist.nlocal, xp)
    return functools.cache(ids)


@dataclass
class BFSResult(LocalPart):
    """The result of one breadth-first search.

    Attributes
    ----------
    source : int or tuple of int
        The root (an int) of a search from one vertex; the roots of a search from several
        (a tuple of the distinct sources, in increasing order; a list of one vertex, or of one
        vertex repeated, gives an int).
    distances : array of int32 or None
        BFS level of every vertex in global order, the distance to the nearest source
        (``UNREACHED`` = -1 when not reached, or farther than the depth limit), on every rank;
        numpy, or cupy on the cuda backend. None when ``gather=False``.
    predecessors : array of int64 or None
        Parent of every vertex in the BFS tree (a forest rooted at the sources),
        ``predecessors[s] == s`` for every source s, ``UNREACHED`` when not reached. None
        unless ``predecessors=True`` and ``gather=True``.
    local_distances, local_predecessors : array
        This rank's owned vertices only, in local order (always set; predecessors only when
        requested).
    local_vertices : array of int64
        Global ids of the owned vertices (``rank, rank + size, ...``), made when first read.
    levels : sequence of LevelStats
        Per-level counters summed over ranks, a row per level (and per-phase seconds with
        ``timing=True``; a fused run's on its first level).
    seconds : float
        Wall time of the search (slowest rank), from just before the root is visited until the
        labels are in memory; the level table, the counts below, gathering and validation
        are not included.
    edges_traversed : int
        Graph500 edge count of the search (``distbfs.stats.search_sums``; undirected:
        the edges of the reached component).
    num_reached : int
        Vertices reached, the sources included (counted from the labels, so fused levels,
        which keep no per-level counts, are counted too).
    validated : bool
        Whether the result was checked by ``distbfs.validate.validate``.
    """

    source: int | tuple[int, ...]
    distances: Any
    predecessors: Any
    local_distances: Any
    local_predecessors: Any
    levels: Sequence[LevelStats] = field(default_factory=list)
    seconds: float = 0.0
    edges_traversed: int = 0
    num_reached: int = 0
    validated: bool = False

    @property
    def teps(self) -> float:
        """Traversed edges per second (``edges_traversed / seconds``)."""
        if self.seconds > 0:
            return self.edges_traversed / self.seconds
        return float("inf") if self.edges_traversed else 0.0

    @property
    def depth(self) -> int:
        """Largest distance from the nearest source (0 when nothing else was reached); at
        most the depth limit."""
        return max(sum(level.span for level in self.levels) - 1, 0)


def gather_striped(comm: Communicator, local: Any, n: int, xp: Any) -> Any:
    """The global array in vertex order from every rank's striped part (on every rank)."""
    parts = comm.allgather_array(local)
    out = xp.empty(n, dtype=local.dtype)
    start = 0
    for r in range(comm.size):
        count = num_local(n, comm.size, r)
        out[r :: comm.size] = parts[start : start + count]
        start += count
    return out


def synchronize(backend: Backend) -> None:
    """Wait until the backend's device work is done (the labels are in memory)."""
    if backend.xp.__name__ != "numpy" and hasattr(backend.xp, "cuda"):
        backend.xp.cuda.Device().synchronize()


def start_clock(comm: Communicator, backend: Backend) -> float:
    """The start of a run's time (collective): once the device has finished what was queued
    before (a previous call's statistics or sizes, still running asynchronously, would
    otherwise count in this run's time) and every rank is there."""
    synchronize(backend)
    comm.barrier()
    return time.perf_counter()


def stop_clock(comm: Communicator, backend: Backend, start: float) -> float:
    """A run's time from ``start`` (``start_clock``) until its results are in memory on every
    rank: the slowest rank's seconds (collective)."""
    synchronize(backend)
    return float(comm.allreduce(time.perf_counter() - start, op="max"))


def bfs(
    graph: Graph,
    source: int | Sequence[int],
    *,
    predecessors: bool = False,
    gather: bool = True,
    validate: bool = False,
    timing: bool = False,
    strategy: str | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    depth_limit: int | None = None,
) -> BFSResult:
    """Breadth-first search from ``source`` (collective: every rank calls it alike).

    Parameters
    ----------
    graph : Graph
    source : int or sequence of int
        Root vertex, in ``[0, graph.num_vertices)``, or several (duplicates count once), all at
        level 0: distances to the nearest source; each source is its own predecessor.
    predecessors : bool, default False
        Also compute the BFS tree (parent of every reached vertex).
    gather : bool, default True
        Assemble ``distances``/``predecessors`` in global vertex order on every rank. With
        False only the ``local_*`` arrays are set (no all-gather: for large graphs).
    validate : bool, default False
        Check the result with ``distbfs.validate.validate`` (Graph500 rules; exact levels).
    timing : bool, default False
        Record per-phase seconds in ``levels[i].seconds``.
    strategy : str, optional
        How levels run, one of ``distbfs.engine.STRATEGIES`` (default: ``direction_optimizing``
        where the backend has bottom-up stages, else ``hybrid``).
    alpha, beta : float, optional
        Thresholds of the direction heuristic (``distbfs.engine.choose_direction``; GAP's 15
        and 18 by default): top-down -> bottom-up when the frontier's edges exceed the
        unexplored edges / alpha; back when the frontier falls below n / beta.
    depth_limit : int, optional
        Stop once level ``depth_limit`` (>= 0) is labeled: farther vertices stay ``UNREACHED``
        (distance and predecessor) and no later level runs (None, the default: no limit).

    Returns
    -------
    BFSResult

    Raises
    ------
    TypeError
        ``graph`` is not a ``Graph`` or ``source`` not an integer.
    ValueError
        ``source`` (or an entry of it) out of range, e.g. "source: vertex 99 is out of range
        for a graph of 10 vertices", an empty list of sources, a negative ``depth_limit``, or
        a bad strategy or threshold (raised on every rank).
    ValidationError
        ``validate=True`` and the result breaks a rule.

    Examples
    --------
    >>> g = distbfs.Graph.from_edges([0, 1], [1, 2], directed=False)   # doctest: +SKIP
    >>> distbfs.bfs(g, 0).distances                                    # doctest: +SKIP
    array([0, 1, 2], dtype=int32)
    """
    if not isinstance(graph, Graph):
        raise InvalidArgumentType(f"graph: expected a distbfs.Graph, got {type(graph).__name__}")
    flags = {"predecessors": predecessors, "gather": gather, "validate": validate}
    predecessors, gather, validate = (check_bool(name, v) for name, v in flags.items())
    timing, depth_limit = check_bool("timing", timing), check_depth_limit(depth_limit)
    plan = graph.plan(strategy, **check_thresholds(alpha, beta))
    comm, backend, dist = graph.comm, graph.backend, graph.dist
    sources = agreed_sources(comm, source, dist.n, "source")
    timer = backend.make_timer(timing)
    start = start_clock(comm, backend)
    run = run_levels(plan, sources, predecessors=predecessors, depth_limit=depth_limit, timer=timer)
    seconds = stop_clock(comm, backend, start)
    search = level_table(run, timer)
    return _result(graph, search, seconds, validate, gather, depth_limit)


def _result(
    graph: Graph,
    search: Any,
    seconds: float,
    validate: bool,
    gather: bool,
    depth_limit: int | None = None,
) -> BFSResult:
    """The ``BFSResult`` of ``search``: validated if asked (against its depth limit), its
    Graph500 edge count, gathered in global order if asked."""
    from .. import stats
    from .. import validate as validation

    comm, dist, xp = graph.comm, graph.dist, graph.backend.xp
    edges, reached = stats.search_sums(dist, comm, search.distances, graph.backend)
    if validate:  # in the graph's array module: on the GPU for the cuda backend
        validation.validate(
            dist,
            comm,
            search.sources,
            search.distances,
            search.predecessors,
            depth_limit=depth_limit,
        )
    result = BFSResult(
        source=search.source,
        distances=None,
        predecessors=None,
        local_distances=search.distances,
        local_predecessors=search.predecessors,
        owned=later_owned_ids(dist, xp),
        levels=search.levels,
        seconds=seconds,
        edges_traversed=edges,
        num_reached=reached,
        validated=validate,
    )
    if gather:
        result.distances = gather_striped(comm, search.distances, dist.n, xp)
        if search.predecessors is not None:
            result.predecessors = gather_striped(comm, search.predecessors, dist.n, xp)
    return result
