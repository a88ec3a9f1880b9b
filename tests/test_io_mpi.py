"""Graph input/output at any rank count: the same file gives the same graph at 1..P ranks, native
files written at P ranks read back at P ranks, and an error found by one rank reaches all ranks.

Run as ``mpiexec -n P python -m pytest --with-mpi -m mpi tests/test_io_mpi.py``.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from distbfs.comm.single import SingleRankCommunicator
from distbfs.errors import InputError
from distbfs.io import read_graph, write_native
from distbfs.io.native import ranges

pytestmark = pytest.mark.mpi


def put(comm, shared: Path, name: str, text: str) -> str:
    """Rank 0 writes the file (gzip for .gz), every rank gets its path."""
    path = shared / name
    if comm.rank == 0:
        data = text.encode()
        path.write_bytes(gzip.compress(data) if name.endswith(".gz") else data)
    comm.barrier()
    return str(path)


def assert_same_as_one_rank(graph, path: str, **kwargs) -> None:
    """This rank's rows equal those of the graph read by one rank, in-process."""
    whole, _ = read_graph(path, SingleRankCommunicator(), **kwargs)
    offsets = np.asarray(whole.row_offsets)
    columns = np.asarray(whole.column_indices)
    assert (graph.n, graph.num_edges, graph.directed) == (whole.n, whole.num_edges, whole.directed)
    rows = np.arange(graph.rank, graph.n, graph.size)
    degrees = offsets[rows + 1] - offsets[rows]
    np.testing.assert_array_equal(np.diff(graph.row_offsets), degrees)
    slots = ranges(offsets[rows], degrees)
    np.testing.assert_array_equal(graph.column_indices, columns[slots])
    if whole.weights is None:  # weights too, the same dtype on every rank count
        assert graph.weights is None
    else:
        assert graph.weights.dtype == whole.weights.dtype
        np.testing.assert_array_equal(graph.weights, np.asarray(whole.weights)[slots])


def _files() -> dict[str, str]:
    """Generated files big enough that every rank gets lines, comments scattered through."""
    rng = np.random.default_rng(11)
    n, m = 300, 2500
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    edge_lines = [f"{u} {v}" for u, v in zip(src, dst, strict=True)]
    for i in range(0, m, 97):
        edge_lines[i] += "\n# comment line\n"
    edges = "# header\n" + "\n".join(edge_lines) + "\n"
    weighted = "\n".join(
        f"{u}\t{v}\t{w:.3f}" for u, v, w in zip(src, dst, rng.random(m), strict=True)
    )
    keep = src != dst
    mtx = "%%MatrixMarket matrix coordinate real symmetric\n% c\n"
    mtx += f"{n} {n} {int(keep.sum())}\n"
    mtx += "".join(
        f"{u + 1} {v + 1} {w}\n%\n"
        for u, v, w in zip(src[keep], dst[keep], rng.random(m), strict=False)
    )
    adjacency = [set() for _ in range(n)]
    for u, v in zip(src[keep], dst[keep], strict=True):
        adjacency[u].add(v + 1)
        adjacency[v].add(u + 1)
    metis = f"% c\n{n} {sum(map(len, adjacency)) // 2}\n"
    metis += "\n".join(" ".join(map(str, sorted(a))) for a in adjacency) + "\n"
    return {
        "e.txt": edges,
        "e.txt.gz": edges,
        "w.edges": weighted,
        "m.mtx": mtx,
        "m.mtx.gz": mtx,
        "g.graph": metis,
        "g.graph.gz": metis,
    }


FILES = _files()


@pytest.mark.parametrize("name", sorted(FILES))
def test_generated_files_same_graph_at_any_rank_count(comm, shared, name):
    path = put(comm, shared, name, FILES[name])
    graph, info = read_graph(path, comm)
    assert graph.size == comm.size and info.seconds == comm.allreduce(info.seconds, op="max")
    assert_same_as_one_rank(graph, path)
    assert graph.weighted == (name in ("w.edges", "m.mtx", "m.mtx.gz"))
    undirected, _ = read_graph(path, comm, directed=False)
    assert_same_as_one_rank(undirected, path, directed=False)
    out = str(shared / f"{name}.native")  # native, weights included, written and read at P ranks
    write_native(graph, out, comm)
    assert_same_as_one_rank(read_graph(out, comm)[0], path)


@pytest.mark.parametrize(
    "name", ["wing.graph.gz", "luxembourg_osm.mtx.gz", "CA-CondMat.txt.gz", "email-Eu-core.txt.gz"]
)
def test_real_graphs_same_at_any_rank_count(comm, data_dir, name):
    graph, _ = read_graph(str(data_dir / name), comm)
    assert_same_as_one_rank(graph, str(data_dir / name))


