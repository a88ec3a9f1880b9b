"""Shortest paths (delta-stepping, ``distbfs.traversals.sssp``) on every backend and at any rank
count: distances equal scipy's dijkstra, and the predecessor tree is exactly the one the rule
says (the smallest strictly closer tight in-neighbour; in zero-weight plateaus, passes), so it
is the same on every backend and rank count (the array-module stages, which the CUDA backend
runs on several ranks, are also run by numpy here; one GPU runs the search in place); on
structured, random, power-law, road-like and directed graphs, integer and real weights, zero
weights, duplicates of different weights, unreachable parts and isolated sources. Unweighted
graphs agree with BFS; any delta gives the same result.
"""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import make_backend
from scipy.sparse import csgraph

import distbfs
from distbfs.backends.arrays import ArrayPathStages
from distbfs.backends.numpy import NumpyBackend
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import UNREACHED
from distbfs.engine import GraphResources
from distbfs.engine.buckets import COUNTERS, BucketStats, WeightSummary, choose_delta
from distbfs.engine.plan import PathPlan
from distbfs.traversals.sssp import delta_stepping

import graphs

ONE = SingleRankCommunicator()


class ArrayStagesOnHost(ArrayPathStages, NumpyBackend):
    """The numpy backend with the array-module shortest-path stages (CuPy's on a GPU) in place
    of its own scatter-min ones: checks them, and that both give the same tree, without a GPU."""


@pytest.fixture(
    params=[
        "numpy",
        "arrays",
        pytest.param("cuda", marks=pytest.mark.gpu),
        pytest.param("cuda_striped", marks=pytest.mark.gpu),
    ]
)
def backend(request):
    """This module's backends: conftest's (cuda: the search in place, one persistent kernel,
    on every rank's replica on several), the array-module stages run by numpy, and the CUDA
    backend's striped stages (what several ranks run on larger graphs) at any rank count."""
    if request.param == "arrays":
        return ArrayStagesOnHost()
    if request.param == "cuda_striped":
        cuda = make_backend("cuda")
        cuda.shortest_paths_in_place = None  # the plan then takes the striped steps
        return cuda
    return make_backend(request.param, replica=True)


