"""Delta-stepping's buckets (Meyer & Sanders, "Delta-stepping: a parallelizable shortest path
algorithm", J. Algorithms 2003): the bucket width delta, chosen from the graph's weights and
degrees when the caller gives none, and the per-bucket statistics of a search.

Delta. Bucket i holds the tentative distances in ``[i * delta, (i + 1) * delta)``; edges of
weight at most delta are light (relaxed again each time a vertex of the bucket improves), the
others heavy (relaxed once, when the bucket is settled). A small delta settles vertices in
nearly Dijkstra's order at the price of many buckets; a large one packs many levels of work into
a bucket and relaxes edges again and again. Meyer & Sanders take delta ~ 1 / degree for weights
in [0, 1]; ``choose_delta`` takes the mean edge weight over the mean degree, and at least the
smallest positive weight (so an unweighted graph, weight 1 everywhere, runs BFS's levels as
buckets): GAP's delta-stepping uses 2 on Kronecker graphs of weights 1..255 and mean degree 32,
and 50 on road networks and meshes of degree 2-4, which this rule lands next to (4, 32-60).

Striped steps on GPUs (several ranks) take buckets ``LaunchPolicy.path_striped_delta`` times
wider than this rule's when the caller gives no delta: each step there costs host round trips
and an exchange whatever its size (``distbfs.engine.plan.PathPlan``).

On one GPU (``kernels/relax.cu``) delta is the width of the histogram bins a bucket is cut from:
a bucket spans one or more deltas (enough vertices for the whole grid, at most
``LaunchPolicy.path_bucket_bins`` deltas), so its buckets are fewer than the striped search's;
the distances and the tree are the same.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..constants import NO_PATH
from ..errors import InvalidArgumentValue


@dataclass(frozen=True)
class WeightSummary:
    """The weights of a graph, over all ranks: edges, their sum, smallest positive and largest
    weight, smallest weight and whether every weight is an integer (an unweighted graph: weight
    1 everywhere)."""

    edges: int
    total: float
    smallest_positive: float
    largest: float
    smallest: float = 0.0
    integral: bool = False

    @property
    def positive_integers(self) -> bool:
        """Every weight a positive integer: distances are integers and every shortest-path
        tree edge leads strictly closer (a search may record the tree as it goes)."""
        return self.integral and self.smallest > 0


def choose_delta(summary: WeightSummary, n: int) -> float:
    """The bucket width: mean weight / mean degree, at least the smallest positive weight
    (module docstring); 1.0 for a graph without positive weights."""
    if summary.edges == 0 or summary.largest <= 0:
        return 1.0
    mean_weight = summary.total / summary.edges
    mean_degree = summary.edges / max(n, 1)
    return max(mean_weight / mean_degree, summary.smallest_positive)


def check_delta(delta: Any) -> float:
    """``delta`` as a positive finite float; ``ValueError`` naming the argument otherwise."""
    number = isinstance(delta, int | float | np.number) and not isinstance(delta, bool)
    if not number or not (0 < float(delta) < math.inf):
        raise InvalidArgumentValue(f"delta: expected a positive finite number, got {delta!r}")
    return float(delta)


COUNTERS = ("phases", "relaxations", "items_sent", "items_sent_remote", "improved", "settled")
"""Per-bucket counters kept on each rank and summed over ranks after the search: light phases
(one relax-exchange-contract step each; the heavy step is not counted), requests made,
requests sent after local culling (and those to other ranks), improvements contracted, and
vertices settled."""


@dataclass
class BucketStats:
    """One bucket of a delta-stepping search, summed over ranks; ``seconds``: slowest rank.
    ``lower``: the smallest tentative distance in it when it started."""

    bucket: int
    lower: float
    phases: int
    relaxations: int
    items_sent: int
    items_sent_remote: int
    improved: int
    settled: int
    seconds: dict[str, float] = field(default_factory=dict)


class BucketLog:
    """The buckets of one search on this rank: (bucket, lower, *COUNTERS)."""

    def __init__(self) -> None:
        self.rows: list[list[float]] = []

    def bucket(self, bucket: int, lower: float, counters: list[int]) -> None:
        self.rows.append([bucket, lower, *counters])

    def stats(self, comm: Any, timer: Any) -> list[BucketStats]:
        """Sum the counters over ranks (one all-reduce) and take the slowest phase times, one
        timer level a bucket; levels after the last bucket's (the tree), or a search timed as
        one level (one GPU), count in the last bucket's row."""
        keys = 2
        local = np.array(self.rows, dtype=np.float64).reshape(-1, keys + len(COUNTERS))
        totals = comm.allreduce(local[:, keys:].astype(np.int64))
        phases = timer.per_level()
        names = sorted({name for row in phases for name in row})
        seconds = np.array([[row.get(k, 0.0) for k in names] for row in phases], np.float64)
        if seconds.size:
            seconds = comm.allreduce(seconds, op="max")
        buckets = local.shape[0]
        if buckets and seconds.size and seconds.shape[0] != buckets:
            merged = np.zeros((buckets, len(names)), np.float64)
            before = min(buckets - 1, seconds.shape[0] - 1)
            merged[:before] = seconds[:before]
            merged[-1] = seconds[before:].sum(axis=0)
            seconds = merged
        out = []
        counts = totals.tolist()  # COUNTERS in BucketStats' field order, as Python ints
        for i, (bucket, lower) in enumerate(local[:, :keys].tolist()):
            times = dict(zip(names, seconds[i].tolist(), strict=True)) if seconds.size else {}
            out.append(BucketStats(int(bucket), lower, *counts[i], seconds=times))
        return out


def bucket_end(lower: float, delta: float) -> float:
    """The end of the bucket that holds the distance ``lower``."""
    return (math.floor(lower / delta) + 1) * delta


__all__ = [
    "COUNTERS",
    "NO_PATH",
    "BucketLog",
    "BucketStats",
    "WeightSummary",
    "bucket_end",
    "check_delta",
    "choose_delta",
]
