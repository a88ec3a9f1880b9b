"""Where a graph lives (``distbfs.api.placement``): on a GPU its columns and weights in host
memory read over the link search alike and come back; auto takes the device, then the
compressed form on the device, then host memory; on the numpy backend every graph is in host
memory, so "host" is refused and the rest change nothing; the command line checks the flag
before it reads the graph.
"""

from __future__ import annotations

import numpy as np
import pytest

import distbfs
from distbfs.comm.single import SingleRankCommunicator
from distbfs.errors import InvalidArgumentType, InvalidArgumentValue

import graphs

ONE = SingleRankCommunicator()


def build(backend, case, weights=None):
    return distbfs.Graph(graphs.build(case, ONE, backend, weights), ONE, backend)


def same(a, b) -> None:
    np.testing.assert_array_equal(graphs.host(a), graphs.host(b))


@pytest.mark.parametrize("name", ["random_directed", "random_undirected", "one_vertex", "grid"])
def test_host_resident_graphs_search_alike(backend, name):
    if not callable(getattr(backend, "place_graph", None)):
        pytest.skip(f"the {backend.name} backend holds every graph in host memory")
    case = graphs.ANY_RANK_COUNT[name]
    weights = (np.arange(case[0].shape[0]) % 7 + 1).astype(np.float32)
    plain = build(backend, case, weights)
    placed = plain.place("host")
    assert backend.graph_memory(placed.dist) == "host"
    assert backend.graph_memory(plain.dist) == "device"
    for strategy in ("hybrid", "direction_optimizing"):
        # a GPU's predecessors are whichever thread wins; validate=True checks Graph500's rules
        a = distbfs.bfs(plain, 0, strategy=strategy)
        b = distbfs.bfs(placed, 0, predecessors=True, strategy=strategy, validate=True)
        same(a.distances, b.distances)
    same(distbfs.sssp(plain, 0).distances, distbfs.sssp(placed, 0, validate=True).distances)
    same(distbfs.connected_components(plain).labels, distbfs.connected_components(placed).labels)
    many = list(range(min(case[2], 10)))
    same(distbfs.bfs_many(plain, many).distances, distbfs.bfs_many(placed, many).distances)
    assert backend.graph_memory(placed.resources.in_neighbours()) == "host"  # directed too
    small = plain.compress().place("host")  # compressed columns read over the link
    assert backend.graph_memory(small.dist) == "host" and small.compressed
    for strategy in ("hybrid", "direction_optimizing"):
        a = distbfs.bfs(plain, 0, strategy=strategy)
        same(a.distances, distbfs.bfs(small, 0, strategy=strategy, validate=True).distances)
    back = placed.place("device")
    assert backend.graph_memory(back.dist) == "device"
    same(back.dist.column_indices, plain.dist.column_indices)
    assert placed.place("host") is placed and plain.place("auto") is plain  # room to spare


@pytest.mark.parametrize(
    ("budget", "choice"),
    [
        (4.0, "device"),
        (2.0, "device"),
        (1.99, "compressed"),
        (1.5, "compressed"),
        (1.49, "host"),
        (0.0, "host"),
    ],
)
def test_auto_takes_the_device_then_compression_then_host(monkeypatch, budget, choice):
    """auto: the plain graph while a search fits beside it, else its compressed form while the
    same search fits beside that, else host memory. The budget (in plain CSRs) is the free
    bytes plus what the graph already holds on the device; here a search takes one plain CSR
    and the compressed graph half of one."""
    from types import SimpleNamespace

    from distbfs.api import placement

    graph = build(distbfs.backends.numpy.NumpyBackend(), graphs.path(1001))
    plain = graph.dist.nbytes()
    monkeypatch.setattr(placement, "SEARCH_DEVICE_SHARE", 1.0)
    monkeypatch.setattr(placement, "available_bytes", lambda xp: int(budget * plain) - 100)
    backend = SimpleNamespace(
        xp=np, device_bytes=lambda dist: 100, compressed_bytes=lambda dist: plain // 2
    )
    view = SimpleNamespace(backend=backend, dist=graph.dist, comm=ONE)
    assert placement.auto_choice(view) == choice


