"""Partition with a min-reduction (delta-stepping's relaxation requests) over the array module:
of the requests for one vertex only the lexicographically smallest payload is sent (the owner
keeps the minimum anyway), binned by owner, and it becomes the rank's best sent distance for that
vertex (``sent``, the culling cache of ``relax``)."""

from __future__ import annotations

from typing import Any

from ...comm.base import Bins
from ...partition import bin_by_owner
from ..base import PathState, Relaxations
from .ops import min_per_vertex


def partition_min(xp: Any, state: PathState, requests: Relaxations, nbins: int) -> Bins:
    """One request per target vertex (the smallest payload), binned by owner."""
    keep = min_per_vertex(xp, requests.vertices, requests.payloads)
    vertices = requests.vertices[keep]
    payloads = tuple(field[keep] for field in requests.payloads)
    state.scratch["sent"][vertices] = payloads[0]
    offsets, vertices, payloads = bin_by_owner(xp, vertices, nbins, *payloads)
    return Bins(offsets, vertices, payloads)
