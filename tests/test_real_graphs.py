"""BFS on the real graphs of ../shared/data at any rank count (mpi) and on every backend:
p2p-Gnutella31 against its published reference depths, every other graph against scipy, every
predecessor tree validated (Graph500 rules)."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import distbfs
from distbfs.constants import UNREACHED

pytestmark = pytest.mark.mpi

GRAPHS = [
    ("luxembourg_osm.mtx.gz", False),
    ("delaunay_n16.mtx.gz", False),
    ("wing.graph.gz", False),
    ("USPowerGrid.txt.gz", False),
    ("email-Eu-core.txt.gz", False),
    ("email-Eu-core.txt.gz", True),
    ("CA-CondMat.txt.gz", False),
    ("wiki-Vote.txt.gz", False),
    ("facebook_combined.txt.gz", True),
]


def _oracle(path) -> np.ndarray:
    with gzip.open(path, "rt") as handle:
        table = np.loadtxt(handle, dtype=np.int64, comments="#")
    depths = np.full(table[:, 0].max() + 1, UNREACHED, dtype=np.int64)
    depths[table[:, 0]] = table[:, 1]
    return depths


@pytest.mark.parametrize("undirected", [False, True])
def test_p2p_gnutella_matches_reference_depths(data_dir, backend, backend_comm, undirected):
    graph = distbfs.Graph.from_file(
        data_dir / "p2p-Gnutella31.txt.gz",
        directed=False if undirected else None,
        backend=backend,
        comm=backend_comm,
    )
    result = distbfs.bfs(graph, 5, predecessors=True, validate=True)
    mode = "undirected" if undirected else "directed"
    expected = _oracle(data_dir / f"p2p-Gnutella31.bfs-{mode}-source5.txt.gz")
    distances = graph.backend.to_host(result.distances)
    np.testing.assert_array_equal(distances, expected[: distances.shape[0]])
    assert np.all(expected[distances.shape[0] :] == UNREACHED)


@pytest.mark.parametrize(("name", "undirected"), GRAPHS)
def test_real_graph_matches_scipy(data_dir, backend, backend_comm, name, undirected):
    graph = distbfs.Graph.from_file(
        data_dir / name,
        directed=False if undirected else None,
        backend=backend,
        comm=backend_comm,
    )
    n = graph.num_vertices
    # the reference CSR, gathered from every rank's rows (small graphs)
    dist = graph.dist
    rows = graph.comm.allgather_object(
        (graph.backend.to_host(dist.row_offsets), graph.backend.to_host(dist.column_indices))
    )
    src = np.concatenate(
        [np.repeat(np.arange(r, n, graph.comm.size), np.diff(ro)) for r, (ro, _) in enumerate(rows)]
    )
    dst = np.concatenate([ci for _, ci in rows]).astype(np.int64)
    matrix = sp.csr_matrix((np.ones(src.shape[0]), (src, dst)), shape=(n, n))
    degrees = np.diff(matrix.indptr)
    sources = [int(np.argmax(degrees)), int(np.flatnonzero(degrees)[0]), n - 1]
    for source in sources:
        result = distbfs.bfs(graph, source, predecessors=True, validate=True)
        expected = csgraph.shortest_path(matrix, unweighted=True, indices=source)
        expected = np.where(np.isinf(expected), UNREACHED, expected).astype(np.int64)
        np.testing.assert_array_equal(graph.backend.to_host(result.distances), expected)
