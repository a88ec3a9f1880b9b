"""Afforest's Link and Compress on one GPU (``kernels/link.cu``): a graph held whole by one rank
links a set of edges in ONE pass of a lock-free union-find (each hook one ``atomicCAS`` on a
root's label) and compresses every tree to a star in one more; the striped rounds of
``distbfs.backends.arrays.hook`` (ask, cross, hook, jump, each with an all-reduce) are what
several ranks need, since no rank can CAS another's labels.

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
from .kernels import get_kernel
from .launch_policy import LaunchPolicy
from .search import persistent_grid


def link_in_place(
    policy: LaunchPolicy,
    grids: dict[int, int],
    graph: DistGraph,
    in_graph: DistGraph,
    state: ComponentState,
    neighbour: int | None,
    skip: int,
) -> tuple[int, int, int]:
    """Link neighbour ``neighbour`` of every vertex (None: every neighbour of the vertices whose
    label is not ``skip``, -1 for none), then compress; (links read, links whose ends had
    different labels when read, roots hooked)."""
    if graph.size != 1:
        raise ValueError(f"linking in place needs the whole graph on one rank, not {graph.size}")
    bits = 8 * check_graph(graph).itemsize
    directed = in_graph is not graph
    n = graph.n
    counts = cupy.zeros(3, dtype=np.uint64)
    block = (policy.block_threads,)
    grid = (max(1, min(persistent_grid(policy, grids), -(-n // policy.block_threads))),)
    rows = (
        graph.row_offsets,
        graph.column_indices,
        in_graph.row_offsets,
        in_graph.column_indices.astype(graph.column_indices.dtype, copy=False),
        np.int32(directed),
        np.int64(n),
    )
    if n:
        if neighbour is None:
            kernel = get_kernel("link", "link_rows", policy, bits)
            kernel(grid, block, (*rows, np.int64(skip), state.labels, counts))
        else:
            kernel = get_kernel("link", "link_neighbour", policy, bits)
            kernel(grid, block, (*rows, np.int64(neighbour), state.labels, counts))
        compress(policy, grids, state.labels, bits)
    links, crossing, hooked = (int(x) for x in counts.get())
    return links, crossing, hooked


def compress(policy: LaunchPolicy, grids: dict[int, int], labels: Any, bits: int) -> None:
    """Point every label at its tree's root (one launch)."""
    n = int(labels.shape[0])
    grid = (max(1, min(persistent_grid(policy, grids), -(-n // policy.block_threads))),)
    kernel = get_kernel("link", "compress", policy, bits)
    kernel(grid, (policy.block_threads,), (np.int64(n), labels))
