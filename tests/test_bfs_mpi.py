"""The level loop at any rank count (run under mpiexec -n 1..4 with --with-mpi), on every
backend: distances and trees equal scipy's and are the same at every count; bins really cross
ranks; large frontiers are shared with every rank's visited mask."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest

import distbfs.engine.plan as plan_module
from distbfs.backends.numpy import NumpyBackend
from distbfs.constants import UNREACHED
from distbfs.engine.direction import BOTTOM_UP, TOP_DOWN
from distbfs.graph import build_graph, inbound_keys_fit, inbound_rows
from distbfs.partition import owner
from distbfs.runtime import resolve_comm
from distbfs.traversals.bfs import bfs_levels, top_down_level

import graphs

pytestmark = pytest.mark.mpi
NUMPY = NumpyBackend()

CASES = graphs.ANY_RANK_COUNT


@pytest.mark.parametrize("name", sorted(CASES))
def test_distances_and_predecessors_at_any_rank_count(backend, backend_comm, name):
    comm, case = backend_comm, CASES[name]
    n = case[2]
    graph = graphs.build(case, comm, backend)
    assert graph.nlocal == len(range(comm.rank, n, comm.size))
    for source in sorted({0, n // 3, n - 1}):
        result = graphs.search(graph, source, backend, comm, predecessors=True)
        distances = graphs.gather_global(comm, result.distances, n)
        preds = graphs.gather_global(comm, result.predecessors, n)
        graphs.check_bfs_tree(case, source, distances, preds)


def test_statistics_are_global_and_exchange_crosses_ranks(comm, monkeypatch):
    monkeypatch.setattr(plan_module, "GATHER_DEGREE", math.inf)  # every top-down level sends bins
    src, dst, n, _ = graphs.random_graph(2000, 10000, 9, False)
    graph = build_graph(comm, *graphs.share(src, dst, comm.rank, comm.size), n, directed=False)
    result = graphs.search(graph, 0, NUMPY, comm)
    reached = np.count_nonzero(graphs.reference_distances(src, dst, n, False, 0) != UNREACHED)
    assert sum(lv.discovered for lv in result.levels) == reached - 1
    assert sum(lv.items_received for lv in result.levels) == sum(
        lv.items_sent for lv in result.levels
    )
    remote = sum(lv.items_sent_remote for lv in result.levels)
    assert (remote > 0) == (comm.size > 1)
    # every rank sees the same statistics
    frontiers = [lv.frontier for lv in result.levels]
    assert comm.allgather_object(frontiers).count(frontiers) == comm.size


@pytest.mark.gpu
@pytest.mark.parametrize("strategy", ["hybrid", "direction_optimizing", "two_phase"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_small_graphs_searched_whole_on_every_rank(name, strategy):
    """A CUDA backend that keeps a replica: on several ranks each rank searches its copy whole
    (the plan's ``whole``, a one-rank plan), with no exchange, and keeps its own vertices' part;
    the same distances as scipy's, valid trees, and the same level table on every rank."""
    from conftest import make_backend

    backend = make_backend("cuda", replica=True)
    comm = resolve_comm(os.environ.get("DISTBFS_TEST_COMM", "auto"), "cuda")
    case = CASES[name]
    n = case[2]
    graph = graphs.build(case, comm, backend)
    plan = plan_module.SearchPlan.build(graph, backend, comm, strategy=strategy)
    assert (plan.whole is not None) == (comm.size > 1)
    for source in sorted({0, n // 3, n - 1}):
        result = bfs_levels(plan, source, predecessors=True)
        distances = graphs.gather_global(comm, result.distances, n)
        preds = graphs.gather_global(comm, result.predecessors, n)
        expected = graphs.check_bfs_tree(case, source, distances, preds)
        graphs.check_level_rows(case, expected, result.levels)
        assert all(lv.items_sent_remote == 0 for lv in result.levels)
        frontiers = [lv.frontier for lv in result.levels]
        assert comm.allgather_object(frontiers).count(frontiers) == comm.size


def test_construction_in_small_chunks_at_any_rank_count(comm, monkeypatch):
    import distbfs.graph as graph_module

    src, dst, n, _ = graphs.random_graph(500, 3000, 12, False)
    mine = graphs.share(src, dst, comm.rank, comm.size)
    reference = build_graph(comm, *mine, n, directed=False)
    monkeypatch.setattr(graph_module, "CHUNK", 5)
    chunked = build_graph(comm, *mine, n, directed=False)
    np.testing.assert_array_equal(chunked.row_offsets, reference.row_offsets)
    np.testing.assert_array_equal(chunked.column_indices, reference.column_indices)


def test_shared_frontiers_cull_what_other_ranks_labeled(backend, backend_comm, monkeypatch):
    """After a level whose frontier grew past n / SHARE_FRONTIER, the ranks all-gather it into
    their visited masks: the same distances, fewer items sent (several ranks), and every vertex
    of a shared frontier is in every rank's mask."""
    monkeypatch.setattr(plan_module, "GATHER_DEGREE", math.inf)  # every top-down level sends bins
    comm, case = backend_comm, graphs.random_graph(3000, 24000, 21, False)
    n = case[2]
    graph = graphs.build(case, comm, backend)
    shared = graphs.search(graph, 0, backend, comm, predecessors=True, strategy="two_phase")
    share = plan_module.SHARE_FRONTIER
    monkeypatch.setattr(plan_module, "SHARE_FRONTIER", 0)  # never
    alone = graphs.search(graph, 0, backend, comm, predecessors=True, strategy="two_phase")
    expected = graphs.reference_distances(*case, 0)
    for result in (shared, alone):
        np.testing.assert_array_equal(graphs.gather_global(comm, result.distances, n), expected)
    sent = [sum(lv.items_sent for lv in r.levels) for r in (shared, alone)]
    if comm.size == 1:
        assert sent[0] == sent[1]
        return
    assert sent[0] < sent[1]
    gathered = [
        lv.level + 1
        for lv in shared.levels
        if lv.frontier < lv.discovered and lv.discovered * share >= n
    ]
    assert gathered
    if backend.name == "numpy":  # one byte per vertex (the CUDA mask is packed bits)
        assert shared.state.visited_mask[np.isin(expected, gathered)].all()


def test_inbound_rows_are_the_edges_into_the_owned_vertices(backend, backend_comm):
    """Every rank's inbound rows (one rank's CSR of all n rows) list, for each vertex u, the
    heads v of the edges u -> v that the rank owns, ascending: over all ranks, every stored
    edge once."""
    comm, case = backend_comm, graphs.random_graph(700, 4000, 17, False)
    n = case[2]
    graph = graphs.build(case, comm, backend)
    rows = inbound_rows(graph, backend.xp)
    offsets, columns = (
        np.asarray(backend.to_host(a)) for a in (rows.row_offsets, rows.column_indices)
    )
    tails = np.repeat(np.arange(n), np.diff(offsets))
    assert (rows.n, rows.rank, rows.size, rows.nlocal) == (n, 0, 1, n)
    assert inbound_keys_fit(2**31) and not inbound_keys_fit(2**32)  # tail * n + head in int64
    assert np.all(columns % comm.size == comm.rank)
    assert np.all((np.diff(columns) > 0) | (np.diff(tails) > 0))  # ascending within a row
    every, edges = graphs.unique_edges(*case)
    mine = edges % comm.size == comm.rank
    np.testing.assert_array_equal(tails * n + columns, np.sort(every[mine] * n + edges[mine]))


@pytest.mark.parametrize("strategy", ["hybrid", "direction_optimizing", "two_phase"])
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_inbound_levels_send_no_bins(backend, backend_comm, monkeypatch, strategy, directed):
    """With every top-down level of at least n frontier out-edges over the gathered frontier
    (GATHER_DEGREE = 0), those levels send no item across ranks: distances equal scipy's, the
    trees are valid and the level table is the one-rank one, with and without the inbound
    rows (where they do not fit, the graph is directed or the search direction-optimizing,
    every level sends bins)."""
    comm, case = backend_comm, graphs.random_graph(1500, 9000, 23, directed)
    n = case[2]
    monkeypatch.setattr(plan_module, "GATHER_DEGREE", 0.0)
    graph = graphs.build(case, comm, backend)
    for room in (True, False):
        monkeypatch.setattr(plan_module, "fits", lambda *args, room=room: room)
        plan = plan_module.SearchPlan.build(graph, backend, comm, strategy=strategy)
        inbound = comm.size > 1 and room and not directed and strategy != "direction_optimizing"
        assert (plan.inbound is not None) == inbound
        for source in (0, n // 2):
            result = bfs_levels(plan, source, predecessors=True)
            distances = graphs.gather_global(comm, result.distances, n)
            preds = graphs.gather_global(comm, result.predecessors, n)
            expected = graphs.check_bfs_tree(case, source, distances, preds)
            graphs.check_level_rows(case, expected, result.levels)
            large = [
                lv
                for lv in result.levels
                if lv.direction == TOP_DOWN and not lv.fused and lv.edges_expanded >= n
            ]
            remote = [lv.items_sent_remote for lv in large]
            if strategy == "two_phase":  # (hybrid on a GPU fuses this graph's levels)
                assert large
            assert not inbound or remote == [0] * len(large)
            assert inbound or comm.size == 1 or sum(remote) > 0 or not large


@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
@pytest.mark.parametrize("strategy", ["hybrid", "direction_optimizing", "two_phase"])
def test_a_hub_row_is_broadcast_at_any_rank_count(backend, backend_comm, strategy, directed):
    """A search from a vertex of more than ``broadcast_row_edges`` out-edges starts, on several
    ranks, with its row on every rank (``broadcast_level``): level 0 sends no bins, each rank
    labels its own neighbours of it. Distances equal scipy's and the trees are valid, from the
    hub and from the other vertices, whose searches reach the hub's row at a later level."""
    comm = backend_comm
    src, dst, n, _ = graphs.random_graph(600, 1500, 31, directed)
    hub, leaves = 5, np.arange(0, 600, 3)  # 200 out-edges (a self-loop among them, dropped)
    case = (np.concatenate([src, np.full(leaves.shape, hub)]), np.concatenate([dst, leaves]))
    case += (n, directed)
    tails, _ = graphs.unique_edges(*case)
    degrees = np.bincount(tails, minlength=n)
    backend.broadcast_row_edges = int(np.sort(degrees)[-2])  # the hub's row alone is longer
    graph = graphs.build(case, comm, backend)
    plan = plan_module.SearchPlan.build(graph, backend, comm, strategy=strategy)
    assert plan.broadcast_rows == ({hub: int(degrees[hub])} if comm.size > 1 else {})
    for source in (hub, 0, n - 1):
        result = bfs_levels(plan, source, predecessors=True)
        distances = graphs.gather_global(comm, result.distances, n)
        preds = graphs.gather_global(comm, result.predecessors, n)
        expected = graphs.check_bfs_tree(case, source, distances, preds)
        graphs.check_level_rows(case, expected, result.levels)
        if source == hub and comm.size > 1:
            assert result.levels[0].items_sent == 0
            assert result.levels[0].edges_expanded == degrees[hub]
        if comm.size > 1:  # a bound on a source's row with no communication
            bounds = [plan.resources.out_degree_bound(v) for v in range(n)]
            assert bounds[hub] == degrees[hub]
            assert all(
                b == backend.broadcast_row_edges >= d
                for v, (b, d) in enumerate(zip(bounds, degrees, strict=True))
                if v != hub
            )
        else:
            assert plan.resources.out_degree_bound(hub) is None


def test_a_broadcast_rows_frontier_is_built_by_every_rank(backend, backend_comm, monkeypatch):
    """After a broadcast level every rank builds the gathered frontier from the row it holds
    (``row_frontier``): the same bitmaps as every rank's ``frontier_bitmap`` all-gathered, the
    source left out where its own row holds it; a direction-optimizing search from the hub
    takes them at its bottom-up level 1, with no all-gather there, and its tree is valid; the
    next search from the hub reuses the row (``held_row``), with no broadcast."""
    comm = backend_comm
    src, dst, n, _ = graphs.random_graph(600, 1500, 31, False)
    hub, leaves = 5, np.arange(0, 600, 2)  # 300 edges: level 1 is bottom-up
    case = (np.concatenate([src, np.full(leaves.shape, hub)]), np.concatenate([dst, leaves]))
    case += (n, False)
    tails, _ = graphs.unique_edges(*case)
    degrees = np.bincount(tails, minlength=n)
    backend.broadcast_row_edges = int(np.sort(degrees)[-2])
    graph = graphs.build(case, comm, backend)
    plan = plan_module.SearchPlan.build(graph, backend, comm, strategy="direction_optimizing")
    state = plan.start(np.array([hub]), True)
    row = backend.source_row(graph, state, int(degrees[hub]))
    row = comm.broadcast_array(row, owner(hub, comm.size))
    row = backend.xp.concatenate([row, backend.xp.asarray([hub], dtype=row.dtype)])
    backend.contract_row(graph, state, row, hub, 1)
    expected = backend.to_host(comm.allgather_equal(backend.frontier_bitmap(graph, state)))
    got = backend.to_host(backend.row_frontier(graph, state, row, hub))
    np.testing.assert_array_equal(got, expected)
    assert got.sum() > 0
    built, gathers = [], []
    monkeypatch.setattr(backend, "row_frontier", lambda *a: built.append(a) or got_row(*a))
    got_row = type(backend).row_frontier.__get__(backend)
    monkeypatch.setattr(comm, "allgather_equal", lambda a: gathers.append(a) or gather(a))
    gather = type(comm).allgather_equal.__get__(comm)
    broadcasts = []
    monkeypatch.setattr(comm, "broadcast_array", lambda *a: broadcasts.append(a) or cast(*a))
    cast = type(comm).broadcast_array.__get__(comm)
    for search in range(2):  # the second search from the hub reuses the row it holds
        result = bfs_levels(plan, hub, predecessors=True)
        distances = graphs.gather_global(comm, result.distances, n)
        preds = graphs.gather_global(comm, result.predecessors, n)
        graphs.check_bfs_tree(case, hub, distances, preds)
        directions = [lv.direction for lv in result.levels]
        if comm.size > 1:
            assert directions[:2] == [TOP_DOWN, BOTTOM_UP] and len(built) == search + 1
            assert len(gathers) == (search + 1) * (directions.count(BOTTOM_UP) - 1)
            assert len(broadcasts) == 1


def test_direction_counts_know_the_frontier_edges_after_a_level(backend, backend_comm):
    """The direction-optimizing termination has the frontier's out-edges over all ranks after
    each level's all-reduce (the fused peer path takes them from there), not before the first
    level of a one-source search."""
    comm = backend_comm
    case = graphs.random_graph(500, 2500, 7, False)
    graph = graphs.build(case, comm, backend)
    plan = plan_module.SearchPlan.build(graph, backend, comm, strategy="direction_optimizing")
    tails, _ = graphs.unique_edges(*case)
    degrees = np.bincount(tails, minlength=case[2])
    expected = graphs.reference_distances(*case, 0)
    state = plan.start(np.array([0]), False)
    termination = plan.termination(state, 1)
    if not plan.fused.takes(0, 1):
        assert termination.frontier_edges() is None
    for level in range(3):
        counters = top_down_level(plan, state, plan.backend.make_timer(False), level)
        termination.end_level(state, TOP_DOWN, counters[-1])
        assert termination.frontier_edges() == degrees[expected == level + 1].sum()


class _RowsUnknown(NumpyBackend):
    """A backend that cannot hand rows out for this graph (as CUDA with compressed or
    host-resident columns)."""

    def long_rows(self, graph, resources, limit):
        return None


def test_no_row_bound_where_the_backend_lists_no_rows(comm):
    """Where a backend lists no rows (None), no row is broadcast and no source's out-degree
    is bounded: the fused peer path counts the entry's edges instead."""
    backend = _RowsUnknown()
    backend.broadcast_row_edges = 3
    case = (np.zeros(20, np.int64), np.arange(1, 21), 21, False)  # a star: vertex 0's row is long
    graph = graphs.build(case, comm, backend)
    resources = plan_module.GraphResources(graph, backend, comm)
    assert resources.long_rows() == {}
    assert resources.out_degree_bound(0) is None
