"""Batched BFS's per-backend stages on the device (``kernels/lanes.cu``; the state and the push
expansion: ``distbfs.backends.arrays.lanes``): the push level of one rank (frontier words ORed
straight into the out-neighbours' ``found``, no items built), the OR-contraction of received push
items (one ``atomicOr`` per item), the pull level (a thread per vertex ORs its in-neighbours'
gathered frontier words and stops once every lane is seen) and settling a level's found lanes
(distances written, the pairs found and the new frontier's out-edges counted in the same pass).
Compressed rows (``DeviceColumns``) are decoded inside the ``_varint`` push and pull kernels, a
thread to each stretch of a row between two decode points."""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...comm.base import Bins
from ...graph import DistGraph
from ..arrays.lanes import WORD, LaneState
from .buffers import check_graph
from .compressed import column_args, kernel_name
from .kernels import get_kernel
from .launch_policy import LaunchPolicy
from .search import ResidentGrids, resident_grid


def _launch(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    graph: DistGraph,
    name: str,
    items: int,
    args: tuple[Any, ...],
) -> None:
    """Kernel ``name`` of ``kernels/lanes.cu`` over ``items`` (grid-stride, as many blocks as
    are resident at once: the levels wait on dependent loads)."""
    if items == 0:
        return
    kernel = get_kernel("lanes", name, policy, 8 * check_graph(graph).itemsize)
    grid = max(1, min(resident_grid(policy, grids, kernel), -(-items // policy.block_threads)))
    kernel((grid,), (policy.block_threads,), args)


def push_lanes(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: LaneState
) -> None:
    """One rank's push level: every frontier vertex ORs its word into ``found`` of each
    out-neighbour, a thread per edge (``state.frontier_edges`` of them, counted by settle), or
    for compressed rows per stretch between two decode points."""
    rows = cupy.flatnonzero(state.frontier)
    offsets = graph.row_offsets
    begin, end = offsets[rows], offsets[rows + 1]
    if graph.compressed:
        point = policy.decode_point_edges
        ends = cupy.cumsum(cupy.where(end > begin, (end - 1) // point - begin // point + 1, 0))
        total = int(ends[-1]) if rows.shape[0] else 0
    else:
        ends, total = cupy.cumsum(end - begin), int(state.frontier_edges)
    args = (rows, ends, np.int64(rows.shape[0]), np.int64(total), offsets, *column_args(graph))
    args += (state.frontier, state.visited, state.found)
    _launch(policy, grids, graph, kernel_name("push_lanes", graph), total, args)


def contract_lanes(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    graph: DistGraph,
    state: LaneState,
    received: Bins,
) -> None:
    """OR every received word into its vertex's ``found`` word."""
    count = int(received.vertices.shape[0])
    vertices = cupy.asarray(received.vertices).astype(cupy.int64, copy=False)
    words = cupy.asarray(received.payloads[0]).astype(WORD, copy=False)
    args = (vertices, words, np.int64(count), np.int32(graph.size), state.found)
    _launch(policy, grids, graph, "contract_lanes", count, args)


def pull_lanes(
    policy: LaunchPolicy,
    grids: ResidentGrids,
    in_graph: DistGraph,
    state: LaneState,
    frontier: Any,
) -> None:
    """Every owned vertex not visited in all lanes ORs its in-neighbours' frontier words into
    ``found``; ``frontier``: every rank's words, shape (size, words per rank)."""
    n = int(state.visited.shape[0])
    where = (np.int32(frontier.shape[0]),)
    if in_graph.compressed:  # the row's global id: its head is coded against it
        where += (np.int32(in_graph.rank),)
    args = (
        in_graph.row_offsets,
        *column_args(in_graph),
        frontier,
        np.int64(frontier.shape[1]),
        *where,
        state.visited,
        state.found,
        np.int64(n),
        np.uint64(state.all_lanes),
    )
    _launch(policy, grids, in_graph, kernel_name("pull_lanes", in_graph), n, args)


def settle_lanes(
    policy: LaunchPolicy, grids: ResidentGrids, graph: DistGraph, state: LaneState, level: int
) -> int:
    """Keep the lanes found this level that had not visited their vertex: visited, at
    distance ``level``, the next frontier. Returns how many (vertex, lane) pairs."""
    counts = cupy.zeros(2, dtype=np.uint64)
    n = int(state.visited.shape[0])
    args = (
        state.found,
        state.visited,
        state.frontier,
        state.distances,
        np.int64(n),
        np.int32(level),
        graph.row_offsets,
        counts,
    )
    _launch(policy, grids, graph, "settle_lanes", n, args)
    pairs, edges = (int(x) for x in counts.get())
    state.frontier_edges = edges
    return pairs


def frontier_words(graph: DistGraph, state: LaneState) -> Any:
    """This rank's frontier words padded to ``ceil(n / size)`` (what a pull level gathers)."""
    width = -(-graph.n // graph.size)
    if width == graph.nlocal:
        return state.frontier
    words = cupy.zeros(width, dtype=WORD)
    words[: graph.nlocal] = state.frontier
    return words
