"""Distributed validation of one BFS result: exact levels and the five Graph500 rules.

Every rank checks what it owns; an edge check asks the owner of the far endpoint for its label
(one all-to-all-v of the distinct ids needed, one reply). Condition (B) below needs no scatter-min
over edges: the edge holders push the distinct ids of the vertices they saw entered from one level
up to their owners (a third all-to-all-v). Checks run in a fixed order and each
ends with an agreement: if any rank found an offender, every rank raises the same
``ValidationError`` naming the rule and the smallest offending global vertex id.

Order and meaning of the checks (levels are the ``distances``; "reached" means level != UNREACHED):

- ``source``: distances[source] == 0 and, with predecessors, predecessors[source] == source.
- ``distances``: every value is UNREACHED or in [0, n), and the values are exact BFS levels:
  (A) for every edge u -> w with u reached, w is reached and level(w) <= level(u) + 1 (undirected
  graphs store both directions, so this is the symmetric |level(u) - level(w)| <= 1 and "no edge
  joins a reached and an unreached vertex"); (B) every reached w other than the source has an
  in-edge from level(w) - 1. (A) makes each level at most the true distance, (B) at least it.
  The offender of (A) is w, the head of the edge; of (B) the vertex itself. Since this check runs
  first, Graph500 rule 3 (edge levels) and the edge part of rule 4 (spans component) are settled
  here; a failure of (A) names the Graph500 rule it also breaks.
- with predecessors (checked against the now exact levels):
  rule 1 (no cycles): every predecessor is UNREACHED or a vertex id, and the parent pointers of
  the reached vertices form no cycle. Distributed pointer jumping: every unresolved vertex asks the
  owner of its current ancestor for that ancestor's ancestor; a vertex is resolved once its
  ancestor is, the roots being the source and vertices whose parent pointer ends the chain in an
  error left to rules 2 and 4. After ceil(log2 n) + 2 rounds the unresolved vertices lie on or
  hang from a cycle.
  rule 2 (tree edge levels): the parent of every reached v != source is reached and
  level(v) == level(parent) + 1; with rule 1 this makes every vertex's depth in the tree equal to
  its level.
  rule 4 (spans component): reached vertices other than the source have a predecessor, unreached
  ones have UNREACHED.
  rule 5 (tree edges in graph): (parent(v), v) is an edge: searched in v's own row for undirected
  graphs, in the parent's row on its owner for directed ones (binary search on row * n + column).

Invariants: every rank runs the same collectives in the same order whatever it finds; messages
are chosen by (vertex, kind, other endpoint), so the error is the same at every rank count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .comm.base import Communicator
from .constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from .errors import ValidationError
from .graph import DistGraph
from .partition import bin_by_owner, local_id, owner

RULE_SOURCE = "source"
RULE_DISTANCES = "distances"
RULE_NO_CYCLES = "rule 1 (no cycles)"
RULE_TREE_EDGE_LEVELS = "rule 2 (tree edge levels)"
RULE_EDGE_LEVELS = "rule 3 (edge levels)"
RULE_SPANS_COMPONENT = "rule 4 (spans component)"
RULE_TREE_EDGES_IN_GRAPH = "rule 5 (tree edges in graph)"

# A candidate offender: (vertex, kind, other vertex, message); the smallest over ranks wins.
Candidate = tuple[int, int, int, str]


def as_host(array: Any) -> np.ndarray:
    """A numpy view or copy of a numpy or cupy array."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def _agree(comm: Communicator, rule: str, candidate: Candidate | None) -> None:
    """Raise the smallest candidate over all ranks as ``ValidationError`` on every rank."""
    found = [c for c in comm.allgather_object(candidate) if c is not None]
    if found:
        vertex, _, _, message = min(found)
        raise ValidationError(rule, vertex, message)


def _first(vertices: np.ndarray, bad: np.ndarray) -> int | None:
    """Index of the smallest offending vertex, or None when ``bad`` is all False."""
    idx = np.flatnonzero(bad)
    return int(idx[np.argmin(vertices[idx])]) if idx.size else None


