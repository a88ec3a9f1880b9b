"""The distributed graph: each rank holds the CSR rows of the vertices it owns (striping,
section 6.1), with global neighbour ids. Construction is distributed: each rank contributes a
share of the edges, edges travel to the owner of their source through one all-to-all, then each
owner drops self-loops and duplicates and builds its rows. One rank can instead build from an
edge source it can replay (``distbfs.streamed``: a counting sort by tail that never holds the
edge list, so a generated graph takes about the memory of its CSR).

Weights: a weighted graph carries ``weights`` aligned with ``column_indices`` (None when
unweighted); they travel with their edges through every pass and are handled only when present,
so an unweighted build is unchanged. Non-negative integer weights small enough travel inside
the edge's sort key (``key * m + weight``, ``weight_packing``), so that one sort of one array
orders the edges and, among duplicates, their weights; other weights travel beside the keys and
take a second sort. Of duplicate edges the one of smallest weight is kept; an
undirected edge stores one weight in both directions (the smaller, when the input lists u -> v
and v -> u with different weights); zero weights are edges like any other. Weights must be
non-negative and finite (the readers and the API check them). Their dtype is
``constants.weight_dtype``'s: float32 when every weight of the whole graph is exactly a float32
value, float64 otherwise, decided over all ranks.

Invariants of a ``DistGraph``: ``row_offsets`` is int64 of length ``nlocal + 1``;
``column_indices`` holds global ids (int32 when n < 2**31), sorted and unique within each row,
with no self-loops; ``weights`` is None or float32/float64 of the length of ``column_indices``;
an undirected graph stores both directions of every edge, with one weight; the graph is the
same, row for row and weight for weight, whatever the number of ranks.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .arrays import as_host, to_module
from .comm.base import Communicator
from .compressed import CompressedColumns
from .constants import ROW_OFFSET_DTYPE, vertex_dtype, weight_dtype
from .errors import InputError
from .memory import require
from .partition import bin_by_owner, local_id, num_local, owned_ids, owner
from .threads import host_threads, parallel_map, spans


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
    weights : array or None
        The weight of every stored edge, aligned with ``column_indices`` (same array module;
        float32 or float64 by ``constants.weight_dtype``); None for an unweighted graph.
    """

    n: int
    num_edges: int
    directed: bool
    rank: int
    size: int
    row_offsets: Any
    column_indices: Any
    weights: Any = None

    @property
    def weighted(self) -> bool:
        """True when the edges carry weights."""
        return self.weights is not None

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
        """Global ids of the owned vertices, in local order (``partition.owned_ids``)."""
        return owned_ids(self.rank, self.size, self.nlocal, xp)

    @property
    def compressed(self) -> bool:
        """True when the columns are varint-coded (``distbfs.compressed.CompressedColumns``)."""
        return isinstance(self.column_indices, CompressedColumns)

    def compress(self) -> DistGraph:
        """This rank's rows with their columns varint-coded (host memory; the rows, weights and
        everything else as they are). A compressed graph is returned as it is."""
        if self.compressed:
            return self
        if type(self.column_indices).__module__.partition(".")[0] != "numpy":
            raise InputError(
                "DistGraph.compress codes host arrays; a GPU's graph is coded on the device "
                "by its backend (Graph.compress, CudaBackend.compress_graph)"
            )
        columns = CompressedColumns.encode(
            self.row_offsets, self.column_indices, self.rank, self.size
        )
        return replace(self, column_indices=columns)

    def nbytes(self) -> int:
        """Bytes of this rank's arrays (row offsets, columns and weights)."""
        weights = 0 if self.weights is None else self.weights.nbytes
        return int(self.row_offsets.nbytes + self.column_indices.nbytes + weights)

    def stored_edges(self, xp: Any = np, *, with_weights: bool = False) -> tuple[Any, ...]:
        """(tail, head) global ids of every edge this rank stores, int64, in CSR order; with
        ``with_weights``, (tail, head, weight), the weights those of the CSR (None when the graph
        is unweighted), ready for ``build_graph(..., weights=...)``."""
        # the row of every stored edge (searchsorted: CuPy's repeat takes no array of counts)
        slots = xp.arange(self.num_local_edges, dtype=xp.int64)
        rows = xp.searchsorted(self.row_offsets, slots, side="right") - 1
        del slots
        rows *= self.size
        rows += self.rank
        heads = self.column_indices.astype(xp.int64)
        return (rows, heads, self.weights) if with_weights else (rows, heads)


