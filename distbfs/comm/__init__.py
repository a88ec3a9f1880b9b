"""Choosing the communicator: the one place that decides between one rank, MPI and NCCL.

``auto``: MPI when the process was started by an MPI launcher with more than one rank (or mpi4py
is already initialized), otherwise the one-rank communicator, which needs no MPI installation.
"""

from __future__ import annotations

import os

from ..errors import InputError
from .base import Bins, Communicator
from .single import SingleRankCommunicator

COMM_CHOICES = ("auto", "mpi", "nccl")

# Variables that MPI launchers (Open MPI, MPICH/Hydra, Intel MPI, PMIx) and Slurm set per rank.
_SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS")
_RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")


def launcher_size() -> int:
    """Number of ranks the launcher started, read from its environment (1 if none)."""
    for var in _SIZE_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 1


def launcher_rank() -> int:
    """This process's rank as the launcher set it (0 if none); usable before MPI starts."""
    for var in _RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0


def get_communicator(kind: str = "auto") -> Communicator:
    """The communicator for this job. ``kind`` is one of ``COMM_CHOICES``."""
    if kind not in COMM_CHOICES:
        raise InputError(
            f"--comm: unknown communicator {kind!r} (choose from {', '.join(COMM_CHOICES)})"
        )
    if kind == "nccl":
        raise InputError("--comm nccl: not available yet (NCCL arrives with multi-GPU support)")
    if kind == "auto" and launcher_size() <= 1:
        return SingleRankCommunicator()
    try:
        from .mpi import MPICommunicator
    except ImportError as exc:
        if kind == "mpi" or launcher_size() > 1:
            raise InputError(
                f"--comm {kind}: mpi4py is not importable ({exc}); install distbfs[mpi]"
            ) from None
        return SingleRankCommunicator()
    comm = MPICommunicator()
    return comm if comm.size > 1 or kind == "mpi" else SingleRankCommunicator()


__all__ = [
    "COMM_CHOICES",
    "Bins",
    "Communicator",
    "get_communicator",
    "launcher_rank",
    "launcher_size",
]