def stored(case, weights):
    """The stored weighted edges: self-loops dropped, both directions of an undirected edge,
    duplicates keeping the smallest weight. Returns (tails, heads, weights) sorted by edge."""
    src, dst, _, directed = case
    w = np.asarray(weights, dtype=np.float64)
    if not directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.tile(w, 2)
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    order = np.lexsort((w, dst, src))
    src, dst, w = src[order], dst[order], w[order]
    first = np.ones(src.shape[0], dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    return src[first], dst[first], w[first]


def reference(case, weights, source):
    """(distances, predecessors) by the rule: Dijkstra's distances (checked against scipy's
    dijkstra where no weight is zero); each reached vertex's parent its smallest in-neighbour u
    with d(u) + w = d(v) > d(u); where zero weights leave none, passes over the plateau edges
    (d(u) + w = d(u) = d(v)): pass k gives an unresolved vertex its smallest in-neighbour
    resolved in pass k - 1."""
    n = case[2]
    tails, heads, w = stored(case, weights)
    dist = dijkstra(n, tails, heads, w, source)
    if (w > 0).all():
        matrix = sp.csr_matrix((w, (tails, heads)), shape=(n, n))
        np.testing.assert_array_equal(dist, csgraph.dijkstra(matrix, indices=source))
    preds = np.full(n, UNREACHED, dtype=np.int64)
    cand = dist[tails] + w
    reached_tail = np.isfinite(dist[tails])
    strict = reached_tail & (cand == dist[heads]) & (cand > dist[tails])
    for u, v in zip(tails[strict].tolist(), heads[strict].tolist(), strict=True):
        if preds[v] < 0 or u < preds[v]:
            preds[v] = u
    preds[source] = source
    passes = np.where(preds >= 0, 0, -1)
    plateau = reached_tail & (cand == dist[heads]) & (cand == dist[tails])
    k = 1
    while True:
        found = {}
        for u, v in zip(tails[plateau].tolist(), heads[plateau].tolist(), strict=True):
            if passes[u] == k - 1 and passes[v] < 0:
                found[v] = min(found.get(v, u), u)
        if not found:
            break
        for v, u in found.items():
            preds[v], passes[v] = u, k
        k += 1
    return dist, preds


def dijkstra(n, tails, heads, weights, source):
    """Shortest distances by a binary-heap Dijkstra (sums added from the source)."""
    order = np.argsort(tails, kind="stable")
    offsets = np.searchsorted(tails[order], np.arange(n + 1))
    dist = np.full(n, math.inf)
    queue = [(0.0, source)]
    done = np.zeros(n, dtype=bool)
    while queue:
        d, u = heapq.heappop(queue)
        if done[u]:
            continue
        done[u], dist[u] = True, d
        for e in order[offsets[u] : offsets[u + 1]]:
            v = heads[e]
            if not done[v]:
                heapq.heappush(queue, (d + weights[e], v))
    return dist


def weighted(case, seed, kind="integer", low=0, high=20):
    rng = np.random.default_rng(seed)
    m = case[0].shape[0]
    if kind == "positive":  # positive integers: one GPU records the tree as it searches
        return rng.integers(max(low, 1), high + 1, m).astype(np.float64)
    if kind == "integer":
        return rng.integers(low, high + 1, m).astype(np.float64)
    return np.round(rng.uniform(low, high, m), 3)


CASES = {
    "path": (graphs.path(60), "integer"),
    "grid": (graphs.grid(15, 11), "integer"),
    "grid_positive": (graphs.grid(15, 11), "positive"),
    "random_positive": (graphs.random_graph(800, 4000, 6, False), "positive"),
    "directed_positive": (graphs.random_graph(600, 3000, 8, True), "positive"),
    "components": (graphs.components(), "integer"),
    "loops_and_duplicates": (graphs.loops_and_duplicates(), "integer"),
    "directed_with_sinks": (graphs.directed_with_sinks(), "real"),
    "random_undirected": (graphs.random_graph(800, 4000, 2, False), "integer"),
    "random_directed": (graphs.random_graph(800, 3500, 4, True), "real"),
    "star": (graphs.star(300), "real"),
    "fewer_vertices_than_ranks": ((np.array([0]), np.array([1]), 2, False), "integer"),
}


def power_law(n, m, seed):
    """A heavy-tailed random graph: endpoints drawn with probability ~ 1 / rank."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1)
    p /= p.sum()
    return rng.choice(n, m, p=p), rng.choice(n, m, p=p), n, False


def run(case, weights, source, backend, comm, predecessors=True, delta=None, integers=True):
    """``integers=False``: treat positive integer weights as any others (one GPU: float64
    distances, the tree built after the search)."""
    graph = graphs.build(case, comm, backend, weights)
    plan = PathPlan(GraphResources(graph, backend, comm), delta)
    plan.positive_integers = plan.positive_integers and integers
    search = delta_stepping(plan, source, predecessors=predecessors)
    n = case[2]
    dist = graphs.gather_global(comm, search.distances, n)
    preds = (
        None if search.predecessors is None else graphs.gather_global(comm, search.predecessors, n)
    )
    return dist, preds, search


def check(case, weights, source, backend, comm, delta=None):
    """The search's distances and tree equal scipy's; its arrays are contiguous (a replica's
    share is a view until the bucket table)."""
    dist, preds, search = run(case, weights, source, backend, comm, delta=delta)
    assert search.distances.flags.c_contiguous and search.predecessors.flags.c_contiguous
    want_dist, want_preds = reference(case, weights, source)
    np.testing.assert_array_equal(dist, want_dist)
    np.testing.assert_array_equal(preds, want_preds)
    return search


@pytest.mark.parametrize("name", sorted(CASES))
def test_structured_graphs_match_the_reference(backend, name):
    case, kind = CASES[name]
    weights = weighted(case, 7, kind)
    for source in sorted({0, case[2] // 2, case[2] - 1}):
        check(case, weights, source, backend, ONE)


def check_pulled(case, weights, source, backend, comm, monkeypatch):
    """Striped steps whose every heavy step pulls (``PathPlan.pull_above`` 0; buckets an eighth
    of the largest weight wide, so that there are heavy edges) give the reference's distances
    and tree; returns how many heavy steps pulled on this rank."""
    graph = graphs.build(case, comm, backend, weights)
    delta = float(weights.max()) / 8
    plan = PathPlan(GraphResources(graph, backend, comm), delta, in_place=False)
    assert plan.pull_above == (
        math.inf if case[3] else getattr(backend, "heavy_pull_above", math.inf)
    )
    plan.pull_above = 0.0
    pulls = []
    pull = backend.pull_requests
    monkeypatch.setattr(backend, "pull_requests", lambda *args: pulls.append(1) or pull(*args))
    search = delta_stepping(plan, source, predecessors=True)
    n = case[2]
    want_dist, want_preds = reference(case, weights, source)
    np.testing.assert_array_equal(graphs.gather_global(comm, search.distances, n), want_dist)
    np.testing.assert_array_equal(graphs.gather_global(comm, search.predecessors, n), want_preds)
    return len(pulls)


PULLED = {
    "hubs": (power_law(2000, 20000, 11), "real", 0, 1),
    "grid": (graphs.grid(15, 11), "positive", 1, 255),
    "random_undirected": (graphs.random_graph(800, 4000, 2, False), "integer", 0, 20),
    "components": (graphs.components(), "integer", 0, 20),
}


@pytest.mark.parametrize("name", sorted(PULLED))
def test_pulled_heavy_steps_match_the_reference(backend, name, monkeypatch):
    """A heavy step pulled into the unsettled vertices (every rank's distances read, rows
    ascending by weight cut short where they are) gives what pushing gives: the reference's
    distances and tree, on float64 distances and tied words."""
    case, kind, low, high = PULLED[name]
    weights = weighted(case, 8, kind, low, high)
    assert check_pulled(case, weights, 1, backend, ONE, monkeypatch) > 0


def test_heavy_steps_push_where_the_distances_do_not_fit(backend, monkeypatch):
    """A pull that would find no room for every rank's distances on some rank pushes."""
    import distbfs.traversals.sssp as paths

    monkeypatch.setattr(paths, "fits", lambda *args: False)
    case, kind, low, high = PULLED["hubs"]
    weights = weighted(case, 8, kind, low, high)
    assert check_pulled(case, weights, 1, backend, ONE, monkeypatch) == 0


def test_heavy_steps_pull_on_one_host_and_undirected_graphs_only(monkeypatch):
    """A backend that pulls heavy steps (``heavy_pull_above``) does so where the ranks share
    one host and the graph is undirected; otherwise every heavy step pushes."""
    backend = NumpyBackend()
    backend.heavy_pull_above = 0.5
    undirected, directed = (
        graphs.random_graph(200, 900, 3, False),
        graphs.random_graph(200, 900, 3, True),
    )

    def pull_above(case):
        graph = graphs.build(case, ONE, backend, weighted(case, 1))
        return PathPlan(GraphResources(graph, backend, ONE), in_place=False).pull_above

    assert pull_above(undirected) == 0.5 and pull_above(directed) == math.inf
    monkeypatch.setattr(ONE, "hosts", lambda: 2)
    assert pull_above(undirected) == math.inf


@pytest.mark.parametrize("kind", ["integer", "real"])
def test_zero_weights_give_an_acyclic_tree(backend, kind):
    """Half the weights zero: ties everywhere, zero-weight cycles; the tree still follows the
    rule (a strictly closer parent, else one resolved in an earlier plateau pass), which makes
    it acyclic."""
    case = graphs.random_graph(500, 3000, 9, False)
    weights = weighted(case, 3, kind, 0, 3)
    weights[::2] = 0.0
    check(case, weights, 0, backend, ONE)


def test_power_law_and_road_like_graphs(backend):
    road = graphs.grid(40, 25)  # a mesh: long paths, many buckets
    check(road, weighted(road, 5, "integer", 1, 255), 0, backend, ONE)
    hubs = power_law(2000, 20000, 11)
    check(hubs, weighted(hubs, 6, "real", 0, 1), 1, backend, ONE)


def test_duplicates_keep_their_smallest_weight(backend):
    src = np.array([0, 0, 1, 1, 2, 2, 0], np.int64)
    dst = np.array([1, 1, 2, 2, 3, 3, 3], np.int64)
    weights = np.array([5.0, 2.0, 7.0, 1.0, 4.0, 9.0, 8.0])
    dist, _, _ = run((src, dst, 4, True), weights, 0, backend, ONE)
    np.testing.assert_array_equal(dist, [0.0, 2.0, 3.0, 7.0])


def test_isolated_source_and_unreachable_vertices(backend):
    case = graphs.components()
    dist, preds, search = run(case, weighted(case, 1), 12, backend, ONE)
    assert dist[12] == 0 and preds[12] == 12
    assert np.isinf(np.delete(dist, 12)).all() and (np.delete(preds, 12) == UNREACHED).all()
    assert len(search.buckets) == 1 and search.buckets[0].settled == 1


@pytest.mark.parametrize("delta", [0.5, 1.0, 3.0, 1000.0])
def test_any_delta_gives_the_same_result(backend, delta):
    """From Dijkstra-like buckets (delta below every weight) to one bucket for everything."""
    case = graphs.random_graph(400, 2500, 8, True)
    search = check(case, weighted(case, 4, "integer", 1, 9), 3, backend, ONE, delta=delta)
    if delta == 1000.0:
        assert len(search.buckets) == 1


def test_unweighted_graphs_agree_with_bfs(backend):
    case = graphs.random_graph(1000, 5000, 12, False)
    graph = graphs.build(case, ONE, backend)
    plan = PathPlan(GraphResources(graph, backend, ONE))
    wider = 1 if plan.in_place else getattr(backend, "striped_delta_factor", 1)
    assert plan.delta == 1.0 * wider  # striped steps on GPUs: wider buckets
    paths = delta_stepping(plan, 0)
    levels = graphs.search(graph, 0, backend, ONE).distances
    levels, dist = graphs.host(levels), graphs.host(paths.distances)
    np.testing.assert_array_equal(np.where(levels == UNREACHED, np.inf, levels), dist)
    if not plan.in_place:  # one GPU cuts its buckets from the far pile's histogram
        assert len(paths.buckets) == int(levels.max()) // wider + 1  # a bucket a level or more


def test_statistics_add_up(backend):
    case = graphs.grid(12, 12)
    weights = weighted(case, 2, "integer", 1, 9)
    _, _, search = run(case, weights, 0, backend, ONE)
    assert sum(b.settled for b in search.buckets) == 144
    assert all(b.phases >= 1 and b.items_sent <= b.relaxations for b in search.buckets)
    assert [b.bucket for b in search.buckets] == sorted({b.bucket for b in search.buckets})


def test_timed_search_keeps_its_buckets(backend):
    """Timing on: the same buckets and statistics; the tree's time in the last bucket (one GPU
    times its launches as one level, counted there too)."""
    case = graphs.grid(12, 12)
    graph = graphs.build(case, ONE, backend, weighted(case, 2, "integer", 1, 9))
    plan = PathPlan(GraphResources(graph, backend, ONE))
    timed = delta_stepping(plan, 0, predecessors=True, timer=backend.make_timer(True))
    plain = delta_stepping(plan, 0, predecessors=True)
    assert sum(b.settled for b in timed.buckets) == 144
    assert [b.bucket for b in timed.buckets] == [b.bucket for b in plain.buckets]
    assert timed.buckets[-1].seconds.get("tree", 0.0) > 0
    assert sum(sum(b.seconds.values()) for b in timed.buckets) > timed.buckets[-1].seconds["tree"]


@pytest.mark.gpu
@pytest.mark.parametrize("settle", [True, False])
@pytest.mark.parametrize("integers", [True, False])
@pytest.mark.parametrize("one_block", ["queue 4096", "queue 4", False])
def test_one_gpu_search_across_launches_and_scans(one_block, integers, settle):
    """The persistent kernel returns to the host every ``path_log_rows`` buckets and goes on
    where it stopped, and far piles too small for their vertices are replaced by scans of every
    vertex: a search of many buckets on a mesh in launches of two buckets, with piles of 1% of
    the vertices, on one block and on a full grid, on tied words and on float64 distances, with
    and without settle passes, gives numpy's distances and tree. One block without settle
    passes is the one-block kernel, its near queues in shared memory (or, past 4 vertices,
    partly in global memory); the others' near queues hold 1% of the vertices, so steps that
    reserve more slots take their vertices from a scan of the stamps."""
    import dataclasses

    case = graphs.grid(40, 25)
    weights = weighted(case, 5, "integer", 1, 255)
    want_dist, want_preds, _ = run(case, weights, 0, NumpyBackend(), ONE, delta=2.0)
    cuda = make_backend("cuda")
    cuda.policy = dataclasses.replace(
        cuda.policy,
        path_log_rows=2,
        path_far_fraction=0.01,
        path_near_fraction=0.01,
        path_one_block_vertices=1 << 19 if one_block else 0,
        path_block_queue=int(one_block.split()[1]) if one_block else 4096,
        path_bucket_bins=1,
        path_settle_degree=0 if settle else 1 << 20,
    )
    dist, preds, search = run(case, weights, 0, cuda, ONE, delta=2.0, integers=integers)
    assert search.state.tied == integers
    assert (search.state.shared_bytes > 0) == bool(one_block and not settle)
    np.testing.assert_array_equal(dist, want_dist)
    np.testing.assert_array_equal(preds, want_preds)
    assert len(search.buckets) > 10
    assert [b.bucket for b in search.buckets] == list(range(len(search.buckets)))


@pytest.mark.gpu
@pytest.mark.parametrize("per_sm", [0, 1, 2])
def test_grid_search_without_settle_passes_takes_its_blocks(per_sm):
    """The grid search without settle passes (``delta_stepping_steps``) runs on
    ``path_steps_blocks_per_sm`` blocks a multiprocessor (0: every resident one), the passes
    after it on every resident block; the reference's distances and tree either way."""
    import dataclasses

    case = graphs.grid(40, 25)
    weights = weighted(case, 5, "integer", 1, 255)
    cuda = make_backend("cuda")  # skips without a GPU
    import cupy

    cuda.policy = dataclasses.replace(
        cuda.policy,
        path_one_block_vertices=0,
        path_settle_degree=1 << 20,
        path_steps_blocks_per_sm=per_sm,
    )
    dist, preds, search = run(case, weights, 0, cuda, ONE)
    want_dist, want_preds = reference(case, weights, 0)
    np.testing.assert_array_equal(dist, want_dist)
    np.testing.assert_array_equal(preds, want_preds)
    processors = cupy.cuda.Device().attributes["MultiProcessorCount"]
    state = search.state
    assert state.shared_bytes == 0 and state.grid % processors == 0
    assert state.blocks == (min(per_sm * processors, state.grid) if per_sm else state.grid)


@pytest.mark.gpu
@pytest.mark.parametrize("integers", [True, False])
@pytest.mark.parametrize(("window", "bins"), [(0, 1), (1, 1), (64, 8), (2, 32)])
def test_grid_search_steps_in_a_window(window, bins, integers):
    """The grid search without settle passes relaxes, each step, only the queued vertices
    within ``path_steps_window`` deltas of the queue's least distance (the others wait a step),
    on buckets cut from bins of ``path_steps_bin_deltas`` deltas: the reference's distances and
    tree whatever the window (0: none; 1: most vertices wait) and the bins, on tied words and
    float64 distances, in launches of two buckets."""
    import dataclasses

    case = graphs.grid(60, 45)
    weights = weighted(case, 7, "positive" if integers else "real", 1, 255)
    cuda = make_backend("cuda")  # skips without a GPU
    cuda.policy = dataclasses.replace(
        cuda.policy,
        path_one_block_vertices=0,
        path_settle_degree=1 << 20,
        path_log_rows=2,
        path_steps_window=window,
        path_steps_bin_deltas=bins,
    )
    dist, preds, search = run(case, weights, 0, cuda, ONE, integers=integers)
    want_dist, want_preds = reference(case, weights, 0)
    np.testing.assert_array_equal(dist, want_dist)
    np.testing.assert_array_equal(preds, want_preds)
    assert search.state.tied == integers and search.state.shared_bytes == 0
    assert sum(b.settled for b in search.buckets) == 60 * 45


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["grid_positive", "random_positive", "directed_positive"])
def test_one_gpu_tied_words_give_the_float64_result(name):
    """Positive integer weights: one GPU searches on integer distances tied to their parents
    and records the tree as it goes; the same search on float64 distances with the tree built
    afterwards gives the same distances and the same tree, both the reference's."""
    case, kind = CASES[name]
    weights = weighted(case, 11, kind, 1, 255)
    cuda = make_backend("cuda")
    graph = graphs.build(case, ONE, cuda, weights)
    plan = PathPlan(GraphResources(graph, cuda, ONE))
    assert plan.positive_integers
    tied = delta_stepping(plan, 0, predecessors=True)
    assert tied.state.tied
    plan.positive_integers = False
    exact = delta_stepping(plan, 0, predecessors=True)
    assert not exact.state.tied
    want_dist, want_preds = reference(case, weights, 0)
    for search in (tied, exact):
        np.testing.assert_array_equal(cuda.to_host(search.distances), want_dist)
        np.testing.assert_array_equal(cuda.to_host(search.predecessors), want_preds)


