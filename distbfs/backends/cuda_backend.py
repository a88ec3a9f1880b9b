"""CUDA backend: the level stages of Merrill, Garland & Grimshaw 2012 as CUDA kernels.

The two-phase strategy (section 5.3) with the multi-GPU fused filter+partition (section 6.1):

- expand (``kernels/expand.cu``): scan+warp+CTA gathering (4.1) of the frontier's adjacency
  lists into the edge queue, with the expanding vertex per item when predecessors are kept.
- filter_partition (``kernels/filter_partition.cu``): visited-bitmask test, history and warp
  culling (4.2), then an atomicOr claim of the vertex's bit, which makes the culling exact
  (each unvisited vertex is sent once); binning by owner (``v % nbins``): two bins are written
  in place, meeting in the middle of a double-length bin queue; more go through a counting
  sort (a partition pass over the kept queue).
- contract (``kernels/contract.cu``): status lookup against the owned labels, labeling with
  atomicCAS (each vertex enters the next frontier once), predecessors, next vertex frontier.
  Several ranks: other ranks' items are looked up in the visited mask instead (an L2 read, not
  a DRAM one), and the own bin is contracted before the exchange (``contract_local``), while
  the host exchanges the counts and the others travel (``in_flight``; the moves wait on the
  bins' ``ready`` event, not on that contraction).
- run_small_levels (``kernels/contract_expand.cu``, one rank, sections 5.2/5.4): one
  persistent cooperative grid runs levels back to back, one grid barrier per level, while the
  frontier is small; one launch and one host read for the whole run. run_peer_levels: the
  same on several ranks of one node, a grid on each GPU, the items and the level barrier going
  through peer memory (``PeerMailbox``, mapped by the communicator over CUDA IPC), not the
  host.
- direction-optimizing levels (``kernels/bottom_up.cu``, Beamer et al. 2012): frontier_bitmap
  (queue -> this rank's bitmap, on the device), bottom_up (a thread per unlabeled vertex scans
  its in-neighbours against the gathered bitmap; the warp's ballot is a word of the next
  frontier's bitmap and reserves its queue slots, one atomic per 32 words), frontier_edges
  (m_f: summed by contract, bottom_up and the fused kernel while they label, no extra read).

Host protocol. ``start`` allocates the search's per-vertex arrays and small queues: the bin queue
holds min(local edges, n) items (filtering claims a vertex once), the vertex frontier nlocal. The
edge queue belongs to the graph (kept from one search to the next): every expansion's length is
known exactly beforehand (m_f, the frontier's out-edges, which contract, bottom_up and the fused
kernel sum while they label), and the queue grows to it, never past ``queue_sizing`` x the local
edge count (``DEFAULT_QUEUE_SIZING``); so a graph's first searches allocate it a few times,
later ones rarely. A level with more edges than that is strip-mined (``expansion_strips``):
expanded and filtered in equal windows of its edge sequence, survivors accumulating in the bin
(or kept) queue, binned after the last, so the queue stays a fraction of the graph whatever the
level. Otherwise no level allocates (but the first with several bins, the first striped level,
the first fused run or the first bottom-up level allocates its extra queues once). Kernels
append to queues with one atomicAdd per block on a small per-level counter array
(``kernels.Counter``), and store nothing past a queue's capacity; the host reads the counters
through pinned memory and raises ``DeviceError`` on overflow, naming the queue, the size needed
and the setting to raise. Launch grids come from host-known bounds
(the exact edge count, capped by a persistent grid); kernels grid-stride over the lengths they
read on the device, so no launch waits for a length. No Python work is proportional to a
frontier.

Reads per level: one rank (one bin): ONE small read, in ``contract``; the bin's length, still
on the device when ``filter_partition`` returns, is written into the bins' host ``offsets`` by
that read (``PendingBins``), and the edge frontier's length likewise (``DeviceEdgeFrontier``).
Several ranks: two, the bin counts before the exchange and the frontier length after contract.
Two ranks read the bin counts as the exchange resolves their ``MeetingBins``, on a side stream
after the filter's ``ready`` event: ``contract_local`` has launched the own bin's contraction
before that read (the kernel reads the bin's length on the device), so the device does not sit
idle while the host reads and launches.
A bottom-up level: one (frontier length, slots tested and m_f together).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

import cupy
import cupyx
import numpy as np

from ..comm.base import Bins
from ..constants import DISTANCE_DTYPE, PREDECESSOR_DTYPE, UNREACHED
from ..errors import DeviceError
from ..graph import DistGraph
from ..partition import local_id, owner
from ..timing import NullTimer
from .base import EdgeFrontier, SearchState, frontier_bitmap_bytes
from .cuda_timing import CudaEventTimer
from .kernels import FUSED_SCRATCH_SLOTS, PEER_HEADER_WORDS, Counter, counter_slots, get_kernel
from .launch_policy import DEFAULT_POLICY, LaunchPolicy

UNREACHED_BYTE = 0xFF
"""Every byte of UNREACHED (-1) in two's complement: labels and predecessors start as a memset,
which runs at copy bandwidth (an elementwise fill of the int64 predecessors ran at half)."""
assert UNREACHED == -1, "UNREACHED_BYTE assumes UNREACHED is -1"

MASK_DTYPE = np.dtype(np.uint32)
"""Word of the visited bitmask: bit ``v % 32`` of word ``v // 32`` is vertex v."""
MASK_WORD_BITS = 32
COUNTER_DTYPE = np.dtype(np.int64)

_UNBOUNDED = 2**62

OVERLAP_MIN_ITEMS = 1 << 16
"""Several ranks: an own bin of at least this many items is contracted before the exchange
(``contract_local``), while the host exchanges the counts and the other ranks' bins travel;
smaller levels contract everything in one launch once it arrived."""

MEETING_BINS = 2
"""Bins written in place by the filter: two meet in the middle of a bin queue of twice the kept
capacity (bin 0 growing down, bin 1 up), so two ranks skip the partition pass (0.32 ms at
level 2 of kron27 on two H200s) at no memory cost: the kept queue it replaces was as long.
Level 2 of kron25 as two ranks on one H100 (``benchmarks/simulated_ranks.py``): 3.03 -> 2.90 ms
of filter_partition, both ranks together; level 3 unchanged (6.70 -> 6.73). On two H200s, with
``MeetingBins``' early own contraction: a kron27 search 43.45 -> 42.44-42.80 ms.
The kernel counts both in one 64-bit counter, 32 bits each, so graphs of ``MEETING_MAX_N``
vertices or more, and more bins, go through the kept queue and the partition pass (a counting
sort by owner)."""

MEETING_MAX_N = (1 << 33) - 1
"""Meeting bins need n below this: bin b counts vertices v = b mod 2, under 2^32 of them."""


def _meeting(nbins: int, n: int) -> bool:
    """Whether ``nbins`` bins of a graph of ``n`` vertices are filtered into meeting bins."""
    return nbins == MEETING_BINS and n < MEETING_MAX_N


PEER_TIMEOUT_SECONDS = 30.0
"""Longest a rank of fused peer levels waits for another at a level barrier before it stops
with an error (a rank that failed ends the job through MPI before that)."""

QUEUE_REGROWTH = 1.125
"""Least factor by which a graph's edge queue grows once it exists (``_grow_edge_queue``)."""

DEFAULT_QUEUE_SIZING = 0.5
"""The edge queue's limit as a fraction of the rank's stored edges. A Kronecker level expands up
to ~90% of them; with the queue that large a search held over 3x the CSR's bytes (a vertex and a
parent per item: 2 x 0.9 x the column array), so such levels are expanded in strips instead.
At 0.25 the peak was 1.7x the CSR but kron20 and kron22 lost 25% and 14% to the extra strips'
launches (H200, benchmarks/RESULTS.md); at 0.5 only levels over half the edges take two."""

