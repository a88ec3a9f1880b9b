"""Where a graph lives (``distbfs.api.placement``): on a GPU its columns and weights in host
memory read over the link search alike and come back; on the numpy backend every graph is in
host memory, so "host" is refused and the rest change nothing; the command line checks the
flag before it reads the graph.
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
