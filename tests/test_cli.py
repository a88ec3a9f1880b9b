"""The command line, one rank: ``python -m distbfs`` in subprocesses (help, bfs output, generate /
info / convert, bench JSON, the default job) and every kind of bad input: exit status 2 and
exactly one ``distbfs: error:`` line naming the file (and line) or the argument and the value,
without a traceback. The error policy for validation failures, bugs and Ctrl-C is checked in
process through ``main``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from distbfs import cli
from distbfs.constants import UNREACHED

TIMEOUT = 120
_LAUNCHER_VARS = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCALNRANKS", "SLURM_")


def clean_env() -> dict[str, str]:
    """The environment without MPI launcher variables (these runs are one-rank jobs)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(_LAUNCHER_VARS)}


def run(*args: str, cwd: Path, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "distbfs", *map(str, args)],
        cwd=cwd,
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


PROGRESS_LINE = re.compile(r"[^:\n]+: [\d,]+%?, \d+ s( \(done\))?")
"""A progress line, what long work prints every ``progress.LINE_SECONDS`` on a stderr that is not
a terminal (a slow machine's main job takes longer than that)."""


def ok(proc: subprocess.CompletedProcess) -> str:
    """Exit 0 and nothing on stderr but progress lines (no bars: stderr is not a terminal)."""
    assert proc.returncode == 0, proc.stderr
    assert all(PROGRESS_LINE.fullmatch(line) for line in proc.stderr.splitlines()), proc.stderr
    return proc.stdout


def assert_input_error(proc: subprocess.CompletedProcess, *needles: str) -> str:
    """Exit 2, exactly one stderr line ``distbfs: error: ...`` containing every needle."""
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert len(lines) == 1, lines
    assert lines[0].startswith("distbfs: error: "), lines[0]
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def reference(src, dst, n: int, source: int, directed: bool) -> np.ndarray:
    m = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    d = csgraph.shortest_path(m, directed=directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), UNREACHED, d).astype(np.int32)


def write_edgelist(path: Path, src, dst) -> Path:
    path.write_text(
        "# directed test graph\n" + "".join(f"{u} {v}\n" for u, v in zip(src, dst, strict=True))
    )
    return path


@pytest.fixture(scope="module")
def edges():
    rng = np.random.default_rng(12)
    n = 60
    src = rng.integers(0, n, 150)
    dst = rng.integers(0, n, 150)
    src[0], dst[0] = 0, n - 1  # ids 0 and n-1 appear, so the file has exactly n vertices
    return src, dst, n


# ------------------------------------------------------------------------------------- help


@pytest.mark.parametrize("command", [[], ["bench"], ["bfs"], ["generate"], ["convert"], ["info"]])
def test_help_everywhere(tmp_path, command):
    proc = run(*command, "--help", cwd=tmp_path)
    out = ok(proc)
    assert out.startswith("usage: distbfs") and proc.stderr == ""
    if command:
        for flag in ("--backend", "--comm", "--undirected", "--quiet"):
            assert flag in out
    else:
        for name in ("bench", "bfs", "generate", "convert", "info"):
            assert name in out


def test_version(tmp_path):
    assert ok(run("--version", cwd=tmp_path)).strip() == "distbfs 0.1.0"


def test_generator_choices_match_module():
    from distbfs import generators

    assert cli.GENERATOR_CHOICES == generators.GENERATORS


# -------------------------------------------------------------------------------------- bfs


