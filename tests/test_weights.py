"""Edge weights through every input and output: the float32/float64 rule, construction (the
smallest of duplicates, one weight both ways of an undirected edge, self-loops dropped, zero
weights kept), every reader against scipy or a direct construction, the native round trip,
``convert`` and ``info``, generated weights (bit-identical at any rank count), the API
constructors, every bad weight (exit 2 naming FILE:LINE and the value, nothing written, at 1 and
3 ranks), and the first-impressions items: output permissions follow the umask, a non-square
Matrix Market file is refused, a ``.gz`` file that is not gzip says so, ``directed`` is one
convention, and ``from_scipy`` takes cupyx matrices.

Tests marked ``mpi`` run under ``mpiexec -n P python -m pytest --with-mpi -m mpi``; the CLI tests
at 3 ranks launch ``mpiexec`` themselves (as ``test_cli_mpi``).
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import types
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli_mpi import MPIEXEC, assert_job_input_error, clean_env, distbfs
from test_io import assert_graph, weighted_reference, write

import distbfs.generators.chunks as generator_chunks
import distbfs.graph as graph_module
from distbfs import Graph
from distbfs.arrays import array_module
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import weight_dtype
from distbfs.errors import InputError
from distbfs.generators import generate
from distbfs.graph import build_graph, build_local_graph
from distbfs.io import read_graph, write_native
from distbfs.io.native import ranges
from distbfs.streamed import build_graph_streamed

import graphs

ONE = SingleRankCommunicator()


def host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


def stored(graph):
    """(tails, heads, weights) of a one-rank graph, as numpy."""
    tails, heads, weights = graph.stored_edges(np, with_weights=True)
    return host(tails), host(heads), None if weights is None else host(weights)


# ------------------------------------------------------------------------- the dtype rule


@pytest.mark.parametrize(
    ("weights", "dtype"),
    [
        ([1, 2, 255], np.float32),  # GAP-style integers
        ([0, 2**24], np.float32),
        ([1, 2**24 + 1], np.float64),  # the first integer float32 rounds
        ([0.5, 0.25, 2.0**100], np.float32),  # binary fractions and powers of two are exact
        ([0.1], np.float64),
        ([1e300], np.float64),  # beyond float32's range: no overflow warning, float64
        ([], np.float32),
    ],
)
def test_weight_dtype_rule(weights, dtype):
    assert weight_dtype(np.array(weights, dtype=np.float64)) == dtype
    if max(weights, default=0) < 3e38:  # within float32's range
        assert weight_dtype(np.array(weights, dtype=np.float32)) == np.float32
    g = build_graph(
        ONE,
        np.arange(len(weights)),
        np.arange(len(weights)) + 1,
        2 + len(weights),
        directed=True,
        weights=np.array(weights, dtype=np.float64),
    )
    assert g.weights.dtype == dtype and g.weighted
    np.testing.assert_array_equal(g.weights, np.array(weights, dtype=np.float64))


@pytest.mark.mpi
def test_weight_dtype_is_decided_by_every_rank(comm):
    """One rank's weight that float32 cannot hold makes every rank's weights float64."""
    src = np.array([comm.rank], dtype=np.int64)
    dst = src + 1
    for last, dtype in ((2.0, np.float32), (0.1, np.float64)):
        weights = np.array([last if comm.rank == comm.size - 1 else 1.0])
        g = build_graph(comm, src, dst, comm.size + 1, directed=True, weights=weights)
        assert g.weights.dtype == dtype
        assert set(comm.allgather_object(str(g.weights.dtype))) == {np.dtype(dtype).name}


# ------------------------------------------------------------------------- construction


def test_duplicates_symmetry_loops_and_zeros():
    src = np.array([0, 0, 1, 2, 2, 3, 1, 4])
    dst = np.array([1, 1, 0, 2, 3, 2, 0, 0])
    w = np.array([5.0, 2.0, 3.0, 9.0, 0.0, 4.0, 7.0, 6.0])
    directed = build_graph(ONE, src, dst, 5, directed=True, weights=w)
    assert stored(directed)[0].tolist() == [0, 1, 2, 3, 4]
    assert stored(directed)[1].tolist() == [1, 0, 3, 2, 0]
    assert stored(directed)[2].tolist() == [2.0, 3.0, 0.0, 4.0, 6.0]  # smallest of 0->1, 1->0
    undirected = build_graph(ONE, src, dst, 5, directed=False, weights=w)
    tails, heads, weights = stored(undirected)
    got = {
        (t, h): x for t, h, x in zip(tails.tolist(), heads.tolist(), weights.tolist(), strict=True)
    }
    assert got == {(0, 1): 2.0, (1, 0): 2.0, (2, 3): 0.0, (3, 2): 0.0, (0, 4): 6.0, (4, 0): 6.0}
    assert (
        undirected.nbytes()
        == directed.nbytes()
        - directed.weights.nbytes
        + (undirected.row_offsets.nbytes - directed.row_offsets.nbytes)
        + undirected.column_indices.nbytes
        - directed.column_indices.nbytes
        + undirected.weights.nbytes
    )
    assert build_graph(ONE, src, dst, 5, directed=True).weights is None


@pytest.mark.parametrize("kind", ["fractional", "integers"])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("chunk", [None, 5, 64])
@pytest.mark.parametrize("on_host", [True, False])
def test_every_builder_gives_the_reference(monkeypatch, xp, directed, chunk, kind, on_host):
    """build_graph, build_local_graph and build_graph_streamed (rows split over spans when
    CHUNK is small) give the CSR and weights of the reference, in either array module; with
    fractional weights (beside the keys, a float64 graph) and with integers (in the keys, a
    float32 graph). A small graph for the device is built on the host and moved
    (HOST_BUILD_EDGES), or, with that limit below it, on the device."""
    if chunk is not None:
        monkeypatch.setattr(graph_module, "CHUNK", chunk)
    if not on_host:
        monkeypatch.setattr(graph_module, "HOST_BUILD_EDGES", -1)
    rng = np.random.default_rng(7)
    n, m = 40, 600
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 6, m).astype(np.float64)
    if kind == "fractional":
        w += rng.choice([0.0, 0.25, 0.1], m)  # 0.1: a float64 graph
    assert (graph_module.weight_packing(xp, xp.asarray(w), n) > 0) == (kind == "integers")
    offsets, columns, weights = weighted_reference(src, dst, w, n, directed)
    for graph in (
        build_graph(
            ONE,
            xp.asarray(src),
            xp.asarray(dst),
            n,
            directed=directed,
            xp=xp,
            weights=xp.asarray(w),
        ),
        build_local_graph(
            xp.asarray(src), xp.asarray(dst), n, directed=directed, xp=xp, weights=xp.asarray(w)
        ),
        build_graph_streamed(
            lambda first: (
                (
                    xp.asarray(src[i : i + 37]),
                    xp.asarray(dst[i : i + 37]),
                    None if first else xp.asarray(w[i : i + 37]),
                )
                for i in range(0, m, 37)
            ),
            n,
            directed=directed,
            xp=xp,
            weights=w.dtype,
        ),
    ):
        assert graph.weights.dtype == (np.float64 if kind == "fractional" else np.float32)
        for array in (graph.row_offsets, graph.column_indices, graph.weights):
            assert array_module(array) is xp
        np.testing.assert_array_equal(host(graph.row_offsets), offsets)
        np.testing.assert_array_equal(host(graph.column_indices), columns)
        np.testing.assert_array_equal(host(graph.weights), weights)
    empty = build_graph_streamed(lambda first: iter([]), 3, directed=directed, weights=np.float64)
    assert empty.weights.shape == (0,) and empty.weights.dtype == np.float32


def test_weights_travel_in_the_keys_while_they_fit():
    """key * m + w must stay within int64 for the rank with the most rows."""
    assert graph_module.packing_multiplier(255, 2**27, 2**26) == 256  # kron27 on 2 ranks
    assert graph_module.packing_multiplier(255, 2**30, 2**28) == 0  # kron30 on 4: 2**66
    assert graph_module.packing_multiplier(2.0**31, 2**20, 2**20) == 0
    assert graph_module.weight_packing(np, np.array([0.0, 3.0, 7.0]), 10) == 8
    assert graph_module.weight_packing(np, np.array([0.0, 3.5]), 10) == 0
    assert graph_module.weight_packing(np, np.zeros(0), 10) == 1


@pytest.mark.mpi
@pytest.mark.parametrize("kind", ["integers", "fractional"])
@pytest.mark.parametrize("directed", [True, False])
def test_build_graph_weights_at_any_rank_count(comm, directed, kind, monkeypatch):
    """Each rank's rows and weights equal the one-rank graph's (also in rounds of few edges);
    the stored edges with weights rebuild the same graph (the reverse CSR's path). Integer
    weights travel in the keys, fractional ones beside them; one fractional weight on one rank
    sends every rank's beside the keys."""
    rng = np.random.default_rng(3)
    n, m = 300, 3000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 100, m).astype(np.float64)
    if kind == "fractional":
        w[comm.size - 1] += 0.5  # on the last rank's share only
    mine = slice(comm.rank, None, comm.size)
    packed = graph_module.weight_packing(np, w[mine], n, comm)
    assert packed == (100 if kind == "integers" else 0)  # the largest weight, 99, plus one
    whole = build_graph(ONE, src, dst, n, directed=directed, weights=w)
    for chunk in (None, 16):
        if chunk is not None:
            monkeypatch.setattr(graph_module, "CHUNK", chunk)
        g = build_graph(comm, src[mine], dst[mine], n, directed=directed, weights=w[mine])
        assert_same_rows(g, whole)
        tails, heads, weights = g.stored_edges(np, with_weights=True)
        again = build_graph(comm, tails, heads, n, directed=True, weights=weights)
        assert_same_rows(again, whole)


