"""The level loop on one rank, on every backend (numpy; cuda where a GPU is present): distances
and trees equal scipy's on structured and random graphs (hypothesis), level statistics; then the
numpy stages' contracts one by one."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from distbfs.backends.base import EdgeFrontier
from distbfs.backends.cuda.launch_policy import LaunchPolicy
from distbfs.backends.numpy import NumpyBackend
from distbfs.comm.base import Bins
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import UNREACHED
from distbfs.engine import STRATEGIES
from distbfs.graph import build_graph
from distbfs.partition import bin_by_owner
from distbfs.streamed import build_graph_streamed

import graphs

ONE = SingleRankCommunicator()
NUMPY = NumpyBackend()


def build(src, dst, n, directed):
    return build_graph(ONE, src, dst, n, directed=directed)


def start(graph, source=0, predecessors=True):
    return NUMPY.start(graph, source, predecessors, NUMPY.prepare(graph))


STRUCTURED = {
    "path": graphs.path(50),
    "star": graphs.star(3000),
    "grid": graphs.grid(17, 23),
    "components": graphs.components(),
    "loops_and_duplicates": graphs.loops_and_duplicates(),
    "directed_with_sinks": graphs.directed_with_sinks(),
    "random_directed": graphs.random_graph(500, 1500, 1, True),
}


@pytest.mark.parametrize("name", sorted(STRUCTURED))
@pytest.mark.parametrize("predecessors", [False, True])
def test_structured_graphs_match_scipy(backend, name, predecessors):
    case = STRUCTURED[name]
    graph = graphs.build(case, ONE, backend)
    n = case[2]
    for source in {0, n // 2, n - 1}:
        result = graphs.search(graph, source, backend, ONE, predecessors=predecessors)
        assert result.distances.dtype == np.int32
        if predecessors:
            assert result.predecessors.dtype == np.int64
        else:
            assert result.predecessors is None
        graphs.check_bfs_tree(case, source, result.distances, result.predecessors)


@pytest.mark.parametrize("name", sorted(STRUCTURED))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_matches_scipy(backend, name, strategy):
    """Each strategy gives scipy's distances and a valid tree and a row per level with its
    counts (fused levels too, on CUDA); two_phase runs every level in two phases."""
    case = STRUCTURED[name]
    graph = graphs.build(case, ONE, backend)
    for source in sorted({0, case[2] - 1}):
        result = graphs.search(graph, source, backend, ONE, predecessors=True, strategy=strategy)
        expected = graphs.check_bfs_tree(case, source, result.distances, result.predecessors)
        graphs.check_level_rows(case, expected, result.levels)
        if strategy == "two_phase":
            assert not any(row.fused for row in result.levels)


def test_isolated_source_is_a_search_of_one_vertex(backend):
    graph = graphs.build(graphs.components(), ONE, backend)
    result = graphs.search(graph, 12, backend, ONE, predecessors=True)
    distances = graphs.host(result.distances)
    assert distances[12] == 0 and graphs.host(result.predecessors)[12] == 12
    assert np.count_nonzero(distances != UNREACHED) == 1
    assert sum(lv.span for lv in result.levels) == 1
    assert result.levels[0].edges_expanded == 0


def test_level_statistics_add_up():
    """Two-phase levels on numpy: every level's counters (fused levels keep none)."""
    src, dst, n, directed = graphs.grid(30, 30)
    graph = build(src, dst, n, directed)
    result = graphs.search(graph, 0, NUMPY, ONE, timer=NUMPY.make_timer(True))
    levels = result.levels
    assert len(levels) == 30 + 30 - 1  # 58 levels of discovery, then one empty level
    assert [lv.frontier for lv in levels[:3]] == [1, 2, 3]
    assert sum(lv.discovered for lv in levels) == n - 1
    assert sum(lv.edges_expanded for lv in levels) == graph.num_edges
    assert all(lv.items_sent_remote == 0 for lv in levels)
    assert set(levels[0].seconds) == {
        "expand",
        "filter_partition",
        "exchange",
        "contract",
        "termination",
    }


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 60),
    edges=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=200),
    directed=st.booleans(),
    data=st.data(),
)
def test_random_graphs_match_scipy(backend, n, edges, directed, data):
    pairs = np.array([(u % n, v % n) for u, v in edges], dtype=np.int64).reshape(-1, 2)
    case = (pairs[:, 0], pairs[:, 1], n, directed)
    source = data.draw(st.integers(0, n - 1))
    graph = graphs.build(case, ONE, backend)
    result = graphs.search(graph, source, backend, ONE, predecessors=True)
    graphs.check_bfs_tree(case, source, result.distances, result.predecessors)


# --- the stages one by one ------------------------------------------------------------------


