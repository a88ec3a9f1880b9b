"""Per-level statistics of a search: counters kept on each rank while it runs, summed over the
ranks once, after it (one all-reduce), with the slowest rank's phase times."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

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
_EXPANDED, _INSPECTED, _DISCOVERED = (
    _KEYS + COUNTERS.index(name) for name in ("edges_expanded", "edges_inspected", "discovered")
)


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

    def stats(self, comm: Any, timer: Any, fused: Any = None) -> LevelTable:
        """Sum the counters over ranks and take the slowest phase times (a row without phases,
        ``at_limit``'s, has none). With ``fused``, the backend's log of the fused runs
        (``Backend.fused_level_log``), the same all-reduce sums its counts, and the table
        spreads each run over a row per level when first read (a road network's search has
        a thousand fused levels: the rows are bookkeeping, not part of the search)."""
        table = np.array(self.rows, dtype=np.int64).reshape(-1, _KEYS + len(COUNTERS))
        counts = table[:, _KEYS:]
        log = None if fused is None else np.array(fused, dtype=np.int64)
        if log is None:
            counts = comm.allreduce(counts)
        elif comm.size > 1:  # the log's first column, the frontier over all ranks, is every rank's
            summed = comm.allreduce(np.concatenate([counts.reshape(-1), log.reshape(-1)]))
            log[:, 1:] = summed[counts.size :].reshape(log.shape)[:, 1:]
            counts = summed[: counts.size].reshape(counts.shape)
        phases = timer.per_level()
        names = sorted({name for level in phases for name in level})
        seconds = np.array([[lv.get(k, 0.0) for k in names] for lv in phases], dtype=np.float64)
        if seconds.size:
            seconds = comm.allreduce(seconds, op="max")
        seconds = seconds.reshape(len(phases), len(names))
        return LevelTable(table[:, :_KEYS], counts, names, seconds, log)


def _spread(keys: np.ndarray, counts: np.ndarray, fused: np.ndarray | None) -> tuple[Any, ...]:
    """(keys, counts, timed) of the table with every fused run spread over a row per level
    from the log ``fused`` (each run's rows there followed by the row of the frontier it
    stopped before: the last level's discoveries); ``timed``: each row's timer entry (-1:
    none, every fused level but a run's first)."""
    timed = np.arange(keys.shape[0])
    if fused is None:
        return keys, counts, timed
    table = np.concatenate([keys, counts], axis=1)
    blocks, times, used = [], [], 0
    for index, (level, _, span, _, in_run) in enumerate(keys.tolist()):
        if not in_run:
            blocks.append(table[index : index + 1])
            times.append(timed[index : index + 1])
            continue
        run = fused[used : used + span + 1]
        used += span + 1
        block = np.zeros((span, table.shape[1]), dtype=np.int64)
        block[:, 0] = np.arange(level, level + span)
        block[:, 1] = run[:-1, 0]
        block[:, 2] = block[:, 4] = 1  # span, fused (direction 0: top-down)
        block[:, _EXPANDED] = block[:, _INSPECTED] = run[:-1, 2]
        block[:, _DISCOVERED] = run[1:, 1]
        blocks.append(block)
        untimed = np.full(span, -1)
        untimed[0] = index
        times.append(untimed)
    if used != len(fused):
        raise RuntimeError(f"the fused level log has {len(fused)} rows, its runs {used}")
    spread = np.concatenate(blocks)
    return spread[:, :_KEYS], spread[:, _KEYS:], np.concatenate(times)


class LevelTable(Sequence[LevelStats]):
    """The ``LevelStats`` rows of a search, kept as arrays (each fused run in one row with its
    log until the table is first read) and made into rows when read (a road network's search
    has thousands of levels: building them all would cost more than the search)."""

    def __init__(
        self,
        keys: np.ndarray,
        counts: np.ndarray,
        names: list[str],
        seconds: np.ndarray,
        fused: np.ndarray | None = None,
    ) -> None:
        """``keys``/``counts``: a row's keys and counters summed over ranks, a fused run in one
        row; ``fused``: the runs' log, its counts summed over ranks (None: a run stays one
        row); ``seconds``: per timer entry (a row of ``keys``), the slowest rank's seconds of
        each phase in ``names``."""
        self._unspread: tuple[Any, ...] | None = (keys, counts, fused)
        self._names, self._seconds = names, seconds
        self._keys = self._counts = self._timed = np.empty((0, 0), dtype=np.int64)
        self._rows: list[LevelStats | None] = []

    def _ensure_rows(self) -> None:
        """The rows, each fused run spread over a row per level (once, when first read)."""
        if self._unspread is not None:
            self._keys, self._counts, self._timed = _spread(*self._unspread)
            self._rows = [None] * self._keys.shape[0]
            self._unspread = None

    def __len__(self) -> int:
        self._ensure_rows()
        return len(self._rows)

    @overload
    def __getitem__(self, index: int) -> LevelStats: ...

    @overload
    def __getitem__(self, index: slice) -> list[LevelStats]: ...

    def __getitem__(self, index: int | slice) -> LevelStats | list[LevelStats]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"level row {index} of {len(self)}")
        row = self._rows[index]
        if row is None:
            row = self._rows[index] = self._make(index)
        return row

    def _make(self, i: int) -> LevelStats:
        level, frontier, span, direction, in_run = self._keys[i].tolist()
        counts = dict(zip(COUNTERS, self._counts[i].tolist(), strict=True))
        entry = int(self._timed[i])
        timed = 0 <= entry < self._seconds.shape[0]
        times = dict(zip(self._names, self._seconds[entry].tolist(), strict=True)) if timed else {}
        way = _DIRECTIONS[direction].value
        return LevelStats(
            level, frontier, span=span, seconds=times, direction=way, fused=bool(in_run), **counts
        )
