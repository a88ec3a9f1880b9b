"""The chunked driver of the generators: a generator is a tuple count and ``chunk(lo, hi)``,
which makes tuples ``[lo, hi)`` of its list as arrays; a rank's share is made a chunk at a time
into arrays sized once (``make_share``), or one rank's whole list is replayed a chunk at a time
without being held (``replay``, for ``build_graph_streamed``).

Invariant: the tuples do not depend on the chunk size (every value is a function of the tuple
index), so chunk sizes are free to suit the array module.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..threads import host_threads, parallel_map, spans

CHUNK_EDGES_HOST = 2**13
"""Tuples per chunk with numpy: 64 KiB temporaries stay in cache and below malloc's mmap limit."""
CHUNK_EDGES_THREADED = 2**17
"""Tuples per chunk with numpy on several host threads: longer array calls, between which a
thread holds the GIL, so the threads overlap (a one-rank share of kron20: 0.65 s on 2 threads,
1.2 s on one thread with 2**13)."""
CHUNK_EDGES_DEVICE = 2**22
"""Tuples per chunk with cupy: large kernels, bounded temporary device memory."""

Progress = Callable[[int, int], Any]
"""``progress(done, total)``: this rank's tuples made so far and its share's size."""

EdgeChunk = Callable[[int, int], tuple[Any, ...]]
"""``chunk(lo, hi)``: tuples [lo, hi) of a generator's list, as (src, dst) int64 arrays (and
their weights, for a weighted graph: ``weights.weighted_chunk``)."""

EDGE_DTYPES = (np.dtype(np.int64), np.dtype(np.int64))
"""dtypes of a chunk's (src, dst)."""


def chunk_size(xp: Any) -> int:
    """Tuples per chunk in the array module ``xp``."""
    return CHUNK_EDGES_HOST if xp is np else CHUNK_EDGES_DEVICE


def make_share(
    xp: Any,
    total: int,
    rank: int,
    size: int,
    chunk: EdgeChunk,
    progress: Progress | None,
    dtypes: Sequence[Any] = EDGE_DTYPES,
) -> tuple[Any, ...]:
    """Tuples ``[total*rank//size, total*(rank+1)//size)``, made ``chunk(lo, hi)`` at a time
    into one array per part of a chunk (``dtypes``: theirs); a single rank makes contiguous
    pieces of its share on its cores' host threads (``distbfs.threads``)."""
    lo, hi = total * rank // size, total * (rank + 1) // size
    count = hi - lo
    parts = tuple(xp.empty(count, dtype=dtype) for dtype in dtypes)
    if progress is not None:
        progress(0, count)
    threads = host_threads(size)
    step = CHUNK_EDGES_THREADED if xp is np and threads > 1 else chunk_size(xp)
    made_so_far = [0]
    lock = threading.Lock()

    def make(bounds: tuple[int, int]) -> None:
        for a in range(lo + bounds[0], lo + bounds[1], step):
            b = min(lo + bounds[1], a + step)
            for part, made in zip(parts, chunk(a, b), strict=True):
                part[a - lo : b - lo] = made
            if progress is not None:
                with lock:  # progress is reported in order, from any thread
                    made_so_far[0] += b - a
                    progress(made_so_far[0], count)

    parallel_map(make, spans(xp, count, threads, count or 1), threads)
    return parts


def replay(
    xp: Any, total: int, chunk: EdgeChunk, progress: Progress | None
) -> Iterator[tuple[Any, ...]]:
    """Tuples ``[0, total)``, ``chunk(lo, hi)`` at a time (one rank's whole list, never held)."""
    if progress is not None:
        progress(0, total)
    step = chunk_size(xp)
    for lo in range(0, total, step):
        hi = min(total, lo + step)
        yield chunk(lo, hi)
        if progress is not None:
            progress(hi, total)
