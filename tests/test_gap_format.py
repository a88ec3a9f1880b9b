"""GAP's serialized graphs written by ``benchmarks/gap.py``: a weighted and an unweighted,
directed and undirected graph written as ``.wsg``/``.sg`` and read back by a reader written here
after GAP's ``src/reader.h`` (``ReadSerializedGraph``): the header, the out-CSR, the weights and,
for a directed graph, the inverse CSR equal distbfs's graph, whatever the chunk size; graphs GAP
cannot hold are refused with nothing written; GAP's output is parsed into trial times (through a
stand-in binary). None of this needs GAP; where a built GAP is found (``GAPBS_DIR``, a directory
where ``make sssp converter`` ran), the files are also compared byte for byte with those of
GAP's own converter and GAP's verifier runs on them.
"""

from __future__ import annotations

import importlib.util
import os
import stat
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from distbfs import Graph
from distbfs.comm.single import SingleRankCommunicator

REPO = Path(__file__).resolve().parents[1]


def _load_gap():
    path = REPO / "benchmarks" / "gap.py"
    if not path.is_file():
        pytest.skip(f"{path} not found")
    spec = importlib.util.spec_from_file_location("gap_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gap_benchmark"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


gap = _load_gap()


def read_gap(path: Path) -> dict:
    """GAP's ``ReadSerializedGraph`` in numpy: bool directed, int64 num_edges, int64 num_nodes,
    int64 offsets[n + 1], neighbours (int32, or {int32 v, int32 w} for ``.wsg``), then for a
    directed graph the inverse offsets and neighbours; nothing after."""
    raw = path.read_bytes()
    directed = raw[0]
    assert directed in (0, 1)
    num_edges, num_nodes = struct.unpack_from("<qq", raw, 1)
    record = np.dtype([("v", "<i4"), ("w", "<i4")]) if path.suffix == ".wsg" else np.dtype("<i4")
    position = 17
    graph = {"directed": bool(directed), "num_edges": num_edges, "num_nodes": num_nodes}
    for part in ("out", "in") if directed else ("out",):
        offsets = np.frombuffer(raw, "<i8", num_nodes + 1, position)
        position += 8 * (num_nodes + 1)
        neighbours = np.frombuffer(raw, record, num_edges, position)
        position += record.itemsize * num_edges
        graph[part] = (offsets, neighbours)
    assert position == len(raw), "bytes after the last array"
    return graph


def csr_of(offsets: np.ndarray, neighbours: np.ndarray, n: int) -> sp.csr_matrix:
    ids = neighbours["v"] if neighbours.dtype.names else neighbours
    values = neighbours["w"] if neighbours.dtype.names else np.ones(ids.size)
    return sp.csr_matrix((values.astype(np.float64), ids, offsets), shape=(n, n))


def random_graph(tmp_path: Path, directed: bool, weighted: bool = True, n: int = 300) -> Path:
    rng = np.random.default_rng(7 + directed)
    m = 4 * n
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[0], dst[0] = n - 1, 0  # the last vertex has an edge (GAP's edge-list reader counts so)
    weights = rng.integers(0, 256, m).astype(np.float64) if weighted else None
    graph = Graph.from_edges(
        src,
        dst,
        weights=weights,
        num_vertices=n,
        directed=directed,
        backend="numpy",
        comm=SingleRankCommunicator(),
    )
    native = tmp_path / f"native-{int(directed)}{int(weighted)}"
    graph.save(native)
    return native


def native_csr(native: Path, weighted: bool) -> sp.csr_matrix:
    offsets = np.load(native / "row_offsets.npy")
    columns = np.load(native / "column_indices.npy")
    n = offsets.size - 1
    values = np.load(native / "weights.npy") if weighted else np.ones(columns.size)
    return sp.csr_matrix((values.astype(np.float64), columns, offsets), shape=(n, n))


def assert_same(a: sp.csr_matrix, b: sp.csr_matrix) -> None:
    np.testing.assert_array_equal(a.indptr, b.indptr)
    np.testing.assert_array_equal(a.indices, b.indices)
    np.testing.assert_array_equal(a.data, b.data)


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("suffix", [".wsg", ".sg"])
def test_round_trip(tmp_path, directed, suffix):
    native = random_graph(tmp_path, directed)
    out = tmp_path / f"g{suffix}"
    info = gap.write_gap_graph(native, out)
    back = read_gap(out)
    expected = native_csr(native, weighted=suffix == ".wsg")
    n = expected.shape[0]
    assert back["directed"] is directed and back["num_nodes"] == n
    assert back["num_edges"] == expected.nnz == info["num_edges"]
    assert info["bytes"] == out.stat().st_size
    assert gap.read_gap_header(out) == {k: back[k] for k in ("directed", "num_edges", "num_nodes")}
    assert_same(csr_of(*back["out"], n), expected)
    if directed:  # GAP's inverse: in-neighbours of each vertex, sorted, with the edge's weight
        assert_same(csr_of(*back["in"], n), expected.T.tocsr().sorted_indices())
    else:  # GAP counts an undirected edge once: stored edges / 2
        assert (expected != expected.T).nnz == 0
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == [out.name]


@pytest.mark.parametrize("directed", [False, True])
def test_chunk_size_changes_nothing(tmp_path, directed):
    native = random_graph(tmp_path, directed)
    files = []
    for chunk in (1, 7, 1000, gap.CHUNK_EDGES):
        out = tmp_path / f"g{chunk}.wsg"
        gap.write_gap_graph(native, out, chunk_edges=chunk)
        files.append(out.read_bytes())
    assert all(f == files[0] for f in files)


def test_isolated_and_empty(tmp_path):
    graph = Graph.from_edges(
        [0],
        [1],
        weights=[3.0],
        num_vertices=6,
        directed=True,
        backend="numpy",
        comm=SingleRankCommunicator(),
    )
    graph.save(tmp_path / "one")
    gap.write_gap_graph(tmp_path / "one", tmp_path / "one.wsg")
    back = read_gap(tmp_path / "one.wsg")
    np.testing.assert_array_equal(back["out"][0], [0, 1, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(back["in"][0], [0, 0, 1, 1, 1, 1, 1])
    assert back["in"][1].tolist() == [(0, 3)]
    for directed in (False, True):
        empty = Graph.from_edges(
            [],
            [],
            num_vertices=4,
            directed=directed,
            backend="numpy",
            comm=SingleRankCommunicator(),
        )
        empty.save(tmp_path / "empty")
        gap.write_gap_graph(tmp_path / "empty", tmp_path / "empty.sg")
        back = read_gap(tmp_path / "empty.sg")
        assert back["num_edges"] == 0 and back["out"][0].tolist() == [0] * 5
        assert back["directed"] is directed


def test_refusals(tmp_path):
    native = random_graph(tmp_path, directed=False)
    real = Graph.from_edges(
        [0, 1],
        [1, 2],
        weights=[1.5, 2.0],
        directed=False,
        backend="numpy",
        comm=SingleRankCommunicator(),
    )
    real.save(tmp_path / "real")
    with pytest.raises(gap.GapError, match="non-integer weight"):
        gap.write_gap_graph(tmp_path / "real", tmp_path / "real.wsg")
    gap.write_gap_graph(tmp_path / "real", tmp_path / "real.sg")  # no weights: fine
    plain = random_graph(tmp_path, directed=False, weighted=False)
    with pytest.raises(gap.GapError, match="no weights"):
        gap.write_gap_graph(plain, tmp_path / "plain.wsg")
    with pytest.raises(gap.GapError, match=r"\.sg or \.wsg"):
        gap.write_gap_graph(native, tmp_path / "g.el")
    with pytest.raises(gap.GapError, match="not a distbfs native"):
        gap.write_gap_graph(tmp_path, tmp_path / "x.sg")
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["real.sg"]


FAKE_GAP = """#!{python}
import os, sys
args = sys.argv[1:]
trials = int(args[args.index("-n") + 1])
print("Read Time:           0.01000")
print("Graph has 10 nodes and 20 undirected edges for degree: 2")
for i in range(trials):
    print(f"Trial Time:          {{0.00125 * (i + 1):.5f}}")
    if "-v" in args:
        print("Verification:           " + os.environ.get("FAKE_VERIFY", "PASS"))
if "-a" in args:
    print("SSSP Tree reaches 7 nodes")
print("Average Time:        0.00000")
print("threads", os.environ["OMP_NUM_THREADS"], " ".join(args), file=sys.stderr)
sys.exit(int(os.environ.get("FAKE_EXIT", "0")))
"""


@pytest.fixture
def fake_gap(tmp_path):
    """A stand-in for a GAP binary that prints GAP's lines."""
    binary = tmp_path / "sssp"
    binary.write_text(FAKE_GAP.format(python=sys.executable))
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


def test_run_gap_parses_trials(fake_gap, monkeypatch):
    times = gap.run_gap(fake_gap, "g.wsg", source=3, delta=2, trials=3, threads=5)
    assert times == pytest.approx([0.00125, 0.0025, 0.00375])
    run = gap.run_gap_detailed(
        fake_gap, "g.wsg", source=3, delta=2, trials=2, threads=5, verify=True, analysis=True
    )
    assert (run.nodes, run.edges, run.directed, run.reached) == (10, 20, False, 7)
    assert run.verified == [True, True] and run.read_seconds == pytest.approx(0.01)
    assert "threads 5 -f g.wsg -n 2 -r 3 -d 2 -v -a" in run.output
    monkeypatch.setenv("FAKE_VERIFY", "FAIL")
    with pytest.raises(gap.GapError, match="verification failed"):
        gap.run_gap(fake_gap, "g.wsg", trials=2, threads=1, verify=True)
    monkeypatch.setenv("FAKE_EXIT", "3")
    with pytest.raises(gap.GapError, match="exit status 3") as error:
        gap.run_gap(fake_gap, "g.wsg", trials=1, threads=1)
    assert "Trial Time" in str(error.value)  # GAP's output comes with the error
    with pytest.raises(gap.GapError, match="positive integer"):
        gap.run_gap(fake_gap, "g.wsg", delta=2.5, trials=1, threads=1)


def _built_gap() -> Path:
    where = os.environ.get("GAPBS_DIR")
    if not where:
        pytest.skip("GAPBS_DIR is not set (a GAP source tree where make sssp converter ran)")
    root = Path(where)
    for kernel in ("sssp", "converter"):
        if not os.access(root / kernel, os.X_OK):
            pytest.skip(f"GAP's {kernel} is not built in {root}")
    return root


@pytest.mark.parametrize("directed", [False, True])
def test_identical_to_gaps_converter(tmp_path, directed):
    root = _built_gap()
    native = random_graph(tmp_path, directed)
    offsets = np.load(native / "row_offsets.npy")
    columns = np.load(native / "column_indices.npy")
    weights = np.load(native / "weights.npy").astype(np.int64)
    src = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    np.savetxt(tmp_path / "g.wel", np.c_[src, columns, weights], fmt="%d")
    ours, theirs = tmp_path / "ours.wsg", tmp_path / "theirs.wsg"
    gap.write_gap_graph(native, ours)
    symmetrize = [] if directed else ["-s"]
    subprocess.run(
        [root / "converter", "-f", tmp_path / "g.wel", *symmetrize, "-w", "-b", theirs],
        check=True,
        capture_output=True,
    )
    assert ours.read_bytes() == theirs.read_bytes()
    run = gap.run_gap_detailed(
        root / "sssp", ours, source=0, delta=16, trials=1, threads=2, verify=True
    )
    assert run.verified == [True]
