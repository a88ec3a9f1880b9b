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
    """One level (or ``span`` levels), summed over ranks; ``seconds``: slowest rank.

    ``fused``: the level ran in a fused run (top-down, many levels a launch); such a run's time
    is on its first level's row. Fused levels have their counters from the backend's log
    (``Backend.fused_level_log``: a frontier's edges are all expanded, nothing is sent); a
    backend that keeps no log gives one row per run, ``span`` levels with its first frontier
    and no counters. ``direction``: ``top_down`` or ``bottom_up``.
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
    fused: bool = False


_KEYS = 5  # a row's keys: level, frontier, span, direction, fused


class LevelLog:
    """The rows of one search on this rank, one per entry of the timer's levels:
    (level, frontier, span, direction, fused, *COUNTERS)."""

    def __init__(self) -> None:
        self.rows: list[list[int]] = []

    def level(self, level: int, frontier: int, direction: Direction, counters: list[int]) -> None:
        """One level run in two phases (top-down) or bottom-up; ``counters`` as ``COUNTERS``."""
        self.rows.append([level, frontier, 1, _DIRECTIONS.index(direction), 0, *counters])

    def fused(self, level: int, frontier: int, span: int) -> None:
        """``span`` top-down levels run fused from ``level`` (counters from the backend's log)."""
        self.rows.append([level, frontier, span, 0, 1] + [0] * len(COUNTERS))

    def at_limit(self, level: int, frontier: int) -> None:
        """The last row of a search its depth limit stopped: level ``level``, labeled and not
        expanded (no counters, no phase time), so the rows' spans still add up to the depth
        plus one, as after a search that ran out of frontier."""
        self.rows.append([level, frontier, 1, 0, 0] + [0] * len(COUNTERS))

    def stats(self, comm: Any, timer: Any, fused: Any = None) -> list[LevelStats]:
        """Sum the counters over ranks (one all-reduce) and take the slowest phase times (a row
        without phases, ``at_limit``'s, has none); each fused run becomes a row per level from
        ``fused``, the backend's log (``Backend.fused_level_log``), when it keeps one."""
        rows, timed = self._per_level(fused)
        local = np.array(rows, dtype=np.int64).reshape(-1, _KEYS + len(COUNTERS))
        totals = comm.allreduce(local[:, _KEYS:])
        phases = timer.per_level()
        names = sorted({name for level in phases for name in level})
        seconds = np.array([[lv.get(k, 0.0) for k in names] for lv in phases], dtype=np.float64)
        if seconds.size:
            seconds = comm.allreduce(seconds, op="max")
        stats = []
        keys = local[:, :_KEYS].tolist()
        for i, (level, frontier, span, direction, in_run) in enumerate(keys):
            counts = dict(zip(COUNTERS, (int(x) for x in totals[i]), strict=True))
            row = timed[i]
            has_time = seconds.size and 0 <= row < seconds.shape[0]
            times = dict(zip(names, seconds[row].tolist(), strict=True)) if has_time else {}
            way = _DIRECTIONS[direction].value
            stats.append(
                LevelStats(
                    level,
                    frontier,
                    span=span,
                    seconds=times,
                    direction=way,
                    fused=bool(in_run),
                    **counts,
                )
            )
        return stats

    def _per_level(self, fused: Any) -> tuple[list[list[int]], list[int]]:
        """The rows with every fused run spread over a row per level from the log (each run's
        rows there followed by the row of the frontier it stopped before: the last level's
        discoveries), and for each row the timer entry of its time (-1: none)."""
        rows: list[list[int]] = []
        timed: list[int] = []
        used = 0
        for index, row in enumerate(self.rows):
            level, _, span, _, in_run = row[:_KEYS]
            if not in_run or fused is None:
                rows.append(row)
                timed.append(index)
                continue
            run = fused[used : used + span + 1].tolist()
            used += span + 1
            for j in range(span):
                vertices, _, edges = run[j]
                counts = {name: 0 for name in COUNTERS}
                counts.update(edges_expanded=edges, edges_inspected=edges, discovered=run[j + 1][1])
                rows.append([level + j, vertices, 1, 0, 1, *counts.values()])
                timed.append(index if j == 0 else -1)
        if fused is not None and used != len(fused):
            raise RuntimeError(f"the fused level log has {len(fused)} rows, its runs {used}")
        return rows, timed
