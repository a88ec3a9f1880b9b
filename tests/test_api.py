"""The public API: every constructor against scipy's BFS, predecessors, gather=False, and argument
errors (TypeError/ValueError naming the argument and the value).

Plain tests run at one rank; the ``mpi`` ones build the same graphs from per-rank shares and
check the gathered result at any rank count.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import distbfs
from distbfs import UNREACHED, Graph, bfs
from distbfs.api import InvalidArgumentType, InvalidArgumentValue
from distbfs.errors import InputError, ValidationError


def reference(matrix: sp.spmatrix, source: int, directed: bool) -> np.ndarray:
    """BFS levels from scipy (UNREACHED where unreachable)."""
    d = csgraph.shortest_path(
        matrix, method="D", directed=directed, unweighted=True, indices=source
    )
    return np.where(np.isinf(d), UNREACHED, d).astype(np.int32)


def random_edges(n: int, m: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m, dtype=np.int64), rng.integers(0, n, m, dtype=np.int64)


def adjacency(src, dst, n: int) -> sp.csr_matrix:
    return sp.csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))


def check_tree(result, matrix: sp.csr_matrix, directed: bool) -> None:
    """predecessors form a BFS tree consistent with the distances, over edges of the graph."""
    dist, pred = result.distances, result.predecessors
    s = result.source
    assert pred.dtype == np.int64 and pred[s] == s
    reached = dist != UNREACHED
    assert np.all(pred[~reached] == UNREACHED)
    others = np.flatnonzero(reached)
    others = others[others != s]
    parents = pred[others]
    assert np.all(dist[parents] == dist[others] - 1)
    adj = matrix if directed else (matrix + matrix.T)
    assert np.all(np.asarray(adj[parents, others]).ravel() != 0)


# ----------------------------------------------------------------------------------- from_edges


@pytest.mark.parametrize("directed", [True, False])
def test_from_edges_matches_scipy(directed):
    n = 300
    src, dst = random_edges(n, 700, seed=3)
    g = Graph.from_edges(src, dst, num_vertices=n, directed=directed, backend="numpy")
    assert g.num_vertices == n and g.directed is directed
    matrix = adjacency(src, dst, n)
    for source in (0, 17, 299):
        r = bfs(g, source, predecessors=True, validate=True)
        assert r.distances.dtype == np.int32
        np.testing.assert_array_equal(r.distances, reference(matrix, source, directed))
        check_tree(r, matrix, directed)
        assert r.seconds > 0 and r.teps > 0 and r.validated
        assert r.num_reached == int(np.count_nonzero(r.distances != UNREACHED))
        assert r.depth == int(r.distances.max())


def test_from_edges_counts_and_defaults():
    g = Graph.from_edges([0, 1, 1, 2, 2], [1, 2, 2, 2, 0])  # duplicate and self-loop dropped
    assert g.num_vertices == 3 and g.directed
    assert g.num_edges == 3 and g.num_undirected_edges == 3
    u = Graph.from_edges(np.array([0, 1]), np.array([1, 2]), directed=False)
    assert u.num_edges == 4 and u.num_undirected_edges == 2 and not u.directed
    assert u.dist.n == 3 and u.comm.size == 1 and u.backend.name == "numpy"
    assert "undirected" in repr(u)


def test_from_edges_empty_and_isolated_source():
    g = Graph.from_edges([], [], num_vertices=4)
    assert g.num_vertices == 4 and g.num_edges == 0
    r = bfs(g, 2, predecessors=True, validate=True)
    np.testing.assert_array_equal(r.distances, [UNREACHED, UNREACHED, 0, UNREACHED])
    np.testing.assert_array_equal(r.predecessors, [UNREACHED, UNREACHED, 2, UNREACHED])
    assert r.num_reached == 1 and r.depth == 0 and r.edges_traversed == 0
    assert Graph.from_edges([], []).num_vertices == 0


def test_gather_false_sets_only_locals():
    src, dst = random_edges(50, 120, seed=5)
    g = Graph.from_edges(src, dst, num_vertices=50, directed=False)
    full = bfs(g, 7, predecessors=True)
    local = bfs(g, 7, predecessors=True, gather=False)
    assert local.distances is None and local.predecessors is None
    np.testing.assert_array_equal(local.local_vertices, np.arange(50))
    np.testing.assert_array_equal(local.local_distances, full.distances)
    np.testing.assert_array_equal(local.local_predecessors, full.predecessors)
    assert local.edges_traversed == full.edges_traversed


def test_local_vertices_are_made_when_first_read(monkeypatch):
    """No result makes its owned vertices' ids (n / size int64s) until they are read; then
    once."""
    import distbfs.api.search as search

    made = []

    def counted(*args):
        made.append(args)
        return np.arange(args[0], args[0] + args[2] * args[1], args[1], dtype=np.int64)

    monkeypatch.setattr(search, "owned_ids", counted)
    src, dst = random_edges(50, 120, seed=5)
    g = Graph.from_edges(src, dst, num_vertices=50, directed=False)
    results = [bfs(g, 7, gather=False), distbfs.connected_components(g, gather=False)]
    assert made == []
    for result in results:
        ids = result.local_vertices
        assert result.local_vertices is ids
        np.testing.assert_array_equal(ids, np.arange(50))
    assert len(made) == 2


def test_timing_records_phases():
    g = Graph.from_edges(np.arange(9), np.arange(1, 10), directed=False)
    timed = bfs(g, 0, timing=True)
    plain = bfs(g, 0)
    assert len(timed.levels) == 10 and timed.depth == 9
    assert all("expand" in lv.seconds for lv in timed.levels)
    assert all(lv.seconds == {} for lv in plain.levels)
    assert plain.predecessors is None and plain.local_predecessors is None
    assert plain.edges_traversed == 9


def test_the_clock_starts_after_the_device_and_the_ranks():
    """A run's time starts once the device has finished what was queued before (a previous
    call's asynchronous statistics would count in it otherwise) and every rank is there, and
    ends once the device has finished the run, the slowest rank's."""
    from types import SimpleNamespace

    from distbfs.api.search import start_clock, stop_clock

    events = []
    device = SimpleNamespace(synchronize=lambda: events.append("device"))
    xp = SimpleNamespace(__name__="cupy", cuda=SimpleNamespace(Device=lambda: device))

    def allreduce(value, op):
        events.append(op)
        return value + 1.0  # the slowest rank's

    comm = SimpleNamespace(barrier=lambda: events.append("barrier"), allreduce=allreduce)
    backend = SimpleNamespace(xp=xp)
    start = start_clock(comm, backend)
    assert events == ["device", "barrier"] and isinstance(start, float)
    seconds = stop_clock(comm, backend, start)
    assert events == ["device", "barrier", "device", "max"] and 1.0 <= seconds < 60.0


