"""What the launcher (``mpirun``, ``mpiexec``, ``srun``) tells each process through its
environment, readable before MPI starts: how many ranks it started and which one this is.

Used to print on rank 0 only before any communicator exists, and to decide whether MPI is
needed at all (one process needs none).
"""

from __future__ import annotations

import os

SIZE_VARS = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS")
"""Variables that MPI launchers (Open MPI, MPICH/Hydra, Intel MPI, PMIx) and Slurm set to the
number of ranks, in the order they are trusted."""
RANK_VARS = ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID")
"""Their per-rank counterparts: this process's rank."""


def launcher_size() -> int:
    """Number of ranks the launcher started, read from its environment (1 if none)."""
    for var in SIZE_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 1


def launcher_rank() -> int:
    """This process's rank as the launcher set it (0 if none); usable before MPI starts."""
    for var in RANK_VARS:
        if os.environ.get(var, "").isdigit():
            return int(os.environ[var])
    return 0