@pytest.mark.gpu
@pytest.mark.parametrize("one_block", [True, False])
def test_one_gpu_searches_of_a_small_graph_reuse_its_buffers(one_block):
    """A small graph keeps its search buffers (``KEPT_QUEUE_BYTES``): searches from several
    sources, on tied words and on float64 distances, one after another on one plan, in one
    block or on the grid, each give the reference's distances and tree, and every search runs
    in the queues the first one left."""
    import dataclasses

    case, kind = CASES["random_positive"]
    weights = weighted(case, 3, kind, 1, 255)
    cuda = make_backend("cuda")
    vertices = 1 << 19 if one_block else 0  # no settle passes: one block where it may
    cuda.policy = dataclasses.replace(
        cuda.policy, path_one_block_vertices=vertices, path_settle_degree=1 << 20
    )
    graph = graphs.build(case, ONE, cuda, weights)
    resources = GraphResources(graph, cuda, ONE)
    plan = PathPlan(resources)
    kept = resources.backend_resources.kept_queues
    queues = ("path near0", "path near1", "path far0", "path far1", "path log")
    first = None
    for source, integers in [(0, True), (5, False), (17, True), (0, False)]:
        plan.positive_integers = integers
        search = delta_stepping(plan, source, predecessors=True)
        assert search.state.tied == integers
        assert (search.state.shared_bytes > 0) == one_block
        want_dist, want_preds = reference(case, weights, source)
        np.testing.assert_array_equal(cuda.to_host(search.distances), want_dist)
        np.testing.assert_array_equal(cuda.to_host(search.predecessors), want_preds)
        where = [kept[what].data.ptr for what in queues]
        first = first or where
        assert where == first


