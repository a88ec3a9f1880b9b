"""Uniform random edge tuples (Erdős–Rényi G(n, M)), made per chunk from counters.

Uniform (Erdős–Rényi G(n, M)): ``n = 2**scale``, ``M = edgefactor * n`` tuples in index order, both
endpoints the top ``scale`` bits of two hashes of the tuple index (already uniform: no
relabelling).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..hashing import GOLDEN, MASK64, TAG_UNIFORM, derive_keys, mix64
from .chunks import EdgeChunk, Progress, make_share
from .params import check_edgefactor, check_scale, check_seed, check_share

_U64 = np.uint64


def _uniform_chunk(xp: Any, lo: int, hi: int, scale: int, seed: int) -> tuple[Any, Any]:
    base = xp.arange(lo, hi, dtype=xp.uint64)
    base ^= _U64(derive_keys(seed, TAG_UNIFORM, 1)[0])
    tmp = xp.empty_like(base)
    mix64(xp, base, tmp)
    shift = _U64(64 - scale)
    ends = []
    for k in (1, 2):
        h = base + _U64((k * GOLDEN) & MASK64)
        mix64(xp, h, tmp)
        h >>= shift
        ends.append(h.astype(xp.int64))
    return ends[0], ends[1]


def uniform_edges(
    scale: int,
    edgefactor: int,
    seed: int,
    rank: int,
    size: int,
    xp: Any = np,
    *,
    progress: Progress | None = None,
) -> tuple[Any, Any]:
    """This rank's share of ``edgefactor * 2**scale`` uniform tuples on ``2**scale`` vertices.

    Both endpoints of tuple ``e`` are the top ``scale`` bits of hashes of ``(seed, e)``; rank
    ``rank`` makes tuples ``[rank*M//size, (rank+1)*M//size)``. Parameters and result as
    ``kronecker_edges`` (int64 arrays in ``xp``, self-loops and duplicates included).
    """
    rank, size = check_share(rank, size)
    total, chunk = uniform_source(scale, edgefactor, seed, xp)
    return make_share(xp, total, rank, size, chunk, progress)


def uniform_source(scale: int, edgefactor: int, seed: int, xp: Any) -> tuple[int, EdgeChunk]:
    """As ``kronecker_source``, for uniform tuples."""
    scale = check_scale(scale, "uniform")
    edgefactor = check_edgefactor(edgefactor, scale)
    seed = check_seed(seed)

    def chunk(lo: int, hi: int) -> tuple[Any, Any]:
        return _uniform_chunk(xp, lo, hi, scale, seed)

    return edgefactor << scale, chunk