CHUNK = 1 << 28
"""Elements per step of the chunked passes of construction: bounds the temporaries, and keeps each
boolean compaction below CuPy's limit of 2**31 elements."""


HOST_BUILD_EDGES = 1 << 20
"""Directed edges up to which one rank builds a device graph with numpy and then moves the CSR
(tens of milliseconds): on the device the build runs two dozen small CuPy kernels, each
compiled on first use (about 0.08 s apiece with an empty kernel cache)."""


def _chunks(length: int) -> range:
    return range(0, length, CHUNK)


def _carried(xp: Any, weights: Any) -> Any:
    """The input weights in the dtype they travel in through construction: float32 when given as
    float32 (every value exact there), float64 otherwise; the stored dtype is decided at the end
    (``_stored_weights``)."""
    dtype = xp.float32 if weights.dtype == np.float32 else xp.float64
    return xp.asarray(weights, dtype=dtype)


def _stored_weights(values: Any, comm: Communicator | None = None, copy: bool = True) -> Any:
    """The kept edges' weights in the dtype of ``weight_dtype``; None for an unweighted graph.
    A copy (the construction buffer they are a prefix of is freed), unless ``copy`` is False
    and the dtype is theirs already (a streamed build keeps its arrays). Collective with
    ``comm``."""
    return None if values is None else values.astype(weight_dtype(values, comm), copy=copy)


def packing_multiplier(top: float, n: int, nlocal: int) -> int:
    """m such that ``key * m + w`` holds every weight w in [0, ``top``] (integers) beside any
    key ``local_row * n + column`` of a rank owning at most ``nlocal`` rows within int64; 0 when
    it would not fit (the weights then travel beside the keys)."""
    m = int(top) + 1
    return m if max(nlocal, 1) * max(n, 1) * m < 2**63 else 0


def weight_packing(xp: Any, weights: Any, n: int, comm: Communicator | None = None) -> int:
    """``packing_multiplier`` of the weights of a build when every weight, on every rank (with
    ``comm``: collective, one all-reduce), is a non-negative integer; else 0. ``weights`` are
    non-negative and finite (the readers check them)."""
    fractional, top = False, 0.0
    for i in _chunks(len(weights)):
        part = weights[i : i + CHUNK]
        fractional = fractional or not bool((part == xp.floor(part)).all())
        top = max(top, float(part.max()))
    size = 1
    if comm is not None:  # any rank's fractional weight, the largest weight of all
        both = comm.allreduce(np.array([float(fractional), top]), op="max")
        fractional, top, size = bool(both[0]), float(both[1]), comm.size
    return 0 if fractional else packing_multiplier(top, n, num_local(n, size, 0))


