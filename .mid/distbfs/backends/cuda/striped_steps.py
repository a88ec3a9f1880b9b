"""Delta-stepping's striped steps on the CUDA backend (``distbfs.traversals.sssp.striped_buckets``:
several ranks, or one rank kept off the persistent kernel), each stage a few kernels and one
host read, in place of the array stages' sorts.

A vertex's search word is a 64-bit integer that orders as its distance (``kernels/relax.cu``):
the bits of its float64 distance, or, with positive integer weights and 32-bit ids, the integer
distance tied to the global id of the parent that gave it (the smallest such parent wins, the
rule of ``shortest_path_tree``, so the search records the tree as it goes; a distance past 32
bits sets ``overflowed`` and the traversal searches again with float64 words).

Per step: ``relax`` (``relax_requests``) makes the requests (target, word) of the out-edges of
some owned vertices that land inside the current bucket (below ``end``: a step) or beyond it
(the heavy step), as the one-GPU search splits a bucket's edges (fewer requests than a split by
weight, whose light edges may land beyond the bucket and be relaxed again with each improvement
of their tail; ``PathPlan.heavy``: ``heavy_by_landing``), culled against ``sent`` (this rank's
least word requested for every vertex, an atomicMin per request made); ``partition_min`` bins
them by owner (``filter_partition.cu``: the bin totals, then the counting sort's scatter; there
is nothing to reduce, the cull made a target's requests strictly fall); ``contract_min``
(``contract_min_kernel``) keeps each owned vertex's least word and queues those whose distance
fell below the bucket's end (once per step, by a stamp). Buckets: ``bucket_members`` and
``settle`` scan the owned vertices (``bucket_scan``); the settle scan and the contractions keep
the least distance beyond the bucket, which ``next_bucket`` reads. A pulled heavy step
(``pull_requests``) reads every unsettled owned vertex's row against every rank's words (an
all-gather: 8 bytes a vertex of the graph while it runs) and makes at most a request per owned
vertex, which the same partition, exchange and contraction take.

Memory: 8 bytes a vertex of the graph (``sent``), 8 + 4 + 1 an owned vertex (words, stamps,
settled marks) and three queues of owned vertices; requests and bins 2 x (id + 8) bytes a
request, grown as a step needs them (a relaxation of a long list runs a run of rows at a time,
so they hold what was made plus one run); pieces of long rows as the persistent search's. On a
dense graph the rows by weight (8 bytes an edge) are kept with the graph where the device has
room, as the one-GPU search keeps them.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from ...comm.base import Bins
from ...constants import NO_PATH, PATH_DTYPE, PREDECESSOR_DTYPE
from ...graph import DistGraph
from ...partition import local_id, owner
from ..arrays.relax import CHUNK_EDGES
from ..base import PathState, Relaxations
from .buffers import check_graph
from .kernels import Counter, counter_slots, get_kernel
from .launch_policy import LaunchPolicy
from .relax import piece_slots, relax_kernel

NO_WORD = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
"""A tied word without a path, and the empty least distance (``kernels/relax.cu``)."""
INFINITE_WORD = np.float64(NO_PATH).view(np.uint64)
"""The float64 word of a vertex without a path."""
ROW_KERNELS = ("relax_requests", "relax_requests_tied")
"""The kernels of ``kernels/relax.cu`` that read rows in a striped step (float64, tied words)."""
PULL_KERNELS = ("pull_requests", "pull_requests_tied")
"""The kernels of a pulled heavy step (float64, tied words)."""
SCAN_KERNELS = ("bucket_scan", "bucket_scan_tied")
"""The kernels that scan the owned vertices for a bucket (float64, tied words)."""
SCAN_GRID_KERNELS = (*SCAN_KERNELS, "tied_unpack")
"""The kernels launched on a search's scan grid (``StripedPathState.scan_grid``)."""
LEAST = 3
"""The slot of ``counts`` (frontier length, improved vertices, the frontier's out-edges, least
distance beyond the bucket) that holds the least distance (float64 bits)."""


@dataclass
class StripedPathState(PathState):
    """A striped search on one GPU: ``words`` of the owned vertices (``distances`` is their
    float64 view, or, with ``tied`` words, filled by ``finish``), the step's stamp, ``counts``
    (``LEAST``), the launch grids, the current bucket's ``end`` (which ``settle`` settles
    below), the last list of vertices made with its out-edges counted (``listed``: what
    ``relax`` sizes its requests by), the ``graph``, the ``rows`` its steps read and the
    buffers (``scratch``)."""

    words: Any = None
    tied: bool = False
    step: int = 0
    counts: Any = None
    grid: int = 1
    scan_grid: int = 1
    pull_grid: int = 1
    end: float = 0.0
    listed: tuple[Any, int] | None = None
    graph: DistGraph | None = None
    rows: tuple[Any, ...] = ()