@pytest.mark.parametrize("undirected", [False, True])
def test_bfs_output_files(tmp_path, edges, undirected):
    src, dst, n = edges
    graph = write_edgelist(tmp_path / "g.txt", src, dst)
    extra = ["--undirected"] if undirected else []
    out = ok(
        run(
            "bfs",
            graph,
            "--source",
            3,
            "--predecessors",
            "--validate",
            "--output",
            tmp_path / "res",
            *extra,
            cwd=tmp_path,
        )
    )
    expected = reference(src, dst, n, 3, not undirected)
    reached = int(np.count_nonzero(expected != UNREACHED))
    assert f"reached {reached:,} of {n:,} vertices" in out
    assert "validation: passed" in out and "TEPS" in out
    distances = np.load(tmp_path / "res.distances.npy")
    preds = np.load(tmp_path / "res.predecessors.npy")
    assert distances.dtype == np.int32 and preds.dtype == np.int64
    np.testing.assert_array_equal(distances, expected)
    assert preds[3] == 3
    others = np.flatnonzero((distances != UNREACHED) & (np.arange(n) != 3))
    assert np.all(distances[preds[others]] == distances[others] - 1)
    edge_set = set(zip(src.tolist(), dst.tolist(), strict=True))
    if undirected:
        edge_set |= {(v, u) for u, v in edge_set}
    assert all((int(preds[v]), int(v)) in edge_set for v in others)
    assert np.all(preds[distances == UNREACHED] == UNREACHED)
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "g.txt",
        "res.distances.npy",
        "res.predecessors.npy",
    ]


def test_bfs_isolated_source_is_not_an_error(tmp_path):
    graph = tmp_path / "g.mtx"
    graph.write_text("%%MatrixMarket matrix coordinate pattern general\n5 5 1\n1 2\n")
    out = ok(run("bfs", graph, "--source", 4, "--output", tmp_path / "r", cwd=tmp_path))
    assert "reached 1 of 5 vertices" in out
    np.testing.assert_array_equal(np.load(tmp_path / "r.distances.npy"), [-1, -1, -1, -1, 0])
    assert not (tmp_path / "r.predecessors.npy").exists()


def test_bfs_output_creates_directories(tmp_path, edges):
    src, dst, n = edges
    graph = write_edgelist(tmp_path / "g.txt", src, dst)
    ok(run("bfs", graph, "--source", 2, "--output", "out/sub/r", "-q", cwd=tmp_path))
    np.testing.assert_array_equal(
        np.load(tmp_path / "out" / "sub" / "r.distances.npy"), reference(src, dst, n, 2, True)
    )


