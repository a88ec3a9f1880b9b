"""Fused filter+partition on the CUDA backend (Merrill et al. 2012, sections 4.2 and 6.1;
``kernels/filter_partition.cu``): the edge frontier is tested against the visited bitmask,
culled by history and warp hashes, and each survivor claims its vertex's bit with an atomicOr,
which makes the culling exact; survivors are binned by owner (``v % nbins``).

One bin (one rank) is written in place in the bin queue, its length left on the device
(``PendingBins``). Two bins (``MEETING_BINS``) are written in place too, meeting in the middle
of a double-length bin queue, their lengths read as the exchange resolves them
(``MeetingBins``). More go to the kept queue and through a counting sort by owner (the
partition pass). A level expanded in strips is filtered strip by strip; survivors accumulate,
and binning follows the last strip.

Invariants: after the filter every vertex is sent at most once per rank per search (its bit is
claimed as it is kept); every bin segment holds only vertices of its owner; with predecessors
kept each item's parent travels as its one payload, aligned with ``vertices``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cupy
import numpy as np

from ...comm.base import Bins
from ...errors import DeviceError
from ..base import EdgeFrontier, SearchState
from .buffers import (
    SearchQueues,
    as_vertices,
    ensure_bin_queue,
    ensure_kept_queue,
    level_of,
    queues_of,
)
from .counters import LevelCounts
from .expand import DeviceEdgeFrontier
from .kernels import Counter
from .launch_policy import MEETING_BINS, LaunchPolicy, uses_meeting_bins


@dataclass
class PendingBins(Bins):
    """The single bin of a one-bin ``filter_partition``, its length still on the device.

    ``offsets`` (host, ``[0, length]``) is filled in place by the next read of the level's
    counters: ``contract``'s, the one read of a one-rank level. ``vertices`` and ``payloads``
    are the whole bin queues, of which the bin is the first ``offsets[1]`` items. ``resolve()``
    reads them at once and returns plain ``Bins`` of exactly the bin.
    """

    level_counts: LevelCounts | None = None

    def resolve(self) -> Bins:
        counts = self.level_counts
        if counts is not None and counts.host is None:
            counts.read(int(Counter.BINS))
        length = int(self.offsets[1])
        payloads = tuple(payload[:length] for payload in self.payloads)
        return Bins(self.offsets.copy(), self.vertices[:length], payloads)


@dataclass
class MeetingBins(Bins):
    """Two meeting bins (``MEETING_BINS``) as the filter left them, their lengths still on the
    device, so ``contract_local`` can launch the own bin's contraction before anything waits
    for the filter (the kernel reads the bin's length there).

    ``vertices`` and ``payloads`` are the whole bin queues, the bins meeting at ``middle``.
    ``resolve()`` reads the lengths once ``ready`` has passed (not waiting for the own bin's
    contraction), fills ``offsets`` in place and returns plain ``Bins`` of exactly the two;
    the exchange calls it, so the lengths are read as the transfers are issued.
    """

    level_counts: LevelCounts | None = None
    middle: int = 0
    resolved: Bins | None = None

    def resolve(self) -> Bins:
        if self.resolved is None:
            assert self.level_counts is not None
            host = self.level_counts.read(int(Counter.BINS) + MEETING_BINS, after=self.ready)
            lengths = host[Counter.BINS : Counter.BINS + MEETING_BINS]
            self.offsets[1:] = np.cumsum(lengths)
            window = slice(self.middle - int(lengths[0]), self.middle + int(lengths[1]))
            self.resolved = Bins(
                self.offsets.copy(),
                self.vertices[window],
                tuple(payload[window] for payload in self.payloads),
                ready=self.ready,
                own_contracted=self.own_contracted,
            )
        return self.resolved


def filter_partition(
    policy: LaunchPolicy, state: SearchState, edges: EdgeFrontier, nbins: int
) -> Bins | None:
    """Filter the edge frontier (or strip) into the kept queue; after a level's last strip,
    bin what all its strips kept (None before it, with several bins)."""
    queues = queues_of(state)
    if not 1 <= nbins <= policy.max_bins:
        raise DeviceError(
            f"{nbins} owner bins: the CUDA backend sorts into at most "
            f"LaunchPolicy.max_bins={policy.max_bins}; raise it"
        )
    counts = level_of(queues)
    keep_parents = state.preds is not None
    if isinstance(edges, DeviceEdgeFrontier) and edges.counts is counts:
        vertices, parents = queues.edge_vertices, queues.edge_parents
        if edges.window is None:  # the length is on the device
            count, limit = queues.edge_count, queues.edge_capacity
        else:
            count, limit = None, edges.size
        bound = counts.edge_bound
    else:  # an edge frontier made elsewhere (tests): its length is known on the host
        vertices = as_vertices(edges.vertices, queues)
        parents = as_vertices(edges.parents, queues) if keep_parents else None
        count, limit = None, int(vertices.shape[0])
        bound = limit
    if keep_parents and parents is None:
        raise ValueError("predecessors are kept: the edge frontier needs its parents")
    counts.kept_bound = min(counts.kept_bound + bound, queues.kept_capacity)
    meeting = counts.meeting = uses_meeting_bins(nbins, queues.graph.n)
    if nbins == 1 or meeting:  # written in place
        ensure_bin_queue(queues, nbins, keep_parents)
        kept_vertices, kept_parents = queues.bin_vertices, queues.bin_parents
    else:
        ensure_kept_queue(queues, keep_parents)
        kept_vertices, kept_parents = queues.kept_vertices, queues.kept_parents
    grid = queues.grid(bound, policy.tile_items)
    if bound > 0:
        queues.kernels["filter"](
            (grid,),
            (policy.block_threads,),
            (
                vertices,
                parents if keep_parents else None,
                count,
                np.int64(limit),
                state.visited_mask,
                kept_vertices,
                kept_parents if keep_parents else None,
                np.int64(queues.kept_capacity),
                queues.counters,
                np.int32(nbins),
                np.int32(meeting),
            ),
        )
    return _bins(policy, state, queues, counts, edges.last, nbins, (kept_vertices, kept_parents))


def _bins(
    policy: LaunchPolicy,
    state: SearchState,
    queues: SearchQueues,
    counts: LevelCounts,
    last: bool,
    nbins: int,
    kept: tuple[Any, Any | None],
) -> Bins | None:
    """The bins after the filter (``kept``: the queues it wrote, vertices and parents): one
    bin or two meeting bins as written in place, lengths on the device; more sorted by owner
    from the kept queue after the level's ``last`` strip, their counts read (None before)."""
    keep_parents = state.preds is not None
    if nbins == 1:
        bins = PendingBins(
            np.zeros(2, dtype=np.int64),
            queues.bin_vertices,
            state.payloads(queues.bin_parents),
            level_counts=counts,
        )
        counts.pending = bins
        return bins
    if not last:  # binned once, after the level's last strip
        return None
    if not counts.meeting and counts.kept_bound > 0:
        kept_vertices, kept_parents = kept
        queues.kernels["partition"](
            (queues.grid(counts.kept_bound, policy.tile_items),),
            (policy.block_threads,),
            (
                kept_vertices,
                kept_parents if keep_parents else None,
                np.int64(queues.kept_capacity),
                queues.bin_vertices,
                queues.bin_parents if keep_parents else None,
                queues.counters,
                np.int32(nbins),
            ),
        )
    ready = cupy.cuda.Event(block=False, disable_timing=True)
    ready.record()  # the bins are written (contract_local may run before they are sent)
    if counts.meeting:  # their lengths are read as they are sent (contract_local may go first)
        return MeetingBins(
            np.zeros(MEETING_BINS + 1, dtype=np.int64),
            queues.bin_vertices,
            state.payloads(queues.bin_parents),
            ready=ready,
            level_counts=counts,
            middle=queues.kept_capacity,
        )
    host = counts.read(int(Counter.BINS) + nbins)
    offsets = np.zeros(nbins + 1, dtype=np.int64)
    np.cumsum(host[Counter.BINS : Counter.BINS + nbins], out=offsets[1:])
    total = int(offsets[-1])
    parents = queues.bin_parents[:total] if keep_parents else None
    return Bins(offsets, queues.bin_vertices[:total], state.payloads(parents), ready=ready)
