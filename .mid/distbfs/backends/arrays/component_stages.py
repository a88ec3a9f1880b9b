"""The connected-components stages (Afforest, Sutton et al. 2018) of a backend, written once over
its array module (``components``: the state and the links; ``hook``: asking labels, hooking
roots, pointer jumping) and run by both backends: numpy on the host, CuPy on the device."""

from __future__ import annotations

from typing import Any

from ...comm.base import Bins
from ...graph import DistGraph
from . import components, hook
from .components import ComponentState, Links, Reached


class ArrayComponentStages:
    """The connected-components stages of a backend whose ``xp`` runs them, each its stage
    module's function on the backend's array module (the methods
    ``distbfs.engine.components.COMPONENT_METHODS`` names; ``distbfs.backends.base`` documents
    the interface)."""

    xp: Any

    def components_start(
        self, graph: DistGraph, resources: Any, seeded: bool = False
    ) -> ComponentState:
        return components.components_start(self.xp, graph, resources, seeded)

    def reached_bits(self, graph: DistGraph, distances: Any, resources: Any = None) -> Reached:
        return components.reached_bits(self.xp, graph, distances, rows=resources is not None)

    def seed_labels(self, graph: DistGraph, state: ComponentState, bits: Any, label: int) -> None:
        components.seed_labels(self.xp, state, bits, label)

    def sample_links(self, graph: DistGraph, in_graph: DistGraph, r: int) -> Links:
        return components.sample_links(self.xp, graph, in_graph, r)

    def remaining_links(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: ComponentState,
        giant: int,
        rows: Any = None,
    ) -> Links:
        return components.remaining_links(self.xp, graph, in_graph, state, giant, rows)

    def take_labels(
        self,
        graph: DistGraph,
        state: ComponentState,
        source: ComponentState,
        rows: Any,
        replica: bool,
    ) -> None:
        components.take_labels(self.xp, graph, state, source, rows, replica)

    def owned_labels(self, graph: DistGraph, state: ComponentState, ids: Any) -> Any:
        return components.owned_labels(self.xp, graph, state, ids)

    def component_roots(self, state: ComponentState) -> Any:
        return components.roots(self.xp, state)

    def label_queries(self, state: ComponentState, ids: Any, nbins: int) -> Bins:
        return hook.label_queries(self.xp, state, ids, nbins)

    def answer_labels(self, graph: DistGraph, state: ComponentState, received: Bins) -> Bins:
        return hook.answer_labels(self.xp, graph, state, received)

    def take_answers(self, state: ComponentState, answered: Bins, ids: Any) -> Any:
        return hook.take_answers(self.xp, state, answered, ids)

    def cross(self, state: ComponentState, links: Links, head_labels: Any) -> int:
        return hook.cross(self.xp, state, links, head_labels)

    def partition_hooks(self, state: ComponentState, links: Links, nbins: int) -> Bins:
        return hook.partition_hooks(self.xp, state, links, nbins)

    def apply_hooks(self, graph: DistGraph, state: ComponentState, received: Bins) -> int:
        return hook.apply_hooks(self.xp, graph, state, received)

    def jump_start(self, state: ComponentState) -> Any:
        return hook.jump_start(self.xp, state)

    def jump(self, state: ComponentState, parent_labels: Any) -> int:
        return hook.jump(self.xp, state, parent_labels)

    def jumping_labels(self, state: ComponentState) -> Any:
        return hook.jumping_labels(state)
