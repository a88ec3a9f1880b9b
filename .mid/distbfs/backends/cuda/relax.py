"""Shortest paths on one GPU that holds the whole graph (``kernels/relax.cu``): delta-stepping
in one persistent cooperative grid (small graphs without settle passes, i.e. road networks and
meshes: in one block whose near queues live in shared memory, ``block_kernel_bytes``), and the
shortest-path tree.

``path_start``: the search's device state (a word a vertex: the float64 distance's bits, or
with positive integer weights on 32-bit ids the integer distance tied to the parent that gave
it; the near queues, the buckets' members, the far piles, the per-vertex stamps that queue a
vertex once per step and once per bucket, the counters and the control words that carry the
search from one launch to the next). ``run_buckets``: one launch, which runs buckets until the
search is done or its log of buckets is full; returns the logged buckets. A search of tied
words ends with its distances and its tree (``untie``); otherwise ``shortest_path_tree``
builds the tree from the distances: pass 0 (every reached vertex's smallest strictly closer
tight in-neighbour, the rule tied words follow) and, where zero weights leave vertices
without one, plateau passes (``distbfs.traversals.sssp``).

Rows by weight (``search_rows``): a search with settle passes (dense graphs) reads a copy of
the rows, each ascending by weight, made once per graph where the device has room: a step then
reads only the edges of a row that land inside its bucket (a binary search on the row's
weights), the settle pass only the others, where whole rows were read in every step a hub
improved in. Float32 weights on plain columns; 8 bytes an edge, kept with the graph.

Memory: 8 bytes a vertex of words, 20 of stamps, near queues and members (int32 ids; 36 with
int64 ids; the one-block kernel keeps no stamps or members: 12; two near queues of n,
``LaunchPolicy.path_near_fraction``), far-pile slots of 8 bytes (12 with int64 ids; two piles
of n, ``LaunchPolicy.path_far_fraction``), and pieces of long
rows: about 44 bytes a vertex beside the CSR, freed when the search is done. The tree then
takes 8 a vertex (and 4 where plateaus need passes) beside the distances; tied words become 16
a vertex of distances and predecessors.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import cupy
import numpy as np

from ...constants import NO_PATH, PATH_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ...graph import DistGraph
from ...memory import available_bytes, fits
from .buffers import (
    CudaGraphResources,
    check_graph,
    fill_bytes,
    pinned_queue,
    search_queue,
    store_scalars,
)
from .compressed import column_args, kernel_name
from .kernels import get_kernel
from .launch_policy import PATH_HISTOGRAM_BINS, LaunchPolicy

PATH_COUNT_SLOTS = 9 + 2 * PATH_HISTOGRAM_BINS + 7
"""Counter slots of the delta-stepping grid: queue counts, histograms, least live distances,
members, settle pieces, the near queues' least distances (layout in ``kernels/relax.cu``)."""
CTL_STEP, CTL_BUCKET, CTL_END, CTL_DONE, CTL_OVERFLOW, CTL_FRESH = range(6)
"""Control words carried across launches (``kernels/relax.cu``)."""
LEAST_SLOT = 9 + 2 * PATH_HISTOGRAM_BINS
"""The two least live distances among the counter slots; the members' count follows."""
MEMBER_SLOT = LEAST_SLOT + 2
NO_TIED_WORD = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
"""A vertex without a path in a search of tied words (``TiedWord`` in ``kernels/relax.cu``)."""
LOG_WORDS = 7
"""Words of a logged bucket: bucket, lower bound and end (float64 bits), steps, relaxations,
improvements, vertices queued."""
NO_PARENT = np.iinfo(np.int64).max
"""A reached vertex's parent before a tree pass gives it one (``kernels/relax.cu``)."""