def _ask(
    comm: Communicator,
    ids: np.ndarray,
    extra: tuple[np.ndarray, ...],
    answer: Callable[..., tuple[np.ndarray, ...]],
) -> tuple[np.ndarray, ...]:
    """Send query i (``ids[i]`` and ``extra[j][i]``) to the owner of ``ids[i]``; get answers back.

    The owner calls ``answer(local ids, *extra)`` on everything it received and returns arrays of
    the same length; they come back in query order. One all-to-all-v each way.
    """
    if comm.size == 1:
        return answer(ids, *extra)
    positions = np.arange(ids.shape[0], dtype=np.int64)
    offsets, ids, (positions, *extra) = bin_by_owner(np, ids, comm.size, positions, *extra)
    recv_offsets, (recv_ids, *recv_extra) = comm.alltoallv(offsets, ids, *extra)
    replies = answer(local_id(recv_ids, comm.size), *recv_extra)
    _, replies = comm.alltoallv(recv_offsets, *replies)
    out = []
    for reply in replies:
        ordered = np.empty_like(reply)
        ordered[positions] = reply
        out.append(ordered)
    return tuple(out)


def _push(comm: Communicator, ids: np.ndarray) -> np.ndarray:
    """Send each global id to its owner; return the local ids this rank received."""
    if comm.size == 1:
        return ids
    offsets, ids, _ = bin_by_owner(np, ids, comm.size)
    _, (received,) = comm.alltoallv(offsets, ids)
    return local_id(received, comm.size)


def _labels_of(
    comm: Communicator, graph: DistGraph, labels: np.ndarray, w: np.ndarray
) -> np.ndarray:
    """Level of every global vertex in ``w`` (may repeat): distinct ids asked of their owners."""
    if comm.size == 1:
        return labels[w]
    needed = np.zeros(graph.n, dtype=np.bool_)
    needed[w] = True
    ids = np.flatnonzero(needed)
    (answers,) = _ask(comm, ids, (), lambda loc: (labels[loc],))
    table = np.empty(graph.n, dtype=labels.dtype)
    table[ids] = answers
    return table[w]


class _Local:
    """This rank's host view of the graph and of the result (numpy arrays)."""

    def __init__(self, graph: DistGraph, distances: Any, predecessors: Any) -> None:
        self.row_offsets = as_host(graph.row_offsets).astype(np.int64, copy=False)
        self.columns = as_host(graph.column_indices)
        self.vertices = graph.owned_vertices(np)
        self.degrees = np.diff(self.row_offsets)
        self.labels = as_host(distances)
        self.preds = None if predecessors is None else as_host(predecessors)


def validate(
    graph: DistGraph,
    comm: Communicator,
    source: int,
    distances: Any,
    predecessors: Any | None = None,
) -> None:
    """Check one BFS result against the graph (collective).

    Parameters
    ----------
    graph : DistGraph
        The graph that was searched (this rank's rows).
    comm : Communicator
        The job's communicator.
    source : int
        Global id of the search root.
    distances : array
        Levels of this rank's owned vertices in local order (UNREACHED where not reached).
    predecessors : array, optional
        Global parent id of each owned vertex (``source`` for the source, UNREACHED where not
        reached). When given, Graph500 rules 1 to 5 are checked as well.

    Raises
    ------
    ValidationError
        On every rank, with the first failing check's rule name and the smallest offending
        vertex over all ranks (see the module docstring for the order of the checks).
    ValueError
        On every rank, when some rank's arrays do not have one entry per owned vertex.
    """
    n = graph.n
    local = _Local(graph, distances, predecessors)
    _check_shapes(comm, graph, local)
    if not 0 <= source < n:
        message = f"source {source} is not a vertex (n = {n})"
        raise ValidationError(RULE_SOURCE, int(source), message)
    _check_source(comm, graph, local, source)
    _check_distance_values(comm, graph, local)
    local.labels = local.labels.astype(DISTANCE_DTYPE if n < 2**31 else np.int64, copy=False)
    _check_exact_levels(comm, graph, local, source)
    if local.preds is None:
        return
    _check_predecessors(comm, graph, local, source)


def _check_shapes(comm: Communicator, graph: DistGraph, local: _Local) -> None:
    problem = None
    for name, array in (("distances", local.labels), ("predecessors", local.preds)):
        if array is None:
            continue
        if array.shape != (graph.nlocal,) or array.dtype.kind not in "iu":
            problem = (
                f"rank {graph.rank}: {name} must be an integer array of the {graph.nlocal} owned "
                f"vertices, got {array.dtype} of shape {array.shape}"
            )
            break
    problems = [p for p in comm.allgather_object(problem) if p is not None]
    if problems:
        raise ValueError(problems[0])


def _check_source(comm: Communicator, graph: DistGraph, local: _Local, source: int) -> None:
    candidate = None
    if owner(source, graph.size) == graph.rank:
        row = local_id(source, graph.size)
        level = int(local.labels[row])
        if level != 0:
            candidate = (source, 0, 0, f"source {source} has distance {level}, not 0")
        elif local.preds is not None and int(local.preds[row]) != source:
            pred = int(local.preds[row])
            candidate = (source, 1, 0, f"source {source} has predecessor {pred}, not itself")
    _agree(comm, RULE_SOURCE, candidate)


