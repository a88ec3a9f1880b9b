"""GPU tests of the CUDA backend: every kernel against the numpy stage it replaces, whole
searches against the numpy backend and scipy, predecessors, the fused small-frontier levels
(one persistent cooperative grid: one launch for a whole path or grid, exact state when it
stops, the edge budget, grid gathering of long lists, its size on the device), several ranks
simulated in one process, int64 column ids, queue overflow, the event timer, and the
direction-optimizing levels (bitmap, bottom-up and m_f kernels against numpy; whole searches
under forced switch points, with the directions Beamer's rule picks).

Needs CuPy and a CUDA device (the whole module is skipped otherwise); on the GPU machine:
``python -m pytest -m gpu tests/test_cuda.py``. Kernel output order is arbitrary, so queues are
compared as sorted arrays or sets, bins bin by bin.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import cupy_module_or_skip

cupy = cupy_module_or_skip()

from distbfs.backends.base import EdgeFrontier  # noqa: E402
from distbfs.backends.cuda import bottom_up as cuda_bottom_up  # noqa: E402
from distbfs.backends.cuda import buffers as cuda_buffers  # noqa: E402
from distbfs.backends.cuda import contract as cuda_contract  # noqa: E402
from distbfs.backends.cuda import fused as cuda_fused  # noqa: E402
from distbfs.backends.cuda import kernels as cuda_kernels  # noqa: E402
from distbfs.backends.cuda import search as cuda_search  # noqa: E402
from distbfs.backends.cuda.backend import CudaBackend  # noqa: E402
from distbfs.backends.cuda.buffers import KERNELS, queues_of  # noqa: E402
from distbfs.backends.cuda.filter_partition import MeetingBins, PendingBins  # noqa: E402
from distbfs.backends.cuda.launch_policy import (  # noqa: E402
    DEFAULT_POLICY,
    DEFAULT_QUEUE_SIZING,
    QUEUE_REGROWTH,
    LaunchPolicy,
    uses_meeting_bins,
)
from distbfs.backends.numpy import NumpyBackend  # noqa: E402
from distbfs.comm.base import Bins  # noqa: E402
from distbfs.comm.single import SingleRankCommunicator  # noqa: E402
from distbfs.constants import UNREACHED  # noqa: E402
from distbfs.engine import GraphResources, SearchPlan  # noqa: E402
from distbfs.errors import DeviceError  # noqa: E402
from distbfs.graph import DistGraph, build_graph  # noqa: E402
from distbfs.traversals.bfs import bfs_levels  # noqa: E402

import graphs  # noqa: E402

pytestmark = pytest.mark.gpu

ONE_RANK = SingleRankCommunicator()
HOST = NumpyBackend()
DO = "direction_optimizing"


# ----------------------------------------------------------------------------- graphs


def mixed_degrees(seed: int = 7):
    """Directed graph whose out-degrees straddle every gathering threshold (0 .. > 1024)."""
    rng = np.random.default_rng(seed)
    n = 6000
    choices = np.array([0, 1, 2, 5, 31, 32, 33, 255, 256, 257, 1023, 1024, 1500, 3000])
    degrees = rng.choice(choices, size=n, p=_weights(choices))
    src = np.repeat(np.arange(n, dtype=np.int64), degrees)
    dst = rng.integers(0, n, src.shape[0])
    return src, dst, n, True


def _weights(choices: np.ndarray) -> np.ndarray:
    w = 1.0 / (1.0 + choices)
    return w / w.sum()


def hubs_undirected():
    """Three stars (3000, 1100 and 300 leaves) joined by a path, plus a random sprinkle."""
    rng = np.random.default_rng(3)
    src, dst = [], []
    base = 10
    for hub, leaves in enumerate((3000, 1100, 300)):
        ids = np.arange(base, base + leaves, dtype=np.int64)
        src.append(np.full(leaves, hub, np.int64))
        dst.append(ids)
        base += leaves
    src.append(np.array([0, 1], np.int64))
    dst.append(np.array([1, 2], np.int64))
    src.append(rng.integers(0, base, 2000))
    dst.append(rng.integers(0, base, 2000))
    return np.concatenate(src), np.concatenate(dst), base + 5, False  # 5 isolated vertices


SEARCH_CASES = {
    "random-undirected": (graphs.random_graph(3000, 12000, 1, False), 0),
    "random-directed": (graphs.random_graph(3000, 9000, 2, True), 5),
    "components": (graphs.components(), 5),
    "isolated-source": (graphs.components(), 11),
    "loops-duplicates": (graphs.loops_and_duplicates(), 0),
    "directed-sinks": (graphs.directed_with_sinks(), 0),
    "star-3000": (graphs.star(3000), 0),
    "star-from-leaf": (graphs.star(3000), 17),
    "path-3000": (graphs.path(3000), 0),
    "path-middle": (graphs.path(3000), 1500),
    "grid-40x50": (graphs.grid(40, 50), 0),
    "hubs": (hubs_undirected(), 2),
    "mixed-degrees": (mixed_degrees(), 0),
}


def build(case, xp) -> DistGraph:
    src, dst, n, directed = case
    return build_graph(ONE_RANK, src, dst, n, directed=directed, xp=xp)


def stripe(graph: DistGraph, rank: int, size: int, xp) -> DistGraph:
    """Rank ``rank`` of ``size`` of a one-rank numpy graph (rows rank, rank + size, ...)."""
    rows = np.arange(rank, graph.n, size)
    starts = graph.row_offsets[rows]
    lengths = graph.row_offsets[rows + 1] - starts
    row_offsets = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(lengths, out=row_offsets[1:])
    total = int(row_offsets[-1])
    positions = np.repeat(starts - row_offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
    columns = graph.column_indices[positions]
    return DistGraph(
        graph.n,
        graph.num_edges,
        graph.directed,
        rank,
        size,
        xp.asarray(row_offsets),
        xp.asarray(columns),
    )


def pack_mask(visited: np.ndarray):
    """A bool mask over n vertices as the device bitmask (uint32 words, bit v % 32)."""
    words = -(-visited.shape[0] // 32)
    bits = np.zeros(words * 32, dtype=np.uint64)
    bits[: visited.shape[0]] = visited
    weights = np.uint64(1) << np.arange(32, dtype=np.uint64)
    return cupy.asarray((bits.reshape(words, 32) * weights).sum(axis=1).astype(np.uint32))


def unpack_mask(words, n: int) -> np.ndarray:
    host = cupy.asnumpy(words).astype(np.uint64)
    bits = (host[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)
    return bits.ravel()[:n].astype(bool)


# ----------------------------------------------------------------------------- stages


STAGE_LAYOUTS = [(0, 1), (1, 3)]  # (rank, size): one rank, and a middle rank of three


def _states(case, rank, size, predecessors, source=0, policy=DEFAULT_POLICY):
    """(numpy graph, cupy graph, numpy state, cuda state, backend) for rank ``rank`` of ``size``."""
    full = build(case, np)
    g_np, g_cu = stripe(full, rank, size, np), stripe(full, rank, size, cupy)
    cuda = CudaBackend(policy)
    return (
        g_np,
        g_cu,
        HOST.start(g_np, source, predecessors, HOST.prepare(g_np)),
        cuda.start(g_cu, source, predecessors, cuda.prepare(g_cu)),
        cuda,
    )


def expand_filter(backend, graph, state, nbins):
    """One level's expansion and filter+partition, strip by strip, as the level loop runs them."""
    bins = None
    for strip in range(backend.expansion_strips(graph, state)):
        bins = backend.filter_partition(state, backend.expand(graph, state, strip), nbins)
    return bins


@pytest.mark.parametrize("rank,size", STAGE_LAYOUTS)
@pytest.mark.parametrize("predecessors", [False, True])
@pytest.mark.parametrize("sources", [0, 7, 1999, [3, 0, 7, 3]])
@pytest.mark.parametrize("kernel", [True, False])
def test_start_matches_numpy(rank, size, predecessors, sources, kernel, monkeypatch):
    """A search's start gives numpy's labels, predecessors, visited mask and frontier, from
    one source or several (duplicates are one), on every rank, by its kernel
    (``kernels/start.cu``: one launch fills the labels, predecessors, mask and counters and
    seeds a single source) or by fills and marks from the host (before that module is built);
    also when it starts again in the queues a level left behind, whose counters it clears."""
    case = SEARCH_CASES["grid-40x50"][0]
    full = build(case, np)
    g_np, g_cu = stripe(full, rank, size, np), stripe(full, rank, size, cupy)
    want = HOST.start(g_np, sources, predecessors, HOST.prepare(g_np))
    cuda = CudaBackend()
    resources = cuda.prepare(g_cu)
    if kernel:
        assert resources.kernels["start"] is resources.kernels.built("start")
    else:
        monkeypatch.setattr(cuda_kernels.StageKernels, "built", lambda self, role: None)
    for _ in range(2):
        state = cuda.start(g_cu, sources, predecessors, resources)
        assert np.array_equal(cupy.asnumpy(state.labels), want.labels)
        if predecessors:
            assert np.array_equal(cupy.asnumpy(state.preds), want.preds)
        else:
            assert state.preds is None
        assert np.array_equal(unpack_mask(state.visited_mask, g_np.n), want.visited_mask)
        assert state.frontier_size == want.frontier_size
        got = cupy.asnumpy(state.vertex_frontier[: state.frontier_size])
        assert np.array_equal(np.sort(got), np.sort(want.vertex_frontier[: want.frontier_size]))
        assert not cupy.asnumpy(queues_of(state).counters).any()
        if state.frontier_size:
            expand_filter(cuda, g_cu, state, size)  # the counters the next start clears
            assert cupy.asnumpy(queues_of(state).counters).any()