@dataclass
class DevicePathState:
    """One search on one GPU: ``distances`` (float64, NO_PATH where unreached) and ``preds``
    (with tied words: from the search itself; else once the tree is built); the kernels'
    buffers. ``words``: what the grid relaxes, the distances' bits or (``tied``) integer
    distances tied to their parents; ``overflowed``: a tied search met a distance past 32 bits
    and has no result; ``shared_bytes``: the dynamic shared memory of the one-block kernel
    (``block_kernel_bytes``), 0 where the search runs the grid kernel; ``rows``: the row
    arguments the search kernel reads (``graph_args``, or the rows by weight: ``search_rows``)."""

    distances: Any
    buffers: dict[str, Any] = field(default_factory=dict)
    preds: Any = None
    blocks: int = 1
    grid: int = 1
    tied: bool = False
    words: Any = None
    overflowed: bool = False
    shared_bytes: int = 0
    rows: tuple[Any, ...] = ()


def weight_args(graph: DistGraph) -> tuple[Any, np.int32]:
    """The weights pointer and kind of ``graph`` (0: unweighted, every edge weighs 1)."""
    if graph.weights is None:
        return graph.row_offsets, np.int32(0)
    return graph.weights, np.int32(1 if graph.weights.dtype == np.float32 else 2)


def relax_kernel(policy: LaunchPolicy, graph: DistGraph, name: str) -> Any:
    """Kernel ``name`` of ``kernels/relax.cu`` for ``graph``: its ``_varint`` form when the
    columns are compressed."""
    bits = 8 * check_graph(graph).itemsize
    return get_kernel("relax", kernel_name(name, graph), policy, bits)


def graph_args(graph: DistGraph) -> tuple[Any, ...]:
    """What the row-reading kernels of ``kernels/relax.cu`` take for ``graph``: row offsets,
    columns (plain, or the compressed columns' arrays), weights and their kind, then the rank
    whose rows they are and the rank count (a compressed row's first gap counts from its
    vertex's global id)."""
    return (graph.row_offsets, *column_args(graph), *weight_args(graph), *rows_owner(graph))


def rows_owner(graph: DistGraph) -> tuple[np.int64, np.int64]:
    """The rank and rank count of ``graph``'s rows, as the row-reading kernels take them."""
    return np.int64(graph.rank), np.int64(graph.size)


ROWS_BY_WEIGHT = np.int32(3)
"""The weight kind that tells the search kernel each row ascends by weight (float32 weights;
``Csr::kRowsByWeight`` of ``kernels/relax.cu``)."""
SEARCH_BYTES_A_VERTEX, SEARCH_BYTES_AN_OWNED_VERTEX = 16, 64
"""What a search takes beside the graph at its peak, bounded from above (see Memory above and
``striped_steps``): the room the rows by weight leave, so that the copy never costs a search
its memory."""
SORT_SPAN_EDGES = 1 << 26
"""Edges ``rows_by_weight`` sorts at a time (a row longer than this alone)."""


def rows_by_weight(graph: DistGraph) -> tuple[Any, Any]:
    """The columns and weights of ``graph`` (plain columns, float32 weights: ``search_rows``
    asks only for those) with each row ascending by weight (equal weights in column order). A
    span of rows at a time: the slots' row within it shifted above the weight's bits
    (non-negative floats order as their bits), one stable sort (CUB's radix sort)."""
    offsets, columns, weights = graph.row_offsets, graph.column_indices, graph.weights
    sorted_columns, sorted_weights = cupy.empty_like(columns), cupy.empty_like(weights)
    total = int(offsets[-1])
    cuts = cupy.searchsorted(offsets, cupy.arange(0, total, SORT_SPAN_EDGES), side="right") - 1
    bounds = sorted({0, graph.nlocal, *(int(c) for c in cuts.tolist())})
    for first, last in itertools.pairwise(bounds):
        lo, hi = int(offsets[first]), int(offsets[last])
        if hi == lo:
            continue
        # each slot's row within the span: a mark at every later row's start, summed
        starts = cupy.bincount(offsets[first + 1 : last] - lo, minlength=hi - lo + 1)[: hi - lo]
        keys = cupy.cumsum(starts).astype(np.uint64)
        del starts
        keys <<= np.uint64(32)
        keys |= weights[lo:hi].view(np.uint32)
        order = cupy.argsort(keys)
        del keys
        order += lo
        sorted_columns[lo:hi] = columns[order]
        sorted_weights[lo:hi] = weights[order]
    return sorted_columns, sorted_weights