def _edge_keys(
    xp: Any,
    src: Any,
    dst: Any,
    n: int,
    size: int,
    symmetric: bool,
    weights: Any = None,
    threads: int = 1,
    pack: int = 0,
) -> tuple[Any, Any]:
    """Sort keys ``local_row * n + column`` of the edges owned here, self-loops dropped; both
    directions when ``symmetric`` (one rank only: the reverse edge is owned here too); and the
    weights aligned with the keys (None without ``weights``, or when ``pack`` > 0 puts them in
    the keys: ``key * pack + weight``). Pieces of the edge list run on up to ``threads`` host
    threads, each writing its own slice."""
    pieces = spans(xp, len(src), threads, CHUNK)

    def kept(bounds: tuple[int, int]) -> int:
        lo, hi = bounds
        return int(xp.count_nonzero(src[lo:hi] != dst[lo:hi]))

    counts = parallel_map(kept, pieces, threads)
    ways = 2 if symmetric else 1
    keys = xp.empty(sum(counts) * ways, dtype=xp.int64)
    values = None if weights is None or pack else xp.empty(len(keys), dtype=weights.dtype)
    starts = [ways * sum(counts[:i]) for i in range(len(pieces))]

    def fill(i: int) -> None:
        lo, hi = pieces[i]
        s, d = src[lo:hi], dst[lo:hi]
        loop_free = s != d
        s, d = s[loop_free], d[loop_free]
        w = None if weights is None else weights[lo:hi][loop_free]
        at = starts[i]
        for tails, heads in ((s, d), (d, s)) if symmetric else ((s, d),):
            keys[at : at + len(tails)] = edge_keys(xp, tails, heads, n, size, w, pack)
            if values is not None:
                values[at : at + len(tails)] = w
            at += len(tails)

    parallel_map(fill, list(range(len(pieces))), threads)
    return keys, values


def edge_keys(
    xp: Any, tails: Any, heads: Any, n: int, size: int, weights: Any = None, pack: int = 0
) -> Any:
    """The sort keys of the edges ``tails -> heads`` owned here: ``local_row * n + column``,
    times ``pack`` plus the (integer) weight where ``pack`` > 0."""
    keys = local_id(tails, size) * n + heads
    if pack:
        keys *= pack
        keys += weights.astype(xp.int64)
    return keys


