"""Distributed validation of one shortest-path (SSSP) result: Graph500's SSSP rules, exact.

A result is this rank's distances (float64, ``NO_PATH`` where unreached) and predecessors
(global ids, ``UNREACHED`` where unreached, the source's own id at the source). ``w(u, v)`` is the
stored weight of the edge u -> v converted to float64 (1 on an unweighted graph), and every rule
compares exactly, in float64, as the search computes ``d(u) + w(u, v)``: there is no tolerance.

Checks, in this order, each ending in an agreement: if any rank found an offender, every rank
raises the same ``ValidationError`` naming the rule and the smallest offending global vertex id
(the machinery is ``distbfs.validate.common``'s, shared with the BFS checks):

- ``source``: d(source) == 0 and predecessors[source] == source.
- ``distance values``: every distance is finite and >= 0, or NO_PATH (no NaN, no negative).
- ``edge relaxation`` (Graph500 SSSP rule 3, and the edge part of rule 4): for every stored edge
  u -> v with d(u) finite, d(v) <= d(u) + w(u, v), so v is reached too. Offender: v (the smallest
  tail picks the message). Each rank walks its rows in chunks of whole rows and asks the owners of
  the heads for their distances (the distinct ids, one all-to-all-v, one reply).
- ``tree edges`` (rules 2, 4 and 5): every reached v other than the source has a predecessor p
  that is a vertex, is reached, with p -> v a stored edge and d(v) == d(p) + w(p, v); unreached
  vertices have UNREACHED. The edge is looked up in v's own row on an undirected graph (which
  holds p with the same weight), in p's row on p's owner on a directed one (a binary search within
  the sorted row; the weight of the slot found).
- ``no cycles`` (rule 1): the predecessors form no cycle (the BFS check's pointer jumping, from
  every reached vertex but the source). With positive weights a tight tree edge has
  d(p) < d(v) and cannot close a cycle; zero-weight edges can.
- ``reached set``, only when the BFS's reached set is given: d(v) is finite exactly where the
  BFS reached v.

Why these make the distances exact. Let D(v) be the smallest float64 path sum from the source to
v, ``(w1 + w2) + ...`` in path order, over all paths (what the search computes). Edge relaxation,
by induction along a path (float64 addition is monotone), gives d(v) <= D(v) for every vertex
reachable from the source, and a finite d there. Tree edges and no cycles make the predecessor
chain of every reached v end at the source along stored edges, with d(v) the float64 sum along
that path, so d(v) >= D(v); and only reachable vertices are reached. So d == D, the reached set is
exactly the vertices reachable from the source, and the predecessors form a shortest-path tree.

Invariants: every rank runs the same collectives in the same order whatever it finds; messages
are chosen by (vertex, kind, other endpoint), so the error is the same at every rank count. Only
scalars reach the host; per-edge temporaries are a few arrays of one chunk of edges
(``common.EDGE_CHUNK``), plus one float64 distance per vertex on several ranks.
"""

from __future__ import annotations

from typing import Any

from ..arrays import to_module
from ..comm.base import Communicator
from ..constants import NO_PATH, PATH_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ..graph import DistGraph
from ..partition import local_id, owner
from .common import (
    RULE_SOURCE,
    Candidate,
    _agree,
    _ask,
    _check_shapes,
    _check_source_is_vertex,
    _cycle_candidate,
    _first,
    _first_bad_edge,
    _Local,
    _per_edge,
    _tree_edges,
    _value_table,
)

RULE_DISTANCE_VALUES = "distance values"
RULE_EDGE_RELAXATION = "edge relaxation"
RULE_TREE_EDGES = "tree edges"
RULE_ACYCLIC = "no cycles"
RULE_REACHED_SET = "reached set"


