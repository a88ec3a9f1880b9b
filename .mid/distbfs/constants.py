"""Sentinels and fixed encodings shared by every module, defined once.

- ``UNREACHED`` (-1): distance of a vertex the search never reached, and its predecessor.
- Distances are int32; predecessors are int64 global vertex ids; ``predecessor[source] == source``.
- Column ids (``column_indices``) are int32 while n < 2**31, int64 otherwise.
- Edge weights (``DistGraph.weights``, None for an unweighted graph) are float32 when every weight
  of the whole graph is exactly a float32 value (integers up to 2**24 among them, so GAP-style
  weights 1..255 keep their value at half the memory), float64 otherwise: ``weight_dtype``, decided
  over all ranks, so every rank stores one dtype.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .comm.base import Communicator

UNREACHED = -1
"""Distance and predecessor of a vertex the search did not reach."""

DISTANCE_DTYPE = np.int32
PREDECESSOR_DTYPE = np.int64
ROW_OFFSET_DTYPE = np.int64

INT32_VERTEX_LIMIT = 2**31
"""Graphs with fewer vertices than this store column ids as int32."""


def vertex_dtype(n: int) -> np.dtype:
    """dtype of ``column_indices`` (and of vertex frontiers) for a graph of ``n`` vertices."""
    return np.dtype(np.int32) if n < INT32_VERTEX_LIMIT else np.dtype(np.int64)


WEIGHT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
"""The dtypes a graph's weights are stored in (``weight_dtype`` picks one)."""

WEIGHT_CHECK_CHUNK = 1 << 24
"""Weights compared with their float32 rounding at once (bounds the temporaries)."""


def weight_dtype(weights: Any, comm: Communicator | None = None) -> np.dtype:
    """dtype of the stored weights of a graph whose weights are ``weights`` (this rank's; numpy
    or cupy): float32 when every weight is exactly a float32 value, float64 otherwise. With
    ``comm``, every rank's weights count and every rank gets the same answer (collective: one
    allreduce)."""
    exact = True
    if weights.dtype != np.float32:
        with np.errstate(over="ignore", invalid="ignore"):  # too large for float32: inexact
            for i in range(0, int(weights.shape[0]), WEIGHT_CHECK_CHUNK):
                part = weights[i : i + WEIGHT_CHECK_CHUNK]
                if not bool((part.astype(np.float32) == part).all()):
                    exact = False
                    break
    if comm is not None:
        exact = comm.allreduce(int(exact), op="min") == 1
    return WEIGHT_DTYPES[0] if exact else WEIGHT_DTYPES[1]


UNLIMITED = 2**62
"""A count no search reaches: "no limit" for frontier limits and item ranges (stays within int64
when multiplied by a rank count)."""

PATH_DTYPE = np.float64
"""Shortest-path distances: float64, so sums of float32 or float64 weights are those a float64
reference (scipy's dijkstra) computes, and integer path lengths below 2**53 are exact."""
NO_PATH = float("inf")
"""Shortest-path distance of a vertex the search did not reach (its predecessor: UNREACHED)."""
