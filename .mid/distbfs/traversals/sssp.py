"""Single-source shortest paths: delta-stepping (Meyer & Sanders, J. Algorithms 2003) on the
striped graph, with the engine's stages and exchange.

Tentative distances fall into buckets of width delta (``distbfs.engine.buckets``). Each bucket,
every rank: takes its unsettled vertices below the bucket's end; relaxes their light edges
(weight <= delta; on a backend with ``heavy_by_landing``, the edges that land inside the
bucket) into requests (target, distance); culls and reduces them to one per target and bins
them by owner (``partition_min``: the min-reduction form of filter+partition); exchanges the
bins; and contracts what it received by keeping, per vertex, the minimum (``contract_min``).
Vertices that improved below the bucket's end are relaxed again, until no rank has any (one
all-reduce per step: the termination test). The bucket's vertices are then settled and their
heavy edges relaxed once: pushed from the settled vertices, or, on an undirected graph where
those vertices' out-edges outnumber the unsettled ones' (``heavy_requests``: direction
optimization for the heavy step, as Beamer's for BFS levels), pulled by every unsettled vertex
from the neighbours the bucket settled, over an all-gather of the distances. One all-reduce of
the smallest unsettled distance picks the next bucket, and the search ends when there is none.
The stages come from a backend, the exchanges from a communicator: this module imports neither
cupy nor mpi4py.

In place (``PathPlan.in_place``: a backend with ``shortest_paths_in_place``, i.e. a GPU, on
one rank, or on several that each hold the graph's replica): the same buckets, steps and bucket
search run inside one persistent kernel (``kernels/relax.cu``), which needs no exchange and no
host round trip per step; on a replica every rank searches the whole graph alike and keeps its
own vertices' part (``own_share``).

``run_buckets`` is the search itself, whose time a caller takes; ``bucket_table`` then makes
its statistics (the buckets' counters summed over the ranks, the vertices each in-place bucket
settled) and a replica's share contiguous, outside that time, as ``run_levels`` and
``level_table`` split a BFS.

With positive integer weights a backend may keep each distance as an integer tied to the
parent that gave it (the CUDA backend's words), which records the tree below as the search
goes; a distance too large for that form makes ``path_finish`` report ``overflowed``, and the
search runs again with float64 distances. The numpy backend's striped steps, with the same
weights, record the same tree where it is asked for: their requests carry their tails, and an
owner keeps the smallest tail among those that give a vertex its distance (every tight edge is
relaxed from its tail's final distance, light edges by the tail's last step and heavy ones by
its bucket's heavy step, so the smallest is among them).

A distance limit X stops the search before the first bucket whose lower bound exceeds X: every
vertex within X is settled by then, and the vertices left farther than X are marked unreached
(``NO_PATH``, predecessor ``UNREACHED``).

The shortest-path tree (``shortest_path_tree``) is built after the search from the final
distances, in passes of the same stages: pass 0 gives every reached vertex its smallest
in-neighbour u with d(u) + w(u, v) = d(v) > d(u); pass k >= 1 (only where zero-weight edges
leave vertices without one) gives an unresolved vertex its smallest in-neighbour u resolved in
pass k - 1 with d(u) + w(u, v) = d(u) = d(v). Each parent is strictly closer or resolved in an
earlier pass, so the tree is acyclic, and it depends on nothing but the distances: the same on
every backend, rank count and delta. Distances are exact whatever the order of relaxation (the
minimum over paths of each path's sum, added from the source), so they are the same too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from ..constants import NO_PATH, UNREACHED
from ..engine.buckets import BucketLog, BucketStats, bucket_end
from ..engine.plan import PathPlan
from ..memory import fits
from ..partition import contiguous, owned_view


@dataclass
class PathSearch:
    """This rank's part of one shortest-path search: distances and predecessors of its owned
    vertices (local order), the buckets' statistics, and the state."""

    source: int
    distances: Any
    predecessors: Any | None
    buckets: list[BucketStats]
    delta: float
    state: Any


@dataclass
class BucketRun:
    """One search as ``run_buckets`` leaves it: this rank's distances and predecessors (strided
    views of the replica's where every rank searched it whole), the state, and the buckets'
    log (an in-place search's: the rows its launches returned, ``rows``, whose settled counts
    ``bucket_table`` adds)."""

    plan: PathPlan
    source: int
    distances: Any
    predecessors: Any | None
    state: Any
    log: BucketLog | None
    rows: list[Any] | None


def delta_stepping(
    plan: PathPlan,
    source: int,
    *,
    predecessors: bool = False,
    timer: Any = None,
    max_distance: float | None = None,
) -> PathSearch:
    """Shortest distances (and a shortest-path tree) from global vertex ``source``, up to
    ``max_distance`` (None: no limit), and their bucket table (collective)."""
    timer = plan.backend.make_timer(False) if timer is None else timer
    run = run_buckets(
        plan, source, predecessors=predecessors, timer=timer, max_distance=max_distance
    )
    return bucket_table(run, timer)


