"""The distributed graph: each rank holds the CSR rows of the vertices it owns (striping,
section 6.1), with global neighbour ids. Construction is distributed: each rank contributes a
share of the edges, edges travel to the owner of their source through one all-to-all, then each
owner drops self-loops and duplicates and builds its rows. One rank can instead build from an
edge source it can replay (``build_graph_streamed``: a counting sort by tail that never holds
the edge list, so a generated graph takes about the memory of its CSR).

Invariants of a ``DistGraph``: ``row_offsets`` is int64 of length ``nlocal + 1``;
``column_indices`` holds global ids (int32 when n < 2**31), sorted and unique within each row,
with no self-loops; an undirected graph stores both directions of every edge; the graph is the
same, row for row, whatever the number of ranks.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .comm.base import Communicator
from .constants import ROW_OFFSET_DTYPE, vertex_dtype
from .errors import InputError
from .partition import bin_by_owner, local_id, num_local, owner


@dataclass
class DistGraph:
    """This rank's share of a graph striped over ``size`` ranks.

    Attributes
    ----------
    n : int
        Global number of vertices.
    num_edges : int
        Global number of stored (directed) edges; an undirected edge counts twice.
    directed : bool
        False when every edge is stored in both directions.
    rank, size : int
        This rank and the number of ranks; vertex v lives on rank ``v % size`` as row ``v // size``.
    row_offsets, column_indices : array
        CSR of the owned rows (numpy or cupy, as the backend that built it).
    """

    n: int
    num_edges: int
    directed: bool
    rank: int
    size: int
    row_offsets: Any
    column_indices: Any

    @property
    def nlocal(self) -> int:
        """Number of vertices this rank owns."""
        return num_local(self.n, self.size, self.rank)

    @property
    def num_local_edges(self) -> int:
        return int(self.column_indices.shape[0])

    @property
    def num_undirected_edges(self) -> int:
        """Graph500 edge count of the whole graph: each undirected edge once."""
        return self.num_edges if self.directed else self.num_edges // 2

    def local_degrees(self) -> Any:
        """Out-degree of every owned vertex, in local order."""
        return self.row_offsets[1:] - self.row_offsets[:-1]

    def owned_vertices(self, xp: Any = np) -> Any:
        """Global ids of the owned vertices, in local order (``global_id``, computed in place:
        one array of n / size int64s, no temporaries)."""
        ids = xp.arange(self.nlocal, dtype=np.int64)
        ids *= self.size
        ids += self.rank
        return ids

    def nbytes(self) -> int:
        return int(self.row_offsets.nbytes + self.column_indices.nbytes)

    def stored_edges(self, xp: Any = np) -> tuple[Any, Any]:
        """(tail, head) global ids of every edge this rank stores, int64, in CSR order."""
        # the row of every stored edge (searchsorted: CuPy's repeat takes no array of counts)
        slots = xp.arange(self.num_local_edges, dtype=xp.int64)
        rows = xp.searchsorted(self.row_offsets, slots, side="right") - 1
        del slots
        rows *= self.size
        rows += self.rank
        return rows, self.column_indices.astype(xp.int64)


CHUNK = 1 << 28
"""Elements per step of the chunked passes of construction: bounds the temporaries, and keeps each
boolean compaction below CuPy's limit of 2**31 elements."""


def _chunks(length: int) -> range:
    return range(0, length, CHUNK)


def _edge_keys(xp: Any, src: Any, dst: Any, n: int, size: int, symmetric: bool) -> Any:
    """Sort keys ``local_row * n + column`` of the edges owned here, self-loops dropped; both
    directions when ``symmetric`` (one rank only: the reverse edge is owned here too)."""
    kept = [
        int(xp.count_nonzero(src[i : i + CHUNK] != dst[i : i + CHUNK])) for i in _chunks(len(src))
    ]
    keys = xp.empty(sum(kept) * (2 if symmetric else 1), dtype=xp.int64)
    at = 0
    for i in _chunks(len(src)):
        s, d = src[i : i + CHUNK], dst[i : i + CHUNK]
        loop_free = s != d
        s, d = s[loop_free], d[loop_free]
        for u, w in ((s, d), (d, s)) if symmetric else ((s, d),):
            keys[at : at + len(u)] = local_id(u, size) * n + w
            at += len(u)
    return keys