def assert_same_rows(graph, whole) -> None:
    """This rank's rows of ``graph`` (columns and weights) are the one-rank ``whole``'s."""
    rows = np.arange(graph.rank, graph.n, graph.size)
    offsets = host(whole.row_offsets)
    degrees = offsets[rows + 1] - offsets[rows]
    np.testing.assert_array_equal(np.diff(host(graph.row_offsets)), degrees)
    slots = ranges(offsets[rows], degrees)
    np.testing.assert_array_equal(host(graph.column_indices), host(whole.column_indices)[slots])
    if whole.weights is None:
        assert graph.weights is None
    else:
        assert graph.weights.dtype == whole.weights.dtype
        np.testing.assert_array_equal(host(graph.weights), host(whole.weights)[slots])


# ------------------------------------------------------------------------- readers


EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (1, 2), (4, 0), (0, 4)]
WEIGHTS = ["1", "2.5", "0", "7e1", "3", "0.75", "12", "1.5"]


@pytest.mark.parametrize("gz", [False, True])
def test_edge_list_weights_against_numpy_loadtxt(tmp_path, comm, gz):
    body = "# u v w\n" + "".join(f"{u} {v} {w}\n" for (u, v), w in zip(EDGES, WEIGHTS, strict=True))
    path = write(tmp_path, "w.txt" + (".gz" if gz else ""), body)
    table = np.loadtxt(path, comments="#", ndmin=2)
    src, dst, w = table[:, 0].astype(np.int64), table[:, 1].astype(np.int64), table[:, 2]
    for directed in (None, False):
        graph, _ = read_graph(path, comm, directed=directed)
        want = directed is None
        *csr, weights = weighted_reference(src, dst, w, 5, want)
        assert_graph(graph, *csr, 5, want, weights)
        assert graph.weights.dtype == np.float32  # every weight a float32 value
    plain = write(tmp_path, "p.txt", "".join(f"{u} {v}\n" for u, v in EDGES))
    assert read_graph(plain, comm)[0].weights is None  # two columns: unweighted


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(0, 10**19 - 1).map(str),
            st.floats(0, 1e300).map(repr),
            st.floats(0, 1e6).map(lambda x: f"{x:.{len(str(int(x))) % 9}f}"),
            st.decimals(0, 10**6, places=6).map(str),
            st.floats(0, 1e-3).map(lambda x: f"{x:.3e}"),
            st.sampled_from(["0", "-0", "+0.5", "1.", ".25", "007.50", "1E+2", "-0.0e0"]),
        ),
        min_size=1,
    )
)
def test_weight_tokens_convert_as_python_float(tmp_path_factory, texts):
    """Integers, plain decimals, exponents: every weight is the correctly rounded value of its
    text, as Python's float gives it."""
    path = tmp_path_factory.mktemp("w") / "w.txt"
    path.write_text("".join(f"{i} {i + 1} {t}\n" for i, t in enumerate(texts)))
    graph, _ = read_graph(str(path), ONE)
    expected = np.array([float(t) for t in texts]) + 0.0
    assert np.array_equal(graph.weights.astype(np.float64), expected)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(("field", "symmetry"), [("integer", "general"), ("real", "symmetric")])
