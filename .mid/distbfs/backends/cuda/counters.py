"""The per-level counters of the CUDA backend and their read to the host.

Queue lengths of a level (Merrill et al. 2012, section 3: every stage appends to a queue) are
known only on the device: every stage kernel appends with one atomicAdd per block on a small
int64 counter array (slots: ``kernels.Counter``), zeroed when a level begins
(``SearchQueues.begin_level``). The host reads the counters once per level (twice with several
ranks), through pinned memory, and sizes nothing from a length before that read.

Invariants: kernels store nothing past a queue's capacity, and every read checks the counts
against the capacities (``check_capacities``), so an overflow is a ``DeviceError`` naming the
queue, the size needed and the setting to raise, never a silent truncation. A level's counts
are valid only while that level is the search's current one.
"""

from __future__ import annotations

import weakref
from typing import Any

import cupy
import numpy as np

from ...comm.base import Bins
from ...errors import DeviceError
from .kernels import Counter
from .launch_policy import MEETING_BINS

COUNTER_DTYPE = np.dtype(np.int64)
"""Word of the counter array (and of the other int64 device scratch)."""


class LevelCounts:
    """The counters of one level: device slots the kernels add to, read to the host on demand.

    ``queues``: the search's ``buffers.SearchQueues`` (this module sits below it: the queues
    begin each level's counts). ``edge_bound`` bounds the edge frontier's length on the host
    (sizes launch grids); ``kept_bound`` bounds what filter_partition kept. ``pending`` is the
    one-bin ``Bins`` (``PendingBins``) whose offsets the next read fills; ``own_contracted``:
    ``contract_local`` already labeled the own bin.
    """

    def __init__(self, queues: Any, edge_bound: int) -> None:
        # A weak reference: the queues hold their current level's counts, and a cycle would keep
        # a finished search's device buffers alive until Python's cycle collector happens to run.
        self._queues = weakref.ref(queues)
        self.edge_bound = edge_bound
        self.kept_bound = 0
        self.host: np.ndarray | None = None
        self.pending: Bins | None = None
        self.own_contracted = False  # ``contract_local`` labeled this level's own bin
        self.meeting = False  # the filter counted two meeting bins, packed in [BINS]

    @property
    def queues(self) -> Any:
        queues = self._queues()
        if queues is None:
            raise RuntimeError("the search these counters belong to has ended")
        return queues

    def read(self, slots: int, after: Any = None) -> np.ndarray:
        """Copy the first ``slots`` counters to the host (one small blocking copy), check them.
        ``after``: an event; the copy waits for it on a side stream instead of for everything
        issued so far (the counts of kernels before it, while later ones run on)."""
        queues = self.queues
        if queues.level is not self:
            raise RuntimeError("the counters of this level were reset by a later level")
        if self.meeting:
            slots = max(slots, int(Counter.BINS) + MEETING_BINS)
        staging = queues.pinned[:slots]
        source = queues.fixed_counters if slots == Counter.BINS else queues.counters[:slots]
        if after is None:
            source.get(out=staging)
        else:
            side = queues.side_stream()
            side.wait_event(after)
            source.get(out=staging, stream=side)
            side.synchronize()
        self.host = staging.copy()
        if self.meeting:  # bin 0's count in the low 32 bits of [BINS], bin 1's in the high ones
            packed = int(self.host[Counter.BINS])
            bins = (packed & 0xFFFFFFFF, packed >> 32)
            self.host[Counter.BINS : Counter.BINS + MEETING_BINS] = bins
            self.host[Counter.FILTERED] = sum(bins)
        check_capacities(queues, self.host)
        if self.pending is not None:
            self.pending.offsets[1] = self.host[Counter.FILTERED]
        return self.host

    def value(self, slot: int) -> int:
        """Counter ``slot``, read from the device first if this level has not been read yet."""
        if self.host is None or slot >= self.host.shape[0]:
            self.read(max(slot + 1, int(Counter.BINS)))
        assert self.host is not None
        return int(self.host[slot])


def check_capacities(queues: Any, host: np.ndarray) -> None:
    """Raise ``DeviceError`` if a kernel of this level needed more room than a queue has
    (``queues``: the search's ``SearchQueues``; ``host``: the level's counters, read)."""
    local_edges = queues.graph.num_local_edges
    edges = int(host[Counter.EDGES])
    if edges > queues.edge_capacity:
        raise DeviceError(
            f"edge queue overflow on rank {queues.graph.rank}: expand produced {edges} items "
            f"but the edge queue holds at most {queues.edge.limit} (queue_sizing "
            f"{queues.queue_sizing} x {local_edges} local edges); raise the CUDA backend's "
            f"queue_sizing to at least {edges / max(local_edges, 1):.3g}"
        )
    kept = int(host[Counter.FILTERED])
    if kept > queues.kept_capacity:
        raise DeviceError(
            f"bin queue overflow on rank {queues.graph.rank}: filter_partition kept {kept} "
            f"items but the bin queue holds {queues.kept_capacity} (the smaller of the edge "
            f"queue and n); raise the CUDA backend's queue_sizing"
        )
    discovered = int(host[Counter.FRONTIER])
    if discovered > queues.frontier.shape[0]:
        raise DeviceError(
            f"vertex frontier overflow on rank {queues.graph.rank}: {discovered} vertices "
            f"for {queues.frontier.shape[0]} slots (a vertex was labeled twice: a bug)"
        )


def zero_counter(queues: Any, slot: int) -> None:
    """Zero one level counter of the search's ``SearchQueues`` on the device (asynchronously)."""
    stream = cupy.cuda.get_current_stream()
    ptr = queues.counters.data.ptr + slot * COUNTER_DTYPE.itemsize
    cupy.cuda.runtime.memsetAsync(ptr, 0, COUNTER_DTYPE.itemsize, stream.ptr)
