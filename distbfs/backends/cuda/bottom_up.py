"""Direction-optimizing levels on the CUDA backend (Beamer, Asanović & Patterson, SC 2012;
``kernels/bottom_up.cu``): the frontier as this rank's packed bitmap (``frontier_bitmap``), or
every rank's from a row they all hold (``row_frontier``: a broadcast level's), the
all-gathered bitmaps OR-ed into the visited mask (``mark_visited``), the bottom-up scan (a
thread per unlabeled owned vertex tests its in-neighbours against the gathered bitmap; the
warp's ballot is a word of the next frontier's bitmap; a warp reserves the queue slots of all
its words' found vertices with one atomic), and the heuristic's inputs m_f, n_u and m_u
(``frontier_edges``, ``unexplored``), which contract, bottom_up and the fused kernel sum while
they label.

Bitmap layout: ``distbfs.backends.base`` (bit k of rank r's words is its local vertex k).

On several ranks a bottom-up level does not OR the gathered frontier into the visited mask (the
numpy backend does), so a top-down level after bottom-up ones sends other ranks' labeled
vertices to their owners again, who drop them. Marking costs more than those items: at kron27 on
two H200s the searches' medians lost 4-10% with a mark that took about 0.2 ms a level
(benchmarks/history, 2026-11-27-steps-kernel), and 3% with one pass a bit field a rank's row
(``mark_visited_kernel``): it saved a tenth of a search's remote items (3.68 -> 3.33 M) and
cost a launch a level (benchmarks/history, 2026-11-27-level-walls).

Invariants: a bottom-up level labels each found vertex once, with the first in-neighbour in
row order that is in the frontier as its parent, and makes the found vertices the next frontier
queue directly; it costs one launch and one read. ``frontier_edges`` and ``unexplored`` are
free while the frontier generation they were counted at is current.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...graph import DistGraph
from ..base import SearchState, frontier_bitmap_bytes
from .buffers import (
    MASK_DTYPE,
    MASK_WORD_BITS,
    as_vertices,
    check_graph,
    ensure_bitmaps,
    queues_of,
    zeroed_tally,
)
from .compressed import column_args
from .kernels import Counter
from .launch_policy import LaunchPolicy
from .search import ResidentGrids, count_unlabeled, resident_grid


def frontier_edges(policy: LaunchPolicy, graph: DistGraph, state: SearchState) -> int:
    """m_f on this rank: out-edges of the vertex frontier. Free after ``contract``,
    ``bottom_up`` and fused levels (they sum it while labeling); one read for a single source
    (its row's bounds); otherwise (several sources, after replicated levels) one kernel and one
    read."""
    queues = queues_of(state)
    generation, edges = queues.frontier_edges
    if generation == queues.generation:
        return edges
    size = int(state.frontier_size)
    edges = 0
    if size == 1 and queues.generation == 0:  # one source: its row's bounds, no kernel
        bounds = graph.row_offsets[queues.source_row : queues.source_row + 2].get()
        edges = int(bounds[1] - bounds[0])
    elif size > 0:
        tally = zeroed_tally(queues)
        queues.kernels["frontier_degrees"](
            (queues.grid(size, policy.block_threads),),
            (policy.block_threads,),
            (
                as_vertices(state.vertex_frontier, queues),
                np.int64(size),
                graph.row_offsets,
                tally,
            ),
        )
        edges = int(tally[0].get())
    queues.count_frontier_edges(edges, graph, size)
    return edges


def frontier_bitmap(policy: LaunchPolicy, graph: DistGraph, state: SearchState) -> Any:
    """This rank's frontier as a packed bitmap (uint8 view, ``frontier_bitmap_bytes``), on
    the device; after a bottom-up level the kernel already wrote it."""
    queues = queues_of(state)
    bitmaps = ensure_bitmaps(queues)
    current = bitmaps[0]
    if queues.bitmap_generation != queues.generation:
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(current.data.ptr, 0, current.nbytes, stream.ptr)
        size = int(state.frontier_size)
        if size > 0:
            queues.kernels["frontier_bitmap"](
                (queues.grid(size, policy.block_threads),),
                (policy.block_threads,),
                (as_vertices(state.vertex_frontier, queues), np.int64(size), current),
            )
        queues.bitmap_generation = queues.generation
    return current.view(np.uint8)


def row_frontier(
    policy: LaunchPolicy, graph: DistGraph, state: SearchState, row: Any, source: int
) -> Any:
    """The gathered frontier bitmaps (``(size, bytes)`` uint8, on the device) of every vertex
    of ``row`` (global ids, device) but ``source``: the frontier after a level from a row
    every rank holds. One zeroing and one launch, no read."""
    queues = queues_of(state)
    words = frontier_bitmap_bytes(graph.n, graph.size) // MASK_DTYPE.itemsize
    gathered = cupy.zeros(graph.size * words, dtype=MASK_DTYPE)
    length = int(row.shape[0])
    if length:
        queues.kernels["row_frontier"](
            (queues.grid(length, policy.block_threads),),
            (policy.block_threads,),
            (
                as_vertices(row, queues),
                np.int64(length),
                np.int64(source),
                np.int32(graph.size),
                np.int64(words),
                gathered,
            ),
        )
    return gathered.view(np.uint8).reshape(graph.size, -1)


def mark_visited(policy: LaunchPolicy, graph: DistGraph, state: SearchState, frontier: Any) -> None:
    """Set the visited-mask bits of every vertex of the gathered ``frontier`` (``(size,
    bytes)`` uint8 bitmaps, on the device). One launch, no read."""
    queues = queues_of(state)
    gathered = gathered_words(graph, frontier)
    mask_words = int(state.visited_mask.shape[0])
    threads = policy.block_threads
    queues.kernels["mark_visited"](
        (queues.grid(mask_words, threads),),
        (threads,),
        (
            gathered,
            np.int64(gathered.shape[0] // graph.size),
            np.int32(graph.size),
            np.int64(graph.n),
            state.visited_mask,
            np.int64(mask_words),
        ),
    )


def bottom_up(
    policy: LaunchPolicy,
    resident: ResidentGrids,
    graph: DistGraph,
    in_graph: DistGraph,
    state: SearchState,
    frontier: Any,
    level: int,
) -> int:
    """Every unlabeled owned vertex looks for a parent among its in-neighbours in the
    gathered ``frontier`` (``(size, bytes)`` uint8, on the device); returns the slots
    tested. One launch, one read (``resident``: the backend's memo of ``resident_grid``)."""
    queues = queues_of(state)
    if check_graph(in_graph) != queues.vertex_dtype:
        raise TypeError("the in-neighbour graph must have the graph's column dtype")
    bitmaps = ensure_bitmaps(queues)
    words = int(bitmaps[0].shape[0])
    gathered = gathered_words(graph, frontier)
    counts = queues.begin_level(edge_bound=0)
    kernel = queues.kernels["bottom_up"]
    words_per_block = MASK_WORD_BITS * (policy.block_threads // MASK_WORD_BITS)
    blocks = min(-(-words // words_per_block), resident_grid(policy, resident, kernel))
    current = int(queues.candidates_generation == queues.generation)
    kernel(
        (max(1, blocks),),  # a warp takes 32 words at a time; as many as fit at once
        (policy.block_threads,),
        (
            in_graph.row_offsets,
            *column_args(in_graph),
            graph.row_offsets,
            np.int64(graph.nlocal),
            np.int32(graph.rank),
            np.int32(graph.size),
            gathered,
            np.int64(words),
            np.int32(level),
            state.labels,
            state.preds,
            state.visited_mask,
            queues.candidates,
            np.int32(current),
            bitmaps[1],
            queues.frontier,
            np.int64(queues.frontier.shape[0]),
            queues.counters,
        ),
    )
    host = counts.read(int(Counter.BINS))
    bitmaps.reverse()  # the next frontier's bitmap becomes the current one
    size = int(host[Counter.FRONTIER])
    state.frontier_size = size
    state.vertex_frontier = queues.frontier[:size]
    edges = int(host[Counter.FRONTIER_EDGES])
    queues.advance(size, edges)
    queues.bitmap_generation = queues.candidates_generation = queues.generation
    queues.frontier_edges = (queues.generation, edges)
    return int(host[Counter.INSPECTED])


def unexplored(policy: LaunchPolicy, graph: DistGraph, state: SearchState) -> tuple[int, int]:
    """(unlabeled owned vertices, their out-edges): n_u and m_u of this rank. Carried from
    level to level once ``frontier_edges`` was asked for the source (every stage counts
    what it labels and their edges); otherwise recounted from the labels: one kernel, one
    read."""
    queues = queues_of(state)
    known = queues.unexplored
    if known is not None and known[0] == queues.generation:
        return known[1], known[2]
    kernel, grid = queues.kernels["unexplored"], queues.persistent_grid
    return count_unlabeled(kernel, policy, grid, graph, state.labels, zeroed_tally(queues))


def gathered_words(graph: DistGraph, frontier: Any) -> Any:
    """The all-gathered frontier bitmaps as one run of uint32 words, checked."""
    gathered = cupy.ascontiguousarray(frontier).view(MASK_DTYPE).reshape(-1)
    words = frontier_bitmap_bytes(graph.n, graph.size) // MASK_DTYPE.itemsize
    if gathered.shape[0] != graph.size * words:
        raise ValueError(
            f"gathered frontier of {gathered.shape[0]} words, expected {graph.size} x {words}"
        )
    return gathered
