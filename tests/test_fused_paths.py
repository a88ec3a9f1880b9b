"""The level loop's fused small-frontier paths (``distbfs.engine.fused``), on CPU ranks: a
numpy backend that emulates a fused path (``FusedNumpy``: each "fused" run is plain two-phase
levels while the frontier is small) drives the same orchestration as the CUDA backend's
cooperative kernel: the fused spans on one rank and the hand-over to two-phase levels, the
direction heuristic's recount after a span, and small graphs on several ranks, which every rank
searches whole on its copy (``SearchPlan.whole``) and keeps its own vertices' labels.
Distances equal scipy's, trees are valid, and the spans add up to the levels, at any rank count
(tests marked ``mpi``)."""

from __future__ import annotations

import numpy as np
import pytest

from distbfs.backends.base import FUSED_LOG_COLUMNS, SearchState
from distbfs.backends.numpy import NumpyBackend
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import UNLIMITED
from distbfs.engine import GraphResources
from distbfs.graph import DistGraph, build_graph

import graphs

ONE = SingleRankCommunicator()


class FusedNumpy(NumpyBackend):
    """The numpy stages with an emulated fused path: ``run_small_levels`` runs two-phase levels
    on one rank while the frontier holds at most ``max_frontier`` vertices; several ranks copy
    graphs of at most ``replica_limit_bytes`` and search them whole."""

    def __init__(self, small_frontier_limit: int = 64, replica_limit_bytes: int = 1 << 30):
        self.small_frontier_limit = small_frontier_limit
        self.replica_limit_bytes = replica_limit_bytes
        self.runs: list[tuple[int, int]] = []  # (first level, levels) of every fused run
        self.expanded_on: set[int] = set()  # ranks of the graphs expanded in two phases

    def expand(self, graph: DistGraph, state: SearchState, strip: int = 0):
        self.expanded_on.add(graph.size)
        return super().expand(graph, state, strip)

    def run_small_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        *,
        max_levels: int = UNLIMITED,
    ) -> int:
        if graph.size != 1 or not 0 < state.frontier_size <= max_frontier or max_levels < 1:
            return 0
        log = state.scratch.setdefault("fused_log", [])
        ran = 0
        while 0 < state.frontier_size <= max_frontier and ran < max_levels:
            log.append(self._log_row(graph, state))
            bins = self.filter_partition(state, self.expand(graph, state), 1)
            self.contract(graph, state, bins, level + ran + 1)
            ran += 1
        log.append(self._log_row(graph, state))  # the frontier the run stopped before
        self.runs.append((level, ran))
        return ran

    @staticmethod
    def _log_row(graph: DistGraph, state: SearchState) -> list[int]:
        """A row of the fused levels' log (``FUSED_LOG_COLUMNS``) for the current frontier."""
        frontier = state.vertex_frontier
        edges = graph.row_offsets[frontier + 1] - graph.row_offsets[frontier]
        return [state.frontier_size, state.frontier_size, int(edges.sum())]

    def fused_level_log(self, state: SearchState) -> np.ndarray | None:
        log = state.scratch.get("fused_log")
        return np.array(log, dtype=np.int64).reshape(-1, len(FUSED_LOG_COLUMNS)) if log else None


CASES = {
    "path": graphs.path(60),
    "grid": graphs.grid(17, 13),
    "components": graphs.components(),
    "directed_with_sinks": graphs.directed_with_sinks(),
    "random_undirected": graphs.random_graph(2000, 12000, 3, False),
    "random_directed": graphs.random_graph(1500, 9000, 4, True),
}
STRATEGIES = ("hybrid", "contract_expand", "direction_optimizing")


def check(comm, case, source, result):
    """The tree and distances, and a row per level whose counts are the level's: its
    frontier, the vertices it discovered and (top-down) the out-edges it expanded; this rank's
    labels and parents as contiguous arrays (a replica's share is a view until the table)."""
    n = case[2]
    assert result.distances.flags.c_contiguous and result.predecessors.flags.c_contiguous
    distances = graphs.gather_global(comm, result.distances, n)
    preds = graphs.gather_global(comm, result.predecessors, n)
    expected = graphs.check_bfs_tree(case, source, distances, preds)
    graphs.check_level_rows(case, expected, result.levels)
    return expected


def search(comm, case, source, backend, strategy, **options):
    graph = graphs.build(case, comm, backend)
    result = graphs.search(
        graph, source, backend, comm, predecessors=True, strategy=strategy, **options
    )
    return graph, result