def test_expand_gathers_every_neighbour_with_its_parent():
    src, dst, n, _ = graphs.random_graph(200, 800, 3, True)
    graph = build(src, dst, n, True)
    state = start(graph)
    state.vertex_frontier = np.array([3, 7, 7, 150, 199], dtype=np.int64)
    edges = NUMPY.expand(graph, state)
    expected_v, expected_p = [], []
    for u in state.vertex_frontier:
        row = graph.column_indices[graph.row_offsets[u] : graph.row_offsets[u + 1]]
        expected_v += list(row)
        expected_p += [u] * len(row)
    np.testing.assert_array_equal(edges.vertices, expected_v)
    np.testing.assert_array_equal(edges.parents, expected_p)


@pytest.mark.parametrize("nbins", [1, 2, 3, 4])
def test_filter_partition_culls_and_bins_by_owner(nbins):
    src, dst, n, _ = graphs.random_graph(100, 10, 5, True)
    graph = build(src, dst, n, True)
    state = start(graph)
    visited_before = np.array([5, 6, 7])
    state.visited_mask[visited_before] = True
    rng = np.random.default_rng(7)
    vertices = rng.integers(0, n, 500).astype(np.int32)
    bins = NUMPY.filter_partition(state, EdgeFrontier(vertices, vertices + 1000), nbins)
    out = bins.vertices
    assert len(np.unique(out)) == len(out), "duplicates survived"
    expected = set(vertices.tolist()) - {0, 5, 6, 7}  # the source is marked at start
    assert set(out.tolist()) == expected
    np.testing.assert_array_equal(bins.payloads[0], out + 1000)  # pairs stay together
    for r in range(nbins):
        segment = out[bins.offsets[r] : bins.offsets[r + 1]]
        assert np.all(segment % nbins == r)
    assert state.visited_mask[out].all()
    # a second pass over the same items finds them all visited
    again = NUMPY.filter_partition(state, EdgeFrontier(vertices, vertices), nbins)
    assert again.offsets[-1] == 0


@pytest.mark.parametrize("size", [1, 2, 3, 4, 7])
@pytest.mark.parametrize("count", [0, 1, 1000])
def test_bin_by_owner_sorts_stably_by_owner(xp, size, count):
    """Each bin holds its owner's vertices in their order of arrival, payloads alongside, and
    its bounds are the owners' counts (ranks with no vertex included)."""
    rng = np.random.default_rng(count + size)
    vertices = rng.integers(0, 50, count).astype(np.int32)
    payload = np.arange(count, dtype=np.int64)
    offsets, out, (moved,) = bin_by_owner(xp, xp.asarray(vertices), size, xp.asarray(payload))
    out, moved = graphs.host(out), graphs.host(moved)
    assert isinstance(offsets, np.ndarray) and offsets.dtype == np.int64
    want = np.concatenate([[0], np.cumsum(np.bincount(vertices % size, minlength=size))])
    np.testing.assert_array_equal(offsets, want)
    for r in range(size):
        arrived = np.flatnonzero(vertices % size == r)  # positions, in order
        np.testing.assert_array_equal(moved[offsets[r] : offsets[r + 1]], arrived)
        np.testing.assert_array_equal(out[offsets[r] : offsets[r + 1]], vertices[arrived])


def test_contract_labels_unlabeled_vertices():
    src, dst, n, _ = graphs.path(10)
    graph = build(src, dst, n, False)
    state = start(graph)
    received = Bins(np.array([0, 3]), np.array([0, 1, 2]), (np.array([9, 0, 1]),))
    NUMPY.contract(graph, state, received, 1)
    assert state.frontier_size == 2
    assert sorted(state.vertex_frontier.tolist()) == [1, 2]
    assert state.labels.tolist()[:4] == [0, 1, 1, UNREACHED]
    assert state.preds.tolist()[:3] == [0, 0, 1]


def test_contract_culls_duplicates_sent_by_several_ranks():
    from distbfs.graph import DistGraph

    # rank 0 of 2 owns the even vertices of a 10-vertex graph (its rows are irrelevant here)
    graph = DistGraph(10, 0, False, 0, 2, np.zeros(6, np.int64), np.zeros(0, np.int32))
    state = start(graph)
    received = Bins(np.array([0, 2, 5]), np.array([2, 4, 4, 2, 6]), (np.array([1, 3, 5, 3, 7]),))
    NUMPY.contract(graph, state, received, 1)
    assert sorted(state.vertex_frontier.tolist()) == [1, 2, 3]  # local rows of 2, 4, 6
    assert state.labels.tolist() == [0, 1, 1, 1, UNREACHED]
    assert state.preds[1] in (1, 3) and state.preds[2] in (3, 5) and state.preds[3] == 7
    assert state.visited_mask[[2, 4, 6]].all()