ROWS_AS_STORED = "as stored"
"""``search_rows``'s note where the rows by weight would serve but found no room."""


def search_rows(policy: LaunchPolicy, graph: DistGraph) -> tuple[tuple[Any, ...], str | None]:
    """The row arguments of the search kernel for ``graph`` (built once per graph: the
    backend keeps them) and a note of the choice: where its searches take settle passes, the
    rows ascending by weight (``rows_by_weight``: plain columns, float32 weights; note "by
    weight") when the device has room for them beside the graph and a search's peak, else the
    rows as stored (``graph_args``; note ``ROWS_AS_STORED`` and the bytes); no note where the
    rows by weight would not serve."""
    plain = graph_args(graph)
    weights = graph.weights
    if not settle_passes(policy, graph) or graph.compressed or weights is None:
        return plain, None
    if weights.dtype != np.float32:  # (float64 weights: the kernel reads them as stored)
        return plain, None
    copy = graph.column_indices.nbytes + weights.nbytes
    sorting = 40 * min(graph.num_local_edges, SORT_SPAN_EDGES)  # a span's keys, order, sort
    searching = SEARCH_BYTES_A_VERTEX * graph.n + SEARCH_BYTES_AN_OWNED_VERTEX * graph.nlocal
    needed = copy + max(sorting, searching)
    if not fits(needed, cupy, None):
        room = f"{needed:,} bytes beside the graph, {available_bytes(cupy):,} available"
        return plain, f"{ROWS_AS_STORED} (a copy by weight and a search need {room})"
    sorted_columns, sorted_weights = rows_by_weight(graph)
    rows = (graph.row_offsets, sorted_columns, sorted_weights, ROWS_BY_WEIGHT, *rows_owner(graph))
    return rows, "by weight"


