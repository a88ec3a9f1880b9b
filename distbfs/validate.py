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
  graphs, in the parent's row on its owner for directed ones (a binary search within each queried
  row, all rows at once: rows are sorted).

Array module: everything runs in the module of the graph's arrays (numpy, or cupy for a graph on
the GPU; results given in the other module are converted, per vertex). Only scalars (offenders,
counts, chunk bounds) reach the host. Per-edge work walks the local edges in chunks of whole rows
of about ``EDGE_CHUNK`` edges, so its temporaries stay a few arrays of the chunk's length.

Invariants: every rank runs the same collectives in the same order whatever it finds; messages
are chosen by (vertex, kind, other endpoint), so the error is the same at every rank count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .arrays import array_module, as_host, to_module
from .comm.base import Communicator
from .constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from .errors import ValidationError
from .graph import DistGraph
from .partition import bin_by_owner, global_id, local_id, owner

RULE_SOURCE = "source"
RULE_DISTANCES = "distances"
RULE_NO_CYCLES = "rule 1 (no cycles)"
RULE_TREE_EDGE_LEVELS = "rule 2 (tree edge levels)"
RULE_EDGE_LEVELS = "rule 3 (edge levels)"
RULE_SPANS_COMPONENT = "rule 4 (spans component)"
RULE_TREE_EDGES_IN_GRAPH = "rule 5 (tree edges in graph)"

EDGE_CHUNK = 1 << 26
"""Local edges checked per step (whole rows, so a step may hold one row more)."""

# A candidate offender: (vertex, kind, other vertex, message); the smallest over ranks wins.
Candidate = tuple[int, int, int, str]


def _agree(comm: Communicator, rule: str, candidate: Candidate | None) -> None:
    """Raise the smallest candidate over all ranks as ``ValidationError`` on every rank."""
    found = [c for c in comm.allgather_object(candidate) if c is not None]
    if found:
        vertex, _, _, message = min(found)
        raise ValidationError(rule, vertex, message)


def _first(xp: Any, vertices: Any, bad: Any) -> int | None:
    """Index of the smallest offending vertex, or None when ``bad`` is all False."""
    idx = xp.flatnonzero(bad)
    return int(idx[int(xp.argmin(vertices[idx]))]) if idx.size else None


def _ask(
    comm: Communicator,
    xp: Any,
    ids: Any,
    extra: tuple[Any, ...],
    answer: Callable[..., tuple[Any, ...]],
) -> tuple[Any, ...]:
    """Send query i (``ids[i]`` and ``extra[j][i]``) to the owner of ``ids[i]``; get answers back.

    The owner calls ``answer(local ids, *extra)`` on everything it received and returns arrays of
    the same length; they come back in query order. One all-to-all-v each way.
    """
    if comm.size == 1:
        return answer(ids, *extra)
    positions = xp.arange(ids.shape[0], dtype=xp.int64)
    offsets, ids, (positions, *extra) = bin_by_owner(xp, ids, comm.size, positions, *extra)
    recv_offsets, (recv_ids, *recv_extra) = comm.alltoallv(offsets, ids, *extra)
    replies = answer(local_id(recv_ids, comm.size), *recv_extra)
    _, replies = comm.alltoallv(recv_offsets, *replies)
    out = []
    for reply in replies:
        ordered = xp.empty_like(reply)
        ordered[positions] = reply
        out.append(ordered)
    return tuple(out)


def _push(comm: Communicator, xp: Any, ids: Any) -> Any:
    """Send each global id to its owner; return the local ids this rank received."""
    if comm.size == 1:
        return ids
    offsets, ids, _ = bin_by_owner(xp, ids, comm.size)
    _, (received,) = comm.alltoallv(offsets, ids)
    return local_id(received, comm.size)