# ----------------------------------------------------------------------------------- from_scipy


@pytest.mark.parametrize("fmt", ["csr", "coo", "csc", "lil"])
def test_from_scipy_directed(fmt):
    m = sp.random(80, 80, density=0.04, random_state=11, format=fmt)
    g = Graph.from_scipy(m)
    assert g.directed  # a random pattern is not symmetric
    for source in (0, 40):
        r = bfs(g, source, validate=True)
        np.testing.assert_array_equal(r.distances, reference(sp.csr_matrix(m), source, True))


def test_from_scipy_symmetric_is_undirected_and_sparse_arrays():
    m = sp.random(60, 60, density=0.05, random_state=2, format="csr")
    sym = sp.csr_array(m + m.T)
    g = Graph.from_scipy(sym)
    assert not g.directed
    r = bfs(g, 5, predecessors=True, validate=True)
    np.testing.assert_array_equal(r.distances, reference(sp.csr_matrix(sym), 5, False))
    check_tree(r, sp.csr_matrix(sym), False)
    forced = Graph.from_scipy(m, directed=False)  # symmetrizes
    assert not forced.directed
    np.testing.assert_array_equal(bfs(forced, 5).distances, reference(m, 5, False))


def test_from_scipy_explicit_zero_is_an_edge():
    m = sp.coo_matrix((np.array([0.0, 1.0]), (np.array([0, 1]), np.array([1, 2]))), shape=(3, 3))
    r = bfs(Graph.from_scipy(m), 0)
    np.testing.assert_array_equal(r.distances, [0, 1, 2])


# -------------------------------------------------------------------------------- from_networkx


