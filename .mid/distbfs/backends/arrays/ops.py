"""Array primitives the array-module stages share, the same on numpy and cupy: ranges gathered
without a Python loop, and one item per vertex chosen by a lexicographic minimum (stable sorts:
numpy's kind="stable", CuPy's radix sort)."""

from __future__ import annotations

from typing import Any


def gather_ranges(xp: Any, starts: Any, lengths: Any) -> tuple[Any, Any]:
    """(slots, owners): the indices ``starts[i] .. starts[i] + lengths[i] - 1`` for every i,
    concatenated, and for each the i it came from (a search of the running ends, since CuPy's
    ``repeat`` takes no array of counts)."""
    ends = xp.cumsum(lengths)
    total = int(ends[-1]) if ends.shape[0] else 0
    positions = xp.arange(total, dtype=xp.int64)
    owners = xp.searchsorted(ends, positions, side="right")
    positions += (starts - (ends - lengths))[owners]
    return positions, owners


def min_per_vertex(xp: Any, vertices: Any, keys: tuple[Any, ...]) -> Any:
    """Positions of one item per distinct vertex: the one whose ``keys`` are lexicographically
    smallest (first key first), ties to the earliest position; ordered by vertex. Stable sorts
    from the last key to the vertex, so no key needs converting to another's dtype."""
    order = xp.arange(vertices.shape[0], dtype=xp.int64)
    for key in (*reversed(keys), vertices):
        order = order[xp.argsort(key[order], kind="stable")]
    if order.shape[0] == 0:
        return order
    sorted_vertices = vertices[order]
    first = xp.ones(order.shape[0], dtype=xp.bool_)
    first[1:] = sorted_vertices[1:] != sorted_vertices[:-1]
    return order[first]
