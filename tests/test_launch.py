"""Launching on GPUs, checked on CPUs: the scripts parse; each rank picks its GPU from the
launcher's variables (Open MPI, MPICH, Slurm, per-task binding) and more ranks than GPUs is an
error naming both numbers; the communicator choices without a GPU; the node launcher's command
lines and a real 2-rank run; the Slurm scripts against a stand-in ``srun``; a planted failure on
one rank ends a 2-rank job promptly with its message."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_cli_mpi import USER_SETTINGS

from distbfs.comm.single import SingleRankCommunicator
from distbfs.device import bind_device, place, slurm_tasks_on_node
from distbfs.errors import InputError
from distbfs.runtime import get_communicator

REPO = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    [
        REPO / "launch" / "run_node.sh",
        REPO / "slurm" / "common.sh",
        *(REPO / "slurm").glob("*.sbatch"),
        *(REPO / "benchmarks").glob("device_*.sh"),
    ]
)
_LAUNCHER_VARS = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCAL", "SLURM_", "PALS_")


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without launcher variables, plus ``extra``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k.startswith(USER_SETTINGS) or not k.startswith(_LAUNCHER_VARS)
    }
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.update(extra)
    return env


def _mpiexec() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    return str(beside) if beside.exists() else shutil.which("mpiexec")


# -- the scripts parse ------------------------------------------------------------------------


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: str(p.relative_to(REPO)))
def test_script_parses(script):
    assert script.exists()
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# -- GPU binding from the launcher's variables --------------------------------------------------


BINDINGS = {
    "open_mpi": ({"OMPI_COMM_WORLD_LOCAL_RANK": "1", "OMPI_COMM_WORLD_LOCAL_SIZE": "2"}, 2, 1),
    "mpich_hydra": ({"MPI_LOCALRANKID": "3", "MPI_LOCALNRANKS": "4"}, 4, 3),
    "pmi": ({"PMI_LOCAL_RANK": "2", "PMI_LOCAL_SIZE": "4"}, 8, 2),
    "cray_pals": ({"PALS_LOCAL_RANKID": "1", "PALS_LOCAL_SIZE": "2"}, 2, 1),
    "srun_all_gpus_visible": (
        {"SLURM_LOCALID": "3", "SLURM_STEP_TASKS_PER_NODE": "4(x2)", "SLURM_NODEID": "1"},
        4,
        3,
    ),
    "srun_gpus_per_task": (  # each task sees only its own GPU: device 0 for every rank
        {
            "SLURM_LOCALID": "3",
            "SLURM_STEP_TASKS_PER_NODE": "4",
            "SLURM_GPUS_PER_TASK": "1",
            "CUDA_VISIBLE_DEVICES": "3",
        },
        1,
        0,
    ),
    "srun_typed_gpus_per_task": (
        {
            "SLURM_LOCALID": "1",
            "SLURM_STEP_TASKS_PER_NODE": "2",
            "SLURM_GPUS_PER_TASK": "h200:1",
            "CUDA_VISIBLE_DEVICES": "0",
        },
        1,
        0,
    ),
    "mpirun_inside_sbatch": (  # the batch step's SLURM_LOCALID=0 is inherited by every rank
        {
            "SLURM_LOCALID": "0",
            "OMPI_COMM_WORLD_LOCAL_RANK": "1",
            "OMPI_COMM_WORLD_LOCAL_SIZE": "2",
        },
        2,
        1,
    ),
    "single_process": ({}, 1, 0),
    "single_process_many_gpus": ({}, 8, 0),
}


@pytest.mark.parametrize("case", sorted(BINDINGS))
def test_bind_device_picks_the_local_ranks_gpu(case):
    environ, gpus, expected = BINDINGS[case]
    assert bind_device(environ=environ, device_count=gpus, select=False) == expected
    placement = place(environ, gpus)
    assert placement.device == expected
    assert placement.per_task == case.endswith("gpus_per_task")


@pytest.mark.parametrize(
    ("environ", "gpus", "ranks"),
    [
        ({"OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}, 2, 4),
        ({"MPI_LOCALRANKID": "2", "MPI_LOCALNRANKS": "3"}, 1, 3),
        ({"SLURM_LOCALID": "5", "SLURM_STEP_TASKS_PER_NODE": "8"}, 4, 8),
        ({"SLURM_LOCALID": "2"}, 2, 3),  # local size unknown: at least local rank + 1
        # Per-task binding claimed, but the task sees more GPUs than it was given: no guessing.
        (
            {
                "SLURM_LOCALID": "3",
                "SLURM_STEP_TASKS_PER_NODE": "4",
                "SLURM_GPUS_PER_TASK": "1",
                "CUDA_VISIBLE_DEVICES": "0,1",
            },
            2,
            4,
        ),
    ],
)
def test_more_ranks_than_gpus_is_an_error_naming_both(environ, gpus, ranks):
    with pytest.raises(InputError) as info:
        bind_device(environ=environ, device_count=gpus, select=False)
    message = str(info.value)
    assert f"{ranks} ranks on node" in message
    assert f"only {gpus} GPU" in message
    assert "--gpus-per-task" in message


def test_too_many_ranks_is_agreed_when_the_whole_job_is_on_the_node():
    environ = {"OMPI_COMM_WORLD_LOCAL_RANK": "0", "OMPI_COMM_WORLD_LOCAL_SIZE": "4"}
    with pytest.raises(InputError) as info:
        place(environ, 2, job_size=4)
    assert info.value.all_ranks  # every rank raises it: printed once
    with pytest.raises(InputError) as info:
        place(environ, 2, job_size=8)
    assert not info.value.all_ranks  # ranks on other nodes may be fine: each says it


def test_no_gpu_is_an_error():
    with pytest.raises(InputError, match="no CUDA device visible"):
        bind_device(environ={}, device_count=0, select=False)


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"SLURM_STEP_TASKS_PER_NODE": "4(x2),3", "SLURM_NODEID": "2"}, 3),
        ({"SLURM_STEP_TASKS_PER_NODE": "4(x2),3", "SLURM_NODEID": "1"}, 4),
        ({"SLURM_TASKS_PER_NODE": "2", "SLURM_NODEID": "0"}, 2),
        ({"SLURM_NTASKS_PER_NODE": "6"}, 6),
        ({}, None),
    ],
)
def test_slurm_tasks_on_node(environ, expected):
    assert slurm_tasks_on_node(environ) == expected


def test_device_module_prints_the_binding():
    env = clean_env(OMPI_COMM_WORLD_LOCAL_RANK="1", OMPI_COMM_WORLD_LOCAL_SIZE="2")
    command = [sys.executable, "-m", "distbfs.device", "--gpus", "2"]
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "local rank 1 of 2 (OMPI_COMM_WORLD_LOCAL_RANK) -> device 1 of 2" in result.stdout
    assert result.stderr == ""  # no warning: the module run is not one the package imported
    command[-1] = "1"
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and "2 ranks on node" in result.stderr


# -- communicator choices without a GPU --------------------------------------------------------


def test_nccl_without_a_gpu_says_why():
    from distbfs.runtime import nccl_available

    ok, why = nccl_available()
    if ok:
        pytest.skip("NCCL is available here")
    with pytest.raises(InputError, match=r"^--comm nccl: not available: ") as info:
        get_communicator("nccl")
    assert why in str(info.value)
    with pytest.raises(InputError, match="not available"):
        get_communicator("nccl", "cuda")


def test_nccl_needs_the_cuda_backend():
    with pytest.raises(InputError, match="needs --backend cuda"):
        get_communicator("nccl", "numpy")


def test_one_rank_is_the_single_rank_communicator_whatever_the_backend():
    for backend in (None, "numpy", "cuda"):
        assert isinstance(get_communicator("auto", backend), SingleRankCommunicator)
    with pytest.raises(InputError, match="unknown communicator"):
        get_communicator("gloo")


def test_resolve_comm_nccl_without_a_gpu():
    from distbfs.api import resolve_comm
    from distbfs.runtime import nccl_available

    if nccl_available()[0]:
        pytest.skip("NCCL is available here")
    with pytest.raises(InputError, match="--comm nccl: not available"):
        resolve_comm("nccl")
    assert isinstance(resolve_comm("auto", "numpy"), SingleRankCommunicator)


def test_cuda_aware_mpi_detection_and_override():
    pytest.importorskip("mpi4py")
    from distbfs.comm.mpi_gpu import mpi_cuda_aware

    assert mpi_cuda_aware({"DISTBFS_MPI_CUDA_AWARE": "1"}) == (True, "DISTBFS_MPI_CUDA_AWARE=1")
    assert mpi_cuda_aware({"DISTBFS_MPI_CUDA_AWARE": "no"})[0] is False
    aware, why = mpi_cuda_aware({})
    assert isinstance(aware, bool) and why


# -- the node launcher --------------------------------------------------------------------------


TWO_GPUS = {"CUDA_VISIBLE_DEVICES": "0,1"}
"""What a two-rank run of the node launcher is shown, so that it starts on a host of one GPU
too (CPU ranks need none)."""


def run_node(*args: str, **env: str) -> subprocess.CompletedProcess:
    environ = clean_env(PYTHON=sys.executable, **env)
    return subprocess.run(
        ["bash", str(REPO / "launch" / "run_node.sh"), *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
    )


def test_run_node_command_lines():
    mpiexec = _mpiexec() or "/usr/bin/mpirun"
    two = run_node("2", "bench", "--scale", "10", DISTBFS_DRY_RUN="1", MPIRUN=mpiexec, **TWO_GPUS)
    assert two.returncode == 0, two.stderr
    assert f"{mpiexec} -n 2 " in two.stdout
    assert two.stdout.rstrip().endswith(f"{sys.executable} -m distbfs bench --scale 10")
    assert "CUPY_CACHE_DIR=" in two.stdout
    one = run_node("1", "bench", DISTBFS_DRY_RUN="1", PATH="/usr/bin:/bin")
    assert one.returncode == 0, one.stderr
    assert one.stdout.rstrip().endswith(f"{sys.executable} -m distbfs bench")
    assert one.stdout.split()[1] == sys.executable  # no launcher in front
    kept = run_node("1", DISTBFS_DRY_RUN="1", CUPY_CACHE_DIR="/scratch/cache")
    assert kept.stdout.startswith("CUPY_CACHE_DIR=/scratch/cache ")


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        (["0"], {}, "NGPUS must be a positive integer"),
        (["two"], {}, "NGPUS must be a positive integer"),
        (["3", "bench"], {"CUDA_VISIBLE_DEVICES": "0,1"}, "3 ranks asked for but only 2 GPU"),
        (["2"], {"MPIRUN": "", "PATH": "<tools only>"}, "need mpirun or mpiexec"),
    ],
)
def test_run_node_errors(tmp_path, args, env, message):
    if env.get("PATH") == "<tools only>":  # a PATH with the script's tools and no launcher
        for tool in ("id", "tr", "grep"):
            (tmp_path / tool).symlink_to(shutil.which(tool))
        env = {**env, "PATH": str(tmp_path)}
    result = subprocess.run(
        ["/bin/bash", str(REPO / "launch" / "run_node.sh"), *args],
        env={**clean_env(PYTHON=sys.executable), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert message in result.stderr


def test_run_node_runs_two_ranks():
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("mpiexec not found")
    pytest.importorskip("mpi4py")
    result = run_node(
        "2",
        "bench",
        "--backend",
        "numpy",
        "--scale",
        "8",
        "--roots",
        "2",
        "-q",
        MPIRUN=mpiexec,
        **TWO_GPUS,
    )
    assert result.returncode == 0, result.stderr
    assert "validation: passed (2 searches)" in result.stdout
    assert "num_mpi_processes: 2" in result.stdout


# -- the Slurm scripts against a stand-in srun -------------------------------------------------

FAKE_SRUN = r"""#!/usr/bin/env bash
# Stand-in for srun: logs its words and environment; runs `-m distbfs.device` once per task with
# the variables srun --gpus-per-task would give each task.
{ echo "srun $*"; echo "env CUPY_CACHE_DIR=$CUPY_CACHE_DIR NCCL_DEBUG=$NCCL_DEBUG"; } >>"$FAKE_LOG"
while [[ $# -gt 0 && $1 == --* ]]; do shift; done
if [[ "$*" == *"-m distbfs.device"* ]]; then
  for ((i = 0; i < FAKE_NTASKS; i++)); do
    SLURM_LOCALID=$i SLURM_PROCID=$i SLURM_STEP_TASKS_PER_NODE=$FAKE_NTASKS \
      CUDA_VISIBLE_DEVICES=$i "$@" --gpus 1 >>"$FAKE_LOG" 2>&1
  done
fi
"""


@pytest.fixture()
def fake_slurm(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    srun = bin_dir / "srun"
    srun.write_text(FAKE_SRUN)
    srun.chmod(0o755)
    submit = tmp_path / "submit"
    submit.mkdir()
    (submit / "slurm").symlink_to(REPO / "slurm")
    log = tmp_path / "srun.log"
    env = clean_env(
        PATH=f"{bin_dir}:{os.environ['PATH']}",
        PYTHONPATH=str(REPO),
        FAKE_LOG=str(log),
        FAKE_NTASKS="4",
        SLURM_JOB_ID="4242",
        SLURM_NTASKS="4",
        SLURM_GPUS_PER_TASK="1",
        SLURM_SUBMIT_DIR=str(submit),
        DISTBFS_PYTHON=sys.executable,
        TMPDIR=str(tmp_path),
        HOME=str(tmp_path / "home"),
    )
    env.pop("CUPY_CACHE_DIR", None)
    env.pop("XDG_CACHE_HOME", None)
    env.pop("NCCL_DEBUG", None)

    def run(script: str, *args: str, **extra: str) -> str:
        result = subprocess.run(
            ["bash", str(REPO / "slurm" / script), *args],
            env={**env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        assert result.returncode == 0, result.stderr
        return log.read_text()

    run.tmp_path = tmp_path  # type: ignore[attr-defined]
    run.home = tmp_path / "home"  # type: ignore[attr-defined]
    return run


@pytest.mark.parametrize("script", ["one_node.sbatch", "multi_node.sbatch"])
def test_slurm_scripts_srun_line_and_binding(fake_slurm, script):
    log = fake_slurm(script, "bench", "--scale", "10")
    runs = [line for line in log.splitlines() if line.startswith("srun ")]
    assert len(runs) == 2  # the binding check, then the job
    for line in runs:
        for word in ("--mpi=pmix", "--kill-on-bad-exit=1", "--gpus-per-task=1"):
            assert word in line.split()
        assert "--gpu-bind=per_task:1" in line.split()
    assert runs[1].endswith(f"{sys.executable} -m distbfs bench --scale 10")
    cache = f"CUPY_CACHE_DIR={fake_slurm.home}/.cache/distbfs-cupy NCCL_DEBUG=WARN"
    assert cache in log
    for rank in range(4):
        assert f"local rank {rank} of 4 (SLURM_LOCALID) -> device 0 of 1 visible" in log
    assert "error" not in log


def test_slurm_default_job_and_overrides(fake_slurm):
    log = fake_slurm("one_node.sbatch", DISTBFS_SRUN_MPI="pmi2", NCCL_DEBUG="INFO")
    job = [line for line in log.splitlines() if line.startswith("srun ")][-1]
    assert "--mpi=pmi2" in job.split()
    assert job.endswith("-m distbfs bench")
    assert "NCCL_DEBUG=INFO" in log


def test_graph500_job_scales_with_ranks(fake_slurm):
    log = fake_slurm("graph500_bench.sbatch")
    job = [line for line in log.splitlines() if line.startswith("srun ")][-1]
    assert "-m distbfs bench --backend cuda --comm auto --scale 28 --roots 64" in job
    assert "--predecessors --json results/graph500-4242.json" in job
    log = fake_slurm("graph500_bench.sbatch", "--no-validate", SCALE="25", ROOTS="8")
    job = [line for line in log.splitlines() if line.startswith("srun ")][-1]
    assert "--scale 25 --roots 8" in job and job.endswith("--no-validate")


# -- a planted failure on one rank ends the job -----------------------------------------------


@pytest.mark.parametrize(("stage", "kind"), [("filter_partition", "bug"), ("contract", "device")])
def test_failure_on_one_rank_ends_the_job(tmp_path, stage, kind):
    mpiexec = _mpiexec()
    if mpiexec is None:
        pytest.skip("mpiexec not found")
    pytest.importorskip("mpi4py")
    env = clean_env(
        PYTHONPATH=str(REPO),
        DISTBFS_TEST_FAIL_RANK="1",
        DISTBFS_TEST_FAIL_STAGE=stage,
        DISTBFS_TEST_FAIL_KIND=kind,
    )
    command = [mpiexec, "-n", "2", sys.executable, str(REPO / "tests" / "fail_job.py")]
    command += ["bench", "--backend", "numpy", "--comm", "mpi", "--scale", "10", "--roots", "2"]
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the job still ran after 60 s\n{out}\n{err}")
    assert time.monotonic() - start < 60
    assert proc.returncode != 0
    assert f"planted failure on rank 1 at level 1 in {stage}" in err
    if kind == "device":
        assert "distbfs: error: planted failure" in err
    else:
        assert "[rank 1] distbfs: internal error" in err
