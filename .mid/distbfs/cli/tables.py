"""The per-level table that ``bench`` and ``bfs`` print, bounded by default.

A search of a road network or a mesh has thousands of levels; printed one a row, the table
buries everything else. The summary keeps the levels that carry the work (the most edges
inspected, else the largest frontiers) as rows of their own and merges each run of the other
levels, consecutive, of one direction and all fused or none, into one row. A row of several
levels (``a-b``) sums their counters and phase times and shows its first level's frontier. The
direction column reads TD (top-down), BU (bottom-up) or F (top-down, in a fused run, whose
time is on its first level). ``every_level`` prints every row the search returned.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ..engine.levels import COUNTERS, LevelStats

MAX_ROWS = 40
"""Rows of the summary table (about: a search of few levels prints all of them)."""

MIXED = "mixed"
"""Direction of a merged row whose levels ran both ways (only when the directions alternate
too often for runs of one direction to fit the table)."""

PHASE_ORDER = (
    "contract_expand",
    "expand",
    "filter_partition",
    "exchange",
    "contract",
    "bitmap",
    "bottom_up",
    "termination",
)


def format_level_table(
    levels: Sequence[LevelStats], *, every_level: bool = False, max_rows: int = MAX_ROWS
) -> str:
    """A text table of per-level counters and per-phase milliseconds: every level, or the
    summary of at most about ``max_rows`` rows (``summarize_levels``)."""
    rows = list(levels) if every_level else summarize_levels(levels, max_rows)
    names = [p for p in PHASE_ORDER if any(p in lv.seconds for lv in rows)]
    names += sorted({k for lv in rows for k in lv.seconds} - set(names))
    header = ["level", "dir", "frontier", "edges expanded", "edges inspected", "sent remote"]
    header += ["discovered"]
    header += [f"{name} ms" for name in names]
    cells = [
        [
            str(lv.level) if lv.span == 1 else f"{lv.level}-{lv.level + lv.span - 1}",
            "F" if lv.fused else {"bottom_up": "BU", "top_down": "TD"}.get(lv.direction, "mix"),
            f"{lv.frontier:,}",
            f"{lv.edges_expanded:,}",
            f"{lv.edges_inspected:,}",
            f"{lv.items_sent_remote:,}",
            f"{lv.discovered:,}",
        ]
        + [f"{lv.seconds.get(name, 0.0) * 1e3:.3f}" for name in names]
        for lv in rows
    ]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(header)
    ]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in cells]
    if len(rows) < len(levels):
        lines.append(f"({len(levels)} rows merged into {len(rows)}; --levels all prints each)")
    return "\n".join(lines)


def summarize_levels(levels: Sequence[LevelStats], max_rows: int = MAX_ROWS) -> list[LevelStats]:
    """At most about ``max_rows`` rows: all of them when that few; otherwise the heaviest
    levels alone and the runs between them merged, fewer heavy ones until the table fits;
    as a last resort runs of both directions merged into equal groups."""
    if len(levels) <= max_rows:
        return list(levels)
    keep = max_rows // 2
    while True:
        rows = _merge_runs(levels, _heaviest(levels, keep))
        if len(rows) <= max_rows or keep == 0:
            break
        keep //= 2
    if len(rows) <= max_rows:
        return rows
    group = -(-len(levels) // max_rows)
    return [_merged(levels[i : i + group]) for i in range(0, len(levels), group)]


def _heaviest(levels: Sequence[LevelStats], count: int) -> set[int]:
    """Positions of the ``count`` levels with the most work (edges inspected, then frontier)."""
    order = sorted(
        range(len(levels)),
        key=lambda i: (levels[i].edges_inspected, levels[i].frontier),
        reverse=True,
    )
    return set(order[:count])


def _merge_runs(levels: Sequence[LevelStats], alone: set[int]) -> list[LevelStats]:
    """Every level in ``alone`` as its own row; each run of the others that are consecutive,
    of one direction and alike fused or not merged into one row."""
    rows: list[LevelStats] = []
    run: list[LevelStats] = []
    for i, level in enumerate(levels):
        kind = (level.direction, level.fused)
        if run and (i in alone or kind != (run[-1].direction, run[-1].fused)):
            rows.append(_merged(run))
            run = []
        if i in alone:
            rows.append(level)
        else:
            run.append(level)
    if run:
        rows.append(_merged(run))
    return rows


def _merged(run: Sequence[LevelStats]) -> LevelStats:
    """One row for consecutive rows: counters and seconds summed, the first frontier."""
    if len(run) == 1:
        return run[0]
    counts = {name: sum(getattr(lv, name) for lv in run) for name in COUNTERS}
    seconds: dict[str, float] = {}
    for lv in run:
        for phase, value in lv.seconds.items():
            seconds[phase] = seconds.get(phase, 0.0) + value
    directions = {lv.direction for lv in run}
    direction = run[0].direction if len(directions) == 1 else MIXED
    span = sum(lv.span for lv in run)
    fused = all(lv.fused for lv in run)
    return replace(run[0], span=span, seconds=seconds, direction=direction, fused=fused, **counts)