@pytest.mark.parametrize("chunk", [1, 5, 10**9])
@pytest.mark.parametrize("directed", [False, True])
def test_streamed_construction_builds_the_same_csr(monkeypatch, directed, chunk):
    """build_graph_streamed (one rank, the edges replayed in pieces): build_graph's CSR, with
    self-loops, duplicates, isolated vertices (the last 20) and a hub, in spans of ``chunk``."""
    import distbfs.graph as graph_module

    src, dst, n, _ = graphs.random_graph(300, 2500, 13, directed)
    src, dst = src % (n - 20), dst % (n - 20)
    src[::50] = dst[::50]  # self-loops
    src[::7] = 3  # a hub, longer than a span when chunk is small
    reference = build(src, dst, n, directed)
    monkeypatch.setattr(graph_module, "CHUNK", chunk)
    pieces = [(src[i : i + 97], dst[i : i + 97]) for i in range(0, len(src), 97)]
    passes = []

    def chunks(first):
        passes.append(first)
        return iter(pieces)

    streamed = build_graph_streamed(chunks, n, directed=directed)
    assert passes == [True, False]
    np.testing.assert_array_equal(streamed.row_offsets, reference.row_offsets)
    np.testing.assert_array_equal(streamed.column_indices, reference.column_indices)
    assert streamed.column_indices.dtype == reference.column_indices.dtype
    assert (streamed.num_edges, streamed.directed) == (reference.num_edges, directed)
    empty = build_graph_streamed(lambda first: iter([]), 4, directed=directed)
    assert empty.row_offsets.tolist() == [0] * 5 and empty.num_edges == 0


@pytest.mark.parametrize("repeats", [1, 4])
def test_a_streamed_build_keeps_its_arrays_unless_duplicates_waste_them(repeats):
    """The graph keeps the front of the arrays it was built in (its peak about its CSR's bytes)
    while the duplicates dropped leave at most ``DUPLICATE_SHARE`` of them unused; every edge
    given four times wastes three quarters, and the kept edges are copied out."""
    import distbfs.streamed as streamed

    src, dst, n, _ = graphs.random_graph(400, 3000, 7, True)
    edges = sorted(set(zip(src.tolist(), dst.tolist(), strict=True)) - {(v, v) for v in range(n)})
    src, dst = (np.array(side * repeats, dtype=np.int64) for side in zip(*edges, strict=True))
    weights = (src % 9 + 1).astype(np.float32)

    def chunks(first):
        return iter([(src, dst, weights)])

    built = build_graph_streamed(chunks, n, directed=True, weights=np.float32)
    reference = build(src, dst, n, True)
    np.testing.assert_array_equal(built.column_indices, reference.column_indices)
    np.testing.assert_array_equal(built.weights, (src[: len(edges)] % 9 + 1).astype(np.float32))
    wasted = 1 - len(edges) / len(src)
    assert (wasted > streamed.DUPLICATE_SHARE) == (repeats == 4)
    for array in (built.column_indices, built.weights):
        assert (array.base is None) == (repeats == 4)


@pytest.mark.parametrize("directed", [False, True])
def test_construction_in_small_chunks_builds_the_same_csr(monkeypatch, directed):
    import distbfs.graph as graph_module

    src, dst, n, _ = graphs.random_graph(300, 2000, 11, directed)
    src[::50] = dst[::50]  # self-loops, some at chunk borders
    reference = build(src, dst, n, directed)
    monkeypatch.setattr(graph_module, "CHUNK", 7)
    chunked = build(src, dst, n, directed)
    np.testing.assert_array_equal(chunked.row_offsets, reference.row_offsets)
    np.testing.assert_array_equal(chunked.column_indices, reference.column_indices)
    assert chunked.num_edges == reference.num_edges


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"block_threads": 48}, r"block_threads=48: need a multiple of 32"),
        ({"history_hash_slots": 48}, r"history_hash_slots=48: need a power of two"),
        ({"items_per_thread": 0}, r"items_per_thread=0: need at least 1"),
        ({"block_threads": 1024, "items_per_thread": 64}, r"65536 items a tile.*at most 65535"),
        ({"fused_threads": 1024, "fused_blocks_per_sm": 3}, r"3072 threads"),
        ({"fused_pair_degree": -1}, r"fused_pair_degree=-1: need at least 0"),
        ({"fused_prefetch_edges": -1}, r"fused_prefetch_edges=-1: need at least 0"),
    ],
)
def test_launch_policy_refuses_what_the_kernels_cannot_run(fields, message):
    """The CUDA launch policy (importable without CuPy) checks its numbers when made."""
    with pytest.raises(ValueError, match=message):
        LaunchPolicy(**fields)
    assert LaunchPolicy(block_threads=1024, items_per_thread=63).tile_items == 64512
    # level pairs: at most heavy_degree (no list of a paired graph is heavy), 0 for none
    assert LaunchPolicy(fused_pair_degree=6, heavy_degree=4).pair_degree == 4
    assert LaunchPolicy(fused_pair_degree=0).pair_degree == 0
    assert "-DDISTBFS_FUSED_PAIR_DEGREE=1" in LaunchPolicy(fused_pair_degree=0).defines()