def _check_distance_values(comm: Communicator, graph: DistGraph, local: _Local) -> None:
    labels = local.labels
    bad = (labels != UNREACHED) & ((labels < 0) | (labels >= graph.n))
    i = _first(local.vertices, bad)
    candidate = None
    if i is not None:
        v, value = int(local.vertices[i]), int(labels[i])
        message = (
            f"vertex {v} has distance {value}, neither UNREACHED ({UNREACHED}) "
            f"nor a level in [0, {graph.n})"
        )
        candidate = (v, 0, 0, message)
    _agree(comm, RULE_DISTANCES, candidate)


def _check_exact_levels(comm: Communicator, graph: DistGraph, local: _Local, source: int) -> None:
    """Conditions (A) and (B) of the module docstring, one exchange of labels, one of witnesses."""
    labels = local.labels
    reached = labels != UNREACHED
    # Edges leaving reached vertices: (u, w) with level(u) = lu, level(w) = lw.
    lengths = local.degrees[reached]
    w = local.columns[np.repeat(reached, local.degrees)]
    lu = np.repeat(labels[reached], lengths)
    lw = _labels_of(comm, graph, labels, w)
    # (B) witnesses: w has an in-edge from level(w) - 1; owners learn of them by one push.
    seen = np.zeros(graph.n, dtype=np.bool_)
    seen[w[lw == lu + 1]] = True
    witnessed = np.zeros(graph.nlocal, dtype=np.bool_)
    witnessed[_push(comm, np.flatnonzero(seen))] = True
    # (A): the head of a too-long edge, with the smallest tail as the tie-break.
    idx = np.flatnonzero((lw == UNREACHED) | (lw > lu + 1))
    edge_candidate = None
    if idx.size:
        tails = np.repeat(local.vertices[reached], lengths)[idx]
        j = np.lexsort((tails, w[idx]))[0]
        i = idx[j]
        edge_candidate = _edge_message(graph, int(tails[j]), int(w[i]), int(lu[i]), int(lw[i]))
    # (B) offenders: reached, not the source, no witness.
    bad = reached & ~witnessed & (local.vertices != source)
    i = _first(local.vertices, bad)
    vertex_candidate = None
    if i is not None:
        v, level = int(local.vertices[i]), int(labels[i])
        if level == 0:
            message = f"vertex {v} has level 0 but is not the source {source}"
        else:
            kind = "in-neighbour" if graph.directed else "neighbour"
            message = f"vertex {v} has level {level} but no {kind} at level {level - 1}"
        vertex_candidate = (v, 1, 0, message)
    found = [c for c in (edge_candidate, vertex_candidate) if c is not None]
    _agree(comm, RULE_DISTANCES, min(found) if found else None)


def _edge_message(graph: DistGraph, u: int, w: int, lu: int, lw: int) -> Candidate:
    """Message for edge u -> w with u reached breaking condition (A)."""
    if graph.directed:
        edge, near = f"edge {u} -> {w}", f"has an in-edge from {u}, which has level {lu}"
    else:
        edge, near = f"edge {{{u}, {w}}}", f"its neighbour {u} has level {lu}"
    if lw == UNREACHED:
        why = f"vertex {w} is unreached but {near} (also breaks {RULE_SPANS_COMPONENT})"
    else:
        why = (
            f"vertex {w} has level {lw} but {near}: {edge} spans {lw - lu} levels "
            f"(also breaks {RULE_EDGE_LEVELS})"
        )
    return (w, 0, u, why)


