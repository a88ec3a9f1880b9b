"""Batched BFS (bit lanes, ``distbfs.traversals.batched`` and ``distbfs.bfs_many``) on every
backend and at any rank count: every row equals scipy's BFS from its source, with push levels
only, pull levels only and the heuristic's mix; more than 64 sources run in batches.

    python -m pytest tests/test_batched.py                            # numpy (and CUDA on a GPU)
    mpiexec -n 3 python -m pytest --with-mpi -m mpi tests/test_batched.py
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import distbfs
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import UNREACHED
from distbfs.engine import GraphResources
from distbfs.traversals.batched import batched_levels

import graphs

ONE = SingleRankCommunicator()


def hubs(directed: bool, seed: int = 3):
    """Sparse random edges plus hubs of degree 40 to 400 at ids that are not a warp's first
    thread (rows a whole warp reads, with the early exit of a pull level)."""
    n, rng = 1500, np.random.default_rng(seed)
    src, dst, _, _ = graphs.random_graph(n, 1200, seed, directed)
    centres = np.array([5, 37, 70, 101, 999])
    degrees = np.array([40, 90, 400, 33, 150])
    leaves = [rng.choice(n, d, replace=False) for d in degrees]
    hub_src = np.concatenate([np.full(d, c) for c, d in zip(centres, degrees, strict=True)])
    hub_dst = np.concatenate(leaves)
    if directed:  # into the hubs too, so in-rows are long
        hub_src, hub_dst = np.concatenate([hub_src, hub_dst]), np.concatenate([hub_dst, hub_src])
    return np.concatenate([src, hub_src]), np.concatenate([dst, hub_dst]), n, directed


CASES = {
    **graphs.ANY_RANK_COUNT,
    "hubs": hubs(False),
    "hubs_directed": hubs(True),
    "many_components_directed": graphs.random_graph(2000, 1500, 5, True),
    "mostly_isolated": graphs.random_graph(1500, 200, 1, False),
}

DIRECTIONS = {"push": 0.0, "pull": math.inf, "heuristic": 15.0}
"""alpha of the direction test (pull while m_f * alpha > edges): never pull, always pull (but
for an empty frontier), GAP's."""


def reference(case, sources) -> np.ndarray:
    """scipy's BFS levels from each source (rows), ``UNREACHED`` where none."""
    src, dst, n, directed = case
    keep = src != dst
    a = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    d = csgraph.shortest_path(a, directed=directed, unweighted=True, indices=sources)
    return np.where(np.isinf(d), UNREACHED, d).astype(np.int32).reshape(len(sources), n)


def some_sources(n: int, count: int, seed: int = 0) -> np.ndarray:
    """``count`` sources of a graph of ``n`` vertices, a repeated one among them."""
    picks = np.random.default_rng(seed).integers(0, n, count)
    picks[-1] = picks[0]
    return picks.astype(np.int64)


def run_batch(case, backend, comm, sources, **options) -> np.ndarray:
    """The (sources, n) distances of one batch, gathered on the host."""
    graph = graphs.build(case, comm, backend)
    resources = GraphResources(graph, backend, comm)
    backend.lanes_prepare(resources)  # as ``bfs_many`` does, once per graph
    search = batched_levels(resources, sources, **options)
    rows = [graphs.gather_global(comm, row, case[2]) for row in search.distances]
    return np.stack(rows)


