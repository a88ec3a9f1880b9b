"""The one place that chooses the backend (numpy or CUDA) and the communicator (one rank, MPI,
NCCL, GPU-aware MPI) of a job, and keeps them for the process: MPI and NCCL start once.

Backend (``get_backend``): ``auto`` takes CUDA when CuPy imports and sees a device, numpy
otherwise. Communicator (``get_communicator(kind, backend_name)``):

- ``auto``: one rank -> the one-rank communicator (no MPI needed; with the cuda backend this is
  the single-GPU path). Several ranks (an MPI launcher started them) -> with the cuda backend,
  NCCL when every rank has a GPU and ``cupy.cuda.nccl`` (``NCCLCommunicator``), else MPI with a
  GPU transport (``MPIGPUCommunicator``: CUDA-aware MPI when the library is, else staged through
  pinned host buffers); with the numpy backend, or when the backend is not known yet
  (``backend_name=None``), plain MPI.
- ``mpi``: MPI (with the cuda backend and several ranks, the GPU transport above).
- ``nccl``: NCCL (the backend must be cuda; ``None`` is taken as cuda); if some rank cannot use
  it, an ``InputError`` saying which rank and why, raised on every rank.

A cuda backend and the GPU communicators bind the rank's GPU first
(``distbfs.device.bind_device``, once per process). ``resolve_backend`` and ``resolve_comm``
are what the API calls: they accept names or ready objects and memoize the names.
"""

from __future__ import annotations

from .backends.base import Backend
from .comm.base import Communicator
from .comm.single import SingleRankCommunicator
from .device import bind_device, cuda_available
from .errors import InputError, InvalidArgumentType, InvalidArgumentValue
from .launcher import launcher_size

BACKEND_CHOICES = ("auto", "numpy", "cuda")
COMM_CHOICES = ("auto", "mpi", "nccl")


# --------------------------------------------------------------------------------------------
# Backends


def get_backend(name: str = "auto") -> Backend:
    """A new backend called ``name`` (one of ``BACKEND_CHOICES``)."""
    if name not in BACKEND_CHOICES:
        raise InputError(
            f"--backend: unknown backend {name!r} (choose from {', '.join(BACKEND_CHOICES)})"
        )
    if name in ("auto", "cuda"):
        ok, why = cuda_available()
        if ok:
            from .backends.cuda.backend import CudaBackend

            return CudaBackend()
        if name == "cuda":
            raise InputError(f"--backend cuda: not available: {why}")
    from .backends.numpy import NumpyBackend

    return NumpyBackend()


_BACKENDS: dict[str, Backend] = {}


def resolve_backend(backend: str | Backend = "auto") -> Backend:
    """The backend for ``backend``: a backend object as is, or a name from ``BACKEND_CHOICES``
    (one backend per name and process). A cuda backend binds this rank to its GPU first.

    Raises
    ------
    TypeError, ValueError
        ``backend`` is neither a backend nor a known name.
    InputError
        The backend is not available here (e.g. CUDA without a GPU), or the node has more ranks
        than GPUs.
    """
    if not isinstance(backend, str):
        if hasattr(backend, "xp") and hasattr(backend, "expand"):
            _bind_if_cuda(backend)
            return backend
        raise InvalidArgumentType(
            f"backend: expected a backend or one of {', '.join(BACKEND_CHOICES)}, "
            f"got {type(backend).__name__}"
        )
    if backend not in BACKEND_CHOICES:
        raise InvalidArgumentValue(
            f"backend: unknown backend {backend!r} (choose from {', '.join(BACKEND_CHOICES)})"
        )
    if backend not in _BACKENDS:
        resolved = get_backend(backend)
        _bind_if_cuda(resolved)
        _BACKENDS[backend] = resolved
    return _BACKENDS[backend]


def _bind_if_cuda(backend: Backend) -> None:
    """Bind this rank's GPU (once per process) before a cuda backend touches a device."""
    if getattr(backend, "name", None) == "cuda":
        bind_device()


# --------------------------------------------------------------------------------------------
# Communicators


def _host_communicator(kind: str) -> Communicator:
    """The host (CPU) communicator for ``kind``: one rank, or MPI through mpi4py."""
    if kind != "mpi" and launcher_size() <= 1:
        return SingleRankCommunicator()
    try:
        from .comm.mpi import MPICommunicator
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
    ok, why = cuda_available()
    if not ok:
        return False, why
    from .comm.nccl import nccl_module

    module, why = nccl_module()
    return module is not None, why


def get_communicator(kind: str = "auto", backend_name: str | None = None) -> Communicator:
    """A new communicator for this job (collective under MPI: every rank calls it alike).

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
            from .comm.nccl import NCCLCommunicator

            bind_device()
            return NCCLCommunicator(host)
        if kind == "nccl":
            rank, reason = missing[0]
            where = f" on rank {rank}" if host.size > 1 else ""
            raise InputError(f"--comm nccl: not available{where}: {reason}")
    from .comm.mpi_gpu import MPIGPUCommunicator

    bind_device()
    return MPIGPUCommunicator(host)


_COMMUNICATORS: dict[tuple[str, str | None], Communicator] = {}


def resolve_comm(
    comm: str | Communicator = "auto", backend: str | Backend | None = None
) -> Communicator:
    """The communicator for ``comm``: a ``Communicator`` as is, or a name from ``COMM_CHOICES``.

    Names are resolved once per process and kind of backend (host or cuda), so MPI initializes
    once. ``backend`` (a name or a backend) lets ``auto`` pick NCCL or a GPU transport for the
    cuda backend; without it ``auto`` gives one rank or MPI.

    Raises
    ------
    TypeError, ValueError
        ``comm`` is neither a communicator nor a known name.
    InputError
        The communicator is not available here (e.g. NCCL without a GPU, or mpi4py missing).
    """
    if isinstance(comm, Communicator):
        return comm
    if not isinstance(comm, str):
        raise InvalidArgumentType(
            f"comm: expected a Communicator or one of {', '.join(COMM_CHOICES)}, "
            f"got {type(comm).__name__}"
        )
    if comm not in COMM_CHOICES:
        raise InvalidArgumentValue(
            f"comm: unknown communicator {comm!r} (choose from {', '.join(COMM_CHOICES)})"
        )
    backend_name = None
    if backend is not None:
        backend_name = getattr(resolve_backend(backend), "name", None)
    elif comm == "nccl":
        backend_name = "cuda"  # NCCL moves device arrays
    key = (comm, "cuda" if backend_name == "cuda" else None)
    if key not in _COMMUNICATORS:
        _COMMUNICATORS[key] = get_communicator(comm, backend_name)
    return _COMMUNICATORS[key]


def resolved(backend: str | Backend, comm: str | Communicator) -> tuple[Backend, Communicator]:
    """(backend, communicator) for a pair of names or objects: the backend first, since it
    decides which communicator ``auto`` means."""
    backend_obj = resolve_backend(backend)
    return backend_obj, resolve_comm(comm, backend_obj)


__all__ = [
    "BACKEND_CHOICES",
    "COMM_CHOICES",
    "get_backend",
    "get_communicator",
    "nccl_available",
    "resolve_backend",
    "resolve_comm",
    "resolved",
]