def test_from_networkx_labels_and_direction():
    nx = pytest.importorskip("networkx")
    G = nx.Graph()
    G.add_edges_from([("a", "b"), ("b", "c"), ("c", "d"), ("x", "y")])
    G.add_node("lonely")
    g = Graph.from_networkx(G)
    assert not g.directed and g.node_labels == list(G.nodes)
    r = bfs(g, g.node_labels.index("a"), predecessors=True, validate=True)
    expected = nx.single_source_shortest_path_length(G, "a")
    for i, label in enumerate(g.node_labels):
        assert r.distances[i] == expected.get(label, UNREACHED)

    D = nx.gnp_random_graph(70, 0.04, seed=4, directed=True)
    gd = Graph.from_networkx(D)
    assert gd.directed
    r = bfs(gd, 0, validate=True)
    expected = nx.single_source_shortest_path_length(D, 0)
    got = {v: int(r.distances[v]) for v in range(70) if r.distances[v] != UNREACHED}
    assert got == expected
    assert Graph.from_networkx(nx.Graph()).num_vertices == 0


# ------------------------------------------------------------------------ generate / file / save


def test_generate_grid_and_kronecker():
    g = Graph.generate("grid2d", shape=(4, 5))
    assert g.num_vertices == 20 and not g.directed
    r = bfs(g, 0, validate=True)
    assert r.depth == 3 + 4  # Manhattan distance to the far corner
    k = Graph.generate("kronecker", scale=7, edgefactor=8, seed=3)
    assert k.num_vertices == 128
    csr = sp.csr_matrix(
        (np.ones(k.num_edges), k.dist.column_indices, k.dist.row_offsets), shape=(128, 128)
    )
    r = bfs(k, 1, predecessors=True, validate=True)
    np.testing.assert_array_equal(r.distances, reference(csr, 1, False))
    again = Graph.generate("kronecker", scale=7, edgefactor=8, seed=3)
    np.testing.assert_array_equal(again.dist.column_indices, k.dist.column_indices)


def test_from_file_and_save_roundtrip(tmp_path):
    src, dst = random_edges(40, 90, seed=8)
    path = tmp_path / "g.mtx"
    lines = ["%%MatrixMarket matrix coordinate pattern general", f"40 40 {len(src)}"]
    lines += [f"{u + 1} {v + 1}" for u, v in zip(src.tolist(), dst.tolist(), strict=True)]
    path.write_text("\n".join(lines) + "\n")
    g = Graph.from_file(path)
    assert g.directed and g.num_vertices == 40
    assert g.load_info.format == "mtx" and g.load_info.bytes > 0
    matrix = adjacency(src, dst, 40)
    r = bfs(g, 3, validate=True)
    np.testing.assert_array_equal(r.distances, reference(matrix, 3, True))
    u = Graph.from_file(str(path), directed=False, format="mtx")
    assert not u.directed
    np.testing.assert_array_equal(bfs(u, 3).distances, reference(matrix, 3, False))

    native = tmp_path / "g.native"
    g.save(native)
    back = Graph.from_file(native)
    assert back.load_info.format == "native"
    assert back.directed and back.num_edges == g.num_edges
    np.testing.assert_array_equal(bfs(back, 3).distances, reference(matrix, 3, True))


# ---------------------------------------------------------------------------- argument errors


