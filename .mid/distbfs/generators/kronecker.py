"""Graph500 Kronecker (R-MAT) edge tuples, made per chunk from counters.

Kronecker (Graph500 specification): ``n = 2**scale`` vertices, ``M = edgefactor * n`` tuples,
initiator A, B, C, D = 0.57, 0.19, 0.19, 0.05. For tuple ``i`` of the list, ``e = scramble(i)`` is a
keyed bijection of ``[0, M)`` (cycle-walking over the next power of two when ``M`` is not one): the
list is a scrambled order of the edges, which the specification allows (the tuple list carries no
order; its reference Octave code shuffles it too). Tuple ``e`` gets
``base = mix64(e ^ key)``; the hash ``mix64(base + (g + 1) * GOLDEN)`` of group ``g`` feeds two bit
levels, one from each 32-bit half: the half's top 31 bits ``t`` are compared with the integer
thresholds ``round(A * 2**31)``, ``round((A + B) * 2**31)``, ``round((A + B + C) * 2**31)`` to pick
the quadrant (A: (0, 0), B: (0, 1), C: (1, 0), D: (1, 1)). Integer comparisons keep numpy and cupy
bit-identical. The levels from the low halves fill the low bits of the endpoints and those from
the high halves the next bits (levels are independent, so any fixed level-to-bit mapping is
Kronecker). Vertex labels are then relabelled by ``permute_vertices``, a keyed bijection of
``[0, 2**scale)`` computed per element (rounds of xor-key, multiply by an odd key modulo
``2**scale`` and xor-shift right), so no rank holds a permutation array. Self-loops and duplicate
tuples stay in the list; ``build_graph`` drops them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..hashing import (
    BIJECTION_ROUNDS,
    GOLDEN,
    MASK64,
    TAG_EDGE_SCRAMBLE,
    TAG_KRONECKER,
    TAG_VERTEX_PERMUTATION,
    bijection,
    derive_keys,
    halves,
    mix64,
    uint_dtype,
)
from .chunks import EdgeChunk, Progress, make_share
from .params import (
    DEFAULT_SEED,
    check_edgefactor,
    check_initiator,
    check_scale,
    check_seed,
    check_share,
)

GRAPH500_INITIATOR = (0.57, 0.19, 0.19, 0.05)
"""Graph500 Kronecker initiator probabilities A, B, C, D."""

_U64 = np.uint64
_U32 = np.uint32


def permute_vertices(v: Any, scale: int, seed: int = DEFAULT_SEED, xp: Any = np) -> Any:
    """Kronecker vertex relabelling: a keyed bijection of ``[0, 2**scale)``, element-wise.

    Parameters
    ----------
    v : array of int
        Labels in ``[0, 2**scale)``.
    scale : int
        log2 of the vertex count.
    seed : int
        Generator seed; each seed gives a different permutation.
    xp : module
        numpy or cupy (the module of ``v``).

    Returns
    -------
    array of int64
        The new labels; the same whatever the array module.
    """
    keys = derive_keys(seed, TAG_VERTEX_PERMUTATION, 2 * BIJECTION_ROUNDS)
    x = v.astype(uint_dtype(scale))
    return bijection(xp, x, scale, keys).astype(xp.int64)


def scramble_edge_indices(e: Any, num_tuples: int, seed: int = DEFAULT_SEED, xp: Any = np) -> Any:
    """Keyed bijection of ``[0, num_tuples)``, element-wise: the scrambled Kronecker tuple order.

    A bijection of ``[0, 2**b)`` (``2**b`` the next power of two) is applied, then re-applied to
    the elements that land at or beyond ``num_tuples`` until none does (cycle walking). Every
    element of ``[0, num_tuples)`` lies on a cycle of the permutation that returns to the range,
    so the loop ends; on average it runs fewer than two more times.

    Returns int64.
    """
    bits = max(1, (num_tuples - 1).bit_length())
    keys = derive_keys(seed, TAG_EDGE_SCRAMBLE, 2 * BIJECTION_ROUNDS)
    limit = uint_dtype(bits)(num_tuples) if num_tuples < 2**bits else None
    y = bijection(xp, e.astype(uint_dtype(bits)), bits, keys)
    if limit is not None:
        pending = xp.nonzero(y >= limit)[0]
        while pending.shape[0]:
            z = bijection(xp, y[pending], bits, keys)
            y[pending] = z
            pending = pending[z >= limit]
    return y.astype(xp.int64)


def _kronecker_chunk(
    xp: Any,
    lo: int,
    hi: int,
    scale: int,
    num_tuples: int,
    seed: int,
    thresholds: tuple[int, int, int],
    permute: bool,
) -> tuple[Any, Any]:
    count = hi - lo
    e = scramble_edge_indices(xp.arange(lo, hi, dtype=xp.int64), num_tuples, seed, xp)
    base = e.astype(xp.uint64)
    del e
    base ^= _U64(derive_keys(seed, TAG_KRONECKER, 1)[0])
    tmp = xp.empty_like(base)
    mix64(xp, base, tmp)
    # Sign-bit trick: for t < 2**31 and T <= 2**31, bit 31 of (T - 1 - t) mod 2**32 is [t >= T].
    t1, t2, t3 = (_U32((t - 1) & 0xFFFFFFFF) for t in thresholds)
    top = _U32(0x80000000)
    acc_i = xp.zeros(2 * count, dtype=xp.uint32)  # bit levels, newest in bit 31
    acc_j = xp.zeros(2 * count, dtype=xp.uint32)
    d1 = xp.empty(2 * count, dtype=xp.uint32)
    d2 = xp.empty_like(d1)
    d3 = xp.empty_like(d1)
    h = xp.empty_like(base)
    groups = (scale + 1) // 2  # levels from the low halves; scale // 2 from the high halves
    for g in range(groups):
        xp.add(base, _U64(((g + 1) * GOLDEN) & MASK64), out=h)
        mix64(xp, h, tmp)
        t = halves(xp, h)
        t >>= _U32(1)
        xp.subtract(t2, t, out=d2)  # bit 31: row bit (quadrant C or D)
        xp.subtract(t1, t, out=d1)
        xp.subtract(t3, t, out=d3)
        d1 ^= d2
        d1 ^= d3  # bit 31: column bit (quadrant B or D)
        acc_i >>= _U32(1)
        d2 &= top
        acc_i |= d2
        acc_j >>= _U32(1)
        d1 &= top
        acc_j |= d1
    del d1, d2, d3, h, tmp, base
    wide = uint_dtype(scale)
    shift = _U32(32 - groups)
    high_mask = _U32((1 << (scale // 2)) - 1)

    def endpoint(acc: Any) -> Any:
        pairs = acc.reshape(count, 2)
        low = (pairs[:, 0] >> shift).astype(wide)
        high = ((pairs[:, 1] >> shift) & high_mask).astype(wide)
        high <<= wide(groups)
        low |= high
        return low

    u, v = endpoint(acc_i), endpoint(acc_j)
    del acc_i, acc_j
    if not permute:
        return u.astype(xp.int64), v.astype(xp.int64)
    keys = derive_keys(seed, TAG_VERTEX_PERMUTATION, 2 * BIJECTION_ROUNDS)
    u = bijection(xp, u, scale, keys).astype(xp.int64)
    v = bijection(xp, v, scale, keys).astype(xp.int64)
    return u, v


def kronecker_edges(
    scale: int,
    edgefactor: int,
    seed: int,
    rank: int,
    size: int,
    xp: Any = np,
    initiator: Sequence[float] = GRAPH500_INITIATOR,
    *,
    permute: bool = True,
    progress: Progress | None = None,
) -> tuple[Any, Any]:
    """This rank's share of the Graph500 Kronecker edge tuples.

    Parameters
    ----------
    scale : int
        ``n = 2**scale`` vertices (1..40).
    edgefactor : int
        ``M = edgefactor * n`` tuples in all.
    seed : int
        In ``[0, 2**64)``.
    rank, size : int
        This rank makes tuples ``[rank*M//size, (rank+1)*M//size)`` of the scrambled list.
    xp : module
        numpy or cupy; the arrays come back in it, with the same values.
    initiator : four floats
        Quadrant probabilities A, B, C, D (summing to 1).
    permute : bool
        Relabel vertices with ``permute_vertices`` (the Graph500 rule); False keeps the raw
        Kronecker labels (for inspecting the structure).
    progress : callable, optional
        ``progress(done, total)`` after each chunk, in tuples of this rank's share.

    Returns
    -------
    (src, dst) : int64 arrays
        Self-loops and duplicates included.
    """
    rank, size = check_share(rank, size)
    total, chunk = kronecker_source(scale, edgefactor, seed, xp, initiator, permute)
    return make_share(xp, total, rank, size, chunk, progress)


def kronecker_source(
    scale: int,
    edgefactor: int,
    seed: int,
    xp: Any,
    initiator: Sequence[float] = GRAPH500_INITIATOR,
    permute: bool = True,
) -> tuple[int, EdgeChunk]:
    """(tuples in all, ``chunk(lo, hi)`` making tuples [lo, hi)), the arguments checked."""
    scale = check_scale(scale, "kronecker")
    edgefactor = check_edgefactor(edgefactor, scale)
    seed = check_seed(seed)
    thresholds = check_initiator(initiator)
    total = edgefactor << scale

    def chunk(lo: int, hi: int) -> tuple[Any, Any]:
        return _kronecker_chunk(xp, lo, hi, scale, total, seed, thresholds, permute)

    return total, chunk
