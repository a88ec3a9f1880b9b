"""Array-module helpers shared by the modules that run on either backend's arrays (validation,
statistics, roots, hashing): which module an array belongs to, and moves between modules.
cupy is imported only when its arrays are seen, so numpy-only installs never need it."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np


def as_host(array: Any) -> np.ndarray:
    """A numpy view or copy of a numpy or cupy array."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def array_module(array: Any) -> Any:
    """cupy for a cupy array, numpy for anything else (cupy is imported only when its arrays are
    seen, so numpy-only installs never need it)."""
    if type(array).__module__.partition(".")[0] != "cupy":
        return np
    return importlib.import_module("cupy")


def to_module(xp: Any, array: Any) -> Any:
    """``array`` in the array module ``xp`` (no copy when it is there already)."""
    return as_host(array) if xp is np else xp.asarray(array)


def empty_pinned(length: int, dtype: Any) -> np.ndarray:
    """A numpy array of ``length`` items over page-locked host memory from CuPy's pinned pool,
    as ``cupyx.empty_pinned`` makes it (importing cupyx imports cupyx.scipy: 0.4 s of a first
    run)."""
    import cupy

    dtype = np.dtype(dtype)
    memory = cupy.cuda.alloc_pinned_memory(length * dtype.itemsize)
    return np.ndarray((length,), dtype=dtype, buffer=memory)
