"""Vertex orders that relabel a graph (``distbfs reorder``): the graph's neighbours get nearby
ids, which shortens the gaps a compressed CSR stores and gathers neighbouring rows into the
same cache lines (the Afforest / reordering paper of ../shared/papers).

- ``degree``: by degree, largest first (ties by id): the hubs a search meets first share lines.
- ``bfs``: breadth-first discovery order from the vertex of largest degree, each component in
  turn (a vertex goes after the earlier-numbered of its parents, ties by id).
- ``rcm``: reverse Cuthill-McKee: breadth-first from a vertex of smallest degree of each
  component, a level's vertices ordered by their first parent's number and then by degree, the
  whole order reversed (the classic bandwidth-reducing order).

Directed graphs are ordered by their underlying undirected graph. Vertices without edges go last
(``degree``, ``bfs``) or first (``rcm``, being reversed). Deterministic: the same order for the
same graph on any rank count.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .backends.arrays.ops import gather_ranges
from .graph import build_local_graph

ORDERS = ("degree", "rcm", "bfs")
"""The orders ``order_vertices`` knows."""


def order_vertices(order: str, src: np.ndarray, dst: np.ndarray, n: int) -> np.ndarray:
    """The original id of each new vertex (new id ``i`` is ``result[i]``) for ``order`` of the
    graph of the edges ``src -> dst`` (host int64 arrays, the whole graph) on ``n`` vertices."""
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r} (choose from {', '.join(ORDERS)})")
    graph = build_local_graph(src, dst, n, directed=False)
    offsets, columns = graph.row_offsets, graph.column_indices.astype(np.int64)
    degrees = np.diff(offsets)
    ids = np.arange(n, dtype=np.int64)
    if order == "degree":
        return np.lexsort((ids, -degrees)).astype(np.int64)
    if order == "bfs":
        return _breadth_first(offsets, columns, degrees, np.lexsort((ids, -degrees)), ids)
    cuthill_mckee = _breadth_first(offsets, columns, degrees, np.lexsort((ids, degrees)), degrees)
    return cuthill_mckee[::-1].copy()


def _breadth_first(
    offsets: np.ndarray, columns: np.ndarray, degrees: np.ndarray, starts: np.ndarray, tie: Any
) -> np.ndarray:
    """Breadth-first numbering of every component with an edge, each from the first unnumbered
    vertex of ``starts``; a level's new vertices ordered by their first parent's number, then
    ``tie``, then id. Vertices without edges follow in id order."""
    n = len(degrees)
    number = np.full(n, -1, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    count = 0
    for start in starts[degrees[starts] > 0]:
        if number[start] >= 0:
            continue
        number[start], order[count] = count, start
        frontier, count = np.array([start]), count + 1
        while frontier.shape[0]:
            slots, owners = gather_ranges(np, offsets[frontier], degrees[frontier])
            heads, parents = columns[slots], number[frontier][owners]
            fresh = number[heads] < 0
            heads, parents = heads[fresh], parents[fresh]
            first = np.lexsort((parents, heads))  # by head, its earliest parent first
            keep = np.ones(first.shape[0], dtype=bool)
            keep[1:] = heads[first][1:] != heads[first][:-1]
            heads, parents = heads[first][keep], parents[first][keep]
            frontier = heads[np.lexsort((heads, tie[heads], parents))]
            number[frontier] = np.arange(count, count + frontier.shape[0])
            order[count : count + frontier.shape[0]] = frontier
            count += frontier.shape[0]
    isolated = np.flatnonzero(number < 0)
    order[count:] = isolated
    return order
