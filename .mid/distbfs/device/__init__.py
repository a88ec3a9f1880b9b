"""GPU binding: each rank takes one GPU of its node, chosen by its node-local rank.

Section 6.1 of the paper runs one GPU per rank. Which GPU is decided here, once per process,
before anything touches a device (``bind_device`` is called by ``distbfs.runtime`` when the
backend is cuda and before a GPU communicator starts; later calls return the first answer).

The node-local rank comes from the launcher, identically under ``mpirun`` and ``srun``:

1. a launcher's own per-process variable: ``OMPI_COMM_WORLD_LOCAL_RANK`` (Open MPI's mpirun),
   ``MPI_LOCALRANKID`` (MPICH/Intel MPI's Hydra), ``PMI_LOCAL_RANK``, ``PALS_LOCAL_RANKID``
   (Cray PALS); each paired with its local-size variable;
2. ``SLURM_LOCALID`` of an ``srun`` task (local size from ``SLURM_STEP_TASKS_PER_NODE`` and
   ``SLURM_NODEID``). It comes after the launcher variables because an ``mpirun`` inside a batch
   script inherits the batch step's ``SLURM_LOCALID`` (0 on every rank);
3. otherwise, when MPI is (or will be) running with several ranks, an MPI shared-memory split
   (``MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)``), whose rank and size are the node's;
4. otherwise local rank 0 of 1 (one process: no MPI needed).

Invariants: the device is ``local_rank`` among the GPUs the process sees, except under per-task
GPU binding (``srun --gpus-per-task=N`` makes each task see only its own GPUs through
``CUDA_VISIBLE_DEVICES``), where it is device 0; more ranks on a node than GPUs is an
``InputError`` naming both numbers, never two ranks silently sharing a GPU.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import InputError
from ..launcher import launcher_rank, launcher_size

LOCAL_RANK_VARS: tuple[tuple[str, str | None], ...] = (
    ("OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"),
    ("MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
    ("PMI_LOCAL_RANK", "PMI_LOCAL_SIZE"),
    ("PALS_LOCAL_RANKID", "PALS_LOCAL_SIZE"),
    ("SLURM_LOCALID", None),
)
"""(local-rank variable, local-size variable) of each launcher, in the order they are trusted."""


@dataclass(frozen=True)
class Placement:
    """Where one rank runs: its node-local rank, how it was found, and the device it takes."""

    local_rank: int
    local_size: int | None  # None: the launcher did not say
    source: str  # the variable or method that gave local_rank
    device_count: int  # GPUs this process sees
    device: int  # index among them
    per_task: bool  # the launcher gave this task its own GPUs (device 0)

    def describe(self) -> str:
        size = "?" if self.local_size is None else str(self.local_size)
        how = "its own GPUs (per-task binding)" if self.per_task else "the node's GPUs"
        return (
            f"local rank {self.local_rank} of {size} ({self.source}) -> device {self.device} of "
            f"{self.device_count} visible, {how}"
        )


_BOUND: Placement | None = None


def _int(value: str | None) -> int | None:
    if value is None:
        return None
    value = value.strip()
    return int(value) if value.isdigit() else None


def slurm_tasks_on_node(environ: Mapping[str, str]) -> int | None:
    """Tasks of this job step on this node, from ``SLURM_STEP_TASKS_PER_NODE`` (e.g. ``4(x2),3``)
    indexed by ``SLURM_NODEID``; ``SLURM_NTASKS_PER_NODE`` if that is all there is."""
    spec = environ.get("SLURM_STEP_TASKS_PER_NODE") or environ.get("SLURM_TASKS_PER_NODE")
    node = _int(environ.get("SLURM_NODEID")) or 0
    if spec:
        counts: list[int] = []
        for part in spec.split(","):
            match = re.fullmatch(r"\s*(\d+)(?:\(x(\d+)\))?\s*", part)
            if match is None:
                counts = []
                break
            counts += [int(match.group(1))] * int(match.group(2) or 1)
        if node < len(counts):
            return counts[node]
    return _int(environ.get("SLURM_NTASKS_PER_NODE"))


def local_rank_from_env(environ: Mapping[str, str]) -> tuple[int, int | None, str] | None:
    """(node-local rank, local size or None, variable) from the launcher's variables, or None."""
    for rank_var, size_var in LOCAL_RANK_VARS:
        rank = _int(environ.get(rank_var))
        if rank is None:
            continue
        if size_var is not None:
            size = _int(environ.get(size_var))
        else:
            size = slurm_tasks_on_node(environ)
        return rank, size, rank_var
    return None


def local_rank_from_mpi() -> tuple[int, int] | None:
    """(node-local rank, local size) from an MPI shared-memory split; None without several ranks.

    Initializes MPI (through mpi4py) when a launcher started several ranks; the communicator
    made later uses the same MPI.
    """
    already = "mpi4py.MPI" in sys.modules
    if not already and launcher_size() <= 1:
        return None
    try:
        from mpi4py import MPI
    except ImportError:
        return None
    if not MPI.Is_initialized() or MPI.Is_finalized() or MPI.COMM_WORLD.Get_size() <= 1:
        return None
    node = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED, key=MPI.COMM_WORLD.Get_rank())
    try:
        return node.Get_rank(), node.Get_size()
    finally:
        node.Free()


