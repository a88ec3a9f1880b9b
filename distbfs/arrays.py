"""Array-module helpers shared by the modules that run on either backend's arrays (validation,
statistics, roots, hashing): which module an array belongs to, and moves between modules.
cupy is imported only when its arrays are seen, so numpy-only installs never need it."""

from __future__ import annotations

import importlib
from typing import Any

import numpy as np

HOST_SUMMARY_ITEMS = 1 << 21
"""Length up to which a device array's summaries (a graph's degrees, a search's reached vertices
and traversed edges, a rank's vertex ids) are worked out on the host: one copy, where on the
device each would be an elementwise kernel that a first run compiles (0.1-0.15 s each with an
empty kernel cache, more than a small graph's whole search)."""


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


def summary_module(array: Any) -> Any:
    """The array module in which to summarize ``array``: numpy for a host array or a device one
    of at most ``HOST_SUMMARY_ITEMS`` items (moved with ``to_module``), else cupy."""
    xp = array_module(array)
    return np if xp is np or array.shape[0] <= HOST_SUMMARY_ITEMS else xp


def empty_pinned(length: int, dtype: Any) -> np.ndarray:
    """A numpy array of ``length`` items over page-locked host memory from CuPy's pinned pool,
    as ``cupyx.empty_pinned`` makes it (importing cupyx imports cupyx.scipy: 0.4 s of a first
    run)."""
    import cupy

    dtype = np.dtype(dtype)
    memory = cupy.cuda.alloc_pinned_memory(length * dtype.itemsize)
    return np.ndarray((length,), dtype=dtype, buffer=memory)
