"""Synthetic graphs made in parallel: Graph500 Kronecker (R-MAT), uniform random G(n, M), and 2D/3D
grid lattices (the high-diameter case). Each rank makes its own share of the edge tuples and the
graph is built collectively by ``build_graph`` (undirected).

Invariant: for given parameters the edge tuples, and so the built graph, are bit-identical
whatever the number of ranks, the chunk size and the array module (numpy or cupy): every random
number is a pure function of (seed, edge index, bit level) (``distbfs.hashing``). The global
tuple list has ``M`` entries; rank ``r`` of ``p`` makes tuples ``[r*M//p, (r+1)*M//p)``.

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

Uniform (Erdős–Rényi G(n, M)): ``n = 2**scale``, ``M = edgefactor * n`` tuples in index order, both
endpoints the top ``scale`` bits of two hashes of the tuple index (already uniform: no
relabelling).

Grids: ``grid2d`` has ``nx * ny`` vertices, vertex ``(i, j)`` is ``i * ny + j`` (row-major); each
vertex links to its right ``(i, j + 1)`` and lower ``(i + 1, j)`` neighbour (5-point stencil once
symmetrized), ``2*nx*ny - nx - ny`` edges. ``grid3d`` is the 7-point stencil on ``nx * ny * nz``
vertices, ``(i, j, k)`` is ``(i * ny + j) * nz + k``. The tuple list holds the edges along the last
axis first, then the middle one, then the first, each block in order of its lower endpoint.
Labels are NOT permuted: vertex 0 is a corner, the source of the high-diameter benchmark.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .comm.base import Communicator
from .errors import InputError
from .graph import DistGraph, build_graph, build_graph_streamed
from .hashing import (
    BIJECTION_ROUNDS,
    GOLDEN,
    MASK64,
    TAG_EDGE_SCRAMBLE,
    TAG_KRONECKER,
    TAG_UNIFORM,
    TAG_VERTEX_PERMUTATION,
    bijection,
    derive_keys,
    halves,
    mix64,
    uint_dtype,
)

GENERATORS = ("kronecker", "uniform", "grid2d", "grid3d")
DEFAULT_SEED = 20120225
"""Seed of every generator when none is given (PPoPP 2012, where the paper appeared)."""

GRAPH500_INITIATOR = (0.57, 0.19, 0.19, 0.05)
"""Graph500 Kronecker initiator probabilities A, B, C, D."""

MAX_SCALE = 40
MAX_VERTICES = 2**MAX_SCALE
MAX_TUPLES = 2**62
"""Largest edge-tuple list (its index, scrambled, must stay a non-negative int64)."""

CHUNK_EDGES_HOST = 2**13
"""Tuples per chunk with numpy: 64 KiB temporaries stay in cache and below malloc's mmap limit."""
CHUNK_EDGES_DEVICE = 2**22
"""Tuples per chunk with cupy: large kernels, bounded temporary device memory."""

Progress = Callable[[int, int], Any]
"""``progress(done, total)``: this rank's tuples made so far and its share's size."""

EdgeChunk = Callable[[int, int], tuple[Any, Any]]
"""``chunk(lo, hi)``: tuples [lo, hi) of a generator's list, as (src, dst) int64 arrays."""

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


# ----------------------------------------------------------------------------- parameter checks


def _integer(name: str, value: Any) -> int:
    if isinstance(value, bool):
        raise InputError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise InputError(f"{name} must be an integer, got {value!r}") from None


def _check_scale(scale: Any, kind: str) -> int:
    if scale is None:
        raise InputError(f"scale: the {kind} generator needs a scale (log2 of the vertex count)")
    value = _integer("scale", scale)
    if not 1 <= value <= MAX_SCALE:
        raise InputError(f"scale must be in 1..{MAX_SCALE}, got {value}")
    return value


def _check_edgefactor(edgefactor: Any, scale: int) -> int:
    value = _integer("edgefactor", edgefactor)
    if value < 1:
        raise InputError(f"edgefactor must be at least 1, got {value}")
    if value << scale > MAX_TUPLES:
        raise InputError(f"edgefactor {value} at scale {scale} gives more than 2**62 edge tuples")
    return value


def _check_seed(seed: Any) -> int:
    value = _integer("seed", seed)
    if not 0 <= value <= MASK64:
        raise InputError(f"seed must be in [0, 2**64), got {value}")
    return value