@pytest.mark.gpu
def test_one_gpu_distances_past_32_bits_search_again_in_float64():
    """Integer weights of 2**31 on a path: the third vertex lies past what a tied word holds,
    so the search goes round again on float64 distances, with the reference's result."""
    case = graphs.path(6)
    weights = np.full(case[0].shape[0], 2.0**31)
    cuda = make_backend("cuda")
    dist, preds, search = run(case, weights, 0, cuda, ONE)
    assert not search.state.tied
    want_dist, want_preds = reference(case, weights, 0)
    np.testing.assert_array_equal(dist, want_dist)
    np.testing.assert_array_equal(preds, want_preds)


def test_relax_and_tree_in_small_chunks(monkeypatch):
    """numpy's relaxations and tree pass 0 read rows in chunks of edges: chunks of 7 edges (a
    long row alone in its chunk, empty rows, the last row) give the result of one chunk."""
    from distbfs.backends.numpy import relax

    case = graphs.random_graph(300, 1200, 4, True)
    weights = weighted(case, 9, "integer", 0, 5)
    whole = check(case, weights, 1, NumpyBackend(), ONE)
    monkeypatch.setattr(relax, "TREE_CHUNK_EDGES", 7)
    monkeypatch.setattr(relax, "RELAX_CHUNK_EDGES", 7)
    chunked = check(case, weights, 1, NumpyBackend(), ONE)
    np.testing.assert_array_equal(chunked.predecessors, whole.predecessors)


