"""A search's start on the CUDA backend: its per-vertex arrays and small queues, the sources
labeled (Merrill et al. 2012, section 6.1: every rank holds the labels of its owned vertices
and a visited bitmask over all n).

The bin queue holds min(local edges, n) items (filtering claims a vertex once, so a level keeps
at most n; strips accumulate in it, so at most the rank's stored edges); the vertex frontier
nlocal. The edge queue is the graph's (``CudaGraphResources``), kept from one search to the
next.

One launch (``kernels/start.cu``) fills the labels, predecessors, visited mask and level counters
and seeds a single source: each fill or small copy from the host is a driver call of several
microseconds, and a road network's whole search takes under two milliseconds. Several sources
are marked after it from the host. Until the start's module is built (in the background, from
the first search on: ``StageKernels.built``), the host fills and marks: a first run with an
empty kernel cache does not wait for that module.

Invariants after ``start``: labels and predecessors are UNREACHED but every source's on its
owner (label 0, its own parent; the owned sources, and only they, form that rank's frontier);
every rank's visited mask holds every source; the first level's counters are zeroed.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE
from ...graph import DistGraph
from ...partition import local_id, owner
from ..base import SearchState
from .buffers import (
    MASK_DTYPE,
    MASK_WORD_BITS,
    UNREACHED_BYTE,
    CudaGraphResources,
    SearchQueues,
    allocate,
    check_graph,
    fill_bytes,
    grow_edge_queue,
    pinned_queue,
    search_queue,
)
from .counters import COUNTER_DTYPE
from .kernels import counter_slots, get_kernel
from .launch_policy import LaunchPolicy


def start(
    graph: DistGraph,
    sources: Any,
    predecessors: bool,
    resources: CudaGraphResources,
    policy: LaunchPolicy,
    queue_sizing: float,
    grids: dict[int, int],
) -> SearchState:
    """A new search of ``graph`` from ``sources`` (a vertex id or several, host ints;
    duplicates are one) (``resources``: ``prepare(graph)``; ``grids``: the backend's memo of
    ``persistent_grid``)."""
    vertex_dtype = check_graph(graph)
    if vertex_dtype != resources.vertex_dtype:
        raise ValueError(
            f"resources prepared for {resources.vertex_dtype} column ids, the graph has "
            f"{vertex_dtype}: pass prepare(graph) of this graph"
        )
    # Filtering claims each vertex's bit once: a level keeps at most n items, and at most
    # the rank's stored edges (strips accumulate in this queue).
    kept_capacity = max(1, min(graph.num_local_edges, graph.n))
    buffers = _allocate(graph, resources, vertex_dtype, kept_capacity, predecessors, policy)
    labels, preds = buffers["labels"], buffers.get("predecessors")
    visited_mask, frontier = buffers["visited bitmask"], buffers["vertex frontier"]
    counters = buffers["level counters"]
    sources = np.asarray(sources, dtype=np.int64).reshape(-1)
    grid = persistent_grid(policy, grids)
    kernel = resources.kernels.built("start")
    if kernel is not None and sources.shape[0] == 1:  # the start kernel seeds it
        source = int(sources[0])
        row = local_id(source, graph.size) if owner(source, graph.size) == graph.rank else -1
        frontier_size = int(row >= 0)
        _start_kernel(kernel, policy, grid, buffers, source, row)
    else:
        sources = np.unique(sources)
        mine = sources[owner(sources, graph.size) == graph.rank]
        frontier_size, row = int(mine.shape[0]), -1
        local = local_id(mine, graph.size)
        if kernel is not None:
            _start_kernel(kernel, policy, grid, buffers, -1, -1)
        else:  # until the start's module is built: fills from the host
            fill_bytes(labels, UNREACHED_BYTE)
            if preds is not None:
                fill_bytes(preds, UNREACHED_BYTE)
            fill_bytes(visited_mask, 0)
        _mark_sources(visited_mask, sources)  # every rank knows the sources are labeled
        _label_sources(labels, preds, frontier, mine, local)
        if frontier_size == 1:
            row = int(local[0])
    queues = SearchQueues(
        graph=graph,
        resources=resources,
        vertex_dtype=vertex_dtype,
        queue_sizing=queue_sizing,
        edge=resources.edge_queue,
        keep_parents=predecessors,
        kept_capacity=kept_capacity,
        bin_vertices=buffers["bin queue"],
        bin_parents=buffers.get("bin parent queue"),
        frontier=frontier,
        counters=counters,
        pinned=pinned_queue(resources, "pinned counters", counters.shape[0], COUNTER_DTYPE),
        kernels=resources.kernels,
        persistent_grid=grid,
        source_row=row,  # -1 unless this rank owns the one source
    )
    if frontier_size == 0 or row in resources.long_rows:  # m_f known: no source here, a hub
        edges = resources.long_rows[row][1] if frontier_size else 0
        queues.count_frontier_edges(edges, graph, frontier_size)
    grow_edge_queue(queues, 1)
    queues.begin_level(edge_bound=0, cleared=kernel is not None)
    return SearchState(
        labels,
        preds,
        visited_mask,
        frontier[:frontier_size],
        frontier_size,
        {"cuda": queues},
        resources,
    )


def _start_kernel(
    kernel: Any,
    policy: LaunchPolicy,
    grid: int,
    buffers: dict[str, cupy.ndarray],
    source: int,
    row: int,
) -> None:
    """One launch of ``kernel``, ``search_start`` (``kernels/start.cu``): labels and predecessors
    UNREACHED, the visited mask and the level counters cleared, and ``source`` (-1: none)
    seeded: its bit, and where ``row`` >= 0 (this rank owns it) its label, parent and the
    frontier's first slot."""
    labels, preds = buffers["labels"], buffers.get("predecessors")
    mask, counters = buffers["visited bitmask"], buffers["level counters"]
    longest = max(labels.shape[0], mask.shape[0], counters.shape[0])
    blocks = max(1, min(grid, -(-longest // policy.block_threads)))
    args = (labels, preds, np.int64(labels.shape[0]), mask, np.int64(mask.shape[0]))
    args += (counters, np.int64(counters.shape[0]), buffers["vertex frontier"])
    args += (np.int64(source), np.int64(row))
    kernel((blocks,), (policy.block_threads,), args)


def unlabeled(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, labels: Any
) -> tuple[int, int]:
    """(owned vertices ``labels`` leaves UNREACHED, their out-edges) of this rank: at a
    search's end, what Graph500's statistics take (``distbfs.stats.search_sums``), in one pass
    and one read, with no temporaries beside the graph, over as many blocks as are resident
    (the pass waits on its loads)."""
    kernel = get_kernel("start", "unexplored_kernel", policy, 8 * check_graph(graph).itemsize)
    labels = cupy.ascontiguousarray(labels, dtype=DISTANCE_DTYPE)
    tally = cupy.zeros(2, dtype=COUNTER_DTYPE)
    grid = resident_grid(policy, grids, kernel)
    return count_unlabeled(kernel, policy, grid, graph, labels, tally)


def count_unlabeled(
    kernel: Any, policy: LaunchPolicy, grid: int, graph: DistGraph, labels: Any, tally: Any
) -> tuple[int, int]:
    """(owned vertices ``labels`` leaves UNREACHED, their out-edges): ``kernel``
    (``unexplored_kernel`` of ``kernels/start.cu``) summed into ``tally`` (two zeroed int64s)
    over at most ``grid`` blocks, one read."""
    nlocal = graph.nlocal
    if nlocal > 0:
        blocks = max(1, min(grid, -(-nlocal // policy.block_threads)))
        args = (labels, graph.row_offsets, np.int64(nlocal), tally)
        kernel((blocks,), (policy.block_threads,), args)
    count, edges = tally.get().tolist()
    return int(count), int(edges)


def _mark_sources(visited_mask: cupy.ndarray, sources: np.ndarray) -> None:
    """Set the bits of ``sources`` (distinct global ids, several) in the zeroed
    ``visited_mask``: each touched word's bits ORed on the host first."""
    words, which = np.unique(sources // MASK_WORD_BITS, return_inverse=True)
    bits = np.zeros(words.shape[0], dtype=MASK_DTYPE)
    np.bitwise_or.at(bits, which, np.left_shift(1, sources % MASK_WORD_BITS).astype(MASK_DTYPE))
    visited_mask[cupy.asarray(words)] = cupy.asarray(bits)


def _label_sources(
    labels: cupy.ndarray,
    preds: cupy.ndarray | None,
    frontier: cupy.ndarray,
    mine: np.ndarray,
    local: np.ndarray,
) -> None:
    """The owned sources ``mine`` (global ids; ``local``: their local ids) of a search from
    several: label 0, their own parent, the frontier."""
    if mine.shape[0] > 0:
        rows = cupy.asarray(local)
        labels[rows] = 0
        if preds is not None:
            preds[rows] = cupy.asarray(mine)
        frontier[: rows.shape[0]] = rows.astype(frontier.dtype)


def _allocate(
    graph: DistGraph,
    resources: CudaGraphResources,
    vertex_dtype: np.dtype,
    kept_capacity: int,
    predecessors: bool,
    policy: LaunchPolicy,
) -> dict[str, cupy.ndarray]:
    """The search's per-vertex arrays (new) and small queues (``search_queue``: the graph's
    kept ones, where it keeps them), by name (uninitialized)."""
    nlocal, n = graph.nlocal, graph.n
    arrays: dict[str, tuple[int, np.dtype]] = {
        "labels": (nlocal, np.dtype(DISTANCE_DTYPE)),
        "visited bitmask": (-(-n // MASK_WORD_BITS), MASK_DTYPE),
    }
    queues: dict[str, tuple[int, np.dtype]] = {
        "vertex frontier": (max(1, nlocal), vertex_dtype),
        "bin queue": (kept_capacity, vertex_dtype),  # two meeting bins: grown at first use
        "level counters": (counter_slots(policy), COUNTER_DTYPE),
    }
    if predecessors:
        arrays["predecessors"] = (nlocal, np.dtype(PREDECESSOR_DTYPE))
        queues["bin parent queue"] = queues["bin queue"]
    sizes = [*arrays.values(), *queues.values()]
    total = sum(length * dtype.itemsize for length, dtype in sizes)
    made = {what: allocate(graph, what, *shape, total) for what, shape in arrays.items()}
    for what, (length, dtype) in queues.items():
        made[what] = search_queue(resources, graph, what, length, dtype, total)
    return made


def persistent_grid(policy: LaunchPolicy, memo: dict[int, int]) -> int:
    """Blocks that fill the current device: ``blocks_per_sm`` per multiprocessor (``memo``:
    by device id)."""
    device = cupy.cuda.Device().id
    if device not in memo:
        processors = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
        memo[device] = processors * policy.blocks_per_sm
    return memo[device]


ResidentGrids = dict[tuple[int, int, int], int]
"""A memo of ``resident_grid``: blocks by (device, kernel, most a multiprocessor)."""


def resident_grid(
    policy: LaunchPolicy,
    memo: ResidentGrids,
    kernel: Any,
    threads: int | None = None,
    most_per_sm: int = 0,
) -> int:
    """Blocks of ``threads`` (default ``block_threads``) of ``kernel`` that are resident on the
    current device at once (the occupancy calculator: registers and shared memory), at most
    ``most_per_sm`` a multiprocessor where given, memoized in ``memo`` by (device, kernel,
    most_per_sm): latency-bound kernels (bottom-up's dependent loads) run best with every slot
    filled, and a cooperative grid (the delta-stepping kernel) needs all its blocks
    resident."""
    key = (cupy.cuda.Device().id, kernel.kernel.ptr, most_per_sm)
    if key not in memo:
        device = cupy.cuda.Device()
        processors = device.attributes["MultiProcessorCount"]
        per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, policy.block_threads if threads is None else threads, 0
        )
        if most_per_sm:
            per_sm = min(per_sm, most_per_sm)
        memo[key] = processors * max(1, per_sm)
    return memo[key]