def _check_shape(shape: Any, kind: str, dims: int) -> tuple[int, ...]:
    example = ", ".join(("nx", "ny", "nz")[:dims])
    if shape is None:
        raise InputError(f"shape: the {kind} generator needs shape=({example})")
    try:
        values = tuple(shape)
    except TypeError:
        raise InputError(f"shape must be ({example}) for {kind}, got {shape!r}") from None
    if len(values) != dims:
        raise InputError(f"shape must have {dims} dimensions ({example}) for {kind}, got {shape!r}")
    out = tuple(_integer("shape", s) for s in values)
    if min(out) < 1:
        raise InputError(f"shape must be positive in every dimension, got {shape!r}")
    if math.prod(out) > MAX_VERTICES:
        raise InputError(f"shape {shape!r} has more than 2**{MAX_SCALE} vertices")
    return out


def _check_initiator(initiator: Sequence[float]) -> tuple[int, int, int]:
    """Integer thresholds (out of 2**31) for the cumulative sums A, A+B, A+B+C."""
    try:
        probs = [float(p) for p in initiator]
    except (TypeError, ValueError):
        raise InputError(f"initiator must be four probabilities, got {initiator!r}") from None
    total = sum(probs)
    if (
        len(probs) != 4
        or not all(math.isfinite(p) and p >= 0 for p in probs)
        or not (abs(total - 1.0) < 1e-6)
    ):
        raise InputError(f"initiator must be four probabilities summing to 1, got {initiator!r}")
    cum = (probs[0], probs[0] + probs[1], probs[0] + probs[1] + probs[2])
    return tuple(min(2**31, max(0, round(c / total * 2**31))) for c in cum)  # type: ignore[return-value]


def _check_share(rank: int, size: int) -> tuple[int, int]:
    rank, size = operator.index(rank), operator.index(size)
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"rank {rank} is not in a job of {size} ranks")
    return rank, size


# ----------------------------------------------------------------------------- chunked driver


def _chunk_size(xp: Any) -> int:
    return CHUNK_EDGES_HOST if xp is np else CHUNK_EDGES_DEVICE


def _make_share(
    xp: Any,
    total: int,
    rank: int,
    size: int,
    chunk: Callable[[int, int], tuple[Any, Any]],
    progress: Progress | None,
) -> tuple[Any, Any]:
    """Tuples ``[total*rank//size, total*(rank+1)//size)``, made ``chunk(lo, hi)`` at a time."""
    lo, hi = total * rank // size, total * (rank + 1) // size
    count = hi - lo
    src = xp.empty(count, dtype=xp.int64)
    dst = xp.empty(count, dtype=xp.int64)
    if progress is not None:
        progress(0, count)
    step = _chunk_size(xp)
    for a in range(lo, hi, step):
        b = min(hi, a + step)
        src[a - lo : b - lo], dst[a - lo : b - lo] = chunk(a, b)
        if progress is not None:
            progress(b - lo, count)
    return src, dst


def _replay(
    xp: Any, total: int, chunk: EdgeChunk, progress: Progress | None
) -> Iterator[tuple[Any, Any]]:
    """Tuples ``[0, total)``, ``chunk(lo, hi)`` at a time (one rank's whole list, never held)."""
    if progress is not None:
        progress(0, total)
    step = _chunk_size(xp)
    for lo in range(0, total, step):
        hi = min(total, lo + step)
        yield chunk(lo, hi)
        if progress is not None:
            progress(hi, total)


# ----------------------------------------------------------------------------- Kronecker


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
    rank, size = _check_share(rank, size)
    total, chunk = _kronecker_source(scale, edgefactor, seed, xp, initiator, permute)
    return _make_share(xp, total, rank, size, chunk, progress)


def _kronecker_source(
    scale: int,
    edgefactor: int,
    seed: int,
    xp: Any,
    initiator: Sequence[float] = GRAPH500_INITIATOR,
    permute: bool = True,
) -> tuple[int, EdgeChunk]:
    """(tuples in all, ``chunk(lo, hi)`` making tuples [lo, hi)), the arguments checked."""
    scale = _check_scale(scale, "kronecker")
    edgefactor = _check_edgefactor(edgefactor, scale)
    seed = _check_seed(seed)
    thresholds = _check_initiator(initiator)
    total = edgefactor << scale

    def chunk(lo: int, hi: int) -> tuple[Any, Any]:
        return _kronecker_chunk(xp, lo, hi, scale, total, seed, thresholds, permute)

    return total, chunk