def test_every_rank_parses_its_share(comm, shared):
    path = put(comm, shared, "share.txt", "".join(f"{i} {i + 1}\n" for i in range(4000)))
    graph, _ = read_graph(path, comm)
    assert graph.num_edges == 4000
    from distbfs.io.text import read_range

    chunk = read_range(path, comm.rank, comm.size)
    lines = comm.allgather_object(chunk.raw[chunk.begin :].count(b"\n"))
    sizes = comm.allgather_object(chunk.nbytes)  # equal byte ranges, give or take a line
    total = sum(sizes)
    assert sum(lines) == 4000 and total == Path(path).stat().st_size
    assert max(abs(s - total / comm.size) for s in sizes) <= 12


@pytest.mark.parametrize("name", ["wing.graph.gz", "p2p-Gnutella31.txt.gz"])
def test_native_written_and_read_at_p_ranks(comm, data_dir, shared, name):
    source = str(data_dir / name)
    graph, _ = read_graph(source, comm)
    out = str(shared / f"{name}.csr")
    write_native(graph, out, comm)
    again, info = read_graph(out, comm)
    assert info.format == "native"
    np.testing.assert_array_equal(again.row_offsets, graph.row_offsets)
    np.testing.assert_array_equal(again.column_indices, graph.column_indices)
    assert (again.n, again.num_edges, again.directed) == (graph.n, graph.num_edges, graph.directed)
    assert_same_as_one_rank(again, source)  # the file holds the global CSR whatever wrote it
    whole, _ = read_graph(source, SingleRankCommunicator())
    np.testing.assert_array_equal(np.load(Path(out) / "row_offsets.npy"), whole.row_offsets)
    undirected, _ = read_graph(out, comm, directed=False)
    assert_same_as_one_rank(undirected, source, directed=False)
    comm.barrier()


def _same_error_everywhere(comm, path: str, line: int | None, fragment: str) -> None:
    with pytest.raises(InputError) as info:
        read_graph(path, comm)
    message = str(info.value)
    assert info.value.all_ranks
    assert len(set(comm.allgather_object(message))) == 1, message
    assert message.startswith(f"{path}:{line}: " if line else f"{path}: "), message
    assert fragment in message, message


LINES = 3000


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("bad", [1, LINES // 2, LINES - 1, LINES])
def test_error_seen_by_one_rank_reaches_all(comm, shared, gz, bad):
    lines = [f"{i} {i + 1}" for i in range(LINES)]
    lines[bad - 1] = "7 x7"
    path = put(comm, shared, f"bad{bad}.txt" + (".gz" if gz else ""), "\n".join(lines) + "\n")
    _same_error_everywhere(comm, path, bad, "bad token 'x7'")


def test_earliest_of_several_errors_wins(comm, shared):
    lines = [f"{i} {i + 1}" for i in range(LINES)]
    lines[LINES - 5] = "-1 2"
    lines[LINES // 3] = "1 2 3"
    path = put(comm, shared, "two.txt", "\n".join(lines) + "\n")
    _same_error_everywhere(comm, path, LINES // 3 + 1, "expected 2 columns")


@pytest.mark.parametrize("gz", [False, True])
def test_count_errors_at_p_ranks(comm, shared, gz):
    z = ".gz" if gz else ""
    entries = "".join(f"{i % 50 + 1} {(i * 7) % 50 + 1}\n" for i in range(LINES))
    banner = "%%MatrixMarket matrix coordinate pattern general\n"
    path = put(comm, shared, "few.mtx" + z, f"{banner}50 50 {LINES + 1}\n{entries}")
    _same_error_everywhere(comm, path, 2, f"announces {LINES + 1} entries, the file holds only")
    path = put(comm, shared, "many.mtx" + z, f"{banner}50 50 {LINES - 2}\n{entries}")
    _same_error_everywhere(comm, path, LINES + 1, f"more entries than the {LINES - 2}")
    ring = [f"{(v - 1) % 500 + 1} {(v + 1) % 500 + 1}" for v in range(500)]
    path = put(comm, shared, "long.graph" + z, "500 500\n" + "\n".join(ring) + "\n\n\n1\n\n")
    _same_error_everywhere(comm, path, 504, "more vertex lines than the n=500")
    path = put(comm, shared, "short.graph" + z, "501 500\n" + "\n".join(ring) + "\n")
    _same_error_everywhere(comm, path, 1, "holds only 500 vertex lines")