def run_buckets(
    plan: PathPlan,
    source: int,
    *,
    predecessors: bool = False,
    timer: Any = None,
    max_distance: float | None = None,
) -> BucketRun:
    """The buckets of one search from global vertex ``source`` up to ``max_distance``, and its
    tree if asked (collective): the search itself, whose time a caller takes before the bucket
    table is made."""
    timer = plan.backend.make_timer(False) if timer is None else timer
    limit = NO_PATH if max_distance is None else max_distance
    log = rows = None
    if plan.in_place:
        state, rows = in_place(plan, source, limit, timer)
    else:
        state, log = striped_buckets(plan, source, limit, timer, predecessors)
    if limit < NO_PATH:
        cut_beyond(state.distances, state.preds, limit)
    if predecessors:
        with timer.phase("tree"):
            state.preds = shortest_path_tree(plan, source, state)
    distances, preds = state.distances, state.preds if predecessors else None
    if plan.in_place and plan.replica is not None:
        distances, preds = own_share(plan, distances), own_share(plan, preds)
    return BucketRun(plan, source, distances, preds, state, log, rows)


def bucket_table(run: BucketRun, timer: Any) -> PathSearch:
    """The ``PathSearch`` of ``run`` (collective): its buckets' statistics summed over the
    ranks and its arrays made contiguous; no part of the search's time."""
    plan = run.plan
    log = run.log if run.rows is None else in_place_log(plan, run.state, run.rows)
    stats = log.stats(plan.comm, timer)
    xp = plan.backend.xp
    distances, preds = contiguous(xp, run.distances), contiguous(xp, run.predecessors)
    return PathSearch(run.source, distances, preds, stats, plan.delta, run.state)


def in_place(plan: PathPlan, source: int, limit: float, timer: Any) -> tuple[Any, list[Any]]:
    """The search on the one device that holds the graph: buckets run in launches of the
    backend's persistent kernel, each returning the rows of the buckets it ran (timed as one
    timer level, which the statistics count in the last bucket). With positive integer weights
    the backend may keep integer distances and record the tree as it searches; a distance past
    what it holds (``state.overflowed``) sends the search round again in float64."""
    backend, graph = plan.backend, plan.in_place_graph
    integers = plan.positive_integers
    while True:
        resources = plan.in_place_resources
        state = backend.path_start_in_place(graph, source, integers, resources)
        rows: list[Any] = []
        done = False
        while not done:
            with timer.phase("buckets"):
                more, done = backend.shortest_paths_in_place(graph, state, plan.delta, limit)
            rows += more
        if not state.overflowed:
            return state, rows
        integers = False


def in_place_log(plan: PathPlan, state: Any, rows: list[Any]) -> BucketLog:
    """The bucket log of an in-place search from its launches' rows, with the vertices each
    bucket settled counted from the final distances (of the whole replica, counted on rank 0
    alone, where every rank searched it)."""
    settled = plan.backend.settled_in_buckets(state, [lower for _, lower, _ in rows])
    log = BucketLog()
    counted = plan.replica is None or plan.comm.rank == 0  # a replica's once, not per rank
    for (bucket, lower, counters), count in zip(rows, settled, strict=True):
        log.bucket(bucket, lower, [c * counted for c in (*counters[:5], count)])
    return log


def striped_buckets(
    plan: PathPlan, source: int, limit: float, timer: Any, tree: bool
) -> tuple[Any, BucketLog]:
    """The search as striped steps (``striped_search``; ``tree``: the caller wants the tree);
    where the backend's integer distances tied to their parents overflowed on any rank, again
    with float64 distances."""
    integers = plan.positive_integers
    while True:
        state, log = striped_search(plan, source, limit, timer, integers, tree)
        if not plan.comm.allreduce(int(state.overflowed), op="max"):
            return state, log
        integers = False