@pytest.mark.mpi
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_fused_levels_and_whole_searches(comm, name, strategy):
    """Generous limits: the whole search is one fused run; tight limits: fused runs and
    two-phase levels alternate. On several ranks each rank runs the same search whole on its
    copy of the graph: the same fused runs as one rank, nothing expanded striped, and the level
    table counts the whole graph's levels once."""
    case = CASES[name]
    n = case[2]
    for limit in (10**9, 3):
        for source in sorted({0, n // 2, n - 1}):
            backend = FusedNumpy(small_frontier_limit=limit)
            _, result = search(comm, case, source, backend, strategy)
            check(comm, case, source, result)
            if limit > n:
                assert all(lv.fused for lv in result.levels)
            one = FusedNumpy(small_frontier_limit=limit)
            _, alone = search(ONE, case, source, one, strategy)
            assert backend.runs == one.runs
            assert backend.expanded_on <= {1}
            assert [lv.frontier for lv in result.levels] == [lv.frontier for lv in alone.levels]


@pytest.mark.mpi
@pytest.mark.parametrize("forcing", sorted(graphs.FORCINGS))
def test_direction_optimizing_after_fused_levels(comm, forcing):
    """The heuristic's numbers are recounted after a fused span; later levels still switch
    (the limit stops the fused start early, so bottom-up levels follow) and stay exact."""
    case = CASES["random_undirected"]
    alpha, beta = graphs.FORCINGS[forcing]
    backend = FusedNumpy(small_frontier_limit=40)
    _, result = search(comm, case, 0, backend, "direction_optimizing", alpha=alpha, beta=beta)
    check(comm, case, 0, result)
    directions = {lv.direction for lv in result.levels}
    assert result.levels[0].fused
    if forcing == "stay_bottom_up":
        assert "bottom_up" in directions
    if forcing == "top_down_only":
        assert directions == {"top_down"}


class DecliningFused(FusedNumpy):
    """A fused path that takes every small frontier and then runs no level (as the CUDA kernel
    does when a source's row is too long for it): every level runs in two phases."""

    def run_small_levels(self, *args, **options) -> int:
        self.runs.append((-1, 0))
        return 0


@pytest.mark.mpi
@pytest.mark.parametrize("forcing", sorted(graphs.FORCINGS))
def test_direction_optimizing_when_the_fused_path_declines(comm, forcing):
    """A one-source search does not count its source's edges when the fused path takes level 0
    (``DirectionOptimizing``); when the path then runs no level, the heuristic's numbers are
    recounted after the level: the same directions and rows as with no fused path at all."""
    case = CASES["random_undirected"]
    alpha, beta = graphs.FORCINGS[forcing]
    options = {"strategy": "direction_optimizing", "alpha": alpha, "beta": beta}
    declining = DecliningFused(small_frontier_limit=10**9)
    _, result = search(comm, case, 0, declining, **options)
    _, plain = search(comm, case, 0, NumpyBackend(), **options)
    check(comm, case, 0, result)
    assert declining.runs and not any(lv.fused for lv in result.levels)
    assert [lv.direction for lv in result.levels] == [lv.direction for lv in plain.levels]
    assert [lv.edges_inspected for lv in result.levels] == [
        lv.edges_inspected for lv in plain.levels
    ]


@pytest.mark.mpi
def test_no_replica_above_the_limit(comm):
    """A graph larger than replica_limit_bytes is not copied: several ranks run every level
    striped; one rank still fuses."""
    case = CASES["random_undirected"]
    src, dst, n, directed = case
    graph = build_graph(comm, *graphs.share(src, dst, comm.rank, comm.size), n, directed=directed)
    small = FusedNumpy(replica_limit_bytes=graph.nbytes())  # a rank's share, not the whole
    result = graphs.search(graph, 0, small, comm, predecessors=True, strategy="hybrid")
    check(comm, case, 0, result)
    if comm.size > 1:
        assert GraphResources(graph, small, comm).replica() is None
        assert not small.runs and not any(lv.fused for lv in result.levels)
    else:
        assert small.runs


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["random_directed", "components"])
def test_replica_is_the_whole_graph_built_once(comm, name):
    """On several ranks every rank's copy is the one-rank CSR of the whole graph, built once;
    on one rank there is nothing to copy."""
    src, dst, n, directed = CASES[name]
    graph = build_graph(comm, *graphs.share(src, dst, comm.rank, comm.size), n, directed=directed)
    resources = GraphResources(graph, FusedNumpy(), comm)
    replica = resources.replica()
    if comm.size == 1:
        assert replica is None
        return
    whole = build_graph(ONE, src, dst, n, directed=directed)
    copy = replica.graph
    assert (copy.rank, copy.size, copy.n, copy.directed) == (0, 1, n, directed)
    np.testing.assert_array_equal(copy.row_offsets, whole.row_offsets)
    np.testing.assert_array_equal(copy.column_indices, whole.column_indices)
    np.testing.assert_array_equal(replica.resources.degrees, whole.local_degrees())
    assert resources.replica() is replica  # built once
    assert GraphResources(graph, NumpyBackend(), comm).replica() is None  # no fused path
