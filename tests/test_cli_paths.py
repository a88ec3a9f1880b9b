"""The command line's shortest-path commands, in subprocesses at one rank and (when mpiexec is
there) at three: ``sssp`` writes float64 distances (inf where unreached) and int64
predecessors equal to the API's, ``apsp`` the n x n matrix, ``bench --algorithm sssp`` reports
and validates; bad input (source, delta, output path, a matrix that does not fit) is one line
and exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph
from test_cli import assert_input_error, ok, run
from test_cli_mpi import MPIEXEC, distbfs

RANK_COUNTS = [1, 3] if MPIEXEC else [1]


@pytest.fixture(scope="module")
def weighted(tmp_path_factory):
    """A weighted directed edge list: (folder, src, dst, weights, n)."""
    folder = tmp_path_factory.mktemp("paths")
    rng = np.random.default_rng(21)
    n, m = 80, 300
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    weights = rng.integers(0, 12, m)
    lines = "".join(f"{u} {v} {w}\n" for u, v, w in zip(src, dst, weights, strict=True))
    (folder / "w.txt").write_text("# weighted\n" + lines)
    return folder, src, dst, weights, n


def dijkstra(src, dst, weights, n, source):
    keep = src != dst
    best = {}
    for u, v, w in zip(src[keep], dst[keep], weights[keep], strict=True):
        best[(u, v)] = min(best.get((u, v), np.inf), w)
    tails, heads = np.array([k[0] for k in best]), np.array([k[1] for k in best])
    values = np.array(list(best.values()), dtype=np.float64)
    values[values == 0] = 1e-300  # csgraph drops explicit zeros; a tiny weight keeps the edge
    matrix = sp.csr_matrix((values, (tails, heads)), shape=(n, n))
    dist = csgraph.dijkstra(matrix, indices=source)
    return np.where(dist < 1e-200, 0.0, np.round(dist, 9)), matrix


def launch(ranks: int, *args, cwd: Path):
    if ranks == 1:
        return run(*args, cwd=cwd)
    proc, _ = distbfs(*args, cwd=cwd, ranks=ranks)
    return proc


@pytest.mark.parametrize("ranks", RANK_COUNTS)
def test_sssp_writes_distances_and_predecessors(weighted, tmp_path, ranks):
    folder, src, dst, weights, n = weighted
    proc = launch(
        ranks, "sssp", folder / "w.txt", "--source", "3", "--predecessors", "--validate",
        "--output", tmp_path / "out" / "w", cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "validation: passed" in proc.stdout and "buckets (delta" in proc.stdout
    dist = np.load(tmp_path / "out" / "w.distances.npy")
    preds = np.load(tmp_path / "out" / "w.predecessors.npy")
    assert dist.dtype == np.float64 and preds.dtype == np.int64
    want, _ = dijkstra(src, dst, weights, n, 3)
    np.testing.assert_array_equal(dist, want)
    assert preds[3] == 3 and np.all((preds == -1) == np.isinf(dist))


def test_sssp_of_an_unweighted_graph_is_bfs(tmp_path):
    (tmp_path / "p.txt").write_text("".join(f"{i} {i + 1}\n" for i in range(9)))
    ok(run("sssp", "p.txt", "--source", "0", "--output", "p", cwd=tmp_path))
    np.testing.assert_array_equal(np.load(tmp_path / "p.distances.npy"), np.arange(10.0))


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--source", "80"], ["--source", "vertex 80 is out of range"]),
        (["--source", "1", "--delta", "0"], ["--delta", "'0'"]),
        (["--source", "1", "--delta", "inf"], ["--delta", "'inf'"]),
        (["--source", "1", "--output", "/proc/nope/x"], ["--output /proc/nope/x"]),
    ],
)
def test_sssp_bad_arguments(weighted, tmp_path, args, needles):
    folder = weighted[0]
    assert_input_error(run("sssp", folder / "w.txt", *args, cwd=tmp_path), *needles)
    assert list(tmp_path.iterdir()) == []


def test_sssp_bad_weight_is_one_line(tmp_path):
    (tmp_path / "bad.txt").write_text("0 1 3\n1 2 -4\n")
    assert_input_error(run("sssp", "bad.txt", "--source", "0", cwd=tmp_path), "bad.txt:2", "-4")


@pytest.mark.parametrize("ranks", RANK_COUNTS)
def test_apsp_writes_the_matrix(weighted, tmp_path, ranks):
    folder, src, dst, weights, n = weighted
    proc = launch(ranks, "apsp", folder / "w.txt", "--output", tmp_path / "a", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    matrix = np.load(tmp_path / "a.distances.npy")
    _, adjacency = dijkstra(src, dst, weights, n, 0)
    want = csgraph.dijkstra(adjacency)
    np.testing.assert_array_equal(matrix, np.where(want < 1e-200, 0.0, np.round(want, 9)))


def test_apsp_refuses_a_matrix_that_does_not_fit(weighted, tmp_path):
    """A memory limit through the module that reports it: exit 2, the bytes, no file."""
    script = (
        "import sys, distbfs.memory as m\n"
        "m.available_bytes = lambda xp: 20_000\n"
        "from distbfs import cli\n"
        f"sys.exit(cli.main(['apsp', {str(weighted[0] / 'w.txt')!r}, '--output', 'a']))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert_input_error(proc, "needs 51,200 bytes of host memory", "20,000 are available")
    assert not (tmp_path / "a.distances.npy").exists()


@pytest.mark.parametrize("ranks", RANK_COUNTS)
def test_bench_sssp(tmp_path, ranks):
    proc = launch(
        ranks, "bench", "--algorithm", "sssp", "--scale", "9", "--roots", "4", "--json", "b.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "algorithm: sssp (delta-stepping" in proc.stdout
    assert "validation: passed (4 searches)" in proc.stdout
    document = json.loads((tmp_path / "b.json").read_text())
    assert document["algorithm"] == "sssp" and document["graph"]["weights"] == "uniform:1:255"
    assert len(document["times"]) == 4 and document["statistics"]["harmonic_mean_TEPS"] > 0
    # the rows a GPU's search read (a dense graph: by weight); the numpy backend has no choice
    assert document["rows"] in (None, "by weight")
    assert ("rows read: by weight" in proc.stdout) == (document["rows"] == "by weight")
