"""Stages written once over the array module, numpy or cupy: the numpy backend runs them on the
host, the CUDA backend on the device (CuPy's sorts, scans and gathers) until a stage has
kernels of its own. One module per stage: ``relax`` (and the state of a shortest-path search),
``filter_partition`` (``partition_min``), ``contract`` (``contract_min``); ``ops`` holds the
array primitives they share."""

from __future__ import annotations

from typing import Any

from ...comm.base import Bins
from ...graph import DistGraph
from ..base import PathState, Relaxations
from . import contract, filter_partition, relax


class ArrayPathStages:
    """The shortest-path stages (delta-stepping) of a backend whose ``xp`` runs them: the
    backend interface's path methods (``distbfs.backends.base``), each its stage module's
    function on the backend's array module."""

    xp: Any

    def path_start(
        self,
        graph: DistGraph,
        source: int,
        predecessors: bool,
        resources: Any,
        integers: bool = False,
        tree: bool = False,
    ) -> PathState:
        return relax.path_start(self.xp, graph, source, predecessors, resources)

    def path_finish(self, state: PathState) -> None:
        """Nothing to do: the array stages keep float64 distances throughout."""

    def relax(
        self, graph: DistGraph, state: PathState, vertices: Any, delta: float, heavy: bool
    ) -> Relaxations:
        return relax.relax(self.xp, graph, state, vertices, delta, heavy)

    def partition_min(self, state: PathState, requests: Relaxations, nbins: int) -> Bins:
        return filter_partition.partition_min(self.xp, state, requests, nbins)

    def contract_min(self, graph: DistGraph, state: PathState, received: Bins, end: float) -> int:
        return contract.contract_min(self.xp, graph, state, received, end)

    def next_bucket(self, state: PathState) -> float:
        return relax.next_bucket(self.xp, state)

    def bucket_members(self, state: PathState, end: float) -> Any:
        return relax.bucket_members(state, end)

    def settle(self, state: PathState, members: list[Any]) -> Any:
        return relax.settle(self.xp, state, members)

    def tree_start(self, state: PathState, distances: Any) -> Any:
        return relax.tree_start(self.xp, state, distances)

    def tree_tails(self, state: PathState, reached: Any, k: int) -> Any:
        return relax.tree_tails(self.xp, state, reached, k)

    def tight_requests(
        self, graph: DistGraph, state: PathState, vertices: Any, k: int, everywhere: Any
    ) -> Relaxations:
        return relax.tight_requests(self.xp, graph, state, vertices, k, everywhere)

    def tree_unresolved(self, state: PathState) -> int:
        return relax.tree_unresolved(self.xp, state)

    def tree_finish(self, state: PathState) -> Any:
        return relax.tree_finish(state)
