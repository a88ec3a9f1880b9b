"""Host threads for the long numpy passes of a one-rank graph build and generation.

numpy releases the GIL inside its array loops, so a pass cut into one piece per core runs on
every core: a single rank on a multi-core machine builds a graph about as fast as one rank per
core would. Several ranks (one per core, as MPI jobs usually are) keep one thread each.

Invariant: the pieces of a pass cover ``[0, length)`` in order, and a pass's result does not
depend on how it was cut (each piece writes its own slice, or partial results are summed).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")

MIN_PIECE = 1 << 20
"""Elements below which a pass stays in one piece (a thread costs more than it saves)."""


def host_threads(ranks: int) -> int:
    """Threads a pass of one of ``ranks`` ranks may use: the cores this process may run on,
    when it is the only rank; else one."""
    if ranks != 1:
        return 1
    cores = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else None
    return len(cores) if cores else os.cpu_count() or 1


def spans(xp: Any, length: int, threads: int, most: int) -> list[tuple[int, int]]:
    """``[0, length)`` cut in order into ranges of at most ``most`` elements and, with numpy,
    into at least ``threads`` ranges where each still holds ``MIN_PIECE`` (other array modules
    run on their device: no more cuts than ``most`` asks)."""
    wanted = threads if xp is np else 1
    parts = max(-(-length // most), min(wanted, length // MIN_PIECE), 1)
    bounds = [length * i // parts for i in range(parts + 1)]
    return list(itertools.pairwise(bounds))


def parallel_map(function: Callable[[Any], T], items: list[Any], threads: int) -> list[T]:
    """``[function(item) for item in items]``, on up to ``threads`` host threads."""
    if threads <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(threads, len(items))) as pool:
        return list(pool.map(function, items))
