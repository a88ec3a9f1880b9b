"""A rank's CSR built from an edge source it can replay (the generators' path on one rank, and
on several where the held edge list would not fit): a counting sort by tail in three passes that
never holds the edge list, so a generated graph takes about the memory of its CSR. On several
ranks each replays the whole list and keeps the edges whose tail it owns (no exchange: each
rank makes every edge, twice). With ``spill`` (one rank), columns that do not fit the device are
built in host memory the device maps, so a graph larger than the GPU is never whole on it. The
result is ``distbfs.graph.build_graph``'s at the same rank count, row for row and weight for
weight.

The span and batch sizes are ``distbfs.graph.CHUNK``, read at each call.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from . import graph
from .comm.base import Communicator
from .constants import ROW_OFFSET_DTYPE, vertex_dtype, weight_dtype
from .errors import InputError
from .graph import (
    BUILD_FIX,
    DistGraph,
    _carried,
    _chunks,
    _sort_unique_in_place,
    _stored_weights,
)
from .memory import available_bytes, fits, require
from .partition import num_local

EdgeChunks = Callable[[bool], Iterable[tuple[Any, ...]]]
"""A replayable edge source: ``chunks(first)`` yields (src, dst) int64 arrays, or (src, dst,
weights) triples for a weighted graph, the same edges every call (``first``: the first pass,
e.g. for progress reports; it only counts edges, so its weights are not read and may be None)."""


Spill = Callable[[int, Any], Any]
"""``spill(length, dtype)``: an empty array the device reads over the host link (mapped host
memory), for a build whose columns do not fit the device (``build_graph_streamed``)."""


DUPLICATE_SHARE = 1 / 16
"""The share of a streamed build's slots that duplicates may leave unused at the end of the
arrays the graph keeps; past it the kept edges are copied out where the device has room."""


def build_graph_streamed(
    chunks: EdgeChunks,
    n: int,
    *,
    directed: bool,
    xp: Any = np,
    weights: Any = None,
    spill: Spill | None = None,
    comm: Communicator | None = None,
) -> DistGraph:
    """Build this rank's CSR of the edges ``chunks`` yields (all of them, on every rank),
    without holding the edge list: the same graph as ``build_graph`` at the rank count of
    ``comm`` (None: one rank) (rows and their columns sorted, duplicates and self-loops
    dropped, both directions of an undirected edge; ``weights``: the dtype of the weights the
    chunks carry, None when they carry none; of duplicates the smallest weight is kept)
    (collective).

    A counting sort by tail in three passes: (1) count every row's edges (self-loops dropped;
    both directions when undirected); (2) replay the edges and place each head (and weight) in
    its tail's row through per-row cursors (each chunk sorted by tail, so a row's slots come
    from its cursor plus the edge's rank among the chunk's edges of that row); (3) sort each
    row and drop duplicates, a span of rows at a time (about CHUNK edges: at most CHUNK plus
    one row's), compacting to the front.
    Peak memory: the columns with duplicates (vertex_dtype) and as many weights, two int64
    arrays of n + 1, and one chunk's or one span's temporaries (and the stored weights where
    their dtype differs from ``weights``). The graph keeps the front of the arrays it was built
    in: a compact copy of the kept columns is made only where the duplicates dropped leave more
    than ``DUPLICATE_SHARE`` of them unused and the device has room for it, so a graph of few
    duplicates peaks at about its CSR's bytes, not twice them. With ``spill``, columns and
    weights that would not fit beside the rest are built where ``spill`` puts them (host memory
    the device maps) and stay there: the device holds only the offsets and one span, and the
    graph comes out host-resident (a graph larger than the GPU, never whole on it).
    """
    rank, size = (0, 1) if comm is None else (comm.rank, comm.size)
    nlocal = _owned_rows(n, rank, size, spill)
    weighted = weights is not None

    def edges(first: bool) -> Iterable[tuple[Any, Any, Any]]:
        made = _directed_edges(chunks(first), xp, directed, weighted and not first)
        return made if size == 1 else _owned_edges(made, xp, rank, size)

    what = f"building the row offsets of {nlocal:,} vertices"
    require(16 * (nlocal + 1), xp, comm, what, BUILD_FIX)
    offsets = xp.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)  # pass 1: row lengths, then offsets
    for tails, _, _ in edges(True):
        offsets[1:] += xp.bincount(tails, minlength=nlocal)
    offsets[1:] = xp.cumsum(offsets[1:])
    slots = int(offsets[-1])
    per_edge = _slot_bytes(n, weights)
    spilled = _room_to_build(n, nlocal, slots, weights, xp, spill is not None, comm)
    make = spill if spilled else (lambda length, dtype: xp.empty(length, dtype=dtype))
    columns = make(slots, vertex_dtype(n))
    values = make(slots, np.dtype(weights)) if weighted else None
    cursors = offsets[:-1].copy()  # pass 2: the next free slot of every row
    for tails, heads, carried in edges(False):
        _place_heads(xp, tails, heads, cursors, columns, carried, values)
    del cursors
    degrees, out = _sort_rows_in_place(xp, offsets, columns, n, values)  # pass 3
    row_offsets = xp.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)
    xp.cumsum(degrees, out=row_offsets[1:])
    del degrees, offsets
    if spilled:  # where they were built (the rows' tail of duplicates stays unused)
        column_indices = columns[:out]
        stored = None if values is None else _spilled_weights(values[:out], make)
    else:
        compact = slots - out > DUPLICATE_SHARE * slots and fits(per_edge * out, xp, None)
        column_indices = columns[:out].copy() if compact else columns[:out]
        stored = None if values is None else _stored_weights(values[:out], comm, compact)
    del columns, values
    num_edges = out if comm is None else int(comm.allreduce(out))
    return DistGraph(n, num_edges, directed, rank, size, row_offsets, column_indices, stored)


def _slot_bytes(n: int, weights: Any) -> int:
    """Bytes of an edge slot of the build: its column and its weight (``weights``: dtype)."""
    return vertex_dtype(n).itemsize + (0 if weights is None else np.dtype(weights).itemsize)


def _room_to_build(
    n: int, nlocal: int, slots: int, weights: Any, xp: Any, can_spill: bool, comm: Any
) -> bool:
    """Check that passes 2 and 3 of a build of ``slots`` edge slots fit beside the offsets
    already held, on the device or (``can_spill``) with the columns and weights in host memory;
    returns whether they spill there. ``InputError`` (the bytes and the fix) where neither fits
    (collective on the device)."""
    per_edge = _slot_bytes(n, weights)
    # float64 weights exact in float32 are stored converted, beside them
    converted = 4 * slots if weights is not None and np.dtype(weights).itemsize > 4 else 0
    span = 24 * min(slots, graph.CHUNK)  # a span's keys and sort (int64 x3)
    sorting = per_edge * slots + 8 * nlocal + span  # and the degrees
    storing = per_edge * slots + 8 * (nlocal + 1) + converted  # and the row offsets
    what = f"building the CSR of {n:,} vertices and {slots:,} directed edges (this rank's)"
    spilled = can_spill and max(sorting, storing) > available_bytes(xp)
    if spilled:  # the columns and weights in host memory; the device keeps a span's sort
        require(per_edge * slots + converted, np, None, what + " in host memory", BUILD_FIX)
        require(8 * n + span, xp, None, what, BUILD_FIX)
    else:
        require(max(sorting, storing), xp, comm, what, BUILD_FIX)
    return spilled


def _owned_rows(n: int, rank: int, size: int, spill: Spill | None) -> int:
    """This rank's rows of a streamed build of ``n`` vertices, the arguments checked."""
    if n < 0:
        raise InputError(f"vertex count must be non-negative, got {n}")
    if n > 0 and num_local(n, size, 0) * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on {size} rank(s) (use more)")
    if spill is not None and size > 1:
        raise ValueError("spilled columns are built by one rank only")
    return num_local(n, size, rank)


def _owned_edges(
    edges: Iterable[tuple[Any, Any, Any]], xp: Any, rank: int, size: int
) -> Iterable[tuple[Any, Any, Any]]:
    """Of ``edges``, those whose tail this rank owns, the tail as its local row."""
    for tails, heads, weights in edges:
        mine = xp.flatnonzero(tails % size == rank)
        yield tails[mine] // size, heads[mine], None if weights is None else weights[mine]


def _spilled_weights(values: Any, make: Spill) -> Any:
    """The stored weights (``weight_dtype``) of weights in spilled memory, the result there too
    (converted a CHUNK at a time when the stored dtype differs)."""
    dtype = weight_dtype(values)
    if dtype == values.dtype:
        return values
    stored = make(values.shape[0], dtype)
    for i in _chunks(values.shape[0]):
        stored[i : i + graph.CHUNK] = values[i : i + graph.CHUNK].astype(dtype)
    return stored


def _directed_edges(
    chunks: Iterable[tuple[Any, ...]], xp: Any, directed: bool, weighted: bool
) -> Iterable[tuple[Any, Any, Any]]:
    """The edges (tail, head, weight) of ``chunks``, self-loops dropped, in batches of about
    CHUNK / 2 (and each batch reversed too when undirected); the weights None unless
    ``weighted``."""
    batch: list[tuple[Any, Any, Any]] = []
    held = 0
    for chunk in itertools.chain(chunks, [None]):
        if chunk is not None:
            src, dst = xp.asarray(chunk[0], dtype=xp.int64), xp.asarray(chunk[1], dtype=xp.int64)
            loop_free = src != dst
            weights = _carried(xp, chunk[2])[loop_free] if weighted else None
            batch.append((src[loop_free], dst[loop_free], weights))
            held += len(batch[-1][0])
        if held and (held >= graph.CHUNK // 2 or chunk is None):  # never an empty batch
            src = xp.concatenate([s for s, _, _ in batch])
            dst = xp.concatenate([d for _, d, _ in batch])
            weights = xp.concatenate([w for _, _, w in batch]) if weighted else None
            batch, held = [], 0
            yield src, dst, weights
            if not directed:
                yield dst, src, weights


def _place_heads(
    xp: Any,
    tails: Any,
    heads: Any,
    cursors: Any,
    columns: Any,
    weights: Any = None,
    values: Any = None,
) -> None:
    """Write each head into its tail's row at the row's cursor (the batch sorted by tail, a
    row's slots are its cursor plus each edge's rank among the batch's edges of that row), and
    its weight at the same slot of ``values`` (with ``weights``); advance the cursors."""
    order = xp.argsort(tails)
    tails, heads = tails[order], heads[order]
    if weights is not None:
        weights = weights[order]
    del order
    starts = xp.empty(len(tails), dtype=xp.bool_)  # the first edge of each tail's run
    starts[:1] = True
    starts[1:] = tails[1:] != tails[:-1]
    run = xp.cumsum(starts) - 1
    firsts = xp.flatnonzero(starts)
    del starts
    slots = xp.arange(len(tails), dtype=xp.int64) - firsts[run]  # rank within the run
    del run
    slots += cursors[tails]
    columns[slots] = heads
    if weights is not None:
        values[slots] = weights
    del slots
    lengths = xp.diff(xp.append(firsts, len(tails)))
    cursors[tails[firsts]] += lengths  # one run per row: no repeated index


def _sort_rows_in_place(
    xp: Any, offsets: Any, columns: Any, n: int, values: Any = None
) -> tuple[Any, int]:
    """Sort each row of ``columns`` (rows at ``offsets``; column ids below ``n``) and drop
    duplicates, a span of rows at a time, compacting to the front, the weights in ``values``
    alongside (of duplicates the smallest stays); returns the rows' new degrees and the columns
    kept."""
    degrees = xp.zeros(len(offsets) - 1, dtype=ROW_OFFSET_DTYPE)
    out = 0
    for first_row, end_row in itertools.pairwise(_row_spans(xp, offsets)):
        lo, hi = int(offsets[first_row]), int(offsets[end_row])
        if hi == lo:
            continue  # rows without edges: degree 0 already
        # each slot's row within the span: a mark at every later row's start, summed
        later_starts = offsets[first_row + 1 : end_row] - lo
        keys = xp.zeros(hi - lo, dtype=xp.int64)
        if len(later_starts):
            keys = xp.cumsum(xp.bincount(later_starts, minlength=hi - lo + 1)[: hi - lo])
        del later_starts
        keys *= n
        keys += columns[lo:hi]
        span_values = None if values is None else values[lo:hi].copy()
        keys, span_values = _sort_unique_in_place(xp, keys, span_values)
        span_rows = keys // n
        degrees[first_row:end_row] = xp.bincount(span_rows, minlength=end_row - first_row)
        columns[out : out + len(keys)] = keys - span_rows * n  # out <= lo: already read
        if values is not None:
            values[out : out + len(keys)] = span_values
        out += len(keys)
    return degrees, out


def _row_spans(xp: Any, offsets: Any) -> list[int]:
    """Row boundaries [0, ..., n] of spans of at most CHUNK edges plus one row's (a span ends
    at the last row starting at or before each multiple of CHUNK)."""
    n = len(offsets) - 1
    total = int(offsets[-1])
    targets = xp.arange(graph.CHUNK, total, graph.CHUNK, dtype=offsets.dtype)
    cuts = xp.searchsorted(offsets, targets, side="right") - 1  # last row starting at or before
    cuts = cuts.get() if hasattr(cuts, "get") else cuts
    bounds = [0]
    for cut in cuts.tolist():
        cut = max(cut, bounds[-1] + 1)  # at least one row per span
        if cut < n and cut > bounds[-1]:
            bounds.append(cut)
    if bounds[-1] != n:
        bounds.append(n)
    return bounds