def validate_sssp(
    graph: DistGraph,
    comm: Communicator,
    source: int,
    distances: Any,
    predecessors: Any,
    reached: Any | None = None,
) -> None:
    """Check one shortest-path result against the graph (collective).

    Parameters
    ----------
    graph : DistGraph
        The graph that was searched (this rank's rows, and their weights: None weighs 1 on every
        edge). The checks run in the array module of its arrays: numpy on the host, cupy on the
        GPU.
    comm : Communicator
        The job's communicator.
    source : int
        Global id of the search root.
    distances : array
        Shortest distances of this rank's owned vertices in local order (NO_PATH where not
        reached): a float array, numpy or cupy (moved to the graph's array module when it is the
        other one), compared as float64.
    predecessors : array
        Global parent id of each owned vertex (``source`` for the source, UNREACHED where not
        reached).
    reached : array, optional
        Whether the BFS from ``source`` reached each owned vertex (bool); when given, the reached
        set of the distances must be the same.

    Raises
    ------
    ValidationError
        On every rank, with the first failing rule's name and the smallest offending vertex over
        all ranks (see the module docstring for the rules and their order).
    ValueError
        On every rank, when some rank's arrays do not have one entry per owned vertex or the
        dtype of their kind (float distances, integer predecessors, bool reached set).
    """
    if predecessors is None:
        raise ValueError("predecessors: a shortest-path result is checked with its tree")
    local = _Local(graph, distances, predecessors)
    seen = None if reached is None else to_module(local.xp, reached)
    arrays = [
        ("distances", local.labels, "f", "a float array"),
        ("predecessors", local.preds, "iu", "an integer array"),
        ("reached", seen, "b", "a bool array"),
    ]
    _check_shapes(comm, graph, arrays)
    _check_source_is_vertex(graph, source)
    local.labels = local.labels.astype(PATH_DTYPE, copy=False)
    local.preds = local.preds.astype(PREDECESSOR_DTYPE, copy=False)
    _check_source(comm, graph, local, source)
    _check_distance_values(comm, local)
    _check_edge_relaxation(comm, graph, local)
    _check_tree_edges(comm, graph, local, source)
    jumping = (local.labels < NO_PATH) & (local.vertices != source)
    _agree(comm, RULE_ACYCLIC, _cycle_candidate(comm, local, graph, local.preds, jumping, 0))
    if seen is not None:
        _check_reached_set(comm, local, seen)


def _check_source(comm: Communicator, graph: DistGraph, local: _Local, source: int) -> None:
    candidate = None
    if owner(source, graph.size) == graph.rank:
        row = local_id(source, graph.size)
        distance, pred = float(local.labels[row]), int(local.preds[row])
        if distance != 0:
            candidate = (source, 0, 0, f"source {source} has distance {distance!r}, not 0")
        elif pred != source:
            candidate = (source, 1, 0, f"source {source} has predecessor {pred}, not itself")
    _agree(comm, RULE_SOURCE, candidate)


def _check_distance_values(comm: Communicator, local: _Local) -> None:
    bad = ~(local.labels >= 0)  # NaN compares False, -inf and negatives are below 0
    i = _first(local.xp, local.vertices, bad)
    candidate = None
    if i is not None:
        v, value = int(local.vertices[i]), float(local.labels[i])
        message = (
            f"vertex {v} has distance {value!r}, neither NO_PATH ({NO_PATH!r}) "
            "nor a finite distance >= 0"
        )
        candidate = (v, 0, 0, message)
    _agree(comm, RULE_DISTANCE_VALUES, candidate)


def _weight(local: _Local, slot: int) -> float:
    """The weight of local edge ``slot`` as float64 (1 on an unweighted graph)."""
    return 1.0 if local.weights is None else float(local.weights[slot])


def _check_edge_relaxation(comm: Communicator, graph: DistGraph, local: _Local) -> None:
    """d(v) <= d(u) + w(u, v) on every stored edge u -> v with d(u) finite (distance values
    already checked, so no NaN: ``>`` is the negation)."""
    xp, dist = local.xp, local.labels
    table = _value_table(comm, graph, local, dist)

    def bad_edges(offsets: Any, r0: int, r1: int, e0: int, e1: int, heads: Any) -> Any:
        limit = _per_edge(xp, offsets, dist[r0:r1], e1 - e0)  # d(u), then d(u) + w(u, v)
        from_reached = limit < NO_PATH
        limit += 1.0 if local.weights is None else local.weights[e0:e1].astype(xp.float64)
        return from_reached & (table[heads] > limit)

    worst = _first_bad_edge(xp, graph, local, bad_edges)
    candidate = None
    if worst is not None:
        v, u, slot = worst
        du, w, dv = float(dist[local_id(u, graph.size)]), _weight(local, slot), float(table[v])
        edge = f"edge {u} -> {v}" if graph.directed else f"edge {{{u}, {v}}}"
        if dv == NO_PATH:
            why = f"vertex {v} is unreached but {edge} weighs {w!r} and {u} has distance {du!r}"
        else:
            why = (
                f"vertex {v} has distance {dv!r} but {edge} weighs {w!r} and {u} has distance "
                f"{du!r}: {du!r} + {w!r} = {du + w!r}"
            )
        candidate = (v, 0, u, why)
    _agree(comm, RULE_EDGE_RELAXATION, candidate)