def path_start(
    policy: LaunchPolicy,
    graph: DistGraph,
    source: int,
    integers: bool,
    grids: tuple[int, int, int],
    rows: tuple[Any, ...],
) -> StripedPathState:
    """The source at distance 0 (its own parent) on its owner, nothing sent, nothing settled.
    ``integers``: every weight a positive integer (tied words where the ids are 32-bit);
    ``grids``: blocks of a launch that reads rows, of one that scans the owned vertices and of
    a pulled heavy step (every block the device holds of each kernel at once, which a
    cooperative launch may not exceed: a scan streams memory); ``rows``: the row arguments
    of the relaxations (``relax.search_rows``: on dense graphs each row ascending by weight,
    so a step reads only its light edges and the heavy step only the others)."""
    ids = check_graph(graph)
    tied = integers and ids.itemsize == 4 and graph.n < np.iinfo(np.uint32).max
    nlocal = graph.nlocal
    empty = NO_WORD if tied else INFINITE_WORD
    words = cupy.full(nlocal, empty, dtype=np.uint64)
    counts = cupy.zeros(LEAST + 1, dtype=np.uint64)
    counts[LEAST] = INFINITE_WORD
    if owner(source, graph.size) == graph.rank:
        words[local_id(source, graph.size)] = np.uint64(source) if tied else np.uint64(0)
        counts[LEAST] = np.uint64(0)  # the float64 bits of distance 0
    pieces = piece_slots(policy, graph)
    scratch = {
        "sent": cupy.full(graph.n, empty, dtype=np.uint64),
        "queued": cupy.full(nlocal, -1, dtype=np.int32),
        "members": cupy.empty(nlocal, dtype=ids),
        "piece_vertex": cupy.empty(pieces, dtype=ids),
        "piece_start": cupy.empty(pieces, dtype=np.int64),
        "relax_counts": cupy.zeros(2, dtype=np.int64),  # requests made, pieces queued
        "relaxations": cupy.zeros(1, dtype=np.uint64),
        "overflow": cupy.zeros(1, dtype=np.int32),
        "bin_counters": cupy.zeros(counter_slots(policy), dtype=np.int64),
        "frontiers": [cupy.empty(nlocal, dtype=ids), cupy.empty(nlocal, dtype=ids)],
    }
    distances = None if tied else words.view(PATH_DTYPE)
    settled = cupy.zeros(nlocal, dtype=np.uint8)
    empty_ids = scratch["members"][:0]
    return StripedPathState(
        distances, None, None, settled, empty_ids, 0, scratch, None,
        words=words, tied=tied, counts=counts, grid=grids[0], scan_grid=grids[1],
        pull_grid=grids[2], graph=graph, rows=rows,
    )  # fmt: skip


def buffer(state: StripedPathState, name: str, length: int, dtype: Any) -> Any:
    """Scratch array ``name`` of at least ``length`` items: a power of two of them, so that
    the searches of a graph ask CuPy's memory pool for the same few sizes."""
    held = state.scratch.get(name)
    if held is None or held.shape[0] < length:
        state.scratch[name] = None  # back to the pool first
        held = cupy.empty(1 << max(length - 1, 0).bit_length(), dtype=dtype)
        state.scratch[name] = held
    return held