def test_bfs_output_replaces_existing_file(tmp_path, edges):
    src, dst, n = edges
    graph = write_edgelist(tmp_path / "g.txt", src, dst)
    np.save(tmp_path / "r.distances.npy", np.zeros(3))
    ok(run("bfs", graph, "--source", 0, "--output", tmp_path / "r", "-q", cwd=tmp_path))
    np.testing.assert_array_equal(
        np.load(tmp_path / "r.distances.npy"), reference(src, dst, n, 0, True)
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.txt", "r.distances.npy"]


# ---------------------------------------------------------------- generate / info / convert


def test_generate_info_convert_roundtrip(tmp_path, edges):
    out = ok(run("generate", "grid2d", "--shape", "4x5", "-o", tmp_path / "grid", cwd=tmp_path))
    assert "20 vertices" in out
    info = ok(run("info", tmp_path / "grid", cwd=tmp_path))
    assert "vertices: 20" in info and "undirected edges: 31" in info
    assert "stored edges: 62" in info and "directed: no" in info
    assert "degree: min 2, mean 3.100, max 4" in info and "isolated vertices: 0" in info
    out = ok(run("bfs", tmp_path / "grid", "--source", 0, "--output", tmp_path / "d", cwd=tmp_path))
    distances = np.load(tmp_path / "d.distances.npy").reshape(4, 5)
    np.testing.assert_array_equal(distances, np.add.outer(np.arange(4), np.arange(5)))

    src, dst, n = edges
    text = write_edgelist(tmp_path / "e.txt", src, dst)
    ok(run("convert", text, tmp_path / "e.native", cwd=tmp_path))
    info = ok(run("info", tmp_path / "e.native", cwd=tmp_path))
    stored = len({(u, v) for u, v in zip(src.tolist(), dst.tolist(), strict=True) if u != v})
    isolated = n - len(set(src.tolist()) | set(dst.tolist()))
    assert f"vertices: {n}" in info and f"stored edges: {stored}" in info
    assert "directed: yes" in info and f"isolated vertices: {isolated}" in info
    for graph in (text, tmp_path / "e.native"):
        ok(run("bfs", graph, "--source", 5, "--output", tmp_path / graph.stem, cwd=tmp_path))
    np.testing.assert_array_equal(
        np.load(tmp_path / "e.distances.npy"), reference(src, dst, n, 5, True)
    )
    # convert --undirected symmetrizes
    ok(run("convert", "--undirected", text, tmp_path / "u.native", cwd=tmp_path))
    assert "directed: no" in ok(run("info", tmp_path / "u.native", cwd=tmp_path))
    assert "weighted: no" in info and "weights: none (unweighted)" in info


def test_generate_weighted_bench_json(tmp_path):
    out = ok(
        run(
            "bench",
            "--generator",
            "grid2d",
            "--shape",
            "6x7",
            "--weights",
            "uniform:1:9",
            "--roots",
            2,
            "--json",
            tmp_path / "w.json",
            cwd=tmp_path,
        )
    )
    assert "NBFS: 2" in out
    assert json.loads((tmp_path / "w.json").read_text())["graph"]["weights"] == "uniform:1:9"
    assert "--weights" in ok(run("generate", "--help", cwd=tmp_path))


def test_generate_kronecker_is_reproducible(tmp_path):
    for name in ("a", "b"):
        ok(
            run(
                "generate",
                "kronecker",
                "--scale",
                8,
                "--edgefactor",
                4,
                "--seed",
                5,
                "-o",
                tmp_path / name,
                cwd=tmp_path,
            )
        )
    infos = [ok(run("info", tmp_path / name, cwd=tmp_path)) for name in ("a", "b")]
    assert "vertices: 256" in infos[0]
    strip = [i.split("\n", 2)[2] for i in infos]  # drop the lines naming the path and bytes
    assert strip[0] == strip[1]


# ---------------------------------------------------------------------------- progress bars


def run_with_terminal_stderr(*args: str, cwd: Path) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal (100 columns): (status, stdout, stderr)."""
    pty = pytest.importorskip("pty")
    import fcntl
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    proc = subprocess.Popen(
        [sys.executable, "-m", "distbfs", *args],
        cwd=cwd,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    chunks = []
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the child closed the terminal
                    break
                if not data:
                    break
                chunks.append(data)
            elif proc.poll() is not None:
                break
        out = proc.stdout.read().decode()
        proc.wait(timeout=TIMEOUT)
    finally:
        os.close(master)
        proc.stdout.close()
    return proc.returncode, out, b"".join(chunks).decode(errors="replace")


def test_progress_bars_only_on_a_terminal_and_not_quiet(tmp_path):
    status, out, err = run_with_terminal_stderr("--scale", "9", "--roots", "8", cwd=tmp_path)
    assert status == 0 and "NBFS: 8" in out
    assert "generating kronecker" in err and "BFS:" in err and "/8 " in err
    assert "search/s" not in out and "edge/s" not in out  # bars never go to stdout
    status, out, err = run_with_terminal_stderr("--scale", "9", "--roots", "8", "-q", cwd=tmp_path)
    assert status == 0 and "NBFS: 8" in out and err == ""


# ---------------------------------------------------------------------------------- bench


def test_bench_json(tmp_path):
    out = ok(
        run(
            "bench",
            "--backend",
            "numpy",  # what `auto` takes on CI's machine; a GPU host's would take cuda
            "--scale",
            7,
            "--roots",
            5,
            "--predecessors",
            "--json",
            tmp_path / "b.json",
            cwd=tmp_path,
        )
    )
    assert "SCALE: 7" in out and "NBFS: 5" in out and "harmonic_mean_TEPS:" in out
    assert "validation: passed (5 searches)" in out and "per-level summary" in out
    doc = json.loads((tmp_path / "b.json").read_text())
    assert doc["ranks"] == 1 and doc["backend"] == "numpy" and doc["comm"] == "single"
    assert doc["graph"]["generator"] == "kronecker" and doc["graph"]["scale"] == 7
    assert doc["graph"]["num_vertices"] == 128 and doc["validated"] and doc["predecessors"]
    assert len(doc["roots"]) == len(doc["times"]) == len(doc["nedges"]) == 5
    assert doc["statistics"]["max_time"] == max(doc["times"])
    assert doc["statistics"]["min_nedge"] == min(doc["nedges"])
    assert doc["levels"][0]["level"] == 0 and doc["levels"][0]["frontier"] == 1
    assert doc["levels_root"] == doc["roots"][0] and "expand" in doc["levels"][0]["seconds"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]


def test_bench_file_and_grid(tmp_path, edges):
    src, dst, _ = edges
    graph = write_edgelist(tmp_path / "g.txt", src, dst)
    out = ok(
        run(
            "bench",
            graph,
            "--roots",
            3,
            "--no-validate",
            "--json",
            tmp_path / "f.json",
            cwd=tmp_path,
        )
    )
    assert "validation: skipped" in out and "load: edgelist" in out
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["load"]["format"] == "edgelist" and doc["load"]["bytes"] == graph.stat().st_size
    assert doc["graph"]["file"] == str(graph) and not doc["validated"]
    out = ok(
        run("bench", "--generator", "grid2d", "--shape", "6x7", "--roots", 2, "-q", cwd=tmp_path)
    )
    assert "grid2d 6x7: 42 vertices" in out


def test_main_job_without_arguments(tmp_path):
    """The default Graph500-style run (DEFAULT_SCALE_CPU, 64 validated searches) finishes."""
    out = ok(run(cwd=tmp_path, timeout=600))
    assert f"SCALE: {cli.DEFAULT_SCALE_CPU}" in out and "NBFS: 64" in out
    assert "validation: passed (64 searches)" in out and "construction_time:" in out
    assert "harmonic_mean_TEPS:" in out and "per-level summary" in out


# ------------------------------------------------------------------------------ bad input

MTX = "%%MatrixMarket matrix coordinate pattern general\n"
BAD_FILES = {
    "badtoken.mtx": MTX + "3 3 2\n1 2\n2 x\n",
    "columns.mtx": MTX + "3 3 2\n1 2 3 4\n2 3\n",
    "columns.txt": "0 1\n1 2 3\n",
    "negative.txt": "0 1\n-1 2\n",
    "zero.mtx": MTX + "3 3 2\n1 2\n0 3\n",
    "large.mtx": MTX + "3 3 2\n1 2\n2 9\n",
    "count.mtx": MTX + "3 3 5\n1 2\n2 3\n",
    "truncated.mtx": MTX + "3 3 2\n1 2\n2",
    "empty.mtx": "",
    "empty.txt": "",
    "count.graph": "3 5\n2\n1 3\n2\n",
    "graph.csv": "0 1\n",
    "good.txt": "0 1\n1 2\n2 3\n3 4\n4 5\n5 6\n6 7\n7 8\n8 9\n",
}


@pytest.fixture
def bad_dir(tmp_path):
    for name, text in BAD_FILES.items():
        (tmp_path / name).write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["bfs", "missing.mtx", "--source", "0"], ["missing.mtx", "no such file"]),
        (["info", "graph.csv"], ["graph.csv", "unknown graph format"]),
        (["bfs", "badtoken.mtx", "--source", "0"], ["badtoken.mtx:4", "'x'"]),
        (["info", "columns.mtx"], ["columns.mtx:3", "4"]),
        (["bench", "columns.txt"], ["columns.txt:2", "3"]),
        (["convert", "negative.txt", "out.native"], ["negative.txt:2", "-1"]),
        (["bfs", "zero.mtx", "--source", "0"], ["zero.mtx:4", "0"]),
        (["bfs", "large.mtx", "--source", "0"], ["large.mtx:4", "9"]),
        (["info", "count.mtx"], ["count.mtx", "5"]),
        (["info", "truncated.mtx"], ["truncated.mtx:4"]),
        (["info", "empty.mtx"], ["empty.mtx", "empty"]),
        (["bfs", "empty.txt", "--source", "0"], ["empty.txt", "empty"]),
        (["info", "count.graph"], ["count.graph", "5"]),
        (
            ["bfs", "good.txt", "--source", "99"],
            ["--source: vertex 99 is out of range for a graph of 10 vertices"],
        ),
        (["bfs", "good.txt", "--source", "-3"], ["--source", "-3"]),
        (["bfs", "good.txt", "--source", "abc"], ["--source", "'abc'"]),
        (["bfs", "good.txt"], ["--source"]),
        (["bfs", "good.txt", "--source", "0", "--output", "good.txt/r"], ["good.txt", "directory"]),
        (["bfs", "good.txt", "--source", "0", "--bogus"], ["--bogus"]),
        (["--bogus"], ["--bogus"]),
        (["frobnicate"], ["'frobnicate'"]),
        (["bench", "--backend", "gpu"], ["--backend", "'gpu'"]),
        (["bench", "--comm", "tcp"], ["--comm", "'tcp'"]),
        (["bench", "--scale", "-1"], ["--scale", "-1"]),
        (["bench", "--scale", "x"], ["--scale", "'x'"]),
        (["bench", "--scale", "41"], ["--scale", "41"]),
        (["bench", "--roots", "0"], ["--roots", "0"]),
        (["bench", "--scale", "8", "--beta", "0"], ["beta", "0"]),
        (["bench", "--scale", "8", "--alpha", "-1"], ["alpha", "-1"]),
        (["bench", "--strategy", "sideways"], ["--strategy", "'sideways'"]),
        (["bench", "--generator", "rmat"], ["--generator", "'rmat'"]),
        (["bench", "--generator", "grid2d"], ["--shape"]),
        (["bench", "good.txt", "--scale", "5"], ["--scale", "good.txt"]),
        (["bench", "good.txt", "--json", "good.txt/b.json"], ["good.txt", "directory"]),
        (["generate", "grid2d", "--shape", "0x5", "-o", "g"], ["--shape", "0x5"]),
        (["generate", "grid3d", "--shape", "4x5", "-o", "g"], ["--shape", "4x5"]),
        (["generate", "kronecker", "-o", "g"], ["--scale"]),
        (["generate", "kronecker", "--scale", "4"], ["-o"]),
        (["generate", "uniform", "--scale", "4", "--shape", "2x2", "-o", "g"], ["--shape"]),
        (
            ["generate", "grid2d", "--shape", "2x2", "--weights", "uniform:1", "-o", "g"],
            ["--weights", "'uniform:1'"],
        ),
        (["bench", "--scale", "4", "--weights", "uniform:-1:3"], ["--weights", "'uniform:-1:3'"]),
        (["info", "good.txt", "--format", "csv"], ["--format", "'csv'"]),
        (["info", "good.txt", "--format", "mtx"], ["good.txt:1"]),
    ],
)
def test_bad_input(bad_dir, args, needles):
    before = sorted(p.name for p in bad_dir.iterdir())
    assert_input_error(run(*args, cwd=bad_dir), *needles)
    assert sorted(p.name for p in bad_dir.iterdir()) == before  # nothing (partial) written


def test_cuda_and_nccl_unavailable_are_input_errors(tmp_path):
    from distbfs.device import cuda_available

    if not cuda_available()[0]:
        assert_input_error(run("bench", "--backend", "cuda", cwd=tmp_path), "--backend cuda")
    assert_input_error(run("bench", "--comm", "nccl", cwd=tmp_path), "--comm nccl")


# ------------------------------------------------------------------- error policy in process


def test_validation_failure_exits_1(monkeypatch, capsys, tmp_path):
    import distbfs.api.search as api

    real = api.run_levels

    def corrupt(*args, **kwargs):
        result = real(*args, **kwargs)
        result.distances[result.distances > 0] += 1
        return result

    monkeypatch.setattr(api, "run_levels", corrupt)
    graph = tmp_path / "g.txt"
    graph.write_text(BAD_FILES["good.txt"])
    assert cli.main(["bfs", str(graph), "--source", "0", "--validate", "-q"]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("distbfs: error: validation failed")


def test_bug_prints_traceback_and_exits_1(monkeypatch, capsys):
    def broken(ctx):
        raise RuntimeError("simulated bug")

    monkeypatch.setitem(cli.COMMANDS, "info", broken)
    assert cli.main(["info", "whatever.mtx"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "RuntimeError: simulated bug" in err


def test_keyboard_interrupt_exits_130(monkeypatch):
    def interrupted(ctx):
        raise KeyboardInterrupt

    monkeypatch.setitem(cli.COMMANDS, "info", interrupted)
    assert cli.main(["info", "whatever.mtx"]) == 130


def test_rank_local_input_error_exits_2(monkeypatch, capsys):
    from distbfs.errors import InputError

    def local_failure(ctx):
        raise InputError("data.bin: unreadable on this rank", all_ranks=False)

    monkeypatch.setitem(cli.COMMANDS, "info", local_failure)
    assert cli.main(["info", "whatever.mtx"]) == 2
    assert capsys.readouterr().err == "distbfs: error: data.bin: unreadable on this rank\n"


def test_striped_npy_failure_leaves_nothing(monkeypatch, tmp_path):
    """A write that fails after the temporary file exists removes it; the target is untouched."""
    from distbfs.comm.single import SingleRankCommunicator
    from distbfs.errors import InputError
    from distbfs.output import write_striped_npy

    comm = SingleRankCommunicator()
    target = tmp_path / "r.npy"
    write_striped_npy(target, np.arange(5, dtype=np.int32), 5, comm)
    np.testing.assert_array_equal(np.load(target), np.arange(5))
    real = np.lib.format.open_memmap

    def fail_on_reopen(path, mode="r+", **kwargs):
        if mode == "r+":
            raise OSError(28, "No space left on device")
        return real(path, mode=mode, **kwargs)

    monkeypatch.setattr(np.lib.format, "open_memmap", fail_on_reopen)
    with pytest.raises(InputError, match=r"r\.npy: cannot write: No space left on device"):
        write_striped_npy(target, np.full(5, 7, dtype=np.int32), 5, comm)
    assert [p.name for p in tmp_path.iterdir()] == ["r.npy"]
    np.testing.assert_array_equal(np.load(target), np.arange(5))  # the old file survives


def test_level_table_format():
    from distbfs.engine import LevelStats

    levels = [
        LevelStats(0, 1, 3, 3, 2, 3, 3, seconds={"expand": 0.001, "exchange": 0.002}),
        LevelStats(1, 3, 40, 10, 7, 10, 5, seconds={"expand": 0.0005, "exchange": 0.25}),
    ]
    lines = cli.format_level_table(levels).splitlines()
    assert lines[0].split() == [
        "level",
        "dir",
        "frontier",
        "edges",
        "expanded",
        "edges",
        "inspected",
        "sent",
        "remote",
        "discovered",
        "expand",
        "ms",
        "exchange",
        "ms",
    ]
    assert lines[2].split() == ["1", "TD", "3", "40", "0", "7", "5", "0.500", "250.000"]
    fused = [LevelStats(2, 5, 0, 0, 0, 0, 0, span=4, seconds={"contract_expand": 0.001})]
    assert cli.format_level_table(fused).splitlines()[1].split()[:3] == ["2-5", "TD", "5"]


def test_a_graph_too_large_for_memory_is_refused_before_building(monkeypatch, capsys, tmp_path):
    """One edge to vertex 3e9 asks for row offsets of 3e9 vertices: refused at once, naming
    the bytes, what is available and the fix (not swapped until the kernel kills the job)."""
    import distbfs.memory

    monkeypatch.setattr(distbfs.memory, "available_host_bytes", lambda: 1 << 30)
    graph = tmp_path / "far.txt"
    graph.write_text("0 3000000000\n")
    assert cli.main(["bfs", str(graph), "--source", "0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert "3,000,000,001 vertices" in err[0] and "48,000,000,056 bytes of host memory" in err[0]
    assert "1,073,741,824 are available" in err[0] and "vertices 0..n-1 without gaps" in err[0]


@pytest.mark.parametrize(
    ("error", "where"),
    [
        (MemoryError(), "host"),
        # CuPy's OutOfMemoryError is a MemoryError of the GPU
        (type("OutOfMemoryError", (MemoryError,), {}), "device"),
    ],
)
def test_out_of_memory_is_one_line_exit_2(monkeypatch, capsys, error, where):
    def exhausted(ctx):
        raise error("Out of memory allocating 1,024 bytes") if isinstance(error, type) else error

    monkeypatch.setitem(cli.COMMANDS, "info", exhausted)
    assert cli.main(["info", "whatever.mtx"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"distbfs: error: out of {where} memory")
    assert "Traceback" not in err[0] and "mpiexec -n P" in err[0]


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "args",
    [
        ["bench", "--scale", "10", "--roots", "4"],
        ["bench", "--scale", "10", "--roots", "4", "--batched"],
        ["bfs", "GRAPH", "--source", "0"],
    ],
    ids=["bench", "bench-batched", "bfs"],
)
def test_plot_writes_a_png(tmp_path, edges, args):
    graph = write_edgelist(tmp_path / "g.txt", *edges[:2])
    target = tmp_path / "plots" / "levels.png"
    args = [str(graph) if a == "GRAPH" else a for a in args]
    assert cli.main([*args, "--plot", str(target), "-q"]) == 0
    data = target.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000
    assert [p.name for p in target.parent.iterdir()] == ["levels.png"]  # no temporary left


def test_plot_without_matplotlib_is_refused_before_any_work(monkeypatch, capsys, tmp_path):
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    missing = tmp_path / "no-such-graph.txt"  # not read: the refusal comes first
    assert cli.main(["bfs", str(missing), "--source", "0", "--plot", "x.png"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "distbfs: error: --plot needs matplotlib, the optional extra: pip install 'distbfs[plot]'"
    ]


def test_plot_draws_bfs_levels_only(capsys):
    assert cli.main(["bench", "--scale", "8", "--algorithm", "cc", "--plot", "x.png"]) == 2
    assert "--plot: draws BFS levels, not --algorithm cc" in capsys.readouterr().err


def test_the_warmup_exercise_runs_every_traversal(monkeypatch):
    """``warmup``'s traversals (on a GPU: what fills CuPy's own kernel cache) run and
    validate on any backend."""
    from distbfs.api.warmup import exercise
    from distbfs.backends.numpy import NumpyBackend
    from distbfs.comm.single import SingleRankCommunicator

    assert exercise(NumpyBackend(), SingleRankCommunicator(), scale=8) > 0


def test_warmup_without_a_gpu_says_so(capsys):
    assert cli.main(["warmup", "--backend", "numpy"]) == 2
    err = capsys.readouterr().err
    assert "warmup compiles the CUDA kernels; the numpy backend has none" in err
