"""The machinery the BFS and shortest-path validators share: agreement on the first offender,
queries to the owners of far endpoints, walks over the local edges in chunks of rows, lookups of
edges in sorted rows, and the distributed pointer jumping that finds cycles of predecessors.

Invariants: every helper that communicates is collective and runs the same collectives on every
rank whatever the data; a candidate offender is ``(vertex, kind, other endpoint, message)`` and
the smallest over all ranks wins, so the error does not depend on the rank count. Everything runs
in the array module of the graph's arrays (numpy, or cupy for a graph on the GPU); only scalars
(offenders, counts, chunk bounds) reach the host.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..arrays import array_module, as_host, to_module
from ..comm.base import Communicator
from ..errors import ValidationError
from ..graph import DistGraph
from ..partition import bin_by_owner, global_id, local_id

RULE_SOURCE = "source"

EDGE_CHUNK = 1 << 26
"""Local edges checked per step (whole rows, so a step may hold one row more); read when a walk
starts, so tests may lower it on this module."""

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
    """This rank's view of the graph and of the result, all in the graph's array module
    (``weights``: None for an unweighted graph)."""

    def __init__(self, graph: DistGraph, distances: Any, predecessors: Any) -> None:
        xp = self.xp = array_module(graph.row_offsets)
        self.row_offsets = to_module(xp, graph.row_offsets).astype(np.int64, copy=False)
        columns = graph.column_indices  # compressed: decoded a chunk at a time as read
        self.columns = columns if graph.compressed else to_module(xp, columns)
        self.weights = None if graph.weights is None else to_module(xp, graph.weights)
        self.vertices = graph.owned_vertices(xp)
        self.labels = to_module(xp, distances)
        self.preds = None if predecessors is None else to_module(xp, predecessors)


def _check_shapes(
    comm: Communicator, graph: DistGraph, arrays: list[tuple[str, Any, str, str]]
) -> None:
    """``ValueError`` on every rank unless every rank's ``(name, array, dtype kinds, what)`` is
    None or has one entry per owned vertex and a dtype of those kinds (``what`` names them)."""
    problem = None
    for name, array, kinds, what in arrays:
        if array is None:
            continue
        if array.shape != (graph.nlocal,) or array.dtype.kind not in kinds:
            problem = (
                f"rank {graph.rank}: {name} must be {what} of the {graph.nlocal} owned "
                f"vertices, got {array.dtype} of shape {array.shape}"
            )
            break
    problems = [p for p in comm.allgather_object(problem) if p is not None]
    if problems:
        raise ValueError(problems[0])


def _check_source_is_vertex(graph: DistGraph, source: int | Sequence[int]) -> None:
    """``ValidationError`` (the same on every rank, no communication) unless 0 <= source < n,
    for the source or every one of several (the smallest offender is named)."""
    ids = np.asarray(source, dtype=np.int64).reshape(-1)
    bad = ids[(ids < 0) | (ids >= graph.n)]
    if bad.shape[0]:
        first = int(bad.min())
        message = f"source {first} is not a vertex (n = {graph.n})"
        raise ValidationError(RULE_SOURCE, first, message)


def _row_chunks(
    xp: Any, row_offsets: Any, chunk: int | None = None
) -> list[tuple[int, int, int, int]]:
    """Steps ``(first row, end row, first edge, end edge)`` over the non-empty runs of rows,
    each starting at the first row whose edges begin at or after a multiple of ``chunk``
    (``EDGE_CHUNK`` unless given)."""
    chunk = EDGE_CHUNK if chunk is None else chunk
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


def _value_table(comm: Communicator, graph: DistGraph, local: _Local, values: Any) -> Any:
    """``values`` (one per owned vertex) indexed by global id, valid at every id this rank's rows
    point to: the distinct ids asked of their owners (collective)."""
    if comm.size == 1:
        return values
    xp = local.xp
    needed = xp.zeros(graph.n, dtype=xp.bool_)
    for _, _, e0, e1 in _row_chunks(xp, local.row_offsets):
        needed[local.columns[e0:e1]] = True
    ids = xp.flatnonzero(needed)
    del needed
    (answers,) = _ask(comm, xp, ids, (), lambda loc: (values[loc],))
    table = xp.empty(graph.n, dtype=values.dtype)
    table[ids] = answers
    return table


def _smallest_head(
    xp: Any, graph: DistGraph, offsets: Any, first_row: int, heads: Any, bad: Any
) -> tuple[int, int, int] | None:
    """``(head, tail, edge)`` of the offending edge of one chunk with the smallest head, the
    smallest tail among those (rows are in tail order, so the first such edge of the chunk);
    ``edge`` indexes the chunk. ``offsets``: the chunk's rows' CSR offsets from 0, the first of
    them local row ``first_row``. None when ``bad`` is all False."""
    idx = xp.flatnonzero(bad)
    if not idx.size:
        return None
    candidates = heads[idx]
    i = int(idx[int(xp.flatnonzero(candidates == candidates.min())[0])])
    del candidates
    at = xp.asarray([i], dtype=xp.int64)
    row = first_row + int(xp.searchsorted(offsets, at, "right")[0]) - 1
    return int(heads[i]), int(global_id(row, graph.rank, graph.size)), i


def _first_bad_edge(
    xp: Any, graph: DistGraph, local: _Local, bad_edges: Callable[..., Any]
) -> tuple[int, int, int] | None:
    """``(head, tail, slot)`` of the offending stored edge with the smallest (head, tail) on
    this rank (``slot``: its index in the rank's columns), or None. The rows go in chunks
    (``_row_chunks``); ``bad_edges(offsets, r0, r1, e0, e1, heads)`` marks the offending edges
    of rows ``r0..r1 - 1`` (edges ``e0..e1 - 1``; ``offsets``: their CSR offsets from 0)."""
    worst = None
    for r0, r1, e0, e1 in _row_chunks(xp, local.row_offsets):
        offsets = local.row_offsets[r0 : r1 + 1] - e0
        heads = local.columns[e0:e1]
        bad = bad_edges(offsets, r0, r1, e0, e1, heads)
        first = _smallest_head(xp, graph, offsets, r0, heads, bad)
        del bad
        if first is not None:
            head, tail, i = first
            found = (head, tail, e0 + i)
            worst = found if worst is None else min(worst, found)
    return worst


def _edge_slots(xp: Any, row_offsets: Any, columns: Any, rows: Any, targets: Any) -> Any:
    """The slot (index into ``columns``) of column ``targets[i]`` in local row ``rows[i]``, or -1
    where the row lacks it, for every i.

    One binary search per query within its own (sorted) row, all queries in step: lower bound
    ``lo`` in ``[start, end)``; each step halves every open range, so the longest queried row
    needs ``bit_length`` steps.
    """
    slots = xp.full(rows.shape[0], -1, dtype=xp.int64)
    if rows.shape[0] == 0 or columns.shape[0] == 0:
        return slots
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
    inside = xp.flatnonzero(lo < end)
    hit = inside[columns[lo[inside]] == targets[inside]]
    slots[hit] = lo[hit]
    return slots


def _has_edges(xp: Any, row_offsets: Any, columns: Any, rows: Any, targets: Any) -> Any:
    """Whether local row ``rows[i]`` holds column ``targets[i]``, for every i."""
    return _edge_slots(xp, row_offsets, columns, rows, targets) >= 0


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


def _cycle_candidate(
    comm: Communicator, local: _Local, graph: DistGraph, preds: Any, jumping: Any, kind: int
) -> Candidate | None:
    """The smallest ``jumping`` vertex on or below a cycle of predecessors (collective: pointer
    jumping from every ``jumping`` vertex, whose predecessor must be a vertex id), or None."""
    unresolved = _pointer_jumping(comm, local.xp, graph, preds, jumping)
    i = _first(local.xp, local.vertices, unresolved)
    if i is None:
        return None
    v, p = int(local.vertices[i]), int(preds[i])
    message = f"vertex {v} (predecessor {p}) lies on or hangs from a cycle of predecessors"
    return (v, kind, p, message)


def _tree_edges(
    comm: Communicator, graph: DistGraph, local: _Local, tree: Any, parents: Any, weighted: bool
) -> tuple[Any, Any]:
    """Whether each tree edge ``parents[i] -> vertices[tree[i]]`` is stored, and with
    ``weighted`` its weight as float64 (1 for an unweighted graph, NaN where absent; else None).
    Collective: an undirected graph holds the edge in the child's own row too, here; a directed
    one only in the parent's row, on its owner (one query there and back)."""
    xp = local.xp

    def lookup(rows: Any, targets: Any) -> tuple[Any, ...]:
        slots = _edge_slots(xp, local.row_offsets, local.columns, rows, targets)
        found = slots >= 0
        if not weighted:
            return (found,)
        weights = xp.full(slots.shape[0], np.nan, dtype=xp.float64)
        hit = xp.flatnonzero(found)
        weights[hit] = 1.0 if local.weights is None else local.weights[slots[hit]]
        return found, weights

    if graph.directed:
        answers = _ask(comm, xp, parents, (local.vertices[tree],), lookup)
    else:
        answers = lookup(tree, parents)
    return answers[0], (answers[1] if weighted else None)
