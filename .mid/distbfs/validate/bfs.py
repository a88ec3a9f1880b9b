"""Distributed validation of one BFS result: exact levels and the five Graph500 rules, for a
search from one source or several, with or without a depth limit.

Every rank checks what it owns (the machinery is ``distbfs.validate.common``'s); an edge check
asks the owner of the far endpoint for its label (one all-to-all-v of the distinct ids needed, one
reply). Condition (B) below needs no scatter-min over edges: the edge holders push the distinct
ids of the vertices they saw entered from one level up to their owners (a third all-to-all-v).
Checks run in a fixed order and each ends with an agreement: if any rank found an offender,
every rank raises the same ``ValidationError`` naming the rule and the smallest offending global
vertex id.

Several sources: the rules hold per source tree, the sources together forming level 0, so a
level is the distance to the nearest source and the tree a forest rooted at the sources. A depth
limit D: levels are exact up to D and every vertex farther than D is unreached.

Order and meaning of the checks (levels are the ``distances``; "reached" means level != UNREACHED):

- ``source``: distances[s] == 0 and, with predecessors, predecessors[s] == s, for every source s.
- ``distances``: every value is UNREACHED or in [0, n) (with a depth limit, in [0, D]), and the
  values are exact BFS levels: (A) for every edge u -> w with u reached (and, with a depth
  limit, level(u) < D), w is reached and level(w) <= level(u) + 1 (undirected graphs store both
  directions, so this is the symmetric |level(u) - level(w)| <= 1 and "no edge joins a reached
  and an unreached vertex": the reached set spans the union of the sources' components); (B)
  every reached w other than the sources has an in-edge from level(w) - 1. (A) makes each level
  at most the true distance (up to D), (B) at least it, so a vertex farther than D, whose level
  would exceed D, is unreached.
  The offender of (A) is w, the head of the edge; of (B) the vertex itself. Since this check runs
  first, Graph500 rule 3 (edge levels) and the edge part of rule 4 (spans component) are settled
  here; a failure of (A) names the Graph500 rule it also breaks.
- with predecessors (checked against the now exact levels):
  rule 1 (no cycles): every predecessor is UNREACHED or a vertex id, and the parent pointers of
  the reached vertices form no cycle. Distributed pointer jumping: every unresolved vertex asks the
  owner of its current ancestor for that ancestor's ancestor; a vertex is resolved once its
  ancestor is, the roots being the sources and vertices whose parent pointer ends the chain in an
  error left to rules 2 and 4. After ceil(log2 n) + 2 rounds the unresolved vertices lie on or
  hang from a cycle.
  rule 2 (tree edge levels): the parent of every reached v other than the sources is reached and
  level(v) == level(parent) + 1; with rule 1 this makes every vertex's depth in its tree equal to
  its level, and the sources (level 0) the roots.
  rule 4 (spans component): reached vertices other than the sources have a predecessor,
  unreached ones have UNREACHED.
  rule 5 (tree edges in graph): (parent(v), v) is an edge: searched in v's own row for undirected
  graphs, in the parent's row on its owner for directed ones (a binary search within each queried
  row, all rows at once: rows are sorted).

Array module: everything runs in the module of the graph's arrays (numpy, or cupy for a graph on
the GPU; results given in the other module are converted, per vertex). Only scalars (offenders,
counts, chunk bounds) reach the host. Per-edge work walks the local edges in chunks of whole rows
of about ``common.EDGE_CHUNK`` edges, so its temporaries stay a few arrays of the chunk's length.

Invariants: every rank runs the same collectives in the same order whatever it finds; messages
are chosen by (vertex, kind, other endpoint), so the error is the same at every rank count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..arrays import as_host
from ..comm.base import Communicator
from ..constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE, UNREACHED
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
    _Local,
    _per_edge,
    _push,
    _row_chunks,
    _smallest_head,
    _tree_edges,
    _value_table,
)

RULE_DISTANCES = "distances"
RULE_NO_CYCLES = "rule 1 (no cycles)"
RULE_TREE_EDGE_LEVELS = "rule 2 (tree edge levels)"
RULE_EDGE_LEVELS = "rule 3 (edge levels)"
RULE_SPANS_COMPONENT = "rule 4 (spans component)"
RULE_TREE_EDGES_IN_GRAPH = "rule 5 (tree edges in graph)"


def validate(
    graph: DistGraph,
    comm: Communicator,
    source: int | Sequence[int],
    distances: Any,
    predecessors: Any | None = None,
    *,
    depth_limit: int | None = None,
) -> None:
    """Check one BFS result against the graph (collective).

    Parameters
    ----------
    graph : DistGraph
        The graph that was searched (this rank's rows). The checks run in the array module of
        its arrays: numpy on the host, cupy on the GPU.
    comm : Communicator
        The job's communicator.
    source : int or sequence of int
        Global id of the search root, or the roots of a search from several sources (the same
        on every rank; duplicates count once).
    distances : array
        Levels of this rank's owned vertices in local order (UNREACHED where not reached), numpy
        or cupy (moved to the graph's array module when it is the other one).
    predecessors : array, optional
        Global parent id of each owned vertex (itself for a source, UNREACHED where not
        reached). When given, Graph500 rules 1 to 5 are checked as well.
    depth_limit : int, optional
        The search's depth limit D: levels must be exact up to D, and every vertex farther
        than D unreached (None: no limit).

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
    arrays = [("distances", local.labels), ("predecessors", local.preds)]
    _check_shapes(comm, graph, [(name, a, "iu", "an integer array") for name, a in arrays])
    _check_source_is_vertex(graph, source)
    roots = _Sources(graph, local, source)
    _check_source(comm, local, roots)
    _check_distance_values(comm, graph, local, depth_limit)
    local.labels = local.labels.astype(DISTANCE_DTYPE if n < 2**31 else np.int64, copy=False)
    _check_exact_levels(comm, graph, local, roots, depth_limit)
    if local.preds is None:
        return
    _check_predecessors(comm, graph, local, roots)


class _Sources:
    """The sources of the search: all of them (host, distinct, sorted), this rank's (global
    and local ids, host) and the mask of the owned vertices that are sources (array module)."""

    def __init__(self, graph: DistGraph, local: _Local, source: int | Sequence[int]) -> None:
        self.ids = np.unique(np.asarray(source, dtype=np.int64).reshape(-1))
        self.mine = self.ids[owner(self.ids, graph.size) == graph.rank]
        self.rows = local_id(self.mine, graph.size)
        self.owned = local.xp.zeros(graph.nlocal, dtype=local.xp.bool_)
        self.owned[local.xp.asarray(self.rows)] = True

    def name(self) -> str:
        """How a message names the sources: "the source S" or "a source"."""
        return f"the source {int(self.ids[0])}" if self.ids.shape[0] == 1 else "a source"


def _check_source(comm: Communicator, local: _Local, roots: _Sources) -> None:
    """Every source at level 0 and, with predecessors, its own parent (the smallest offender)."""
    candidates = []
    rows = local.xp.asarray(roots.rows)
    levels = as_host(local.labels[rows]).astype(np.int64)
    wrong = np.flatnonzero(levels != 0)
    if wrong.shape[0]:
        s, level = int(roots.mine[wrong[0]]), int(levels[wrong[0]])
        candidates.append((s, 0, 0, f"source {s} has distance {level}, not 0"))
    if local.preds is not None:
        preds = as_host(local.preds[rows]).astype(np.int64)
        wrong = np.flatnonzero((levels == 0) & (preds != roots.mine))
        if wrong.shape[0]:
            s, pred = int(roots.mine[wrong[0]]), int(preds[wrong[0]])
            candidates.append((s, 1, 0, f"source {s} has predecessor {pred}, not itself"))
    _agree(comm, RULE_SOURCE, min(candidates) if candidates else None)


def _check_distance_values(
    comm: Communicator, graph: DistGraph, local: _Local, depth_limit: int | None
) -> None:
    labels = local.labels
    top = graph.n if depth_limit is None else min(graph.n, depth_limit + 1)
    bad = (labels != UNREACHED) & ((labels < 0) | (labels >= top))
    i = _first(local.xp, local.vertices, bad)
    candidate = None
    if i is not None:
        v, value = int(local.vertices[i]), int(labels[i])
        message = (
            f"vertex {v} has distance {value}, neither UNREACHED ({UNREACHED}) "
            f"nor a level in [0, {graph.n})"
        )
        if 0 <= value < graph.n:
            message = f"vertex {v} has distance {value}, beyond the depth limit {depth_limit}"
        candidate = (v, 0, 0, message)
    _agree(comm, RULE_DISTANCES, candidate)


def _check_exact_levels(
    comm: Communicator, graph: DistGraph, local: _Local, roots: _Sources, depth_limit: int | None
) -> None:
    """Conditions (A) and (B) of the module docstring, one exchange of labels, one of witnesses."""
    xp, labels = local.xp, local.labels
    table = _value_table(comm, graph, local, labels)
    seen = xp.zeros(graph.n, dtype=xp.bool_)  # heads of edges from one level up: (B) witnesses
    worst = None  # (head, tail, lu, lw) of the (A) offender with the smallest (head, tail)
    for r0, r1, e0, e1 in _row_chunks(xp, local.row_offsets):
        # Edges u -> w of rows r0..r1 - 1 with level(u) = lu, level(w) = lw.
        offsets = local.row_offsets[r0 : r1 + 1] - e0
        lu = _per_edge(xp, offsets, labels[r0:r1], e1 - e0)
        w = local.columns[e0:e1]
        lw = table[w]
        from_reached = lu != UNREACHED
        lu += 1  # the level every head may have at most, and that of a witnessed head
        seen[w[from_reached & (lw == lu)]] = True
        # (A): the head of a too-long edge, with the smallest tail as the tie-break; with a
        # depth limit D only from tails below D (lu is level(u) + 1 now).
        bad = from_reached & ((lw == UNREACHED) | (lw > lu))
        if depth_limit is not None:
            bad &= lu <= depth_limit
        del from_reached
        first = _smallest_head(xp, graph, offsets, r0, w, bad)
        if first is not None:
            head, tail, i = first
            found = (head, tail, int(lu[i]) - 1, int(lw[i]))
            worst = found if worst is None else min(worst, found)
        del lu, lw, bad
    del table
    edge_candidate = None
    if worst is not None:
        w_, u, lu_, lw_ = worst
        edge_candidate = _edge_message(graph, u, w_, lu_, lw_)
    witnessed = xp.zeros(graph.nlocal, dtype=xp.bool_)
    witnessed[_push(comm, xp, xp.flatnonzero(seen))] = True
    del seen
    # (B) offenders: reached, not a source, no witness.
    bad = (labels != UNREACHED) & ~witnessed & ~roots.owned
    i = _first(xp, local.vertices, bad)
    vertex_candidate = None
    if i is not None:
        v, level = int(local.vertices[i]), int(labels[i])
        if level == 0:
            message = f"vertex {v} has level 0 but is not {roots.name()}"
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


def _check_predecessors(
    comm: Communicator, graph: DistGraph, local: _Local, roots: _Sources
) -> None:
    """Graph500 rules 1, 2, 4 and 5 on the parent pointers (rule 3 is settled by the levels)."""
    xp, n, vertices, labels = local.xp, graph.n, local.vertices, local.labels
    preds = local.preds.astype(PREDECESSOR_DTYPE, copy=False)
    reached = labels != UNREACHED
    has_pred = preds != UNREACHED
    out_of_range = has_pred & ((preds < 0) | (preds >= n))
    # Tree edges to check: reached v other than the sources with an in-range pointer.
    tree = xp.flatnonzero(reached & has_pred & ~out_of_range & ~roots.owned)
    parents = preds[tree]
    (parent_levels,) = _ask(comm, xp, parents, (), lambda loc: (labels[loc],))

    # Rule 1: pointers out of range, then cycles by pointer jumping.
    jumping = xp.zeros(graph.nlocal, dtype=xp.bool_)
    jumping[tree[parent_levels != UNREACHED]] = True
    cycle = _cycle_candidate(comm, local, graph, preds, jumping, 1)
    candidates = [] if cycle is None else [cycle]
    i = _first(xp, vertices, out_of_range)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        message = f"vertex {v} has predecessor {p}, which is not a vertex (n = {n})"
        candidates.append((v, 0, p, message))
    _agree(comm, RULE_NO_CYCLES, min(candidates) if candidates else None)

    # Rule 2: each tree edge joins a reached parent one level up (tree vertices have level >= 1,
    # so an unreached parent fails too).
    bad = parent_levels != labels[tree] - 1
    j = _first(xp, vertices[tree], bad)
    candidate = None
    if j is not None:
        v, p, lp = int(vertices[tree[j]]), int(parents[j]), int(parent_levels[j])
        level = int(labels[tree[j]])
        state = "is unreached" if lp == UNREACHED else f"has level {lp}"
        candidate = (v, 0, p, f"vertex {v} has level {level} but its parent {p} {state}")
    _agree(comm, RULE_TREE_EDGE_LEVELS, candidate)

    # Rule 4: reached vertices have a predecessor, unreached ones none.
    no_pred = reached & ~has_pred & ~roots.owned
    stray = ~reached & has_pred
    candidates = []
    i = _first(xp, vertices, no_pred)
    if i is not None:
        v = int(vertices[i])
        message = f"vertex {v} is reached (level {int(labels[i])}) but has no predecessor"
        candidates.append((v, 0, 0, message))
    i = _first(xp, vertices, stray)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        candidates.append((v, 1, p, f"vertex {v} is unreached but has predecessor {p}"))
    _agree(comm, RULE_SPANS_COMPONENT, min(candidates) if candidates else None)

    # Rule 5: every tree edge is an edge of the graph.
    found, _ = _tree_edges(comm, graph, local, tree, parents, weighted=False)
    j = _first(xp, vertices[tree], ~found)
    candidate = None
    if j is not None:
        v, p = int(vertices[tree[j]]), int(parents[j])
        edge = f"{p} -> {v}" if graph.directed else f"{{{p}, {v}}}"
        candidate = (v, 0, p, f"vertex {v} has parent {p} but the graph has no edge {edge}")
    _agree(comm, RULE_TREE_EDGES_IN_GRAPH, candidate)