KERNELS = {
    "expand": ("expand", "expand_kernel"),
    "frontier_lengths": ("expand", "frontier_lengths_kernel"),
    "expand_heavy": ("expand", "expand_heavy_kernel"),
    "filter": ("filter_partition", "filter_kernel"),
    "partition": ("filter_partition", "partition_kernel"),
    "contract": ("contract", "contract_kernel"),
    "contract_expand": ("contract_expand", "contract_expand_kernel"),
    "contract_expand_peers": ("contract_expand", "contract_expand_peers_kernel"),
    "frontier_bitmap": ("bottom_up", "frontier_bitmap_kernel"),
    "mark_visited": ("bottom_up", "mark_visited_kernel"),
    "frontier_degrees": ("bottom_up", "frontier_degrees_kernel"),
    "unexplored": ("bottom_up", "unexplored_kernel"),
    "bottom_up": ("bottom_up", "bottom_up_kernel"),
}
"""Kernel handles of a search by role: (stage file, ``extern "C"`` name)."""


def _fill_bytes(array: Any, byte: int) -> None:
    """Set every byte of ``array`` to ``byte`` (cudaMemsetAsync on the current stream)."""
    stream = cupy.cuda.get_current_stream()
    cupy.cuda.runtime.memsetAsync(array.data.ptr, byte, array.nbytes, stream.ptr)


class _LevelCounts:
    """The counters of one level: device slots the kernels add to, read to the host on demand.

    ``edge_bound`` bounds the edge frontier's length on the host (sizes launch grids);
    ``kept_bound`` bounds what filter_partition kept. ``pending`` is the one-bin ``Bins`` whose
    offsets the next read fills; ``own_contracted``: ``contract_local`` already labeled the own
    bin.
    """

    def __init__(self, queues: _Queues, edge_bound: int) -> None:
        # A weak reference: the queues hold their current level's counts, and a cycle would keep
        # a finished search's device buffers alive until Python's cycle collector happens to run.
        self._queues = weakref.ref(queues)
        self.edge_bound = edge_bound
        self.kept_bound = 0
        self.host: np.ndarray | None = None
        self.pending: PendingBins | None = None
        self.own_contracted = False  # ``contract_local`` labeled this level's own bin
        self.meeting = False  # the filter counted two meeting bins, packed in [BINS]

    @property
    def queues(self) -> _Queues:
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
        queues.check_capacities(self.host)
        if self.pending is not None:
            self.pending.offsets[1] = self.host[Counter.FILTERED]
        return self.host

    def value(self, slot: int) -> int:
        """Counter ``slot``, read from the device first if this level has not been read yet."""
        if self.host is None or slot >= self.host.shape[0]:
            self.read(max(slot + 1, int(Counter.BINS)))
        assert self.host is not None
        return int(self.host[slot])


@dataclass
class _EdgeQueue:
    """The edge queue of one graph on one rank, kept from one search to the next: it grows to
    the largest edge frontier (or strip) a level has needed (known exactly before expansion:
    m_f, the frontier's out-edges), at most to ``limit`` (``queue_sizing`` x the rank's stored
    edges); a level with more edges is expanded and filtered in strips of at most ``limit``.
    A direction-optimizing search's top-down levels stay far below it."""

    limit: int
    vertices: Any | None = None
    parents: Any | None = None
    capacity: int = 0