# Grid gathering of hubs (lists over heavy_degree) and of a small frontier's lists over
# spread_degree: the default policy sends the "hubs" case's lists of 3000 to it in pieces and,
# the frontier being small, every list over 128 in one piece; "hubs-only" only the lists over
# heavy_degree; a heavy_degree of 8 with tiles of 64 sends hundreds of lists through it in
# several windows; "every-list" all lists of two or more; "no-hubs" none (CTA gathering takes
# every long list).
EXPAND_POLICIES = {
    "default": DEFAULT_POLICY,
    "hubs-only": LaunchPolicy(spread_frontier=0),
    "many-hubs": LaunchPolicy(block_threads=64, items_per_thread=1, heavy_degree=8),
    "every-list": LaunchPolicy(spread_degree=1),
    "no-hubs": LaunchPolicy(heavy_degree=1 << 30, spread_frontier=0),
}


@pytest.mark.parametrize("rank,size", STAGE_LAYOUTS)
@pytest.mark.parametrize("predecessors", [False, True])
@pytest.mark.parametrize("name", ["mixed-degrees", "hubs", "grid-40x50"])
@pytest.mark.parametrize("policy", list(EXPAND_POLICIES))
@pytest.mark.parametrize("queue_sizing", [1.0, 0.1, 0.003])  # 1 strip, a few, very many
def test_expand_matches_numpy(name, rank, size, predecessors, policy, queue_sizing):
    """Expansion, whole or in strips (windows of the frontier's edge sequence that cut lists,
    hub pieces too, anywhere): together the strips hold every edge exactly once."""
    case = SEARCH_CASES[name][0]
    g_np, g_cu, s_np, s_cu, _ = _states(case, rank, size, predecessors)
    cuda = CudaBackend(EXPAND_POLICIES[policy], queue_sizing=queue_sizing)
    s_cu = cuda.start(g_cu, 0, predecessors, cuda.prepare(g_cu))
    rng = np.random.default_rng(11)
    frontier = rng.choice(g_np.nlocal, size=min(g_np.nlocal, 900), replace=False)
    frontier = np.union1d(frontier, [0])  # local vertex 0: the first hub on one rank
    s_np.vertex_frontier, s_np.frontier_size = frontier.astype(np.int64), frontier.shape[0]
    s_cu.vertex_frontier, s_cu.frontier_size = cupy.asarray(frontier), frontier.shape[0]
    queues_of(s_cu).advance(0, None)  # a new frontier: what start counted of the source is stale
    want = HOST.expand(g_np, s_np)
    strips = cuda.expansion_strips(g_cu, s_cu)
    limit = max(1, math.ceil(queue_sizing * g_np.num_local_edges))
    assert strips == max(1, -(-want.size // limit))
    pieces = []  # each strip overwrites the edge queue: copy it out before the next
    for strip in range(strips):
        got = cuda.expand(g_cu, s_cu, strip)
        assert got.last == (strip == strips - 1)
        assert got.size <= limit
        parents = None if got.parents is None else cupy.asnumpy(got.parents)
        pieces.append((cupy.asnumpy(got.vertices), parents))
    assert sum(v.shape[0] for v, _ in pieces) == want.size
    vertices = np.concatenate([v for v, _ in pieces]).astype(np.int64)
    if predecessors:
        parents = np.concatenate([p for _, p in pieces]).astype(np.int64)
        got_pairs = np.sort(vertices * g_np.n + parents)
        want_pairs = np.sort(want.vertices.astype(np.int64) * g_np.n + want.parents)
        assert np.array_equal(got_pairs, want_pairs)
    else:
        assert got.parents is None
        assert np.array_equal(np.sort(vertices), np.sort(want.vertices))


def test_expand_empty_frontier():
    case = SEARCH_CASES["random-undirected"][0]
    _g_np, g_cu, _s_np, s_cu, cuda = _states(case, 1, 3, False)  # rank 1 does not own vertex 0
    assert s_cu.frontier_size == 0
    assert cuda.expand(g_cu, s_cu).size == 0


def _edge_items(n: int, items: int, distinct: int, seed: int):
    """A synthetic edge frontier with many repeats: ``items`` draws of ``distinct`` vertices."""
    rng = np.random.default_rng(seed)
    pool = rng.choice(n, size=distinct, replace=False)
    vertices = pool[rng.integers(0, distinct, items)]
    parents = rng.integers(0, n, items)
    return vertices.astype(np.int64), parents.astype(np.int64)


# 2: the meeting bins (no partition pass); 300 > block_threads: the partition's chunked scan
@pytest.mark.parametrize("nbins", [1, 2, 3, 64, 300])
@pytest.mark.parametrize("predecessors", [False, True])
@pytest.mark.parametrize("items,distinct", [(0, 0), (50, 40), (20000, 700), (300000, 150000)])
def test_filter_partition_matches_numpy(nbins, predecessors, items, distinct):
    case = graphs.random_graph(400000, 400000, 4, True)  # queues as large as the items
    g_np, _g_cu, s_np, s_cu, cuda = _states(case, 0, 1, predecessors)
    n = g_np.n
    vertices, parents = _edge_items(n, items, max(distinct, 1), seed=items + nbins)
    visited = np.random.default_rng(5).random(n) < 0.3
    visited[0] = True  # the source
    s_np.visited_mask[:] = visited
    s_cu.visited_mask = pack_mask(visited)
    want = HOST.filter_partition(
        s_np, EdgeFrontier(vertices, parents if predecessors else None), nbins
    )
    got = cuda.filter_partition(
        s_cu,
        EdgeFrontier(cupy.asarray(vertices), cupy.asarray(parents) if predecessors else None),
        nbins,
    )
    if isinstance(got, PendingBins | MeetingBins):
        got = got.resolve()
    assert np.array_equal(got.offsets, want.offsets)
    assert got.vertices.shape[0] == got.offsets[-1], "the bins are exactly the survivors"
    got_vertices = cupy.asnumpy(got.vertices).astype(np.int64)
    for b in range(nbins):
        lo, hi = got.offsets[b], got.offsets[b + 1]
        segment = got_vertices[lo:hi]
        assert np.all(segment % nbins == b)
        assert np.unique(segment).shape[0] == segment.shape[0], "a vertex sent twice"
        assert np.array_equal(np.sort(segment), np.sort(want.vertices[lo:hi]))
    assert np.array_equal(unpack_mask(s_cu.visited_mask, n), s_np.visited_mask)
    if predecessors:
        offered = set((vertices * n + parents).tolist())
        chosen = got_vertices * n + cupy.asnumpy(got.payloads[0]).astype(np.int64)
        assert set(chosen.tolist()) <= offered, "a parent that no item carried"
    else:
        assert got.payloads == ()


def test_meeting_bins_only_for_two_bins_that_count_in_32_bits():
    """Bin 0 of a graph of 2^33 - 1 vertices would count 2^32 of them: the partition pass."""
    assert uses_meeting_bins(2, 2**33 - 2)
    assert not uses_meeting_bins(2, 2**33 - 1)
    assert not uses_meeting_bins(1, 100) and not uses_meeting_bins(3, 100)


@pytest.mark.parametrize("rank,size", STAGE_LAYOUTS)
@pytest.mark.parametrize("predecessors", [False, True])
@pytest.mark.parametrize("early", [False, True])
def test_contract_matches_numpy(rank, size, predecessors, early, monkeypatch):
    """Several ranks: the own bin is looked up in the labels, the other ranks' items in the
    visited mask (set for every labeled owned vertex and for the own bin's, which this rank's
    filter claimed), in one launch, or (``early``) the own bin first by ``contract_local`` and
    the others by ``contract``; the labels, frontier and mask equal the numpy stage's."""
    case = graphs.random_graph(30000, 10, 6, True)
    g_np, g_cu, s_np, s_cu, cuda = _states(case, rank, size, predecessors)
    rng = np.random.default_rng(8)
    labeled = rng.random(g_np.nlocal) < 0.4
    labels = np.where(labeled, 1, UNREACHED).astype(np.int32)
    s_np.labels[:] = labels
    s_cu.labels = cupy.asarray(labels)
    owned = np.arange(rank, g_np.n, size, dtype=np.int64)
    fresh = owned[~labeled]
    own = rng.choice(fresh, fresh.shape[0] // 3, replace=False)  # claimed by this rank's filter
    mask = np.zeros(g_np.n, dtype=bool)
    mask[owned[labeled]] = mask[own] = True
    s_np.visited_mask[:] = mask
    s_cu.visited_mask = pack_mask(mask)
    # One segment per source rank: the own bin, and from the others any owned vertex (labeled
    # ones, the own bin's, repeats across ranks), each rank sending a vertex at most once.
    segments = [
        own if r == rank else rng.choice(owned, owned.shape[0] // 2, replace=False)
        for r in range(size)
    ]
    received = np.concatenate(segments)
    parents = rng.integers(0, g_np.n, received.shape[0])
    offsets = np.concatenate([[0], np.cumsum([seg.shape[0] for seg in segments])])
    HOST.contract(g_np, s_np, Bins(offsets, received, (parents,) if predecessors else ()), 2)
    bins = Bins(
        offsets.astype(np.int64),
        cupy.asarray(received.astype(np.int32)),
        (cupy.asarray(parents.astype(np.int32)),) if predecessors else (),
    )
    if early:  # the same layout stands in for the bins this rank sent
        monkeypatch.setattr(cuda_contract, "OVERLAP_MIN_ITEMS", 1)
        cuda.contract_local(g_cu, s_cu, bins, 2)
        assert queues_of(s_cu).level.own_contracted == (size > 1)
    cuda.contract(g_cu, s_cu, bins, 2)
    assert np.array_equal(cupy.asnumpy(s_cu.labels), s_np.labels)
    assert s_cu.frontier_size == s_np.frontier_size
    assert np.array_equal(
        np.sort(cupy.asnumpy(s_cu.vertex_frontier)), np.sort(s_np.vertex_frontier)
    )
    new = np.sort(s_np.vertex_frontier)
    if predecessors:
        offered = set((received * g_np.n + parents).tolist())
        preds = cupy.asnumpy(s_cu.preds)
        chosen = (new * size + rank) * g_np.n + preds[new]
        assert set(chosen.tolist()) <= offered
    if size > 1:  # the owner marks what it labels in its own visited mask
        assert np.array_equal(unpack_mask(s_cu.visited_mask, g_np.n), s_np.visited_mask)


def test_contract_refuses_bins_other_than_the_pending_one():
    case = SEARCH_CASES["random-undirected"][0]
    _g_np, g_cu, _s_np, s_cu, cuda = _states(case, 0, 1, False)
    edges = cuda.expand(g_cu, s_cu)
    bins = cuda.filter_partition(s_cu, edges, 1)
    copied = Bins(np.array([0, 0], dtype=np.int64), cupy.zeros(0, np.int32))
    with pytest.raises(DeviceError, match="one-rank communicator"):
        cuda.contract(g_cu, s_cu, copied, 1)
    assert isinstance(bins, PendingBins)


# ----------------------------------------------------------------------------- searches


def _search(case, source, backend, xp, predecessors=True, timer=None):
    """Two-phase search: every level runs the stages, so per-level counters exist."""
    graph = build(case, xp)
    result = graphs.search(
        graph,
        source,
        backend,
        ONE_RANK,
        predecessors=predecessors,
        timer=timer,
        strategy="two_phase",
    )
    preds = None if result.predecessors is None else backend.to_host(result.predecessors)
    return backend.to_host(result.distances), preds, result.levels


@pytest.mark.parametrize("queue_sizing", [1.0, 0.25, 0.01])  # strips: none, some, many
@pytest.mark.parametrize("name", sorted(SEARCH_CASES))
def test_search_matches_numpy_and_scipy(name, queue_sizing):
    case, source = SEARCH_CASES[name]
    want_dist, _, want_levels = _search(case, source, HOST, np)
    dist, pred, levels = _search(case, source, CudaBackend(queue_sizing=queue_sizing), cupy)
    assert np.array_equal(dist, want_dist)
    assert np.array_equal(dist, graphs.reference_distances(*case, source))
    graphs.check_bfs_tree(case, source, dist, pred)
    # Culling is exact, so every counter matches the host reference level by level.
    fields = ("frontier", "edges_expanded", "items_sent", "items_received", "discovered")
    assert [[getattr(lv, f) for f in fields] for lv in levels] == [
        [getattr(lv, f) for f in fields] for lv in want_levels
    ]


def test_an_edge_queue_the_device_cannot_hold_is_strip_mined(monkeypatch):
    """A level whose edge queue does not fit the device (allocations past 2,000 items fail,
    the free bytes read 10,000) lowers the queue's limit to what fits and is expanded in
    strips: the same distances and counters as the host reference, a valid tree."""
    from distbfs.backends.cuda import buffers

    allocate = buffers.allocate

    def short_of_memory(graph, what, length, dtype, total):
        if what.startswith("edge") and length > 2000:
            raise DeviceError("out of GPU memory (a test's)")
        return allocate(graph, what, length, dtype, total)

    case, source = SEARCH_CASES["random-undirected"]
    want_dist, _, want_levels = _search(case, source, HOST, np)
    graph, backend = build(case, cupy), CudaBackend(queue_sizing=1.0)
    monkeypatch.setattr(buffers, "allocate", short_of_memory)
    monkeypatch.setattr(buffers.cupy.cuda.runtime, "memGetInfo", lambda: (10_000, 1 << 30))
    monkeypatch.setattr(buffers, "MIN_EDGE_QUEUE", 1)
    result = graphs.search(
        graph, source, backend, ONE_RANK, predecessors=True, strategy="two_phase"
    )
    dist, pred = backend.to_host(result.distances), backend.to_host(result.predecessors)
    levels = result.levels
    assert np.array_equal(dist, want_dist)
    graphs.check_bfs_tree(case, source, dist, pred)
    assert [lv.edges_expanded for lv in levels] == [lv.edges_expanded for lv in want_levels]
    assert max(lv.edges_expanded for lv in levels) > 2000  # a level needed strips


def test_search_without_predecessors():
    case, source = SEARCH_CASES["hubs"]
    dist, pred, _ = _search(case, source, CudaBackend(), cupy, predecessors=False)
    assert pred is None
    assert np.array_equal(dist, graphs.reference_distances(*case, source))


def test_search_with_int64_column_ids():
    case, source = SEARCH_CASES["mixed-degrees"]
    graph = build(case, cupy)
    wide = dataclasses.replace(graph, column_indices=graph.column_indices.astype(cupy.int64))
    backend = CudaBackend()
    result = graphs.search(wide, source, backend, ONE_RANK, predecessors=True, strategy="two_phase")
    dist = backend.to_host(result.distances)
    assert np.array_equal(dist, graphs.reference_distances(*case, source))
    graphs.check_bfs_tree(case, source, dist, backend.to_host(result.predecessors))


@pytest.mark.parametrize(
    "policy",
    [
        LaunchPolicy(
            block_threads=64, items_per_thread=1, warp_hash_slots=32, history_hash_slots=64
        ),
        LaunchPolicy(block_threads=1024, items_per_thread=2, blocks_per_sm=1),
        EXPAND_POLICIES["many-hubs"],
    ],
)
def test_search_with_other_launch_policies(policy):
    for name in ("mixed-degrees", "grid-40x50", "hubs"):
        case, source = SEARCH_CASES[name]
        dist, pred, _ = _search(case, source, CudaBackend(policy), cupy)
        assert np.array_equal(dist, graphs.reference_distances(*case, source))
        graphs.check_bfs_tree(case, source, dist, pred)


def _simulated_ranks(case, source, size, predecessors=True, queue_sizing=DEFAULT_QUEUE_SIZING):
    """Every rank's stages in one process, bins exchanged by concatenation: the multi-rank path
    (``contract_local`` first, then the bins resolved as the exchange resolves them)."""
    full = build(case, np)
    parts = [stripe(full, r, size, cupy) for r in range(size)]
    backend = CudaBackend(queue_sizing=queue_sizing)
    states = [backend.start(g, source, predecessors, backend.prepare(g)) for g in parts]
    level, total = 0, 1
    while total > 0:
        sent = []
        for g, s in zip(parts, states, strict=True):
            bins = expand_filter(backend, g, s, size)
            backend.contract_local(g, s, bins, level + 1)
            sent.append(bins.resolve() if isinstance(bins, MeetingBins) else bins)
        for r, (g, s) in enumerate(zip(parts, states, strict=True)):
            vertices = cupy.concatenate([b.vertices[b.offsets[r] : b.offsets[r + 1]] for b in sent])
            parents = None
            if predecessors:
                parents = cupy.concatenate(
                    [b.payloads[0][b.offsets[r] : b.offsets[r + 1]] for b in sent]
                )
            counts = [b.offsets[r + 1] - b.offsets[r] for b in sent]
            offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
            payloads = () if parents is None else (parents,)
            backend.contract(g, s, Bins(offsets, vertices, payloads), level + 1)
        total = sum(s.frontier_size for s in states)
        level += 1
    dist = np.empty(full.n, dtype=np.int64)
    pred = np.empty(full.n, dtype=np.int64)
    for r, s in enumerate(states):
        dist[r::size] = cupy.asnumpy(s.labels)
        if predecessors:
            pred[r::size] = cupy.asnumpy(s.preds)
    return dist, pred


# (ranks, queue_sizing, early): 0.01 cuts levels into many strips; early: every own bin is
# contracted before the exchange. Two ranks (meeting bins) take every combination.
SIMULATED_LAYOUTS = [
    (2, DEFAULT_QUEUE_SIZING, False),
    (2, 0.01, False),
    (2, DEFAULT_QUEUE_SIZING, True),
    (2, 0.01, True),
    (3, DEFAULT_QUEUE_SIZING, False),
    (3, 0.01, True),
    (4, DEFAULT_QUEUE_SIZING, False),
]


@pytest.mark.parametrize(("size", "queue_sizing", "early"), SIMULATED_LAYOUTS)
@pytest.mark.parametrize(
    "name", ["random-undirected", "random-directed", "hubs", "isolated-source"]
)
def test_simulated_ranks_match_scipy(name, size, queue_sizing, early, monkeypatch):
    """Levels filtered strip by strip into 2 (meeting) or more bins, exchanged, contracted;
    with ``early`` every own bin is contracted by contract_local before its bins are resolved
    (two ranks: the meeting bin's length read by the kernel from the device)."""
    meeting_bins = []  # the meeting bins contracted by the kernel's own count
    if early:
        monkeypatch.setattr(cuda_contract, "OVERLAP_MIN_ITEMS", 1)
        contract_items = cuda_contract.contract_items

        def spy(*args, **kwargs):
            meeting_bins.append(kwargs.get("meeting_bin", -1))
            return contract_items(*args, **kwargs)

        monkeypatch.setattr(cuda_contract, "contract_items", spy)
    case, source = SEARCH_CASES[name]
    dist, pred = _simulated_ranks(case, source, size, queue_sizing=queue_sizing)
    if early and size == 2 and name != "isolated-source":  # (that source reaches nothing)
        assert {0, 1} <= set(meeting_bins), "both ranks' own meeting bins went early"
    assert np.array_equal(dist, graphs.reference_distances(*case, source))
    graphs.check_bfs_tree(case, source, dist, pred)


# ----------------------------------------------------------------------------- fused levels


def _hybrid(case, source, backend, max_frontier, predecessors=True):
    """A one-rank level loop that hands small frontiers to run_small_levels (section 5.4)."""
    graph = build(case, cupy)
    state = backend.start(graph, source, predecessors, backend.prepare(graph))
    level, fused = 0, 0
    while state.frontier_size > 0:
        done = backend.run_small_levels(graph, state, level, max_frontier)
        if done:
            level, fused = level + done, fused + done
            continue
        bins = expand_filter(backend, graph, state, 1)
        received = ONE_RANK.exchange_bins(bins)
        backend.contract(graph, state, received, level + 1)
        level += 1
    preds = cupy.asnumpy(state.preds) if predecessors else None
    return cupy.asnumpy(state.labels).astype(np.int64), preds, level, fused


@pytest.mark.parametrize(
    "name", ["path-3000", "grid-40x50", "hubs", "random-directed", "components"]
)
@pytest.mark.parametrize("max_frontier", [1, 64, 10**9])
def test_fused_levels_match_scipy(name, max_frontier):
    case, source = SEARCH_CASES[name]
    dist, pred, _, fused = _hybrid(case, source, CudaBackend(), max_frontier)
    assert np.array_equal(dist, graphs.reference_distances(*case, source))
    graphs.check_bfs_tree(case, source, dist, pred)
    assert fused > 0


def lollipop(stick: int, leaves: int):
    """A path 0 .. stick whose far end is the hub of a star of ``leaves`` leaves."""
    path = np.arange(stick, dtype=np.int64)
    hub_edges = np.full(leaves, stick, dtype=np.int64)
    src = np.concatenate([path, hub_edges])
    dst = np.concatenate([path + 1, np.arange(stick + 1, stick + 1 + leaves, dtype=np.int64)])
    return src, dst, stick + 1 + leaves, False


def test_fused_levels_stop_at_the_edge_budget():
    case = lollipop(20, 3000)  # the frontier {20} has 3001 edges
    backend = CudaBackend(LaunchPolicy(fused_max_edges=100))
    dist, pred, levels, fused = _hybrid(case, 0, backend, 10**9)
    assert np.array_equal(dist, graphs.reference_distances(*case, 0))
    graphs.check_bfs_tree(case, 0, dist, pred)
    assert fused == 20  # levels 1 .. 20, stopping before the hub's level
    assert levels == 22


def test_fused_levels_run_a_whole_path_in_one_launch():
    case, source = SEARCH_CASES["path-3000"]
    graph = build(case, cupy)
    backend = CudaBackend()
    state = backend.start(graph, source, False, backend.prepare(graph))
    assert backend.run_small_levels(graph, state, 0, 10) == 3000  # last level finds nothing
    assert state.frontier_size == 0


def test_fused_levels_decline_several_ranks():
    case = SEARCH_CASES["random-undirected"][0]
    _g_np, g_cu, _s_np, s_cu, cuda = _states(case, 0, 2, False)
    assert cuda.run_small_levels(g_cu, s_cu, 0, 10**9) == 0


# ----------------------------------------------------------------------------- cooperative grid


class FusedCounting(CudaBackend):
    """The CUDA backend, counting what its fused cooperative grid did."""

    def __init__(self, policy: LaunchPolicy = DEFAULT_POLICY) -> None:
        super().__init__(policy)
        self.fused_levels = 0  # levels run by the fused grid, all launches together
        self.calls = 0  # run_small_levels calls (a launch each, unless declined on the host)
        self.runs: list[tuple[int, int]] = []  # (first level, levels run) of each fused run

    def run_small_levels(self, graph, state, level, max_frontier, **limits):
        done = super().run_small_levels(graph, state, level, max_frontier, **limits)
        self.fused_levels += done
        self.calls += 1
        if done:
            self.runs.append((level, done))
        return done


def grid3d(nx: int, ny: int, nz: int):
    """The nx x ny x nz lattice, each vertex joined to its (up to six) axis neighbours."""
    ids = np.arange(nx * ny * nz, dtype=np.int64).reshape(nx, ny, nz)
    src = np.concatenate([ids[:-1].ravel(), ids[:, :-1].ravel(), ids[:, :, :-1].ravel()])
    dst = np.concatenate([ids[1:].ravel(), ids[:, 1:].ravel(), ids[:, :, 1:].ravel()])
    return src, dst, nx * ny * nz, False


COOPERATIVE_CASES = {
    "path-3000": (graphs.path(3000), 0),
    "path-100000": (graphs.path(100_000), 0),
    "path-100000-middle": (graphs.path(100_000), 50_000),
    "grid-300x300-corner": (graphs.grid(300, 300), 0),
    "grid-300x300-middle": (graphs.grid(300, 300), 150 * 300 + 150),
    "grid3d-40": (grid3d(40, 40, 40), 0),
    "random-undirected": (graphs.random_graph(20_000, 80_000, 11, False), 0),
    "random-directed": (graphs.random_graph(20_000, 60_000, 12, True), 3),
    "random-sparse": (graphs.random_graph(50_000, 30_000, 13, False), 0),  # 88 levels, 16 k
    "mixed-degrees": (mixed_degrees(), 27),  # 12 levels, reaches 5965 of 6000
    "hubs": (hubs_undirected(), 2),  # lists of 3000 > heavy_degree: grid gathering
}


def _cooperative(case, source, backend, strategy, predecessors=True):
    """A whole search through the level loop; distances checked against scipy."""
    result = graphs.search(
        build(case, cupy), source, backend, ONE_RANK, predecessors=predecessors, strategy=strategy
    )
    dist = cupy.asnumpy(result.distances).astype(np.int64)
    want = graphs.reference_distances(*case, source)
    np.testing.assert_array_equal(dist, want)
    if predecessors:
        graphs.check_bfs_tree(case, source, dist, cupy.asnumpy(result.predecessors))
    else:
        assert result.predecessors is None
    graphs.check_level_rows(case, want, result.levels)
    return result


@pytest.mark.parametrize("strategy", ["contract_expand", "hybrid", "direction_optimizing"])
@pytest.mark.parametrize("name", sorted(COOPERATIVE_CASES))
def test_cooperative_grid_runs_every_level_in_one_launch(name, strategy):
    """Under the default limits every level of these graphs is fused, all in ONE launch."""
    case, source = COOPERATIVE_CASES[name]
    backend = FusedCounting()
    with warnings.catch_warnings():
        # CuPy shrinks a cooperative grid larger than what is resident, with this warning.
        warnings.filterwarnings("error", message="The grid size will be reduced")
        result = _cooperative(case, source, backend, strategy)
    want = graphs.reference_distances(*case, source)
    assert backend.fused_levels == int(want.max()) + 1
    assert backend.calls == 1
    assert len(result.levels) == backend.fused_levels and all(lv.fused for lv in result.levels)


@pytest.mark.parametrize("strategy", ["contract_expand", "hybrid", "direction_optimizing"])
def test_cooperative_grid_on_a_road_network(data_dir, strategy):
    """luxembourg_osm from vertex 0 (as benchmarks/bench_gpu.py): ~1000 levels, one launch."""
    matrix = graphs.read_matrix_market(data_dir / "luxembourg_osm.mtx.gz")
    case = (matrix.row.astype(np.int64), matrix.col.astype(np.int64), matrix.shape[0], False)
    backend = FusedCounting()
    _cooperative(case, 0, backend, strategy)
    want = graphs.reference_distances(*case, 0)
    assert backend.runs == [(0, int(want.max()) + 1)]


@pytest.mark.parametrize("strategy", ["hybrid", "direction_optimizing"])
def test_a_road_network_asks_for_the_fused_stage_alone(data_dir, strategy, monkeypatch):
    """A graph's kernels are compiled stage by stage at first use (``StageKernels``): a
    search whose levels all run fused looks up only ``contract_expand``'s kernels (and its
    start's, once that module is built), so a first run with an empty kernel cache waits for
    that one module."""
    matrix = graphs.read_matrix_market(data_dir / "luxembourg_osm.mtx.gz")
    case = (matrix.row.astype(np.int64), matrix.col.astype(np.int64), matrix.shape[0], False)
    asked = []
    lookup = cuda_kernels._kernel

    def recording(device, stage, name, options):
        asked.append(stage)
        return lookup(device, stage, name, options)

    monkeypatch.setattr(cuda_kernels, "_kernel", recording)
    _cooperative(case, 0, CudaBackend(), strategy)
    assert "contract_expand" in asked and set(asked) <= {"start", "contract_expand"}


def test_compile_ahead_builds_each_module_once(monkeypatch):
    """``compile_ahead`` builds a first search's modules in a background thread; a search that
    asks for one meanwhile waits for that build rather than starting its own."""
    built = []
    build = cuda_kernels._built_module.__wrapped__

    def counting(device, stage, options):
        built.append(stage)
        return build(device, stage, options)

    monkeypatch.setattr(cuda_kernels, "_built_module", functools.cache(counting))
    thread = cuda_kernels.compile_ahead(cuda_kernels.FIRST_SEARCH_STAGES)
    module = cuda_kernels.get_module("start")  # while the thread builds it, or after
    thread.join()
    assert sorted(built) == sorted(cuda_kernels.FIRST_SEARCH_STAGES)  # each once
    assert cuda_kernels.get_module("start") is module


def test_a_module_not_built_yet_is_built_behind(monkeypatch):
    """``StageKernels.built``: None for a module not built yet, whose build it starts in the
    background (once); the kernel once that build is done."""
    monkeypatch.setattr(cuda_kernels, "_BUILT", set())
    fresh = functools.cache(cuda_kernels._built_module.__wrapped__)
    monkeypatch.setattr(cuda_kernels, "_built_module", fresh)
    kernels = CudaBackend().prepare(build(SEARCH_CASES["path-3000"][0], cupy)).kernels
    assert kernels.built("start") is None
    deadline = time.monotonic() + 120
    while (kernel := kernels.built("start")) is None:
        assert time.monotonic() < deadline, "the background build never finished"
        time.sleep(0.05)
    assert kernel is kernels["start"]
    assert fresh.cache_info().misses == 1


def test_load_kernels_compiles_every_stage_at_once(monkeypatch):
    """What a benchmark's warm-up calls (``GraphResources.load_kernels``): every role's kernel
    at once."""
    asked = []
    lookup = cuda_kernels._kernel

    def recording(device, stage, name, options):
        asked.append((stage, name))
        return lookup(device, stage, name, options)

    monkeypatch.setattr(cuda_kernels, "_kernel", recording)
    backend = CudaBackend()
    resources = backend.prepare(build(SEARCH_CASES["path-3000"][0], cupy))
    assert asked == []
    backend.load_kernels(resources)
    assert sorted(asked) == sorted(KERNELS.values())


SMALL_GRID = LaunchPolicy(fused_threads=64, fused_blocks_per_sm=1, heavy_degree=8)
"""Small blocks: a block's share of a frontier takes several chunks, lists > 8 go grid-wide."""
GRID_GATHERING = LaunchPolicy(heavy_degree=1)
"""Almost every list is gathered by the whole grid (degree 1 stays in its block)."""
NO_GRID_GATHERING = LaunchPolicy(heavy_degree=1 << 30, spread_frontier=0)
"""Every list is gathered inside its block, hubs included."""
TIGHT_LIMITS = LaunchPolicy(fused_max_frontier=64, fused_max_edges=300, heavy_degree=4)
"""The grid stops often: hybrid alternates fused runs and two-phase levels."""


@pytest.mark.parametrize(
    "policy",
    [SMALL_GRID, GRID_GATHERING, NO_GRID_GATHERING, TIGHT_LIMITS],
    ids=["small-grid", "grid-gathering", "no-grid-gathering", "tight-limits"],
)
@pytest.mark.parametrize("strategy", ["contract_expand", "hybrid"])
@pytest.mark.parametrize(
    "name",
    ["path-3000", "grid-300x300-middle", "grid3d-40", "random-directed", "mixed-degrees", "hubs"],
)
def test_cooperative_grid_with_other_policies(name, strategy, policy):
    case, source = COOPERATIVE_CASES[name]
    backend = FusedCounting(policy)
    _cooperative(case, source, backend, strategy)
    assert backend.fused_levels > 0


def test_cooperative_grid_alternates_with_two_phase_levels():
    """Small levels fused, large ones in two phases, small ones fused again (hybrid, 5.4)."""
    case, source = COOPERATIVE_CASES["random-sparse"]  # frontiers grow past 64, then shrink
    backend = FusedCounting(TIGHT_LIMITS)
    result = _cooperative(case, source, backend, "hybrid")
    assert len(backend.runs) >= 2
    assert dict(backend.runs)[0] > 1  # the first levels, from one vertex, are small
    fused = {first + j for first, span in backend.runs for j in range(span)}
    for row in result.levels:  # counts checked by _cooperative
        assert row.fused == (row.level in fused)
        if not row.fused:  # a two-phase level: a large frontier, or one with too many edges
            assert row.edges_expanded > 0


@pytest.mark.parametrize("predecessors", [False, True])
def test_cooperative_grid_without_predecessors_and_with_int64_ids(predecessors):
    case, source = COOPERATIVE_CASES["mixed-degrees"]
    graph = build(case, cupy)
    wide = dataclasses.replace(graph, column_indices=graph.column_indices.astype(cupy.int64))
    for g in (graph, wide):
        backend = FusedCounting(SMALL_GRID)
        result = graphs.search(
            g, source, backend, ONE_RANK, predecessors=predecessors, strategy="contract_expand"
        )
        dist = cupy.asnumpy(result.distances).astype(np.int64)
        np.testing.assert_array_equal(dist, graphs.reference_distances(*case, source))
        if predecessors:
            graphs.check_bfs_tree(case, source, dist, cupy.asnumpy(result.predecessors))
        else:
            assert result.predecessors is None
        assert backend.fused_levels > 0


@pytest.mark.parametrize("max_frontier", [5, 40, 123])  # odd and even level counts
def test_cooperative_grid_leaves_the_exact_frontier(max_frontier):
    """Stopped by max_frontier, the state is exactly that of as many two-phase levels."""
    case, source = COOPERATIVE_CASES["grid-300x300-corner"]
    graph = build(case, cupy)
    backend = CudaBackend()
    state = backend.start(graph, source, True, backend.prepare(graph))
    levels = backend.run_small_levels(graph, state, 0, max_frontier)
    # From the corner, the frontier at distance d holds d + 1 vertices (d < 300).
    assert levels == max_frontier
    want = graphs.reference_distances(*case, source)
    assert state.frontier_size == levels + 1
    frontier = np.sort(cupy.asnumpy(state.vertex_frontier).astype(np.int64))
    np.testing.assert_array_equal(frontier, np.flatnonzero(want == levels))
    labels = cupy.asnumpy(state.labels).astype(np.int64)
    np.testing.assert_array_equal(labels, np.where(want <= levels, want, UNREACHED))
    np.testing.assert_array_equal(unpack_mask(state.visited_mask, graph.n), labels != UNREACHED)
    # The search goes on from there (two-phase, then fused again) to the right distances.
    level = levels
    while state.frontier_size > 0:
        bins = expand_filter(backend, graph, state, 1)
        backend.contract(graph, state, ONE_RANK.exchange_bins(bins), level + 1)
        level += 1
        level += backend.run_small_levels(graph, state, level, 10**9)
    np.testing.assert_array_equal(cupy.asnumpy(state.labels).astype(np.int64), want)
    graphs.check_bfs_tree(case, source, want, cupy.asnumpy(state.preds))


@pytest.mark.parametrize(
    "policy",
    [LaunchPolicy(fused_max_edges=1000), DEFAULT_POLICY],
    ids=["budget-1000", "default-budget"],
)
def test_cooperative_grid_stops_before_a_hub_over_the_edge_budget(policy, monkeypatch):
    """A star searched from a leaf: level 0 (one edge) is fused; the hub's level is not. A
    search from the hub knows its level 0's edges from the host (``long_rows``) and launches
    no fused kernel at all."""
    leaves = policy.fused_max_edges + 1
    case = graphs.star(leaves)
    backend = FusedCounting(policy)
    result = _cooperative(case, 17, backend, "contract_expand")
    # Level 2's frontier, the other leaves, has exactly fused_max_edges edges: fused again.
    assert backend.runs == [(0, 1), (2, 1)]
    hub_row = result.levels[1]
    assert hub_row.level == 1 and hub_row.span == 1
    assert hub_row.edges_expanded == leaves  # the two-phase path expanded the hub
    # From the hub, the fused grid declines at once and leaves the state untouched.
    graph = build(case, cupy)
    resources = backend.prepare(graph)
    assert resources.long_rows == {0: (0, leaves)}
    state = backend.start(graph, 0, True, resources)
    monkeypatch.setattr(cuda_fused, "_launch_small_levels", None)  # called: a TypeError
    assert backend.run_small_levels(graph, state, 0, 10**9) == 0
    assert backend.frontier_edges(graph, state) == leaves
    assert backend.unexplored(graph, state) == (leaves, leaves)
    assert state.frontier_size == 1
    assert cupy.asnumpy(state.vertex_frontier).tolist() == [0]
    assert int(cupy.count_nonzero(state.labels != UNREACHED)) == 1


def test_long_rows_known_from_the_resources_or_counted():
    """The rows over a limit at least the fused levels' edge budget come from the resources'
    ``long_rows`` (the hubs); a lower limit counts them on the device; compressed columns
    give none, not even an empty list (their rows are not handed out plain)."""
    backend = CudaBackend(LaunchPolicy(fused_max_edges=1000), replica_limit_bytes=0)
    graph = build(graphs.star(1001), cupy)
    resources = backend.prepare(graph)
    assert backend.long_rows(graph, resources, 1000) == {0: 1001}
    assert backend.long_rows(graph, resources, 1001) == {}
    assert backend.long_rows(graph, resources, 0) == {v: 1001 if v == 0 else 1 for v in range(1002)}
    compressed = backend.compress_graph(graph)
    assert backend.long_rows(compressed, backend.prepare(compressed), 0) is None


@pytest.mark.parametrize(
    "block, small, tiers",
    [
        (0, 0, ["grid"]),
        (1 << 20, 0, ["block"]),
        (90, 0, ["block", "grid", "block"]),
        (0, 1 << 20, ["small"]),
        (40, 90, ["block", "small", "grid", "small", "block"]),
    ],
    ids=["grid-only", "one-block", "block-grid", "small-grid", "three-tiers"],
)
def test_fused_levels_hand_over_between_tiers(monkeypatch, block, small, tiers):
    """On a sparse graph fused levels run in one block while the frontier has at most
    fused_block_edges edges, in a small grid up to fused_small_grid_edges, in the full grid
    beyond, and each grid hands back below half the tier under it: a grid graph from a corner
    (its frontier grows to 45 vertices, about 4 edges each, and shrinks) searched alike every
    way, one level a grid barrier (level pairs stop on every other level); a dense graph takes
    the full grid alone."""
    policy = LaunchPolicy(
        fused_block_edges=block, fused_small_grid_edges=small, fused_pair_degree=0
    )
    backend = CudaBackend(policy)
    launches = []
    launch = cuda_fused._launch_small_levels

    def counted(*args):
        ran = launch(*args)
        tier = args[-1]
        kind = "block" if tier.one_block else "grid" if tier.blocks is None else "small"
        if ran and (not launches or launches[-1] != kind):
            launches.append(kind)
        return ran

    monkeypatch.setattr(cuda_fused, "_launch_small_levels", counted)
    _cooperative(graphs.grid(60, 45), 0, backend, "contract_expand")
    assert launches == tiers
    launches.clear()
    _cooperative(graphs.random_graph(1000, 12000, 3, False), 0, backend, "contract_expand")
    assert launches == ["grid"]  # mean degree 24


def test_cooperative_grid_fits_the_device():
    """The grid is fused_blocks_per_sm blocks per SM, all resident (the launch bounds hold)."""
    policy = DEFAULT_POLICY
    backend = CudaBackend(policy)
    graph = build(SEARCH_CASES["path-3000"][0], cupy)
    state = backend.start(graph, 0, False, backend.prepare(graph))
    kernel = state.scratch["cuda"].kernels["contract_expand"]
    resident = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
        kernel.kernel.ptr, policy.fused_threads, 0
    )
    processors = cupy.cuda.Device().attributes["MultiProcessorCount"]
    assert resident >= policy.fused_blocks_per_sm
    assert cuda_fused.fused_grid(policy, {}, kernel) == processors * policy.fused_blocks_per_sm


def test_launch_policy_refuses_a_fused_grid_that_cannot_be_resident():
    with pytest.raises(ValueError, match="fused_blocks_per_sm"):
        LaunchPolicy(fused_threads=1024, fused_blocks_per_sm=3)
    with pytest.raises(ValueError, match="heavy_degree"):
        LaunchPolicy(heavy_degree=0)
    with pytest.raises(ValueError, match="spread_degree=0"):
        LaunchPolicy(spread_degree=0)
    with pytest.raises(ValueError, match="spread_frontier=-1"):
        LaunchPolicy(spread_frontier=-1)


# ----------------------------------------------------------------------------- errors, timer


def test_levels_larger_than_the_edge_queue_run_in_strips():
    """The star's second level expands 3000 edges through a queue of 60: 50 strips, and the
    queue never grows past its limit."""
    case, source = SEARCH_CASES["star-3000"]
    graph, backend = build(case, cupy), CudaBackend(queue_sizing=0.01)
    calls = []
    expand = backend.expand

    def counted(graph, state, strip=0):
        calls.append(strip)
        return expand(graph, state, strip)

    backend.expand = counted
    result = graphs.search(
        graph, source, backend, ONE_RANK, predecessors=True, strategy="two_phase"
    )
    dist = backend.to_host(result.distances)
    assert np.array_equal(dist, graphs.reference_distances(*case, source))
    graphs.check_bfs_tree(case, source, dist, backend.to_host(result.predecessors))
    queue = result.state.resources.edge_queue
    assert queue.capacity <= queue.limit == 60
    assert max(calls) == 49 and result.levels[1].edges_expanded == 3000


def test_edge_queue_overflow_names_the_queue_and_the_setting(monkeypatch):
    """A level that is not strip-mined to fit (forced here) overflows: expand stores nothing
    past the queue, and the host names the queue, the size needed and the setting."""
    case, source = SEARCH_CASES["star-3000"]
    monkeypatch.setattr(CudaBackend, "expansion_strips", lambda self, graph, state: 1)
    with pytest.raises(DeviceError, match=r"edge queue overflow.*3000 items.*queue_sizing"):
        _search(case, source, CudaBackend(queue_sizing=0.01), cupy)


def test_out_of_memory_says_how_much_and_what_to_do(monkeypatch):
    graph = build(SEARCH_CASES["random-undirected"][0], cupy)
    backend = CudaBackend()
    resources = backend.prepare(graph)
    backend.start(graph, 0, True, resources)  # compile the kernels before cupy.empty starts failing

    def no_memory(length, dtype=None):
        raise cupy.cuda.memory.OutOfMemoryError(8 * length, 0)

    monkeypatch.setattr(cupy, "empty", no_memory)
    with pytest.raises(DeviceError, match=r"out of GPU memory.*bytes.*more GPUs"):
        backend.start(graph, 0, True, resources)


def test_a_whole_allocation_out_of_memory_says_how_much_and_what_to_do(monkeypatch):
    """An allocation of its own (``cupy.cuda.Memory``, which CUDA IPC maps whole) that finds no
    memory raises CUDA's status, not CuPy's ``OutOfMemoryError``: it is a ``DeviceError``
    naming the bytes and the fix, here the peer mailbox's."""
    graph = build(SEARCH_CASES["random-undirected"][0], cupy)

    def no_memory(nbytes):
        raise cupy.cuda.runtime.CUDARuntimeError(2)  # cudaErrorMemoryAllocation

    monkeypatch.setattr(cupy.cuda, "Memory", no_memory)
    with pytest.raises(DeviceError, match=r"peer mailbox \(\d+ bytes\).*fused_max_edges"):
        cuda_fused.make_peer_mailbox(DEFAULT_POLICY, graph)


def test_edge_queue_holds_the_largest_expansion_and_is_reused():
    """The graph's edge queue grows to what levels expand (known exactly beforehand; a
    regrowth by at least QUEUE_REGROWTH), not to the stored edges, and later searches reuse it
    as it is."""
    case, source = SEARCH_CASES["grid-40x50"]
    graph, backend = build(case, cupy), CudaBackend()
    resources = GraphResources(graph, backend, ONE_RANK)
    first = bfs_levels(SearchPlan(resources, "two_phase"), source, predecessors=True)
    levels = first.levels
    largest = max(lv.edges_expanded for lv in levels)
    queue = first.state.resources.edge_queue
    assert largest <= queue.capacity <= largest * QUEUE_REGROWTH < graph.num_local_edges
    vertices, parents = queue.vertices, queue.parents
    for strategy in ("two_phase", "hybrid", DO):
        later = bfs_levels(SearchPlan(resources, strategy), source, predecessors=True)
        queue = later.state.resources.edge_queue  # the same queue: the graph's resources
        assert queue.vertices is vertices and queue.parents is parents


def test_queue_sizing_must_be_positive():
    with pytest.raises(ValueError, match="queue_sizing"):
        CudaBackend(queue_sizing=0)


def test_host_graph_is_refused():
    case, source = SEARCH_CASES["components"]
    with pytest.raises(TypeError, match="xp=cupy"):
        backend, graph = CudaBackend(), build(case, np)
        backend.start(graph, source, False, backend.prepare(graph))


def test_event_timer_reports_every_phase_of_every_level():
    case, source = SEARCH_CASES["grid-40x50"]
    backend = CudaBackend()
    _, _, levels = _search(case, source, backend, cupy, timer=backend.make_timer(True))
    phases = {"expand", "filter_partition", "exchange", "contract", "termination"}
    assert len(levels) == 89  # frontiers at distances 0 .. 40 + 50 - 2 from the corner
    for stats in levels:
        assert set(stats.seconds) == phases
        assert all(seconds >= 0 for seconds in stats.seconds.values())
    assert sum(stats.seconds["expand"] for stats in levels) > 0


def test_searches_release_their_device_buffers():
    """A finished search frees its queues at once (no reference cycle waiting for the GC)."""
    import gc

    case, source = SEARCH_CASES["random-undirected"]
    graph, backend = build(case, cupy), CudaBackend()
    resources = GraphResources(graph, backend, ONE_RANK)
    plans = {s: SearchPlan(resources, s) for s in ("two_phase", "hybrid")}
    pool = cupy.get_default_memory_pool()
    gc.disable()
    try:
        for strategy in ("two_phase", "hybrid"):
            bfs_levels(plans[strategy], source, predecessors=True)
        held = pool.used_bytes()
        for strategy in ("two_phase", "hybrid") * 5:
            bfs_levels(plans[strategy], source, predecessors=True)
        assert pool.used_bytes() == held
    finally:
        gc.enable()


@pytest.mark.parametrize("keeps", [True, False])
def test_small_graphs_keep_their_search_queues(keeps, monkeypatch):
    """A graph whose queues fit ``KEPT_QUEUE_BYTES`` keeps them from one search to the next
    (the same buffers each search); searches alternating strategies, sources and predecessors
    stay right. Past the limit (0 here) nothing is kept."""
    if not keeps:
        monkeypatch.setattr(cuda_buffers, "KEPT_QUEUE_BYTES", 0)
    case, _ = SEARCH_CASES["random-undirected"]
    graph, backend = build(case, cupy), CudaBackend()
    resources = GraphResources(graph, backend, ONE_RANK)
    plans = {s: SearchPlan(resources, s) for s in ("two_phase", "hybrid", "direction_optimizing")}
    kept = resources.backend_resources.kept_queues
    first = None
    for round_ in range(2):
        for i, strategy in enumerate(plans):
            source, predecessors = 17 * i + round_, i != 1
            result = bfs_levels(plans[strategy], source, predecessors=predecessors)
            dist = cupy.asnumpy(result.distances).astype(np.int64)
            np.testing.assert_array_equal(dist, graphs.reference_distances(*case, source))
            if predecessors:
                graphs.check_bfs_tree(case, source, dist, cupy.asnumpy(result.predecessors))
        if round_ == 0:
            first = {what: _address(array) for what, array in kept.items()}
    assert bool(kept) == keeps
    if keeps:
        wanted = {"vertex frontier", "spare vertex frontier", "bin queue", "pinned counters"}
        assert wanted <= set(first)
        again = {what: _address(kept[what]) for what in first}
        assert again == first  # the second round reused every queue the first one kept


def _address(array) -> int:
    """Where a device or (pinned) host array's data starts."""
    return array.data.ptr if isinstance(array, cupy.ndarray) else array.ctypes.data


# ----------------------------------------------------------------------------- direction-optimizing


def _bottom_up_states(case, rank, size, seed):
    """Rank ``rank`` of ``size`` of ``case`` mid-search: random labels (level 0 or 1) on about
    40% of the vertices, the level-1 ones the global frontier; numpy and CUDA states alike."""
    g_np, g_cu, s_np, s_cu, cuda = _states(case, rank, size, True)
    n = g_np.n
    rng = np.random.default_rng(seed)
    labeled = rng.random(n) < 0.4
    frontier = labeled & (rng.random(n) < 0.5)
    mine = np.arange(rank, n, size)
    labels = np.where(labeled[mine], np.where(frontier[mine], 1, 0), UNREACHED).astype(np.int32)
    s_np.labels[:] = labels
    s_cu.labels[:] = cupy.asarray(labels)
    local_frontier = np.flatnonzero(frontier[mine])
    s_np.vertex_frontier, s_np.frontier_size = local_frontier, local_frontier.shape[0]
    s_cu.vertex_frontier = cupy.asarray(local_frontier.astype(np.int32))
    s_cu.frontier_size = local_frontier.shape[0]
    queues_of(s_cu).advance(0, None)  # a new frontier: what start counted of the source is stale
    return g_np, g_cu, s_np, s_cu, cuda, _gathered(case, size, frontier)


def _gathered(case, size, frontier):
    """The all-gathered bitmaps of global frontier ``frontier`` (bool over n), as the numpy
    stage packs them."""
    n = case[2]
    rows = []
    for r in range(size):
        part = stripe(build(case, np), r, size, np)
        state = HOST.start(part, 0, False, HOST.prepare(part))
        state.vertex_frontier = np.flatnonzero(frontier[np.arange(r, n, size)])
        rows.append(HOST.frontier_bitmap(part, state))
    return np.stack(rows)


@pytest.mark.parametrize(
    "rank,size", [(0, 1), (1, 2), (1, 3), (3, 4), (5, 6), (5, 8), (9, 16), (31, 32)]
)
def test_mark_visited_matches_numpy(rank, size):
    """The gathered frontier bitmaps OR-ed into the visited mask (SHARE_FRONTIER): bit by bit
    for any rank count, a bit field a row for powers of two; n = 3000 ends inside a mask
    word."""
    case = SEARCH_CASES["random-directed"][0]
    g_np, g_cu, s_np, s_cu, cuda = _states(case, rank, size, False)
    rng = np.random.default_rng(size)
    before = rng.random(g_np.n) < 0.2
    s_np.visited_mask[:] = before
    s_cu.visited_mask = pack_mask(before)
    gathered = _gathered(case, size, rng.random(g_np.n) < 0.3)
    HOST.mark_visited(g_np, s_np, gathered)
    cuda.mark_visited(g_cu, s_cu, cupy.asarray(gathered))
    np.testing.assert_array_equal(unpack_mask(s_cu.visited_mask, g_np.n), s_np.visited_mask)
    assert s_np.visited_mask.sum() > before.sum()


# power-of-two rank counts test a neighbour's frontier bit by mask and shift, others by division
@pytest.mark.parametrize("rank,size", [*STAGE_LAYOUTS, (1, 2), (3, 4), (5, 8)])
@pytest.mark.parametrize("name", ["mixed-degrees", "hubs", "random-directed", "grid-40x50"])
def test_frontier_bitmap_and_bottom_up_match_numpy(name, rank, size):
    case = SEARCH_CASES[name][0]
    g_np, g_cu, s_np, s_cu, cuda, gathered = _bottom_up_states(case, rank, size, seed=3)
    before = unpack_mask(s_cu.visited_mask, g_np.n)
    mine = gathered[rank]
    np.testing.assert_array_equal(cupy.asnumpy(cuda.frontier_bitmap(g_cu, s_cu)), mine)
    in_np = in_cu = None
    if case[3]:  # directed: bottom-up scans in-neighbours
        reverse = build_graph(ONE_RANK, case[1], case[0], case[2], directed=True, xp=np)
        in_np = stripe(reverse, rank, size, np)
        in_cu = stripe(reverse, rank, size, cupy)
    tested_np = HOST.bottom_up(g_np, in_np or g_np, s_np, gathered, 2)
    tested = cuda.bottom_up(g_cu, in_cu or g_cu, s_cu, cupy.asarray(gathered), 2)
    np.testing.assert_array_equal(cupy.asnumpy(s_cu.labels), s_np.labels)
    # both take the first in-neighbour in row order that is in the frontier
    np.testing.assert_array_equal(cupy.asnumpy(s_cu.preds), s_np.preds)
    found = np.sort(s_np.vertex_frontier)
    assert s_cu.frontier_size == found.shape[0]
    np.testing.assert_array_equal(np.sort(cupy.asnumpy(s_cu.vertex_frontier)), found)
    # exact slots on the GPU; numpy tests in doubling rounds, so it counts at least as many
    assert found.shape[0] <= tested <= tested_np
    # the kernel left the next frontier's bitmap behind, and m_f of the new frontier
    state = HOST.start(g_np, 0, False, HOST.prepare(g_np))
    state.vertex_frontier = found
    np.testing.assert_array_equal(
        cupy.asnumpy(cuda.frontier_bitmap(g_cu, s_cu)), HOST.frontier_bitmap(g_np, state)
    )
    assert cuda.frontier_edges(g_cu, s_cu) == HOST.frontier_edges(g_np, s_np)
    want = before.copy()  # the found vertices' bits set, and no other
    want[found * size + rank] = True
    np.testing.assert_array_equal(unpack_mask(s_cu.visited_mask, g_np.n), want)
    assert cuda.unexplored(g_cu, s_cu) == HOST.unexplored(g_np, s_np)
    # a second bottom-up level in a row: both keep their candidates from the first
    again = _gathered(case, size, np.random.default_rng(4).random(g_np.n) < 0.3)
    _bottom_up_level_matches(g_np, g_cu, s_np, s_cu, cuda, in_np, in_cu, again, 3)


def _bottom_up_level_matches(g_np, g_cu, s_np, s_cu, cuda, in_np, in_cu, gathered, level):
    """One bottom-up level on both backends: the same labels, parents, frontier queue (as a
    set), m_f and frontier bitmap (every word rewritten, those with no candidate left zeroed)."""
    tested_np = HOST.bottom_up(g_np, in_np or g_np, s_np, gathered, level)
    tested = cuda.bottom_up(g_cu, in_cu or g_cu, s_cu, cupy.asarray(gathered), level)
    np.testing.assert_array_equal(cupy.asnumpy(s_cu.labels), s_np.labels)
    np.testing.assert_array_equal(cupy.asnumpy(s_cu.preds), s_np.preds)
    found = np.sort(s_np.vertex_frontier)
    np.testing.assert_array_equal(np.sort(cupy.asnumpy(s_cu.vertex_frontier)), found)
    assert found.shape[0] <= tested <= tested_np
    assert cuda.frontier_edges(g_cu, s_cu) == HOST.frontier_edges(g_np, s_np)
    state = HOST.start(g_np, 0, False, HOST.prepare(g_np))
    state.vertex_frontier = found
    np.testing.assert_array_equal(
        cupy.asnumpy(cuda.frontier_bitmap(g_cu, s_cu)), HOST.frontier_bitmap(g_np, state)
    )


@pytest.mark.parametrize("rank,size", [(0, 1), (1, 2)])
def test_bottom_up_lists_the_found_vertices_of_every_chunk_a_warp_took(monkeypatch, rank, size):
    """A grid of one block (8 warps) over 60,000 vertices: each warp takes several chunks of
    1,024 vertices and lists their found vertices in the queue after its last one, from one
    reservation; two levels in a row, the second over the candidates the first left."""
    monkeypatch.setattr(cuda_bottom_up, "resident_grid", lambda *args, **kwargs: 1)
    case = graphs.random_graph(60000, 180000, 9, False)
    g_np, g_cu, s_np, s_cu, cuda, gathered = _bottom_up_states(case, rank, size, seed=5)
    assert g_np.nlocal > 8 * 3 * 1024  # three chunks or more a warp
    again = _gathered(case, size, np.random.default_rng(6).random(g_np.n) < 0.3)
    for level, frontier in ((2, gathered), (3, again)):
        _bottom_up_level_matches(g_np, g_cu, s_np, s_cu, cuda, None, None, frontier, level)


def test_frontier_edges_after_contract_and_from_scratch():
    case = SEARCH_CASES["mixed-degrees"][0]
    g_np, g_cu, s_np, s_cu, cuda = _states(case, 0, 1, True)
    assert cuda.frontier_edges(g_cu, s_cu) == HOST.frontier_edges(g_np, s_np)  # the source
    for level in range(1, 4):  # contract sums m_f while it labels, once asked
        bins = expand_filter(cuda, g_cu, s_cu, 1)
        cuda.contract(g_cu, s_cu, ONE_RANK.exchange_bins(bins), level)
        bins = HOST.filter_partition(s_np, HOST.expand(g_np, s_np), 1)
        HOST.contract(g_np, s_np, ONE_RANK.exchange_bins(bins), level)
        assert cuda.frontier_edges(g_cu, s_cu) == HOST.frontier_edges(g_np, s_np)


@pytest.mark.parametrize("max_frontier", [2, 10**9])
def test_fused_run_carries_the_unexplored_counts_from_the_source(max_frontier):
    """A fused run from the source, whose out-edges nobody asked for before, takes them from
    its log: n_u and m_u after it are carried, not recounted, and equal the labels'."""
    case = SEARCH_CASES["mixed-degrees"][0]
    g_np, g_cu, _, s_cu, cuda = _states(case, 0, 1, False)
    ran = cuda.run_small_levels(g_cu, s_cu, 0, max_frontier)
    assert ran > 0
    queues = queues_of(s_cu)
    assert queues.unexplored is not None and queues.unexplored[0] == queues.generation
    unlabeled = cupy.asnumpy(s_cu.labels) == UNREACHED
    degrees = np.diff(g_np.row_offsets)
    assert cuda.unexplored(g_cu, s_cu) == (int(unlabeled.sum()), int(degrees[unlabeled].sum()))


@pytest.mark.parametrize("nlocal", [0, 1, 1023, 1024, 1025, 5000])
@pytest.mark.parametrize("blocks", [1, 3])
def test_unlabeled_counted_over_several_trips(nlocal, blocks):
    """``unexplored_kernel`` against numpy: each vertex counted once, however many trips of
    several vertices a thread takes (one block of the default policy's 256 threads takes 1,024
    vertices a trip) and wherever the last trip ends."""
    rng = np.random.default_rng(nlocal + blocks)
    degrees = rng.integers(0, 9, nlocal)
    offsets = np.concatenate([[0], np.cumsum(degrees)]).astype(np.int64)
    levels = rng.integers(0, 7, nlocal)
    labels = np.where(rng.random(nlocal) < 0.4, UNREACHED, levels).astype(np.int32)
    rows = SimpleNamespace(nlocal=nlocal, row_offsets=cupy.asarray(offsets))
    policy = DEFAULT_POLICY  # 256 threads a block
    kernel = cuda_kernels.get_kernel("start", "unexplored_kernel", policy, 32)
    tally = cupy.zeros(2, dtype=np.int64)
    got = cuda_search.count_unlabeled(kernel, policy, blocks, rows, cupy.asarray(labels), tally)
    unlabeled = labels == UNREACHED
    assert got == (int(unlabeled.sum()), int(degrees[unlabeled].sum()))


def _do_search(case, source, backend, alpha, beta, predecessors=True):
    result = graphs.search(
        build(case, cupy),
        source,
        backend,
        ONE_RANK,
        predecessors=predecessors,
        strategy=DO,
        alpha=alpha,
        beta=beta,
    )
    dist = cupy.asnumpy(result.distances).astype(np.int64)
    np.testing.assert_array_equal(dist, graphs.reference_distances(*case, source))
    if predecessors:
        graphs.check_bfs_tree(case, source, dist, cupy.asnumpy(result.predecessors))
    return result


@pytest.mark.parametrize("forcing", sorted(graphs.FORCINGS))
@pytest.mark.parametrize(
    "name", ["random-undirected", "random-directed", "mixed-degrees", "hubs", "components"]
)
def test_direction_optimizing_with_fused_levels(name, forcing):
    """Tight fused limits make the fused kernel and direction-optimizing levels alternate (the
    default policy runs in tests/test_direction_optimizing.py, on every backend)."""
    case, source = SEARCH_CASES[name]
    _do_search(case, source, CudaBackend(TIGHT_LIMITS), *graphs.FORCINGS[forcing])
    _do_search(case, source, CudaBackend(), *graphs.FORCINGS[forcing], predecessors=False)


def test_direction_optimizing_goes_bottom_up_on_a_kronecker_graph():
    import distbfs

    # scale 18: a level of more than fused_max_edges edges leaves the fused path (smaller
    # Kronecker graphs run every level fused, top-down)
    graph = distbfs.Graph.generate("kronecker", scale=18, backend="cuda")
    reference = distbfs.Graph.generate("kronecker", scale=18, backend="numpy")
    for root in (0, 1):
        result = distbfs.bfs(graph, root, predecessors=True, validate=True, strategy=DO)
        assert result.validated
        want = distbfs.bfs(reference, root).distances
        np.testing.assert_array_equal(cupy.asnumpy(result.distances), want)
        if (want != UNREACHED).sum() > 1000:
            assert "bottom_up" in {lv.direction for lv in result.levels}


def test_bottom_up_levels_allocate_nothing_once_warm():
    import gc

    case, source = SEARCH_CASES["random-undirected"]
    graph, backend = build(case, cupy), CudaBackend()
    backend.small_frontier_limit = 0  # two-phase top-down levels, so bottom-up ones follow
    pool = cupy.get_default_memory_pool()
    plan = SearchPlan.build(graph, backend, ONE_RANK, DO, alpha=math.inf, beta=math.inf)
    gc.disable()
    try:
        bfs_levels(plan, source, predecessors=True)
        held = pool.used_bytes()
        for _ in range(3):
            result = bfs_levels(plan, source, predecessors=True)
            assert "bottom_up" in {lv.direction for lv in result.levels}
            del result
        assert pool.used_bytes() == held
    finally:
        gc.enable()


@pytest.mark.parametrize(
    "kind,params",
    [
        ("kronecker", {"scale": 14}),
        ("uniform", {"scale": 13, "edgefactor": 8}),
        ("grid2d", {"shape": (60, 70)}),
        ("grid3d", {"shape": (11, 12, 13)}),
    ],
)
@pytest.mark.parametrize("chunk", [None, 1000])
def test_generated_csr_on_the_device_is_the_host_one(monkeypatch, kind, params, chunk):
    """One rank builds generated graphs streamed (build_graph_streamed), on the device as on
    the host: the same CSR bit for bit, also in spans of 1000 edges (rows split over batches)."""
    import distbfs.graph as graph_module
    from distbfs.generators import generate

    if chunk is not None:
        monkeypatch.setattr(graph_module, "CHUNK", chunk)
    host = generate(kind, ONE_RANK, xp=np, **params)
    device = generate(kind, ONE_RANK, xp=cupy, **params)
    assert device.column_indices.dtype == host.column_indices.dtype
    np.testing.assert_array_equal(cupy.asnumpy(device.row_offsets), host.row_offsets)
    np.testing.assert_array_equal(cupy.asnumpy(device.column_indices), host.column_indices)
    assert device.num_edges == host.num_edges


def test_warm_up_compiles_every_stage_at_both_widths():
    from distbfs.backends.cuda.kernels import STAGES

    modules = CudaBackend().warm_up(threads=3)
    assert [(stage, bits) for stage, bits, _ in modules] == [
        (stage, bits) for stage in STAGES for bits in (32, 64)
    ]
    assert all(seconds >= 0 for _, _, seconds in modules)