@pytest.mark.parametrize("source", [0, 7])
def test_array_stages_in_small_chunks(monkeypatch, backend, source):
    """The array-module stages (the striped steps of several ranks; numpy and CUDA) relax and
    find tight edges a chunk of rows at a time, each chunk reduced to one request per target:
    chunks of 7 edges (a long row alone, empty rows, the last row) give the whole's result.
    The CUDA backend's striped steps relax runs of 7 edges into buffers that grow between
    them."""
    from distbfs.backends.arrays import relax

    in_place = callable(getattr(backend, "shortest_paths_in_place", None))
    if type(backend) is NumpyBackend or in_place:
        pytest.skip("relaxes in its own stages")
    case = graphs.random_graph(300, 1200, 4, True)
    weights = weighted(case, 9, "integer", 0, 5)
    calls = []
    original = relax.chunk_bounds

    def bounds(*args):
        calls.append(original(*args))
        return calls[-1]

    monkeypatch.setattr(relax, "chunk_bounds", bounds)
    monkeypatch.setattr(relax, "CHUNK_EDGES", 7)
    runs = []
    if backend.name == "cuda":  # its striped steps relax runs of rows into growing buffers
        from distbfs.backends.cuda import striped_steps

        original_runs = striped_steps.runs

        def counted(*args):
            runs.append(original_runs(*args))
            return runs[-1]

        monkeypatch.setattr(striped_steps, "CHUNK_EDGES", 7)
        monkeypatch.setattr(striped_steps, "runs", counted)
    check(case, weights, source, backend, ONE)  # against scipy: distances and the tree
    assert max(len(b) for b in calls) > 10  # many chunks were read
    if backend.name == "cuda":
        assert max(len(r) for r in runs) > 10