def _exchanged_keys(
    comm: Communicator,
    xp: Any,
    src: Any,
    dst: Any,
    n: int,
    directed: bool,
    weights: Any = None,
    pack: int = 0,
) -> tuple[Any, Any]:
    """Send every edge (both directions when undirected, self-loops dropped) to the owner of
    its tail, in rounds of at most CHUNK / 2 directed edges, and return the received edges'
    sort keys ``local_row * n + column`` in one array sized beforehand, with their weights
    (None without ``weights``): a first pass counts what each round sends to each rank (one
    all-gather of the counts), so no round's keys are ever copied twice. Every rank runs the
    same number of rounds (collective). ``pack`` > 0: the weights travel in the keys
    (``edge_keys``) and None is returned for them."""
    p = comm.size
    step = CHUNK // 2 if directed else CHUNK // 4  # edges per round: both directions travel
    rounds = comm.allreduce(-(-len(src) // step), op="max")

    def directed_edges(i: int, weighted: bool) -> tuple[Any, ...]:
        """(tails, heads[, weights]) of round ``i``."""
        part = slice(i * step, (i + 1) * step)
        loop_free = src[part] != dst[part]
        edges = [src[part][loop_free], dst[part][loop_free]]
        if weighted:
            edges.append(weights[part][loop_free])
        if directed:
            return tuple(edges)
        reverse = [edges[1], edges[0], *edges[2:]]
        return tuple(xp.concatenate([a, b]) for a, b in zip(edges, reverse, strict=True))

    sent = np.zeros((rounds, p), dtype=np.int64)
    for i in range(rounds):
        tails = directed_edges(i, False)[0]
        counts = xp.bincount(owner(tails, p), minlength=p)
        sent[i] = counts.get() if hasattr(counts, "get") else counts
    received = comm.allgather_array(sent.reshape(-1)).reshape(p, rounds, p)[:, :, comm.rank]
    keys = xp.empty(int(received.sum()), dtype=xp.int64)
    values = None if weights is None or pack else xp.empty(len(keys), dtype=weights.dtype)
    at = 0
    for i in range(rounds):
        tails, *payloads = directed_edges(i, weights is not None)
        offsets, tails, payloads = bin_by_owner(xp, tails, p, *payloads)
        _, (tails, heads, *w) = comm.alltoallv(offsets, tails, *payloads)
        keys[at : at + len(tails)] = edge_keys(xp, tails, heads, n, p, *w[:1], pack=pack)
        if values is not None:
            values[at : at + len(tails)] = w[0]
        at += len(tails)
    if at != len(keys):
        raise RuntimeError(f"rank {comm.rank} received {at} edges, {len(keys)} announced")
    return keys, values


def _sort_unique_in_place(
    xp: Any, keys: Any, weights: Any = None, pack: int = 0
) -> tuple[Any, Any]:
    """Sort ``keys`` in place and compact its distinct values to its front; return that prefix,
    and that of ``weights`` (permuted and compacted alongside, in place: of duplicate keys the
    smallest weight stays; None without weights). ``pack`` > 0: the keys hold their weights
    (``edge_keys``), so one sort orders both, and keys are distinct by ``key // pack``."""
    if weights is None:
        keys.sort()
    else:
        _sort_by_key_then_weight(xp, keys, weights)
    out = 0
    for i in _chunks(len(keys)):
        chunk = keys[i : i + CHUNK]
        edge = chunk // pack if pack else chunk
        first = xp.empty(len(chunk), dtype=xp.bool_)
        first[1:] = edge[1:] != edge[:-1]
        before = keys[i - 1 : i] // pack if pack else keys[i - 1 : i]
        first[:1] = True if i == 0 else edge[:1] != before
        del edge
        distinct = chunk[first]  # a copy: safe to write before position i + len(chunk)
        if weights is not None:
            weights[out : out + len(distinct)] = weights[i : i + CHUNK][first]
        keys[out : out + len(distinct)] = distinct
        out += len(distinct)
    return keys[:out], (None if weights is None else weights[:out])


def _sort_by_key_then_weight(xp: Any, keys: Any, weights: Any) -> None:
    """Permute ``keys`` and ``weights`` alike, in place, into key order and, among equal keys,
    weight order (the smallest first): by weight, then stably by key."""
    order = xp.argsort(weights)
    keys[:] = keys[order]
    weights[:] = weights[order]
    del order
    order = xp.argsort(keys, kind="stable")
    keys[:] = keys[order]
    weights[:] = weights[order]


def _csr_from_keys(xp: Any, keys: Any, n: int, nlocal: int, threads: int = 1) -> tuple[Any, Any]:
    """Row offsets and column ids of sorted distinct keys ``row * n + column`` (pieces on up to
    ``threads`` host threads; each piece's rows counted apart, then summed)."""
    column_indices = xp.empty(len(keys), dtype=vertex_dtype(n))

    def split(bounds: tuple[int, int]) -> tuple[int, Any]:
        lo, hi = bounds
        rows = keys[lo:hi] // n
        column_indices[lo:hi] = keys[lo:hi] - rows * n
        first = int(rows[0]) if hi > lo else 0
        return first, xp.bincount(rows - first)

    degrees = xp.zeros(nlocal, dtype=ROW_OFFSET_DTYPE)
    for first, counts in parallel_map(split, spans(xp, len(keys), threads, CHUNK), threads):
        degrees[first : first + len(counts)] += counts
    row_offsets = xp.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)
    xp.cumsum(degrees, out=row_offsets[1:])
    return row_offsets, column_indices


BUILD_FIX = (
    "the vertex count is the largest id + 1 (number a file's vertices 0..n-1 without gaps); "
    "a smaller graph, or ranks on more nodes (mpiexec -n P)"
)
"""What the refusal of a graph too large to build suggests."""


def build_bytes(n: int, nlocal: int, edges: int, weighted: bool, packed: bool = False) -> int:
    """The peak bytes of building a rank's CSR of ``edges`` directed edges (the input aside):
    per owned vertex the row offsets and the degree counts (int64 each), per edge an int64 key,
    the sort's buffer of as much, the column id and, weighted, three more words (the weight,
    its sort permutation and the stored copy), or with the weights in the keys (``packed``)
    two (the weight taken out and the stored copy)."""
    per_edge = 16 + vertex_dtype(n).itemsize + ((16 if packed else 24) if weighted else 0)
    return 16 * (nlocal + 1) + per_edge * edges


def require_build(
    xp: Any,
    comm: Communicator | None,
    n: int,
    nlocal: int,
    edges: int,
    weighted: bool,
    packed: bool = False,
) -> None:
    """Refuse (``InputError`` on every rank, before any large allocation) a build whose peak
    (``build_bytes``) would not fit."""
    what = f"building the CSR of {n:,} vertices and {edges:,} directed edges (this rank's)"
    require(build_bytes(n, nlocal, edges, weighted, packed), xp, comm, what, BUILD_FIX)


def build_graph(
    comm: Communicator,
    src: Any,
    dst: Any,
    n: int,
    *,
    directed: bool,
    xp: Any = np,
    weights: Any = None,
) -> DistGraph:
    """Build the distributed CSR from this rank's share of the edges (collective).

    ``src``/``dst`` are int64 arrays of global ids in ``[0, n)`` (checked by the readers).
    For an undirected graph each edge may be given in one direction or both. ``weights``: None
    on every rank (an unweighted graph), or on every rank an array aligned with ``src`` of
    non-negative finite numbers (checked by the readers and the API); duplicates keep the
    smallest, and the stored dtype is ``weight_dtype``'s (one allreduce). Peak memory beyond
    the input: one int64 key per kept directed edge, the sort's buffer, and the CSR; on several
    ranks also one exchange round's buffers (edges travel in rounds of at most CHUNK / 2); with
    weights, a weight per kept edge and the permutations of the sort by key and weight.
    """
    if n < 0:
        raise InputError(f"vertex count must be non-negative, got {n}")
    p = comm.size
    nlocal = num_local(n, p, comm.rank)
    if nlocal > 0 and nlocal * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on {p} ranks (use more ranks)")
    directions = 1 if directed else 2
    edges = comm.allreduce(len(src)) * directions // p if p > 1 else len(src) * directions
    if p == 1 and xp is not np and edges <= HOST_BUILD_EDGES:
        host = build_graph(
            comm,
            as_host(src),
            as_host(dst),
            n,
            directed=directed,
            weights=None if weights is None else as_host(weights),
        )
        return replace(
            host,
            row_offsets=to_module(xp, host.row_offsets),
            column_indices=to_module(xp, host.column_indices),
            weights=None if host.weights is None else to_module(xp, host.weights),
        )
    if weights is not None:
        weights = _carried(xp, weights)
        if weights.shape != (len(src),):
            raise ValueError(f"weights: {weights.shape[0]} weights for {len(src)} edges")
    pack = 0 if weights is None else weight_packing(xp, weights, n, comm)
    require_build(xp, comm, n, nlocal, edges, weights is not None, pack > 0)
    src = xp.asarray(src, dtype=xp.int64)
    dst = xp.asarray(dst, dtype=xp.int64)
    threads = host_threads(p)
    if p > 1:  # both directions travel to their owners
        keys, values = _exchanged_keys(comm, xp, src, dst, n, directed, weights, pack)
    else:
        keys, values = _edge_keys(xp, src, dst, n, p, not directed, weights, threads, pack)
    del src, dst, weights
    row_offsets, column_indices, values = _csr_from_unsorted_keys(
        xp, keys, n, nlocal, values, threads, pack
    )
    del keys
    stored = _stored_weights(values, comm)
    del values
    num_edges = comm.allreduce(int(column_indices.shape[0]))
    return DistGraph(n, num_edges, directed, comm.rank, p, row_offsets, column_indices, stored)


def _csr_from_unsorted_keys(
    xp: Any, keys: Any, n: int, nlocal: int, weights: Any = None, threads: int = 1, pack: int = 0
) -> tuple[Any, Any, Any]:
    """Row offsets, column ids and weights (None without ``weights`` or ``pack``) of the keys
    ``row * n + column`` (sorted and deduplicated in place: rows, then neighbours within a row;
    the keys and weights are consumed). ``pack`` > 0: the keys hold their weights
    (``edge_keys``), which are taken out after the sort."""
    keys, weights = _sort_unique_in_place(xp, keys, weights, pack)
    if pack:  # integers to 2**24 are exact in float32
        weights = xp.empty(len(keys), dtype=xp.float32 if pack <= 2**24 + 1 else xp.float64)
        for i in _chunks(len(keys)):
            chunk = keys[i : i + CHUNK]
            weights[i : i + CHUNK] = chunk % pack
            chunk //= pack
    return (*_csr_from_keys(xp, keys, n, nlocal, threads), weights)


def build_local_graph(
    src: Any, dst: Any, n: int, *, directed: bool, xp: Any = np, weights: Any = None
) -> DistGraph:
    """The one-rank CSR of the edges ``src -> dst`` (and their ``weights``) held here (no
    communication): what ``build_graph`` builds on one rank. Several ranks use it for a
    whole-graph copy on each (the replica of small graphs) from all-gathered edges."""
    if n > 0 and n * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on 1 rank (use more ranks)")
    weights = None if weights is None else _carried(xp, weights)
    pack = 0 if weights is None else weight_packing(xp, weights, n)
    edges = len(src) * (1 if directed else 2)
    require_build(xp, None, n, n, edges, weights is not None, pack > 0)
    src = xp.asarray(src, dtype=xp.int64)
    dst = xp.asarray(dst, dtype=xp.int64)
    keys, values = _edge_keys(xp, src, dst, n, 1, not directed, weights, pack=pack)
    row_offsets, column_indices, values = _csr_from_unsorted_keys(xp, keys, n, n, values, pack=pack)
    num_edges = int(column_indices.shape[0])
    stored = _stored_weights(values)
    return DistGraph(n, num_edges, directed, 0, 1, row_offsets, column_indices, stored)


def inbound_rows(graph: DistGraph, xp: Any = np) -> DistGraph:
    """This rank's inbound rows: every vertex's edges into the vertices this rank owns, as one
    rank's CSR of all n rows (row u lists the heads v of the edges u -> v that this rank owns,
    global ids, ascending). For an undirected graph they are the transpose of its rows. A
    top-down level that expands the all-gathered frontier through them reaches only vertices
    this rank owns (``distbfs.traversals.bfs.inbound_level``). Built here, with no
    communication: an int64 key ``tail * n + head`` per stored edge, sorted; peak memory
    ``inbound_bytes``."""
    if graph.directed:
        raise ValueError("inbound rows transpose an undirected graph's rows")
    if not inbound_keys_fit(graph.n):
        raise ValueError(f"inbound rows of {graph.n:,} vertices: tail * n + head exceeds int64")
    n, m = graph.n, graph.num_local_edges
    keys = xp.empty(m, dtype=xp.int64)
    for i in _chunks(m):
        stop = min(m, i + CHUNK)
        heads = xp.arange(i, stop, dtype=xp.int64)  # the row of each edge slot, as a global id
        heads = xp.searchsorted(graph.row_offsets, heads, side="right") - 1
        heads *= graph.size
        heads += graph.rank
        tails = graph.column_indices[i:stop].astype(xp.int64)
        tails *= n
        tails += heads
        keys[i:stop] = tails
        del heads, tails
    keys.sort()
    row_offsets, column_indices = _csr_from_keys(xp, keys, n, n)
    return DistGraph(n, graph.num_edges, False, 0, 1, row_offsets, column_indices)


def inbound_keys_fit(n: int) -> bool:
    """Whether ``inbound_rows``' sort keys (``tail * n + head``) fit an int64 for n vertices."""
    return n * n < 2**63


def inbound_bytes(graph: DistGraph) -> int:
    """The peak bytes of ``inbound_rows`` beside the graph: per stored edge an int64 key, the
    sort's buffer of as much and the column id; per vertex of the whole graph the row offsets
    and the degree counts; a chunk's temporaries."""
    per_edge = 16 + vertex_dtype(graph.n).itemsize
    return per_edge * graph.num_local_edges + 16 * (graph.n + 1) + 24 * CHUNK
