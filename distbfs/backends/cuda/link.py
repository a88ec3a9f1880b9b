"""Afforest's Link and Compress on one GPU (``kernels/link.cu``): a graph held whole by one rank
links a set of edges in ONE pass of a lock-free union-find (each hook one ``atomicCAS`` on a
root's label) and compresses every tree to a star in one more; the striped rounds of
``distbfs.backends.arrays.hook`` (ask, cross, hook, jump, each with an all-reduce) are what
several ranks need, since no rank can CAS another's labels.

Compressed rows (``DeviceColumns``) are decoded inside the ``_varint`` kernels.

The edge sets are Afforest's (``distbfs.traversals.cc``): neighbour r of every vertex (its out-row
followed, on a directed graph, by its in-row: the same links as
``distbfs.backends.arrays.components.sample_links``), or every neighbour of the vertices whose
label is not the largest intermediate component's. Same labels as the striped rounds: after a
pass and its compress, every vertex's label is the smallest vertex of the component its linked
edges form.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...graph import DistGraph
from ..arrays.components import ComponentState
from .buffers import check_graph
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
) -> Any:
    """Link neighbour ``neighbour`` of every vertex (None: every neighbour of the vertices whose
    label is not ``skip``: -1 for none, or a 0-d device array as ``most_frequent`` leaves it),
    then compress. Returns, on the device and unread, (links read, links whose ends had
    different labels when read, roots hooked): a run reads them once, at its end.

    ``grids``: the backend's memos of ``search.persistent_grid`` and ``search.resident_grid``.
    A sampled pass runs on the persistent grid: nearly every link hooks, many threads climb to
    and CAS the same hub roots at once, and more of them in flight only wait longer (kron26 on
    one H100: 4.7 + 2.0 ms for link and compress at 4 blocks a multiprocessor, 5.5 + 2.6 ms
    with every slot filled). The finish pass mostly reads labels that already agree and runs
    on the resident grid (0.65 + 0.57 ms against 0.87 + 0.71)."""
    if graph.size != 1:
        raise ValueError(f"linking in place needs the whole graph on one rank, not {graph.size}")
    bits = 8 * check_graph(graph).itemsize
    directed = in_graph is not graph
    n = graph.n
    counts = cupy.zeros(3, dtype=np.uint64)
    if graph.compressed != in_graph.compressed:
        raise ValueError("linking in place needs out- and in-rows both plain or both compressed")
    in_columns = (
        column_args(in_graph)
        if in_graph.compressed
        else (in_graph.column_indices.astype(graph.column_indices.dtype, copy=False),)
    )
    rows = (
        graph.row_offsets,
        *column_args(graph),
        in_graph.row_offsets,
        *in_columns,
        np.int32(directed),
        np.int64(n),
    )
    if n == 0:
        return counts
    if neighbour is None:
        if not isinstance(skip, cupy.ndarray):
            skip = cupy.full((), skip, dtype=np.int64)
        names = (kernel_name("link_rows", graph), "compress")
        kernels = [get_kernel("link", name, policy, bits) for name in names]
        blocks = [resident_grid(policy, grids[1], kernel) for kernel in kernels]
        argument = skip
    else:
        names = (kernel_name("link_neighbour", graph), "compress")
        kernels = [get_kernel("link", name, policy, bits) for name in names]
        blocks = [persistent_grid(policy, grids[0])] * 2
        argument = np.int64(neighbour)
    _launch(policy, kernels[0], blocks[0], n, (*rows, argument, state.labels, counts))
    _launch(policy, kernels[1], blocks[1], n, (np.int64(n), state.labels))
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


def _launch(policy: LaunchPolicy, kernel: Any, blocks: int, n: int, args: tuple[Any, ...]) -> None:
    """``kernel`` over ``n`` vertices, grid-stride over at most ``blocks`` blocks."""
    grid = max(1, min(blocks, -(-n // policy.block_threads)))
    kernel((grid,), (policy.block_threads,), args)