# ----------------------------------------------------------------------------- uniform


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
    rank, size = _check_share(rank, size)
    total, chunk = _uniform_source(scale, edgefactor, seed, xp)
    return _make_share(xp, total, rank, size, chunk, progress)


def _uniform_source(scale: int, edgefactor: int, seed: int, xp: Any) -> tuple[int, EdgeChunk]:
    """As ``_kronecker_source``, for uniform tuples."""
    scale = _check_scale(scale, "uniform")
    edgefactor = _check_edgefactor(edgefactor, scale)
    seed = _check_seed(seed)

    def chunk(lo: int, hi: int) -> tuple[Any, Any]:
        return _uniform_chunk(xp, lo, hi, scale, seed)

    return edgefactor << scale, chunk


# ----------------------------------------------------------------------------- grids


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
    rank, size = _check_share(rank, size)
    return _make_share(xp, grid_num_edges(shape), rank, size, _grid_source(shape, xp), progress)


def _grid_source(shape: tuple[int, ...], xp: Any) -> EdgeChunk:
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
    return _grid_edges(_check_shape((nx, ny), "grid2d", 2), rank, size, xp, progress)


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
    return _grid_edges(_check_shape((nx, ny, nz), "grid3d", 3), rank, size, xp, progress)


# ----------------------------------------------------------------------------- entry point


def generate(
    kind: str,
    comm: Communicator,
    *,
    scale: int | None = None,
    edgefactor: int = 16,
    shape: Sequence[int] | None = None,
    seed: int = DEFAULT_SEED,
    xp: Any = np,
    progress: Progress | None = None,
) -> DistGraph:
    """Generate a synthetic undirected graph, each rank making its share (collective).

    Parameters
    ----------
    kind : str
        One of ``GENERATORS``: "kronecker" and "uniform" take ``scale`` (and ``edgefactor``),
        "grid2d" takes ``shape=(nx, ny)``, "grid3d" ``shape=(nx, ny, nz)``.
    comm : Communicator
        The job's ranks; rank ``r`` makes tuples ``[r*M//p, (r+1)*M//p)``.
    scale : int, optional
        ``2**scale`` vertices, 1..40 (random kinds only).
    edgefactor : int
        Tuples per vertex (random kinds only; grids ignore it).
    shape : sequence of int, optional
        Grid extent (grid kinds only).
    seed : int
        In ``[0, 2**64)``; grids are not random and ignore it.
    xp : module
        numpy or cupy: the module of the graph's arrays.
    progress : callable, optional
        ``progress(done, total)`` in tuples of this rank's share, after each chunk.

    Returns
    -------
    DistGraph
        Undirected, the same row for row at every rank count.

    Raises
    ------
    InputError
        On every rank (parameters are replicated), naming the bad argument and value.
    """
    if kind not in GENERATORS:
        raise InputError(f"kind: unknown generator {kind!r} (choose from {', '.join(GENERATORS)})")
    rank, size = comm.rank, comm.size
    if kind in ("kronecker", "uniform"):
        if shape is not None:
            raise InputError(f"shape does not apply to the {kind} generator (it takes scale)")
        scale = _check_scale(scale, kind)
        source = _kronecker_source if kind == "kronecker" else _uniform_source
        total, chunk = source(scale, edgefactor, seed, xp)
        n = 2**scale
    else:
        if scale is not None:
            raise InputError(f"scale does not apply to the {kind} generator (it takes shape)")
        dims = _check_shape(shape, kind, 2 if kind == "grid2d" else 3)
        total, chunk, n = grid_num_edges(dims), _grid_source(dims, xp), math.prod(dims)
    if size == 1:  # made twice, never held: a graph about the size of its CSR fits one GPU

        def chunks(first: bool) -> Iterator[tuple[Any, Any]]:
            return _replay(xp, total, chunk, progress if first else None)

        return build_graph_streamed(chunks, n, directed=False, xp=xp)
    src, dst = _make_share(xp, total, rank, size, chunk, progress)
    return build_graph(comm, src, dst, n, directed=False, xp=xp)
