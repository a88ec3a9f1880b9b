"""Communication between the ranks of a job: one interface (``Communicator``, ``Bins``) and its
implementations, one rank (``single``), MPI (``mpi``), and for device arrays NCCL (``nccl``) or
a GPU-aware MPI transport (``mpi_gpu``). Which one runs is decided in one place,
``distbfs.runtime.get_communicator``; nothing here depends on the backends or on GPU binding.
"""

from __future__ import annotations

from .base import Bins, Communicator
from .single import SingleRankCommunicator

__all__ = ["Bins", "Communicator", "SingleRankCommunicator"]