def _check_predecessors(comm: Communicator, graph: DistGraph, local: _Local, source: int) -> None:
    """Graph500 rules 1, 2, 4 and 5 on the parent pointers (rule 3 is settled by the levels)."""
    n, vertices, labels = graph.n, local.vertices, local.labels
    preds = local.preds.astype(PREDECESSOR_DTYPE, copy=False)
    reached = labels != UNREACHED
    has_pred = preds != UNREACHED
    out_of_range = has_pred & ((preds < 0) | (preds >= n))
    # Tree edges to check: reached v other than the source with an in-range pointer.
    tree = np.flatnonzero(reached & has_pred & ~out_of_range & (vertices != source))
    parents = preds[tree]
    (parent_levels,) = _ask(comm, parents, (), lambda loc: (labels[loc],))

    # Rule 1: pointers out of range, then cycles by pointer jumping.
    jumping = np.zeros(graph.nlocal, dtype=np.bool_)
    jumping[tree[parent_levels != UNREACHED]] = True
    unresolved = _pointer_jumping(comm, graph, preds, jumping)
    candidates = []
    i = _first(vertices, out_of_range)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        message = f"vertex {v} has predecessor {p}, which is not a vertex (n = {n})"
        candidates.append((v, 0, p, message))
    i = _first(vertices, unresolved)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        message = f"vertex {v} (predecessor {p}) lies on or hangs from a cycle of predecessors"
        candidates.append((v, 1, p, message))
    _agree(comm, RULE_NO_CYCLES, min(candidates) if candidates else None)

    # Rule 2: each tree edge joins a reached parent one level up (tree vertices have level >= 1,
    # so an unreached parent fails too).
    bad = parent_levels != labels[tree] - 1
    j = _first(vertices[tree], bad)
    candidate = None
    if j is not None:
        v, p, lp = int(vertices[tree[j]]), int(parents[j]), int(parent_levels[j])
        level = int(labels[tree[j]])
        state = "is unreached" if lp == UNREACHED else f"has level {lp}"
        candidate = (v, 0, p, f"vertex {v} has level {level} but its parent {p} {state}")
    _agree(comm, RULE_TREE_EDGE_LEVELS, candidate)

    # Rule 4: reached vertices have a predecessor, unreached ones none.
    no_pred = reached & ~has_pred & (vertices != source)
    stray = ~reached & has_pred
    candidates = []
    i = _first(vertices, no_pred)
    if i is not None:
        v = int(vertices[i])
        message = f"vertex {v} is reached (level {int(labels[i])}) but has no predecessor"
        candidates.append((v, 0, 0, message))
    i = _first(vertices, stray)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        candidates.append((v, 1, p, f"vertex {v} is unreached but has predecessor {p}"))
    _agree(comm, RULE_SPANS_COMPONENT, min(candidates) if candidates else None)

    # Rule 5: every tree edge is an edge of the graph.
    rows = np.repeat(np.arange(graph.nlocal, dtype=np.int64), local.degrees)
    keys = rows * n + local.columns  # sorted: rows ascending, columns ascending within a row
    del rows
    if graph.directed:
        (found,) = _ask(comm, parents, (vertices[tree],), lambda loc, v: (_has(keys, loc * n + v),))
    else:  # the edge {parent, v} is also stored in v's own row
        found = _has(keys, tree * n + parents)
    j = _first(vertices[tree], ~found)
    candidate = None
    if j is not None:
        v, p = int(vertices[tree[j]]), int(parents[j])
        edge = f"{p} -> {v}" if graph.directed else f"{{{p}, {v}}}"
        candidate = (v, 0, p, f"vertex {v} has parent {p} but the graph has no edge {edge}")
    _agree(comm, RULE_TREE_EDGES_IN_GRAPH, candidate)


def _has(keys: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Which ``queries`` occur in the sorted ``keys`` (vectorized binary search)."""
    found = np.zeros(queries.shape[0], dtype=np.bool_)
    if keys.size == 0:
        return found
    order = np.argsort(queries)  # numpy's search is much faster on sorted queries (cache reuse)
    ordered = queries[order]
    pos = np.minimum(np.searchsorted(keys, ordered), keys.size - 1)
    found[order] = keys[pos] == ordered
    return found


def _pointer_jumping(
    comm: Communicator, graph: DistGraph, preds: np.ndarray, jumping: np.ndarray
) -> np.ndarray:
    """Mask of the ``jumping`` vertices whose parent chain never reaches a root.

    ``jumping`` marks the owned vertices that start with their parent as ancestor; all others are
    roots (resolved). Each round, every unresolved vertex asks the owner of its ancestor for that
    ancestor's state: resolved ancestor -> resolved; otherwise the ancestor's ancestor becomes its
    own, doubling the distance jumped. A chain of length k is resolved after ceil(log2 k) + 1
    rounds, so after ceil(log2 n) + 2 rounds only vertices on or below a cycle are left.
    """
    ancestor = np.where(jumping, preds, 0)
    resolved = ~jumping
    rounds = math.ceil(math.log2(max(graph.n, 2))) + 2
    for _ in range(rounds):
        if comm.allreduce(int(np.count_nonzero(~resolved))) == 0:
            break
        active = np.flatnonzero(~resolved)
        next_ancestor, done = _ask(
            comm, ancestor[active], (), lambda loc: (ancestor[loc], resolved[loc])
        )
        resolved[active[done]] = True
        ancestor[active] = next_ancestor
    return ~resolved
