"""``NumpyBackend``: the host stages of one level (``distbfs.backends.base.Backend``) and of
shortest paths, each in the module named after it (the stages of connected components: the
array-module ones). The host has no launch cost to save, so it has no fused small-frontier
path (nor, on several ranks, a replicated or peer one): every level runs its stages."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...comm.base import Bins
from ...constants import UNLIMITED
from ...graph import DistGraph
from ...timing import HostTimer, NullTimer
from ..arrays import relax as array_relax
from ..arrays.component_stages import ArrayComponentStages
from ..arrays.lanes import ArrayLaneStages, LaneState
from ..base import EdgeFrontier, Inbound, PathState, Relaxations, SearchState
from . import bottom_up, contract, expand, filter_partition, lanes, relax, search
from . import inbound as inbound_stage

SEARCH_BYTES = {
    "bfs": (16, 48, 1),
    "paths": (28, 176, 16),
    "components": (16, 72, 0),
    "lanes": (24, 320, 0),
}
"""(bytes per local edge, per local vertex, per vertex of the whole graph) a traversal's peak
takes beside the graph, rounded up from tracemalloc on Kronecker scales 16 and 18 (one rank):
BFS with predecessors 13.5 B an edge and 40 a vertex (hybrid; direction-optimizing 1.5 and
47); shortest paths with the tree 20.5 B an edge of a chunk and 213-569 a vertex, plus the
all-gathered distances on several ranks (the tree recorded in the search, integer weights:
peaks 41.0 MB at scale 16, 63.2 MB at 18, within 28 B an edge of a chunk, 162 a vertex and
16 a vertex of the graph, ``sent`` and its tie keys); components 2.3 B an edge and 65 a
vertex where a giant component skips its edges, 45 B an edge, vertices included, on random
graphs without one (the estimate: 1.4x that there, 7x on Kronecker graphs); 64 lanes 19.5 B
an edge and 550 a vertex, 256 of them the distance matrix that ``bfs_many`` requires apart."""


BROADCAST_ROW_EDGES = 1 << 16
"""Several ranks: a search from one vertex of more out-edges starts with its row on every rank
(``SearchPlan.broadcast_rows``), each rank labeling its own neighbours of it, where the owner
would expand, filter and send them all alone."""


class NumpyBackend(ArrayComponentStages, ArrayLaneStages):
    """Vectorized numpy stages; the reference every other backend is compared with."""

    name = "numpy"
    xp = np
    small_frontier_limit = 0  # the host stages have no launch cost to save
    replica_limit_bytes = 0  # CPU ranks split a search: its striped levels are the reference
    peer_levels = False  # nor fused levels through peer memory
    broadcast_row_edges = BROADCAST_ROW_EDGES

    def search_bytes(self, graph: DistGraph, traversal: str) -> int:
        """Host bytes a ``traversal`` ("bfs", "paths", "components" or "lanes") of ``graph``
        takes beside the graph on this rank, at most (``SEARCH_BYTES``)."""
        per_edge, per_vertex, per_graph_vertex = SEARCH_BYTES[traversal]
        edges = graph.num_local_edges
        if traversal == "paths":  # relaxed and tree-read in chunks
            edges = min(edges, relax.RELAX_CHUNK_EDGES)
        return per_edge * edges + per_vertex * graph.nlocal + per_graph_vertex * graph.n

    def prepare(self, graph: DistGraph) -> search.HostGraphResources:
        return search.prepare(graph)

    def start(
        self, graph: DistGraph, sources: Any, predecessors: bool, resources: Any
    ) -> SearchState:
        return search.start(graph, sources, predecessors, resources)

    def expansion_strips(self, graph: DistGraph, state: SearchState) -> int:
        return 1  # host memory: the whole edge frontier at once

    def expand(self, graph: DistGraph, state: SearchState, strip: int = 0) -> EdgeFrontier:
        return expand.expand(graph, state, strip)

    def filter_partition(self, state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins:
        return filter_partition.filter_partition(state, edges, nbins)

    def contract_local(self, graph: DistGraph, state: SearchState, bins: Bins, level: int) -> None:
        """Nothing: on the host the exchange has no device time to overlap."""

    def contract(self, graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
        contract.contract(graph, state, received, level)

    def long_rows(
        self, graph: DistGraph, resources: search.HostGraphResources, limit: int
    ) -> dict[int, int]:
        return search.long_rows(graph, resources, limit)

    def source_row(self, graph: DistGraph, state: SearchState, edges: int) -> np.ndarray:
        return expand.source_row(graph, state, edges)

    def contract_row(
        self, graph: DistGraph, state: SearchState, row: np.ndarray, parent: int, level: int
    ) -> None:
        contract.contract_row(graph, state, row, parent, level)

    def frontier_edges(self, graph: DistGraph, state: SearchState) -> int:
        return bottom_up.frontier_edges(graph, state)

    def unexplored(self, graph: DistGraph, state: SearchState) -> tuple[int, int]:
        return bottom_up.unexplored(graph, state)

    def frontier_bitmap(self, graph: DistGraph, state: SearchState) -> np.ndarray:
        return bottom_up.frontier_bitmap(graph, state)

    def row_frontier(
        self, graph: DistGraph, state: SearchState, row: np.ndarray, source: int
    ) -> np.ndarray:
        return bottom_up.row_frontier(graph, row, source)

    def mark_visited(self, graph: DistGraph, state: SearchState, frontier: np.ndarray) -> None:
        bottom_up.mark_visited(graph, state, frontier)

    def inbound_frontier(
        self, graph: DistGraph, inbound: Inbound, state: SearchState, frontier: np.ndarray
    ) -> None:
        inbound_stage.inbound_frontier(graph, inbound, state, frontier)

    def bottom_up(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: SearchState,
        frontier: np.ndarray,
        level: int,
    ) -> int:
        return bottom_up.bottom_up(graph, in_graph, state, frontier, level)

    def run_small_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        *,
        max_levels: int = UNLIMITED,
    ) -> int:
        return 0

    def fused_level_log(self, state: SearchState) -> None:
        return None  # no fused levels

    # -- shortest paths (delta-stepping): numpy's scatter-mins where the array stages sort ------

    def path_start(
        self,
        graph: DistGraph,
        source: int,
        predecessors: bool,
        resources: Any,
        integers: bool = False,
        tree: bool = False,
    ) -> PathState:
        return relax.path_start(graph, source, predecessors, resources, integers and tree)

    def path_finish(self, state: PathState) -> None:
        """Nothing to do: numpy's stages keep float64 distances throughout."""

    def relax(
        self, graph: DistGraph, state: PathState, vertices: Any, delta: float, heavy: bool
    ) -> Relaxations:
        return relax.relax(graph, state, vertices, delta, heavy)

    def partition_min(self, state: PathState, requests: Relaxations, nbins: int) -> Bins:
        return filter_partition.partition_min(state, requests, nbins)

    def contract_min(self, graph: DistGraph, state: PathState, received: Bins, end: float) -> int:
        return contract.contract_min(graph, state, received, end)

    def next_bucket(self, state: PathState) -> float:
        return relax.next_bucket(state)

    def bucket_members(self, state: PathState, end: float) -> np.ndarray:
        return relax.bucket_members(state, end)

    def settle(self, state: PathState, members: list[Any]) -> np.ndarray:
        return relax.settle(state, members)

    def row_edges(self, graph: DistGraph, state: PathState, vertices: Any) -> int:
        return relax.row_edges(graph, vertices)

    def path_words(self, state: PathState) -> np.ndarray:
        return state.distances

    def pull_requests(
        self, graph: DistGraph, state: PathState, everywhere: Any, lower: float, end: float
    ) -> Relaxations:
        return relax.pull_requests(graph, state, everywhere, lower, end)

    def tree_start(self, state: PathState, distances: Any) -> np.ndarray:
        return array_relax.tree_start(np, state, distances)

    def tree_tails(self, state: PathState, reached: Any, k: int) -> np.ndarray:
        return array_relax.tree_tails(np, state, reached, k)

    def tight_requests(
        self, graph: DistGraph, state: PathState, vertices: Any, k: int, everywhere: Any
    ) -> Relaxations:
        return relax.tight_requests(graph, state, vertices, k, everywhere)

    def tree_unresolved(self, state: PathState) -> int:
        return array_relax.tree_unresolved(np, state)

    def tree_finish(self, state: PathState) -> np.ndarray:
        return array_relax.tree_finish(state)

    def to_host(self, array: Any) -> np.ndarray:
        return np.asarray(array)

    def make_timer(self, enabled: bool) -> HostTimer | NullTimer:
        return HostTimer() if enabled else NullTimer()

    # -- batched BFS (bit lanes; ``distbfs.traversals.batched``) -----------------------------

    def push_lanes(self, graph: DistGraph, state: LaneState) -> None:
        lanes.push_lanes(graph, state)

    def contract_lanes(self, graph: DistGraph, state: LaneState, received: Bins) -> None:
        lanes.contract_lanes(graph, state, received)

    def frontier_words(self, graph: DistGraph, state: LaneState) -> np.ndarray:
        return lanes.frontier_words(graph, state)

    def pull_lanes(self, in_graph: DistGraph, state: LaneState, frontier: Any) -> None:
        lanes.pull_lanes(in_graph, state, frontier)

    def settle_lanes(self, graph: DistGraph, state: LaneState, level: int) -> int:
        return lanes.settle_lanes(graph, state, level)