@pytest.mark.gpu
@pytest.mark.parametrize("span", [None, 97])
@pytest.mark.parametrize("kind", ["integer", "positive"])
def test_dense_searches_read_rows_by_weight(monkeypatch, span, kind):
    """One GPU, a graph dense enough for settle passes: the search kernel reads a copy of the
    rows each ascending by weight (sorted a span of rows at a time: spans of 97 edges cut
    between rows, a hub's row alone), the same edges per row; steps and settle passes that
    read only their part of each row give scipy's distances and tree (float64 words, and
    tied words that record the tree); so do the striped steps, whose steps read the light
    edges of a row and whose heavy step the others."""
    cuda = make_backend("cuda")  # skips without a GPU
    import cupy

    from distbfs import memory
    from distbfs.backends.cuda import relax

    if span is not None:
        monkeypatch.setattr(relax, "SORT_SPAN_EDGES", span)
    src, dst, n, _ = power_law(1500, 30000, 5)  # hubs, and a mean degree past 8
    case = (
        np.concatenate([src, np.zeros(400, np.int64)]),
        np.concatenate([dst, np.arange(400)]),
        n,
        False,
    )
    weights = weighted(case, 4, kind, 0, 60)
    graph = graphs.build(case, ONE, cuda, weights)
    assert relax.settle_passes(cuda.policy, graph)
    rows, note = relax.search_rows(cuda.policy, graph)
    assert int(rows[3]) == int(relax.ROWS_BY_WEIGHT) and note == "by weight"
    offsets = graphs.host(graph.row_offsets)
    edges = np.stack([graphs.host(graph.column_indices), graphs.host(graph.weights)], axis=1)
    ordered = np.stack([graphs.host(rows[1]), graphs.host(rows[2])], axis=1)
    for lo, hi in itertools.pairwise(offsets.tolist()):
        assert np.all(np.diff(ordered[lo:hi, 1]) >= 0)
        again = ordered[lo:hi][np.argsort(ordered[lo:hi, 0], kind="stable")]
        np.testing.assert_array_equal(again, edges[lo:hi])  # rows sorted by column
    for source in (0, 7, n - 1):
        check(case, weights, source, cuda, ONE)
    cuda.shortest_paths_in_place = None  # the striped steps: light edges, then the heavy ones
    for source in (0, 7, n - 1):
        check(case, weights, source, cuda, ONE)
    # no copy where it would leave a search's peak no room: the rows as the graph holds them,
    # and a search that says so
    room = memory.available_bytes(cupy) // graph.nlocal
    monkeypatch.setattr(relax, "SEARCH_BYTES_AN_OWNED_VERTEX", room)
    rows, note = relax.search_rows(cuda.policy, graph)
    assert rows[1] is graph.column_indices and note.startswith(relax.ROWS_AS_STORED)
    fresh = distbfs.Graph(graph, ONE, cuda)
    assert distbfs.sssp(fresh, 0).rows.startswith(relax.ROWS_AS_STORED + " (a copy by weight")


