"""Every traversal once on a small graph, so that a kernel cache filled ahead of the runs
(``distbfs warmup``) also holds what CuPy compiles on first use: its own elementwise,
reduction and scan kernels (one per operation and dtypes; a reduction with CUB's block
accelerator takes about 3 s), which the builds and traversals of large graphs otherwise
compile beside distbfs's modules."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..engine import STRATEGIES
from .batched import bfs_many
from .components import connected_components
from .graph import Graph
from .paths import sssp
from .search import bfs

WARMUP_SCALE = 10
"""Kronecker scale of the graph the traversals run on (a few milliseconds each once
compiled; what CuPy compiles depends on the operations and dtypes, not on the sizes)."""


def exercise(backend: Any, comm: Any, scale: int = WARMUP_SCALE) -> float:
    """Run BFS (every strategy, with predecessors, validated), shortest paths, components and
    batched BFS on a weighted Kronecker graph built both ways a graph is (streamed by the
    generator; ``build_graph`` as the file readers do), plain and compressed. Returns the
    seconds taken."""
    start = time.perf_counter()
    made = Graph.generate(
        "kronecker", scale=scale, weights="uniform:1:255", backend=backend, comm=comm
    )
    dist = made.dist
    tails = np.repeat(dist.owned_vertices(), backend.to_host(dist.local_degrees()))
    heads = backend.to_host(dist.column_indices).astype(np.int64)
    weights = backend.to_host(dist.weights)
    read = Graph.from_edges(
        tails, heads, weights=weights, num_vertices=dist.n, backend=backend, comm=comm
    )
    for graph in (made, read, read.compress()):
        for strategy in STRATEGIES:
            bfs(graph, 0, predecessors=True, strategy=strategy, validate=True)
        sssp(graph, 0, predecessors=True, validate=True)
        connected_components(graph, validate=True)
        bfs_many(graph, list(range(64)))
    return time.perf_counter() - start


__all__ = ["WARMUP_SCALE", "exercise"]