def test_matrix_market_values_against_scipy(tmp_path, comm, gz, field, symmetry):
    rng = np.random.default_rng(5)
    n, m = 30, 120
    rows, cols = rng.integers(1, n + 1, m), rng.integers(1, n + 1, m)
    if symmetry == "symmetric":
        rows, cols = np.maximum(rows, cols), np.minimum(rows, cols)  # the lower triangle
    values = rng.integers(0, 50, m) if field == "integer" else rng.random(m).round(4) * 10
    body = f"%%MatrixMarket matrix coordinate {field} {symmetry}\n{n} {n} {m}\n"
    body += "".join(f"{i} {j} {v}\n" for i, j, v in zip(rows, cols, values, strict=True))
    path = write(tmp_path, "m.mtx" + (".gz" if gz else ""), body)
    graph, _ = read_graph(path, comm)
    coo = graphs.read_matrix_market(write(tmp_path, "plain.mtx", body))  # symmetric: both ways
    *csr, weights = weighted_reference(coo.row, coo.col, coo.data, n, True)
    assert_graph(graph, *csr, n, symmetry == "general", weights)


def test_metis_edge_weights(tmp_path, comm):
    # a triangle 1-2-3 with weights 4, 5, 6 and vertex weights (fmt 11), 2-3 listed as 5 and 8
    body = "% w\n3 3 11\n7 2 4 3 6\n7 1 4 3 5\n7 1 6 2 8\n"
    graph, _ = read_graph(write(tmp_path, "t.graph", body), comm)
    *csr, weights = weighted_reference([0, 0, 1], [1, 2, 2], [4, 6, 5], 3, False)
    assert_graph(graph, *csr, 3, False, weights)  # 2-3 stores min(5, 8) both ways
    plain = write(tmp_path, "v.graph", "3 3 10\n7 2 3\n7 1 3\n7 1 2\n")  # vertex weights only
    assert read_graph(plain, comm)[0].weights is None


