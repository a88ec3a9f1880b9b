"""Contraction on the CUDA backend (Merrill et al. 2012, sections 4.2 and 6.1;
``kernels/contract.cu``): the received items are looked up against this rank's labels, the
unlabeled ones labeled with atomicCAS (each vertex enters the next frontier once), their
predecessors set, and the next vertex frontier written; the kernel also sums the new frontier's
out-edges (m_f, the next expansion's exact size). ``contract_row``: level 0 of a search from a
vertex whose row the owner broadcast, each rank labeling the neighbours it owns.

Several ranks: other ranks' items are looked up in the visited mask instead (an L2 read, not a
DRAM one; the owner marks what it labels there), and an own bin of at least
``OVERLAP_MIN_ITEMS`` is contracted before the exchange (``contract_local``), while the host
exchanges the counts and the other bins travel (``Bins.in_flight``; their moves wait on the
bins' ``ready`` event, not on that contraction).

Invariants: a vertex is labeled at most once per search; the own bin is contracted exactly once
per level (``own_contracted`` tells ``contract`` and the exchange that it was); ``contract``
ends the level with its one read of the counters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...comm.base import Bins
from ...constants import UNLIMITED
from ...errors import DeviceError
from ...graph import DistGraph
from ..base import SearchState
from .buffers import as_vertices, level_of, queues_of
from .filter_partition import MeetingBins, PendingBins
from .kernels import Counter
from .launch_policy import OVERLAP_MIN_ITEMS, LaunchPolicy


def parents_of(bins: Bins) -> Any | None:
    """The parents a BFS item carries (its one payload when predecessors are kept), or None."""
    return bins.payloads[0] if bins.payloads else None


def contract_local(
    policy: LaunchPolicy, graph: DistGraph, state: SearchState, bins: Bins, level: int
) -> None:
    """Several ranks: contract this rank's own bin of ``bins`` (the bins about to be
    exchanged) at once, so the device labels it while the host exchanges counts and issues the
    other segments' moves; ``contract`` then skips it. Own bins under
    ``OVERLAP_MIN_ITEMS`` items are left to ``contract`` (one launch for everything).
    ``MeetingBins``: launched before their lengths are read, so the gate is both bins'
    host bound (``kept_bound``), and the kernel reads the own bin's length itself."""
    if graph.size == 1 or isinstance(bins, PendingBins):
        return
    queues = queues_of(state)
    counts = level_of(queues)
    if isinstance(bins, MeetingBins):  # launched at once; the kernel reads the bin's length
        if counts.kept_bound < OVERLAP_MIN_ITEMS or bins.resolved is not None:
            return
        own = (bins.vertices[bins.middle :], None)
        if state.preds is not None:
            own = (own[0], parents_of(bins)[bins.middle :])
        contract_items(
            policy,
            graph,
            state,
            own,
            counts.kept_bound,
            level,
            own=True,
            count=queues.bin_counter,
            meeting_bin=graph.rank,
        )
        counts.own_contracted = bins.own_contracted = True
        return
    start, stop = int(bins.offsets[graph.rank]), int(bins.offsets[graph.rank + 1])
    if stop - start < OVERLAP_MIN_ITEMS:
        return
    keep_parents = state.preds is not None
    vertices = as_vertices(bins.vertices[start:stop], queues)
    parents = as_vertices(parents_of(bins)[start:stop], queues) if keep_parents else None
    contract_items(policy, graph, state, (vertices, parents), stop - start, level, own=True)
    counts.own_contracted = bins.own_contracted = True  # the exchange need not copy it


def contract(
    policy: LaunchPolicy, graph: DistGraph, state: SearchState, received: Bins, level: int
) -> None:
    """Label the received vertices not yet labeled with ``level``; make them the frontier. One
    read of the level's counters (a one-rank level's only one)."""
    queues = queues_of(state)
    counts = level_of(queues)
    keep_parents = state.preds is not None
    pending = counts.pending
    if pending is not None and received.vertices is pending.vertices:
        # One bin that never left the device: its length is the filter's counter.
        items = (queues.bin_vertices, queues.bin_parents if keep_parents else None)
        contract_items(
            policy,
            graph,
            state,
            items,
            counts.kept_bound,
            level,
            own=True,
            count=queues.kept_count,
        )
    elif pending is not None:
        raise DeviceError(
            "contract got other bins than the one-bin filter_partition left on the device "
            "(its length is only known there): with one rank, pass the bins through a "
            "one-rank communicator unchanged"
        )
    else:
        contract_received(policy, graph, state, received, level, counts.own_contracted)
    host = counts.read(int(Counter.BINS))  # the level's one read (one rank)
    counts.pending = None
    _new_frontier(state, queues, host)