def striped_search(
    plan: PathPlan, source: int, limit: float, timer: Any, integers: bool, tree: bool
) -> tuple[Any, BucketLog]:
    """Buckets of light steps and one heavy step, each a relax, partition, exchange and
    contraction (module docstring)."""
    backend, comm = plan.backend, plan.comm
    state = plan.start(source, False, integers, tree)
    log = BucketLog()
    unsettled = plan.graph.num_local_edges  # the out-edges of the vertices not settled yet
    lower = comm.allreduce(backend.next_bucket(state), op="min")
    while lower < NO_PATH and lower <= limit:
        end = bucket_end(lower, plan.delta)
        members = [backend.bucket_members(state, end)]
        counters = [0] * 5  # relaxations, sent, sent remote, improved, settled
        phases = 0
        while True:  # light edges, until nothing in the bucket improves
            with timer.phase("relax"):
                requests = backend.relax(plan.graph, state, members[-1], plan.delta, False)
            exchange_min(plan, state, requests, end, counters, timer)
            phases += 1
            with timer.phase("termination"):
                if not comm.allreduce(state.frontier_size, op="max"):
                    break
            members.append(state.frontier)
        with timer.phase("settle"):
            settled = backend.settle(state, members)
        counters[4] = int(settled.shape[0])
        leaving = backend.row_edges(plan.graph, state, settled)  # the settled vertices' edges
        unsettled -= leaving
        if plan.heavy:  # heavy edges, once, from the settled bucket
            with timer.phase("relax"):
                requests = heavy_requests(plan, state, settled, (leaving, unsettled), (lower, end))
            exchange_min(plan, state, requests, end, counters, timer)
        with timer.phase("termination"):
            next_lower = comm.allreduce(backend.next_bucket(state), op="min")
        log.bucket(int(lower // plan.delta), lower, [phases, *counters])
        timer.next_level()
        lower = next_lower
    backend.path_finish(state)
    state.scratch.clear()
    return state, log


def heavy_requests(
    plan: PathPlan,
    state: Any,
    settled: Any,
    edges: tuple[int, int],
    bucket: tuple[float, float],
) -> Any:
    """A settled bucket's heavy step (``bucket``: its vertices' distances lie in [lower, end)):
    the settled vertices push their heavy edges, or, where their out-edges outnumber the
    unsettled vertices' (``edges``: this rank's of each; ``PathPlan.pull_above``, summed over
    the ranks), every unsettled vertex pulls from the tails the bucket settled, reading every
    rank's distances (direction optimization for the heavy step: the bucket that settles a
    power-law graph's hubs reaches most edges), where every rank has room for them."""
    backend, comm, graph = plan.backend, plan.comm, plan.graph
    words = backend.path_words(state)
    if (
        plan.pull_above == math.inf
        or comm.allreduce(edges[0], op="sum") <= plan.pull_above * comm.allreduce(edges[1])
        or not fits(graph.n * words.itemsize, backend.xp, comm)
    ):
        return backend.relax(graph, state, settled, plan.delta, True)
    everywhere = comm.allgather_array(words)
    return backend.pull_requests(graph, state, everywhere, *bucket)


def shortest_path_tree(plan: PathPlan, source: int, state: Any) -> Any:
    """The predecessors of the owned vertices from the final distances of ``state`` (module
    docstring): tree passes of tight requests until every reached vertex has a parent
    (collective). An in-place search that recorded the tree as it went (``state.preds``) has
    the same tree already."""
    backend, comm, graph = plan.backend, plan.comm, plan.graph
    distances = state.distances
    if state.preds is not None:  # recorded by the search (tied words)
        return state.preds
    if plan.in_place:
        return backend.shortest_path_tree_in_place(plan.in_place_graph, distances, source)
    tree = plan.start(source, True)
    reached = backend.tree_start(tree, distances)
    everywhere = comm.allgather_array(distances)  # so that only tight edges are requested
    counters = [0] * 4
    k = 0
    while True:
        tails = backend.tree_tails(tree, reached, k)
        requests = backend.tight_requests(graph, tree, tails, k, everywhere)
        exchange_min(plan, tree, requests, NO_PATH, counters, None)
        if not comm.allreduce(backend.tree_unresolved(tree), op="sum"):
            break
        if k and not comm.allreduce(tree.frontier_size, op="sum"):
            break  # a pass that resolved nothing: the rest is unreachable over tight edges
        k += 1
    return backend.tree_finish(tree)


def own_share(plan: PathPlan, whole: Any | None) -> Any | None:
    """This rank's vertices' entries of a replica's array (every vertex, in global order), in
    local order (``v // size`` for ``v % size == rank``): a strided view, which
    ``bucket_table`` makes contiguous after the search's time."""
    return owned_view(whole, plan.comm.rank, plan.comm.size)


def cut_beyond(distances: Any, predecessors: Any | None, limit: float) -> None:
    """Mark the vertices farther than ``limit`` unreached (distance ``NO_PATH``, predecessor
    ``UNREACHED`` where there is a tree), as a search that never reached them leaves them."""
    far = distances > limit
    distances[far] = NO_PATH
    if predecessors is not None:
        predecessors[far] = UNREACHED


def exchange_min(
    plan: PathPlan,
    state: Any,
    requests: Any,
    end: float,
    counters: list[int],
    timer: Any,
) -> None:
    """Reduce and bin ``requests`` by owner, exchange the bins, contract them (section 6.1's
    stages with a min-reduction); adds to ``counters`` (relaxations, sent, sent remote,
    improved). ``timer`` None: untimed."""
    backend, comm = plan.backend, plan.comm
    timer = backend.make_timer(False) if timer is None else timer
    with timer.phase("partition_min"):
        bins = backend.partition_min(state, requests, comm.size)
    with timer.phase("exchange"):
        received = comm.exchange_bins(bins)
    with timer.phase("contract_min"):
        improved = backend.contract_min(plan.graph, state, received, end)
    sent = bins.counts
    counters[0] += requests.size
    counters[1] += int(sent.sum())
    counters[2] += int(sent.sum() - sent[comm.rank])
    counters[3] += improved
