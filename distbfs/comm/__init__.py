"""Choosing the communicator: the one place that decides between one rank, MPI and NCCL.

``get_communicator(kind, backend_name)``:

- ``auto``: one rank -> the one-rank communicator (no MPI needed; with the cuda backend this is
  the single-GPU path). Several ranks (an MPI launcher started them) -> with the cuda backend,
  NCCL when every rank has a GPU and ``cupy.cuda.nccl`` (``NCCLCommunicator``), else MPI with a
  GPU transport (``MPIGPUCommunicator``: CUDA-aware MPI when the library is, else staged through
  pinned host buffers); with the numpy backend, or when the backend is not known yet
  (``backend_name=None``), plain MPI.
- ``mpi``: MPI (with the cuda backend and several ranks, the GPU transport above).
- ``nccl``: NCCL (the backend must be cuda; ``None`` is taken as cuda); if some rank cannot use
  it, an ``InputError`` saying which rank and why, raised on every rank.

GPU communicators bind the rank's GPU first (``distbfs.device.bind_device``, once per process).
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


def _host_communicator(kind: str) -> Communicator:
    """The host (CPU) communicator for ``kind``: one rank, or MPI through mpi4py."""
    if kind != "mpi" and launcher_size() <= 1:
        return SingleRankCommunicator()
    try:
        from .mpi import MPICommunicator
    except ImportError as exc:
        if kind != "auto" or launcher_size() > 1:
            raise InputError(
                f"--comm {kind}: mpi4py is not importable ({exc}); install distbfs[mpi]"
            ) from None
        return SingleRankCommunicator()
    comm = MPICommunicator()
    return comm if comm.size > 1 or kind == "mpi" else SingleRankCommunicator()


def nccl_available() -> tuple[bool, str]:
    """(whether this process can use the NCCL communicator, why not)."""
    from ..backends import cuda_available

    ok, why = cuda_available()
    if not ok:
        return False, why
    from .nccl import nccl_module

    module, why = nccl_module()
    return module is not None, why


def get_communicator(kind: str = "auto", backend_name: str | None = None) -> Communicator:
    """The communicator for this job (collective under MPI: every rank calls it alike).

    Parameters
    ----------
    kind : {"auto", "mpi", "nccl"}
        See the module docstring.
    backend_name : str, optional
        Name of the backend the job runs (``"numpy"``, ``"cuda"``); None when not known, which
        never picks a GPU transport for ``auto`` or ``mpi``.

    Raises
    ------
    InputError
        Unknown ``kind``; ``nccl`` with another backend than cuda, or unavailable on some rank
        ("--comm nccl: not available: ..."); MPI requested but mpi4py missing.
    """
    if kind not in COMM_CHOICES:
        raise InputError(
            f"--comm: unknown communicator {kind!r} (choose from {', '.join(COMM_CHOICES)})"
        )
    if kind == "nccl" and backend_name not in (None, "cuda"):
        raise InputError(
            f"--comm nccl: needs --backend cuda (NCCL moves device arrays), got {backend_name}"
        )
    if kind == "nccl" and launcher_size() <= 1:
        ok, why = nccl_available()  # decided before any MPI starts: one rank needs none
        if not ok:
            raise InputError(f"--comm nccl: not available: {why}")
    host = _host_communicator(kind)
    if kind != "nccl" and (backend_name != "cuda" or host.size == 1):
        return host
    if kind in ("auto", "nccl"):
        ok, why = nccl_available()
        answers = host.allgather_object((ok, why))
        missing = [(rank, reason) for rank, (usable, reason) in enumerate(answers) if not usable]
        if not missing:
            from ..device import bind_device
            from .nccl import NCCLCommunicator

            bind_device()
            return NCCLCommunicator(host)
        if kind == "nccl":
            rank, reason = missing[0]
            where = f" on rank {rank}" if host.size > 1 else ""
            raise InputError(f"--comm nccl: not available{where}: {reason}")
    from ..device import bind_device
    from .mpi_gpu import MPIGPUCommunicator

    bind_device()
    return MPIGPUCommunicator(host)


__all__ = [
    "COMM_CHOICES",
    "Bins",
    "Communicator",
    "get_communicator",
    "launcher_rank",
    "launcher_size",
    "nccl_available",
]
