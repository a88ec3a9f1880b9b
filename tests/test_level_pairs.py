"""GPU tests of the fused grid's level pairs (``level_pairs_kernel``, kernels/contract_expand.cu):
two BFS levels between grid barriers on graphs whose out-degrees are all small, the second
level's claims tentative until the next barrier. Searches whose fused levels all run in grids
(no one-block tier), so in pairs, against scipy: distances, Graph500's tree rules and the level
table's counts of every level; lattices with odd cycles, where a tentative claim loses its vertex
to a claim a level nearer; depth limits of odd and even depth (a run's last level alone); the
exact state a run stopped by the frontier's size leaves; small blocks, several chunks a block.

Needs CuPy and a CUDA device (skipped otherwise): ``python -m pytest -m gpu
tests/test_level_pairs.py``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import cupy_module_or_skip

cupy = cupy_module_or_skip()

from distbfs.backends.cuda import fused as cuda_fused  # noqa: E402
from distbfs.backends.cuda.backend import CudaBackend  # noqa: E402
from distbfs.backends.cuda.launch_policy import LaunchPolicy  # noqa: E402
from distbfs.comm.single import SingleRankCommunicator  # noqa: E402
from distbfs.constants import UNREACHED  # noqa: E402
from distbfs.engine import SearchPlan  # noqa: E402
from distbfs.graph import build_graph  # noqa: E402
from distbfs.traversals.bfs import bfs_levels  # noqa: E402

import graphs  # noqa: E402

pytestmark = pytest.mark.gpu

ONE_RANK = SingleRankCommunicator()

PAIRS = LaunchPolicy(fused_block_edges=0)
"""Every fused level in a grid (the small one, then the full one): in pairs."""
SMALL_BLOCKS = LaunchPolicy(
    fused_block_edges=0, fused_threads=64, fused_blocks_per_sm=1, fused_small_grid_blocks=2
)
"""Blocks of 64 threads, two of them in the small grid: a block's share takes several chunks."""
SINGLE = LaunchPolicy(fused_block_edges=0, fused_pair_degree=0)
"""The same grids, one level a barrier."""


def lattice(nx: int, ny: int, diagonals: int):
    """The nx x ny grid with 0, 1 or 2 diagonals per cell (out-degrees up to 4, 6 or 8; with
    diagonals, triangles everywhere)."""
    ids = np.arange(nx * ny, dtype=np.int64).reshape(ny, nx)
    pairs = [(ids[:, :-1], ids[:, 1:]), (ids[:-1], ids[1:])]
    if diagonals >= 1:
        pairs.append((ids[:-1, :-1], ids[1:, 1:]))
    if diagonals >= 2:
        pairs.append((ids[:-1, 1:], ids[1:, :-1]))
    src = np.concatenate([a.ravel() for a, _ in pairs])
    dst = np.concatenate([b.ravel() for _, b in pairs])
    return src, dst, nx * ny, False


def cube(side: int):
    """The side^3 lattice (out-degrees up to 6)."""
    ids = np.arange(side**3, dtype=np.int64).reshape(side, side, side)
    src = np.concatenate([ids[:-1].ravel(), ids[:, :-1].ravel(), ids[:, :, :-1].ravel()])
    dst = np.concatenate([ids[1:].ravel(), ids[:, 1:].ravel(), ids[:, :, 1:].ravel()])
    return src, dst, side**3, False


def few_out_edges(n: int, out: int, seed: int):
    """A random directed graph, every vertex with ``out`` out-edges (duplicates and loops
    dropped by the build)."""
    rng = np.random.default_rng(seed)
    return np.repeat(np.arange(n, dtype=np.int64), out), rng.integers(0, n, n * out), n, True


CASES = {
    "grid-corner": (lattice(200, 150, 0), 0),
    "grid-middle": (lattice(200, 150, 0), 75 * 200 + 100),
    "triangles": (lattice(150, 120, 1), 0),
    "king-moves": (lattice(100, 100, 2), 50 * 100 + 50),  # out-degree 8: pairs if allowed
    "cube": (cube(30), 0),
    "path": (graphs.path(5000), 0),
    "random-directed": (few_out_edges(30_000, 3, 5), 0),
}


def _search(case, source, policy, *, predecessors=True, depth_limit=None, wide=False):
    """A search on the CUDA backend under ``policy``; returns (result, the tiers of the fused
    launches that ran levels)."""
    src, dst, n, directed = case
    graph = build_graph(ONE_RANK, src, dst, n, directed=directed, xp=cupy)
    if wide:
        graph = dataclasses.replace(graph, column_indices=graph.column_indices.astype(cupy.int64))
    tiers = []
    launch = cuda_fused._launch_small_levels

    def recorded(*args):
        ran = launch(*args)
        if ran:
            tiers.append(args[-1])
        return ran

    plan = SearchPlan.build(graph, CudaBackend(policy), ONE_RANK)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(cuda_fused, "_launch_small_levels", recorded)
        result = bfs_levels(plan, source, predecessors=predecessors, depth_limit=depth_limit)
    return result, tiers