def test_errors_are_type_and_value_errors_and_input_errors():
    assert issubclass(InvalidArgumentType, TypeError) and issubclass(
        InvalidArgumentType, InputError
    )
    assert issubclass(InvalidArgumentValue, ValueError)
    assert issubclass(InvalidArgumentValue, InputError)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: Graph.from_edges([0, -1], [1, 2]), ValueError, r"^src: vertex id -1 is negative"),
        (
            lambda: Graph.from_edges([0, 1], [1, 12], num_vertices=10),
            ValueError,
            r"^dst: vertex id 12 is out of range for num_vertices=10",
        ),
        (lambda: Graph.from_edges([0, 1], [1, 10], num_vertices=10), ValueError, r"dst.*10"),
        (lambda: Graph.from_edges([0.0, 1.5], [1, 2]), TypeError, r"^src: .*float64"),
        (lambda: Graph.from_edges([0, 1], ["a", "b"]), TypeError, r"^dst"),
        (lambda: Graph.from_edges([[0, 1]], [[1, 2]]), ValueError, r"^src: expected a 1-d"),
        (lambda: Graph.from_edges([0, 1, 2], [1, 2]), ValueError, r"lengths differ \(3 != 2\)"),
        (lambda: Graph.from_edges([0], [1], num_vertices="5"), TypeError, r"^num_vertices"),
        (lambda: Graph.from_edges([0], [1], num_vertices=-2), ValueError, r"^num_vertices.*-2"),
        (lambda: Graph.from_edges([0], [1], directed="yes"), TypeError, r"^directed"),
        (lambda: Graph.from_edges([0], [1], backend="gpu"), ValueError, r"^backend.*'gpu'"),
        (lambda: Graph.from_edges([0], [1], comm=3), TypeError, r"^comm"),
        (lambda: Graph.from_edges([0], [1], comm="tcp"), ValueError, r"^comm.*'tcp'"),
        (lambda: Graph.from_scipy(np.eye(3)), TypeError, r"^matrix.*ndarray"),
        (
            lambda: Graph.from_scipy(sp.random(3, 4, density=0.5)),
            ValueError,
            r"^matrix: expected a square matrix, got shape \(3, 4\)",
        ),
        (lambda: Graph.from_networkx({"a": 1}), TypeError, r"^G: expected a networkx graph"),
        (lambda: Graph.from_file(123), TypeError, r"^path"),
        (lambda: Graph.from_file("x.mtx", format="csv"), ValueError, r"^format.*'csv'"),
        (lambda: Graph.from_file("x.mtx", directed=1), TypeError, r"^directed"),
        (lambda: Graph.generate("rmat", scale=5), ValueError, r"^kind.*'rmat'"),
        (lambda: Graph.generate(3, scale=5), TypeError, r"^kind"),
        (lambda: Graph.generate("kronecker"), ValueError, r"^scale: required"),
        (lambda: Graph.generate("kronecker", scale=-1), ValueError, r"^scale.*-1"),
        (lambda: Graph.generate("kronecker", scale=2.5), TypeError, r"^scale"),
        (lambda: Graph.generate("kronecker", scale=50), ValueError, r"scale.*50"),
        (lambda: Graph.generate("kronecker", scale=4, edgefactor=0), ValueError, r"^edgefactor"),
        (lambda: Graph.generate("kronecker", scale=4, seed=-3), ValueError, r"^seed.*-3"),
        (lambda: Graph.generate("grid2d", shape=(0, 5)), ValueError, r"^shape.*0"),
        (lambda: Graph.generate("grid2d", shape=(2, 5, 3)), ValueError, r"^shape.*grid2d"),
        (lambda: Graph.generate("grid3d"), ValueError, r"^shape: required"),
        (lambda: Graph.generate("grid2d", shape=(3, 3), scale=4), ValueError, r"^scale: not"),
    ],
)
def test_bad_arguments(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_bfs_bad_arguments():
    g = Graph.from_edges(np.arange(9), np.arange(1, 10))
    with pytest.raises(
        ValueError,
        match=r"^source: vertex 99 is out of range for a graph of 10 "
        r"vertices$",
    ):
        bfs(g, 99)
    with pytest.raises(ValueError, match=r"^source: vertex -1 is out of range"):
        bfs(g, -1)
    with pytest.raises(TypeError, match=r"^source: .*float 1.5"):
        bfs(g, 1.5)
    with pytest.raises(TypeError, match=r"^source"):
        bfs(g, True)
    with pytest.raises(TypeError, match=r"^graph: .*DistGraph"):
        bfs(g.dist, 0)
    with pytest.raises(TypeError, match=r"^predecessors"):
        bfs(g, 0, predecessors="no")
    assert bfs(g, np.int64(3)).source == 3  # numpy integers are integers


def test_validate_true_raises_validation_error(monkeypatch):
    """A corrupted search result is caught when validate=True (and only then)."""
    import distbfs.api.search as api

    real = api.run_levels

    def corrupt(*args, **kwargs):
        result = real(*args, **kwargs)
        result.distances[result.distances > 0] += 1
        return result

    monkeypatch.setattr(api, "run_levels", corrupt)
    g = Graph.from_edges([0, 1, 2], [1, 2, 3], directed=False)
    bfs(g, 0)
    with pytest.raises(ValidationError):
        bfs(g, 0, validate=True)


def test_public_exports():
    assert distbfs.Graph is Graph and distbfs.bfs is bfs
    assert distbfs.UNREACHED == -1
    for name in distbfs.__all__:
        assert hasattr(distbfs, name)


# ----------------------------------------------------------------------- at several rank counts


@pytest.mark.mpi
@pytest.mark.parametrize("directed", [True, False])
def test_from_edges_shares_at_any_rank_count(comm, directed):
    n = 200
    src, dst = random_edges(n, 500, seed=21)
    mine = slice(comm.rank, None, comm.size)
    g = Graph.from_edges(src[mine], dst[mine], directed=directed, comm=comm, backend="numpy")
    assert g.num_vertices == int(max(src.max(), dst.max())) + 1
    matrix = adjacency(src, dst, g.num_vertices)
    r = bfs(g, 4, predecessors=True, validate=True)
    np.testing.assert_array_equal(r.distances, reference(matrix, 4, directed))
    check_tree(r, matrix, directed)
    local = bfs(g, 4, gather=False)
    np.testing.assert_array_equal(
        local.local_vertices, np.arange(comm.rank, g.num_vertices, comm.size)
    )
    np.testing.assert_array_equal(local.local_distances, r.distances[comm.rank :: comm.size])


@pytest.mark.mpi
def test_from_scipy_at_any_rank_count(comm):
    m = sp.random(90, 90, density=0.03, random_state=7, format="csr")
    g = Graph.from_scipy(m, comm=comm)
    assert g.num_edges == sp.csr_matrix(m).nnz - int(np.count_nonzero(m.diagonal()))
    r = bfs(g, 1, validate=True)
    np.testing.assert_array_equal(r.distances, reference(m, 1, True))


@pytest.mark.mpi
def test_errors_agree_over_ranks(comm):
    """A bad id on one rank only is raised on every rank (no rank is left waiting)."""
    src = np.array([0, 1]) if comm.rank != comm.size - 1 else np.array([0, -5])
    with pytest.raises(ValueError, match=r"^src: vertex id -5 is negative"):
        Graph.from_edges(src, np.array([1, 2]), comm=comm)
    dst = np.array([1.5]) if comm.rank == comm.size - 1 else np.array([1])
    with pytest.raises(TypeError, match=r"^dst"):
        Graph.from_edges(np.array([0]), dst, comm=comm)
    g = Graph.from_edges(np.array([0]), np.array([1]), comm=comm)
    with pytest.raises(ValueError, match=r"^source: vertex 2 is out of range"):
        bfs(g, 2)
    if comm.size > 1:
        with pytest.raises(ValueError, match=r"^source: ranks passed different sources"):
            bfs(g, comm.rank % 2)


# ------------------------------------------------------------------------------- array module


def test_results_live_in_the_backend_array_module(xp):
    """numpy backend: numpy results; CUDA backend (gpu): cupy results with the same values."""
    if xp is np:
        backend = "numpy"
    else:
        from distbfs.backends.cuda.backend import CudaBackend

        backend = CudaBackend()
    n = 400
    src, dst = random_edges(n, 1200, seed=31)
    g = Graph.from_edges(
        xp.asarray(src), xp.asarray(dst), num_vertices=n, directed=False, backend=backend
    )
    assert isinstance(g.dist.column_indices, xp.ndarray)
    r = bfs(g, 9, predecessors=True, validate=True, timing=True)
    assert isinstance(r.distances, xp.ndarray) and isinstance(r.predecessors, xp.ndarray)
    host = distbfs.Graph.from_edges(src, dst, num_vertices=n, directed=False, backend="numpy")
    expected = bfs(host, 9)
    distances = r.distances if xp is np else r.distances.get()
    np.testing.assert_array_equal(distances, expected.distances)
    assert r.edges_traversed == expected.edges_traversed and r.seconds > 0
    local = bfs(g, 9, gather=False)
    assert local.distances is None and isinstance(local.local_distances, xp.ndarray)
    g.resources.load_kernels()  # CUDA: every stage compiled now; numpy: nothing to do
    assert bfs(g, 9).num_reached == expected.num_reached