def _check_tree_edges(comm: Communicator, graph: DistGraph, local: _Local, source: int) -> None:
    """Every reached v != source has a reached parent p with p -> v stored and tight; unreached
    vertices have no predecessor. One candidate per kind of fault; (vertex, kind) picks."""
    xp, n, vertices, dist, preds = local.xp, graph.n, local.vertices, local.labels, local.preds
    reached = dist < NO_PATH
    has_pred = preds != UNREACHED
    is_vertex = (preds >= 0) & (preds < n)
    not_source = vertices != source
    tree = xp.flatnonzero(reached & is_vertex & not_source)
    parents = preds[tree]
    (parent_dist,) = _ask(comm, xp, parents, (), lambda loc: (dist[loc],))
    found, weights = _tree_edges(comm, graph, local, tree, parents, weighted=True)
    candidates = _pointer_faults(local, reached & not_source, has_pred, is_vertex, n)
    children, child_dist = vertices[tree], dist[tree]
    j = _first(xp, children, parent_dist == NO_PATH)
    if j is not None:
        v, p = int(children[j]), int(parents[j])
        why = f"vertex {v} has distance {float(child_dist[j])!r} but its parent {p} is unreached"
        candidates.append((v, 1, p, why))
    j = _first(xp, children, ~found)
    if j is not None:
        v, p = int(children[j]), int(parents[j])
        edge = f"{p} -> {v}" if graph.directed else f"{{{p}, {v}}}"
        candidates.append((v, 2, p, f"vertex {v} has parent {p} but the graph has no edge {edge}"))
    tight = child_dist == parent_dist + weights  # NaN weight where no edge: not tight
    j = _first(xp, children, found & ~tight)
    if j is not None:
        v, p, dv = int(children[j]), int(parents[j]), float(child_dist[j])
        dp, w = float(parent_dist[j]), float(weights[j])
        why = (
            f"vertex {v} has distance {dv!r} but its parent {p} has distance {dp!r} and the "
            f"tree edge weighs {w!r}: {dp!r} + {w!r} = {dp + w!r}"
        )
        candidates.append((v, 3, p, why))
    _agree(comm, RULE_TREE_EDGES, min(candidates) if candidates else None)


def _pointer_faults(
    local: _Local, needs_pred: Any, has_pred: Any, is_vertex: Any, n: int
) -> list[Candidate]:
    """Candidates of the vertices whose pointer alone is wrong: reached (not the source) without
    a predecessor or with one that is no vertex, and unreached with one."""
    xp, vertices, dist, preds = local.xp, local.vertices, local.labels, local.preds
    candidates = []
    i = _first(xp, vertices, needs_pred & ~has_pred)
    if i is not None:
        v = int(vertices[i])
        why = f"vertex {v} is reached (distance {float(dist[i])!r}) but has no predecessor"
        candidates.append((v, 0, 0, why))
    i = _first(xp, vertices, needs_pred & has_pred & ~is_vertex)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        why = f"vertex {v} has predecessor {p}, which is not a vertex (n = {n})"
        candidates.append((v, 0, p, why))
    i = _first(xp, vertices, ~(dist < NO_PATH) & has_pred)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        candidates.append((v, 0, p, f"vertex {v} is unreached but has predecessor {p}"))
    return candidates


def _check_reached_set(comm: Communicator, local: _Local, seen: Any) -> None:
    bad = (local.labels < NO_PATH) != seen
    i = _first(local.xp, local.vertices, bad)
    candidate = None
    if i is not None:
        v, distance = int(local.vertices[i]), float(local.labels[i])
        if distance < NO_PATH:
            why = f"vertex {v} has distance {distance!r} but the BFS did not reach it"
        else:
            why = f"vertex {v} is unreached (distance {distance!r}) but the BFS reached it"
        candidate = (v, 0, 0, why)
    _agree(comm, RULE_REACHED_SET, candidate)