def _check(case, source, result, depth_limit=None):
    """Distances (up to ``depth_limit``) equal scipy's, the tree follows Graph500's rules and
    the level table counts every level's frontier, discoveries and out-edges."""
    want = graphs.reference_distances(*case, source)
    dist = cupy.asnumpy(result.distances).astype(np.int64)
    if depth_limit is None:
        graphs.check_bfs_tree(case, source, dist, result.predecessors)
        graphs.check_level_rows(case, want, result.levels)
        return
    np.testing.assert_array_equal(dist, np.where(want <= depth_limit, want, UNREACHED))
    preds = cupy.asnumpy(result.predecessors).astype(np.int64)
    reached = np.flatnonzero((dist != UNREACHED) & (np.arange(case[2]) != source))
    np.testing.assert_array_equal(dist[preds[reached]], dist[reached] - 1)


@pytest.mark.parametrize("policy", [PAIRS, SMALL_BLOCKS], ids=["default-blocks", "small-blocks"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_level_pairs_match_scipy(name, policy):
    case, source = CASES[name]
    if name == "king-moves":  # beyond the default fused_pair_degree: one level a barrier
        result, tiers = _search(case, source, policy)
        assert tiers and not any(tier.pairs for tier in tiers)
        policy = dataclasses.replace(policy, fused_pair_degree=8)
    result, tiers = _search(case, source, policy)
    _check(case, source, result)
    assert tiers and all(tier.pairs for tier in tiers)


@pytest.mark.parametrize("name", ["triangles", "random-directed"])
def test_level_pairs_without_predecessors_and_with_int64_ids(name):
    case, source = CASES[name]
    want = graphs.reference_distances(*case, source)
    for predecessors, wide in [(False, False), (True, True)]:
        result, tiers = _search(case, source, PAIRS, predecessors=predecessors, wide=wide)
        assert tiers and all(tier.pairs for tier in tiers)
        if predecessors:
            _check(case, source, result)
        else:
            assert result.predecessors is None
            np.testing.assert_array_equal(cupy.asnumpy(result.distances), want)


@pytest.mark.parametrize("depth", [1, 2, 7, 40, 41])
@pytest.mark.parametrize("name", ["grid-corner", "triangles"])
def test_level_pairs_stop_at_a_depth_limit(name, depth):
    """A limit of odd depth leaves the run's last level alone (its claims final)."""
    case, source = CASES[name]
    result, _ = _search(case, source, PAIRS, depth_limit=depth)
    _check(case, source, result, depth)


def test_level_pairs_and_single_levels_agree():
    """The same lattice one level a barrier: the same distances and level table."""
    case, source = CASES["triangles"]
    pairs, pair_tiers = _search(case, source, PAIRS)
    single, single_tiers = _search(case, source, SINGLE)
    assert all(tier.pairs for tier in pair_tiers)
    assert single_tiers and not any(tier.pairs for tier in single_tiers)
    np.testing.assert_array_equal(cupy.asnumpy(pairs.distances), cupy.asnumpy(single.distances))
    assert [(lv.level, lv.frontier, lv.discovered, lv.edges_expanded) for lv in pairs.levels] == [
        (lv.level, lv.frontier, lv.discovered, lv.edges_expanded) for lv in single.levels
    ]


@pytest.mark.parametrize("max_frontier", [40, 41, 123])
@pytest.mark.parametrize("name", ["grid-corner", "triangles"])
def test_level_pairs_leave_the_exact_state(name, max_frontier):
    """Stopped by the frontier's size (checked once a pair, so a level later at most), the
    state is exactly that of as many levels one at a time: labels, predecessors without a
    tentative tag, the visited bitmask and the frontier, in the queue the host reads; the
    search then goes on to the right distances."""
    case, source = CASES[name]
    src, dst, n, directed = case
    graph = build_graph(ONE_RANK, src, dst, n, directed=directed, xp=cupy)
    backend = CudaBackend(PAIRS)
    state = backend.start(graph, source, True, backend.prepare(graph))
    levels = backend.run_small_levels(graph, state, 0, max_frontier)
    want = graphs.reference_distances(*case, source)
    sizes = np.bincount(want[want != UNREACHED])
    assert sizes[levels] > max_frontier and sizes[levels - 2] <= max_frontier
    frontier = np.sort(cupy.asnumpy(state.vertex_frontier).astype(np.int64))
    np.testing.assert_array_equal(frontier, np.flatnonzero(want == levels))
    labels = cupy.asnumpy(state.labels).astype(np.int64)
    np.testing.assert_array_equal(labels, np.where(want <= levels, want, UNREACHED))
    words = cupy.asnumpy(state.visited_mask).astype(np.uint64)
    bits = ((words[:, None] >> np.arange(32, dtype=np.uint64)) & np.uint64(1)).ravel()[:n]
    np.testing.assert_array_equal(bits.astype(bool), labels != UNREACHED)
    preds = cupy.asnumpy(state.preds).astype(np.int64)
    reached = np.flatnonzero((labels != UNREACHED) & (np.arange(n) != source))
    assert np.all((preds[reached] >= 0) & (preds[reached] < n))  # no tag left
    np.testing.assert_array_equal(labels[preds[reached]], labels[reached] - 1)
    level = levels
    while state.frontier_size > 0:
        ran = backend.run_small_levels(graph, state, level, 10**9)
        assert ran > 0
        level += ran
    np.testing.assert_array_equal(cupy.asnumpy(state.labels).astype(np.int64), want)
    graphs.check_bfs_tree(case, source, want, cupy.asnumpy(state.preds))
