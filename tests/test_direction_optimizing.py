"""Direction-optimizing BFS (Beamer et al. 2012): bottom-up levels give the distances of the other
strategies and of scipy, valid BFS trees, and switch directions exactly as the heuristic says
(recomputed here from reference distances), also when alpha and beta force the switches; the
numpy bottom-up stage, the frontier bitmap layout and the reverse CSR of directed graphs; and the
same at 1-4 MPI ranks (tests marked ``mpi``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from distbfs.backends.base import frontier_bitmap_bytes
from distbfs.backends.numpy import NumpyBackend
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import UNREACHED
from distbfs.engine import (
    BOTTOM_UP,
    STRATEGIES,
    TOP_DOWN,
    Direction,
    GraphResources,
    default_strategy,
    supports_bottom_up,
)
from distbfs.engine.plan import SearchPlan
from distbfs.graph import build_graph

import graphs

ONE = SingleRankCommunicator()
NUMPY = NumpyBackend()
DO = "direction_optimizing"
INF = math.inf


def directions(result) -> list[str]:
    """The direction of every level (a fused row: its span's levels, all top-down)."""
    return [lv.direction for lv in result.levels for _ in range(lv.span)]


def run_and_check(comm, case, source, alpha, beta, backend=NUMPY):
    """Search with direction_optimizing on ``comm``; check distances, tree, directions. The
    fused path is off, so every level has its counts and follows the rule level by level."""
    backend.small_frontier_limit = 0
    graph = graphs.build(case, comm, backend)
    result = graphs.search(
        graph, source, backend, comm, predecessors=True, strategy=DO, alpha=alpha, beta=beta
    )
    n = case[2]
    distances = graphs.gather_global(comm, result.distances, n)
    preds = graphs.gather_global(comm, result.predecessors, n)
    graphs.check_bfs_tree(case, source, distances, preds)
    inspected = [lv.edges_inspected for lv in result.levels]
    assert directions(result) == graphs.expected_directions(*case, source, alpha, beta, inspected)
    return graph, result


STRUCTURED = {
    "path": graphs.path(50),
    "star": graphs.star(300),
    "grid": graphs.grid(17, 23),
    "components": graphs.components(),
    "loops_and_duplicates": graphs.loops_and_duplicates(),
    "directed_with_sinks": graphs.directed_with_sinks(),
    "random_undirected": graphs.random_graph(400, 3000, 11, False),
    "random_directed": graphs.random_graph(500, 4000, 1, True),
    "losing_bottom_up": graphs.losing_bottom_up(),
}


# --- whole searches, one rank ------------------------------------------------------------------


@pytest.mark.parametrize("forcing", sorted(graphs.FORCINGS))
@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_structured_graphs(backend, name, forcing):
    n = STRUCTURED[name][2]
    alpha, beta = graphs.FORCINGS[forcing]
    for source in sorted({0, n // 2, n - 1}):
        graph, result = run_and_check(ONE, STRUCTURED[name], source, alpha, beta, backend)
        two_phase = graphs.search(graph, source, backend, ONE, strategy="two_phase")
        np.testing.assert_array_equal(
            graphs.host(result.distances), graphs.host(two_phase.distances)
        )
        assert [lv.frontier for lv in result.levels] == [lv.frontier for lv in two_phase.levels]


@pytest.mark.parametrize("forcing", sorted(graphs.FORCINGS))
@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_with_fused_levels(backend, name, forcing):
    """The backend's default path: small top-down frontiers go to its fused path (CUDA), the
    heuristic's counts recounted after it: distances and trees as scipy's."""
    case = STRUCTURED[name]
    graph = graphs.build(case, ONE, backend)
    alpha, beta = graphs.FORCINGS[forcing]
    for source in sorted({0, case[2] - 1}):
        result = graphs.search(
            graph, source, backend, ONE, predecessors=True, strategy=DO, alpha=alpha, beta=beta
        )
        graphs.check_bfs_tree(case, source, result.distances, result.predecessors)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    n=st.integers(1, 60),
    edges=st.lists(st.tuples(st.integers(0, 59), st.integers(0, 59)), max_size=300),
    directed=st.booleans(),
    alpha=st.sampled_from([0.0, 0.3, 2.0, 15.0, 1e6, INF]),
    beta=st.sampled_from([1e-9, 0.5, 4.0, 18.0, INF]),
    data=st.data(),
)
def test_random_graphs(backend, n, edges, directed, alpha, beta, data):
    pairs = np.array([(u % n, v % n) for u, v in edges], dtype=np.int64).reshape(-1, 2)
    case = (pairs[:, 0], pairs[:, 1], n, directed)
    source = data.draw(st.integers(0, n - 1))
    run_and_check(ONE, case, source, alpha, beta, backend)


def test_forced_switches_really_switch(backend):
    """On one graph each forcing gives the direction pattern it promises."""
    case = graphs.random_graph(2000, 16000, 5, False)  # low diameter, frontier grows then shrinks
    runs = {k: run_and_check(ONE, case, 0, *ab, backend)[1] for k, ab in graphs.FORCINGS.items()}
    ways = {k: directions(r) for k, r in runs.items()}
    sizes = [lv.frontier for lv in runs["default"].levels]
    assert ways["top_down_only"] == [TOP_DOWN] * len(sizes)
    first = ways["stay_bottom_up"].index(BOTTOM_UP)
    assert ways["stay_bottom_up"] == [TOP_DOWN] * first + [BOTTOM_UP] * (len(sizes) - first)
    assert first <= 2  # as early as the frontier's edges outnumber the unlabeled vertices
    shrink = next(k for k in range(1, len(sizes)) if sizes[k] < sizes[k - 1])
    assert ways["oscillate"][first:shrink] == [BOTTOM_UP] * (shrink - first)
    assert ways["oscillate"][shrink:] == [TOP_DOWN] * (len(sizes) - shrink)
    assert BOTTOM_UP in ways["default"] and ways["default"][-1] == TOP_DOWN
    for result in runs.values():
        assert sum(lv.discovered for lv in result.levels) == 1999


@pytest.mark.parametrize("forcing", ["default", "stay_bottom_up"])
def test_a_losing_bottom_up_level_hands_back_to_top_down(backend, forcing):
    case = graphs.losing_bottom_up()
    graph, result = run_and_check(ONE, case, 0, *graphs.FORCINGS[forcing], backend)
    assert directions(result) == [TOP_DOWN, BOTTOM_UP, TOP_DOWN]
    top_down = graphs.search(graph, 0, backend, ONE, strategy="two_phase").levels
    assert result.levels[1].edges_inspected > 2 * top_down[1].edges_expanded  # level 1 lost
    assert result.levels[2].frontier >= 2 * result.levels[1].frontier  # level 2 still doubles


def test_high_diameter_graphs_stay_top_down(backend):
    """The heuristic keeps grids (and paths) top-down under the default thresholds."""
    for case in (graphs.grid(60, 60), graphs.path(500)):
        _, result = run_and_check(ONE, case, 0, 15.0, 18.0, backend)
        assert set(directions(result)) == {TOP_DOWN}


def test_level_statistics(backend):
    case = graphs.random_graph(3000, 30000, 2, False)
    src, dst, n, directed = case
    backend.small_frontier_limit = 0  # every level in two phases or bottom-up, with its counts
    graph = graphs.build(case, ONE, backend)
    timer = backend.make_timer(True)
    result = graphs.search(graph, 0, backend, ONE, strategy=DO, timer=timer)
    levels = result.levels
    reached = np.count_nonzero(graphs.reference_distances(src, dst, n, directed, 0) != UNREACHED)
    assert sum(lv.discovered for lv in levels) == reached - 1
    assert {lv.direction for lv in levels} == {d.value for d in Direction}
    top_down_phases = {"expand", "filter_partition", "contract"}
    bottom_up_phases = {"bitmap", "bottom_up"}
    for lv in levels:
        ran = {name for name, seconds in lv.seconds.items() if seconds > 0}
        if backend.name == "numpy":  # host phases always take time (events may time 0)
            assert "termination" in ran and "exchange" in ran
        if lv.direction == TOP_DOWN:
            assert lv.edges_inspected == lv.edges_expanded
            assert top_down_phases <= ran and not bottom_up_phases & ran
        else:
            assert lv.edges_expanded == lv.items_sent == lv.items_received == 0
            assert lv.edges_inspected >= lv.discovered
            assert bottom_up_phases <= ran and not top_down_phases & ran
    # bottom-up inspects far fewer edges than top-down expands on this low-diameter graph
    total = sum(lv.edges_inspected for lv in levels)
    two_phase = graphs.search(graph, 0, backend, ONE, strategy="two_phase").levels
    assert total < 0.5 * sum(lv.edges_expanded for lv in two_phase)


def test_edges_inspected_counts_the_slots_tested():
    """A path run bottom-up level after level from vertex 0 (the stages called directly: the
    heuristic would keep a path top-down): at level k the candidates are k+1..n-1; round 0 tests
    each one's first neighbour (only k+1 hits), round 1 the second neighbour of those that have
    one (k+2..n-2), so the level tests (n-1-k) + max(n-3-k, 0) slots."""
    n = 12
    src, dst, _, _ = graphs.path(n)
    graph = build_graph(ONE, src, dst, n, directed=False)
    state = NUMPY.start(graph, 0, True, NUMPY.prepare(graph))
    for k in range(n):
        frontier = ONE.allgather_equal(NUMPY.frontier_bitmap(graph, state))
        inspected = NUMPY.bottom_up(graph, graph, state, frontier, k + 1)
        assert inspected == (n - 1 - k) + max(n - 3 - k, 0), k
        assert state.vertex_frontier.tolist() == ([k + 1] if k + 1 < n else [])
    assert state.labels.tolist() == list(range(n))
    assert state.preds.tolist() == [0, *range(n - 1)]


def test_default_strategy_and_backends_without_bottom_up():
    assert DO in STRATEGIES
    assert supports_bottom_up(NUMPY) and default_strategy(NUMPY) == DO

    class TopDownOnly:
        """The numpy backend without its bottom-up methods (a backend that has none)."""

        def __init__(self):
            self._inner = NumpyBackend()

        def __getattr__(self, name):
            if name in ("frontier_edges", "frontier_bitmap", "bottom_up"):
                raise AttributeError(name)
            return getattr(self._inner, name)

    backend = TopDownOnly()
    assert not supports_bottom_up(backend) and default_strategy(backend) == "hybrid"
    src, dst, n, directed = graphs.random_graph(2000, 16000, 5, False)
    graph = build_graph(ONE, src, dst, n, directed=directed)
    with pytest.raises(ValueError, match="no bottom-up stages"):
        graphs.search(graph, 0, backend, ONE, strategy=DO, alpha=INF, beta=INF)
    result = graphs.search(graph, 0, backend, ONE)  # its default: hybrid, all levels top-down
    assert {lv.direction for lv in result.levels} == {TOP_DOWN}
    np.testing.assert_array_equal(
        result.distances, graphs.reference_distances(src, dst, n, directed, 0)
    )
    default = graphs.search(graph, 0, NUMPY, ONE)  # the numpy default runs bottom-up levels
    assert BOTTOM_UP in {lv.direction for lv in default.levels}


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"strategy": "sideways"}, r"^strategy: unknown strategy 'sideways'"),
        ({"alpha": -1.0}, r"^alpha: expected a number >= 0, got -1.0"),
        ({"alpha": float("nan")}, r"^alpha: expected a number >= 0, got nan"),
        ({"beta": 0.0}, r"^beta: expected a number > 0, got 0.0"),
        ({"beta": "18"}, r"^beta: expected a number > 0, got '18'"),
    ],
)
def test_bad_options_are_refused(options, message):
    """The plan checks the strategy and its thresholds once, when it is made."""
    graph = build_graph(ONE, *graphs.path(5)[:2], 5, directed=False)
    with pytest.raises(ValueError, match=message):
        SearchPlan.build(graph, NUMPY, ONE, **options)