@pytest.mark.gpu
def test_striped_kernels_launch_within_their_resident_grids():
    """Every kernel of kernels/relax.cu is launched cooperatively, which takes no grid larger
    than the device holds of that kernel at once (CuPy cuts it, with a warning): each grid of a
    striped search is at most what the device holds of every kernel launched on it."""
    cuda = make_backend("cuda")  # skips without a GPU
    import cupy

    from distbfs.backends.cuda import kernels, relax, striped_steps

    case = power_law(1500, 30000, 5)
    graph = graphs.build(case, ONE, cuda, weighted(case, 4, "integer", 1, 60))
    state = PathPlan(GraphResources(graph, cuda, ONE), in_place=False).start(0, False, True)
    processors = cupy.cuda.Device().attributes["MultiProcessorCount"]
    bits = 8 * graph.column_indices.dtype.itemsize
    launched = [
        (
            state.grid,
            [relax.relax_kernel(cuda.policy, graph, k) for k in striped_steps.ROW_KERNELS],
        ),
        (
            state.pull_grid,
            [relax.relax_kernel(cuda.policy, graph, k) for k in striped_steps.PULL_KERNELS],
        ),
        (
            state.scan_grid,
            [
                kernels.get_kernel("relax", k, cuda.policy, bits)
                for k in striped_steps.SCAN_GRID_KERNELS
            ],
        ),
    ]
    for grid, launched_kernels in launched:
        for kernel in launched_kernels:
            per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.kernel.ptr, cuda.policy.path_threads, 0
            )
            assert 1 <= grid <= processors * per_sm


def test_distances_past_32_bits(backend):
    """Positive integer weights whose distances pass 2^32: a GPU search that ties integer
    distances to their parents overflows and searches again in float64 (in place and as
    striped steps); every backend gives the reference's distances and tree."""
    case = graphs.path(12)
    weights = np.full(case[0].shape[0], 2.0**31) + np.arange(case[0].shape[0])
    for source in (0, 5):
        check(case, weights, source, backend, ONE)


def test_striped_steps_take_the_backends_wider_buckets():
    """A backend whose striped steps want wider buckets (``striped_delta_factor``, the CUDA
    backend's 16) gets them when the caller gives no delta, and the same distances and tree;
    a caller's delta is kept as given."""

    class Wider(NumpyBackend):
        striped_delta_factor = 4

    case = graphs.grid(12, 12)
    weights = weighted(case, 2, "integer", 1, 9)
    wider = Wider()
    graph = graphs.build(case, ONE, wider, weights)
    rule = PathPlan(GraphResources(graph, NumpyBackend(), ONE)).delta
    assert PathPlan(GraphResources(graph, wider, ONE)).delta == 4 * rule
    assert PathPlan(GraphResources(graph, wider, ONE), delta=3.0).delta == 3.0
    narrow = check(case, weights, 0, NumpyBackend(), ONE)
    wide = check(case, weights, 0, wider, ONE)  # against the reference: distances and tree
    assert len(wide.buckets) < len(narrow.buckets)


def test_rank_major_is_the_all_gather_order():
    """``partition.rank_major`` places every vertex where ``allgather_array`` of the ranks'
    owned-vertex arrays puts it, for any n and rank count."""
    from distbfs.partition import rank_major

    for n in range(0, 40):
        for size in range(1, 7):
            gathered = np.concatenate([np.arange(r, n, size) for r in range(size)])
            v = np.arange(n)
            np.testing.assert_array_equal(gathered[rank_major(v, n, size)], v)


def test_delta_rule():
    """Mean weight over mean degree, at least the smallest positive weight."""
    assert choose_delta(WeightSummary(32 * 1024, 128.0 * 32 * 1024, 1.0, 255.0), 1024) == 4.0
    assert choose_delta(WeightSummary(400, 400.0, 1.0, 1.0), 100) == 1.0  # unweighted: levels
    assert choose_delta(WeightSummary(4, 4.0, 1.0, 1.0), 100) == 25.0  # sparser: wider
    assert choose_delta(WeightSummary(10, 0.0, math.inf, 0.0), 5) == 1.0  # all zero
    assert choose_delta(WeightSummary(0, 0.0, math.inf, 0.0), 5) == 1.0  # no edges


