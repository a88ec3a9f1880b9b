"""Sentinels and fixed encodings shared by every module, defined once.

- ``UNREACHED`` (-1): distance of a vertex the search never reached, and its predecessor.
- Distances are int32; predecessors are int64 global vertex ids; ``predecessor[source] == source``.
- Column ids (``column_indices``) are int32 while n < 2**31, int64 otherwise.
"""

from __future__ import annotations

import numpy as np

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

UNLIMITED = 2**62
"""A count no search reaches: "no limit" for frontier limits and item ranges (stays within int64
when multiplied by a rank count)."""
