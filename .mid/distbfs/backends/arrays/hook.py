"""Afforest's link and compress steps (Sutton, Ben-Nun & Barak, IPDPS 2018; gapbs ``cc.cc``:
``Link``, ``Compress``) on striped labels, over the array module: a vertex's label lives on its
owner, so reading a far label is a request to the owner and a reply, and hooking a root is a
request to the root's owner, reduced by minimum there (the shape of ``partition_min`` and
``contract_min``).

Asking: ``label_queries`` bins the distinct ids asked by owner; the owner answers from its
labels (``answer_labels``, the replies in the order of the queries); ``take_answers`` puts the
replies back in the order of the ids (through the ``table`` scratch, indexed by global id).

Hooking (gapbs's ``Link``, made synchronous): ``cross`` keeps the links whose two labels differ
(links joining equal labels are done for good: labels only merge); ``partition_hooks`` makes of
each such link the request (high, low): the root ``high``, the larger label, is to point at
``low``; requests are reduced to the smallest low per root on the sending rank and binned by
the root's owner; ``apply_hooks`` takes the minimum at the owner. Every label read in a round is
a root (the forest is stars after the last compress), so a hook only ever lowers a root's own
label: pointers stay below their vertex and no cycle can form.

Compressing (gapbs's ``Compress``): ``jump_start`` takes every owned vertex that is not its own
label (the hooked roots among them); each ``jump`` gives such a vertex its parent's label (the
parent's owner answered), and keeps those whose parent was not a root; the jumps are
synchronous (every answer is read before any label changes), so they double the distance
covered, and end with every tree a star.

Invariants: ``labels[v] <= v``; a label only decreases; a hook changes only a root; on one rank
nothing is asked (labels are read in place) and hooks are reduced at the owner alone.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...comm.base import Bins
from ...graph import DistGraph
from ...partition import bin_by_owner, local_id
from .components import LABEL_NONE, ComponentState, Links, scratch_table

SPARSE_QUERIES = 16
"""Distinct ids are found by a sort when there are fewer than n / SPARSE_QUERIES of them, else
by marking a table over all n vertices (a scan, no sort)."""


def scatter_min(xp: Any, target: Any, index: Any, values: Any) -> None:
    """``target[index[i]] = min(target[index[i]], values[i])`` for every i, repeated indices
    included (int64 arrays of values >= 0: compared as uint64, which CuPy's atomic minimum
    takes and int64 it does not)."""
    if index.shape[0]:
        xp.minimum.at(target.view(xp.uint64), index, values.view(xp.uint64))


def distinct(xp: Any, state: ComponentState, ids: Any) -> Any:
    """The distinct values of ``ids`` (global ids), sorted."""
    mark = scratch_table(xp, state, "mark")
    if ids.shape[0] * SPARSE_QUERIES < mark.shape[0]:
        return xp.unique(ids)
    mark[ids] = True
    found = xp.flatnonzero(mark)
    mark[found] = False
    return found


def label_queries(xp: Any, state: ComponentState, ids: Any, nbins: int) -> Bins:
    """The distinct ``ids`` binned by owner: the labels to ask for."""
    offsets, queries, _ = bin_by_owner(xp, distinct(xp, state, ids), nbins)
    state.scratch["queries"] = queries
    return Bins(offsets, queries)


def answer_labels(xp: Any, graph: DistGraph, state: ComponentState, received: Bins) -> Bins:
    """The labels of the received ids (owned vertices), in the order received: the replies,
    segment s to rank s."""
    total = int(received.offsets[-1])
    return Bins(received.offsets, state.labels[local_id(received.vertices[:total], graph.size)])


def take_answers(xp: Any, state: ComponentState, answered: Bins, ids: Any) -> Any:
    """The labels of ``ids`` from the replies to ``label_queries``."""
    table, queries = scratch_table(xp, state, "table"), state.scratch.pop("queries")
    table[queries] = answered.vertices[: queries.shape[0]]
    labels = table[ids]
    table[queries] = LABEL_NONE
    return labels


def cross(xp: Any, state: ComponentState, links: Links, head_labels: Any) -> int:
    """Keep the links whose tail's label differs from ``head_labels`` (their heads' labels),
    with the two labels as ``low`` and ``high``; returns how many."""
    tail_labels = state.labels[links.tails]
    keep = xp.flatnonzero(tail_labels != head_labels)
    links.tails, links.heads = links.tails[keep], links.heads[keep]
    tail_labels, head_labels = tail_labels[keep], head_labels[keep]
    links.low = xp.minimum(tail_labels, head_labels)
    links.high = xp.maximum(tail_labels, head_labels)
    return int(keep.shape[0])


def partition_hooks(xp: Any, state: ComponentState, links: Links, nbins: int) -> Bins:
    """The hook requests (root ``high``, label ``low``) of the crossing links, one per root (the
    smallest low) on several ranks, binned by the root's owner; on one rank every request as
    is (the owner is here and reduces them anyway)."""
    if nbins == 1:
        return Bins(bins_of_one(links.size), links.high, (links.low,))
    best = scratch_table(xp, state, "best")
    scatter_min(xp, best, links.high, links.low)
    roots = distinct(xp, state, links.high)
    lows = best[roots]
    best[roots] = LABEL_NONE
    offsets, roots, (lows,) = bin_by_owner(xp, roots, nbins, lows)
    return Bins(offsets, roots, (lows,))


def bins_of_one(count: int) -> np.ndarray:
    """The offsets of one bin of ``count`` items."""
    return np.array([0, count], dtype=np.int64)


def apply_hooks(xp: Any, graph: DistGraph, state: ComponentState, received: Bins) -> int:
    """Every received root takes the smallest label requested for it; returns how many roots
    were hooked (distinct)."""
    total = int(received.offsets[-1])
    local = local_id(received.vertices[:total], graph.size)
    scatter_min(xp, state.labels, local, received.payloads[0][:total])
    hooked = local[state.labels[local] != scratch_table(xp, state, "owned")[local]]
    return int(distinct(xp, state, hooked).shape[0]) if hooked.shape[0] else 0


def jump_start(xp: Any, state: ComponentState) -> Any:
    """Start a compress: the owned vertices that are not their own label become the jumping
    ones; returns their labels (the parents whose labels to ask for)."""
    active = xp.flatnonzero(state.labels != scratch_table(xp, state, "owned"))
    state.scratch["active"] = active
    return state.labels[active]


def jump(xp: Any, state: ComponentState, parent_labels: Any) -> int:
    """Every jumping vertex takes its parent's label (``parent_labels``); those whose parent
    was not a root keep jumping. Returns how many still jump."""
    active = state.scratch["active"]
    moved = parent_labels != state.labels[active]
    state.labels[active] = parent_labels
    active = active[moved]
    state.scratch["active"] = active
    return int(active.shape[0])


def jumping_labels(state: ComponentState) -> Any:
    """The labels of the vertices still jumping (the parents to ask for next)."""
    return state.labels[state.scratch["active"]]