@pytest.mark.parametrize("name", ["w.txt", "m.mtx", "t.graph"])
def test_native_round_trip_and_convert_keep_weights(tmp_path, comm, name):
    bodies = {
        "w.txt": "".join(f"{u} {v} {w}\n" for (u, v), w in zip(EDGES, WEIGHTS, strict=True)),
        "m.mtx": "%%MatrixMarket matrix coordinate real general\n5 5 3\n1 2 0.1\n2 3 0\n5 1 7\n",
        "t.graph": "3 3 1\n2 4 3 6\n1 4 3 5\n1 6 2 5\n",
    }
    source = write(tmp_path, name, bodies[name])
    graph, _ = read_graph(source, comm)
    out = str(tmp_path / "native")
    write_native(graph, out, comm)
    assert sorted(os.listdir(out)) == [
        "column_indices.npy",
        "header.json",
        "row_offsets.npy",
        "weights.npy",
    ]
    again, info = read_graph(out, comm)
    assert info.format == "native" and again.weights.dtype == graph.weights.dtype
    np.testing.assert_array_equal(again.weights, graph.weights)
    np.testing.assert_array_equal(again.column_indices, graph.column_indices)
    if graph.directed:  # symmetrized from the native file: as from the source
        both, _ = read_graph(out, comm, directed=False)
        expected, _ = read_graph(source, comm, directed=False)
        np.testing.assert_array_equal(both.column_indices, expected.column_indices)
        np.testing.assert_array_equal(both.weights, expected.weights)
    unweighted = build_graph(comm, np.array([0]), np.array([1]), 2, directed=True)
    write_native(unweighted, out, comm)  # replaces it: no weights.npy, version 1
    assert "weights.npy" not in os.listdir(out)
    assert '"version": 1' in (Path(out) / "header.json").read_text()


def test_native_weight_checks(tmp_path, comm):
    graph = build_graph(
        comm, np.array([0, 1]), np.array([1, 2]), 3, directed=True, weights=np.array([1.0, 2.0])
    )
    out = tmp_path / "g"
    write_native(graph, str(out), comm)
    header = (out / "header.json").read_text()
    assert '"version": 2' in header and '"weight_dtype": "float32"' in header
    np.save(out / "weights.npy", np.array([1.0, -2.0], dtype=np.float32))
    with pytest.raises(InputError, match=r"weights\.npy: negative, NaN or infinite"):
        read_graph(str(out), comm)
    np.save(out / "weights.npy", np.array([1.0, 2.0], dtype=np.float64))
    with pytest.raises(InputError, match=r"weights\.npy: expected float32"):
        read_graph(str(out), comm)
    (out / "header.json").write_text(header.replace('"version": 2', '"version": 1'))
    with pytest.raises(InputError, match="bad weight_dtype 'float32' for version 1"):
        read_graph(str(out), comm)


# ------------------------------------------------------------------------- generators


@pytest.mark.parametrize(
    ("kind", "params"),
    [
        ("kronecker", {"scale": 8, "edgefactor": 8}),
        ("uniform", {"scale": 7, "edgefactor": 4}),
        ("grid2d", {"shape": (9, 11)}),
        ("grid3d", {"shape": (3, 4, 5)}),
    ],
)
def test_generated_weights(monkeypatch, xp, kind, params):
    graph = generate(kind, ONE, xp=xp, weights="uniform:1:255", **params)
    tails, heads, weights = (host(a) for a in graph.stored_edges(xp, with_weights=True))
    assert graph.weights.dtype == np.float32
    assert weights.min() >= 1 and weights.max() <= 255 and (weights == np.round(weights)).all()
    n = graph.n
    forward = dict(zip((tails * n + heads).tolist(), weights.tolist(), strict=True))
    assert all(forward[h * n + t] == x for t, h, x in zip(tails, heads, weights, strict=True))
    unweighted = generate(kind, ONE, xp=xp, **params)
    np.testing.assert_array_equal(host(unweighted.column_indices), host(graph.column_indices))
    monkeypatch.setattr(generator_chunks, "CHUNK_EDGES_HOST", 13)
    monkeypatch.setattr(graph_module, "CHUNK", 50)
    again = generate(kind, ONE, xp=xp, weights="uniform:1:255", **params)
    np.testing.assert_array_equal(host(again.weights), host(graph.weights))
    shared = build_graph(ONE, tails, heads, n, directed=True, weights=weights)  # as several ranks
    np.testing.assert_array_equal(shared.weights, weights)


