"""The per-level table of ``bench`` and ``bfs`` (``distbfs.cli.tables``): bounded by default
(the heaviest levels alone, runs of the others merged, counters and times summed), every level
on request, and the numbers of a summary add up to those of the whole search."""

from __future__ import annotations

import pytest

from distbfs.backends.numpy import NumpyBackend
from distbfs.cli.tables import MAX_ROWS, format_level_table, summarize_levels
from distbfs.comm.single import SingleRankCommunicator
from distbfs.engine import COUNTERS, LevelStats
from distbfs.graph import build_graph

from graphs import grid, search


def level(k: int, frontier: int, direction: str = "top_down", span: int = 1) -> LevelStats:
    return LevelStats(
        level=k,
        frontier=frontier,
        edges_expanded=4 * frontier,
        items_sent=frontier,
        items_sent_remote=0,
        items_received=frontier,
        discovered=frontier + 1,
        span=span,
        seconds={"expand": 1e-6 * frontier, "contract": 2e-6},
        direction=direction,
        edges_inspected=4 * frontier,
    )


def totals(rows) -> dict:
    out = {name: sum(getattr(r, name) for r in rows) for name in COUNTERS}
    out["span"] = sum(r.span for r in rows)
    out["seconds"] = round(sum(sum(r.seconds.values()) for r in rows), 9)
    return out


def test_a_short_search_prints_every_level():
    levels = [level(k, 10 * k + 1) for k in range(MAX_ROWS)]
    assert summarize_levels(levels) == levels
    assert len(format_level_table(levels).splitlines()) == MAX_ROWS + 1


def test_a_long_search_is_summarized_and_adds_up():
    """A grid-like search: 8,191 levels whose frontier rises then falls."""
    levels = [level(k, min(k, 8190 - k) + 1) for k in range(8191)]
    rows = summarize_levels(levels)
    assert len(rows) <= MAX_ROWS
    assert totals(rows) == totals(levels)
    covered = [k for row in rows for k in range(row.level, row.level + row.span)]
    assert covered == list(range(8191))  # consecutive, each level once
    heaviest = max(levels, key=lambda lv: lv.edges_inspected)
    assert heaviest in rows  # the heaviest level keeps a row of its own
    text = format_level_table(levels)
    assert len(text.splitlines()) <= MAX_ROWS + 2
    assert "8191 rows merged" in text.splitlines()[-1]
    assert len(format_level_table(levels, every_level=True).splitlines()) == 8191 + 1


def test_runs_keep_their_direction_unless_directions_alternate_too_often():
    levels = [level(k, 5, "top_down" if (k // 100) % 2 else "bottom_up") for k in range(1000)]
    rows = summarize_levels(levels)
    assert len(rows) <= MAX_ROWS and {r.direction for r in rows} <= {"top_down", "bottom_up"}
    flipping = [level(k, 5, ("top_down", "bottom_up")[k % 2]) for k in range(1000)]
    rows = summarize_levels(flipping)
    assert len(rows) <= MAX_ROWS and totals(rows) == totals(flipping)
    assert "mixed" in {r.direction for r in rows}
    assert " mix " in format_level_table(flipping)


def test_fused_levels_merge_among_themselves():
    """A road-network-like search: fused runs between two-phase levels; each merged row is all
    fused (F) or all two-phase (TD), and the summary still adds up."""
    levels = [level(k, 3) for k in range(1000)]
    for k, row in enumerate(levels):
        row.fused = not 300 <= k < 320
    rows = summarize_levels(levels)
    assert totals(rows) == totals(levels)
    for row in rows:
        kinds = {lv.fused for lv in levels[row.level : row.level + row.span]}
        assert kinds == {row.fused}
    directions = [line.split()[1] for line in format_level_table(levels).splitlines()[1:-1]]
    assert set(directions) == {"F", "TD"}


@pytest.mark.parametrize("every_level", [False, True])
def test_table_of_a_real_search(every_level):
    """A numpy search of a 200 x 200 grid: 399 levels, summarized to the bound."""
    one, numpy = SingleRankCommunicator(), NumpyBackend()
    src, dst, n, _ = grid(200, 200)
    result = search(build_graph(one, src, dst, n, directed=False), 0, numpy, one)
    lines = format_level_table(result.levels, every_level=every_level).splitlines()
    assert len(lines) == (400 if every_level else len(summarize_levels(result.levels)) + 2)
    assert len(summarize_levels(result.levels)) <= MAX_ROWS
