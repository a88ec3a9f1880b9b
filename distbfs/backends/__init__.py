"""Choosing the backend: the one place that decides between numpy and CUDA.

``auto`` takes CUDA when CuPy imports and sees a device, numpy otherwise.
"""

from __future__ import annotations

from ..errors import InputError
from .base import Backend, EdgeFrontier, SearchState

BACKEND_CHOICES = ("auto", "numpy", "cuda")


def cuda_available() -> tuple[bool, str]:
    """(whether the CUDA backend can run here, why not)."""
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


def get_backend(name: str = "auto") -> Backend:
    """The backend called ``name`` (one of ``BACKEND_CHOICES``)."""
    if name not in BACKEND_CHOICES:
        raise InputError(
            f"--backend: unknown backend {name!r} (choose from {', '.join(BACKEND_CHOICES)})"
        )
    if name in ("auto", "cuda"):
        ok, why = cuda_available()
        if ok:
            from .cuda_backend import CudaBackend

            return CudaBackend()
        if name == "cuda":
            raise InputError(f"--backend cuda: not available: {why}")
    from .numpy_backend import NumpyBackend

    return NumpyBackend()


__all__ = ["BACKEND_CHOICES", "Backend", "EdgeFrontier", "SearchState", "get_backend"]
