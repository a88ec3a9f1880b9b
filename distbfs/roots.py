"""Graph500 search roots: the vertices kernel 2 (BFS) is run from.

Roots: unique vertices of degree >= 1 (the CSR holds no self-loops, so a vertex whose only edge is
a self-loop never qualifies), pseudo-random but the same at every rank count. Each vertex gets a
counter-based hash of (seed, vertex id): splitmix64's output for counter ``v + 1`` from state
``seed``, which depends on nothing but the pair. The roots are the ``count`` vertices of smallest
(hash, id); each rank proposes its ``count`` smallest and one all-gather settles the rest.
"""

from __future__ import annotations

import numpy as np

from .comm.base import Communicator
from .errors import InputError
from .graph import DistGraph
from .validate import as_host

DEFAULT_ROOT_SEED = 0x5EED_2012
"""Seed of the root choice when the user gives none."""

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def splitmix64(seed: int, counters: np.ndarray) -> np.ndarray:
    """splitmix64 output number ``counters`` (uint64 array) of the generator seeded ``seed``.

    State after k steps is ``seed + k * 0x9E3779B97F4A7C15`` (mod 2**64); the output is that
    state through the splitmix64 finalizer. Vectorized, wrapping uint64 arithmetic.
    """
    z = np.asarray(counters, dtype=np.uint64) * _GOLDEN
    z += np.uint64(seed % 2**64)
    z ^= z >> np.uint64(30)
    z *= _MIX1
    z ^= z >> np.uint64(27)
    z *= _MIX2
    z ^= z >> np.uint64(31)
    return z


def root_hash(seed: int, vertices: np.ndarray) -> np.ndarray:
    """The rank key of each vertex for the root choice: splitmix64(seed, vertex + 1)."""
    return splitmix64(seed, np.asarray(vertices, dtype=np.uint64) + np.uint64(1))


def _smallest(hashes: np.ndarray, vertices: np.ndarray, count: int) -> np.ndarray:
    """Positions of the ``count`` smallest (hash, vertex) pairs, in that order."""
    if hashes.size > count > 0:  # cut to the candidates first; ties at the cut all stay
        keep = hashes <= np.partition(hashes, count - 1)[count - 1]
        positions = np.flatnonzero(keep)
    else:
        positions = np.arange(hashes.size)
    order = np.lexsort((vertices[positions], hashes[positions]))
    return positions[order[:count]]


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
    degrees = as_host(graph.local_degrees())
    candidates = graph.owned_vertices(np)[degrees >= 1]
    hashes = root_hash(seed, candidates)
    mine = _smallest(hashes, candidates, count)
    all_hashes = comm.allgather_array(hashes[mine])
    all_vertices = comm.allgather_array(candidates[mine])
    chosen = _smallest(all_hashes, all_vertices, count)
    return [int(v) for v in all_vertices[chosen]]
