"""Vertex striping (Merrill et al. 2012, section 6.1): vertex v is owned by rank ``v % p`` and is
row ``v // p`` of that rank's CSR. Striping balances load on graphs whose labels are random
(Graph500 permutes them) and makes the owner of a vertex a cheap modulo.

Invariant: ``global_id(local_id(v), owner(v)) == v`` and ranks own ``num_local(n, p, r)`` vertices.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def owner(v: Any, size: int) -> Any:
    """Rank owning global vertex id(s) ``v``."""
    return v % size


def local_id(v: Any, size: int) -> Any:
    """Local row of global vertex id(s) ``v`` on its owner."""
    return v // size


def global_id(local: Any, rank: int, size: int) -> Any:
    """Global id(s) of local row(s) ``local`` on ``rank``."""
    return local * size + rank


def owned_ids(rank: int, size: int, nlocal: int, xp: Any = np) -> Any:
    """Global ids of rank ``rank``'s ``nlocal`` vertices, in local order (rank, rank + size,
    ...; one array of int64s, no temporaries)."""
    return xp.arange(rank, rank + nlocal * size, size, dtype=np.int64)


def num_local(n: int, size: int, rank: int) -> int:
    """Number of vertices rank ``rank`` owns among ``n``."""
    return max(0, (n - rank + size - 1) // size)


def owned_view(whole: Any, rank: int, size: int) -> Any:
    """The entries of a whole-graph array (global order; None passes through) at the vertices
    ``rank`` owns, in local order: a strided view (no copy)."""
    return None if whole is None else whole[rank::size]


def contiguous(xp: Any, array: Any | None) -> Any | None:
    """``array`` (None passes through) as a contiguous array of ``xp``: a search's
    ``owned_view`` shares, copied after its time is taken (no copy where it is contiguous)."""
    return None if array is None else xp.ascontiguousarray(array)


def rank_major(v: Any, n: int, size: int) -> Any:
    """Position of global vertex id(s) ``v`` in the concatenation, in rank order, of every
    rank's array over its owned vertices (what ``Communicator.allgather_array`` returns)."""
    rank = v % size
    base, extra = divmod(n, size)  # ranks below extra own base + 1 vertices
    before_extra = rank - (rank - extra) * (rank > extra)  # min(rank, extra)
    return rank * base + before_extra + v // size


def bin_by_owner(xp: Any, vertices: Any, size: int, *payloads: Any) -> tuple[Any, Any, tuple]:
    """Counting sort of ``vertices`` (and payloads alongside) by owner rank, stable.

    Returns ``(offsets, vertices, payloads)`` where ``offsets`` is a host int64 array of
    ``size + 1`` entries: bin ``r`` is ``[offsets[r], offsets[r + 1])``. This is the bin layout of
    the fused filter+partition stage (section 6.1) and of graph construction.

    The bins' bounds are binary searches in the sorted owners, not a bincount: on a GPU a
    bincount over a few ranks is an atomic add per item onto a few addresses, which serialise.
    """
    import numpy as np

    offsets = np.zeros(size + 1, dtype=np.int64)
    if size == 1:
        offsets[1] = vertices.shape[0]
        return offsets, vertices, payloads
    owners = owner(vertices, size).astype(xp.uint16 if size < 2**16 else xp.int64)
    order = xp.argsort(owners, kind="stable")  # radix sort on 16-bit keys
    ranks = xp.arange(size + 1, dtype=owners.dtype)
    bounds = xp.searchsorted(owners[order], ranks)  # bin r starts at the first owner >= r
    offsets[:] = bounds.get() if hasattr(bounds, "get") else bounds
    return offsets, vertices[order], tuple(p[order] for p in payloads)