def test_generated_weight_range_and_dtype():
    zero = generate("grid2d", ONE, shape=(5, 5), weights="uniform:0:0")
    assert zero.weights.dtype == np.float32 and not zero.weights.any()
    wide = generate("grid2d", ONE, shape=(20, 20), weights=f"uniform:0:{2**40}")
    assert wide.weights.dtype == np.float64 and wide.weights.max() > 2**24
    seeds = [
        generate("grid2d", ONE, shape=(6, 6), seed=s, weights="uniform:0:1000").weights
        for s in (1, 2)
    ]
    assert (seeds[0] != seeds[1]).any()


@pytest.mark.parametrize(
    "spec",
    [
        "uniform:5:1",
        "uniform:-1:3",
        "uniform:1",
        "normal:1:3",
        "uniform:a:b",
        "",
        f"uniform:0:{2**53 + 1}",
    ],
)
def test_bad_weight_specs(spec):
    with pytest.raises(ValueError, match=rf"^weights: expected uniform:LO:HI.*got {spec!r}"):
        Graph.generate("grid2d", shape=(2, 2), weights=spec)
    with pytest.raises(TypeError, match=r"^weights: expected a str"):
        Graph.generate("grid2d", shape=(2, 2), weights=5)


@pytest.mark.mpi
@pytest.mark.parametrize("spec", ["uniform:1:255", f"uniform:0:{2**40}"])
def test_generated_weights_same_at_every_rank_count(comm, spec):
    """generate at P ranks (make_share and build_graph) holds the rows and weights of the
    one-rank, streamed build, bit for bit."""
    for kind, params in (
        ("kronecker", {"scale": 9, "edgefactor": 8}),
        ("grid2d", {"shape": (17, 9)}),
    ):
        graph = generate(kind, comm, weights=spec, **params)
        assert_same_rows(graph, generate(kind, ONE, weights=spec, **params))


# ------------------------------------------------------------------------- the API


def test_from_edges_weights():
    g = Graph.from_edges([0, 0, 1, 2], [1, 1, 2, 2], weights=[3, 1, 0, 5], directed=False)
    assert g.weighted and g.dist.weights.dtype == np.float32 and "weighted" in repr(g)
    assert stored(g.dist)[2].tolist() == [1.0, 1.0, 0.0, 0.0]
    assert not Graph.from_edges([0], [1]).weighted
    f32 = Graph.from_edges(np.array([0]), np.array([1]), weights=np.array([0.1], np.float32))
    assert f32.dist.weights.dtype == np.float32


@pytest.mark.parametrize(
    ("weights", "error", "match"),
    [
        ([1.0, -2.0], ValueError, r"^weights: weights\[1\] is -2.0: weights must be non-negative"),
        ([np.nan, 1.0], ValueError, r"^weights: weights\[0\] is nan"),
        ([1.0, np.inf], ValueError, r"^weights: weights\[1\] is inf"),
        ([1.0, "x"], TypeError, r"^weights: weights\[1\] is 'x', not a number"),
        ([1.0], ValueError, r"^weights: 1 weights for 2 edges"),
        ([[1.0, 2.0]], ValueError, r"^weights: expected a 1-d array"),
    ],
)
def test_from_edges_bad_weights(weights, error, match):
    with pytest.raises(error, match=match):
        Graph.from_edges([0, 1], [1, 2], weights=weights)


@pytest.mark.mpi
def test_from_edges_weights_on_some_ranks_only(comm):
    if comm.size == 1:
        pytest.skip("needs two ranks")
    weights = [1.0] if comm.rank == 0 else None
    with pytest.raises(ValueError, match=r"^weights: given on some ranks only"):
        Graph.from_edges([comm.rank], [comm.rank + 1], weights=weights, comm="mpi")


def test_from_scipy_weights():
    m = sp.coo_matrix(([2.0, 0.0, 4.0, 3.0, 9.0], ([0, 1, 2, 0, 1], [1, 2, 0, 1, 1])), shape=(3, 3))
    g = Graph.from_scipy(
        m
    )  # (0, 1) twice: 2 stays; explicit zero (1, 2) is an edge; (1, 1) dropped
    assert g.directed and g.weighted
    assert stored(g.dist)[1].tolist() == [1, 2, 0] and stored(g.dist)[2].tolist() == [2.0, 0.0, 4.0]
    ones = Graph.from_scipy(sp.csr_matrix(np.ones((2, 2))))
    assert ones.weighted and not ones.directed and ones.dist.weights.tolist() == [1.0, 1.0]
    assert not Graph.from_scipy(m, weighted=False).weighted
    symmetric = sp.csr_matrix(np.array([[0, 2.5], [2.5, 0]]))
    assert not Graph.from_scipy(symmetric).directed
    skewed = sp.csr_matrix(np.array([[0, 2.5], [1.0, 0]]))  # pattern symmetric, values not
    assert Graph.from_scipy(skewed).directed
    assert not Graph.from_scipy(skewed, weighted=False).directed
    both = Graph.from_scipy(skewed, directed=False)
    assert both.dist.weights.tolist() == [1.0, 1.0]  # min(2.5, 1.0) both ways
    rng = np.random.default_rng(2)
    dense = rng.integers(0, 4, (30, 30)) * rng.integers(0, 2, (30, 30))
    random = sp.csr_matrix(dense.astype(np.float64))
    g = Graph.from_scipy(random)
    *csr, weights = weighted_reference(*random.nonzero(), random.data, 30, True)
    assert_graph(g.dist, *csr, 30, True, weights)


