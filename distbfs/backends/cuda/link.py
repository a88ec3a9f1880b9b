"""Afforest's Link and Compress on GPUs (``kernels/link.cu``): a label array over every vertex
links a set of edges in ONE pass of a lock-free union-find (each hook one ``atomicCAS`` on a
root's label) and compresses every tree to a star in one more. One rank holds the graph whole;
several ranks each hold a replica of the labels and link the rows they own into it, marking the
roots they hook, and a merge (``distbfs.traversals.cc.merge``) makes the replicas equal again
(the striped rounds of ``distbfs.backends.arrays.hook``, where no rank can CAS another's
labels, are the fallback).

Compressed rows (``DeviceColumns``) are decoded inside the ``_varint`` kernels.

The edge sets are Afforest's (``distbfs.traversals.cc``): neighbour r of every owned vertex (its
out-row followed, on a directed graph, by its in-row: the same links as
``distbfs.backends.arrays.components.sample_links``), or every neighbour of the owned vertices
whose label is not the largest intermediate component's. Same labels as the striped rounds:
after a pass (and, on several ranks, a merge) and its compress, every vertex's label is the
smallest vertex of the component its linked edges form.

Merging replicas. Every replica starts a phase equal to the others and changes only by hooks:
a hooked root h takes a parent in its new tree. So the pairs (h, label of h) of every rank's
hooked roots (``hooked_pairs``), linked into every other replica (``link_pairs``), give each
replica the union of all the ranks' links; after the compress every replica holds the smallest
vertex of each component: the same labels on every rank.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...graph import DistGraph
from ..arrays.components import ComponentState, Reached
from ..base import frontier_bitmap_bytes
from .buffers import CudaGraphResources, check_graph
from .compressed import column_args, kernel_name
from .kernels import get_kernel
from .launch_policy import LaunchPolicy
from .search import ResidentGrids, persistent_grid, resident_grid

LARGEST_ON_DEVICE = 4096
"""Samples up to which ``most_frequent`` runs (its one block holds their labels in shared
memory, ``SAMPLE_SLOTS`` of ``kernels/link.cu``)."""


def link_in_place(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    in_graph: DistGraph,
    state: ComponentState,
    neighbour: int | None,
    skip: Any,
    compress: bool = True,
    rows: Any = None,
) -> Any:
    """Link neighbour ``neighbour`` of every owned vertex (None: every neighbour of the owned
    vertices whose label is not ``skip``: -1 for none, or a 0-d device array as
    ``most_frequent`` leaves it; or, where ``rows`` lists owned vertices by global id, every
    neighbour of those) into ``state.labels`` (every vertex's), marking the roots hooked in
    ``state.scratch["hooked"]`` where there is one, then compress (unless ``compress`` is
    False: a merge follows, whose compress serves both; the listed vertices alone where
    ``rows`` is given: ``compress_labels``). Returns, on the device and unread, (links read,
    links whose ends had different labels when read, roots hooked): a run reads them once, at
    its end.

    ``grids``: the backend's memos of ``search.persistent_grid`` and ``search.resident_grid``.
    A sampled pass runs on the persistent grid: nearly every link hooks, many threads climb to
    and CAS the same hub roots at once, and more of them in flight only wait longer (kron26 on
    one H100: 4.7 + 2.0 ms for link and compress at 4 blocks a multiprocessor, 5.5 + 2.6 ms
    with every slot filled). The finish pass mostly reads labels that already agree and runs
    on the resident grid (0.65 + 0.57 ms against 0.87 + 0.71)."""
    n = graph.n
    if state.labels.shape[0] != n:
        raise ValueError(f"linking in place needs the labels of all {n} vertices")
    bits = 8 * check_graph(graph).itemsize
    directed = in_graph is not graph
    counts = cupy.zeros(3, dtype=np.uint64)
    if graph.compressed != in_graph.compressed:
        raise ValueError("linking in place needs out- and in-rows both plain or both compressed")
    in_columns = (
        column_args(in_graph)
        if in_graph.compressed
        else (in_graph.column_indices.astype(graph.column_indices.dtype, copy=False),)
    )
    rows_args = (
        graph.row_offsets,
        *column_args(graph),
        in_graph.row_offsets,
        *in_columns,
        np.int32(directed),
        np.int64(graph.nlocal),
        np.int32(graph.size),
        np.int32(graph.rank),
    )
    if n == 0:
        return counts
    threads = graph.nlocal  # the kernel's grid-stride loop: over every owned row, or the listed
    if rows is not None:
        kernel = get_kernel("link", kernel_name("link_listed", graph), policy, bits)
        blocks = resident_grid(policy, grids[1], kernel)
        threads = int(rows.shape[0])
        arguments: tuple[Any, ...] = (rows, np.int64(threads))
    elif neighbour is None:
        if not isinstance(skip, cupy.ndarray):
            skip = cupy.full((), skip, dtype=np.int64)
        kernel = get_kernel("link", kernel_name("link_rows", graph), policy, bits)
        blocks = resident_grid(policy, grids[1], kernel)
        arguments = (skip,)
    else:
        kernel = get_kernel("link", kernel_name("link_neighbour", graph), policy, bits)
        blocks = persistent_grid(policy, grids[0])
        arguments = (np.int64(neighbour),)
    hooked = state.scratch.get("hooked")
    marks = NO_MARKS if hooked is None else hooked
    if threads:
        _launch(
            policy, kernel, blocks, threads, (*rows_args, *arguments, state.labels, marks, counts)
        )
    if compress:
        compress_labels(policy, grids, state, bits, sampled=neighbour is not None, rows=rows)
    return counts


MARKS_PER_THREAD = 16
"""Marks a thread of ``hooked_pairs`` reads (``kMarksPerThread`` of ``kernels/link.cu``)."""
NO_MARKS = np.uintp(0)
"""The null pointer a link kernel takes for ``hooked`` where no root is marked (one rank)."""


def compress_labels(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    state: ComponentState,
    bits: int,
    sampled: bool,
    rows: Any = None,
) -> None:
    """Point every label at its tree's root; on the persistent grid after a ``sampled`` pass
    (its trees are deep and hub roots contended), else on the resident grid. ``rows``: global
    ids, to point only those vertices at their roots (after a search that found a whole
    component every other vertex is a root or points at one)."""
    if rows is not None:
        count = int(rows.shape[0])
        if count:
            kernel = get_kernel("link", "compress_listed", policy, bits)
            blocks = resident_grid(policy, grids[1], kernel)
            _launch(policy, kernel, blocks, count, (rows, np.int64(count), state.labels))
        return
    kernel = get_kernel("link", "compress", policy, bits)
    n = state.labels.shape[0]
    blocks = (
        persistent_grid(policy, grids[0]) if sampled else resident_grid(policy, grids[1], kernel)
    )
    _launch(policy, kernel, blocks, n, (np.int64(n), state.labels))


def hooked_pairs(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    state: ComponentState,
) -> Any:
    """The roots this replica hooked since the last merge with their labels, interleaved
    (vertex, label, vertex, label, ...) in the width of the graph's vertex ids, in no
    particular order; the marks are cleared."""
    hooked, labels = state.scratch["hooked"], state.labels
    count = int(cupy.count_nonzero(hooked))
    dtype = check_graph(graph)
    pairs = cupy.empty(2 * count, dtype=dtype)
    if count:
        kernel = get_kernel("link", "hooked_pairs", policy, 8 * dtype.itemsize)
        taken = cupy.zeros(1, dtype=np.uint64)
        blocks = resident_grid(policy, grids[1], kernel)
        n = labels.shape[0]
        spans = -(-n // MARKS_PER_THREAD)  # a thread reads MARKS_PER_THREAD marks
        _launch(policy, kernel, blocks, spans, (np.int64(n), hooked, labels, pairs, taken))
    return pairs


def listed_pairs(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    rows: Any,
    capacity: int,
    every: bool = False,
) -> Any:
    """The edges (u, v), v >= u (every edge where ``every``: a search stopped at its tail), of
    the owned vertices ``rows`` (global ids: a whole search's rows left), interleaved (u, v, u,
    v, ...) in the width of the graph's ids, in no particular order (``listed_pairs`` of
    ``kernels/link.cu``), then (0, 0) pairs to ``capacity`` pairs (at least the rows'
    out-edges, ``Reached.edges``; every rank's largest): every rank's, all gathered with no
    counts, are the search's remainder whole, each of its edges once (twice between rows left
    where ``every``) and each of its vertices in some pair, and the padding links nothing
    (``link_pairs``). One launch and no read: the finish of a whole search waits for no host."""
    dtype = check_graph(graph)
    count = int(rows.shape[0])
    pairs = cupy.zeros(2 * capacity, dtype=dtype)
    if count:
        taken = cupy.zeros(1, dtype=np.uint64)
        kernel = get_kernel("link", kernel_name("listed_pairs", graph), policy, 8 * dtype.itemsize)
        stripe = (np.int64(graph.nlocal), np.int32(graph.size), np.int32(graph.rank))
        blocks = resident_grid(policy, grids[1], kernel)
        args = (graph.row_offsets, *column_args(graph), *stripe, rows, np.int64(count))
        args += (np.int32(every), pairs, np.uint64(capacity), taken)
        _launch(policy, kernel, blocks, count, args)
    return pairs


def remainder_labels(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    listed: Any,
    reached: Any = None,
    label: int = -1,
) -> Any:
    """A label array of every vertex in which only the vertices ``listed`` (global ids, repeats
    allowed: a whole search's remainder as ``listed_pairs`` gives it, all-gathered) hold their
    own ids, the rest unset: one launch (``own_labels`` of ``kernels/link.cu``), where an
    indexed assignment costs CuPy's indexing on the host and a widening copy. Where ``reached``
    (a uint8 flag for each listed vertex: ``reached_ends``, OR-reduced over the ranks) is
    given, the flagged vertices hold ``label`` instead, and so does ``label`` itself (a search
    stopped at its tail)."""
    dtype = check_graph(graph)
    labels = cupy.empty(graph.n, dtype=np.int64)
    count = int(listed.shape[0])
    if count:
        kernel = get_kernel("link", "own_labels", policy, 8 * dtype.itemsize)
        blocks = resident_grid(policy, grids[1], kernel)
        flags = NO_ROWS if reached is None else reached
        args = (listed.astype(dtype, copy=False), np.int64(count), flags, np.int64(label))
        _launch(policy, kernel, blocks, count, (*args, labels))
    return labels


def reached_ends(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    listed: Any,
    bits: Any,
) -> Any:
    """A uint8 flag for each vertex ``listed`` (global ids: a remainder's all-gathered pairs):
    1 where this rank owns it and ``bits`` (this rank's ``reached_bits``) has it, else 0; one
    launch (``reached_ends`` of ``kernels/link.cu``). OR-reduced over the ranks (an all-reduce
    of max), the flags say which listed vertices a search reached, for ``remainder_labels``,
    where every rank's bits would move n / 8 bytes."""
    dtype = check_graph(graph)
    count = int(listed.shape[0])
    flags = cupy.zeros(count, dtype=np.uint8)
    if count:
        words = cupy.ascontiguousarray(bits).reshape(-1).view(np.uint32)
        kernel = get_kernel("link", "reached_ends", policy, 8 * dtype.itemsize)
        blocks = resident_grid(policy, grids[1], kernel)
        args = (listed.astype(dtype, copy=False), np.int64(count), words)
        _launch(
            policy,
            kernel,
            blocks,
            count,
            (*args, np.int32(graph.size), np.int32(graph.rank), flags),
        )
    return flags


def link_pairs(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    state: ComponentState,
    segments: list[Any],
    rows: Any = None,
) -> Any:
    """Link every pair of each of ``segments`` (interleaved: the other ranks' (vertex, label)
    as ``hooked_pairs`` gives them, or a whole search's remainder as ``listed_pairs`` gives it)
    into the labels, then compress (the vertices ``rows``, global ids, alone where given:
    ``compress_labels``). Returns the counts as ``link_in_place``."""
    bits = 8 * check_graph(graph).itemsize
    counts = cupy.zeros(3, dtype=np.uint64)
    kernel = get_kernel("link", "link_pairs", policy, bits)
    for pairs in segments:
        count = pairs.shape[0] // 2
        if count:
            blocks = resident_grid(policy, grids[1], kernel)
            _launch(policy, kernel, blocks, count, (pairs, np.int64(count), state.labels, counts))
    compress_labels(policy, grids, state, bits, sampled=False, rows=rows)
    return counts


def most_frequent(policy: LaunchPolicy, labels: Any, samples: Any, bits: int) -> Any:
    """The label most of ``samples`` (device int64 vertex ids, at most LARGEST_ON_DEVICE)
    carry, the smallest among equals, -1 without samples:
    ``distbfs.engine.components.most_frequent`` on the device, left there (a 0-d int64 array)
    for ``link_in_place`` to read."""
    if samples.shape[0] > LARGEST_ON_DEVICE:
        raise ValueError(f"{samples.shape[0]} samples: at most {LARGEST_ON_DEVICE} on the device")
    out = cupy.empty((), dtype=np.int64)
    kernel = get_kernel("link", "most_frequent_label", policy, bits)
    kernel((1,), (policy.block_threads,), (samples, np.int32(samples.shape[0]), labels, out))
    return out


def reached_bits(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    levels: Any,
    resources: CudaGraphResources | None = None,
) -> Reached:
    """``distbfs.backends.arrays.components.reached_bits`` in one pass (``reached_bits`` of
    ``kernels/link.cu``: a warp's ballot packs 32 vertices) on the resident grid, one read of
    its counts. Where ``resources`` is given the same pass lists the rows left to link, in the
    width of the graph's ids, and counts their out-edges: the owned vertices whose bit stays
    clear and that have out-edges, from a bitmap of the rows with edges worked out once per
    graph (``resources.edge_bits``)."""
    dtype = check_graph(graph)
    count = int(levels.shape[0])
    if not levels.flags.c_contiguous:
        levels = cupy.ascontiguousarray(levels)
    bits = cupy.zeros(frontier_bitmap_bytes(graph.n, graph.size) // 4, dtype=np.uint32)
    summary = cupy.zeros(4, dtype=np.uint64)  # reached, ~(first reached), rows listed, edges
    edges, offsets, rows = NO_ROWS, NO_ROWS, None
    if resources is not None:
        edges, rows = _edge_bits(graph, resources), cupy.empty(graph.nlocal, dtype=dtype)
        offsets = graph.row_offsets
    if count:
        kernel = get_kernel("link", "reached_bits", policy, 8 * dtype.itemsize)
        blocks = resident_grid(policy, grids[1], kernel)
        args = (levels, np.int64(count), bits, edges, offsets)
        args += (np.int32(graph.size), np.int32(graph.rank), NO_ROWS if rows is None else rows)
        words = -(-count // 32)  # a block's trip takes a word a thread
        _launch(policy, kernel, blocks, words, (*args, summary))
    reached, first, listed, listed_edges = (int(x) for x in summary.get())
    smallest = (~first & FIRST_MASK) * graph.size + graph.rank if reached else graph.n
    if rows is not None:
        rows = rows[:listed]  # a view: a copy would cost a launch and an allocation
    return Reached(bits.view(np.uint8), reached, smallest, rows, listed_edges)


NO_ROWS = np.uintp(0)
"""The null pointer ``reached_bits`` takes for the edge bitmap and the rows where none are
listed, and ``own_labels`` for flags where none are given."""
FIRST_MASK = 2**64 - 1
"""The kernel keeps the first reached index complemented (an atomicMax over zeroed counts)."""


def _edge_bits(graph: DistGraph, resources: CudaGraphResources) -> Any:
    """The graph's bitmap of the owned rows with out-edges (the frontier bitmap layout, uint32
    words), worked out on first use and kept in ``resources``."""
    if resources.edge_bits is None:
        offsets = graph.row_offsets
        packed = cupy.packbits(offsets[1:] != offsets[:-1], bitorder="little")
        edge_bits = cupy.zeros(frontier_bitmap_bytes(graph.n, graph.size), dtype=np.uint8)
        edge_bits[: packed.shape[0]] = packed
        resources.edge_bits = edge_bits.view(np.uint32)
    return resources.edge_bits


def seed_labels(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    state: ComponentState,
    bits: Any,
    label: int,
) -> None:
    """``distbfs.backends.arrays.components.seed_labels`` in one pass over the labels
    (``seed_labels`` of ``kernels/link.cu``), every label written: the bits set ``label``, the
    others their vertex's id."""
    rows = bits.shape[0] if bits.ndim == 2 else 1
    words = cupy.ascontiguousarray(bits).reshape(rows, -1).view(np.uint32)
    count = int(state.labels.shape[0])
    if count:
        kernel = get_kernel("link", "seed_labels", policy, 8 * check_graph(graph).itemsize)
        args = (words, np.int64(words.shape[1]), np.int32(rows), np.int32(graph.size))
        args += (np.int32(graph.rank), np.int64(count), np.int64(label), state.labels)
        _launch(policy, kernel, resident_grid(policy, grids[1], kernel), count, args)


def take_labels(
    policy: LaunchPolicy,
    grids: tuple[dict[int, int], ResidentGrids],
    graph: DistGraph,
    state: ComponentState,
    source: ComponentState,
    rows: Any,
    replica: bool,
) -> None:
    """``distbfs.backends.arrays.components.take_labels`` in one launch (``take_labels`` of
    ``kernels/link.cu``) instead of an index division, a gather and a scatter."""
    count = int(rows.shape[0])
    if count:
        dtype = check_graph(graph)
        kernel = get_kernel("link", "take_labels", policy, 8 * dtype.itemsize)
        args = (cupy.asarray(rows).astype(dtype, copy=False), np.int64(count))
        args += (np.int32(graph.size), np.int32(replica), source.labels, state.labels)
        _launch(policy, kernel, resident_grid(policy, grids[1], kernel), count, args)


def _launch(policy: LaunchPolicy, kernel: Any, blocks: int, n: int, args: tuple[Any, ...]) -> None:
    """``kernel`` over ``n`` vertices, grid-stride over at most ``blocks`` blocks."""
    grid = max(1, min(blocks, -(-n // policy.block_threads)))
    kernel((grid,), (policy.block_threads,), args)
