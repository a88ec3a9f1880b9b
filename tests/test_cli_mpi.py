"""The command line under ``mpiexec -n 4``: bad input ends the whole job within seconds with exit
status 2 and the error line printed once, without a traceback; a rank-local error and a bug end
it too (abort); a good run writes the same distances file as one rank.

Not marked ``mpi``: each test launches ``mpiexec -n 4 python -m distbfs ...`` itself (skipped
when mpiexec or mpi4py is missing). MPICH's mpiexec exits with the largest exit status of the
ranks, or with the code passed to MPI_Abort.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

RANKS = 4
DEADLINE = 30.0  # seconds: the job must be over by then
_LAUNCHER_VARS = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCALNRANKS", "SLURM_")
USER_SETTINGS = ("OMPI_ALLOW_RUN_AS_ROOT", "OMPI_MCA_plm", "OMPI_MCA_btl", "PMIX_MCA_gds")
"""Prefixes of Open MPI variables a user or a machine's image sets, not a launcher's: running
as root, how mpirun starts processes and moves bytes (a container image without ssh sets
``OMPI_MCA_plm=isolated``, ``OMPI_MCA_btl_vader_single_copy_mechanism=none`` and
``PMIX_MCA_gds=hash``); a clean environment keeps them."""


def _find_mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpiexec")


MPIEXEC = _find_mpiexec()

pytestmark = [
    pytest.mark.skipif(MPIEXEC is None, reason="mpiexec not found next to python or on PATH"),
]


@pytest.fixture(scope="module", autouse=True)
def _needs_mpi4py():
    pytest.importorskip("mpi4py", reason="mpi4py is needed for multi-rank runs")


def clean_env() -> dict[str, str]:
    """The environment without launcher variables (so an outer mpiexec does not leak in)."""
    return {
        k: v
        for k, v in os.environ.items()
        if k.startswith(USER_SETTINGS) or not k.startswith(_LAUNCHER_VARS)
    }


def launch(argv: list[str], cwd: Path, ranks: int = RANKS):
    """Run ``python argv`` on ``ranks`` ranks: (result, seconds); fails past DEADLINE."""
    command = [sys.executable, *argv]
    if ranks > 1:
        command = [MPIEXEC, "-n", str(ranks), *command]
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=DEADLINE)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(argv)}: still running after {DEADLINE} s\n{out}\n{err}")
    elapsed = time.monotonic() - start
    return subprocess.CompletedProcess(command, proc.returncode, out, err), elapsed


def distbfs(*args: object, cwd: Path, ranks: int = RANKS):
    return launch(["-m", "distbfs", *map(str, args)], cwd, ranks)


def error_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("distbfs: error:")]


def assert_job_input_error(result, *needles: str) -> None:
    proc, elapsed = result
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert elapsed < DEADLINE
    assert "Traceback" not in proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli_mpi")
    (d / "bad.mtx").write_text(
        "%%MatrixMarket matrix coordinate pattern general\n5 5 3\n1 2\n2 3\n3 x\n"
    )
    rng = np.random.default_rng(4)
    n, m = 500, 1500
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    src[0], dst[0] = 0, n - 1
    (d / "good.txt").write_text("".join(f"{u} {v}\n" for u, v in zip(src, dst, strict=True)))
    (d / "far.txt").write_text("0 300000000000\n")  # row offsets of 3e11 vertices: 4.8 TB
    return d


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["bfs", "bad.mtx", "--source", "0"], ["bad.mtx:5", "'x'"]),
        (["info", "missing.mtx"], ["missing.mtx"]),
        (
            ["bfs", "good.txt", "--source", "500"],
            ["--source: vertex 500 is out of range for a graph of 500 vertices"],
        ),
        (["bench", "--scale", "-1"], ["--scale", "-1"]),
        (["bfs", "good.txt", "--source", "1", "--bogus"], ["--bogus"]),
        (["generate", "grid2d", "--shape", "0x5", "-o", "g"], ["--shape", "0x5"]),
        (
            ["generate", "grid2d", "--shape", "4x4", "--weights", "uniform:9:1", "-o", "g"],
            ["--weights", "'uniform:9:1'"],
        ),
        (["bfs", "good.txt", "--source", "1", "--output", "good.txt/r"], ["good.txt", "directory"]),
        (["bfs", "bad.mtx/r.mtx", "--source", "1"], ["bad.mtx/r.mtx"]),
        (["bfs", "far.txt", "--source", "0"], ["300000000001 vertices", "more ranks"]),
    ],
)
def test_bad_input_ends_the_job(files, args, needles):
    assert_job_input_error(distbfs(*args, cwd=files), *needles)
    assert sorted(p.name for p in files.iterdir()) == ["bad.mtx", "far.txt", "good.txt"]


_SCRIPT = textwrap.dedent(
    """
    import sys
    from distbfs import cli
    from distbfs.errors import InputError

    def failing(ctx):
        if ctx.comm.rank == {rank}:
            raise {error}
        ctx.comm.barrier()  # the other ranks wait in a collective
        return 0

    cli.COMMANDS["info"] = failing
    sys.exit(cli.main(["info", "ignored.mtx"]))
    """
)


def test_rank_local_input_error_aborts_with_2(files):
    script = _SCRIPT.format(rank=2, error='InputError("part.7: unreadable", all_ranks=False)')
    proc, elapsed = launch(["-c", script], files)
    assert proc.returncode == 2, proc.stderr
    assert error_lines(proc.stderr) == ["distbfs: error: part.7: unreadable"]
    assert "Traceback" not in proc.stderr and elapsed < DEADLINE


def test_bug_on_one_rank_aborts_with_traceback(files):
    proc, elapsed = launch(["-c", _SCRIPT.format(rank=1, error='RuntimeError("boom")')], files)
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" in proc.stderr and "RuntimeError: boom" in proc.stderr
    assert "[rank 1]" in proc.stderr and elapsed < DEADLINE


def test_validation_failure_exits_1_printed_once(files):
    script = textwrap.dedent(
        """
        import sys
        import distbfs.api.search as api
        from distbfs import cli

        real = api.run_levels

        def corrupt(*args, **kwargs):
            result = real(*args, **kwargs)
            result.distances[result.distances > 0] += 1
            return result

        api.run_levels = corrupt
        sys.exit(cli.main(["bfs", "good.txt", "--source", "0", "--validate"]))
        """
    )
    proc, elapsed = launch(["-c", script], files)
    assert proc.returncode == 1, proc.stderr
    lines = error_lines(proc.stderr)
    assert len(lines) == 1 and lines[0].startswith("distbfs: error: validation failed")
    assert "Traceback" not in proc.stderr and elapsed < DEADLINE


def test_good_run_matches_one_rank(files, tmp_path):
    for ranks in (1, RANKS):
        proc, _ = distbfs(
            "bfs",
            files / "good.txt",
            "--source",
            0,
            "--predecessors",
            "--validate",
            "--output",
            tmp_path / f"r{ranks}",
            cwd=tmp_path,
            ranks=ranks,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("validation: passed") == 1  # rank 0 prints, once
    one = np.load(tmp_path / "r1.distances.npy")
    many = np.load(tmp_path / f"r{RANKS}.distances.npy")
    np.testing.assert_array_equal(one, many)
    assert one.shape == (500,) and one[0] == 0
    preds = np.load(tmp_path / f"r{RANKS}.predecessors.npy")
    reached = np.flatnonzero(many > 0)
    assert np.all(many[preds[reached]] == many[reached] - 1)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"r{r}.{k}.npy" for r in (1, RANKS) for k in ("distances", "predecessors")
    )


def test_bench_json_at_four_ranks(tmp_path):
    docs = {}
    for ranks in (1, RANKS):
        proc, _ = distbfs(
            "bench",
            "--scale",
            8,
            "--roots",
            6,
            "--json",
            tmp_path / f"{ranks}.json",
            cwd=tmp_path,
            ranks=ranks,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("NBFS: 6") == 1
        docs[ranks] = json.loads((tmp_path / f"{ranks}.json").read_text())
    assert docs[RANKS]["ranks"] == RANKS and docs[RANKS]["comm"] == "mpi"
    assert docs[1]["roots"] == docs[RANKS]["roots"]
    assert docs[1]["nedges"] == docs[RANKS]["nedges"]
    assert docs[1]["graph"] == docs[RANKS]["graph"]