def cuda_available() -> tuple[bool, str]:
    """(whether CuPy imports and sees a CUDA device here, why not)."""
    try:
        import cupy
    except ImportError as exc:
        return False, f"CuPy is not importable ({exc}); install distbfs[cuda12] or [cuda13]"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return False, "no CUDA device is visible"
    except Exception as exc:  # CUDA driver missing or broken
        return False, f"no usable CUDA device ({exc})"
    return True, ""


def visible_device_count() -> int:
    """Number of CUDA devices this process sees (after ``CUDA_VISIBLE_DEVICES``); 0 without."""
    try:
        import cupy

        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, no device
        return 0


def _gpus_per_task(environ: Mapping[str, str]) -> int | None:
    """GPUs Slurm gave each task (``--gpus-per-task``: ``SLURM_GPUS_PER_TASK``, e.g. ``h200:1``)."""
    value = environ.get("SLURM_GPUS_PER_TASK")
    if not value:
        return None
    return _int(value.rsplit(":", 1)[-1])


def place(
    environ: Mapping[str, str],
    device_count: int,
    mpi_local: tuple[int, int] | None = None,
    job_size: int | None = None,
) -> Placement:
    """The ``Placement`` of this rank given its environment and visible device count (pure).

    ``mpi_local`` is the (local rank, local size) of an MPI shared-memory split, used when no
    launcher variable is set. ``job_size``: ranks in the job; when they all run on this node,
    the too-many-ranks error is raised alike on every rank (``InputError.all_ranks``: printed
    once), otherwise by each rank for itself.

    Raises
    ------
    InputError
        No device is visible, or the node has more ranks than this rank can get GPUs for.
    """
    found = local_rank_from_env(environ)
    if found is not None:
        local_rank, local_size, source = found
    elif mpi_local is not None:
        (local_rank, local_size), source = mpi_local, "MPI shared-memory split"
    else:
        local_rank, local_size, source = 0, 1, "single process"
    host = socket.gethostname()
    if device_count < 1:
        raise InputError(
            f"no CUDA device visible to local rank {local_rank} on {host} "
            f"(CUDA_VISIBLE_DEVICES={environ.get('CUDA_VISIBLE_DEVICES', '<unset>')})",
            all_ranks=False,
        )
    ranks = max(local_size or 0, local_rank + 1)
    if ranks <= device_count:
        return Placement(local_rank, local_size, source, device_count, local_rank, False)
    per_task = _gpus_per_task(environ)
    if per_task is not None and "CUDA_VISIBLE_DEVICES" in environ and device_count <= per_task:
        # srun --gpus-per-task: this task sees only its own GPUs.
        return Placement(local_rank, local_size, source, device_count, 0, True)
    whole_job_here = local_size is not None and local_size == job_size
    raise InputError(
        f"{ranks} ranks on node {host} but only {device_count} GPU"
        f"{'s' if device_count != 1 else ''} visible (local rank {local_rank}, from {source}; "
        f"CUDA_VISIBLE_DEVICES={environ.get('CUDA_VISIBLE_DEVICES', '<unset>')}): start at most "
        f"{device_count} rank{'s' if device_count != 1 else ''} per node (mpirun -n, srun "
        "--ntasks-per-node), or give each task its own GPU (srun --gpus-per-task=1)",
        all_ranks=whole_job_here,
    )


def bind_device(
    *,
    environ: Mapping[str, str] | None = None,
    device_count: int | None = None,
    select: bool = True,
) -> int:
    """Choose this rank's GPU from its node-local rank and make it CuPy's current device.

    With no arguments the first call decides and later calls return the same device (binding
    happens once per process, before any device memory exists). ``environ`` and
    ``device_count`` replace ``os.environ`` and the visible device count (for tests and dry
    runs; then nothing is memoized); ``select=False`` only computes the choice.

    Returns
    -------
    int
        The device index among the visible ones.

    Raises
    ------
    InputError
        No GPU visible, or more ranks on the node than GPUs (the message names both numbers).
    """
    global _BOUND
    defaults = environ is None and device_count is None
    if defaults and _BOUND is not None:
        return _BOUND.device
    env = os.environ if environ is None else environ
    count = visible_device_count() if device_count is None else device_count
    mpi_local = local_rank_from_mpi() if local_rank_from_env(env) is None else None
    placement = place(env, count, mpi_local, job_size=launcher_size() if environ is None else None)
    if select:
        import cupy

        cupy.cuda.Device(placement.device).use()
    if defaults and select:
        _BOUND = placement
    return placement.device


def bound_placement() -> Placement | None:
    """The placement ``bind_device`` chose in this process (None before it ran)."""
    return _BOUND


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m distbfs.device [--gpus N]``: print the GPU this rank would take (no GPU work).

    Run it under the launcher (``srun python -m distbfs.device``) to check a binding.
    """
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m distbfs.device",
        description="Print the GPU this rank takes (from its node-local rank).",
    )
    parser.add_argument(
        "--gpus", type=int, default=None, help="visible GPU count to assume (default: ask CUDA)"
    )
    args = parser.parse_args(argv)
    count = visible_device_count() if args.gpus is None else args.gpus
    try:
        placement = place(os.environ, count)
    except InputError as exc:
        print(f"rank {launcher_rank()} on {socket.gethostname()}: error: {exc}", file=sys.stderr)
        return 2
    print(f"rank {launcher_rank()} on {socket.gethostname()}: {placement.describe()}", flush=True)
    return 0
