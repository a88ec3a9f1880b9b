"""Graph500 search roots: the vertices kernel 2 (BFS) is run from.

Roots: unique vertices of degree >= 1 (the CSR holds no self-loops, so a vertex whose only edge is
a self-loop never qualifies), pseudo-random but the same at every rank count. Each vertex gets a
counter-based hash of (seed, vertex id): splitmix64's output for counter ``v + 1`` from state
``seed``, which depends on nothing but the pair. The roots are the ``count`` vertices of smallest
(hash, id); each rank proposes its ``count`` smallest and one all-gather settles the rest.

The hashes and the cut to the candidates run in the array module of the graph (numpy, or cupy on
the GPU); only the proposals (about ``count`` pairs a rank) come to the host.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .arrays import array_module, as_host
from .comm.base import Communicator
from .errors import InputError
from .graph import DistGraph
from .hashing import splitmix64

DEFAULT_ROOT_SEED = 0x5EED_2012
"""Seed of the root choice when the user gives none."""


def root_hash(seed: int, vertices: Any) -> Any:
    """The rank key of each vertex for the root choice: splitmix64(seed, vertex + 1)."""
    xp = array_module(vertices)
    return splitmix64(seed, xp.asarray(vertices, dtype=xp.uint64) + np.uint64(1))


def _smallest(hashes: Any, vertices: Any, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``count`` smallest (hash, vertex) pairs, in that order, as host arrays.

    The cut to the candidates (``count`` smallest hashes, ties at the cut all kept) runs in the
    arrays' module; only the candidates come to the host for the final ordering.
    """
    xp = array_module(hashes)
    if count == 0:
        positions = xp.zeros(0, dtype=xp.int64)
    elif hashes.size > count:
        keep = hashes <= xp.partition(hashes, count - 1)[count - 1]
        positions = xp.flatnonzero(keep)
    else:
        positions = xp.arange(hashes.size)
    h, v = as_host(hashes[positions]), as_host(vertices[positions])
    order = np.lexsort((v, h))[:count]
    return h[order], v[order]


def choose_roots(
    graph: DistGraph, comm: Communicator, count: int = 64, seed: int = DEFAULT_ROOT_SEED
) -> list[int]:
    """Graph500 search roots (collective).

    Parameters
    ----------
    graph : DistGraph
        The graph to search.
    comm : Communicator
        The job's communicator.
    count : int
        Number of roots wanted (Graph500: 64).
    seed : int
        Seed of the vertex hash; the same seed gives the same roots at any rank count.

    Returns
    -------
    list of int
        ``min(count, number of vertices of degree >= 1)`` distinct global vertex ids, each of
        degree >= 1, in increasing hash order; the same list on every rank.
    """
    if count < 0:
        raise InputError(f"number of roots must be non-negative, got {count}")
    xp = array_module(graph.row_offsets)
    candidates = graph.owned_vertices(xp)[graph.local_degrees() >= 1]
    hashes, vertices = _smallest(root_hash(seed, candidates), candidates, count)
    all_hashes = comm.allgather_array(hashes)
    all_vertices = comm.allgather_array(vertices)
    _, chosen = _smallest(all_hashes, all_vertices, count)
    return [int(v) for v in chosen]
