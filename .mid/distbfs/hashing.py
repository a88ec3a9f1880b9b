"""Counter-based hashing: every random number distbfs makes (generated edges, vertex labels,
edge order, search roots) is a hash of a counter (an edge index, a vertex id) under a key
derived from the seed, through the splitmix64 finalizer over uint64 arrays. Nothing reads a
sequential random stream, so a value depends only on (seed, use, counter): the same at any rank
count and in either array module (wrapping uint64 multiply, shift and xor, which numpy and cupy
compute bit for bit alike).

Keys: ``derive_keys(seed, tag, count)`` gives an independent key stream per use of a seed
(``TAG_*``). Bijections: ``bijection`` is a keyed permutation of ``[0, 2**bits)``. Pairs:
``mix_pair`` hashes two counters (a generated edge's weight hashes its endpoints).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

from .arrays import array_module

MASK64 = 2**64 - 1
GOLDEN = 0x9E3779B97F4A7C15
"""splitmix64's increment: 2**64 / golden ratio, odd."""
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB
_U64 = np.uint64
BIJECTION_ROUNDS = 4

# Key-derivation tags: one independent key stream per use of a seed.
TAG_KRONECKER = 1
TAG_UNIFORM = 2
TAG_VERTEX_PERMUTATION = 3
TAG_EDGE_SCRAMBLE = 4
TAG_WEIGHT = 5


def mix64_int(z: int) -> int:
    """The splitmix64 finalizer on a Python int (host-side key derivation)."""
    z &= MASK64
    z = ((z ^ (z >> 30)) * _MIX1) & MASK64
    z = ((z ^ (z >> 27)) * _MIX2) & MASK64
    return z ^ (z >> 31)


def splitmix64_sequence(state: int, count: int) -> list[int]:
    """The first ``count`` outputs of the splitmix64 generator seeded with ``state``."""
    return [mix64_int(state + (i + 1) * GOLDEN) for i in range(count)]


def derive_keys(seed: int, tag: int, count: int) -> list[int]:
    """``count`` 64-bit keys for one use (``tag``) of ``seed``."""
    return splitmix64_sequence(mix64_int(seed ^ mix64_int(tag)), count)


def mix64(xp: Any, x: Any, tmp: Any = None) -> Any:
    """The splitmix64 finalizer applied in place to the uint64 array ``x`` (returned).

    ``tmp`` is an optional scratch array of the same shape and dtype.
    """
    if tmp is None:
        tmp = xp.empty_like(x)
    xp.right_shift(x, _U64(30), out=tmp)
    x ^= tmp
    x *= _U64(_MIX1)
    xp.right_shift(x, _U64(27), out=tmp)
    x ^= tmp
    x *= _U64(_MIX2)
    xp.right_shift(x, _U64(31), out=tmp)
    x ^= tmp
    return x


def mix_pair(xp: Any, a: Any, b: Any, keys: Sequence[int]) -> Any:
    """A uint64 hash of the counter pairs ``(a, b)`` (integer arrays, values below 2**64) under
    two keys: ``mix64((mix64(a ^ k0) + b) ^ k1)``, wrapping. A new array; ``a`` and ``b`` are
    untouched."""
    h = a.astype(xp.uint64)
    h ^= _U64(keys[0] & MASK64)
    tmp = xp.empty_like(h)
    mix64(xp, h, tmp)
    h += b.astype(xp.uint64)
    h ^= _U64(keys[1] & MASK64)
    return mix64(xp, h, tmp)


def splitmix64(seed: int, counters: Any) -> Any:
    """splitmix64 output number ``counters`` (an array of them) of the generator seeded
    ``seed``: the state after k steps is ``seed + k * GOLDEN`` (mod 2**64) through the
    finalizer. Vectorized, in the array module of ``counters`` (lists become numpy)."""
    xp = array_module(counters)
    z = xp.asarray(counters, dtype=xp.uint64) * _U64(GOLDEN)
    z += _U64(seed % 2**64)
    return mix64(xp, z)


def halves(xp: Any, h: Any) -> Any:
    """The 32-bit halves of uint64 ``h`` as a uint32 array of twice the length: low, high."""
    if xp is not np or sys.byteorder == "little":
        return h.view(xp.uint32)  # no copy; a device is little-endian
    out = xp.empty(2 * h.shape[0], dtype=xp.uint32)
    out[0::2] = (h & _U64(0xFFFFFFFF)).astype(xp.uint32)
    out[1::2] = (h >> _U64(32)).astype(xp.uint32)
    return out


def uint_dtype(bits: int) -> Any:
    """The smallest of uint32 and uint64 that holds ``bits`` bits."""
    return np.uint32 if bits <= 32 else np.uint64


def bijection(xp: Any, x: Any, bits: int, keys: Sequence[int]) -> Any:
    """A keyed bijection of ``[0, 2**bits)`` applied in place to the unsigned array ``x``.

    Each round xors a key, multiplies by an odd key modulo ``2**bits`` and xor-shifts right by
    ``ceil(bits / 2)``: each step is invertible on ``bits``-bit words, so the whole is a
    permutation. The word size of ``x`` (uint32 or uint64, at least ``bits``) does not change the
    result.
    """
    dt = x.dtype.type
    word_mask = (1 << (8 * x.dtype.itemsize)) - 1
    mask = (1 << bits) - 1
    shift = dt(max(1, (bits + 1) // 2))
    tmp = xp.empty_like(x)
    for r in range(BIJECTION_ROUNDS):
        x ^= dt(keys[2 * r] & mask)
        x *= dt((keys[2 * r + 1] | 1) & word_mask)
        if mask != word_mask:
            x &= dt(mask)
        xp.right_shift(x, shift, out=tmp)
        x ^= tmp
    return x