@pytest.mark.parametrize(
    ("matrix", "error", "match"),
    [
        (
            sp.csr_matrix(np.array([[0, -1.0], [0, 0]])),
            ValueError,
            r"^matrix: entry \(0, 1\) is -1.0",
        ),
        (sp.csr_matrix(np.array([[0, np.nan], [0, 0]])), ValueError, r"^matrix: entry \(0, 1\)"),
        (
            sp.csr_matrix(np.array([[0, 1 + 2j], [0, 0]])),
            TypeError,
            r"^matrix: entry \(0, 1\) is \(1\+2j\)",
        ),
    ],
)
def test_from_scipy_bad_values(matrix, error, match):
    with pytest.raises(error, match=match):
        Graph.from_scipy(matrix)
    assert not Graph.from_scipy(matrix, weighted=False).weighted  # values not looked at


def test_from_networkx_weights():
    G = nx.Graph()
    G.add_edge("a", "b", weight=2.5)
    G.add_edge("b", "c")  # no attribute: weight 1, as networkx
    G.add_edge("c", "d", cost=7, weight=0)
    g = Graph.from_networkx(G)
    assert g.weighted and not g.directed
    assert stored(g.dist)[2].tolist() == [2.5, 2.5, 1.0, 1.0, 0.0, 0.0]
    assert Graph.from_networkx(G, weight="cost").dist.weights.tolist() == [1, 1, 1, 1, 7, 7]
    assert not Graph.from_networkx(G, weight=None).weighted
    M = nx.MultiDiGraph()
    M.add_edge(0, 1, weight=5)
    M.add_edge(0, 1, weight=2)  # parallel edges: the lighter stays
    assert Graph.from_networkx(M).dist.weights.tolist() == [2.0]
    G.add_edge("d", "e", weight=-3)
    with pytest.raises(ValueError, match=r"^G: the 'weight' of edge \('d', 'e'\) is -3"):
        Graph.from_networkx(G)
    G.add_edge("d", "e", weight="heavy")
    with pytest.raises(TypeError, match=r"^G: the 'weight' of edge \('d', 'e'\) is 'heavy'"):
        Graph.from_networkx(G)
    with pytest.raises(TypeError, match=r"^weight: expected an attribute name"):
        Graph.from_networkx(G, weight=3)


def test_from_file_and_generate_are_weighted(tmp_path):
    path = write(tmp_path, "g.el", "0 1 4\n1 2 0.5\n")
    g = Graph.from_file(path)
    assert g.weighted and g.dist.weights.tolist() == [4.0, 0.5]
    k = Graph.generate("kronecker", scale=6, edgefactor=4, weights="uniform:3:9")
    assert k.weighted and 3 <= k.dist.weights.min() and k.dist.weights.max() <= 9
    assert not Graph.generate("kronecker", scale=6, edgefactor=4).weighted


# ------------------------------------------------------------------------- command line


def run_cli(*args, cwd, umask=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "distbfs", *map(str, args)],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=None if umask is None else (lambda: os.umask(umask)),
    )