@dataclass
class _Queues:
    """Device buffers of one search on one rank (``SearchState.scratch["cuda"]``)."""

    graph: DistGraph
    vertex_dtype: np.dtype
    queue_sizing: float
    max_degree: int
    edge: _EdgeQueue  # the graph's edge queue (shared by its searches, one at a time)
    keep_parents: bool
    kept_capacity: int
    bin_vertices: Any
    bin_parents: Any | None
    frontier: Any
    counters: Any
    pinned: np.ndarray
    kernels: dict[str, Any]  # compiled kernels by role (KERNELS), on the search's device
    persistent_grid: int  # blocks of a grid that fills the device (grid-stride beyond it)
    kept_vertices: Any | None = None  # survivors before binning (several bins only)
    kept_parents: Any | None = None
    spare_frontier: Any | None = None  # ping-pong partner of ``frontier`` (fused levels only)
    heavy_vertices: Any | None = None  # fused levels: frontier vertices of long lists, ping
    spare_heavy: Any | None = None  # and pong
    heavy_capacity: int = 0  # vertices of this rank with more than heavy_degree neighbours
    # expand: pieces of heavy_degree edges of the frontier's long lists: vertex, first column
    # position, first edge-queue slot; at most ``heavy_pieces`` (the rank's lists cut so)
    piece_vertices: Any | None = None
    heavy_columns: Any | None = None
    heavy_slots: Any | None = None
    heavy_pieces: int = 0
    frontier_ends: Any | None = None  # strips: end of each frontier list in the edge sequence
    fused_scratch: Any | None = None  # fused levels: the kernel's ring of per-level counts
    level: _LevelCounts | None = None
    # Direction-optimizing searches only (allocated on first use):
    bitmaps: list[Any] | None = None  # this rank's frontier bitmap words: [current, next]
    candidates: Any | None = None  # words: unlabeled owned vertices with in-neighbours
    candidates_generation: int = -1  # the frontier generation ``candidates`` is current at
    tally: Any | None = None  # two int64 sums: m_f, or (n_u, m_u) (frontier_edges, unexplored)
    generation: int = 0  # bumped whenever the vertex frontier changes
    bitmap_generation: int = -1  # the frontier bitmaps[0] holds
    frontier_edges: tuple[int, int] = (-1, 0)  # (generation, m_f of that frontier)
    unexplored: tuple[int, int, int] | None = None  # (generation, n_u, m_u) of this rank
    side: Any | None = None  # a stream for reads that must not wait for the current stream

    def advance(self, discovered: int, discovered_edges: int | None) -> None:
        """The vertex frontier changed to ``discovered`` newly labeled vertices with
        ``discovered_edges`` out-edges (None: not counted): bump the generation and carry
        n_u and m_u along, so the heuristic never needs a pass over all vertices for them."""
        known = self.unexplored
        self.generation += 1
        if known is None or known[0] != self.generation - 1 or discovered_edges is None:
            self.unexplored = None
        else:
            unlabeled, edges = known[1] - discovered, known[2] - discovered_edges
            self.unexplored = (self.generation, unlabeled, edges)

    def side_stream(self) -> Any:
        """The search's side stream (made on first use)."""
        if self.side is None:
            self.side = cupy.cuda.Stream(non_blocking=True)
        return self.side

    @property
    def edge_capacity(self) -> int:
        return self.edge.capacity

    @property
    def edge_vertices(self) -> Any:
        return self.edge.vertices

    @property
    def edge_parents(self) -> Any | None:
        return self.edge.parents if self.keep_parents else None

    def __post_init__(self) -> None:
        # Device pointers to the two counters kernels read a queue length from.
        self.edge_count = self.counters[Counter.EDGES :]
        self.kept_count = self.counters[Counter.FILTERED :]
        self.bin_counter = self.counters[Counter.BINS :]  # meeting bins: both lengths, packed
        self.fixed_counters = self.counters[: Counter.BINS]  # what a one-rank level reads

    def grid(self, items: int, items_per_block: int) -> int:
        """Blocks for ``items`` (a host bound), at most the persistent grid."""
        return max(1, min(self.persistent_grid, -(-items // items_per_block)))

    def begin_level(self, edge_bound: int) -> _LevelCounts:
        """Zero the counters (asynchronously) and start the counts of a new level."""
        stream = cupy.cuda.get_current_stream()
        cupy.cuda.runtime.memsetAsync(self.counters.data.ptr, 0, self.counters.nbytes, stream.ptr)
        self.level = _LevelCounts(self, edge_bound)
        return self.level

    def check_capacities(self, host: np.ndarray) -> None:
        """Raise ``DeviceError`` if a kernel of this level needed more room than a queue has."""
        local_edges = self.graph.num_local_edges
        edges = int(host[Counter.EDGES])
        if edges > self.edge_capacity:
            raise DeviceError(
                f"edge queue overflow on rank {self.graph.rank}: expand produced {edges} items "
                f"but the edge queue holds at most {self.edge.limit} (queue_sizing "
                f"{self.queue_sizing} x {local_edges} local edges); raise the CUDA backend's "
                f"queue_sizing to at least {edges / max(local_edges, 1):.3g}"
            )
        kept = int(host[Counter.FILTERED])
        if kept > self.kept_capacity:
            raise DeviceError(
                f"bin queue overflow on rank {self.graph.rank}: filter_partition kept {kept} "
                f"items but the bin queue holds {self.kept_capacity} (the smaller of the edge "
                f"queue and n); raise the CUDA backend's queue_sizing"
            )
        discovered = int(host[Counter.FRONTIER])
        if discovered > self.frontier.shape[0]:
            raise DeviceError(
                f"vertex frontier overflow on rank {self.graph.rank}: {discovered} vertices "
                f"for {self.frontier.shape[0]} slots (a vertex was labeled twice: a bug)"
            )


class DeviceEdgeFrontier(EdgeFrontier):
    """The edge frontier (or one strip of it) in the preallocated edge queue.

    A whole level's length stays on the device until the level's counters are read (by
    ``contract``); ``size``, ``vertices`` and ``parents`` read them first if that has not
    happened yet. A strip's length is known on the host (``window``: its edges' range in the
    frontier's edge sequence).
    """

    def __init__(  # no dataclass fields of its own
        self,
        counts: _LevelCounts,
        window: tuple[int, int] | None = None,
        last: bool = True,
    ) -> None:
        self.counts = counts
        self.window = window
        self.last = last

    @property
    def size(self) -> int:  # type: ignore[override]
        if self.window is not None:
            return self.window[1] - self.window[0]
        return self.counts.value(Counter.EDGES)

    @property
    def vertices(self) -> Any:  # type: ignore[override]
        return self.counts.queues.edge_vertices[: self.size]

    @property
    def parents(self) -> Any | None:  # type: ignore[override]
        parents = self.counts.queues.edge_parents
        return None if parents is None else parents[: self.size]


@dataclass
class PendingBins(Bins):
    """The single bin of a one-bin ``filter_partition``, its length still on the device.

    ``offsets`` (host, ``[0, length]``) is filled in place by the next read of the level's
    counters: ``contract``'s, the one read of a one-rank level. ``vertices`` and ``parents`` are
    the whole bin queue, of which the bin is the first ``offsets[1]`` items. ``resolve()``
    reads now and returns plain ``Bins`` of exactly the bin.
    """

    level_counts: _LevelCounts | None = None

    def resolve(self) -> Bins:
        counts = self.level_counts
        if counts is not None and counts.host is None:
            counts.read(int(Counter.BINS))
        length = int(self.offsets[1])
        parents = None if self.parents is None else self.parents[:length]
        return Bins(self.offsets.copy(), self.vertices[:length], parents)


@dataclass
class MeetingBins(Bins):
    """Two meeting bins (``MEETING_BINS``) as the filter left them, their lengths still on the
    device, so ``contract_local`` can launch the own bin's contraction before anything waits
    for the filter (the kernel reads the bin's length there).

    ``vertices`` and ``parents`` are the whole bin queue, the bins meeting at ``middle``.
    ``resolve()`` reads the lengths once ``ready`` has passed (not waiting for the own bin's
    contraction), fills ``offsets`` in place and returns plain ``Bins`` of exactly the two;
    the exchange calls it, so the lengths are read as the transfers are issued.
    """

    level_counts: _LevelCounts | None = None
    middle: int = 0
    resolved: Bins | None = None

    def resolve(self) -> Bins:
        if self.resolved is None:
            assert self.level_counts is not None
            host = self.level_counts.read(int(Counter.BINS) + MEETING_BINS, after=self.ready)
            lengths = host[Counter.BINS : Counter.BINS + MEETING_BINS]
            self.offsets[1:] = np.cumsum(lengths)
            window = slice(self.middle - int(lengths[0]), self.middle + int(lengths[1]))
            parents = None if self.parents is None else self.parents[window]
            self.resolved = Bins(
                self.offsets.copy(),
                self.vertices[window],
                parents,
                ready=self.ready,
                own_contracted=self.own_contracted,
            )
        return self.resolved


@dataclass
class PeerMailbox:
    """What one rank's fused peer levels receive: a header of ``PEER_HEADER_WORDS`` int64 per
    sender (flags, counts), then a segment of ``capacity`` (vertex, parent) pairs per sender
    (``kernels/contract_expand.cu``). ``array`` is an allocation of its own, zeroed (a CUDA IPC
    handle maps whole allocations); ``addresses`` (device int64, by rank): every rank's mailbox
    as this process addresses it, once the communicator mapped them; ``epoch``: the last level
    epoch used, advanced alike on every rank."""

    array: Any
    capacity: int
    addresses: Any = None
    epoch: int = 0


class CudaBackend:
    """The level stages as CUDA kernels, on the current CuPy device.

    Parameters
    ----------
    policy : LaunchPolicy
        Block sizes and culling-hash sizes, compiled into the kernels.
    queue_sizing : float
        The edge queue's limit as a fraction of the rank's stored edges (0 < queue_sizing;
        values above 1 change nothing, since no level expands more edges than the rank stores).
        A level whose frontier has more out-edges is expanded and filtered in strips of at most
        that many (``expansion_strips``). Lower it to save memory, raise it for fewer launches.
    replica_limit_bytes : int
        Several ranks: a graph whose whole CSR takes at most this many bytes is copied to every
        rank once, and searches run their first levels fused on that copy while the frontier is
        small (``distbfs.bfs.replicated``): high-diameter graphs then pay no exchange per level.
        0 turns the copy off.
    peer_levels : bool
        Several ranks on one node, a graph not copied: small frontiers run fused on every GPU
        at once, the items and level barriers going through peer memory
        (``run_peer_levels``; ``distbfs.bfs.peer_mailboxes``). False: such levels are striped
        levels with host exchanges.
    """

    name = "cuda"
    xp = cupy

    def __init__(
        self,
        policy: LaunchPolicy = DEFAULT_POLICY,
        queue_sizing: float = DEFAULT_QUEUE_SIZING,
        replica_limit_bytes: int = 1 << 30,
        peer_levels: bool = True,
    ) -> None:
        if not queue_sizing > 0:
            raise ValueError(f"queue_sizing={queue_sizing}: need a positive fraction")
        if replica_limit_bytes < 0:
            raise ValueError(f"replica_limit_bytes={replica_limit_bytes}: must be >= 0")
        self.policy = policy
        self.queue_sizing = float(queue_sizing)
        self.replica_limit_bytes = int(replica_limit_bytes)
        self.peer_levels = bool(peer_levels)
        self.small_frontier_limit = policy.fused_max_frontier
        self._max_degree: dict[tuple[int, int, int], int] = {}
        self._heavy: dict[tuple[int, int, int], tuple[int, int]] = {}
        self._persistent: dict[int, int] = {}
        self._resident: dict[tuple[int, int], int] = {}
        self._edge_queues: dict[int, _EdgeQueue] = {}
        self._fused_grids: dict[int, int] = {}

    # -- interface shared with the other backends ------------------------------------------

    def to_host(self, array: Any) -> np.ndarray:
        return cupy.asnumpy(array) if isinstance(array, cupy.ndarray) else np.asarray(array)

    def make_timer(self, enabled: bool) -> CudaEventTimer | NullTimer:
        return CudaEventTimer() if enabled else NullTimer()

    def start(self, graph: DistGraph, source: int, predecessors: bool) -> SearchState:
        vertex_dtype = self._check_graph(graph)
        nlocal, n = graph.nlocal, graph.n
        # Filtering claims each vertex's bit once: a level keeps at most n items, and at most
        # the rank's stored edges (strips accumulate in this queue).
        kept_capacity = max(1, min(graph.num_local_edges, n))
        plan: dict[str, tuple[int, np.dtype]] = {
            "labels": (nlocal, np.dtype(DISTANCE_DTYPE)),
            "visited bitmask": (-(-n // MASK_WORD_BITS), MASK_DTYPE),
            "vertex frontier": (max(1, nlocal), vertex_dtype),
            "bin queue": (kept_capacity, vertex_dtype),  # two meeting bins: grown at first use
            "level counters": (counter_slots(self.policy), COUNTER_DTYPE),
        }
        if predecessors:
            plan["predecessors"] = (nlocal, np.dtype(PREDECESSOR_DTYPE))
            plan["bin parent queue"] = plan["bin queue"]
        total = sum(length * dtype.itemsize for length, dtype in plan.values())
        buffers = {
            what: self._allocate(graph, what, length, dtype, total)
            for what, (length, dtype) in plan.items()
        }
        labels = buffers["labels"]
        _fill_bytes(labels, UNREACHED_BYTE)
        preds = buffers.get("predecessors")
        if preds is not None:
            _fill_bytes(preds, UNREACHED_BYTE)
        visited_mask = buffers["visited bitmask"]
        _fill_bytes(visited_mask, 0)
        # Every rank knows the source is labeled.
        visited_mask[source // MASK_WORD_BITS] = MASK_DTYPE.type(1 << (source % MASK_WORD_BITS))
        frontier = buffers["vertex frontier"]
        frontier_size = 0
        if owner(source, graph.size) == graph.rank:
            source_local = local_id(source, graph.size)
            labels[source_local] = 0
            if preds is not None:
                preds[source_local] = source
            frontier[0] = source_local
            frontier_size = 1
        counters = buffers["level counters"]
        bits = 8 * vertex_dtype.itemsize
        queues = _Queues(
            graph=graph,
            vertex_dtype=vertex_dtype,
            queue_sizing=self.queue_sizing,
            max_degree=self._graph_max_degree(graph),
            edge=self._graph_edge_queue(graph),
            keep_parents=predecessors,
            kept_capacity=kept_capacity,
            bin_vertices=buffers["bin queue"],
            bin_parents=buffers.get("bin parent queue"),
            frontier=frontier,
            counters=counters,
            pinned=cupyx.empty_pinned(counters.shape, dtype=COUNTER_DTYPE),
            kernels={
                role: get_kernel(stage, name, self.policy, bits)
                for role, (stage, name) in KERNELS.items()
            },
            persistent_grid=self._persistent_grid(),
        )
        self._grow_edge_queue(queues, 1)
        queues.begin_level(edge_bound=0)
        return SearchState(
            labels,
            preds,
            visited_mask,
            frontier[:frontier_size],
            frontier_size,
            {"cuda": queues},
        )

    def expansion_strips(self, graph: DistGraph, state: SearchState) -> int:
        """Strips the current frontier's expansion takes: 1 unless its out-edges (m_f, known
        exactly) exceed the edge queue's limit; then as few equal strips as fit it."""
        queues = self._queues(state)
        need = self.frontier_edges(graph, state) if state.frontier_size > 0 else 0
        return max(1, -(-need // queues.edge.limit))

    def expand(self, graph: DistGraph, state: SearchState, strip: int = 0) -> EdgeFrontier:
        queues = self._queues(state)
        size = int(state.frontier_size)
        need = self.frontier_edges(graph, state) if size > 0 else 0  # exact: m_f
        strips = self.expansion_strips(graph, state)
        if not 0 <= strip < strips:
            raise ValueError(f"strip {strip}: this frontier's expansion has {strips} strips")
        window = None
        if strips > 1:  # edges [begin, end) of the frontier's edge sequence
            width = -(-need // strips)
            window = (strip * width, min(need, (strip + 1) * width))
        length = need if window is None else window[1] - window[0]
        self._grow_edge_queue(queues, length)
        if strip == 0:
            counts = queues.begin_level(edge_bound=min(queues.edge_capacity, length))
        else:  # the level's counts go on (kept items accumulate); this strip's hub pieces
            counts = self._level(queues)
            counts.edge_bound = length
            self._zero_counter(queues, Counter.HEAVY)
        if size > 0 and length > 0:
            frontier = self._vertices(state.vertex_frontier, queues)
            threads = self.policy.block_threads
            grid = queues.grid(size, threads)
            if window is not None and strip == 0:  # the level's list ends, for every strip
                self._scan_frontier_ends(queues, frontier, size, graph)
            ends = None if window is None else queues.frontier_ends
            hubs = length > self.policy.heavy_degree and self._ensure_heavy_pieces(queues) > 0
            heavy = (
                (queues.piece_vertices, queues.heavy_columns, queues.heavy_slots)
                if hubs
                else (None, None, None)
            )
            edge_queue = (queues.edge_vertices, queues.edge_parents, np.int64(queues.edge_capacity))
            graph_args = (graph.row_offsets, graph.column_indices)
            where = (np.int32(graph.rank), np.int32(graph.size))
            begin, end = (0, 0) if window is None else window
            queues.kernels["expand"](
                (grid,),
                (threads,),
                (
                    frontier,
                    np.int64(size),
                    ends,
                    np.int64(begin),
                    np.int64(end),
                    *graph_args,
                    *where,
                    *edge_queue,
                    *heavy,
                    np.int64(queues.heavy_pieces if hubs else 0),
                    queues.counters,
                ),
            )
            if hubs:  # their pieces, over the whole grid (the piece count stays on the device)
                queues.kernels["expand_heavy"](
                    (queues.persistent_grid,),
                    (threads,),
                    (
                        *heavy,
                        np.int64(queues.heavy_pieces),
                        *graph_args,
                        *where,
                        *edge_queue,
                        queues.counters,
                    ),
                )
        return DeviceEdgeFrontier(counts, window, last=strip == strips - 1)

    def _scan_frontier_ends(
        self, queues: _Queues, frontier: Any, size: int, graph: DistGraph
    ) -> None:
        """``queues.frontier_ends``: the end of each frontier vertex's list in the frontier's
        edge sequence (an inclusive scan of the list lengths; allocated at the search's first
        striped level)."""
        if queues.frontier_ends is None:
            length = queues.frontier.shape[0]
            queues.frontier_ends = self._allocate(
                graph, "frontier list ends", length, COUNTER_DTYPE, length * 8
            )
        ends = queues.frontier_ends[:size]
        threads = self.policy.block_threads
        queues.kernels["frontier_lengths"](
            (queues.grid(size, threads),),
            (threads,),
            (frontier, np.int64(size), graph.row_offsets, ends),
        )
        cupy.cumsum(ends, out=ends)  # CUB's device scan, in place

    @staticmethod
    def _zero_counter(queues: _Queues, slot: int) -> None:
        """Zero one level counter on the device (asynchronously)."""
        stream = cupy.cuda.get_current_stream()
        ptr = queues.counters.data.ptr + slot * COUNTER_DTYPE.itemsize
        cupy.cuda.runtime.memsetAsync(ptr, 0, COUNTER_DTYPE.itemsize, stream.ptr)

    def filter_partition(self, state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins | None:
        """Filter the edge frontier (or strip) into the kept queue; after a level's last strip,
        bin what all its strips kept (None before it, with several bins)."""
        queues = self._queues(state)
        if not 1 <= nbins <= self.policy.max_bins:
            raise DeviceError(
                f"{nbins} owner bins: the CUDA backend sorts into at most "
                f"LaunchPolicy.max_bins={self.policy.max_bins}; raise it"
            )
        counts = self._level(queues)
        keep_parents = state.preds is not None
        if isinstance(edges, DeviceEdgeFrontier) and edges.counts is counts:
            vertices, parents = queues.edge_vertices, queues.edge_parents
            if edges.window is None:  # the length is on the device
                count, limit = queues.edge_count, queues.edge_capacity
            else:
                count, limit = None, edges.size
            bound = counts.edge_bound
        else:  # an edge frontier made elsewhere (tests): its length is known on the host
            vertices = self._vertices(edges.vertices, queues)
            parents = self._vertices(edges.parents, queues) if keep_parents else None
            count, limit = None, int(vertices.shape[0])
            bound = limit
        if keep_parents and parents is None:
            raise ValueError("predecessors are kept: the edge frontier needs its parents")
        counts.kept_bound = min(counts.kept_bound + bound, queues.kept_capacity)
        meeting = counts.meeting = _meeting(nbins, queues.graph.n)
        if nbins == 1 or meeting:  # written in place
            self._ensure_bin_queue(queues, nbins, keep_parents)
            kept_vertices, kept_parents = queues.bin_vertices, queues.bin_parents
        else:
            self._ensure_kept_queue(queues, keep_parents)
            kept_vertices, kept_parents = queues.kept_vertices, queues.kept_parents
        grid = queues.grid(bound, self.policy.tile_items)
        if bound > 0:
            queues.kernels["filter"](
                (grid,),
                (self.policy.block_threads,),
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
        if nbins == 1:
            bins = PendingBins(
                np.zeros(2, dtype=np.int64),
                queues.bin_vertices,
                queues.bin_parents if keep_parents else None,
                level_counts=counts,
            )
            counts.pending = bins
            return bins
        if not edges.last:  # binned once, after the level's last strip
            return None
        if not meeting and counts.kept_bound > 0:
            queues.kernels["partition"](
                (queues.grid(counts.kept_bound, self.policy.tile_items),),
                (self.policy.block_threads,),
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
        if meeting:  # their lengths are read as they are sent (contract_local may go first)
            return MeetingBins(
                np.zeros(MEETING_BINS + 1, dtype=np.int64),
                queues.bin_vertices,
                queues.bin_parents if keep_parents else None,
                ready=ready,
                level_counts=counts,
                middle=queues.kept_capacity,
            )
        host = counts.read(int(Counter.BINS) + nbins)
        offsets = np.zeros(nbins + 1, dtype=np.int64)
        np.cumsum(host[Counter.BINS : Counter.BINS + nbins], out=offsets[1:])
        total = int(offsets[-1])
        parents_out = queues.bin_parents[:total] if keep_parents else None
        return Bins(offsets, queues.bin_vertices[:total], parents_out, ready=ready)

    def contract_local(self, graph: DistGraph, state: SearchState, bins: Bins, level: int) -> None:
        """Several ranks: contract this rank's own bin of ``bins`` (the bins about to be
        exchanged) now, so the device labels it while the host exchanges counts and issues the
        other segments' moves; ``contract`` then skips it. Own bins under
        ``OVERLAP_MIN_ITEMS`` items are left to ``contract`` (one launch for everything).
        ``MeetingBins``: launched before their lengths are read, so the gate is both bins'
        host bound (``kept_bound``), and the kernel reads the own bin's length itself."""
        if graph.size == 1 or isinstance(bins, PendingBins):
            return
        queues = self._queues(state)
        counts = self._level(queues)
        if isinstance(bins, MeetingBins):  # launched now; the kernel reads the bin's length
            if counts.kept_bound < OVERLAP_MIN_ITEMS or bins.resolved is not None:
                return
            own = (bins.vertices[bins.middle :], None)
            if state.preds is not None:
                own = (own[0], bins.parents[bins.middle :])
            self._contract_items(
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
        vertices = self._vertices(bins.vertices[start:stop], queues)
        parents = self._vertices(bins.parents[start:stop], queues) if keep_parents else None
        self._contract_items(graph, state, (vertices, parents), stop - start, level, own=True)
        counts.own_contracted = bins.own_contracted = True  # the exchange need not copy it

    def contract(self, graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
        queues = self._queues(state)
        counts = self._level(queues)
        keep_parents = state.preds is not None
        pending = counts.pending
        if pending is not None and received.vertices is pending.vertices:
            # One bin that never left the device: its length is the filter's counter.
            items = (queues.bin_vertices, queues.bin_parents if keep_parents else None)
            self._contract_items(
                graph, state, items, counts.kept_bound, level, own=True, count=queues.kept_count
            )
        elif pending is not None:
            raise DeviceError(
                "contract got other bins than the one-bin filter_partition left on the device "
                "(its length is only known there): with one rank, pass the bins through a "
                "one-rank communicator unchanged"
            )
        else:
            self._contract_received(graph, state, received, level, counts.own_contracted)
        host = counts.read(int(Counter.BINS))  # the level's one read (one rank)
        counts.pending = None
        size = int(host[Counter.FRONTIER])
        state.frontier_size = size
        state.vertex_frontier = queues.frontier[:size]
        edges = int(host[Counter.FRONTIER_EDGES])
        queues.advance(size, edges)
        queues.frontier_edges = (queues.generation, edges)

    def _contract_received(
        self, graph: DistGraph, state: SearchState, received: Bins, level: int, own_done: bool
    ) -> None:
        """Contract bins received from the other ranks (their own bin too unless ``own_done``:
        ``contract_local`` labeled it). Own items use the label lookup, the others the mask."""
        queues = self._queues(state)
        keep_parents = state.preds is not None
        total = int(received.offsets[-1])
        vertices = self._vertices(received.vertices[:total], queues)
        parents = None
        if keep_parents and received.parents is not None:
            parents = self._vertices(received.parents[:total], queues)
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
                self._contract_items(graph, state, items, end - begin, level, own=False)
        else:
            items = (vertices, parents)
            self._contract_items(graph, state, items, total, level, own=own)

    def _contract_items(
        self,
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
        queues = self._queues(state)
        vertices, parents = items
        begin, end = (0, _UNBOUNDED) if own is True else (0, 0) if own is False else own
        queues.kernels["contract"](
            (queues.grid(bound, self.policy.tile_items),),
            (self.policy.block_threads,),
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

    # -- direction-optimizing levels (kernels/bottom_up.cu) ---------------------------------

    def frontier_edges(self, graph: DistGraph, state: SearchState) -> int:
        """m_f on this rank: out-edges of the vertex frontier. Free after ``contract``,
        ``bottom_up`` and fused levels (they sum it while labeling); otherwise (the source's
        frontier, after replicated levels) one kernel and one read."""
        queues = self._queues(state)
        generation, edges = queues.frontier_edges
        if generation == queues.generation:
            return edges
        size = int(state.frontier_size)
        edges = 0
        if size > 0:
            tally = self._tally(queues)
            queues.kernels["frontier_degrees"](
                (queues.grid(size, self.policy.block_threads),),
                (self.policy.block_threads,),
                (
                    self._vertices(state.vertex_frontier, queues),
                    np.int64(size),
                    graph.row_offsets,
                    tally,
                ),
            )
            edges = int(tally[0].get())
        queues.frontier_edges = (queues.generation, edges)
        if queues.generation == 0:  # the source's frontier: n_u and m_u follow
            unlabeled = graph.nlocal - size
            queues.unexplored = (0, unlabeled, graph.num_local_edges - edges)
        return edges

    def frontier_bitmap(self, graph: DistGraph, state: SearchState) -> Any:
        """This rank's frontier as a packed bitmap (uint8 view, ``frontier_bitmap_bytes``), on
        the device; after a bottom-up level the kernel already wrote it."""
        queues = self._queues(state)
        bitmaps = self._ensure_bitmaps(queues)
        current = bitmaps[0]
        if queues.bitmap_generation != queues.generation:
            stream = cupy.cuda.get_current_stream()
            cupy.cuda.runtime.memsetAsync(current.data.ptr, 0, current.nbytes, stream.ptr)
            size = int(state.frontier_size)
            if size > 0:
                queues.kernels["frontier_bitmap"](
                    (queues.grid(size, self.policy.block_threads),),
                    (self.policy.block_threads,),
                    (self._vertices(state.vertex_frontier, queues), np.int64(size), current),
                )
            queues.bitmap_generation = queues.generation
        return current.view(np.uint8)

    def mark_visited(self, graph: DistGraph, state: SearchState, frontier: Any) -> None:
        """Set the visited-mask bits of every vertex of the gathered ``frontier`` (``(size,
        bytes)`` uint8 bitmaps, on the device). One launch, no read."""
        queues = self._queues(state)
        gathered = self._gathered_words(graph, frontier)
        mask_words = int(state.visited_mask.shape[0])
        threads = self.policy.block_threads
        queues.kernels["mark_visited"](
            (queues.grid(mask_words, threads),),
            (threads,),
            (
                gathered,
                np.int64(gathered.shape[0] // graph.size),
                np.int32(graph.size),
                np.int64(graph.n),
                state.visited_mask,
                np.int64(mask_words),
            ),
        )

    @staticmethod
    def _gathered_words(graph: DistGraph, frontier: Any) -> Any:
        """The all-gathered frontier bitmaps as one run of uint32 words, checked."""
        gathered = cupy.ascontiguousarray(frontier).view(MASK_DTYPE).reshape(-1)
        words = frontier_bitmap_bytes(graph.n, graph.size) // MASK_DTYPE.itemsize
        if gathered.shape[0] != graph.size * words:
            raise ValueError(
                f"gathered frontier of {gathered.shape[0]} words, expected {graph.size} x {words}"
            )
        return gathered

    def bottom_up(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: SearchState,
        frontier: Any,
        level: int,
    ) -> int:
        """Every unlabeled owned vertex looks for a parent among its in-neighbours in the
        gathered ``frontier`` (``(size, bytes)`` uint8, on the device); returns the slots
        tested. One launch, one read."""
        queues = self._queues(state)
        if self._check_graph(in_graph) != queues.vertex_dtype:
            raise TypeError("the in-neighbour graph must have the graph's column dtype")
        bitmaps = self._ensure_bitmaps(queues)
        words = int(bitmaps[0].shape[0])
        gathered = self._gathered_words(graph, frontier)
        counts = queues.begin_level(edge_bound=0)
        kernel = queues.kernels["bottom_up"]
        words_per_block = MASK_WORD_BITS * (self.policy.block_threads // MASK_WORD_BITS)
        blocks = min(-(-words // words_per_block), self._resident_grid(kernel))
        current = int(queues.candidates_generation == queues.generation)
        kernel(
            (max(1, blocks),),  # a warp takes 32 words at a time; as many as fit at once
            (self.policy.block_threads,),
            (
                in_graph.row_offsets,
                in_graph.column_indices,
                graph.row_offsets,
                np.int64(graph.nlocal),
                np.int32(graph.rank),
                np.int32(graph.size),
                gathered,
                np.int64(words),
                np.int32(level),
                state.labels,
                state.preds,
                state.visited_mask,
                queues.candidates,
                np.int32(current),
                bitmaps[1],
                queues.frontier,
                np.int64(queues.frontier.shape[0]),
                queues.counters,
            ),
        )
        host = counts.read(int(Counter.BINS))
        bitmaps.reverse()  # the next frontier's bitmap is now the current one
        size = int(host[Counter.FRONTIER])
        state.frontier_size = size
        state.vertex_frontier = queues.frontier[:size]
        edges = int(host[Counter.FRONTIER_EDGES])
        queues.advance(size, edges)
        queues.bitmap_generation = queues.candidates_generation = queues.generation
        queues.frontier_edges = (queues.generation, edges)
        return int(host[Counter.INSPECTED])

    def unexplored(self, graph: DistGraph, state: SearchState) -> tuple[int, int]:
        """(unlabeled owned vertices, their out-edges): n_u and m_u of this rank. Carried from
        level to level once ``frontier_edges`` was asked for the source (every stage counts
        what it labels and their edges); otherwise recounted from the labels: one kernel, one
        read."""
        queues = self._queues(state)
        known = queues.unexplored
        if known is not None and known[0] == queues.generation:
            return known[1], known[2]
        tally = self._tally(queues)
        nlocal = graph.nlocal
        if nlocal > 0:
            queues.kernels["unexplored"](
                (queues.grid(nlocal, self.policy.block_threads),),
                (self.policy.block_threads,),
                (state.labels, graph.row_offsets, np.int64(nlocal), tally),
            )
        unlabeled, edges = tally.get().tolist()
        return int(unlabeled), int(edges)

    def _tally(self, queues: _Queues) -> Any:
        """The search's two int64 sums, zeroed (allocated on first use)."""
        if queues.tally is None:
            queues.tally = self._allocate(queues.graph, "tally", 2, COUNTER_DTYPE, 16)
        queues.tally.fill(0)
        return queues.tally

    def _ensure_bitmaps(self, queues: _Queues) -> list[Any]:
        """Allocate, once per search, the current and next frontier bitmaps of this rank and
        its candidate words."""
        if queues.bitmaps is None:
            graph = queues.graph
            words = frontier_bitmap_bytes(graph.n, graph.size) // MASK_DTYPE.itemsize
            nbytes = 3 * words * MASK_DTYPE.itemsize
            queues.bitmaps = [
                self._allocate(graph, f"{which} frontier bitmap", words, MASK_DTYPE, nbytes)
                for which in ("current", "next")
            ]
            queues.candidates = self._allocate(
                graph, "bottom-up candidate words", words, MASK_DTYPE, nbytes
            )
        return queues.bitmaps

    def _resident_grid(self, kernel: Any) -> int:
        """Blocks of ``block_threads`` of ``kernel`` that are resident on the current device at
        once (the occupancy calculator: registers and shared memory), memoized: latency-bound
        kernels (bottom-up's dependent loads) run best with every slot filled."""
        key = (cupy.cuda.Device().id, kernel.kernel.ptr)
        if key not in self._resident:
            device = cupy.cuda.Device()
            processors = device.attributes["MultiProcessorCount"]
            per_sm = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.kernel.ptr, self.policy.block_threads, 0
            )
            self._resident[key] = processors * max(1, per_sm)
        return self._resident[key]

    # -- fused small-frontier levels (contract-expand, sections 5.2 and 5.4) ---------------

    def run_small_levels(
        self, graph: DistGraph, state: SearchState, level: int, max_frontier: int
    ) -> int:
        """Run BFS levels in one cooperative grid while the frontier is small (one rank only).

        ``level`` is the label of the current frontier's vertices. Levels run until the
        frontier is empty, holds more than ``max_frontier`` vertices, or has more than
        ``LaunchPolicy.fused_max_edges`` edges; the state is then as after that many two-phase
        levels (labels, predecessors, bitmask, ``vertex_frontier``, ``frontier_size``). One
        launch and one read of the counters, however many levels run.

        Returns the number of levels run: 0 when the graph is striped over several ranks
        (levels need exchanges) or the frontier is empty or too large to start.
        """
        queues = self._queues(state)
        size = int(state.frontier_size)
        if graph.size != 1 or size == 0 or size > max_frontier:
            return 0
        generation, edges = queues.frontier_edges
        if generation == queues.generation and edges > self.policy.fused_max_edges:
            return 0  # m_f is known and over the budget: the grid would stop at once
        self._enter_fused(state, queues)
        kernel = queues.kernels["contract_expand"]
        kernel(
            (self._fused_grid(kernel),),
            (self.policy.fused_threads,),
            (
                queues.frontier,
                queues.spare_frontier,
                np.int64(size),
                np.int64(queues.frontier.shape[0]),
                np.int64(max_frontier),
                graph.row_offsets,
                graph.column_indices,
                np.int32(level),
                state.labels,
                state.preds,
                state.visited_mask,
                queues.heavy_vertices,
                queues.spare_heavy,
                np.int64(queues.heavy_capacity),
                queues.fused_scratch,
                queues.counters,
            ),
        )
        return self._leave_fused(state, queues, self._level(queues).read(int(Counter.BINS)))

    def run_replicated_levels(
        self,
        graph: DistGraph,
        replica: DistGraph,
        state: SearchState,
        source: int,
        max_frontier: int,
    ) -> int:
        """Several ranks: fused levels from ``source`` on the whole graph (``replica``, a
        one-rank CSR), then this rank's part of the outcome into ``state``: labels and
        predecessors of its vertices (every v with v % size == rank), the visited mask (global
        ids on both), its vertices of the frontier. Returns the levels run (0 if none ran)."""
        whole = self.start(replica, source, state.preds is not None)
        levels = self.run_small_levels(replica, whole, 0, max_frontier)
        if levels == 0:
            return 0
        rank, size = graph.rank, graph.size
        state.labels[:] = whole.labels[rank::size]
        if state.preds is not None:
            state.preds[:] = whole.preds[rank::size]
        state.visited_mask[:] = whole.visited_mask
        queues = self._queues(state)
        state.frontier_size = 0
        if whole.frontier_size:  # (a search that ended fused, as on a mesh, has none)
            frontier = whole.vertex_frontier  # global ids (one rank: local == global)
            mine = frontier[frontier % size == rank] // size
            queues.frontier[: mine.shape[0]] = mine
            state.frontier_size = int(mine.shape[0])
        state.vertex_frontier = queues.frontier[: state.frontier_size]
        queues.advance(0, None)  # n_u, m_u: recounted when asked
        return levels

    def make_peer_mailbox(self, graph: DistGraph) -> PeerMailbox:
        """This rank's mailbox for ``run_peer_levels`` (zeroed, an allocation of its own):
        ``fused_max_edges`` pairs per sender, since no rank sends a peer more items in a level
        than the whole frontier has edges, and the fused levels stop before more."""
        dtype = self._check_graph(graph)
        capacity = self.policy.fused_max_edges
        nbytes = graph.size * (PEER_HEADER_WORDS * COUNTER_DTYPE.itemsize)
        nbytes += graph.size * 2 * capacity * dtype.itemsize
        try:
            memory = cupy.cuda.Memory(nbytes)  # cudaMalloc, not the pool: IPC maps it whole
        except cupy.cuda.memory.OutOfMemoryError:
            raise DeviceError(
                f"out of GPU memory allocating the peer mailbox ({nbytes} bytes) on rank "
                f"{graph.rank}: lower LaunchPolicy.fused_max_edges or turn peer_levels off"
            ) from None
        array = cupy.ndarray((nbytes,), dtype=np.uint8, memptr=cupy.cuda.MemoryPointer(memory, 0))
        _fill_bytes(array, 0)
        cupy.cuda.get_current_stream().synchronize()  # zero before any peer can write into it
        return PeerMailbox(array, capacity)

    def run_peer_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        mailbox: PeerMailbox,
        entry: tuple[int, int],
    ) -> int:
        """Several ranks of one node: levels in one cooperative grid per GPU while the whole
        frontier is small, exchanging through the peers' mailboxes (collective: every rank,
        the same ``entry``: the current frontier's vertices and out-edges over all ranks).

        Stops as ``run_small_levels`` does, on the whole frontier (and before a level of more
        edges than a mailbox segment holds); the state is then as after that many striped
        levels. Returns the levels run, the same on every rank (0: ``entry`` is over the
        limits, nothing ran).
        """
        vertices, edges = entry
        if vertices == 0 or vertices > max_frontier or edges > mailbox.capacity:
            return 0
        if edges > self.policy.fused_max_edges:
            return 0
        queues = self._queues(state)
        size = int(state.frontier_size)
        self._enter_fused(state, queues)
        kernel = queues.kernels["contract_expand_peers"]
        kernel(
            (self._fused_grid(kernel),),
            (self.policy.fused_threads,),
            (
                queues.frontier,
                queues.spare_frontier,
                np.int64(size),
                np.int64(queues.frontier.shape[0]),
                np.int64(max_frontier),
                np.int64(vertices),
                np.int64(edges),
                graph.row_offsets,
                graph.column_indices,
                np.int32(graph.rank),
                np.int32(graph.size),
                np.int32(level),
                state.labels,
                state.preds,
                state.visited_mask,
                queues.heavy_vertices,
                queues.spare_heavy,
                np.int64(queues.heavy_capacity),
                queues.fused_scratch,
                mailbox.addresses,
                np.int64(mailbox.capacity),
                np.int64(mailbox.epoch),
                np.int64(int(PEER_TIMEOUT_SECONDS * 1e9)),
                queues.counters,
            ),
        )
        host = self._level(queues).read(int(Counter.BINS))
        failure = int(host[Counter.PEER_FAILURE])
        if failure:
            what = (
                f"a peer rank did not reach a level barrier within {PEER_TIMEOUT_SECONDS:g} s"
                if failure == 1
                else "a mailbox segment overflowed (a bug: the stop rule excludes it)"
            )
            raise DeviceError(f"fused peer levels on rank {graph.rank}: {what}")
        levels = self._leave_fused(state, queues, host)
        mailbox.epoch += 2 * levels
        return levels

    def _enter_fused(self, state: SearchState, queues: _Queues) -> None:
        """Before a fused kernel: its queues exist, the frontier is in queue A, counters zeroed."""
        self._ensure_fused_queues(queues)
        size = int(state.frontier_size)
        frontier = self._vertices(state.vertex_frontier, queues)
        if size and frontier.data.ptr != queues.frontier.data.ptr:  # set from elsewhere
            queues.frontier[:size] = frontier
        queues.begin_level(edge_bound=0)

    @staticmethod
    def _leave_fused(state: SearchState, queues: _Queues, host: np.ndarray) -> int:
        """After a fused kernel (``host``: its counters): the state as after the levels it ran
        (the final frontier is in queue B after an odd number); returns that number."""
        levels = int(host[Counter.FUSED_LEVELS])
        if levels % 2:
            queues.frontier, queues.spare_frontier = queues.spare_frontier, queues.frontier
        size = int(host[Counter.FRONTIER])
        state.frontier_size = size
        state.vertex_frontier = queues.frontier[:size]
        queues.advance(int(host[Counter.FUSED_LABELED]), int(host[Counter.FUSED_LABELED_EDGES]))
        queues.frontier_edges = (queues.generation, int(host[Counter.FRONTIER_EDGES]))
        return levels

    def _ensure_fused_queues(self, queues: _Queues) -> None:
        """Allocate, once per search, the fused kernel's spare frontier, heavy queues, scratch.

        A heavy queue holds one level's frontier vertices of more than ``heavy_degree``
        neighbours; each vertex enters one frontier once, so the rank's count of such vertices
        is a capacity no level can exceed.
        """
        if queues.spare_frontier is not None:
            return
        graph, dtype = queues.graph, queues.vertex_dtype
        length = queues.frontier.shape[0]
        heavy = self._graph_heavy(graph)[0]
        nbytes = (length + 2 * max(1, heavy)) * dtype.itemsize
        nbytes += FUSED_SCRATCH_SLOTS * COUNTER_DTYPE.itemsize
        allocate = self._allocate
        queues.spare_frontier = allocate(graph, "spare vertex frontier", length, dtype, nbytes)
        queues.heavy_vertices = allocate(graph, "heavy queue", max(1, heavy), dtype, nbytes)
        queues.spare_heavy = allocate(graph, "spare heavy queue", max(1, heavy), dtype, nbytes)
        queues.heavy_capacity = heavy
        queues.fused_scratch = self._allocate(
            graph, "fused level counts", FUSED_SCRATCH_SLOTS, COUNTER_DTYPE, nbytes
        )

    def _ensure_heavy_pieces(self, queues: _Queues) -> int:
        """Allocate, once per search, ``expand``'s queue of hub pieces; returns its capacity:
        the rank's lists of more than ``heavy_degree`` neighbours cut into pieces of that many
        (each list enters a level's frontier at most once)."""
        if queues.piece_vertices is None:
            graph, dtype = queues.graph, queues.vertex_dtype
            pieces = self._graph_heavy(graph)[1]
            length = max(1, pieces)
            nbytes = length * (dtype.itemsize + 2 * COUNTER_DTYPE.itemsize)
            allocate = self._allocate
            queues.piece_vertices = allocate(graph, "hub pieces", length, dtype, nbytes)
            queues.heavy_columns = allocate(
                graph, "hub piece columns", length, COUNTER_DTYPE, nbytes
            )
            queues.heavy_slots = allocate(graph, "hub piece slots", length, COUNTER_DTYPE, nbytes)
            queues.heavy_pieces = pieces
        return queues.heavy_pieces

    def _fused_grid(self, kernel: Any) -> int:
        """Blocks of the fused cooperative grid on the current device (memoized).

        ``fused_blocks_per_sm`` per multiprocessor, or fewer if the occupancy calculator says
        fewer blocks of the compiled kernel are resident at once: a cooperative launch needs
        every block resident, and CuPy would shrink a larger grid with a warning.
        """
        device = cupy.cuda.Device().id
        if device not in self._fused_grids:
            processors = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
            resident = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
                kernel.kernel.ptr, self.policy.fused_threads, 0
            )
            if resident < 1:
                raise DeviceError(
                    f"the fused kernel does not fit a multiprocessor with "
                    f"LaunchPolicy.fused_threads={self.policy.fused_threads}; lower it"
                )
            per_sm = min(self.policy.fused_blocks_per_sm, resident)
            self._fused_grids[device] = processors * per_sm
        return self._fused_grids[device]

    # -- helpers -------------------------------------------------------------------------

    @staticmethod
    def _check_graph(graph: DistGraph) -> np.dtype:
        """The column-id dtype of a graph the kernels can take; raise otherwise."""
        if not isinstance(graph.row_offsets, cupy.ndarray) or not isinstance(
            graph.column_indices, cupy.ndarray
        ):
            raise TypeError(
                "the CUDA backend needs the graph on the device: build it with "
                "build_graph(..., xp=cupy)"
            )
        if graph.row_offsets.dtype != np.int64:
            raise TypeError(f"row_offsets must be int64, not {graph.row_offsets.dtype}")
        dtype = graph.column_indices.dtype
        if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
            raise TypeError(f"column_indices must be int32 or int64, not {dtype}")
        return np.dtype(dtype)

    def _edge_capacity(self, graph: DistGraph) -> int:
        local_edges = graph.num_local_edges
        wanted = int(np.ceil(local_edges * self.queue_sizing))
        return max(1, min(local_edges, wanted))

    def _graph_max_degree(self, graph: DistGraph) -> int:
        """Largest out-degree on this rank (bounds launch grids); memoized per CSR buffer.

        A stale entry (a freed buffer's address reused) only misjudges a grid's size: every
        kernel grid-strides over its whole input whatever the grid.
        """
        key = (graph.row_offsets.data.ptr, graph.row_offsets.size, graph.num_local_edges)
        if key not in self._max_degree:
            degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
            self._max_degree[key] = int(degrees.max()) if degrees.size else 0
        return self._max_degree[key]

    def _graph_heavy(self, graph: DistGraph) -> tuple[int, int]:
        """(vertices of this rank with more than ``heavy_degree`` neighbours, their lists cut
        into pieces of ``heavy_degree``), memoized.

        Keyed like ``_graph_max_degree``; a stale entry would only misjudge the heavy queues'
        capacities, which the fused kernel checks before every level (it then stops, and the
        two-phase path takes the level) and ``expand`` on every hub (a hub whose pieces do not
        fit is strip-mined by its own block).
        """
        key = (graph.row_offsets.data.ptr, graph.row_offsets.size, graph.num_local_edges)
        if key not in self._heavy:
            degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
            cut = self.policy.heavy_degree
            heavy = degrees[degrees > cut]
            pieces = int(((heavy + cut - 1) // cut).sum()) if heavy.size else 0
            self._heavy[key] = (int(heavy.size), pieces)
        return self._heavy[key]

    def _persistent_grid(self) -> int:
        """Blocks that fill the current device: ``blocks_per_sm`` per multiprocessor."""
        device = cupy.cuda.Device().id
        if device not in self._persistent:
            processors = cupy.cuda.Device(device).attributes["MultiProcessorCount"]
            self._persistent[device] = processors * self.policy.blocks_per_sm
        return self._persistent[device]

    @staticmethod
    def _queues(state: SearchState) -> _Queues:
        queues = state.scratch.get("cuda")
        if not isinstance(queues, _Queues):
            raise TypeError("this search state was not made by the CUDA backend's start()")
        return queues

    @staticmethod
    def _level(queues: _Queues) -> _LevelCounts:
        assert queues.level is not None  # start() begins the first level
        return queues.level

    @staticmethod
    def _vertices(array: Any, queues: _Queues) -> Any:
        """``array`` as a device array of the graph's vertex dtype (no copy when it is one)."""
        return cupy.asarray(array).astype(queues.vertex_dtype, copy=False)

    def _graph_edge_queue(self, graph: DistGraph) -> _EdgeQueue:
        """The edge queue of ``graph`` on this rank (empty at first), freed with the graph."""
        key = id(graph)
        if key not in self._edge_queues:
            self._edge_queues[key] = _EdgeQueue(limit=self._edge_capacity(graph))
            weakref.finalize(graph, self._edge_queues.pop, key, None)
        return self._edge_queues[key]

    def _grow_edge_queue(self, queues: _Queues, need: int) -> None:
        """Make the edge queue (and its parent queue, when the search keeps predecessors) hold
        ``need`` items, up to its limit. Its first size is exactly what a level needs (growing
        by a factor would overshoot: a Kronecker graph's largest level holds over half its
        edges); later it grows by at least ``QUEUE_REGROWTH``, so searches from other roots,
        whose largest levels differ by a few percent, do not reallocate it each time (near a
        full device each reallocation frees and retries). A need past the limit is left to
        the kernels' overflow check (which names ``queue_sizing``)."""
        edge = queues.edge
        wanted = min(edge.limit, max(need, 1))
        if wanted > edge.capacity:
            grown = int(edge.capacity * QUEUE_REGROWTH)  # a regrowth leaves headroom
            capacity = min(edge.limit, max(wanted, grown))
            keep = edge.parents is not None or queues.keep_parents
            nbytes = capacity * queues.vertex_dtype.itemsize * (2 if keep else 1)
            edge.vertices = edge.parents = None  # freed before the larger ones are taken
            edge.capacity = 0
            allocate = self._allocate
            edge.vertices = allocate(
                queues.graph, "edge queue", capacity, queues.vertex_dtype, nbytes
            )
            if keep:
                edge.parents = allocate(
                    queues.graph, "edge parent queue", capacity, queues.vertex_dtype, nbytes
                )
            edge.capacity = capacity
        elif queues.keep_parents and edge.parents is None:
            nbytes = edge.capacity * queues.vertex_dtype.itemsize
            edge.parents = self._allocate(
                queues.graph, "edge parent queue", edge.capacity, queues.vertex_dtype, nbytes
            )

    def _ensure_bin_queue(self, queues: _Queues, nbins: int, keep_parents: bool) -> None:
        """Make the bin queue long enough for ``nbins`` bins written in place: two meeting bins
        double it at the first level that bins (a search with none, such as a
        direction-optimizing one whose top-down levels all run fused, never does), freeing the
        old one first: the peak is the bin and kept queues that more bins take."""
        length = queues.kept_capacity * (2 if _meeting(nbins, queues.graph.n) else 1)
        if queues.bin_vertices.shape[0] >= length:
            return
        queues.bin_vertices = queues.bin_parents = None  # freed before the larger ones
        nbytes = length * queues.vertex_dtype.itemsize * (2 if keep_parents else 1)
        queues.bin_vertices = self._allocate(
            queues.graph, "bin queue", length, queues.vertex_dtype, nbytes
        )
        if keep_parents:
            queues.bin_parents = self._allocate(
                queues.graph, "bin parent queue", length, queues.vertex_dtype, nbytes
            )

    def _ensure_kept_queue(self, queues: _Queues, keep_parents: bool) -> None:
        """Allocate, once per search, the queue of survivors that binning reads."""
        if queues.kept_vertices is not None:
            return
        itemsize = queues.vertex_dtype.itemsize
        nbytes = queues.kept_capacity * itemsize * (2 if keep_parents else 1)
        queues.kept_vertices = self._allocate(
            queues.graph, "kept queue", queues.kept_capacity, queues.vertex_dtype, nbytes
        )
        if keep_parents:
            queues.kept_parents = self._allocate(
                queues.graph, "kept parent queue", queues.kept_capacity, queues.vertex_dtype, nbytes
            )

    @staticmethod
    def _allocate(graph: DistGraph, what: str, length: int, dtype: np.dtype, total: int) -> Any:
        """``cupy.empty``, turning out-of-memory into a ``DeviceError`` that says what to do."""
        try:
            return cupy.empty(length, dtype=dtype)
        except cupy.cuda.memory.OutOfMemoryError:
            raise DeviceError(
                f"out of GPU memory on rank {graph.rank} allocating the {what} "
                f"({length * dtype.itemsize} bytes); the search needs {total} bytes of queues "
                f"beside the graph's {graph.nbytes()} bytes: use more GPUs (ranks), or lower "
                f"the CUDA backend's queue_sizing"
            ) from None
