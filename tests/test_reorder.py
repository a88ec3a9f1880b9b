"""Reordering (``distbfs.reorder`` and ``distbfs reorder``): the orders are permutations with
their defining properties, and every command run on a reordered graph takes and reports the
original ids: the same distances, components and path matrices as on the graph itself, and
BFS trees valid in the original ids; at any rank count.

    python -m pytest tests/test_reorder.py
    mpiexec -n 3 python -m pytest --with-mpi -m mpi tests/test_reorder.py
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee

from distbfs import cli
from distbfs.reorder import ORDERS, order_vertices

import graphs


def permuted_grid(seed: int = 4):
    """A 30 x 20 grid with its ids shuffled, a few isolated vertices after them."""
    src, dst, n, _ = graphs.grid(30, 20)
    perm = np.random.default_rng(seed).permutation(n)
    return perm[src], perm[dst], n + 5, False


def bandwidth(order: np.ndarray, src: np.ndarray, dst: np.ndarray) -> int:
    new = np.empty_like(order)
    new[order] = np.arange(order.shape[0])
    return int(np.abs(new[src] - new[dst]).max())


@pytest.mark.parametrize("order", ORDERS)
def test_orders_are_permutations(order):
    src, dst, n, _ = permuted_grid()
    got = order_vertices(order, src, dst, n)
    np.testing.assert_array_equal(np.sort(got), np.arange(n))
    np.testing.assert_array_equal(got, order_vertices(order, dst, src, n))  # direction-blind


def test_degree_order_is_by_degree():
    src, dst, n, _ = graphs.random_graph(500, 2000, 3, False)
    got = order_vertices("degree", src, dst, n)
    a = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    a = ((a + a.T) > 0).astype(np.int8)
    a.setdiag(0)
    a.eliminate_zeros()
    degrees = np.diff(a.indptr)
    assert (np.diff(degrees[got]) <= 0).all()


def test_rcm_narrows_the_band_like_scipy():
    src, dst, n, _ = permuted_grid()
    a = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    theirs = reverse_cuthill_mckee((a + a.T).tocsr(), symmetric_mode=True).astype(np.int64)
    mine = bandwidth(order_vertices("rcm", src, dst, n), src, dst)
    assert bandwidth(np.arange(n), src, dst) > 10 * mine
    assert mine <= 1.5 * bandwidth(theirs, src, dst)


def test_bfs_order_numbers_by_level():
    src, dst, n, _ = graphs.path(40)
    perm = np.random.default_rng(1).permutation(40)
    got = order_vertices("bfs", perm[src], perm[dst], n)
    levels = graphs.reference_distances(perm[src], perm[dst], n, False, int(got[0]))
    assert (np.diff(levels[got]) >= 0).all()


def run(*args: str) -> None:
    assert cli.main([*args, "-q"]) == 0


@pytest.fixture
def weighted_file(tmp_path):
    rng = np.random.default_rng(9)
    src, dst, _, _ = graphs.random_graph(300, 700, 6, True)
    lines = [
        f"{u} {v} {w}\n" for u, v, w in zip(src, dst, rng.integers(1, 9, len(src)), strict=True)
    ]
    path = tmp_path / "g.txt"
    path.write_text("".join(lines))
    return path, (src, dst, max(int(src.max()), int(dst.max())) + 1, True)


@pytest.mark.parametrize("order", ORDERS)
def test_commands_on_a_reordered_graph_answer_in_original_ids(tmp_path, weighted_file, order):
    path, case = weighted_file
    out = tmp_path / "out"
    run("convert", str(path), str(tmp_path / "plain"))
    run("reorder", str(path), str(tmp_path / "once"), "--order", "degree")
    run("reorder", str(tmp_path / "once"), str(tmp_path / "re"), "--order", order)  # composed
    for graph in ("plain", "re"):
        g = str(tmp_path / graph)
        run("bfs", g, "--source", "3,17", "--predecessors", "--output", f"{out}-{graph}-bfs")
        run("sssp", g, "--source", "3", "--predecessors", "--output", f"{out}-{graph}-sssp")
        run("cc", g, "--output", f"{out}-{graph}-cc")
        run("apsp", g, "--output", f"{out}-{graph}-apsp")

    def load(graph, what):
        return np.load(f"{out}-{graph}-{what}")

    for what in ("bfs.distances.npy", "sssp.distances.npy", "cc.components.npy"):
        np.testing.assert_array_equal(load("plain", what), load("re", what))
    np.testing.assert_array_equal(
        load("plain", "apsp.distances.npy"), load("re", "apsp.distances.npy")
    )
    preds, dist = load("re", "bfs.predecessors.npy"), load("re", "bfs.distances.npy")
    reached = np.flatnonzero(dist > 0)
    np.testing.assert_array_equal(dist[preds[reached]], dist[reached] - 1)  # original ids
    assert preds[3] == 3 and preds[17] == 17
    tails, heads = graphs.unique_edges(*case)
    n = case[2]
    assert np.isin(preds[reached] * n + reached, tails * n + heads).all()


def test_convert_keeps_the_original_ids(tmp_path, weighted_file, capsys):
    path, _ = weighted_file
    run("reorder", str(path), str(tmp_path / "re"), "--order", "rcm")
    run("convert", str(tmp_path / "re"), str(tmp_path / "copy"))
    capsys.readouterr()
    assert cli.main(["info", str(tmp_path / "copy")]) == 0
    assert "reordered: rcm" in capsys.readouterr().out


@pytest.mark.mpi
def test_reorder_at_any_rank_count(tmp_path_factory, comm):
    """The same relabeled graph at this rank count as one rank computes."""
    src, dst, _, _ = permuted_grid()
    base = comm.bcast_object(str(tmp_path_factory.getbasetemp()) if comm.rank == 0 else None)
    edges = f"{base}/grid-{comm.size}.txt"
    if comm.rank == 0:
        with open(edges, "w") as handle:
            handle.write("".join(f"{u} {v}\n" for u, v in zip(src, dst, strict=True)))
    comm.barrier()
    target = f"{base}/grid-{comm.size}-rcm"
    assert cli.main(["reorder", edges, target, "--order", "rcm", "--undirected", "-q"]) == 0
    listed = int(max(src.max(), dst.max())) + 1  # the file's vertices: the isolated ones left out
    order = order_vertices("rcm", src, dst, listed)
    np.testing.assert_array_equal(np.load(f"{target}/original_ids.npy"), order)
    prefix = f"{base}/grid-{comm.size}-bfs"
    assert cli.main(["bfs", target, "--source", "7", "--output", prefix, "-q"]) == 0
    want = graphs.reference_distances(src, dst, listed, False, 7)
    np.testing.assert_array_equal(np.load(f"{prefix}.distances.npy"), want)