def _exchanged_keys(comm: Communicator, xp: Any, src: Any, dst: Any, n: int, directed: bool) -> Any:
    """Send every edge (both directions when undirected, self-loops dropped) to the owner of
    its tail, in rounds of at most CHUNK / 2 directed edges, and return the received edges'
    sort keys ``local_row * n + column`` in one array sized beforehand: a first pass counts
    what each round sends to each rank (one all-gather of the counts), so no round's keys are
    ever copied twice. Every rank runs the same number of rounds (collective)."""
    p = comm.size
    step = CHUNK // 2 if directed else CHUNK // 4  # edges per round: both directions travel
    rounds = comm.allreduce(-(-len(src) // step), op="max")

    def directed_edges(i: int) -> tuple[Any, Any]:
        s, d = src[i * step : (i + 1) * step], dst[i * step : (i + 1) * step]
        loop_free = s != d
        s, d = s[loop_free], d[loop_free]
        return (s, d) if directed else (xp.concatenate([s, d]), xp.concatenate([d, s]))

    sent = np.zeros((rounds, p), dtype=np.int64)
    for i in range(rounds):
        tails, _ = directed_edges(i)
        counts = xp.bincount(owner(tails, p), minlength=p)
        sent[i] = counts.get() if hasattr(counts, "get") else counts
    received = comm.allgather_array(sent.reshape(-1)).reshape(p, rounds, p)[:, :, comm.rank]
    keys = xp.empty(int(received.sum()), dtype=xp.int64)
    at = 0
    for i in range(rounds):
        tails, heads = directed_edges(i)
        offsets, tails, (heads,) = bin_by_owner(xp, tails, p, heads)
        _, (tails, heads) = comm.alltoallv(offsets, tails, heads)
        keys[at : at + len(tails)] = local_id(tails, p) * n + heads
        at += len(tails)
    if at != len(keys):
        raise RuntimeError(f"rank {comm.rank} received {at} edges, {len(keys)} announced")
    return keys


def _sort_unique_in_place(xp: Any, keys: Any) -> Any:
    """Sort ``keys`` in place and compact its distinct values to its front; return that prefix."""
    keys.sort()
    out = 0
    for i in _chunks(len(keys)):
        chunk = keys[i : i + CHUNK]
        first = xp.empty(len(chunk), dtype=xp.bool_)
        first[1:] = chunk[1:] != chunk[:-1]
        first[:1] = True if i == 0 else chunk[:1] != keys[i - 1 : i]
        distinct = chunk[first]  # a copy: safe to write before position i + len(chunk)
        keys[out : out + len(distinct)] = distinct
        out += len(distinct)
    return keys[:out]


def _csr_from_keys(xp: Any, keys: Any, n: int, nlocal: int) -> tuple[Any, Any]:
    """Row offsets and column ids of sorted distinct keys ``row * n + column``."""
    column_indices = xp.empty(len(keys), dtype=vertex_dtype(n))
    degrees = xp.zeros(nlocal, dtype=ROW_OFFSET_DTYPE)
    for i in _chunks(len(keys)):
        rows = keys[i : i + CHUNK] // n
        column_indices[i : i + CHUNK] = keys[i : i + CHUNK] - rows * n
        degrees += xp.bincount(rows, minlength=nlocal)
    row_offsets = xp.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)
    xp.cumsum(degrees, out=row_offsets[1:])
    return row_offsets, column_indices


def build_graph(
    comm: Communicator,
    src: Any,
    dst: Any,
    n: int,
    *,
    directed: bool,
    xp: Any = np,
) -> DistGraph:
    """Build the distributed CSR from this rank's share of the edges (collective).

    ``src``/``dst`` are int64 arrays of global ids in ``[0, n)`` (checked by the readers).
    For an undirected graph each edge may be given in one direction or both. Peak memory beyond
    the input: one int64 key per kept directed edge, the sort's buffer, and the CSR; on several
    ranks also one exchange round's buffers (edges travel in rounds of at most CHUNK / 2).
    """
    if n < 0:
        raise InputError(f"vertex count must be non-negative, got {n}")
    p = comm.size
    nlocal = num_local(n, p, comm.rank)
    if nlocal > 0 and nlocal * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on {p} ranks (use more ranks)")
    src = xp.asarray(src, dtype=xp.int64)
    dst = xp.asarray(dst, dtype=xp.int64)
    if p > 1:  # both directions travel to their owners
        keys = _exchanged_keys(comm, xp, src, dst, n, directed)
    else:
        keys = _edge_keys(xp, src, dst, n, p, symmetric=not directed)
    del src, dst
    row_offsets, column_indices = _csr_from_unsorted_keys(xp, keys, n, nlocal)
    num_edges = comm.allreduce(int(column_indices.shape[0]))
    return DistGraph(n, num_edges, directed, comm.rank, p, row_offsets, column_indices)


def _csr_from_unsorted_keys(xp: Any, keys: Any, n: int, nlocal: int) -> tuple[Any, Any]:
    """Row offsets and column ids of the keys ``row * n + column`` (sorted and deduplicated in
    place: rows, then neighbours within a row; the keys are consumed)."""
    keys = _sort_unique_in_place(xp, keys)
    return _csr_from_keys(xp, keys, n, nlocal)


def build_local_graph(src: Any, dst: Any, n: int, *, directed: bool, xp: Any = np) -> DistGraph:
    """The one-rank CSR of the edges ``src -> dst`` held here (no communication): what
    ``build_graph`` builds on one rank. Several ranks use it for a whole-graph copy on each
    (the replica of small graphs) from all-gathered edges."""
    if n > 0 and n * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on 1 rank (use more ranks)")
    src = xp.asarray(src, dtype=xp.int64)
    dst = xp.asarray(dst, dtype=xp.int64)
    keys = _edge_keys(xp, src, dst, n, 1, symmetric=not directed)
    row_offsets, column_indices = _csr_from_unsorted_keys(xp, keys, n, n)
    num_edges = int(column_indices.shape[0])
    return DistGraph(n, num_edges, directed, 0, 1, row_offsets, column_indices)


EdgeChunks = Callable[[bool], Iterable[tuple[Any, Any]]]
"""A replayable edge source: ``chunks(first)`` yields (src, dst) int64 arrays, the same edges
every call (``first``: the first pass, e.g. for progress reports)."""


def build_graph_streamed(chunks: EdgeChunks, n: int, *, directed: bool, xp: Any = np) -> DistGraph:
    """Build the one-rank CSR of the edges ``chunks`` yields, without holding the edge list:
    the same graph as ``build_graph`` on one rank (rows and their columns sorted, duplicates
    and self-loops dropped, both directions of an undirected edge).

    A counting sort by tail in three passes: (1) count every row's edges (self-loops dropped;
    both directions when undirected); (2) replay the edges and place each head in its tail's
    row through per-row cursors (each chunk sorted by tail, so a row's slots come from its
    cursor plus the edge's rank among the chunk's edges of that row); (3) sort each row and
    drop duplicates, a span of rows at a time (about CHUNK edges: at most CHUNK plus one row's),
    compacting to the front.
    Peak memory: the columns with duplicates (vertex_dtype), two int64 arrays of n + 1, and one
    chunk's or one span's temporaries.
    """
    if n < 0:
        raise InputError(f"vertex count must be non-negative, got {n}")
    if n > 0 and n * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on 1 rank (use more ranks)")

    def edges(first: bool) -> Iterable[tuple[Any, Any]]:
        return _directed_edges(chunks(first), xp, directed)

    offsets = xp.zeros(n + 1, dtype=ROW_OFFSET_DTYPE)  # pass 1: row lengths, then offsets
    for tails, _ in edges(True):
        offsets[1:] += xp.bincount(tails, minlength=n)
    offsets[1:] = xp.cumsum(offsets[1:])
    columns = xp.empty(int(offsets[-1]), dtype=vertex_dtype(n))
    cursors = offsets[:-1].copy()  # pass 2: the next free slot of every row
    for tails, heads in edges(False):
        _place_heads(xp, tails, heads, cursors, columns)
    del cursors
    degrees, out = _sort_rows_in_place(xp, offsets, columns, n)  # pass 3
    row_offsets = xp.zeros(n + 1, dtype=ROW_OFFSET_DTYPE)
    xp.cumsum(degrees, out=row_offsets[1:])
    del degrees, offsets
    column_indices = columns[:out].copy()
    del columns
    return DistGraph(n, out, directed, 0, 1, row_offsets, column_indices)


def _directed_edges(
    chunks: Iterable[tuple[Any, Any]], xp: Any, directed: bool
) -> Iterable[tuple[Any, Any]]:
    """The edges (tail, head) of ``chunks``, self-loops dropped, in batches of about CHUNK / 2
    (and each batch reversed too when undirected)."""
    batch: list[tuple[Any, Any]] = []
    held = 0
    for src, dst in itertools.chain(chunks, [(None, None)]):
        if src is not None:
            src, dst = xp.asarray(src, dtype=xp.int64), xp.asarray(dst, dtype=xp.int64)
            loop_free = src != dst
            batch.append((src[loop_free], dst[loop_free]))
            held += len(batch[-1][0])
        if held and (held >= CHUNK // 2 or src is None):  # never an empty batch
            src = xp.concatenate([s for s, _ in batch])
            dst = xp.concatenate([d for _, d in batch])
            batch, held = [], 0
            yield src, dst
            if not directed:
                yield dst, src


def _place_heads(xp: Any, tails: Any, heads: Any, cursors: Any, columns: Any) -> None:
    """Write each head into its tail's row at the row's cursor (the batch sorted by tail, a
    row's slots are its cursor plus each edge's rank among the batch's edges of that row), and
    advance the cursors."""
    order = xp.argsort(tails)
    tails, heads = tails[order], heads[order]
    del order
    starts = xp.empty(len(tails), dtype=xp.bool_)  # the first edge of each tail's run
    starts[:1] = True
    starts[1:] = tails[1:] != tails[:-1]
    run = xp.cumsum(starts) - 1
    firsts = xp.flatnonzero(starts)
    del starts
    rank = xp.arange(len(tails), dtype=xp.int64) - firsts[run]  # rank within the run
    del run
    columns[cursors[tails] + rank] = heads
    del rank
    lengths = xp.diff(xp.append(firsts, len(tails)))
    cursors[tails[firsts]] += lengths  # one run per row: no repeated index


def _sort_rows_in_place(xp: Any, offsets: Any, columns: Any, n: int) -> tuple[Any, int]:
    """Sort each row of ``columns`` (rows at ``offsets``) and drop duplicates, a span of rows
    at a time, compacting to the front; returns the rows' new degrees and the columns kept."""
    degrees = xp.zeros(n, dtype=ROW_OFFSET_DTYPE)
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
        keys = _sort_unique_in_place(xp, keys)
        span_rows = keys // n
        degrees[first_row:end_row] = xp.bincount(span_rows, minlength=end_row - first_row)
        columns[out : out + len(keys)] = keys - span_rows * n  # out <= lo: already read
        out += len(keys)
    return degrees, out


def _row_spans(xp: Any, offsets: Any) -> list[int]:
    """Row boundaries [0, ..., n] of spans of at most CHUNK edges plus one row's (a span ends
    at the last row starting at or before each multiple of CHUNK)."""
    n = len(offsets) - 1
    total = int(offsets[-1])
    targets = xp.arange(CHUNK, total, CHUNK, dtype=offsets.dtype)
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