def test_api_and_bad_delta():
    case = graphs.grid(6, 6)
    weights = weighted(case, 3, "integer", 1, 5)
    g = distbfs.Graph.from_edges(
        case[0], case[1], weights=weights, num_vertices=36, directed=False, backend="numpy"
    )
    result = distbfs.sssp(g, 0, predecessors=True)
    want_dist, want_preds = reference(case, weights, 0)
    np.testing.assert_array_equal(result.distances, want_dist)
    np.testing.assert_array_equal(result.predecessors, want_preds)
    assert result.edges_traversed == g.num_undirected_edges and result.relaxations > 0
    for bad in (0, -1.0, math.inf, "2", True):
        with pytest.raises(ValueError, match=r"^delta: expected a positive finite number"):
            distbfs.sssp(g, 0, delta=bad)


# --- at any rank count (mpiexec -n 1..4 python -m pytest --with-mpi -m mpi) -------------------


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(CASES))
def test_any_rank_count(backend, backend_comm, name):
    case, kind = CASES[name]
    weights = weighted(case, 7, kind)
    for source in sorted({0, case[2] // 3, case[2] - 1}):
        check(case, weights, source, backend, backend_comm)


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["grid_positive", "random_positive", "directed_positive"])
def test_tree_recorded_in_the_search_at_any_rank_count(backend, backend_comm, name):
    """With positive integer weights the numpy backend's striped steps record the tree as they
    search (requests carry their tails; an owner keeps the smallest that gives a vertex its
    distance): the distances and tree of the tree passes after the search, the reference's,
    at any rank count."""
    case, kind = CASES[name]
    weights = weighted(case, 11, kind, 1, 255)
    want_dist, want_preds = reference(case, weights, 0)
    for integers in (True, False):
        dist, preds, search = run(case, weights, 0, backend, backend_comm, integers=integers)
        np.testing.assert_array_equal(dist, want_dist)
        np.testing.assert_array_equal(preds, want_preds)
        if type(backend) is NumpyBackend:  # recorded: the search's own state holds the tree
            assert (search.state.passes is not None) == integers


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(PULLED))
def test_pulled_heavy_steps_at_any_rank_count(backend, backend_comm, name, monkeypatch):
    case, kind, low, high = PULLED[name]
    pulls = check_pulled(case, weighted(case, 8, kind, low, high), 1, backend, backend_comm,
                         monkeypatch)  # fmt: skip
    assert backend_comm.allgather_object(pulls) == [pulls] * backend_comm.size and pulls > 0


@pytest.mark.mpi
def test_zero_weights_at_any_rank_count(backend, backend_comm):
    case = graphs.random_graph(600, 3000, 10, True)
    weights = weighted(case, 5, "integer", 0, 2)
    search = check(case, weights, 0, backend, backend_comm)
    rows = [(b.bucket, b.settled, b.improved) for b in search.buckets]
    assert backend_comm.allgather_object(rows).count(rows) == backend_comm.size


# --- all pairs --------------------------------------------------------------------------------


@pytest.mark.parametrize("weighted_graph", [True, False])
def test_apsp_matches_scipy(comm, weighted_graph):
    check_apsp(comm, weighted_graph)


@pytest.mark.mpi
@pytest.mark.parametrize("weighted_graph", [True, False])
def test_apsp_at_any_rank_count(comm, weighted_graph):
    check_apsp(comm, weighted_graph)


def check_apsp(comm, weighted_graph):
    """Weighted: shortest paths from every source; unweighted: BFS from every source."""
    case = graphs.random_graph(120, 500, 13, True)
    weights = weighted(case, 2, "real", 0.5, 9) if weighted_graph else None
    g = distbfs.Graph.from_edges(
        *graphs.share(case[0], case[1], comm.rank, comm.size),
        weights=None if weights is None else weights[comm.rank :: comm.size],
        num_vertices=case[2],
        directed=True,
        backend="numpy",
        comm=comm,
    )
    result = distbfs.apsp(g)
    tails, heads, w = stored(case, weights if weights is not None else np.ones(case[0].shape[0]))
    matrix = sp.csr_matrix((w, (tails, heads)), shape=(case[2], case[2]))
    np.testing.assert_array_equal(result.distances, csgraph.dijkstra(matrix))
    rows = len(range(comm.rank, case[2], comm.size))
    assert result.local_rows.shape == (rows, case[2])


def test_apsp_refuses_a_matrix_that_does_not_fit(monkeypatch):
    import distbfs.memory as memory

    g = distbfs.Graph.from_edges([0, 1], [1, 2], backend="numpy")
    monkeypatch.setattr(memory, "available_bytes", lambda xp: 50)
    with pytest.raises(distbfs.InputError, match=r"needs 72 bytes of host memory on rank 0, 50"):
        distbfs.apsp(g)


def test_bucket_counters_are_the_statistics_fields_in_order():
    """``BucketLog.stats`` fills ``BucketStats`` positionally from the COUNTERS columns."""
    import dataclasses

    names = tuple(f.name for f in dataclasses.fields(BucketStats))
    assert names[2 : 2 + len(COUNTERS)] == COUNTERS
