"""The backend interface: an array module plus the stage functions of one BFS level.

Stages follow Merrill et al. 2012, section 6.1, and the level loop in ``distbfs.bfs`` calls them
in this order: ``expand`` (vertex frontier -> edge frontier), ``filter_partition`` (visited-mask
and duplicate culling, binning by owner), [exchange by the communicator], ``contract`` (status
lookup against owned labels; labels and the next vertex frontier). ``numpy`` implements them on
the host; ``cuda`` with CUDA kernels from ``kernels/``. Which backend runs is decided in exactly
one place, ``distbfs.backends.get_backend``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from ..comm.base import Bins
from ..graph import DistGraph


@dataclass
class EdgeFrontier:
    """Neighbours gathered by expansion: global ids, and the expanding vertex of each (preds)."""

    vertices: Any
    parents: Any | None = None

    @property
    def size(self) -> int:
        return int(self.vertices.shape[0])


@dataclass
class SearchState:
    """Everything one search keeps on one rank between levels.

    ``labels``: distance of each owned vertex (UNREACHED until labeled). ``preds``: global id of
    the parent of each owned vertex, or None when predecessors are not kept. ``visited_mask``:
    best-effort mask over all n vertices of those this rank knows are labeled or already sent
    (a cache in front of the owners' labels). ``vertex_frontier``: local ids of the vertices
    labeled at the last level. ``frontier_size``: its length, a host int.
    """

    labels: Any
    preds: Any | None
    visited_mask: Any
    vertex_frontier: Any
    frontier_size: int
    scratch: dict[str, Any]


class Backend(Protocol):
    """What a backend provides to the level loop."""

    name: str
    xp: Any
    small_frontier_limit: int
    """Largest vertex frontier ``run_small_levels`` should take under the hybrid strategy; 0 when
    the backend has no fused small-frontier path."""

    def start(self, graph: DistGraph, source: int, predecessors: bool) -> SearchState:
        """Labels all UNREACHED, the source labeled 0 (and its own parent) on its owner."""
        ...

    def expand(self, graph: DistGraph, state: SearchState) -> EdgeFrontier:
        """Gather the neighbours of every vertex of the vertex frontier."""
        ...

    def filter_partition(self, state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins:
        """Drop neighbours marked in the visited mask and local duplicates; bin by owner."""
        ...

    def contract(self, graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
        """Label the received vertices not yet labeled with ``level``; make them the frontier."""
        ...

    def run_small_levels(
        self, graph: DistGraph, state: SearchState, level: int, max_frontier: int
    ) -> int:
        """Contract-expand (sections 5.2, 5.4): run levels in one fused kernel while the frontier
        holds at most ``max_frontier`` vertices, one rank only; return how many levels ran."""
        ...

    def make_timer(self, enabled: bool) -> Any:
        """A phase timer suited to this backend (see ``distbfs.timing``)."""
        ...

    def to_host(self, array: Any) -> Any:
        """A numpy copy (or view) of a backend array."""
        ...