@pytest.mark.gpu
def test_auto_compresses_on_the_device_when_only_that_fits(monkeypatch):
    """On a GPU, auto codes the graph on the device when a search fits beside its compressed
    form only (the free bytes forced), and goes to host memory a byte below; the bytes
    counted for the compressed form are the bytes it takes."""
    from conftest import make_backend

    from distbfs.api import placement

    backend = make_backend("cuda")
    plain = build(backend, graphs.random_graph(3000, 12000, 2, False))
    small = backend.compressed_bytes(plain.dist)
    assert small == plain.compress().dist.nbytes()
    held = backend.device_bytes(plain.dist)
    assert held == plain.dist.nbytes()
    need = small + int(placement.SEARCH_DEVICE_SHARE * plain.dist.nbytes())
    monkeypatch.setattr(placement, "available_bytes", lambda xp: need - held)
    auto = plain.place("auto")
    assert auto.compressed and backend.graph_memory(auto.dist) == "device"
    same(distbfs.bfs(auto, 0).distances, distbfs.bfs(plain, 0).distances)
    monkeypatch.setattr(placement, "available_bytes", lambda xp: need - held - 1)
    auto = plain.place("auto")
    assert not auto.compressed and backend.graph_memory(auto.dist) == "host"


def test_the_numpy_backend_holds_graphs_in_host_memory():
    graph = build(distbfs.backends.numpy.NumpyBackend(), graphs.path(5))
    assert graph.place("auto") is graph and graph.place("device") is graph
    with pytest.raises(InvalidArgumentValue, match="memory='host': the numpy backend holds"):
        graph.place("host")
    with pytest.raises(InvalidArgumentValue, match="memory: expected one of auto, device, host"):
        graph.place("disk")
    with pytest.raises(InvalidArgumentType, match="memory: expected a str"):
        graph.place(1)


def test_the_flag_is_checked_before_the_graph_is_read(tmp_path):
    from test_cli import assert_input_error, ok, run

    proc = run(
        "bfs",
        "missing.mtx",
        "--source",
        "0",
        "--backend",
        "numpy",
        "--graph-memory",
        "host",
        cwd=tmp_path,
    )
    assert_input_error(proc, "--graph-memory host: the numpy backend holds its graphs in host")
    ok(run("generate", "grid2d", "--shape", "9x7", "-o", "g", cwd=tmp_path))
    out = ok(
        run(
            "bfs",
            "g",
            "--source",
            "0",
            "--backend",
            "numpy",
            "--graph-memory",
            "auto",
            cwd=tmp_path,
        )
    )
    assert "reached 63 of 63 vertices" in out and "graph memory" not in out


@pytest.mark.parametrize("weighted", [False, True])
def test_a_build_too_large_for_the_device_spills_to_host_memory(monkeypatch, xp, weighted):
    """One rank's streamed build whose columns would not fit (the free bytes forced to 0):
    columns and weights built where ``spill`` puts them (on a GPU: mapped host memory), the
    same CSR and weights as the build on the device, and searched alike."""
    import distbfs.streamed as streamed

    src, dst, n, _ = graphs.random_graph(400, 3000, 5, False)
    weights = (np.arange(src.shape[0]) % 9 + 1).astype(np.float64)  # stored as float32
    pieces = [
        (
            xp.asarray(src[i : i + 301]),
            xp.asarray(dst[i : i + 301]),
            xp.asarray(weights[i : i + 301]),
        )
        for i in range(0, len(src), 301)
    ]

    def chunks(first):
        return iter([p[:2] for p in pieces] if first or not weighted else pieces)

    def build(spill=None):
        return streamed.build_graph_streamed(
            chunks,
            n,
            directed=False,
            xp=xp,
            weights=weights.dtype if weighted else None,
            spill=spill,
        )

    made = []

    def spill(length, dtype):
        made.append(np.dtype(dtype))
        if xp is np:
            return np.empty(length, dtype)
        from distbfs.backends.cuda.host_memory import host_empty

        return host_empty(length, dtype)

    plain = build(spill)  # room to spare: built on the device
    assert made == []
    monkeypatch.setattr(streamed, "available_bytes", lambda module: 0)
    spilled = build(spill)
    assert made[0] == plain.column_indices.dtype and len(made) == (3 if weighted else 1)
    same(spilled.row_offsets, plain.row_offsets)
    same(spilled.column_indices, plain.column_indices)
    if weighted:
        assert spilled.weights.dtype == plain.weights.dtype == np.float32
        same(spilled.weights, plain.weights)
    if xp is not np:
        from distbfs.backends.cuda.backend import CudaBackend
        from distbfs.backends.cuda.host_memory import in_host_memory

        assert in_host_memory(spilled.column_indices)
        backend = CudaBackend()
        a, b = (distbfs.Graph(g, ONE, backend) for g in (plain, spilled))
        for graph in (b, b.compress()):
            same(distbfs.bfs(a, 0).distances, distbfs.bfs(graph, 0, validate=True).distances)