# --- the pieces ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "size", "expected"),
    [(1, 1, 8), (64, 1, 8), (65, 1, 16), (130, 2, 16), (128, 2, 8), (5, 8, 8), (1025, 2, 72)],
)
def test_bitmap_bytes_are_whole_words_for_the_largest_rank(n, size, expected):
    assert frontier_bitmap_bytes(n, size) == expected
    assert frontier_bitmap_bytes(n, size) * 8 >= -(-n // size)


def test_frontier_bitmap_layout():
    src, dst, n, _ = graphs.random_graph(200, 600, 3, False)
    graph = build_graph(ONE, src, dst, n, directed=False)
    state = NUMPY.start(graph, 0, False, NUMPY.prepare(graph))
    state.vertex_frontier = np.array([0, 3, 8, 63, 64, 199], dtype=np.int64)
    bitmap = NUMPY.frontier_bitmap(graph, state)
    assert bitmap.dtype == np.uint8 and bitmap.shape == (frontier_bitmap_bytes(n, 1),)
    assert bitmap[0] == 0b0000_1001 and bitmap[1] == 0b0000_0001  # bits 0, 3 and 8
    words = bitmap.view("<u8")  # the same bits as little-endian 64-bit words
    assert int(words[0]) == (1 << 0) | (1 << 3) | (1 << 8) | (1 << 63) and int(words[1]) == 1
    set_bits = np.flatnonzero(np.unpackbits(bitmap, bitorder="little"))
    np.testing.assert_array_equal(set_bits, state.vertex_frontier)
    assert NUMPY.frontier_edges(graph, state) == int(
        sum(graph.row_offsets[v + 1] - graph.row_offsets[v] for v in state.vertex_frontier)
    )


def test_bottom_up_stage_takes_the_first_frontier_neighbour_as_parent():
    # vertex 0 -> (1, 4, 6, 9); 2 -> (4, 6); 3 -> (5); 7 -> (0); in-neighbours by symmetry
    src = np.array([0, 0, 0, 0, 2, 2, 3, 7], np.int64)
    dst = np.array([1, 4, 6, 9, 4, 6, 5, 0], np.int64)
    n = 10
    graph = build_graph(ONE, src, dst, n, directed=False)
    state = NUMPY.start(graph, 4, True, NUMPY.prepare(graph))
    state.labels[[6, 9]] = 1  # pretend 4 (level 0) and 6, 9 (level 1) are labeled
    state.preds[[6, 9]] = 0
    state.vertex_frontier = np.array([6, 9], dtype=np.int64)
    frontier = ONE.allgather_equal(NUMPY.frontier_bitmap(graph, state))
    assert frontier.shape == (1, frontier_bitmap_bytes(n, 1))
    inspected = NUMPY.bottom_up(graph, graph, state, frontier, 2)
    # candidates: unlabeled with edges: 0 (1,4,6,7,9), 1 (0), 2 (4,6), 3 (5), 5 (3), 7 (0)
    assert sorted(state.vertex_frontier.tolist()) == [0, 2]
    assert state.frontier_size == 2
    assert state.labels[0] == 2 and state.labels[2] == 2
    assert state.preds[0] == 6  # 1 and 4 are not in the frontier; 6 is the first that is
    assert state.preds[2] == 6
    assert state.labels[[1, 3, 5, 7]].tolist() == [UNREACHED] * 4
    assert state.visited_mask[[0, 2]].all()
    # slots: round 0: 0:1, 1:0, 2:4, 3:5, 5:3, 7:0 (6); round 1: 0:(4,6), 2:(6) (3 slots)
    assert inspected == 9
    kept_level, kept = state.scratch["bottom_up_candidates"]
    assert kept_level == 2 and sorted(kept.tolist()) == [1, 3, 5, 7]


def test_in_neighbours_is_the_reverse_csr_built_once():
    src, dst, n, _ = graphs.random_graph(300, 2000, 8, True)
    graph = build_graph(ONE, src, dst, n, directed=True)
    resources = GraphResources(graph, NUMPY, ONE)
    reverse = resources.in_neighbours()
    assert resources.in_neighbours() is reverse  # kept
    tails, heads = graphs.unique_edges(src, dst, n, True)
    expected = build_graph(ONE, heads, tails, n, directed=True)
    np.testing.assert_array_equal(reverse.row_offsets, expected.row_offsets)
    np.testing.assert_array_equal(reverse.column_indices, expected.column_indices)
    undirected = build_graph(ONE, src, dst, n, directed=False)
    assert GraphResources(undirected, NUMPY, ONE).in_neighbours() is undirected
    plans = [SearchPlan(resources, DO, alpha=a) for a in (15.0, 2.0)]  # one reverse CSR
    assert all(plan.in_graph is reverse for plan in plans)


def test_single_rank_allgather_equal():
    out = ONE.allgather_equal(np.arange(5, dtype=np.uint8))
    assert out.shape == (1, 5) and out[0].tolist() == [0, 1, 2, 3, 4]


# --- at any rank count (mpiexec -n 1..4 python -m pytest --with-mpi -m mpi) -------------------

MPI_CASES = {
    "path": graphs.path(40),
    "star": graphs.star(500),
    "grid": graphs.grid(13, 9),
    "components": graphs.components(),
    "directed_with_sinks": graphs.directed_with_sinks(),
    "fewer_vertices_than_ranks": (np.array([0], np.int64), np.array([1], np.int64), 2, False),
    "one_vertex": (np.zeros(0, np.int64), np.zeros(0, np.int64), 1, False),
    "random_undirected": graphs.random_graph(3000, 24000, 2, False),
    "random_directed": graphs.random_graph(3000, 18000, 4, True),
    "losing_bottom_up": graphs.losing_bottom_up(),
}


@pytest.mark.mpi
@pytest.mark.parametrize("forcing", sorted(graphs.FORCINGS))
@pytest.mark.parametrize("name", sorted(MPI_CASES))
def test_any_rank_count(backend, backend_comm, name, forcing):
    case, comm = MPI_CASES[name], backend_comm
    n = case[2]
    for source in sorted({0, n // 3, n - 1}):
        _, result = run_and_check(comm, case, source, *graphs.FORCINGS[forcing], backend)
        rows = [(lv.direction, lv.frontier, lv.edges_inspected) for lv in result.levels]
        assert comm.allgather_object(rows).count(rows) == comm.size  # the same on every rank
        for lv in result.levels:
            if lv.direction == BOTTOM_UP:
                assert lv.items_sent == lv.items_sent_remote == lv.edges_expanded == 0


@pytest.mark.mpi
def test_bottom_up_counters_do_not_depend_on_the_rank_count(comm):
    """Slots tested are a property of the graph and the frontier, not of the striping."""
    src, dst, n, directed = graphs.random_graph(2000, 20000, 6, True)
    graph = build_graph(comm, *graphs.share(src, dst, comm.rank, comm.size), n, directed=directed)
    result = graphs.search(graph, 1, NUMPY, comm, strategy=DO)
    one = build_graph(ONE, src, dst, n, directed=directed)
    alone = graphs.search(one, 1, NUMPY, ONE, strategy=DO)
    assert BOTTOM_UP in [lv.direction for lv in result.levels]
    mine = [(lv.direction, lv.frontier, lv.discovered) for lv in result.levels]
    assert mine == [(lv.direction, lv.frontier, lv.discovered) for lv in alone.levels]
    for ours, theirs in zip(result.levels, alone.levels, strict=True):
        if ours.direction == BOTTOM_UP:
            assert ours.edges_inspected == theirs.edges_inspected


@pytest.mark.mpi
def test_allgather_equal_stacks_rows_by_rank(comm):
    mine = np.full(3, comm.rank, dtype=np.uint8)
    out = comm.allgather_equal(mine)
    assert out.shape == (comm.size, 3)
    np.testing.assert_array_equal(out, np.repeat(np.arange(comm.size), 3).reshape(-1, 3))


@pytest.mark.mpi
def test_bottom_up_frontiers_enter_every_ranks_visited_mask(comm):
    """The gathered bitmap tells each rank what the others labeled, so later top-down filters
    drop those vertices before sending them."""
    src, dst, n, directed = MPI_CASES["random_undirected"]
    graph = build_graph(comm, *graphs.share(src, dst, comm.rank, comm.size), n, directed=directed)
    result = graphs.search(graph, 0, NUMPY, comm, strategy=DO, alpha=INF, beta=INF)
    distances = graphs.reference_distances(src, dst, n, directed, 0)
    gathered = [lv.level for lv in result.levels if lv.direction == BOTTOM_UP]
    assert gathered
    assert result.state.visited_mask[np.isin(distances, gathered)].all()