def relax(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: StripedPathState,
    vertices: Any,
    delta: float,
    heavy: bool,
) -> Relaxations:
    """The requests (target, word) along the out-edges of ``vertices`` (owned local ids) that
    land inside the current bucket (``heavy`` False: below ``state.end``) or beyond it, culled
    against what this rank sent before (``delta``: not read, the bucket's end says it)."""
    ids = check_graph(graph)
    count = int(vertices.shape[0])
    scratch = state.scratch
    if count == 0:
        return Relaxations(scratch["members"][:0], state.words[:0])
    edges = row_edges(graph, state, vertices)
    made_count, piece_count = scratch["relax_counts"][:1], scratch["relax_counts"][1:]
    made_count.fill(0)
    kernel = relax_kernel(policy, graph, ROW_KERNELS[state.tied])
    pieces = scratch["piece_vertex"]
    made = 0
    for first, last, bound in runs(graph, vertices, edges):
        targets = grown(state, "request_vertex", made, made + bound, ids)
        words = grown(state, "request_word", made, made + bound, np.uint64)
        piece_count.fill(0)
        part = vertices[first:last]
        rows = -(-(last - first) // policy.path_threads)
        for pieces_pass, blocks in ((0, rows), (1, state.grid)):
            kernel(
                (max(1, min(state.grid, blocks)),),
                (policy.path_threads,),
                (
                    *state.rows, part, np.int64(last - first), state.words, scratch["sent"],
                    targets, words, made_count, np.int64(targets.shape[0]), np.float64(state.end),
                    np.int32(heavy), np.int64(graph.rank), np.int64(graph.size),
                    scratch["overflow"], scratch["relaxations"], pieces, scratch["piece_start"],
                    np.int64(pieces.shape[0]), np.int64(policy.path_piece_edges), piece_count,
                    np.int32(pieces_pass),
                ),
            )  # fmt: skip
        made = int(made_count.get()[0])
    return Relaxations(targets[:made], words[:made])


def row_edges(graph: DistGraph, state: StripedPathState, vertices: Any) -> int:
    """The out-edges of ``vertices`` (owned local ids): counted as the list was made, where it
    was (``listed``)."""
    if state.listed is not None and state.listed[0] is vertices:
        return state.listed[1]
    offsets = graph.row_offsets
    return int((offsets[vertices + 1] - offsets[vertices]).sum())


def pull_requests(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: StripedPathState,
    everywhere: Any,
    lower: float,
    end: float,
) -> Relaxations:
    """A pulled heavy step (``distbfs.traversals.sssp.heavy_requests``): a request (owned
    vertex, word) for every unsettled owned vertex that a neighbour settled in [lower, end)
    improves, its least such word; ``everywhere``: every rank's words in rank order. A row
    each thread; rows ascending by weight stop at the first edge that cannot improve."""
    ids = check_graph(graph)
    nlocal = state.words.shape[0]
    scratch = state.scratch
    targets = buffer(state, "request_vertex", max(nlocal, 1), ids)
    words = buffer(state, "request_word", max(nlocal, 1), np.uint64)
    made = scratch["relax_counts"][:1]
    made.fill(0)
    kernel = relax_kernel(policy, graph, PULL_KERNELS[state.tied])
    kernel(
        (max(1, min(state.pull_grid, -(-nlocal // policy.path_threads))),),
        (policy.path_threads,),
        (
            *state.rows, np.int64(nlocal), state.words, state.settled, everywhere,
            np.int64(graph.n), np.float64(lower), np.float64(end), targets, words, made,
            scratch["overflow"], scratch["relaxations"],
        ),
    )  # fmt: skip
    count = int(made.get()[0])
    return Relaxations(targets[:count], words[:count])


def runs(graph: DistGraph, vertices: Any, edges: int) -> list[tuple[int, int, int]]:
    """``vertices`` cut into runs (first, last, out-edges) of at most ``CHUNK_EDGES`` edges (a
    longer row alone), so that the requests' buffers need room for what was made plus one run,
    not for every edge of a large bucket (``edges``: theirs in all)."""
    count = int(vertices.shape[0])
    if edges <= CHUNK_EDGES:
        return [(0, count, edges)]
    offsets = graph.row_offsets
    ends = cupy.cumsum(offsets[vertices + 1] - offsets[vertices])
    marks = cupy.arange(CHUNK_EDGES, edges, CHUNK_EDGES, dtype=ends.dtype)
    cuts = sorted({0, count, *cupy.searchsorted(ends, marks, side="right").get().tolist()})
    reach = cupy.concatenate([cupy.zeros(1, dtype=ends.dtype), ends])[cupy.asarray(cuts)].get()
    return [
        (a, b, int(reach[i + 1] - reach[i]))
        for i, (a, b) in enumerate(itertools.pairwise(cuts))
        if b > a
    ]


def grown(state: StripedPathState, name: str, kept: int, length: int, dtype: Any) -> Any:
    """``buffer`` of at least ``length`` items whose first ``kept`` survive a growth."""
    held = state.scratch.get(name)
    if held is not None and held.shape[0] >= length:
        return held
    state.scratch[name] = None
    bigger = buffer(state, name, length, dtype)
    if kept:
        bigger[:kept] = held[:kept]
    return bigger


def partition_min(
    policy: LaunchPolicy, state: StripedPathState, requests: Relaxations, nbins: int
) -> Bins:
    """The requests binned by owner (``v % nbins``): bin totals, then the counting sort's
    scatter; one bin is the requests as they are."""
    count = requests.size
    if nbins == 1:
        return Bins(np.array([0, count], dtype=np.int64), requests.vertices, (requests.distances,))
    bits = 8 * requests.vertices.dtype.itemsize
    counters = state.scratch["bin_counters"]
    counters.fill(0)  # bin_totals_kernel writes [FILTERED]
    vertices = buffer(state, "bin_vertex", count, requests.vertices.dtype)
    words = buffer(state, "bin_word", count, np.uint64)
    blocks = (max(1, min(state.grid, -(-count // policy.tile_items))),)
    block = (policy.block_threads,)
    get_kernel("filter_partition", "bin_totals_kernel", policy, bits)(
        blocks, block, (requests.vertices, np.int64(count), counters, np.int32(nbins))
    )
    get_kernel("filter_partition", "partition_words_kernel", policy, bits)(
        blocks,
        block,
        (
            requests.vertices, requests.distances, np.int64(vertices.shape[0]), vertices, words,
            counters, np.int32(nbins),
        ),
    )  # fmt: skip
    totals = counters[int(Counter.BINS) : int(Counter.BINS) + nbins].get()
    offsets = np.zeros(nbins + 1, dtype=np.int64)
    np.cumsum(totals, out=offsets[1:])
    return Bins(offsets, vertices[:count], (words[:count],))


def contract_min(
    policy: LaunchPolicy, graph: DistGraph, state: StripedPathState, received: Bins, end: float
) -> int:
    """Keep each owned vertex's least word over the received requests; those whose distance
    fell below ``end`` are the frontier. Returns how many vertices improved."""
    total = int(received.offsets[-1])
    state.step += 1
    frontier = state.scratch["frontiers"][state.step & 1]
    counts = state.counts
    counts[:LEAST] = 0
    if total:
        bits = 8 * received.vertices.dtype.itemsize
        get_kernel("contract", "contract_min_kernel", policy, bits)(
            (max(1, min(state.grid, -(-total // policy.tile_items))),),
            (policy.block_threads,),
            (
                received.vertices, received.payloads[0], np.int64(total), np.int32(graph.size),
                np.int32(state.tied), state.words, np.float64(end), state.scratch["queued"],
                np.int32(state.step), frontier, np.int64(frontier.shape[0]), counts,
                graph.row_offsets,
            ),
        )  # fmt: skip
    joined, improved, edges = (int(x) for x in counts[:LEAST].get())
    state.frontier = frontier[:joined]
    state.frontier_size = joined
    state.listed = (state.frontier, edges)
    return improved


def bucket_scan(
    policy: LaunchPolicy, graph: DistGraph, state: StripedPathState, end: float, settle: bool
) -> Any:
    """The owned unsettled vertices below ``end``; ``settle``: marked settled now, and the least
    distance of the others kept for ``next_bucket`` (the contractions of the bucket's heavy
    step lower it further)."""
    name = "settled_now" if settle else "members"
    if not settle:
        state.end = end
    out = buffer(state, name, state.words.shape[0], state.scratch["members"].dtype)
    count = buffer(state, "scan_count", 2, np.int64)  # vertices, their out-edges
    count.fill(0)
    if settle:
        state.counts[LEAST] = INFINITE_WORD
    nlocal = state.words.shape[0]
    scan = SCAN_KERNELS[state.tied]
    kernel = get_kernel("relax", scan, policy, 8 * out.dtype.itemsize)
    kernel(
        (max(1, min(state.scan_grid, -(-nlocal // policy.path_threads))),),
        (policy.path_threads,),
        (
            np.int64(nlocal), state.words, state.settled, np.float64(end), np.int32(settle),
            graph.row_offsets, out, count, state.counts[LEAST:],
        ),
    )  # fmt: skip
    listed, edges = (int(x) for x in count.get())
    state.listed = (out[:listed], edges)
    return state.listed[0]


def next_bucket(state: StripedPathState) -> float:
    """The least distance of an unsettled reached owned vertex (NO_PATH: none)."""
    return float(state.counts[LEAST:].get().view(np.float64)[0])


def finish(policy: LaunchPolicy, state: StripedPathState) -> None:
    """The search's distances (and, with tied words, its tree and whether a distance overflowed
    them); the buffers are released."""
    if state.tied:
        nlocal = state.words.shape[0]
        state.distances = cupy.empty(nlocal, dtype=PATH_DTYPE)
        state.preds = cupy.empty(nlocal, dtype=PREDECESSOR_DTYPE)
        get_kernel("relax", "tied_unpack", policy, 8 * state.scratch["members"].dtype.itemsize)(
            (max(1, min(state.scan_grid, -(-nlocal // policy.path_threads))),),
            (policy.path_threads,),
            (np.int64(nlocal), state.words, state.distances, state.preds),
        )
        state.overflowed = bool(int(state.scratch["overflow"].get()[0]))
    state.scratch.clear()
