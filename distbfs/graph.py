"""The distributed graph: each rank holds the CSR rows of the vertices it owns (striping,
section 6.1), with global neighbour ids. Construction is distributed: each rank contributes a
share of the edges, edges travel to the owner of their source through one all-to-all, then each
owner drops self-loops and duplicates and builds its rows.

Invariants of a ``DistGraph``: ``row_offsets`` is int64 of length ``nlocal + 1``;
``column_indices`` holds global ids (int32 when n < 2**31), sorted and unique within each row,
with no self-loops; an undirected graph stores both directions of every edge; the graph is the
same, row for row, whatever the number of ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .comm.base import Communicator
from .constants import ROW_OFFSET_DTYPE, vertex_dtype
from .errors import InputError
from .partition import bin_by_owner, global_id, local_id, num_local


@dataclass
class DistGraph:
    """This rank's share of a graph striped over ``size`` ranks.

    Attributes
    ----------
    n : int
        Global number of vertices.
    num_edges : int
        Global number of stored (directed) edges; an undirected edge counts twice.
    directed : bool
        False when every edge is stored in both directions.
    rank, size : int
        This rank and the number of ranks; vertex v lives on rank ``v % size`` as row ``v // size``.
    row_offsets, column_indices : array
        CSR of the owned rows (numpy or cupy, as the backend that built it).
    """

    n: int
    num_edges: int
    directed: bool
    rank: int
    size: int
    row_offsets: Any
    column_indices: Any

    @property
    def nlocal(self) -> int:
        """Number of vertices this rank owns."""
        return num_local(self.n, self.size, self.rank)

    @property
    def num_local_edges(self) -> int:
        return int(self.column_indices.shape[0])

    @property
    def num_undirected_edges(self) -> int:
        """Graph500 edge count of the whole graph: each undirected edge once."""
        return self.num_edges if self.directed else self.num_edges // 2

    def local_degrees(self) -> Any:
        """Out-degree of every owned vertex, in local order."""
        return self.row_offsets[1:] - self.row_offsets[:-1]

    def owned_vertices(self, xp: Any = np) -> Any:
        """Global ids of the owned vertices, in local order."""
        return global_id(xp.arange(self.nlocal, dtype=np.int64), self.rank, self.size)

    def nbytes(self) -> int:
        return int(self.row_offsets.nbytes + self.column_indices.nbytes)


def _sorted_unique(xp: Any, values: Any) -> Any:
    """Sorted distinct values (``xp.unique`` is far slower than sort + compare in numpy 2.x)."""
    values = xp.sort(values)
    if values.shape[0] < 2:
        return values
    keep = xp.empty(values.shape[0], dtype=xp.bool_)
    keep[0] = True
    xp.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def build_graph(
    comm: Communicator,
    src: Any,
    dst: Any,
    n: int,
    *,
    directed: bool,
    xp: Any = np,
) -> DistGraph:
    """Build the distributed CSR from this rank's share of the edges (collective).

    ``src``/``dst`` are int64 arrays of global ids in ``[0, n)`` (checked by the readers).
    For an undirected graph each edge may be given in one direction or both.
    """
    if n < 0:
        raise InputError(f"vertex count must be non-negative, got {n}")
    p = comm.size
    src = xp.asarray(src, dtype=xp.int64)
    dst = xp.asarray(dst, dtype=xp.int64)
    if not directed:
        src, dst = xp.concatenate([src, dst]), xp.concatenate([dst, src])
    keep = src != dst  # self-loops never reach the CSR
    src, dst = src[keep], dst[keep]
    del keep
    if p > 1:
        offsets, src, (dst,) = bin_by_owner(xp, src, p, dst)
        _, (src, dst) = comm.alltoallv(offsets, src, dst)
    nlocal = num_local(n, p, comm.rank)
    if nlocal > 0 and nlocal * n >= 2**63:
        raise InputError(f"graph too large to build: {n} vertices on {p} ranks (use more ranks)")
    key = local_id(src, p) * n + dst
    del src, dst
    key = _sorted_unique(xp, key)  # sorts rows, then neighbours within a row; drops duplicates
    rows = key // n if n else key
    column_indices = (key - rows * n).astype(vertex_dtype(n))
    del key
    row_offsets = xp.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)
    xp.cumsum(xp.bincount(rows, minlength=nlocal), out=row_offsets[1:])
    num_edges = comm.allreduce(int(column_indices.shape[0]))
    return DistGraph(n, num_edges, directed, comm.rank, p, row_offsets, column_indices)
