"""The command line's connected components, in subprocesses at one rank and (when mpiexec is
there) at three: ``cc`` writes int64 labels (the smallest vertex id of each component) equal to
scipy's components and prints the count and the largest component; ``bench --algorithm cc``
reports, validates every run and writes JSON; bad input is one line and exit status 2, a failed
validation exit status 1."""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_cc import reference
from test_cli import assert_input_error, ok, run
from test_cli_mpi import MPIEXEC, distbfs

from distbfs import cli

RANK_COUNTS = [1, 3] if MPIEXEC else [1]


@pytest.fixture(scope="module")
def edge_file(tmp_path_factory):
    """A directed edge list with several weak components, isolated ids and a self-loop:
    (folder, src, dst, n)."""
    folder = tmp_path_factory.mktemp("cc")
    rng = np.random.default_rng(5)
    n, m = 120, 90
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[0], dst[0] = n - 1, n - 1  # a self-loop on the largest id: n vertices in the file
    lines = "".join(f"{u} {v}\n" for u, v in zip(src, dst, strict=True))
    (folder / "g.txt").write_text("# directed\n" + lines)
    return folder, src, dst, n


def launch(ranks: int, *args, cwd):
    if ranks == 1:
        return run(*args, cwd=cwd)
    proc, _ = distbfs(*args, cwd=cwd, ranks=ranks)
    return proc


@pytest.mark.parametrize("ranks", RANK_COUNTS)
def test_cc_writes_labels(edge_file, tmp_path, ranks):
    folder, src, dst, n = edge_file
    proc = launch(
        ranks, "cc", folder / "g.txt", "--validate", "--output", tmp_path / "out" / "g",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    labels = np.load(tmp_path / "out" / "g.components.npy")
    want = reference((src, dst, n, True))
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, want)
    roots, sizes = np.unique(want, return_counts=True)
    largest = int(np.argmax(sizes))
    assert f"components: {roots.shape[0]:,} weakly connected components" in proc.stdout
    assert f"largest component: {sizes[largest]:,} vertices" in proc.stdout
    assert f"label {roots[largest]}" in proc.stdout
    assert "validation: passed" in proc.stdout and "rounds by phase:" in proc.stdout


def test_cc_undirected_and_quiet(tmp_path):
    (tmp_path / "p.txt").write_text("4 3\n3 2\n7 6\n")
    out = ok(run("cc", "p.txt", "--undirected", "-q", "--output", "p", cwd=tmp_path))
    assert "components: 5 connected components" in out and "rounds by phase" not in out
    assert "largest component: 3 vertices (37.5%), label 2" in out
    np.testing.assert_array_equal(np.load(tmp_path / "p.components.npy"), [0, 1, 2, 2, 2, 5, 6, 6])


@pytest.mark.parametrize("ranks", RANK_COUNTS)
@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["missing.txt"], ["missing.txt"]),
        (["g.txt", "--output", "/proc/nope/x"], ["--output /proc/nope/x"]),
        (["g.txt", "--predecessors"], ["--predecessors"]),
    ],
)
def test_cc_bad_input(edge_file, tmp_path, ranks, args, needles):
    folder = edge_file[0]
    args = [str(folder / a) if a == "g.txt" else a for a in args]
    assert_input_error(launch(ranks, "cc", *args, cwd=tmp_path), *needles)
    assert list(tmp_path.iterdir()) == []


def test_cc_validation_failure_exits_1(monkeypatch, capsys, tmp_path):
    import distbfs.api.components as api

    real = api.run_rounds

    def corrupt(*args, **kwargs):
        run = real(*args, **kwargs)
        run.labels[1] = 1  # vertex 1 (joined to 0) gets a label of its own
        return run

    monkeypatch.setattr(api, "run_rounds", corrupt)
    graph = tmp_path / "g.txt"
    graph.write_text("0 1\n1 2\n")
    assert cli.main(["cc", str(graph), "--validate", "-q"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("distbfs: error: validation failed, edge labels")


@pytest.mark.parametrize("ranks", RANK_COUNTS)
def test_bench_cc(tmp_path, ranks):
    proc = launch(
        ranks, "bench", "--algorithm", "cc", "--scale", "9", "--roots", "3", "--json", "c.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "algorithm: cc (Afforest)" in proc.stdout and "NCC: 3" in proc.stdout
    assert "validation: passed (3 runs)" in proc.stdout and "rounds by phase:" in proc.stdout
    document = json.loads((tmp_path / "c.json").read_text())
    assert document["algorithm"] == "cc" and document["runs"] == 3
    assert len(document["times"]) == 3 and document["statistics"]["harmonic_mean_TEPS"] > 0
    assert document["nedges"] == [document["graph"]["num_undirected_edges"]] * 3
    assert document["components"] >= 1 and document["round_stats"][-1]["phase"] == "finish"


def test_bench_cc_without_validation(tmp_path):
    out = ok(run("bench", "--algorithm", "cc", "--scale", "8", "--roots", "2", "--no-validate",
                 "-q", cwd=tmp_path))  # fmt: skip
    assert "validation: skipped" in out and "harmonic_mean_TEPS" in out


def test_cc_help(tmp_path):
    out = ok(run("cc", "--help", cwd=tmp_path))
    assert out.startswith("usage: distbfs cc") and "--output" in out and "--validate" in out