def contract_row(
    policy: LaunchPolicy, graph: DistGraph, state: SearchState, row: Any, parent: int, level: int
) -> None:
    """Level 0 of a search from ``parent``, whose out-neighbours ``row`` (global ids, device)
    every rank holds: label the ones this rank owns (``contract_row_kernel``) and mark all of
    them in the visited mask; they become the frontier. One launch, one read."""
    queues = queues_of(state)
    counts = level_of(queues)
    length = int(row.shape[0])
    if length:
        queues.kernels["contract_row"](
            (queues.grid(length, policy.tile_items),),
            (policy.block_threads,),
            (
                as_vertices(row, queues),
                np.int64(length),
                np.int64(parent),
                np.int32(graph.rank),
                np.int32(graph.size),
                np.int32(level),
                state.labels,
                state.preds,
                state.visited_mask,
                queues.frontier,
                np.int64(queues.frontier.shape[0]),
                queues.counters,
                graph.row_offsets,
            ),
        )
    _new_frontier(state, queues, counts.read(int(Counter.BINS)))


def _new_frontier(state: SearchState, queues: Any, host: np.ndarray) -> None:
    """The frontier a contraction labeled (``host``: the level's counters, read) becomes the
    state's, with its out-edges (m_f)."""
    size = int(host[Counter.FRONTIER])
    state.frontier_size = size
    state.vertex_frontier = queues.frontier[:size]
    edges = int(host[Counter.FRONTIER_EDGES])
    queues.advance(size, edges)
    queues.frontier_edges = (queues.generation, edges)


def contract_received(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: SearchState,
    received: Bins,
    level: int,
    own_done: bool,
) -> None:
    """Contract bins received from the other ranks (their own bin too unless ``own_done``:
    ``contract_local`` labeled it). Own items use the label lookup, the others the mask."""
    queues = queues_of(state)
    keep_parents = state.preds is not None
    total = int(received.offsets[-1])
    vertices = as_vertices(received.vertices[:total], queues)
    parents = None
    received_parents = parents_of(received)
    if keep_parents and received_parents is not None:
        parents = as_vertices(received_parents[:total], queues)
    if keep_parents and parents is None:
        raise ValueError("predecessors are kept: the received bins need their parents")
    own = (0, total)  # one rank: the one bin is this rank's
    if graph.size > 1:
        if received.offsets.shape[0] != graph.size + 1:
            raise ValueError(
                f"received bins with {received.offsets.shape[0]} offsets; {graph.size} "
                "ranks need one segment each"
            )
        own = (int(received.offsets[graph.rank]), int(received.offsets[graph.rank + 1]))
    if received.in_flight is not None:  # the other ranks' segments may still be moving
        received.in_flight.wait()
    if own_done:  # the segments before and after the own one
        for begin, end in ((0, own[0]), (own[1], total)):
            items = (vertices[begin:end], None if parents is None else parents[begin:end])
            contract_items(policy, graph, state, items, end - begin, level, own=False)
    else:
        items = (vertices, parents)
        contract_items(policy, graph, state, items, total, level, own=own)


def contract_items(
    policy: LaunchPolicy,
    graph: DistGraph,
    state: SearchState,
    items: tuple[Any, Any | None],
    bound: int,
    level: int,
    *,
    own: bool | tuple[int, int],
    count: Any = None,
    meeting_bin: int = -1,
) -> None:
    """One contract_kernel launch over ``items`` (vertices, parents): ``bound`` of them, or
    as many as the device counter ``count`` says (at most ``bound``). ``own``: all of them
    are this rank's own bin (True), none (False), or those in [begin, end).
    ``meeting_bin`` (0, 1): the items are that one of two meeting bins, ``items`` starting
    at their middle, and the count is read from their packed counter."""
    if bound <= 0:
        return
    queues = queues_of(state)
    vertices, parents = items
    begin, end = (0, UNLIMITED) if own is True else (0, 0) if own is False else own
    queues.kernels["contract"](
        (queues.grid(bound, policy.tile_items),),
        (policy.block_threads,),
        (
            vertices,
            parents if state.preds is not None else None,
            count,
            np.int64(queues.kept_capacity if count is not None else bound),
            np.int32(graph.size),
            np.int32(level),
            state.labels,
            state.preds,
            state.visited_mask if graph.size > 1 else None,
            queues.frontier,
            np.int64(queues.frontier.shape[0]),
            queues.counters,
            graph.row_offsets,  # m_f of the next frontier: its expansion's size
            np.int64(begin),
            np.int64(end),
            np.int32(meeting_bin),
        ),
    )