def test_generate_convert_info_carry_weights(tmp_path):
    proc = run_cli(
        "generate", "grid2d", "--shape", "4x5", "--weights", "uniform:1:9", "-o", "g", cwd=tmp_path
    )
    assert proc.returncode == 0, proc.stderr
    assert "weighted (float32)" in proc.stdout
    info = run_cli("info", "g", cwd=tmp_path).stdout
    assert "weighted: yes" in info and "weights: float32, min 1, mean" in info
    api = Graph.generate("grid2d", shape=(4, 5), weights="uniform:1:9")
    np.testing.assert_array_equal(np.load(tmp_path / "g" / "weights.npy"), api.dist.weights)
    mean = api.dist.weights.mean(dtype=np.float64)
    assert f"mean {mean:.6g}, max {api.dist.weights.max():.6g}" in info
    write(tmp_path, "w.txt", "0 1 0.1\n1 2 3\n2 0 0\n")
    proc = run_cli("convert", "w.txt", "w.native", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "weighted (float64)" in proc.stdout
    np.testing.assert_array_equal(np.load(tmp_path / "w.native" / "weights.npy"), [0.1, 3, 0])
    info = run_cli("info", "w.native", cwd=tmp_path).stdout
    assert "weights: float64, min 0, mean 1.03333, max 3" in info
    plain = run_cli("info", "g", "--format", "native", cwd=tmp_path)
    assert plain.returncode == 0
    write(tmp_path, "p.txt", "0 1\n")
    assert "weighted: no" in run_cli("info", "p.txt", cwd=tmp_path).stdout
    bad = run_cli(
        "generate", "grid2d", "--shape", "2x2", "--weights", "uniform:9:1", "-o", "x", cwd=tmp_path
    )
    assert bad.returncode == 2 and bad.stderr.startswith("distbfs: error: --weights: expected")
    assert "'uniform:9:1'" in bad.stderr and not (tmp_path / "x").exists()


BAD_WEIGHTS = {
    "negative": ("-2.5", "negative weight -2.5"),
    "nan": ("nan", "weight nan is NaN"),
    "inf": ("inf", "infinite weight inf"),
    "huge": ("1e999", "infinite weight 1e999"),
    "word": ("heavy", "bad weight 'heavy': expected a number"),
    "mixed": (None, "expected 3 columns (as on the first data line), found 2"),
}
LINES = 3000


@pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found next to python or on PATH")
@pytest.mark.parametrize("ranks", [1, 3])
@pytest.mark.parametrize("case", sorted(BAD_WEIGHTS))
def test_bad_weight_exits_2_naming_file_line_and_value(tmp_path, ranks, case):
    if ranks > 1:
        pytest.importorskip("mpi4py")
    token, message = BAD_WEIGHTS[case]
    lines = [f"{i} {i + 1} {i % 7}" for i in range(LINES)]
    bad = LINES * 2 // 3  # in the last rank's range at 3 ranks
    lines[bad - 1] = f"{bad} {bad + 1}" if token is None else f"{bad} {bad + 1} {token}"
    write(tmp_path, "w.txt", "\n".join(lines) + "\n")
    for command in (["convert", "w.txt", "out"], ["info", "w.txt"]):
        result = distbfs(*command, cwd=tmp_path, ranks=ranks)
        assert_job_input_error(result, f"w.txt:{bad}: {message}")
        assert sorted(p.name for p in tmp_path.iterdir()) == ["w.txt"]  # nothing written


@pytest.mark.parametrize(
    ("name", "body", "line", "message"),
    [
        (
            "v.mtx",
            "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1\n2 3 -1\n",
            4,
            "negative value -1",
        ),
        (
            "v.mtx",
            "%%MatrixMarket matrix coordinate integer symmetric\n3 3 1\n2 1 x\n",
            3,
            "bad value 'x': expected a number",
        ),
        ("w.graph", "2 1 1\n2 -4\n1 -4\n", 2, "negative weight -4"),
        ("w.graph", "2 1 1\n2 nan\n1 1\n", 2, "weight nan is NaN"),
        ("w.edges", "0 1 1\n1 2 1.5.2\n", 2, "bad weight '1.5.2'"),
        ("w.edges", "0 1 1\n1 2 -0.0e0\n2 3 -inf\n", 3, "infinite weight -inf"),
    ],
)
def test_bad_weights_in_every_format(tmp_path, comm, name, body, line, message):
    path = write(tmp_path, name + ".gz", body)
    with pytest.raises(InputError, match=rf"^{path}:{line}: {message}".replace(".", r"\.")):
        read_graph(path, comm)


@pytest.mark.mpi
def test_bad_weight_reaches_every_rank(comm):
    path = comm.bcast_object(tempfile.mkdtemp(prefix="distbfs-w-") if comm.rank == 0 else None)
    try:
        lines = [f"{i} {i + 1} 1" for i in range(LINES)]
        lines[LINES - 10] = "5 6 -7"
        if comm.rank == 0:
            Path(path, "w.txt").write_text("\n".join(lines) + "\n")
        comm.barrier()
        with pytest.raises(InputError) as info:
            read_graph(os.path.join(path, "w.txt"), comm)
        assert info.value.all_ranks
        assert str(info.value).endswith(
            f"w.txt:{LINES - 9}: negative weight -7: weights must be non-negative"
        )
        assert len(set(comm.allgather_object(str(info.value)))) == 1
    finally:
        comm.barrier()
        if comm.rank == 0:
            shutil.rmtree(path, ignore_errors=True)


# ------------------------------------------------------------------------- first impressions


def test_native_directory_and_files_follow_the_umask(tmp_path, comm):
    graph = build_graph(
        comm, np.array([0]), np.array([1]), 2, directed=True, weights=np.array([1.0])
    )
    old = os.umask(0o027)
    try:
        write_native(graph, str(tmp_path / "g"), comm)
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "g").stat().st_mode) == 0o750
    for file in (tmp_path / "g").iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o640, file.name
    proc = run_cli("generate", "grid2d", "--shape", "3x3", "-o", "h", cwd=tmp_path, umask=0o022)
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE((tmp_path / "h").stat().st_mode) == 0o755
    assert {stat.S_IMODE(f.stat().st_mode) for f in (tmp_path / "h").iterdir()} == {0o644}