@pytest.mark.parametrize("direction", sorted(DIRECTIONS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_rows_match_scipy(backend, name, direction):
    case = CASES[name]
    sources = some_sources(case[2], min(64, 3 * case[2]))
    got = run_batch(case, backend, ONE, sources, alpha=DIRECTIONS[direction])
    np.testing.assert_array_equal(got, reference(case, sources))


@pytest.mark.parametrize("depth", [0, 1, 3])
def test_depth_limit(backend, depth):
    case = CASES["random_directed"]
    sources = some_sources(case[2], 40)
    got = run_batch(case, backend, ONE, sources, depth_limit=depth)
    want = reference(case, sources)
    np.testing.assert_array_equal(got, np.where(want > depth, UNREACHED, want))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["hubs", "hubs_directed", "random_undirected", "path"])
def test_pull_in_vertex_order(monkeypatch, name):
    """The CUDA pull without its gather order (no memory to spare for it): the words read in
    vertex order, the same rows."""
    from conftest import make_backend

    backend = make_backend("cuda")
    from distbfs.backends.cuda import lanes

    monkeypatch.setattr(lanes, "GATHER_ORDER_SHARE", 0.0)
    case = CASES[name]
    sources = some_sources(case[2], 64)
    got = run_batch(case, backend, ONE, sources, alpha=DIRECTIONS["heuristic"])
    np.testing.assert_array_equal(got, reference(case, sources))


def test_bfs_many_in_batches(backend):
    """More than 64 sources: batches of 64; the rows in the order given, validated, counted."""
    case = CASES["random_undirected"]
    src, dst, n, _ = case
    g = distbfs.Graph.from_edges(src, dst, num_vertices=n, directed=False, backend=backend.name)
    sources = some_sources(n, 150, seed=3)
    result = distbfs.bfs_many(g, sources, validate=True, timing=True)
    np.testing.assert_array_equal(graphs.host(result.distances), reference(case, sources))
    np.testing.assert_array_equal(result.sources, sources)
    assert len(result.batches) == 3 and result.validated
    assert sum(row.discovered for b in result.batches for row in b) == int(
        (reference(case, sources) > 0).sum()
    )
    singles = sum(distbfs.bfs(g, int(s)).edges_traversed for s in sources)
    assert result.edges_traversed == singles and result.teps > 0
    assert result.searches_per_second > 0
    assert all(row.seconds for b in result.batches for row in b)
    local = distbfs.bfs_many(g, sources[:5], gather=False)
    assert local.distances is None and local.local_distances.shape == (5, n)


def test_bad_arguments():
    g = distbfs.Graph.from_edges([0], [1], backend="numpy")
    with pytest.raises(ValueError, match=r"^sources: vertex 7 is out of range"):
        distbfs.bfs_many(g, [0, 7])
    with pytest.raises(ValueError, match=r"^sources: expected at least one vertex id"):
        distbfs.bfs_many(g, [])
    with pytest.raises(TypeError, match=r"^sources: expected integer vertex ids"):
        distbfs.bfs_many(g, [0.5])
    with pytest.raises(ValueError, match=r"depth_limit"):
        distbfs.bfs_many(g, [0], depth_limit=-1)
    with pytest.raises(ValueError, match="a batch holds 1 to 64 sources, not 65"):
        batched_levels(g.resources, np.zeros(65, dtype=np.int64))


# --- at any rank count (mpiexec -n 1..4 python -m pytest --with-mpi -m mpi) -------------------


@pytest.mark.mpi
@pytest.mark.parametrize("direction", sorted(DIRECTIONS))
@pytest.mark.parametrize("name", sorted(CASES))
def test_any_rank_count(backend, backend_comm, name, direction):
    case = CASES[name]
    sources = some_sources(case[2], min(64, 3 * case[2]))
    got = run_batch(case, backend, backend_comm, sources, alpha=DIRECTIONS[direction])
    np.testing.assert_array_equal(got, reference(case, sources))


@pytest.mark.mpi
@pytest.mark.gpu
@pytest.mark.parametrize("ordered", [True, False])
@pytest.mark.parametrize("name", ["hubs", "hubs_directed", "random_undirected", "path"])
def test_pull_with_and_without_gather_order_at_any_rank_count(monkeypatch, name, ordered):
    """The CUDA pull at any rank count reads every rank's words through the gather order (built
    by ``lanes_prepare``, the ranks' out-degrees all-gathered), or in vertex order where it does
    not fit on some rank: the same rows."""
    from conftest import cuda_comm, make_backend

    backend = make_backend("cuda")  # skips where there is no GPU
    from distbfs.backends.cuda import lanes

    comm = cuda_comm()
    monkeypatch.setattr(lanes, "GATHER_ORDER_SHARE", lanes.GATHER_ORDER_SHARE if ordered else 0.0)
    case = CASES[name]
    graph = graphs.build(case, comm, backend)
    resources = GraphResources(graph, backend, comm)
    backend.lanes_prepare(resources)
    order = resources.backend_resources.gather_order
    assert (order is not None) == ordered
    if ordered:  # a place for every gathered slot, each once
        slots = -(-case[2] // comm.size) * comm.size
        np.testing.assert_array_equal(np.sort(graphs.host(order.position)), np.arange(slots))
    sources = some_sources(case[2], 64)
    search = batched_levels(resources, sources, alpha=DIRECTIONS["pull"])
    got = np.stack([graphs.gather_global(comm, row, case[2]) for row in search.distances])
    np.testing.assert_array_equal(got, reference(case, sources))


@pytest.mark.mpi
def test_bfs_many_at_any_rank_count(backend, backend_comm):
    case = CASES["random_directed"]
    src, dst, n, _ = case
    mine = graphs.share(src, dst, backend_comm.rank, backend_comm.size)
    g = distbfs.Graph.from_edges(
        *mine, num_vertices=n, backend=backend.name, comm=backend_comm, directed=True
    )
    sources = some_sources(n, 70, seed=5)
    result = distbfs.bfs_many(g, sources, validate=True)
    np.testing.assert_array_equal(graphs.host(result.distances), reference(case, sources))


# --- the command line: bench --batched ----------------------------------------------------------


def test_bench_batched(tmp_path):
    from test_cli import ok, run

    out = ok(run("bench", "--batched", "--scale", "9", "--roots", "70", "--json", "b.json",
                 cwd=tmp_path))  # fmt: skip
    assert "algorithm: bfs, batched: 70 sources, up to 64 per traversal" in out
    assert "validation: passed (70 searches)" in out and "searches_per_second:" in out
    document = json.loads((tmp_path / "b.json").read_text())
    assert document["batched"] and len(document["roots"]) == 70 and len(document["times"]) == 4
    assert len(document["batch_levels"]) == 2 and document["statistics"]["harmonic_mean_TEPS"] > 0
    assert document["searches_per_second"] > 0


@pytest.mark.parametrize(
    "args, needle",
    [
        (["--algorithm", "sssp"], "--batched: batches BFS only, not --algorithm sssp"),
        (["--predecessors"], "--batched: batched searches keep distances only"),
    ],
)
def test_bench_batched_refuses(tmp_path, args, needle):
    from test_cli import assert_input_error, run

    assert_input_error(run("bench", "--batched", "--scale", "30", *args, cwd=tmp_path), needle)
