"""Per-level statistics of a search: counters kept on each rank while it runs, summed over the
ranks once, after it (one all-reduce), with the slowest rank's phase times."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .direction import TOP_DOWN, Direction

COUNTERS = (
    "edges_expanded",
    "items_sent",
    "items_sent_remote",
    "items_received",
    "discovered",
    "edges_inspected",
)
"""Per-level counters kept on each rank and summed over ranks after the search."""

_DIRECTIONS = tuple(Direction)


@dataclass
class LevelStats:
    """One level (or ``span`` fused levels), summed over ranks; ``seconds``: slowest rank.

    A row of fused levels (``span`` levels run by one kernel) carries its first frontier only:
    the fused kernel keeps no other counters. ``direction``: ``top_down`` or ``bottom_up``.
    ``edges_inspected``: neighbour slots read (top-down: the edges expanded; bottom-up: the
    in-neighbour slots tested before each vertex's first hit, rounded up to its scan chunk).
    Bottom-up levels send no items (their exchange is the bitmap all-gather).
    """

    level: int
    frontier: int
    edges_expanded: int
    items_sent: int
    items_sent_remote: int
    items_received: int
    discovered: int
    span: int = 1
    seconds: dict[str, float] = field(default_factory=dict)
    direction: str = TOP_DOWN.value
    edges_inspected: int = 0


class LevelLog:
    """The rows of one search on this rank: (level, frontier, span, direction, *COUNTERS)."""

    def __init__(self) -> None:
        self.rows: list[list[int]] = []

    def level(self, level: int, frontier: int, direction: Direction, counters: list[int]) -> None:
        """One level run in two phases (top-down) or bottom-up; ``counters`` as ``COUNTERS``."""
        self.rows.append([level, frontier, 1, _DIRECTIONS.index(direction), *counters])

    def fused(self, level: int, frontier: int, span: int) -> None:
        """``span`` top-down levels run fused from ``level`` (no counters kept)."""
        self.rows.append([level, frontier, span, 0] + [0] * len(COUNTERS))

    def at_limit(self, level: int, frontier: int) -> None:
        """The last row of a search its depth limit stopped: level ``level``, labeled and not
        expanded (no counters, no phase time), so the rows' spans still add up to the depth
        plus one, as after a search that ran out of frontier."""
        self.rows.append([level, frontier, 1, 0] + [0] * len(COUNTERS))

    def stats(self, comm: Any, timer: Any) -> list[LevelStats]:
        """Sum the counters over ranks (one all-reduce) and take the slowest phase times (a row
        without phases, ``at_limit``'s, has none)."""
        keys = 4
        local = np.array(self.rows, dtype=np.int64).reshape(-1, keys + len(COUNTERS))
        totals = comm.allreduce(local[:, keys:])
        phases = timer.per_level()
        names = sorted({name for level in phases for name in level})
        seconds = np.array([[lv.get(k, 0.0) for k in names] for lv in phases], dtype=np.float64)
        if seconds.size:
            seconds = comm.allreduce(seconds, op="max")
        stats = []
        for i, (level, frontier, span, direction) in enumerate(local[:, :keys].tolist()):
            counts = dict(zip(COUNTERS, (int(x) for x in totals[i]), strict=True))
            timed = seconds.size and i < seconds.shape[0]
            times = dict(zip(names, seconds[i].tolist(), strict=True)) if timed else {}
            way = _DIRECTIONS[direction].value
            stats.append(
                LevelStats(level, frontier, span=span, seconds=times, direction=way, **counts)
            )
        return stats
