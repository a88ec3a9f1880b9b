"""Small structured graphs for tests, as global edge lists, and a scipy reference BFS.

Every builder returns ``(src, dst, n, directed)`` with int64 arrays. ``share(edges, comm)`` gives a
rank its slice, so tests build the same graph at any rank count.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

from distbfs.constants import UNREACHED


def path(n: int):
    v = np.arange(n - 1, dtype=np.int64)
    return v, v + 1, n, False


def star(leaves: int):
    return np.zeros(leaves, np.int64), np.arange(1, leaves + 1, dtype=np.int64), leaves + 1, False


def grid(nx: int, ny: int):
    ids = np.arange(nx * ny, dtype=np.int64).reshape(nx, ny)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return src, dst, nx * ny, False


def components():
    """Three components (a path, a triangle, an edge) and two isolated vertices."""
    src = np.array([0, 1, 2, 5, 6, 7, 9], np.int64)
    dst = np.array([1, 2, 3, 6, 7, 5, 10], np.int64)
    return src, dst, 13, False


def loops_and_duplicates():
    src = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3, 3], np.int64)
    dst = np.array([0, 1, 1, 0, 2, 2, 3, 1, 3, 4], np.int64)
    return src, dst, 5, False


def directed_with_sinks():
    """0 -> 1 -> 2 (sink), 0 -> 3 -> 4 (sink), 5 -> 0 (5 unreachable from 0), 6 isolated."""
    src = np.array([0, 1, 0, 3, 5, 4, 2], np.int64)
    dst = np.array([1, 2, 3, 4, 0, 4, 2], np.int64)
    return src, dst, 7, True


def random_graph(n: int, m: int, seed: int, directed: bool):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m), rng.integers(0, n, m), n, directed


def share(src: np.ndarray, dst: np.ndarray, rank: int, size: int):
    return src[rank::size], dst[rank::size]


def reference_distances(src, dst, n: int, directed: bool, source: int) -> np.ndarray:
    """Unweighted shortest-path lengths from ``source`` by scipy (UNREACHED where none)."""
    keep = src != dst
    a = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    d = csgraph.shortest_path(a, directed=directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), UNREACHED, d).astype(np.int64)


def gather_global(comm, local: np.ndarray, n: int) -> np.ndarray:
    """Global array in vertex order from every rank's striped local part."""
    parts = comm.allgather_object(np.asarray(local))
    out = np.empty(n, dtype=parts[0].dtype)
    for r, part in enumerate(parts):
        out[r :: comm.size] = part
    return out
