"""Synthetic graphs made in parallel: Graph500 Kronecker (R-MAT, ``kronecker``), uniform random
G(n, M) (``uniform``), and 2D/3D grid lattices (the high-diameter case, ``grids``), optionally
with integer edge weights (``weights``: ``uniform:LO:HI``). Each rank makes its own share of the
edge tuples a chunk at a time (``chunks``) and the graph is built collectively by
``build_graph`` (undirected); one rank replays its list into ``build_graph_streamed`` instead,
never holding it, and so do several where the held lists would not fit (each replays the whole
list and keeps the edges whose tail it owns). Parameters are checked once (``params``).

Invariant: for given parameters the edge tuples, and so the built graph, are bit-identical
whatever the number of ranks, the chunk size and the array module (numpy or cupy): every random
number is a pure function of (seed, edge index, bit level), and a weight of (seed, edge)
(``distbfs.hashing``). The global
tuple list has ``M`` entries; rank ``r`` of ``p`` makes tuples ``[r*M//p, (r+1)*M//p)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ..comm.base import Communicator
from ..errors import InputError
from ..graph import BUILD_FIX, DistGraph, build_bytes, build_graph, packing_multiplier
from ..memory import available_host_bytes, fits, require
from ..partition import num_local
from ..streamed import Spill, build_graph_streamed
from .chunks import (
    CHUNK_EDGES_DEVICE,
    CHUNK_EDGES_HOST,
    EDGE_DTYPES,
    EdgeChunk,
    Progress,
    make_share,
    replay,
)
from .grids import grid2d_edges, grid3d_edges, grid_num_edges, grid_source
from .kronecker import (
    GRAPH500_INITIATOR,
    kronecker_edges,
    kronecker_source,
    permute_vertices,
    scramble_edge_indices,
)
from .params import DEFAULT_SEED, MAX_SCALE, MAX_TUPLES, MAX_VERTICES, check_scale, check_shape
from .uniform import uniform_edges, uniform_source
from .weights import WeightSpec, parse_weight_spec, weighted_chunk

GENERATORS = ("kronecker", "uniform", "grid2d", "grid3d")

__all__ = [
    "CHUNK_EDGES_DEVICE",
    "CHUNK_EDGES_HOST",
    "DEFAULT_SEED",
    "GENERATORS",
    "GRAPH500_INITIATOR",
    "MAX_SCALE",
    "MAX_TUPLES",
    "MAX_VERTICES",
    "EdgeChunk",
    "Progress",
    "WeightSpec",
    "generate",
    "grid2d_edges",
    "grid3d_edges",
    "grid_num_edges",
    "kronecker_edges",
    "parse_weight_spec",
    "permute_vertices",
    "scramble_edge_indices",
    "uniform_edges",
]


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
    weights: str | WeightSpec | None = None,
    spill: Spill | None = None,
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
        In ``[0, 2**64)``; the random kinds' edges and every kind's weights derive from it.
    xp : module
        numpy or cupy: the module of the graph's arrays.
    progress : callable, optional
        ``progress(done, total)`` in tuples of this rank's share, after each chunk; a build
        that makes the whole list twice (streamed) counts both passes, 2x the tuples.
    weights : str, optional
        ``"uniform:LO:HI"``: integer edge weights uniform in ``[LO, HI]`` (``weights``);
        None: unweighted.
    spill : callable, optional
        One rank on a GPU: where columns that do not fit the device are built
        (``build_graph_streamed``: host memory the device maps; the graph stays there).

    Returns
    -------
    DistGraph
        Undirected, the same row for row (and weight for weight) at every rank count.

    Raises
    ------
    InputError
        On every rank (parameters are replicated), naming the bad argument and value.
    """
    spec = parse_weight_spec(weights)
    total, chunk, n = _source(kind, scale, edgefactor, shape, seed, xp)
    made = chunk if spec is None else weighted_chunk(xp, chunk, spec, seed)
    share = -(-total // comm.size)  # tuples, then each tuple both ways in the build
    held = share * (16 + (0 if spec is None else spec.dtype.itemsize))
    nlocal = num_local(n, comm.size, comm.rank)
    packed = spec is not None and packing_multiplier(spec.hi, n, num_local(n, comm.size, 0)) > 0
    needed = held + build_bytes(n, nlocal, 2 * share, spec is not None, packed)
    if comm.size == 1:
        streamed = _streamed(xp, total, spec is not None)
    else:  # the held list's build where every rank has room for it (collective)
        streamed = not fits(needed, xp, comm)
    if streamed:
        source = (total, chunk, made, None if spec is None else spec.dtype)
        return _replayed(comm, source, n, xp, progress, spill)
    require(needed, xp, comm, f"generating {total:,} edges ({share:,} a rank)", BUILD_FIX)
    dtypes = EDGE_DTYPES if spec is None else (*EDGE_DTYPES, spec.dtype)
    src, dst, *rest = make_share(xp, total, comm.rank, comm.size, made, progress, dtypes)
    return build_graph(comm, src, dst, n, directed=False, xp=xp, weights=rest[0] if rest else None)


def _replayed(
    comm: Communicator,
    source: tuple[int, EdgeChunk, EdgeChunk, np.dtype | None],
    n: int,
    xp: Any,
    progress: Progress | None,
    spill: Spill | None,
) -> DistGraph:
    """The graph built from the whole tuple list made twice (``build_graph_streamed``): one
    rank's, or on several each rank's own rows. ``source``: (tuples, the chunk maker, the same
    with weights, the weights' dtype or None)."""
    total, chunk, made, weights = source

    def chunks(first: bool) -> Iterator[tuple[Any, ...]]:
        # the first pass only counts: no weights made for it; progress runs over both passes
        done = 0 if first else total
        report = None if progress is None else lambda k, _: progress(done + k, 2 * total)
        return replay(xp, total, chunk if first else made, report)

    several = comm.size > 1
    return build_graph_streamed(
        chunks,
        n,
        directed=False,
        xp=xp,
        weights=weights,
        spill=None if several else spill,
        comm=comm if several else None,
    )


STREAMED_HOST_SHARE = 0.25
"""On one rank with numpy, the edge list is held (the plain build, a sort of the whole list) while
it takes at most this share of the available host memory; beyond, it is streamed like on a GPU."""


def _streamed(xp: Any, tuples: int, weighted: bool) -> bool:
    """Whether one rank builds from edges made twice and never held (``build_graph_streamed``:
    a counting sort by tail, so a graph about the size of its CSR fits a GPU) rather than from
    the held list (``build_graph``: a sort of the list, several times faster on the host)."""
    if xp.__name__ != "numpy":
        return True
    held = tuples * (2 * 8 + (8 if weighted else 0)) * 4  # the list, its keys and the sort's
    return held > STREAMED_HOST_SHARE * available_host_bytes()


def _source(
    kind: str,
    scale: int | None,
    edgefactor: int,
    shape: Sequence[int] | None,
    seed: int,
    xp: Any,
) -> tuple[int, EdgeChunk, int]:
    """(tuples in all, ``chunk(lo, hi)``, vertex count) of the generator ``kind``, its
    parameters checked."""
    if kind not in GENERATORS:
        raise InputError(f"kind: unknown generator {kind!r} (choose from {', '.join(GENERATORS)})")
    if kind in ("kronecker", "uniform"):
        if shape is not None:
            raise InputError(f"shape does not apply to the {kind} generator (it takes scale)")
        scale = check_scale(scale, kind)
        source = kronecker_source if kind == "kronecker" else uniform_source
        total, chunk = source(scale, edgefactor, seed, xp)
        return total, chunk, 2**scale
    if scale is not None:
        raise InputError(f"scale does not apply to the {kind} generator (it takes shape)")
    dims = check_shape(shape, kind, 2 if kind == "grid2d" else 3)
    return grid_num_edges(dims), grid_source(dims, xp), math.prod(dims)
