"""Compressed CSR columns (``distbfs.compressed``): the varint and zigzag codes round-trip at
their edges; reading compressed columns by edge slots, whole rows or all at once gives the plain
columns (empty rows, rows across chunks, 64-bit ids, any rank's rows); every traversal on a
compressed graph gives the plain graph's results on every test graph, at any rank count; the
API and command line refuse what they cannot do.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import distbfs
import distbfs.compressed as compressed
from distbfs.api.graph import Graph
from distbfs.backends.numpy import NumpyBackend
from distbfs.compressed import (
    CompressedColumns,
    decode_varints,
    encode_varints,
    unzigzag,
    zigzag,
)
from distbfs.errors import InvalidArgumentValue
from distbfs.runtime import get_communicator

import graphs


def test_codes_round_trip_at_their_edges():
    signed = np.array([0, -1, 1, -(2**40), 2**40, -(2**62), 2**62 - 1], dtype=np.int64)
    np.testing.assert_array_equal(unzigzag(zigzag(signed)), signed)
    np.testing.assert_array_equal(zigzag(np.array([0, -1, 1, -2])), [0, 1, 2, 3])
    edges = [0, 1, 127, 128, 16383, 16384, 2**35, 2**63 - 1, 2**64 - 1]
    values = np.array(edges, dtype=np.uint64)
    data = encode_varints(values)
    assert data.shape[0] == 1 + 1 + 1 + 2 + 2 + 3 + 6 + 9 + 10
    np.testing.assert_array_equal(decode_varints(data), values)
    assert decode_varints(encode_varints(np.zeros(0, np.uint64))).shape == (0,)


def random_rows(rng, rows: int, n: int, dtype, max_degree: int = 40):
    """(row offsets, sorted unique columns) with empty rows among them."""
    degrees = rng.integers(0, max_degree, rows)
    degrees[::5] = 0
    offsets = np.zeros(rows + 1, dtype=np.int64)
    np.cumsum(degrees, out=offsets[1:])
    parts = [np.sort(rng.choice(n, int(d), replace=False)) for d in degrees]
    columns = np.concatenate(parts) if parts else np.zeros(0)
    return offsets, columns.astype(dtype)


@pytest.mark.parametrize(("rank", "size"), [(0, 1), (2, 3)])
@pytest.mark.parametrize("chunk", [compressed.CHUNK_EDGES, 50])
def test_columns_read_like_the_plain_ones(monkeypatch, rank, size, chunk):
    monkeypatch.setattr(compressed, "CHUNK_EDGES", chunk)
    rng = np.random.default_rng(rank + chunk)
    offsets, columns = random_rows(rng, 400, 6000, np.int32)
    coded = CompressedColumns.encode(offsets, columns, rank, size)
    np.testing.assert_array_equal(coded.decode(), columns)
    np.testing.assert_array_equal(np.asarray(coded), columns)
    slots = rng.integers(0, columns.shape[0], 2000)
    np.testing.assert_array_equal(coded[slots], columns[slots])
    np.testing.assert_array_equal(coded[slots.reshape(40, 50)], columns[slots].reshape(40, 50))
    np.testing.assert_array_equal(coded[:7], columns[:7])
    np.testing.assert_array_equal(coded[3:200:7], columns[3:200:7])
    assert coded[np.zeros(0, np.int64)].shape == (0,)
    rows = np.array([3, 3, 0, 399, 5, 17])
    expected = np.concatenate([columns[offsets[r] : offsets[r + 1]] for r in rows])
    np.testing.assert_array_equal(coded.rows(rows), expected)
    degrees = offsets[rows + 1] - offsets[rows]
    counts = np.minimum(degrees, [2, 0, 5, 1, 39, 3])  # first neighbours only: decoded alone
    prefix = np.concatenate(
        [columns[offsets[r] : offsets[r] + c] for r, c in zip(rows, counts, strict=True)]
    )
    np.testing.assert_array_equal(coded.rows(rows, np.int64, counts), prefix)
    assert coded.dtype == np.int32 and coded.shape == columns.shape and len(coded) == columns.size
    assert coded.size == columns.size and coded.ranks == size and coded.ndim == 1
    assert coded.nbytes < columns.nbytes
    assert compressed.coded_bytes(offsets, columns, rank, size) == coded.nbytes
    with pytest.raises(IndexError, match="edge slot out of range"):
        coded[np.array([columns.shape[0]])]


@pytest.mark.parametrize("wide", [False, True])
def test_byte_offsets_of_either_width(monkeypatch, wide):
    """Byte offsets are 4 bytes while the bytes fit 32 bits, 8 beyond (forced here)."""
    assert compressed.byte_offset_dtype(2**32 - 1) == np.uint32
    assert compressed.byte_offset_dtype(2**32) == np.int64
    if wide:
        monkeypatch.setattr(compressed, "byte_offset_dtype", lambda total: np.dtype(np.int64))
    offsets, columns = random_rows(np.random.default_rng(9), 300, 5000, np.int32)
    coded = CompressedColumns.encode(offsets, columns)
    assert coded.byte_offsets.dtype == (np.int64 if wide else np.uint32)
    np.testing.assert_array_equal(coded.decode(), columns)
    slots = np.arange(0, columns.shape[0], 3)
    np.testing.assert_array_equal(coded[slots], columns[slots])
    assert coded.problem(5000) is None


def test_sixty_four_bit_ids():
    rng = np.random.default_rng(5)
    n = 3 * 2**32
    offsets = np.array([0, 3, 3, 5], dtype=np.int64)
    columns = np.array([0, 2**33, n - 1, 7, 2**32 + 1], dtype=np.int64)
    coded = CompressedColumns.encode(offsets, columns, 1, 2)
    np.testing.assert_array_equal(coded.decode(), columns)
    slots = rng.integers(0, 5, 20)
    np.testing.assert_array_equal(coded[slots], columns[slots])


def pair(case, comm, weights=None, backend=None):
    """(plain, compressed) API graphs of ``case`` on ``backend`` (default numpy)."""
    backend = NumpyBackend() if backend is None else backend
    dist = graphs.build(case, comm, backend, weights)
    plain = Graph(dist, comm, backend)
    return plain, plain.compress()


def same(a, b) -> None:
    np.testing.assert_array_equal(graphs.host(a), graphs.host(b))


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(graphs.ANY_RANK_COUNT))
def test_every_traversal_reads_compressed_rows_alike(backend, backend_comm, name):
    """The same distances, labels and (numpy: the same; a GPU's are whichever thread wins:
    validated) trees from compressed rows as from plain ones."""
    case = graphs.ANY_RANK_COUNT[name]
    src, _, n, _ = case
    weights = (np.arange(src.shape[0]) * 7919 % 23).astype(np.float64)
    plain, small = pair(case, backend_comm, weights, backend)
    assert small.compressed and not plain.compressed
    exact = backend.name == "numpy"
    sources = [0, n - 1] if n > 1 else [0]
    for strategy in ("hybrid", "direction_optimizing", "two_phase"):
        a = distbfs.bfs(plain, sources, predecessors=True, strategy=strategy)
        b = distbfs.bfs(small, sources, predecessors=True, strategy=strategy, validate=True)
        same(a.distances, b.distances)
        if exact:
            same(a.predecessors, b.predecessors)
        same(a.distances, distbfs.bfs(small, sources, strategy=strategy).distances)  # no parents
    a = distbfs.sssp(plain, 0, predecessors=True)
    b = distbfs.sssp(small, 0, predecessors=True, validate=True)
    same(a.distances, b.distances)
    if exact:
        same(a.predecessors, b.predecessors)
    same(distbfs.connected_components(plain).labels, distbfs.connected_components(small).labels)
    many = list(range(min(n, 70)))
    same(distbfs.bfs_many(plain, many).distances, distbfs.bfs_many(small, many).distances)
    if not exact:
        with pytest.raises(InvalidArgumentValue, match="contract_expand runs every level"):
            distbfs.bfs(small, 0, strategy="contract_expand")


@pytest.mark.gpu
@pytest.mark.parametrize("point", [4, 128])
@pytest.mark.parametrize(("rank", "size", "dtype"), [(0, 1, np.int32), (2, 3, np.int64)])
def test_device_columns_read_like_the_plain_ones(point, rank, size, dtype):
    """Coded on the GPU into the host encoder's bytes, with decode points every ``point``
    slots (the same points when the host's codes are adopted); decoded whole, by ranges, by
    gathered slots and by rows."""
    from conftest import make_backend

    make_backend("cuda")
    import cupy

    from distbfs.backends.cuda.compressed import DeviceColumns
    from distbfs.backends.cuda.launch_policy import LaunchPolicy

    rng = np.random.default_rng(point + rank)
    n = 3 * 2**32 if dtype == np.int64 else 6000  # 64-bit ids: codes of 5 bytes and more
    offsets, columns = random_rows(rng, 400, n, dtype, max_degree=300)
    policy = LaunchPolicy(decode_point_edges=point)
    coded = DeviceColumns.encode_on_device(
        cupy.asarray(offsets), cupy.asarray(columns), rank, size, policy
    )
    host = CompressedColumns.encode(offsets, columns, rank, size)
    same(coded.data, host.data)
    same(coded.byte_offsets, host.byte_offsets.astype(np.int64))
    adopted = DeviceColumns.from_host(host, policy)  # points found by the device
    for name in ("data", "byte_offsets", "point_bytes", "point_values"):
        same(getattr(adopted, name), getattr(coded, name))
    assert coded.point_bytes.shape[0] == -(-columns.shape[0] // point)
    same(coded.decode(), columns)
    same(np.asarray(coded), columns)
    for first, last in ((0, 1), (5, 3001), (point * 3 - 1, point * 9 + 1)):
        same(coded[first:last], columns[first:last])
    same(coded[3:2000:7], columns[3:2000:7])
    slots = rng.integers(0, columns.shape[0], 2000)
    same(coded[cupy.asarray(slots)], columns[slots])
    same(coded[cupy.asarray(slots.reshape(40, 50))], columns[slots].reshape(40, 50))
    rows = np.array([3, 3, 0, 399, 5, 17])
    expected = np.concatenate([columns[offsets[r] : offsets[r + 1]] for r in rows])
    same(coded.rows(cupy.asarray(rows)), expected)
    assert coded.dtype == dtype
    assert point < 128 or coded.nbytes < columns.nbytes  # points every 4 slots cost more
    with pytest.raises(IndexError, match="edge slot out of range"):
        coded[cupy.asarray([columns.shape[0]])]


@pytest.mark.gpu
@pytest.mark.parametrize("point", [4, 128])
@pytest.mark.parametrize(
    "name", ["star", "grid", "loops_and_duplicates", "random_undirected", "random_directed"]
)
def test_one_gpu_kernels_decode_compressed_rows(monkeypatch, point, name):
    """On one GPU, delta-stepping with its tree and Afforest's links run in place on compressed
    rows (``kernels/relax.cu``, ``kernels/link.cu``: the _varint kernels), with decode points
    every ``point`` slots, so that short and long rows are cut into pieces: the plain graph's
    distances and labels, a validated tree."""
    from conftest import make_backend

    make_backend("cuda")
    from distbfs.backends.cuda.backend import CudaBackend
    from distbfs.backends.cuda.launch_policy import LaunchPolicy

    backend = CudaBackend(LaunchPolicy(decode_point_edges=point))
    calls = []
    for method in ("shortest_paths_in_place", "link_in_place"):
        original = getattr(backend, method)

        def counted(*args, _original=original, _method=method, **kwargs):
            calls.append(_method)
            return _original(*args, **kwargs)

        monkeypatch.setattr(backend, method, counted)
    case = graphs.ANY_RANK_COUNT[name]
    weights = (np.arange(case[0].shape[0]) * 7919 % 23).astype(np.float64)  # zeros too
    plain, small = pair(case, get_communicator("auto"), weights, backend)
    for source in (0, case[2] - 1):
        a = distbfs.sssp(plain, source, predecessors=True)
        b = distbfs.sssp(small, source, predecessors=True, validate=True)
        same(a.distances, b.distances)
    same(distbfs.connected_components(plain).labels, distbfs.connected_components(small).labels)
    assert calls.count("shortest_paths_in_place") >= 4 and "link_in_place" in calls


def test_the_graph_and_its_compressed_form(comm):
    case = graphs.random_graph(3000, 12000, 2, False)
    plain, small = pair(case, comm)
    assert small.compress() is small
    assert small.dist.nbytes() < plain.dist.nbytes()
    assert small.num_edges == plain.num_edges and small.num_vertices == plain.num_vertices
    same(np.asarray(small.dist.column_indices), plain.dist.column_indices)


# --- the command line ----------------------------------------------------------------------


def test_commands_search_compressed_rows_alike(tmp_path):
    from test_cli import ok, run

    generate = ("generate", "kronecker", "--scale", "10", "--weights", "uniform:1:9", "-o")
    ok(run(*generate, "k", cwd=tmp_path))
    info = ok(run("info", "k", cwd=tmp_path))
    assert "compressed columns (--compress): " in info and "x; varint gaps" in info
    for flags in ([], ["--compress"]):
        tag = "c" if flags else "p"
        out = ok(
            run(
                "bfs",
                "k",
                "--source",
                "3",
                "--predecessors",
                "--output",
                f"{tag}b",
                "--backend",
                "numpy",
                *flags,
                cwd=tmp_path,
            )
        )
        assert ("compressed the columns" in out) == bool(flags)
        ok(
            run(
                "sssp",
                "k",
                "--source",
                "3",
                "--predecessors",
                "--output",
                f"{tag}s",
                "--backend",
                "numpy",
                *flags,
                cwd=tmp_path,
            )
        )
        ok(run("cc", "k", "--output", f"{tag}c", "--backend", "numpy", *flags, cwd=tmp_path))
        bench = ok(run("bench", "k", "--roots", "2", "--backend", "numpy", *flags, cwd=tmp_path))
        assert "validation: passed" in bench
    for name in ("b.distances", "b.predecessors", "s.distances", "s.predecessors", "c.components"):
        same(np.load(tmp_path / f"p{name}.npy"), np.load(tmp_path / f"c{name}.npy"))
    # a file written compressed: fewer bytes, searched alike
    ok(run("convert", "k", "kz", "--compress", cwd=tmp_path))
    ok(run(*generate, "kg", "--compress", cwd=tmp_path))
    for name in ("kz", "kg"):
        assert json.loads((tmp_path / name / "header.json").read_text())["version"] == 3
        ok(
            run(
                "bfs",
                name,
                "--source",
                "3",
                "--predecessors",
                "--output",
                f"{name}b",
                "--backend",
                "numpy",
                cwd=tmp_path,
            )
        )
        same(np.load(tmp_path / "pb.distances.npy"), np.load(tmp_path / f"{name}b.distances.npy"))
        same(
            np.load(tmp_path / "pb.predecessors.npy"),
            np.load(tmp_path / f"{name}b.predecessors.npy"),
        )
    plain_bytes = sum(f.stat().st_size for f in (tmp_path / "k").iterdir())
    assert sum(f.stat().st_size for f in (tmp_path / "kz").iterdir()) < plain_bytes


def test_compress_refuses_what_reads_plain_rows():
    """On a GPU the fused kernel (contract_expand) reads plain rows: the flag is refused
    before any graph is built; batched searches decode; the numpy backend takes everything."""
    from types import SimpleNamespace

    from distbfs.cli.commands import check_compress
    from distbfs.errors import InputError

    def ctx(backend, **args):
        return SimpleNamespace(args=SimpleNamespace(compress=True, **args), backend=backend)

    cuda = SimpleNamespace(name="cuda")
    with pytest.raises(InputError, match="--compress: --strategy contract_expand runs every"):
        check_compress(ctx(cuda, strategy="contract_expand"))
    check_compress(ctx(cuda, strategy=None, batched=True))
    check_compress(ctx(cuda, strategy="direction_optimizing", batched=False))
    check_compress(ctx(NumpyBackend(), strategy="contract_expand", batched=True))


# --- native files with compressed columns ------------------------------------------------------


@pytest.mark.mpi
@pytest.mark.parametrize("name", ["random_directed", "components", "one_vertex", "star"])
def test_native_files_with_compressed_columns(monkeypatch, comm, shared, name):
    """Written compressed at P ranks (7 elements at a time): version 3, fewer bytes, and read
    back (at P ranks, and on one) as the same graph, compressed on numpy."""
    from distbfs.comm.single import SingleRankCommunicator
    from distbfs.io import native, read_graph, write_native

    monkeypatch.setattr(native, "WRITE_CHUNK", 7)
    shared_dir = shared / name
    if comm.rank == 0:
        shared_dir.mkdir()
    comm.barrier()

    case = graphs.ANY_RANK_COUNT[name]
    weights = (np.arange(case[0].shape[0]) % 9 + 1).astype(np.float32)
    plain, small = pair(case, comm, weights)
    for graph, out in ((plain, "from_plain"), (small, "from_compressed")):
        write_native(graph.dist, str(shared_dir / out), comm, compress=True)
        again, _ = read_graph(str(shared_dir / out), comm)
        assert again.compressed
        same(np.asarray(again.column_indices), plain.dist.column_indices)
        same(again.row_offsets, plain.dist.row_offsets)
        same(again.weights, plain.dist.weights)
    write_native(plain.dist, str(shared_dir / "plain"), comm)
    if comm.rank == 0:
        header = json.loads((shared_dir / "from_plain" / "header.json").read_text())
        assert header["version"] == 3 and header["columns"] == "varint"
        assert not (shared_dir / "from_plain" / "column_indices.npy").exists()
        one, _ = read_graph(str(shared_dir / "from_compressed"), SingleRankCommunicator())
        whole, _ = read_graph(str(shared_dir / "plain"), SingleRankCommunicator())
        same(np.asarray(one.column_indices), whole.column_indices)
        for a, b in ((shared_dir / "from_plain", shared_dir / "from_compressed"),):
            same(np.load(a / "column_bytes.npy"), np.load(b / "column_bytes.npy"))
    undirected, _ = read_graph(str(shared_dir / "from_plain"), comm, directed=False)
    assert undirected.compressed != case[3]  # a directed file is rebuilt symmetric, plain
    assert undirected.num_edges >= plain.num_edges
    comm.barrier()


def test_corrupt_compressed_files(tmp_path, comm):
    from distbfs.errors import GraphFormatError
    from distbfs.io import read_graph, write_native

    plain, _ = pair(graphs.grid(5, 4), comm)
    out = tmp_path / "g"
    write_native(plain.dist, str(out), comm, compress=True)
    header = (out / "header.json").read_text()
    data = np.load(out / "column_bytes.npy")
    offsets = np.load(out / "column_byte_offsets.npy")

    def refused(match):
        with pytest.raises(GraphFormatError, match=match):
            read_graph(str(out), comm)
        (out / "header.json").write_text(header)
        np.save(out / "column_bytes.npy", data)
        np.save(out / "column_byte_offsets.npy", offsets)

    (out / "header.json").write_text(header.replace(', "columns": "varint"', ""))
    refused("bad columns None for version 3")
    np.save(out / "column_bytes.npy", data | 0x80)  # no value ever ends
    refused("a row's bytes do not hold as many values as its degree")
    broken = data.copy()
    broken[0] = 0x7E  # the first row's first neighbour far out of range
    np.save(out / "column_bytes.npy", broken)
    refused("column ids out of range or rows not sorted and unique")
    shuffled = offsets.copy()
    shuffled[1] = offsets[-1]  # row 1 would end before it starts
    np.save(out / "column_byte_offsets.npy", shuffled)
    refused("byte offsets are not a partition")


def test_compressed_files_on_every_backend(tmp_path, backend):
    """A compressed file searches alike on every backend, read compressed: the CUDA backend
    copies the codes to the device and finds the decode points there, the encoder's own."""
    from distbfs.comm.single import SingleRankCommunicator

    one = SingleRankCommunicator()
    case = graphs.random_graph(3000, 12000, 2, False)
    plain, _ = pair(case, one)
    plain.save(tmp_path / "z", compress=True)
    graph = distbfs.Graph.from_file(tmp_path / "z", backend=backend, comm=one)
    assert graph.compressed
    if backend.name == "cuda":
        coded = backend.compress_graph(pair(case, one, backend=backend)[0].dist).column_indices
        read = graph.dist.column_indices
        for name in ("data", "byte_offsets", "point_bytes", "point_values"):
            same(getattr(read, name), getattr(coded, name))
    for strategy in ("hybrid", "direction_optimizing"):
        a = distbfs.bfs(plain, [0, 7], predecessors=True, strategy=strategy)
        b = distbfs.bfs(graph, [0, 7], predecessors=True, strategy=strategy, validate=True)
        same(a.distances, b.distances)
    same(distbfs.connected_components(plain).labels, distbfs.connected_components(graph).labels)


def test_lanes_pull_compressed_rows_piece_by_piece(monkeypatch, comm):
    """Batched BFS pulls compressed rows a few columns at a time (pieces of 5 here), alike."""
    from distbfs.backends.numpy import lanes

    monkeypatch.setattr(lanes, "PULL_PIECE_EDGES", 5)
    case = graphs.random_graph(3000, 12000, 2, False)
    plain, small = pair(case, comm)
    sources = list(range(0, 3000, 47))
    same(distbfs.bfs_many(plain, sources).distances, distbfs.bfs_many(small, sources).distances)
    assert any(row.direction == "bottom_up" for row in distbfs.bfs_many(small, sources).batches[0])
