"""Graph input/output on one rank: every format against a direct construction or scipy, every
error with its exact ``PATH:LINE``, the byte-range split, the shared real graphs, native files."""

from __future__ import annotations

import gzip
import os

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from distbfs.errors import GraphFormatError, InputError
from distbfs.graph import build_graph
from distbfs.io import LoadInfo, detect_format, read_graph, write_native
from distbfs.io.edgelist import EdgeListFormat
from distbfs.io.native import ranges
from distbfs.io.text import PAD, read_range, read_text
from distbfs.io.tokens import tokenize

import graphs


def write(tmp_path, name: str, text: str | bytes, *, gz: bool | None = None) -> str:
    """Write ``text`` to tmp_path/name, gzip-compressed when the name ends in .gz."""
    data = text.encode() if isinstance(text, str) else text
    path = tmp_path / name
    gz = name.endswith(".gz") if gz is None else gz
    path.write_bytes(gzip.compress(data) if gz else data)
    return str(path)


def reference(src, dst, n: int, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Global CSR (offsets, columns) the way build_graph defines it, built with scipy."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    a = sp.coo_matrix((np.ones(src.size), (src, dst)), shape=(n, n)).tocsr()
    if not directed:
        a = a + a.T
    a.setdiag(0)
    a.eliminate_zeros()
    a.sort_indices()
    return a.indptr.astype(np.int64), a.indices.astype(np.int64)


def weighted_reference(src, dst, weights, n: int, directed: bool):
    """Global CSR (offsets, columns, weights) as build_graph defines it: self-loops dropped,
    both directions of an undirected edge, of duplicates the smallest weight."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    weights = np.asarray(weights, np.float64)
    if not directed:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        weights = np.concatenate([weights, weights])
    keep = src != dst
    src, dst, weights = src[keep], dst[keep], weights[keep]
    order = np.lexsort((weights, dst, src))
    src, dst, weights = src[order], dst[order], weights[order]
    first = np.ones(src.size, dtype=bool)
    first[1:] = (src[1:] != src[:-1]) | (dst[1:] != dst[:-1])
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src[first], minlength=n), out=offsets[1:])
    return offsets, dst[first], weights[first]


def assert_graph(
    graph, offsets: np.ndarray, columns: np.ndarray, n: int, directed: bool, weights=None
) -> None:
    """This rank's rows of ``graph`` equal the striped rows of the global CSR (and its
    weights; None: the graph is unweighted)."""
    assert graph.n == n and graph.directed == directed
    assert graph.num_edges == columns.size
    rows = np.arange(graph.rank, n, graph.size)
    degrees = offsets[rows + 1] - offsets[rows]
    np.testing.assert_array_equal(np.diff(graph.row_offsets), degrees)
    expected = columns[ranges(offsets[rows], degrees)]
    np.testing.assert_array_equal(graph.column_indices, expected)
    if weights is None:
        assert graph.weights is None and not graph.weighted
    else:
        np.testing.assert_array_equal(graph.weights, weights[ranges(offsets[rows], degrees)])


def expect_error(path: str, comm, line: int | None, fragment: str, **kwargs) -> None:
    with pytest.raises(InputError) as info:
        read_graph(path, comm, **kwargs)
    where = f"{path}:{line}: " if line is not None else f"{path}: "
    message = str(info.value)
    assert message.startswith(where), message
    assert fragment in message, message
    assert info.value.all_ranks


# ---------------------------------------------------------------------------------------------
# Formats against direct constructions


EDGES = [(0, 1), (1, 2), (2, 0), (2, 3), (3, 3), (1, 2), (4, 0)]


@pytest.mark.parametrize("gz", [False, True])
def test_edge_list_two_and_three_columns(tmp_path, comm, gz):
    body = "# comment\n% other comment\n" + "".join(f"{u}\t{v}\n" for u, v in EDGES[:4])
    body += "\n   \n" + "".join(f" {u}  {v} \r\n" for u, v in EDGES[4:])
    path = write(tmp_path, "g.txt" + (".gz" if gz else ""), body)
    graph, info = read_graph(path, comm)
    src, dst = np.array(EDGES).T
    assert_graph(graph, *reference(src, dst, 5, True), 5, True)
    assert info.format == "edgelist" and info.bytes == os.path.getsize(path)
    weights = [1, 2.5, 3e4, 0, 7, 0.5, 2]  # (1, 2) twice: the smaller weight stays
    weighted = "".join(f"{u} {v} {w}\n" for (u, v), w in zip(EDGES, weights, strict=True))
    path = write(tmp_path, "w.edges" + (".gz" if gz else ""), weighted)
    graph, _ = read_graph(path, comm, directed=False)
    assert_graph(
        graph,
        *weighted_reference(src, dst, weights, 5, False)[:2],
        5,
        False,
        weighted_reference(src, dst, weights, 5, False)[2],
    )
    assert graph.weights.dtype == np.float32  # every weight exact in float32


def test_edge_list_sparse_ids_and_no_final_newline(tmp_path, comm):
    path = write(tmp_path, "g.el", "10 3\n3 10\n7 10")
    graph, _ = read_graph(path, comm)
    assert_graph(graph, *reference([10, 3, 7], [3, 10, 10], 11, True), 11, True)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    ("field", "symmetry", "values"),
    [
        ("pattern", "general", ["", "", "", ""]),
        ("integer", "symmetric", [" 3", " 1", " 0", " 9"]),
        ("real", "general", [" 1.5", " 2e-3", " .5", " 7E+2"]),
    ],
)
def test_matrix_market(tmp_path, comm, gz, field, symmetry, values):
    entries = [(1, 2), (3, 1), (5, 5), (2, 3)]
    body = f"%%MatrixMarket matrix coordinate {field} {symmetry}\n% a comment\n%\n5 5 4\n"
    body += "".join(f"{i} {j}{v}\n" for (i, j), v in zip(entries, values, strict=True))
    suffix = ".mtx" + (".gz" if gz else "")
    plain = write(tmp_path, "plain" + suffix, body)
    commented = body.replace("5 5 4\n", "5 5 4\n% first\n").replace("5 5 9", "%inner\n\n5 5 9")
    path = write(tmp_path, "m" + suffix, commented)
    directed = symmetry == "general"
    src, dst = np.array(entries).T - 1
    weights = None if field == "pattern" else [float(v) for v in values]
    for name in (plain, path):
        graph, _ = read_graph(name, comm)
        if weights is None:
            assert_graph(graph, *reference(src, dst, 5, directed), 5, directed)
        else:
            *csr, expected_weights = weighted_reference(src, dst, weights, 5, directed)
            assert_graph(graph, *csr, 5, directed, expected_weights)
    expected = graphs.read_matrix_market(plain)  # scipy agrees (it expands symmetric entries)
    if weights is None:
        assert_graph(graph, *reference(expected.row, expected.col, 5, directed), 5, directed)
    else:  # scipy's entries, both directions listed already: as a directed graph of them
        *csr, expected_weights = weighted_reference(
            expected.row, expected.col, expected.data, 5, True
        )
        assert_graph(graph, *csr, 5, directed, expected_weights)


def test_matrix_market_case_insensitive_banner(tmp_path, comm):
    path = write(
        tmp_path, "m.mtx", "%%matrixmarket MATRIX Coordinate Pattern Symmetric\n3 3 1\n3 1\n"
    )
    graph, _ = read_graph(path, comm)
    assert_graph(graph, *reference([2], [0], 3, False), 3, False)


@pytest.mark.parametrize("gz", [False, True])
def test_metis_plain(tmp_path, comm, gz):
    # vertex 4 has no neighbours (empty line); comments anywhere; leading spaces as in wing.graph.
    body = "% header comment\n5 4\n 2 3\n1 3\n% inner\n1 2 5\n\n3\n"
    path = write(tmp_path, "g.graph" + (".gz" if gz else ""), body)
    graph, info = read_graph(path, comm)
    assert info.format == "metis"
    assert_graph(graph, *reference([0, 0, 1, 2], [1, 2, 2, 4], 5, False), 5, False)


@pytest.mark.parametrize(
    ("header", "lines"),
    [
        ("4 3 1", ["2 7 3 1", "1 7", "1 1 4 5", "3 5"]),  # edge weights
        ("4 3 10 2", ["1 1 2 3", "0 0 1", "5 5 1 4", "1 1 3"]),  # ncon = 2 vertex weights
        ("4 3 111", ["9 1 2 7 3 1", "9 0 1 7", "9 5 1 1 4 5", "9 1 3 5"]),  # size, weight, edges
        ("4 3 011", ["1 2 7 3 1", "0 1 7", "5 1 1 4 5", "1 3 5"]),
    ],
)
def test_metis_edge_weights_are_read_and_vertex_weights_skipped(tmp_path, comm, header, lines):
    path = write(tmp_path, "w.graph", header + "\n" + "\n".join(lines) + "\n")
    graph, _ = read_graph(path, comm)
    if header.split()[-1].endswith("1") and len(header.split()) == 3:  # fmt with edge weights
        *csr, weights = weighted_reference([0, 0, 2], [1, 2, 3], [7, 1, 5], 4, False)
        assert_graph(graph, *csr, 4, False, weights)
    else:
        assert_graph(graph, *reference([0, 0, 2], [1, 2, 3], 4, False), 4, False)


def test_metis_trailing_blank_lines_are_tolerated(tmp_path, comm):
    path = write(tmp_path, "g.graph", "2 1\n2\n1\n\n\n")
    graph, _ = read_graph(path, comm)
    assert_graph(graph, *reference([0], [1], 2, False), 2, False)


def test_long_ids_parse_exactly(tmp_path, comm):
    ids = [0, 7, 12345678, 123456789, 9999999999999999, 10**16 + 1, 2**63 - 1, 10**18, 42]
    path = write(
        tmp_path, "big.txt", "".join(f"{a} {b}\n" for a, b in zip(ids, ids[::-1], strict=True))
    )
    share = read_text(EdgeListFormat(), path, comm)
    np.testing.assert_array_equal(share.src, np.array(ids, dtype=np.int64))
    np.testing.assert_array_equal(share.dst, np.array(ids[::-1], dtype=np.int64))
    assert share.n == 2**63 and share.directed and share.weights is None


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2**63 - 1), st.integers(0, 2**63 - 1)), min_size=1),
    st.sampled_from([" ", "\t", "  \t ", " \r"]),
)
def test_tokenizer_matches_python(tmp_path_factory, pairs, space):
    path = tmp_path_factory.mktemp("h") / "e.txt"
    path.write_text("".join(f"{space}{a}{space}{b}{space}\n" for a, b in pairs))
    from distbfs.comm.single import SingleRankCommunicator

    share = read_text(EdgeListFormat(), str(path), SingleRankCommunicator())
    assert share.src.tolist() == [a for a, _ in pairs]
    assert share.dst.tolist() == [b for _, b in pairs]
    assert share.n == max(max(p) for p in pairs) + 1


# ---------------------------------------------------------------------------------------------
# The byte-range split


def _lines_of_ranges(path: str, size: int, data_offset: int = 0) -> bytes:
    return b"".join(
        bytes(c.raw[c.begin :])
        for c in (read_range(path, r, size, data_offset) for r in range(size))
    )


@pytest.mark.parametrize("gz", [False, True])
def test_byte_ranges_partition_the_lines(tmp_path, gz):
    rng = np.random.default_rng(3)
    lines = [
        " ".join(map(str, rng.integers(0, 10 ** rng.integers(1, 12), rng.integers(0, 4))))
        for _ in range(3000)
    ]
    text = ("\n".join(lines) + "\n").encode()
    path = write(tmp_path, "r.txt", text, gz=gz)
    for size in (1, 2, 3, 4, 7, 64, 500 if gz else 5000):  # more ranks than lines / blocks
        assert _lines_of_ranges(path, size) == text, size
    for size in (1, 3):  # a header skipped by offset
        assert _lines_of_ranges(path, size, len(lines[0]) + 1) == text[len(lines[0]) + 1 :]
    no_newline = write(tmp_path, "n.txt", text[:-1], gz=gz)
    assert _lines_of_ranges(no_newline, 5) == text
    chunk = read_range(path, 1, 3)
    assert chunk.begin >= PAD and chunk.raw[chunk.begin - 1] in b" \n"


def test_multi_member_gzip(tmp_path, comm):
    text = "".join(f"{i} {i + 1}\n" for i in range(500))
    path = tmp_path / "m.txt.gz"
    path.write_bytes(gzip.compress(text[:1001].encode()) + gzip.compress(text[1001:].encode()))
    for size in (1, 2, 5):
        assert _lines_of_ranges(str(path), size) == text.encode()
    graph, _ = read_graph(str(path), comm)
    assert graph.num_edges == 500 and graph.n == 501


def test_tokenizer_drops_comment_lines_only():
    data = b" " * PAD + b"# a b\n1 #2\n  % x\n3 4\n"
    buf = np.frombuffer(bytearray(data), np.uint8)
    tok = tokenize(buf, PAD, buf.size, b"#%")
    assert [tok.text(i) for i in range(tok.count)] == ["1", "#2", "3", "4"]
    assert tok.comment.tolist() == [True, False, True, False]
    assert tok.per_line().tolist() == [0, 2, 0, 2]


# ---------------------------------------------------------------------------------------------
# Errors, each with its exact file and line


def test_missing_file_and_unknown_suffix(tmp_path, comm):
    missing = str(tmp_path / "nope.mtx")
    expect_error(missing, comm, None, "no such file")
    with pytest.raises(InputError, match="no such file"):
        detect_format(missing)
    odd = write(tmp_path, "g.csv", "1 2\n")
    expect_error(odd, comm, None, "unknown graph format")
    expect_error(str(tmp_path), comm, None, "without header.json")
    with pytest.raises(InputError, match="unknown graph format 'xml'"):
        read_graph(odd, comm, fmt="xml")
    graph, _ = read_graph(odd, comm, fmt="edgelist")  # an explicit format overrides the suffix
    assert graph.num_edges == 1


@pytest.mark.parametrize(
    "name", ["e.mtx", "e.txt", "e.graph", "e.mtx.gz", "e.txt.gz", "e.graph.gz"]
)
def test_empty_file(tmp_path, comm, name):
    expect_error(write(tmp_path, name, ""), comm, None, "empty file")


def test_edge_list_with_only_comments(tmp_path, comm):
    expect_error(write(tmp_path, "c.txt", "# nothing\n\n"), comm, None, "no edges")


MTX = "%%MatrixMarket matrix coordinate pattern general\n% c\n4 4 3\n"


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (MTX, 3, "announces 3 entries, the file holds only 0"),
        (MTX + "1 2\n2 3\n", 3, "announces 3 entries, the file holds only 2"),
        (MTX + "1 2\n2 3\n3 4\n% c\n\n1 1\n", 9, "more entries than the 3"),
        (MTX + "1 2\nabc 3\n3 4\n", 5, "bad token 'abc'"),
        (MTX + "1 2\n2 1.5\n3 4\n", 5, "bad token '1.5'"),
        (MTX + "1 -3\n2 3\n3 4\n", 4, "negative column index -3"),
        (MTX + "1 2\n2 3 4\n3 4\n", 5, "expected 2 columns, found 3"),
        (MTX + "1 2\n5 3\n3 4\n", 5, "row index 5 out of range 1..4"),
        (MTX + "1 2\n2 5\n3 4\n", 5, "column index 5 out of range 1..4"),
        (MTX + "1 2\n0 1\n3 4\n", 5, "row index 0 out of range 1..4"),
        (MTX + "1 2\n2 3\n99999999999999999999 4\n", 6, "row index 99999999999999999999 too large"),
        (
            "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 3 x1\n",
            4,
            "bad value 'x1'",
        ),
        (
            "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 2 1.0\n2 3\n",
            4,
            "expected 3 columns, found 2",
        ),
        ("%%MatrixMarket matrix array real general\n3 3\n1\n", 1, "format 'array'"),
        (
            "%%MatrixMarket matrix coordinate complex general\n3 3 1\n1 1 1 1\n",
            1,
            "field 'complex'",
        ),
        (
            "%%MatrixMarket matrix coordinate real hermitian\n3 3 1\n1 1 1\n",
            1,
            "symmetry 'hermitian'",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern skew-symmetric\n3 3 1\n1 2\n",
            1,
            "symmetry 'skew-symmetric'",
        ),
        ("%MatrixMarket matrix coordinate pattern general\n3 3 1\n1 2\n", 1, "bad MatrixMarket"),
        ("1 2\n", 1, "bad MatrixMarket banner"),
        ("%%MatrixMarket matrix coordinate pattern general\n%\n3 3\n1 2\n", 3, "bad size line"),
        (
            "%%MatrixMarket matrix coordinate pattern general\n3 x 1\n1 2\n",
            2,
            "bad column count N 'x'",
        ),
        (
            "%%MatrixMarket matrix coordinate pattern general\n% only\n",
            2,
            "file ends before the size line",
        ),
    ],
)
def test_matrix_market_errors(tmp_path, comm, gz, body, line, fragment):
    path = write(tmp_path, "bad.mtx" + (".gz" if gz else ""), body)
    expect_error(path, comm, line, fragment)


EL = "# c\n0 1\n1 2\n"


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (EL + "2 abc\n", 4, "bad token 'abc'"),
        (EL + "1.5 2\n", 4, "bad token '1.5'"),
        (EL + "-3 2\n", 4, "negative vertex id -3"),
        (EL + "2 3 4\n", 4, "expected 2 columns (as on the first data line), found 3"),
        ("0 1 1\n1 2\n", 2, "expected 3 columns (as on the first data line), found 2"),
        ("0 1 2 3\n", 1, "expected 2 or 3 columns"),
        ("# c\n\n7\n", 3, "expected 2 or 3 columns"),
        (EL + "9223372036854775808 1\n", 4, "vertex id 9223372036854775808 too large"),
        (EL + "1 12345678901234567890123\n", 4, "too large"),
        ("0 1 1\n1 2 one\n", 2, "bad weight 'one'"),
        (EL + "1 2\n3 x\n4 -5\n", 5, "bad token 'x'"),  # the first bad line wins
    ],
)
def test_edge_list_errors(tmp_path, comm, gz, body, line, fragment):
    path = write(tmp_path, "bad.txt" + (".gz" if gz else ""), body)
    expect_error(path, comm, line, fragment)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        ("3 2\n2\n1 3\n", 1, "announces n=3 vertices, the file holds only 2 vertex lines"),
        ("3 2\n", 1, "the file holds only 0 vertex lines"),
        ("2 1\n2\n1\n\n1\n", 5, "more vertex lines than the n=2"),
        ("3 2\n2\n1 3\n2 1\n", 1, "announces m=2 edges (4 adjacency entries)"),
        ("3 2\n2\n1 4\n2\n", 3, "neighbour 4 out of range 1..3"),
        ("3 2\n2\n1 0\n2\n", 3, "neighbour 0 out of range 1..3"),
        ("3 2\n2\n1 x\n2\n", 3, "bad token 'x'"),
        ("3 2\n2\n1 -3\n2\n", 3, "negative neighbour -3"),
        ("% c\n3 two\n", 2, "bad edge count m 'two'"),
        ("3\n2\n", 1, "bad METIS header"),
        ("3 2 2\n", 1, "bad METIS fmt '2'"),
        ("3 2 1 2\n", 1, "bad METIS ncon"),
        (
            "3 2 1\n2 1\n1 1 3 1\n2\n",
            4,
            "expected 0 vertex size/weight value(s) then neighbours with",
        ),
        ("3 2 1\n2 1\n1 1 3 x\n2 1\n", 3, "bad weight 'x'"),
        ("3 2 10\n1 2\n\n1 2\n", 3, "expected 1 vertex size/weight"),
    ],
)
def test_metis_errors(tmp_path, comm, gz, body, line, fragment):
    path = write(tmp_path, "bad.graph" + (".gz" if gz else ""), body)
    expect_error(path, comm, line, fragment)


def test_truncated_gzip_stream(tmp_path, comm):
    data = gzip.compress("".join(f"{i} {i + 1}\n" for i in range(5000)).encode())
    path = tmp_path / "t.txt.gz"
    path.write_bytes(data[: len(data) // 2])
    expect_error(str(path), comm, None, "truncated gzip stream")


# ---------------------------------------------------------------------------------------------
# Real graphs (numbers from /work/shared/data/README.md)


def _metis_edges(path: str) -> tuple[np.ndarray, np.ndarray, int]:
    with gzip.open(path, "rt") as f:
        lines = [line for line in f.read().split("\n") if not line.startswith("%")]
    n = int(lines[0].split()[0])
    neighbours = [np.array(line.split(), dtype=np.int64) - 1 for line in lines[1 : n + 1]]
    src = np.repeat(np.arange(n), [a.size for a in neighbours])
    return src, np.concatenate(neighbours), n


@pytest.mark.parametrize(
    ("name", "n", "lines", "directed"),
    [
        ("luxembourg_osm.mtx.gz", 114_599, 119_666, False),
        ("wing.graph.gz", 62_032, 121_544, False),
        ("p2p-Gnutella31.txt.gz", 62_586, 147_892, True),
        ("CA-CondMat.txt.gz", 108_300, 186_936, True),  # sparse ids up to 108,299
        ("wiki-Vote.txt.gz", 8_298, 103_689, True),
        ("blogcatalog.edges.gz", 10_312, 333_983, True),
    ],
)
def test_real_graphs(data_dir, comm, name, n, lines, directed):
    path = str(data_dir / name)
    graph, info = read_graph(path, comm)
    assert graph.n == n and graph.directed == directed
    assert info.bytes == os.path.getsize(path) and info.seconds > 0
    if name.endswith(".mtx.gz"):
        coo = graphs.read_matrix_market(path)
        src, dst = coo.row, coo.col
        assert graph.num_edges == 2 * lines  # no self-loops or duplicates in this mesh
    elif name.endswith(".graph.gz"):
        src, dst, _ = _metis_edges(path)
        assert graph.num_edges == 2 * lines  # m in the header, both directions stored
    else:
        src, dst = np.loadtxt(path, dtype=np.int64, comments=("#", "%"), ndmin=2).T
        assert src.size == lines
    assert_graph(graph, *reference(src, dst, n, directed), n, directed)


def test_ca_condmat_self_loops_dropped(data_dir, comm):
    graph, _ = read_graph(str(data_dir / "CA-CondMat.txt.gz"), comm)
    assert graph.num_edges == 186_936 - 58  # 58 self-loops, no duplicates
    undirected, _ = read_graph(str(data_dir / "CA-CondMat.txt.gz"), comm, directed=False)
    assert undirected.num_edges == graph.num_edges  # both directions were listed already
    assert not undirected.directed


# ---------------------------------------------------------------------------------------------
# Native format


def test_native_round_trip(tmp_path, comm, data_dir):
    graph, _ = read_graph(str(data_dir / "p2p-Gnutella31.txt.gz"), comm)
    out = str(tmp_path / "p2p.csr")
    write_native(graph, out, comm)
    assert detect_format(out) == "native"
    assert sorted(os.listdir(tmp_path)) == ["p2p.csr"]  # no temporary left behind
    again, info = read_graph(out, comm)
    assert info.format == "native" and isinstance(info, LoadInfo)
    assert again.n == graph.n and again.num_edges == graph.num_edges and again.directed
    np.testing.assert_array_equal(again.row_offsets, graph.row_offsets)
    np.testing.assert_array_equal(again.column_indices, graph.column_indices)
    assert again.column_indices.dtype == np.int32
    offsets = np.load(os.path.join(out, "row_offsets.npy"))
    assert offsets.dtype == np.int64 and offsets.shape == (graph.n + 1,)

    undirected, _ = read_graph(out, comm, directed=False)  # rebuilt through build_graph
    expected, _ = read_graph(str(data_dir / "p2p-Gnutella31.txt.gz"), comm, directed=False)
    assert not undirected.directed and undirected.num_edges == expected.num_edges
    np.testing.assert_array_equal(undirected.column_indices, expected.column_indices)

    small = build_graph(comm, np.array([0, 1]), np.array([1, 2]), 4, directed=False)
    write_native(small, out, comm)  # replaces the existing native directory
    replaced, _ = read_graph(out, comm)
    assert_graph(replaced, *reference([0, 1], [1, 2], 4, False), 4, False)
    assert sorted(os.listdir(tmp_path)) == ["p2p.csr"]


def test_native_empty_graph_and_refusals(tmp_path, comm):
    empty = build_graph(comm, np.zeros(0, np.int64), np.zeros(0, np.int64), 3, directed=True)
    write_native(empty, str(tmp_path / "e"), comm)
    graph, _ = read_graph(str(tmp_path / "e"), comm)
    assert graph.n == 3 and graph.num_edges == 0 and graph.row_offsets.tolist() == [0, 0, 0, 0]
    blocker = write(tmp_path, "file.txt", "0 1\n")
    with pytest.raises(InputError, match="refusing to replace"):
        write_native(empty, blocker, comm)
    assert open(blocker).read() == "0 1\n"


def test_native_corrupt_files(tmp_path, comm):
    graph = build_graph(comm, np.array([0, 1]), np.array([1, 2]), 3, directed=True)
    out = tmp_path / "g"
    write_native(graph, str(out), comm)
    header = (out / "header.json").read_text()
    (out / "header.json").write_text(header.replace('"version": 1', '"version": 7'))
    with pytest.raises(GraphFormatError, match=r"header\.json: unsupported version 7"):
        read_graph(str(out), comm)
    (out / "header.json").write_text(header.replace('"num_edges": 2', '"num_edges": 3'))
    with pytest.raises(GraphFormatError, match="row offsets are not a CSR of num_edges entries"):
        read_graph(str(out), comm)
    (out / "header.json").write_text(header)
    np.save(out / "column_indices.npy", np.array([5, 1], dtype=np.int32))
    with pytest.raises(GraphFormatError, match="out of range"):
        read_graph(str(out), comm)


def test_progress_reports_parsed_bytes(tmp_path, comm):
    path = write(tmp_path, "p.txt", "".join(f"{i} {i + 1}\n" for i in range(300_000)))
    calls = []
    graph, _ = read_graph(path, comm, progress=lambda done, total: calls.append((done, total)))
    assert graph.num_edges == 300_000 and len(calls) > 1  # one call per piece of the range
    assert calls[-1] == (os.path.getsize(path), os.path.getsize(path))
    assert (np.diff([done for done, _ in calls]) > 0).all()