class _Local:
    """This rank's view of the graph and of the result, all in the graph's array module."""

    def __init__(self, graph: DistGraph, distances: Any, predecessors: Any) -> None:
        xp = self.xp = array_module(graph.row_offsets)
        self.row_offsets = to_module(xp, graph.row_offsets).astype(np.int64, copy=False)
        self.columns = to_module(xp, graph.column_indices)
        self.vertices = graph.owned_vertices(xp)
        self.degrees = xp.diff(self.row_offsets)
        self.labels = to_module(xp, distances)
        self.preds = None if predecessors is None else to_module(xp, predecessors)


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
        The graph that was searched (this rank's rows). The checks run in the array module of
        its arrays: numpy on the host, cupy on the GPU.
    comm : Communicator
        The job's communicator.
    source : int
        Global id of the search root.
    distances : array
        Levels of this rank's owned vertices in local order (UNREACHED where not reached), numpy
        or cupy (moved to the graph's array module when it is the other one).
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
    i = _first(local.xp, local.vertices, bad)
    candidate = None
    if i is not None:
        v, value = int(local.vertices[i]), int(labels[i])
        message = (
            f"vertex {v} has distance {value}, neither UNREACHED ({UNREACHED}) "
            f"nor a level in [0, {graph.n})"
        )
        candidate = (v, 0, 0, message)
    _agree(comm, RULE_DISTANCES, candidate)


def _row_chunks(xp: Any, row_offsets: Any, chunk: int) -> list[tuple[int, int, int, int]]:
    """Steps ``(first row, end row, first edge, end edge)`` over the non-empty runs of rows,
    each starting at the first row whose edges begin at or after a multiple of ``chunk``."""
    nlocal = row_offsets.shape[0] - 1
    total = int(row_offsets[nlocal])
    if total == 0:
        return []
    targets = xp.arange(chunk, total, chunk, dtype=xp.int64)
    cuts = as_host(xp.searchsorted(row_offsets, targets)).tolist()
    rows = sorted({0, nlocal, *cuts})
    edges = as_host(row_offsets[xp.asarray(rows, dtype=xp.int64)]).tolist()
    return [
        (rows[k], rows[k + 1], edges[k], edges[k + 1])
        for k in range(len(rows) - 1)
        if edges[k + 1] > edges[k]
    ]


def _per_edge(xp: Any, offsets: Any, values: Any, total: int) -> Any:
    """``values[r]`` for every edge of row r (``offsets``: the rows' CSR offsets from 0).

    Equal to ``repeat(values, diff(offsets))`` (cupy's ``repeat`` takes no array of counts): a 1
    at the start of every non-empty row, a running sum, a gather.
    """
    nonempty = xp.flatnonzero(offsets[1:] != offsets[:-1])
    dtype = xp.int32 if total < 2**31 else xp.int64
    flags = xp.zeros(total, dtype=dtype)
    flags[offsets[nonempty]] = 1
    index = xp.cumsum(flags, dtype=dtype)
    del flags
    index -= 1
    return values[nonempty][index]


def _label_table(comm: Communicator, graph: DistGraph, local: _Local) -> Any:
    """Levels indexed by global id, valid at every id this rank's rows point to."""
    if comm.size == 1:
        return local.labels
    xp = local.xp
    needed = xp.zeros(graph.n, dtype=xp.bool_)
    needed[local.columns] = True
    ids = xp.flatnonzero(needed)
    del needed
    (answers,) = _ask(comm, xp, ids, (), lambda loc: (local.labels[loc],))
    table = xp.empty(graph.n, dtype=local.labels.dtype)
    table[ids] = answers
    return table


def _check_exact_levels(comm: Communicator, graph: DistGraph, local: _Local, source: int) -> None:
    """Conditions (A) and (B) of the module docstring, one exchange of labels, one of witnesses."""
    xp, labels = local.xp, local.labels
    table = _label_table(comm, graph, local)
    seen = xp.zeros(graph.n, dtype=xp.bool_)  # heads of edges from one level up: (B) witnesses
    worst = None  # (head, tail, lu, lw) of the (A) offender with the smallest (head, tail)
    for r0, r1, e0, e1 in _row_chunks(xp, local.row_offsets, EDGE_CHUNK):
        # Edges u -> w of rows r0..r1 - 1 with level(u) = lu, level(w) = lw.
        offsets = local.row_offsets[r0 : r1 + 1] - e0
        lu = _per_edge(xp, offsets, labels[r0:r1], e1 - e0)
        w = local.columns[e0:e1]
        lw = table[w]
        from_reached = lu != UNREACHED
        lu += 1  # the level every head may have at most, and that of a witnessed head
        seen[w[from_reached & (lw == lu)]] = True
        # (A): the head of a too-long edge, with the smallest tail as the tie-break (rows are in
        # tail order, so the first edge of the chunk with the smallest head has its smallest tail).
        idx = xp.flatnonzero(from_reached & ((lw == UNREACHED) | (lw > lu)))
        del from_reached
        if idx.size:
            heads = w[idx]
            i = int(idx[int(xp.flatnonzero(heads == heads.min())[0])])
            del heads
            row = r0 + int(xp.searchsorted(offsets, xp.asarray([i], dtype=xp.int64), "right")[0])
            tail = int(global_id(row - 1, graph.rank, graph.size))
            found = (int(w[i]), tail, int(lu[i]) - 1, int(lw[i]))
            worst = found if worst is None else min(worst, found)
        del lu, lw, idx
    del table
    edge_candidate = None
    if worst is not None:
        w_, u, lu_, lw_ = worst
        edge_candidate = _edge_message(graph, u, w_, lu_, lw_)
    witnessed = xp.zeros(graph.nlocal, dtype=xp.bool_)
    witnessed[_push(comm, xp, xp.flatnonzero(seen))] = True
    del seen
    # (B) offenders: reached, not the source, no witness.
    bad = (labels != UNREACHED) & ~witnessed & (local.vertices != source)
    i = _first(xp, local.vertices, bad)
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
    xp, n, vertices, labels = local.xp, graph.n, local.vertices, local.labels
    preds = local.preds.astype(PREDECESSOR_DTYPE, copy=False)
    reached = labels != UNREACHED
    has_pred = preds != UNREACHED
    out_of_range = has_pred & ((preds < 0) | (preds >= n))
    # Tree edges to check: reached v other than the source with an in-range pointer.
    tree = xp.flatnonzero(reached & has_pred & ~out_of_range & (vertices != source))
    parents = preds[tree]
    (parent_levels,) = _ask(comm, xp, parents, (), lambda loc: (labels[loc],))

    # Rule 1: pointers out of range, then cycles by pointer jumping.
    jumping = xp.zeros(graph.nlocal, dtype=xp.bool_)
    jumping[tree[parent_levels != UNREACHED]] = True
    unresolved = _pointer_jumping(comm, xp, graph, preds, jumping)
    candidates = []
    i = _first(xp, vertices, out_of_range)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        message = f"vertex {v} has predecessor {p}, which is not a vertex (n = {n})"
        candidates.append((v, 0, p, message))
    i = _first(xp, vertices, unresolved)
    if i is not None:
        v, p = int(vertices[i]), int(preds[i])
        message = f"vertex {v} (predecessor {p}) lies on or hangs from a cycle of predecessors"
        candidates.append((v, 1, p, message))
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
    no_pred = reached & ~has_pred & (vertices != source)
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
    if graph.directed:  # the edge parent -> v lives in the parent's row, on its owner

        def in_parent_row(loc: Any, v: Any) -> tuple[Any]:
            return (_has_edges(xp, local.row_offsets, local.columns, loc, v),)

        (found,) = _ask(comm, xp, parents, (vertices[tree],), in_parent_row)
    else:  # the edge {parent, v} is also stored in v's own row
        found = _has_edges(xp, local.row_offsets, local.columns, tree, parents)
    j = _first(xp, vertices[tree], ~found)
    candidate = None
    if j is not None:
        v, p = int(vertices[tree[j]]), int(parents[j])
        edge = f"{p} -> {v}" if graph.directed else f"{{{p}, {v}}}"
        candidate = (v, 0, p, f"vertex {v} has parent {p} but the graph has no edge {edge}")
    _agree(comm, RULE_TREE_EDGES_IN_GRAPH, candidate)


def _has_edges(xp: Any, row_offsets: Any, columns: Any, rows: Any, targets: Any) -> Any:
    """Whether local row ``rows[i]`` holds column ``targets[i]``, for every i.

    One binary search per query within its own (sorted) row, all queries in step: lower bound
    ``lo`` in ``[start, end)``; each step halves every open range, so the longest queried row
    needs ``bit_length`` steps.
    """
    found = xp.zeros(rows.shape[0], dtype=xp.bool_)
    if rows.shape[0] == 0 or columns.shape[0] == 0:
        return found
    lo = row_offsets[rows]
    end = row_offsets[rows + 1]
    hi = end.copy()
    last = columns.shape[0] - 1
    for _ in range(int((hi - lo).max()).bit_length()):
        mid = (lo + hi) // 2
        open_ = lo < hi
        right = open_ & (columns[xp.minimum(mid, last)] < targets)
        lo = xp.where(right, mid + 1, lo)
        hi = xp.where(open_ & ~right, mid, hi)
    inside = lo < end
    found[inside] = columns[lo[inside]] == targets[inside]
    return found


def _pointer_jumping(
    comm: Communicator, xp: Any, graph: DistGraph, preds: Any, jumping: Any
) -> Any:
    """Mask of the ``jumping`` vertices whose parent chain never reaches a root.

    ``jumping`` marks the owned vertices that start with their parent as ancestor; all others are
    roots (resolved). Each round, every unresolved vertex asks the owner of its ancestor for that
    ancestor's state: resolved ancestor -> resolved; otherwise the ancestor's ancestor becomes its
    own, doubling the distance jumped. A chain of length k is resolved after ceil(log2 k) + 1
    rounds, so after ceil(log2 n) + 2 rounds only vertices on or below a cycle are left.
    """
    ancestor = xp.where(jumping, preds, 0)
    resolved = ~jumping
    rounds = math.ceil(math.log2(max(graph.n, 2))) + 2
    for _ in range(rounds):
        if comm.allreduce(int(xp.count_nonzero(~resolved))) == 0:
            break
        active = xp.flatnonzero(~resolved)
        next_ancestor, done = _ask(
            comm, xp, ancestor[active], (), lambda loc: (ancestor[loc], resolved[loc])
        )
        resolved[active[done]] = True
        ancestor[active] = next_ancestor
    return ~resolved
