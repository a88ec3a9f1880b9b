"""``connected_components``: the connected components of a ``Graph`` (weakly connected on a
directed graph) by Afforest (Sutton, Ben-Nun & Barak, IPDPS 2018; ``distbfs.traversals.cc``),
returning a ``ComponentsResult`` in global vertex order.

Labels are canonical: every vertex's label is the smallest vertex id of its component (an
isolated vertex is its own label), int64, the same on every backend and rank count. The count
and the size of every component come with them. The run's time goes from just before the first
link until the labels are in memory; the sizes, the gathering and the validation come after.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..engine.components import RoundStats
from ..errors import InvalidArgumentType
from ..partition import bin_by_owner
from ..traversals.cc import round_table, run_rounds
from .arguments import check_bool
from .graph import Graph
from .search import LocalPart, gather_striped, later_owned_ids, start_clock, stop_clock


@dataclass
class ComponentsResult(LocalPart):
    """The result of one connected-components run.

    Attributes
    ----------
    labels : array of int64 or None
        The label of every vertex in global order: the smallest vertex id of its component, on
        every rank; numpy, or cupy on the cuda backend. None when ``gather=False``.
    local_labels, local_vertices : array of int64
        This rank's owned vertices only, in local order, and their global ids (made when
        first read).
    count : int
        Number of components (isolated vertices included).
    component_labels, sizes : array of int64
        Every component's label (ascending) and its number of vertices, on every rank, in the
        backend's array module.
    giant : int
        The label of the component whose vertices skipped their remaining edges: the one a BFS
        from the highest-degree vertex reached on a dense graph, else the largest intermediate
        one Afforest found by sampling (-1 for an empty graph).
    rounds : list of RoundStats
        Per-round counters summed over ranks (and per-phase seconds with ``timing=True``).
    seconds : float
        Wall time of the run (slowest rank).
    edges : int
        The graph's edges (undirected edges once): what ``teps`` divides.
    validated : bool
        Whether the labels were checked (``distbfs.validate.validate_components``).
    """

    labels: Any
    local_labels: Any
    count: int
    component_labels: Any
    sizes: Any
    giant: int = -1
    rounds: list[RoundStats] = field(default_factory=list)
    seconds: float = 0.0
    edges: int = 0
    validated: bool = False

    @property
    def largest(self) -> tuple[int, int]:
        """(label, size) of the largest component, the smallest label among equal sizes;
        (-1, 0) for a graph without vertices."""
        if self.count == 0:
            return -1, 0
        i = int(self.sizes.argmax())  # the first of the largest: the smallest label
        return int(self.component_labels[i]), int(self.sizes[i])

    @property
    def teps(self) -> float:
        """The graph's edges per second of the run (``edges / seconds``)."""
        if self.seconds > 0:
            return self.edges / self.seconds
        return float("inf") if self.edges else 0.0


def connected_components(
    graph: Graph, *, gather: bool = True, validate: bool = False, timing: bool = False
) -> ComponentsResult:
    """The connected components of ``graph`` (collective: every rank calls it alike); weakly
    connected components on a directed graph.

    Parameters
    ----------
    graph : Graph
    gather : bool, default True
        Assemble ``labels`` in global order on every rank.
    validate : bool, default False
        Check the labels (``distbfs.validate.validate_components``): every edge joins equal
        labels, every label is the smallest vertex carrying it.
    timing : bool, default False
        Record per-phase seconds in ``rounds[i].seconds``.

    Raises
    ------
    TypeError
        Bad arguments (raised on every rank).
    ValidationError
        ``validate=True`` and the labels break a rule.
    """
    if not isinstance(graph, Graph):
        raise InvalidArgumentType(f"graph: expected a distbfs.Graph, got {type(graph).__name__}")
    gather, validate = check_bool("gather", gather), check_bool("validate", validate)
    timing = check_bool("timing", timing)
    comm, backend, dist = graph.comm, graph.backend, graph.dist
    plan = graph.components_plan()
    timer = backend.make_timer(timing)
    start = start_clock(comm, backend)
    run = run_rounds(plan, timer=timer)
    seconds = stop_clock(comm, backend, start)
    search = round_table(run, timer)  # statistics: after the run's time
    if validate:
        from ..validate import validate_components

        validate_components(dist, comm, search.labels)
    component_labels, sizes = component_sizes(graph, search)
    xp = backend.xp
    return ComponentsResult(
        labels=gather_striped(comm, search.labels, dist.n, xp) if gather else None,
        local_labels=search.labels,
        owned=later_owned_ids(dist, xp),
        count=int(component_labels.shape[0]),
        component_labels=component_labels,
        sizes=sizes,
        giant=search.giant,
        rounds=search.rounds,
        seconds=seconds,
        edges=graph.num_undirected_edges,
        validated=validate,
    )


def component_sizes(graph: Graph, search: Any) -> tuple[Any, Any]:
    """(labels, sizes) of every component, ascending by label, on every rank (collective). A
    component's size is its root (its smallest vertex, its own label) and the vertices that
    carry its label besides: each rank counts its vertices off their root by label
    (``member_counts``), the counts go to the labels' owners (one all-to-all-v), each owner adds
    them to its roots' one, and every rank's roots with their sizes are all-gathered."""
    comm, dist, backend = graph.comm, graph.dist, graph.backend
    xp = backend.xp
    owned = dist.owned_vertices(xp)
    found, counts = member_counts(xp, search.labels, owned, search.giant)
    if comm.size > 1:
        offsets, found, (counts,) = bin_by_owner(xp, found, comm.size, counts)
        _, (found, counts) = comm.alltoallv(offsets, found, counts)
    ids = owned[backend.component_roots(search.state)]  # ascending
    sizes = xp.ones(ids.shape[0], dtype=xp.int64)
    if found.shape[0]:  # counts from several ranks for one root add up
        weights = counts.astype(xp.float64)  # exact below 2**53 vertices
        at = xp.searchsorted(ids, found)
        sizes += xp.bincount(at, weights=weights, minlength=ids.shape[0]).astype(xp.int64)
    ids, sizes = comm.allgather_array(ids), comm.allgather_array(sizes)
    if comm.size > 1:  # the ranks' ids interleave (vertex v is rank v % size's): by id
        dense = xp.zeros(dist.n, dtype=xp.int64)
        dense[ids] = sizes  # every size >= 1
        ids = xp.flatnonzero(dense)
        sizes = dense[ids]
    return ids, sizes


def member_counts(xp: Any, labels: Any, owned: Any, giant: int) -> tuple[Any, Any]:
    """The labels that this rank's vertices off their component's root carry (``labels`` not
    ``owned``, their global ids), each once, and how many carry each (int64 both, in ``xp``).
    The ``giant`` label (-1: none) is counted apart and the rest by a sort of the few left: on a
    Kronecker graph the giant component holds most vertices and nearly every other component
    is one vertex, its own root. (A bincount over every label serialises tens of millions of
    atomic adds on the giant's one slot and passes over arrays of n: 55-70 ms at kron27 on a
    GPU, ten times the run; benchmarks/RESULTS.md, "a connected-components result's sizes".)"""
    members = labels[labels != owned]
    rest = members[members != giant] if giant >= 0 else members
    found, counts = xp.unique(rest, return_counts=True)
    found, counts = found.astype(xp.int64, copy=False), counts.astype(xp.int64, copy=False)
    giants = members.shape[0] - rest.shape[0]
    if giants:
        found = xp.concatenate([found, xp.full(1, giant, dtype=xp.int64)])
        counts = xp.concatenate([counts, xp.full(1, giants, dtype=xp.int64)])
    return found, counts
