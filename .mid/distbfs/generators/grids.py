"""2D and 3D grid lattices (the high-diameter case), made per chunk from the edge index.

Grids: ``grid2d`` has ``nx * ny`` vertices, vertex ``(i, j)`` is ``i * ny + j`` (row-major); each
vertex links to its right ``(i, j + 1)`` and lower ``(i + 1, j)`` neighbour (5-point stencil once
symmetrized), ``2*nx*ny - nx - ny`` edges. ``grid3d`` is the 7-point stencil on ``nx * ny * nz``
vertices, ``(i, j, k)`` is ``(i * ny + j) * nz + k``. The tuple list holds the edges along the last
axis first, then the middle one, then the first, each block in order of its lower endpoint.
Labels are NOT permuted: vertex 0 is a corner, the source of the high-diameter benchmark.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .chunks import EdgeChunk, Progress, make_share
from .params import check_shape, check_share


def _grid_blocks(shape: tuple[int, ...]) -> list[tuple[int, int, int]]:
    """(tuples, axis length, stride) of each edge block, last axis first."""
    n = math.prod(shape)
    blocks = []
    for axis in reversed(range(len(shape))):
        length = shape[axis]
        stride = math.prod(shape[axis + 1 :])
        blocks.append((n // length * (length - 1), length, stride))
    return blocks


def grid_num_edges(shape: Sequence[int]) -> int:
    """Undirected edges of the grid of ``shape``: ``sum_a n / shape[a] * (shape[a] - 1)``."""
    return sum(count for count, _, _ in _grid_blocks(tuple(shape)))


def _grid_chunk(xp: Any, lo: int, hi: int, shape: tuple[int, ...]) -> tuple[Any, Any]:
    src, dst = [], []
    start = 0
    for count, length, stride in _grid_blocks(shape):
        a, b = max(lo, start), min(hi, start + count)
        if a < b:
            k = xp.arange(a - start, b - start, dtype=xp.int64)
            # Edge k of this block joins u and u + stride, where u skips the last layer
            # (coordinate length - 1 along the axis) of every slab of length * stride vertices.
            u = k // ((length - 1) * stride)
            u *= stride
            u += k
            src.append(u)
            dst.append(u + stride)
        start += count
    if len(src) == 1:
        return src[0], dst[0]
    return xp.concatenate(src), xp.concatenate(dst)


def _grid_edges(
    shape: tuple[int, ...], rank: int, size: int, xp: Any, progress: Progress | None
) -> tuple[Any, Any]:
    rank, size = check_share(rank, size)
    return make_share(xp, grid_num_edges(shape), rank, size, grid_source(shape, xp), progress)


def grid_source(shape: tuple[int, ...], xp: Any) -> EdgeChunk:
    """``chunk(lo, hi)`` making edges [lo, hi) of the grid of ``shape``."""

    def chunk(lo: int, hi: int) -> tuple[Any, Any]:
        return _grid_chunk(xp, lo, hi, shape)

    return chunk


def grid2d_edges(
    nx: int, ny: int, rank: int, size: int, xp: Any = np, *, progress: Progress | None = None
) -> tuple[Any, Any]:
    """This rank's share of the edges of the ``nx`` x ``ny`` grid, vertex ``(i, j)`` = ``i*ny + j``.

    The list holds ``2*nx*ny - nx - ny`` edges, each once (right neighbours, then lower ones);
    rank ``rank`` makes ``[rank*E//size, (rank+1)*E//size)``. Returns int64 arrays in ``xp``.
    """
    return _grid_edges(check_shape((nx, ny), "grid2d", 2), rank, size, xp, progress)


def grid3d_edges(
    nx: int,
    ny: int,
    nz: int,
    rank: int,
    size: int,
    xp: Any = np,
    *,
    progress: Progress | None = None,
) -> tuple[Any, Any]:
    """This rank's share of the edges of the ``nx`` x ``ny`` x ``nz`` grid (7-point stencil).

    Vertex ``(i, j, k)`` is ``(i*ny + j)*nz + k``; ``3n - nx*ny - ny*nz - nx*nz`` edges, each once.
    Returns int64 arrays in ``xp``.
    """
    return _grid_edges(check_shape((nx, ny, nz), "grid3d", 3), rank, size, xp, progress)
