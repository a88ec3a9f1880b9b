"""Shared fixtures: the job's communicator, the backends every engine and traversal test runs
on, the shared real graphs.

``backend`` is numpy everywhere and cuda where a GPU is present (marked ``gpu``, skipped with a
reason elsewhere), so each test body exists once and runs on both; ``backend_comm`` is the
communicator that backend's searches exchange through (the host one for numpy; NCCL or GPU-aware
MPI for cuda on several ranks). Tests derive their expectations from ``comm.size`` so they hold
at 1, 2, 3 and 4 ranks. Tests marked ``mpi`` run under ``mpiexec -n P python -m pytest
--with-mpi -m mpi``; the others in a plain ``python -m pytest``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from distbfs.backends.numpy import NumpyBackend
from distbfs.runtime import get_communicator, resolve_comm

REPO = Path(__file__).resolve().parents[1]


def _data_dir() -> Path:
    env = os.environ.get("DISTBFS_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


DATA_DIR = _data_dir()


@pytest.fixture(scope="session")
def comm():
    """The communicator of this test process (one rank, or MPI under mpiexec)."""
    return get_communicator("auto")


@pytest.fixture(scope="session")
def data_dir() -> Path:
    if not DATA_DIR.is_dir():
        pytest.skip(f"shared real graphs not found at {DATA_DIR} (set DISTBFS_DATA)")
    return DATA_DIR


def _cupy_or_skip():
    try:
        import cupy

        cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no CuPy, no driver, or no device
        pytest.skip(f"CuPy with a CUDA device is not available ({type(exc).__name__}: {exc})")
    return cupy


def cupy_module_or_skip():
    """CuPy, for a test module that needs a CUDA device throughout: the whole module is skipped,
    with the reason, where CuPy, a driver or a device is missing."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    try:
        devices = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no driver, or a broken one
        pytest.skip(f"no usable CUDA device ({type(exc).__name__}: {exc})", allow_module_level=True)
    if devices < 1:
        pytest.skip("no CUDA device is visible", allow_module_level=True)
    return cupy


@pytest.fixture(params=["numpy", pytest.param("cupy", marks=pytest.mark.gpu)])
def xp(request):
    """The array module under test: numpy everywhere, cupy where a GPU is present."""
    return np if request.param == "numpy" else _cupy_or_skip()


def make_backend(name: str, *, replica: bool = False):
    """A backend by name: "numpy", or "cuda" (skips the test where there is no GPU). The CUDA
    backend keeps no replica unless asked (``replica``): several ranks then run every search
    striped, with exchanges, as the numpy backend does; small graphs searched whole on every
    rank's copy have tests of their own."""
    if name == "numpy":
        return NumpyBackend()
    _cupy_or_skip()
    from distbfs.backends.cuda.backend import CudaBackend
    from distbfs.device import bind_device

    bind_device()
    return CudaBackend() if replica else CudaBackend(replica_limit_bytes=0)


@pytest.fixture(params=["numpy", pytest.param("cuda", marks=pytest.mark.gpu)])
def backend(request):
    """The backend under test: numpy everywhere, cuda where a GPU is present."""
    return make_backend(request.param)


@pytest.fixture
def backend_comm(backend, comm):
    """The communicator searches on ``backend`` exchange through (same ranks as ``comm``)."""
    return comm if backend.name == "numpy" else cuda_comm()


def cuda_comm():
    """The communicator of this test process for the CUDA backend (same ranks as ``comm``)."""
    # DISTBFS_TEST_COMM=mpi: ranks sharing one GPU (NCCL refuses two ranks on one device)
    return resolve_comm(os.environ.get("DISTBFS_TEST_COMM", "auto"), "cuda")


@pytest.fixture(scope="module")
def shared(comm):
    """A directory every rank sees (pytest's tmp_path differs per rank)."""
    path = comm.bcast_object(tempfile.mkdtemp(prefix="distbfs-") if comm.rank == 0 else None)
    yield Path(path)
    comm.barrier()
    if comm.rank == 0:
        shutil.rmtree(path, ignore_errors=True)