def test_non_square_matrix_market_is_refused(tmp_path, comm):
    path = write(
        tmp_path, "r.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 5 1\n1 5\n"
    )
    with pytest.raises(InputError, match=rf"^{path}:2: the matrix is 3 x 5: .* must be square"):
        read_graph(path, comm)
    proc = run_cli("info", "r.mtx", cwd=tmp_path)
    assert proc.returncode == 2 and "r.mtx:2: the matrix is 3 x 5" in proc.stderr


def test_gz_that_is_not_gzip(tmp_path, comm):
    path = tmp_path / "x.txt.gz"
    path.write_bytes(np.random.default_rng(1).bytes(4096))
    with pytest.raises(InputError, match=rf"^{path}: not a gzip file$"):
        read_graph(str(path), comm)
    proc = run_cli("info", "x.txt.gz", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stderr == "distbfs: error: x.txt.gz: not a gzip file\n"
    compressed = tmp_path / "y.txt.gz"
    compressed.write_bytes(gzip.compress(b"0 1\n"))
    assert read_graph(str(compressed), comm)[0].num_edges == 1


def test_directed_is_one_convention(tmp_path):
    general = write(
        tmp_path, "g.mtx", "%%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n"
    )
    symmetric = write(
        tmp_path, "s.mtx", "%%MatrixMarket matrix coordinate pattern symmetric\n3 3 1\n2 1\n"
    )
    metis = write(tmp_path, "m.graph", "2 1\n2\n1\n")
    assert Graph.from_file(general).directed and Graph.from_file(general, directed=True).directed
    assert not Graph.from_file(general, directed=False).directed
    assert Graph.from_file(general, directed=False).num_edges == 2
    assert not Graph.from_file(symmetric).directed
    assert not Graph.from_file(symmetric, directed=False).directed
    native = str(tmp_path / "n")
    Graph.from_file(metis).save(native)
    for path, kind in (
        (symmetric, "a symmetric Matrix Market file"),
        (metis, "a METIS graph"),
        (native, "a native graph recorded as undirected"),
    ):
        with pytest.raises(ValueError, match=rf"^directed: True, but {path} is {kind}"):
            Graph.from_file(path, directed=True)
    with pytest.raises(TypeError, match=r"^directed: expected True, False or None"):
        Graph.from_file(general, directed="yes")
    assert Graph.from_scipy(sp.eye(3, format="csr"), directed=None).directed is False


@pytest.mark.mpi
def test_directed_true_on_an_undirected_file_is_a_value_error_on_every_rank(comm):
    path = comm.bcast_object(tempfile.mkdtemp(prefix="distbfs-d-") if comm.rank == 0 else None)
    try:
        if comm.rank == 0:
            Path(path, "m.graph").write_text("2 1\n2\n1\n")
        comm.barrier()
        with pytest.raises(ValueError, match=r"^directed: True, but .* is a METIS graph"):
            Graph.from_file(
                os.path.join(path, "m.graph"),
                directed=True,
                comm="mpi" if comm.size > 1 else "auto",
            )
    finally:
        comm.barrier()
        if comm.rank == 0:
            shutil.rmtree(path, ignore_errors=True)


def test_from_scipy_takes_a_cupyx_matrix(monkeypatch):
    """A cupyx.scipy.sparse matrix is copied to the host with .get() (cupyx imported only for
    such objects; a stand-in module here, the real one on GPU machines below)."""
    host_matrix = sp.csr_matrix(np.array([[0, 3.0], [0, 0]]))

    class csr_matrix:
        shape = (2, 2)

        def get(self):
            return host_matrix

    csr_matrix.__module__ = "cupyx.scipy.sparse._csr"
    fake = types.ModuleType("cupyx.scipy.sparse")
    fake.issparse = lambda m: isinstance(m, csr_matrix)
    for name in ("cupyx", "cupyx.scipy"):
        monkeypatch.setitem(sys.modules, name, types.ModuleType(name))
    monkeypatch.setitem(sys.modules, "cupyx.scipy.sparse", fake)
    sys.modules["cupyx"].scipy = sys.modules["cupyx.scipy"]
    sys.modules["cupyx.scipy"].sparse = fake
    g = Graph.from_scipy(csr_matrix())
    assert g.directed and g.dist.weights.tolist() == [3.0]
    with pytest.raises(TypeError, match=r"^matrix: expected a scipy\.sparse or cupyx"):
        Graph.from_scipy(np.zeros((2, 2)))


@pytest.mark.gpu
def test_from_scipy_takes_a_real_cupyx_matrix():
    cupyx_sparse = pytest.importorskip("cupyx.scipy.sparse")
    import cupy

    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:
        pytest.skip(f"no CUDA device ({exc})")
    matrix = cupyx_sparse.csr_matrix(cupy.asarray(np.array([[0, 2.0], [1.0, 0]])))
    g = Graph.from_scipy(matrix, backend="numpy")
    assert g.directed and g.dist.weights.tolist() == [2.0, 1.0]
