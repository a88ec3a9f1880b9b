"""``--plot FILE.png``: a search's levels as a picture, after Merrill et al.'s figure 3: per
level the vertex frontier and the edges the level read (expanded top-down, inspected bottom-up),
on a log scale, the levels that went bottom-up shaded and fused levels marked. matplotlib is the
optional extra ``[plot]``; without it ``--plot`` is refused before any work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..comm.base import Communicator
from ..engine.direction import BOTTOM_UP
from ..errors import InputError
from ..output import prepare_output, write_from_rank0

MISSING = "--plot needs matplotlib, the optional extra: pip install 'distbfs[plot]'"
"""The refusal when matplotlib is not installed."""


def check_plot(path: str | None, comm: Communicator) -> None:
    """Before any work: matplotlib importable and ``path``'s directory writable (``InputError``
    on every rank otherwise)."""
    if path is None:
        return
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise InputError(MISSING) from None
    prepare_output(path, comm, "--plot")


def plot_levels(path: str, levels: Sequence[Any], title: str, comm: Communicator) -> None:
    """Draw ``levels`` (``LevelStats`` rows) into the PNG ``path`` from rank 0, atomically
    (collective)."""

    def write(temp: str) -> None:
        import matplotlib

        matplotlib.use("Agg")  # no display: files only
        from matplotlib import pyplot

        figure, axes = pyplot.subplots(figsize=(8, 4.5), dpi=120)
        try:
            draw(axes, levels, title)
            figure.tight_layout()
            figure.savefig(temp, format="png")
        finally:
            pyplot.close(figure)

    write_from_rank0(path, comm, write)


def draw(axes: Any, levels: Sequence[Any], title: str) -> None:
    """The figure's content on matplotlib ``axes`` (zero counts left out of the log scale)."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    bottom_up = [row for row in levels if row.direction == BOTTOM_UP.value]
    for row in bottom_up:
        axes.axvspan(row.level - 0.5, row.level + row.span - 0.5, color="0.9", lw=0)
    x = [row.level for row in levels]
    axes.plot(x, [row.frontier or None for row in levels], "o-", label="vertex frontier")
    edges = [row.edges_inspected if row in bottom_up else row.edges_expanded for row in levels]
    axes.plot(x, [e or None for e in edges], "s--", label="edges read (expanded / inspected)")
    fused = [row for row in levels if row.fused]
    if fused:
        frontiers = [row.frontier or None for row in fused]
        axes.plot([row.level for row in fused], frontiers, "D", mfc="none", label="fused level")
    handles, _ = axes.get_legend_handles_labels()
    if bottom_up:
        handles.append(Patch(color="0.9", label="bottom-up level"))
    axes.set_yscale("log")
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("level")
    axes.set_ylabel("count")
    axes.set_title(title)
    axes.legend(handles=handles, loc="best", fontsize="small")