def piece_slots(policy: LaunchPolicy, graph: DistGraph) -> int:
    """Slots for the pieces of long rows one step or tree pass may queue: pieces of
    ``path_piece_edges`` edges, at most two a piece's worth of edges; compressed rows are cut at
    their decode points (every ``decode_point_edges`` slots), at most three a stretch."""
    m = graph.num_local_edges
    if graph.compressed:
        return 3 * (m // policy.decode_point_edges) + 1024
    return 2 * (m // policy.path_piece_edges) + 1024


def path_start(
    policy: LaunchPolicy,
    graph: DistGraph,
    source: int,
    grid: int,
    integers: bool,
    resources: CudaGraphResources,
    rows: tuple[Any, ...] | None = None,
    search_grid: int | None = None,
) -> DevicePathState:
    """The state of a search from ``source`` (local = global id on one rank): the source at
    distance 0 in the first near queue and the first bucket's members, bucket 0 ending at the
    first delta. ``integers`` (positive integer weights) on 32-bit ids: tied words. The
    kernels' buffers are the graph's kept ones where it keeps its queues (``search_queue``;
    ``resources``: the graph's), set by fills and small copies. ``rows``: what the search
    kernel reads (``search_rows``; None: ``graph_args``). ``search_grid``: the blocks of the
    search's grid kernel (None: ``grid``, which the other passes take)."""
    ids, n = check_graph(graph), graph.n
    tied = integers and ids == np.int32
    far_capacity = max(int(n * policy.path_far_fraction), 1)  # beyond: a scan of every vertex
    pieces = piece_slots(policy, graph)
    if tied:
        words = cupy.empty(n, dtype=np.uint64)
        fill_bytes(words, 0xFF)  # NO_TIED_WORD
        distances = None
    else:
        distances = cupy.full(n, NO_PATH, dtype=PATH_DTYPE)
        distances[source] = 0.0
        words = distances.view(np.uint64)
    blocks = 1 if n <= policy.path_one_block_vertices else search_grid or grid
    shared = block_kernel_bytes(policy, graph, tied, resources) if blocks == 1 else 0
    # the one-block kernel claims vertices in shared memory and has no settle passes: no
    # stamps or members (a slot each stands in)
    stamped = n if shared == 0 else 1
    near = max(int(n * policy.path_near_fraction), 1) if shared == 0 else max(n, 1)  # per queue
    shapes = {
        "queued": (stamped, np.int32),  # -1: not queued (a fill of 0xFF bytes)
        "far_mark": (n, np.int32),
        "near0": (near, ids),
        "near1": (near, ids),
        "far0": (far_capacity, ids),
        "far1": (far_capacity, ids),
        "far0_at": (far_capacity, np.float32),
        "far1_at": (far_capacity, np.float32),
        "members": (max(stamped, 1), ids),
        "piece_vertex": (pieces, ids),
        "piece_start": (pieces, np.int64),
        "counts": (PATH_COUNT_SLOTS, np.int64),
        "log": (policy.path_log_rows * LOG_WORDS, np.uint64),  # zeroed a launch
    }
    total = sum(length * np.dtype(dtype).itemsize for length, dtype in shapes.values())
    buffers: dict[str, Any] = {
        what: search_queue(resources, graph, f"path {what}", length, np.dtype(dtype), total)
        for what, (length, dtype) in shapes.items()
    }
    fill_bytes(buffers["queued"], 0xFF)
    fill_bytes(buffers["far_mark"], 0xFF)
    counts = pinned_queue(resources, "path counts staging", PATH_COUNT_SLOTS, np.int64)
    counts[:] = 0
    counts[0] = 1  # the source in the near queue of step 0
    counts[MEMBER_SLOT] = 1
    counts[LEAST_SLOT : LEAST_SLOT + 2] = np.float64(NO_PATH).view(np.int64)  # none yet
    stream = cupy.cuda.get_current_stream().ptr
    device = buffers["counts"]
    kind = cupy.cuda.runtime.memcpyHostToDevice
    cupy.cuda.runtime.memcpyAsync(device.data.ptr, counts.ctypes.data, counts.nbytes, kind, stream)
    stores = [
        (buffers["queued"], source if shared == 0 else 0, 0),
        (buffers["near0"], 0, source),
        (buffers["members"], 0, source),
    ]
    if tied:
        stores.append((words, source, source))  # distance 0, its own parent
    seeds = pinned_queue(resources, "path seeds", len(stores), np.int64)
    store_scalars(seeds, stores)
    buffers["log"] = buffers["log"][: policy.path_log_rows * LOG_WORDS].reshape(-1, LOG_WORDS)
    buffers["host"] = (counts, seeds)  # until the copies ran
    buffers.update(near_capacity=near, far_capacity=far_capacity, piece_capacity=pieces, ctl=None)
    rows = graph_args(graph) if rows is None else rows
    return DevicePathState(distances, buffers, None, blocks, grid, tied, words, False, shared, rows)


def block_kernel_bytes(
    policy: LaunchPolicy, graph: DistGraph, tied: bool, resources: CudaGraphResources
) -> int:
    """The dynamic shared memory of the one-block kernel (``delta_stepping_one_block``:
    four queue lengths, two near queues of ``path_block_queue`` vertices, two bitmasks of the
    vertices), its attribute raised to match; 0 where the search takes the grid kernel instead
    (settle passes, or more than a block's shared memory). Worked out once per graph and word
    form (memoized in ``resources``)."""
    if tied not in resources.path_block_bytes:
        resources.path_block_bytes[tied] = _block_kernel_bytes(policy, graph, tied)
    return resources.path_block_bytes[tied]


def _block_kernel_bytes(policy: LaunchPolicy, graph: DistGraph, tied: bool) -> int:
    if settle_passes(policy, graph):
        return 0
    ids = check_graph(graph)
    words = -(-graph.n // 32)
    nbytes = 4 * 4 + 2 * policy.path_block_queue * ids.itemsize + 2 * words * 4
    kernel = relax_kernel(policy, graph, search_kernel(tied, True, False))
    optin = cupy.cuda.runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin
    limit = cupy.cuda.runtime.deviceGetAttribute(optin, cupy.cuda.Device().id)
    if nbytes > limit - kernel.shared_size_bytes:
        return 0
    if kernel.max_dynamic_shared_size_bytes < nbytes:
        kernel.max_dynamic_shared_size_bytes = nbytes
    return nbytes


def search_kernel(tied: bool, one_block: bool, settle: bool) -> str:
    """The name of the delta-stepping kernel (``kernels/relax.cu``) of a search: one block, or
    the grid with settle passes or without (``delta_stepping_steps``: every step relaxes every
    edge)."""
    grid = "delta_stepping" if settle else "delta_stepping_steps"
    return ("delta_stepping_block" if one_block else grid) + ("_tied" if tied else "")


def run_buckets(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: DevicePathState,
    delta: float,
    limit: float,
) -> tuple[list[tuple[int, float, list[int]]], bool]:
    """One launch of the delta-stepping grid; (the buckets it logged as (bucket, lower bound,
    [steps, relaxations, vertices queued, 0, improved]), whether the search is done). The grid
    without settle passes cuts its buckets on bins of ``path_steps_bin_deltas`` deltas and
    steps in a window of ``path_steps_window`` deltas; the others on bins of one delta."""
    b = state.buffers
    settle = settle_passes(policy, graph)
    windowed = not (settle or state.shared_bytes)
    bin_width = delta * policy.path_steps_bin_deltas if windowed else delta
    window = delta * policy.path_steps_window if windowed else 0.0
    if b["ctl"] is None:
        ctl = np.zeros(CTL_FRESH + 1, dtype=np.int64)
        ctl[CTL_END] = np.float64(bin_width).view(np.int64)
        b["ctl"] = cupy.asarray(ctl)
    b["log"].fill(0)
    kernel = relax_kernel(policy, graph, search_kernel(state.tied, state.shared_bytes > 0, settle))
    threads = policy.path_block_threads if state.shared_bytes else policy.path_threads
    kernel(
        (state.blocks,),
        (threads,),
        (
            *state.rows,
            np.int64(graph.n),
            state.words,
            b["queued"],
            b["far_mark"],
            b["near0"],
            b["near1"],
            np.int64(b["near_capacity"]),
            b["far0"],
            b["far1"],
            b["far0_at"],
            b["far1_at"],
            np.int64(b["far_capacity"]),
            b["members"],
            np.int32(settle),
            b["piece_vertex"],
            b["piece_start"],
            np.int64(b["piece_capacity"]),
            np.int64(policy.path_piece_edges),
            b["counts"],
            b["ctl"],
            np.int64(policy.path_block_queue),
            b["log"],
            np.int32(policy.path_log_rows),
            np.float64(bin_width),
            np.float64(limit),
            np.int32(bucket_bins(policy, graph)),
            np.int32(policy.path_split_divisor),
            np.float64(window),
        ),
        shared_mem=state.shared_bytes,
    )
    first = b.get("logged", 0)  # the bucket this launch started on
    ctl = b["ctl"].get()
    rows = []
    for row in b["log"][: int(ctl[CTL_BUCKET]) - first + 1].get():
        if int(row[0]) <= b.get("logged", -1):
            continue  # the bucket a launch ended on, which the next one starts from
        lower = float(row[1:2].view(np.float64)[0])
        steps, relaxations, improved, queued = (int(x) for x in row[3:7])
        rows.append((int(row[0]), lower, [steps, relaxations, queued, 0, improved]))
    b["logged"] = int(ctl[CTL_BUCKET])
    done = bool(ctl[CTL_DONE])
    if done:
        b.clear()  # the queues and stamps go before the tree pass allocates its own
        state.overflowed = bool(ctl[CTL_OVERFLOW])
        if state.tied and not state.overflowed:
            untie(policy, state)
    return rows, done


def untie(policy: LaunchPolicy, state: DevicePathState) -> None:
    """The distances and predecessors of a finished search of tied words (``tied_unpack``)."""
    n = state.words.shape[0]
    state.distances = cupy.empty(n, dtype=PATH_DTYPE)
    state.preds = cupy.empty(n, dtype=PREDECESSOR_DTYPE)
    blocks = max(1, min(state.grid, -(-n // policy.path_threads)))
    get_kernel("relax", "tied_unpack", policy, 32)(
        (blocks,), (policy.path_threads,), (np.int64(n), state.words, state.distances, state.preds)
    )
    state.words = None


def settle_passes(policy: LaunchPolicy, graph: DistGraph) -> bool:
    """Whether a search of ``graph`` splits its buckets' relaxations into steps and a settle
    pass (``LaunchPolicy.path_settle_degree``), or on several ranks reads its rows by weight:
    the mean degree of the rows this rank holds."""
    return graph.num_local_edges >= policy.path_settle_degree * max(graph.nlocal, 1)


def bucket_bins(policy: LaunchPolicy, graph: DistGraph) -> int:
    """The widest bucket, in deltas, for ``graph``: narrow on dense graphs, wide on sparse
    ones (``LaunchPolicy.path_bucket_bins``)."""
    dense = graph.num_local_edges >= policy.path_dense_degree * max(graph.n, 1)
    return policy.path_dense_bucket_bins if dense else policy.path_bucket_bins


def settled_in_buckets(policy: LaunchPolicy, distances: Any, lowers: list[float]) -> list[int]:
    """Reached vertices whose final distance lies in each bucket (from its lower bound to the
    next bucket's): one launch of ``bucket_census`` and one read."""
    if not lowers:
        return []
    n = distances.shape[0]
    counts = cupy.zeros(len(lowers), dtype=np.uint64)
    bounds = cupy.asarray(np.asarray(lowers, dtype=PATH_DTYPE))
    blocks = max(1, min(1024, -(-n // policy.path_threads)))
    get_kernel("relax", "bucket_census", policy, 32)(
        (blocks,),
        (policy.path_threads,),
        (np.int64(n), distances, bounds, np.int32(len(lowers)), counts),
    )
    return [int(x) for x in counts.get()]


def shortest_path_tree(
    policy: LaunchPolicy, graph: DistGraph, grid: int, distances: Any, source: int
) -> Any:
    """Predecessors from the final ``distances`` (``distbfs.traversals.sssp``): pass 0, then
    plateau passes while vertices are left without a parent and a pass resolves some."""
    ids = check_graph(graph)
    bits = 8 * ids.itemsize
    n = graph.n
    parent = cupy.where(
        distances < NO_PATH, PREDECESSOR_DTYPE(NO_PARENT), PREDECESSOR_DTYPE(UNREACHED)
    )
    parent[source] = source
    pieces = piece_slots(policy, graph)
    piece_vertex = cupy.empty(pieces, dtype=ids)
    piece_start = cupy.empty(pieces, dtype=np.int64)
    piece_count = cupy.zeros(1, dtype=np.int64)
    csr = graph_args(graph)
    piece_args = (piece_vertex, piece_start, np.int64(pieces), np.int64(policy.path_piece_edges))
    block = (policy.path_threads,)
    rows = (max(1, min(grid, -(-n // policy.path_threads))),)
    pass_of = cupy.zeros(1, dtype=np.int32)  # read by the piece kernel only in plateau passes
    relax_kernel(policy, graph, "tight_parents")(
        rows, block, (*csr, np.int64(n), distances, parent, *piece_args, piece_count)
    )
    relax_kernel(policy, graph, "relax_pieces")(
        (grid,), block, (*csr, distances, parent, pass_of, np.int32(-1), *piece_args, piece_count)
    )
    if not int(cupy.count_nonzero(parent == NO_PARENT)):
        return parent
    pass_of = cupy.where((distances < NO_PATH) & (parent != NO_PARENT), np.int32(0), np.int32(-1))
    resolved = cupy.zeros(1, dtype=np.uint64)
    k = 1
    while True:
        piece_count.fill(0)
        resolved.fill(0)
        relax_kernel(policy, graph, "plateau_parents")(
            rows,
            block,
            (*csr, np.int64(n), distances, parent, pass_of, np.int32(k), *piece_args, piece_count),
        )
        relax_kernel(policy, graph, "relax_pieces")(
            (grid,),
            block,
            (*csr, distances, parent, pass_of, np.int32(k), *piece_args, piece_count),
        )
        get_kernel("relax", "plateau_commit", policy, bits)(
            rows, block, (np.int64(n), distances, parent, pass_of, np.int32(k), resolved)
        )
        if not int(resolved.get()[0]):
            break
        k += 1
    parent[parent == NO_PARENT] = UNREACHED
    return parent
