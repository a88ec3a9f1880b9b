"""Device buffers of the CUDA backend: the queues of Merrill et al. 2012 (section 3: every stage
reads one queue and appends to the next), the per-graph resources every search of a graph
reuses (``prepare``), and their allocation.

A graph's edge queue belongs to its ``CudaGraphResources`` and grows to the exact length of
the largest expansion (or strip) so far, never past its limit (``queue_sizing`` x the rank's
stored edges). A search's other queues (``SearchQueues``) are allocated by ``start``; those only
some searches need (meeting bins, the kept queue, fused levels' spare queues, hub pieces,
bottom-up bitmaps) are allocated at first use, once per search, by the ``ensure_*`` helpers.

Invariants: every allocation goes through ``allocate``, which turns out-of-memory into a
``DeviceError`` saying what to lower; a queue is freed before its larger replacement is taken,
so the peak is never both; no capacity is smaller than what its stage can append in a level
(filtering claims a vertex once, each vertex enters one frontier once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import cupy
import numpy as np

from ...arrays import empty_pinned, to_module
from ...constants import UNREACHED
from ...errors import DeviceError
from ...graph import DistGraph
from ..base import SearchState, frontier_bitmap_bytes
from .compressed import DeviceColumns
from .counters import COUNTER_DTYPE, LevelCounts
from .host_memory import host_empty, host_view
from .kernels import (
    FUSED_LOG_FIELDS,
    FUSED_SCRATCH_SLOTS,
    Counter,
    StageKernels,
)
from .launch_policy import QUEUE_REGROWTH, LaunchPolicy, uses_meeting_bins

UNREACHED_BYTE = 0xFF
"""Every byte of UNREACHED (-1) in two's complement: labels and predecessors start as a memset,
which runs at copy bandwidth (an elementwise fill of the int64 predecessors runs at half)."""
assert UNREACHED == -1, "UNREACHED_BYTE assumes UNREACHED is -1"

EDGE_QUEUE_FREE_SHARE = 0.8
"""Share of the device's free bytes an edge queue may take when its limit is lowered to fit
(``fit_edge_queue``): the rest is left to the level's other queues (kept items, bins)."""

MIN_EDGE_QUEUE = 1 << 16
"""Fewest items an edge queue is lowered to: below it, strips would cost more than they save."""

FUSED_LOG_ROWS = 4096
"""Rows the fused levels' log of a graph starts with (a row a level, ``CudaGraphResources``); a
launch is given at least a quarter of that many free rows (or what it may run), the log
doubling when fewer are left (``fused._log_room``)."""

KEPT_QUEUE_BYTES = 64 << 20
"""A graph whose search queues (vertex frontiers, bins, kept items, the fused kernel's heavy
queues and counts) take at most this many bytes on a rank keeps them from one search to the
next (``CudaGraphResources.kept_queues``), so a small graph's search allocates only its
labels, predecessors and visited mask: each allocation costs a few microseconds, and a road
network's whole search takes under two milliseconds. A larger graph's search allocates its
queues and gives them back at its end, for the validation and statistics that follow."""

MASK_DTYPE = np.dtype(np.uint32)
"""Word of the visited bitmask: bit ``v % 32`` of word ``v // 32`` is vertex v."""
MASK_WORD_BITS = 32

KERNELS = {
    "start": ("start", "search_start"),
    "expand": ("expand", "expand_kernel"),
    "frontier_lengths": ("expand", "frontier_lengths_kernel"),
    "expand_heavy": ("expand", "expand_heavy_kernel"),
    "filter": ("filter_partition", "filter_kernel"),
    "partition": ("filter_partition", "partition_kernel"),
    "contract": ("contract", "contract_kernel"),
    "contract_row": ("contract", "contract_row_kernel"),
    "contract_expand": ("contract_expand", "contract_expand_kernel"),
    "level_pairs": ("contract_expand", "level_pairs_kernel"),
    "block_levels": ("contract_expand", "block_levels_kernel"),
    "contract_expand_peers": ("contract_expand", "contract_expand_peers_kernel"),
    "frontier_bitmap": ("bottom_up", "frontier_bitmap_kernel"),
    "row_frontier": ("bottom_up", "row_frontier_kernel"),
    "mark_visited": ("bottom_up", "mark_visited_kernel"),
    "inbound_frontier": ("inbound", "inbound_frontier_kernel"),
    "frontier_degrees": ("bottom_up", "frontier_degrees_kernel"),
    "unexplored": ("start", "unexplored_kernel"),
    "bottom_up": ("bottom_up", "bottom_up_kernel"),
}
"""Kernel handles of a graph's searches by role: (stage file, ``extern "C"`` name)."""

VARINT_KERNELS = {
    "expand": ("expand", "expand_varint_kernel"),
    "expand_heavy": ("expand", "expand_heavy_varint_kernel"),
    "bottom_up": ("bottom_up", "bottom_up_varint_kernel"),
}
"""The roles whose kernels read rows, for a graph with compressed columns (``DeviceColumns``)."""


def fill_bytes(array: Any, byte: int) -> None:
    """Set every byte of ``array`` to ``byte`` (cudaMemsetAsync on the current stream)."""
    stream = cupy.cuda.get_current_stream()
    cupy.cuda.runtime.memsetAsync(array.data.ptr, byte, array.nbytes, stream.ptr)


def allocate(graph: DistGraph, what: str, length: int, dtype: np.dtype, total: int) -> Any:
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


def check_graph(graph: DistGraph) -> np.dtype:
    """The column-id dtype of a graph the kernels can take (plain or ``DeviceColumns``);
    raise otherwise."""
    if not isinstance(graph.row_offsets, cupy.ndarray) or not isinstance(
        graph.column_indices, (cupy.ndarray, DeviceColumns)
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


@dataclass
class EdgeQueue:
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
class CudaGraphResources:
    """What every search of one graph reuses on this rank (``CudaBackend.prepare``): the edge queue
    (empty at first), the largest out-degree, the hubs (vertices of more than ``heavy_degree``
    neighbours: capacity of the fused kernel's heavy queues) and their lists cut into pieces of
    ``heavy_degree`` (capacity of expansion's hub pieces), the rows longer than the fused levels
    take (``long_rows``: local row -> (first column position, out-degree), on the host, so a search
    from one of them knows its level 0's edges and row without a read), and the kernels by role
    (``KERNELS``) on the process's device, for the graph's column width, each stage compiled at its
    first use (``StageKernels``). The fused levels' log (made by the first fused run, grown as
    needed), the one-block kernel's shared-memory layout (``fused._block_layout``) and the tiers of
    fused launches (``fused._tiers``) are kept here too: searches of a graph run one at a time, and
    each reads its rows of the log before the next begins. So is batched BFS's gather order
    (``lanes.GatherOrder``) and the bitmap of the owned vertices that have edges
    (``link.reached_bits``), each built on first need, and, when ``keeps_queues``
    (``KEPT_QUEUE_BYTES``), the queues of its last search by name (``search_queue``)."""

    vertex_dtype: np.dtype
    edge_queue: EdgeQueue
    max_degree: int
    hubs: int
    hub_pieces: int
    kernels: StageKernels
    long_rows: dict[int, tuple[int, int]] = field(default_factory=dict)
    fused_log: Any | None = None  # a row per fused level (FUSED_LOG_FIELDS int64), mapped
    fused_log_host: np.ndarray | None = None  # the same memory, as the host reads it
    block_layout: tuple[int, int, int] | None = None
    fused_tiers: list[Any] | None = None  # the launches fused runs choose from (fused._tiers)
    gather_order: Any | None = None
    edge_bits: Any | None = None  # bit k: owned vertex k has out-edges (frontier bitmap layout)
    search_rows: tuple[Any, ...] | None = None
    search_rows_note: str | None = None  # relax.search_rows's
    keeps_queues: bool = False
    kept_queues: dict[str, Any] = field(default_factory=dict)
    path_block_bytes: dict[bool, int] = field(default_factory=dict)  # relax.block_kernel_bytes


HOST_DEGREES_ROWS = 1 << 21
"""Rows up to which ``prepare`` works out the degrees on the host: one copy of the row offsets,
where on the device a CuPy kernel would take a first run 0.1-0.15 s to compile."""


def prepare(graph: DistGraph, policy: LaunchPolicy, queue_sizing: float) -> CudaGraphResources:
    """The per-graph resources of ``graph`` (rank-local; one pass over its degrees)."""
    vertex_dtype = check_graph(graph)
    offsets = graph.row_offsets
    if graph.nlocal <= HOST_DEGREES_ROWS:
        offsets = to_module(np, offsets)
    degrees = offsets[1:] - offsets[:-1]
    max_degree = int(degrees.max()) if degrees.size else 0
    cut = policy.heavy_degree
    heavy = degrees[degrees > cut] if max_degree > cut else degrees[:0]
    pieces = int(((heavy + cut - 1) // cut).sum()) if heavy.size else 0
    long_rows = {}
    if max_degree > policy.fused_max_edges:  # a handful: the hubs of a Kronecker graph
        rows = to_module(np, (degrees > policy.fused_max_edges).nonzero()[0])
        starts = to_module(np, offsets[rows]).tolist()
        ends = to_module(np, offsets[rows + 1]).tolist()
        long_rows = {r: (a, b - a) for r, a, b in zip(rows.tolist(), starts, ends, strict=True)}
    local_edges = graph.num_local_edges
    limit = max(1, min(local_edges, int(np.ceil(local_edges * queue_sizing))))
    bits = 8 * vertex_dtype.itemsize
    roles = KERNELS | VARINT_KERNELS if graph.compressed else KERNELS
    # frontier and spare, bins and kept items with their parents, two heavy queues
    items = 2 * graph.nlocal + 4 * min(local_edges, graph.n) + 2 * int(heavy.size)
    return CudaGraphResources(
        vertex_dtype=vertex_dtype,
        edge_queue=EdgeQueue(limit=limit),
        max_degree=max_degree,
        hubs=int(heavy.size),
        hub_pieces=pieces,
        kernels=StageKernels(roles, policy, bits),
        long_rows=long_rows,
        keeps_queues=items * vertex_dtype.itemsize <= KEPT_QUEUE_BYTES,
    )


def search_queue(
    resources: CudaGraphResources,
    graph: DistGraph,
    what: str,
    length: int,
    dtype: np.dtype,
    total: int,
) -> Any:
    """A search's queue ``what`` of at least ``length`` items (uninitialized): the one the
    graph's last search left when the graph keeps its queues and that one is long enough, else
    a new one (``allocate``; ``total``: the bytes of the queues allocated with it), kept for the
    next search when the graph keeps its queues."""
    kept = resources.kept_queues.get(what)
    if isinstance(kept, cupy.ndarray) and kept.shape[0] >= length and kept.dtype == dtype:
        return kept
    array = allocate(graph, what, length, dtype, total)
    if resources.keeps_queues:
        resources.kept_queues[what] = array
    return array


def store_scalars(host: np.ndarray, stores: list[tuple[Any, int, int]]) -> None:
    """Each ``(array, index, value)`` of ``stores`` written to the device by one small
    asynchronous copy from its slot of ``host``, a pinned int64 array of at least as many slots
    (little-endian: a narrower element takes the slot's low bytes). A CuPy scalar store
    launches a kernel apiece, several times the cost. ``host`` must live until the copies ran."""
    stream = cupy.cuda.get_current_stream().ptr
    kind = cupy.cuda.runtime.memcpyHostToDevice
    for slot, (array, index, value) in enumerate(stores):
        host[slot] = value
        at = array.data.ptr + index * array.itemsize
        source = host.ctypes.data + slot * host.itemsize
        cupy.cuda.runtime.memcpyAsync(at, source, array.itemsize, kind, stream)


def pinned_queue(resources: CudaGraphResources, what: str, length: int, dtype: Any) -> Any:
    """A pinned host array ``what`` of ``length`` items, kept like ``search_queue``'s (under
    a name of its own: no device queue's)."""
    kept = resources.kept_queues.get(what)
    if isinstance(kept, np.ndarray) and kept.shape[0] == length and kept.dtype == dtype:
        return kept
    array = empty_pinned(length, dtype)
    if resources.keeps_queues:
        resources.kept_queues[what] = array
    return array


@dataclass
class SearchQueues:
    """Device buffers of one search on one rank (``SearchState.scratch["cuda"]``)."""

    graph: DistGraph
    resources: CudaGraphResources
    vertex_dtype: np.dtype
    queue_sizing: float
    edge: EdgeQueue  # the graph's edge queue (shared by its searches, one at a time)
    keep_parents: bool
    kept_capacity: int
    bin_vertices: Any
    bin_parents: Any | None
    frontier: Any
    counters: Any
    pinned: np.ndarray
    kernels: StageKernels  # the graph's kernels by role (KERNELS), compiled at first use
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
    fused_log_rows: int = 0  # rows of the graph's fused level log this search's runs filled
    level: LevelCounts | None = None
    levels_begun: int = 0  # begin_level calls: 1 while no level's kernel has added to the counts
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
    source_row: int = -1  # local row of the search's one source when this rank owns it

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

    def count_frontier_edges(self, edges: int, graph: DistGraph, size: int) -> None:
        """The current frontier (``size`` vertices) has ``edges`` out-edges on this rank; for
        the sources' frontier, n_u and m_u follow (carried from then on by ``advance``)."""
        self.frontier_edges = (self.generation, edges)
        if self.generation == 0:
            self.unexplored = (0, graph.nlocal - size, graph.num_local_edges - edges)

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

    # Views of the counters, made at first use (a search that runs fused levels alone needs
    # none): the two counters kernels read a queue length from, the bins' (meeting bins: both
    # lengths, packed), and what a one-rank level reads.
    @cached_property
    def edge_count(self) -> Any:
        return self.counters[Counter.EDGES :]

    @cached_property
    def kept_count(self) -> Any:
        return self.counters[Counter.FILTERED :]

    @cached_property
    def bin_counter(self) -> Any:
        return self.counters[Counter.BINS :]

    @cached_property
    def fixed_counters(self) -> Any:
        return self.counters[: Counter.BINS]

    def grid(self, items: int, items_per_block: int) -> int:
        """Blocks for ``items`` (a host bound), at most the persistent grid."""
        return max(1, min(self.persistent_grid, -(-items // items_per_block)))

    def begin_level(self, edge_bound: int, cleared: bool = False) -> LevelCounts:
        """Zero the counters (asynchronously; ``cleared``: a kernel before did, or they are
        the start's, ``levels_begun`` 1, which no kernel added to: every level's kernels
        follow a ``begin_level``) and start the counts of a new level."""
        self.levels_begun += 1
        if not cleared:
            stream = cupy.cuda.get_current_stream().ptr
            cupy.cuda.runtime.memsetAsync(self.counters.data.ptr, 0, self.counters.nbytes, stream)
        self.level = LevelCounts(self, edge_bound)
        return self.level


def queues_of(state: SearchState) -> SearchQueues:
    """The CUDA queues of a search state (made by ``CudaBackend.start``)."""
    queues = state.scratch.get("cuda")
    if not isinstance(queues, SearchQueues):
        raise TypeError("this search state was not made by the CUDA backend's start()")
    return queues


def level_of(queues: SearchQueues) -> LevelCounts:
    """The counts of the search's current level."""
    assert queues.level is not None  # start() begins the first level
    return queues.level


def as_vertices(array: Any, queues: SearchQueues) -> Any:
    """``array`` as a device array of the graph's vertex dtype (no copy when it is one)."""
    return cupy.asarray(array).astype(queues.vertex_dtype, copy=False)


def grow_edge_queue(queues: SearchQueues, need: int) -> None:
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
        edge.vertices = allocate(queues.graph, "edge queue", capacity, queues.vertex_dtype, nbytes)
        if keep:
            edge.parents = allocate(
                queues.graph, "edge parent queue", capacity, queues.vertex_dtype, nbytes
            )
        edge.capacity = capacity
    elif queues.keep_parents and edge.parents is None:
        nbytes = edge.capacity * queues.vertex_dtype.itemsize
        edge.parents = allocate(
            queues.graph, "edge parent queue", edge.capacity, queues.vertex_dtype, nbytes
        )


def fit_edge_queue(queues: SearchQueues, need: int) -> None:
    """``grow_edge_queue`` for a level of ``need`` edges; when the device cannot hold that
    queue beside the graph and the search, its limit is lowered to what it can hold (kept for
    the graph's later searches), so the level is expanded in more strips rather than refused
    (``expand.strip_count`` reads the limit after this)."""
    try:
        grow_edge_queue(queues, need)
    except DeviceError:
        edge = queues.edge
        keep = queues.keep_parents or edge.parents is not None
        per_item = queues.vertex_dtype.itemsize * (2 if keep else 1)
        cupy.get_default_memory_pool().free_all_blocks()
        free, _ = cupy.cuda.runtime.memGetInfo()
        fits = int(EDGE_QUEUE_FREE_SHARE * free) // per_item
        if fits < MIN_EDGE_QUEUE or fits >= min(edge.limit, max(need, 1)):
            raise
        edge.limit = fits
        grow_edge_queue(queues, min(need, fits))


def ensure_bin_queue(queues: SearchQueues, nbins: int, keep_parents: bool) -> None:
    """Make the bin queue long enough for ``nbins`` bins written in place: two meeting bins
    double it at the first level that bins (a search with none, such as a
    direction-optimizing one whose top-down levels all run fused, never does), freeing the
    old one first: the peak is the bin and kept queues that more bins take."""
    length = queues.kept_capacity * (2 if uses_meeting_bins(nbins, queues.graph.n) else 1)
    if queues.bin_vertices.shape[0] >= length:
        return
    queues.bin_vertices = queues.bin_parents = None  # freed before the larger ones
    queues.resources.kept_queues.pop("bin queue", None)
    queues.resources.kept_queues.pop("bin parent queue", None)
    nbytes = length * queues.vertex_dtype.itemsize * (2 if keep_parents else 1)
    queues.bin_vertices = _queue(queues, "bin queue", length, nbytes)
    if keep_parents:
        queues.bin_parents = _queue(queues, "bin parent queue", length, nbytes)


def _queue(queues: SearchQueues, what: str, length: int, total: int) -> Any:
    """``search_queue`` of vertex ids for the search of ``queues``."""
    resources, graph, dtype = queues.resources, queues.graph, queues.vertex_dtype
    return search_queue(resources, graph, what, length, dtype, total)


def ensure_kept_queue(queues: SearchQueues, keep_parents: bool) -> None:
    """Allocate, once per search, the queue of survivors that binning reads."""
    if queues.kept_vertices is not None:
        return
    itemsize = queues.vertex_dtype.itemsize
    nbytes = queues.kept_capacity * itemsize * (2 if keep_parents else 1)
    queues.kept_vertices = _queue(queues, "kept queue", queues.kept_capacity, nbytes)
    if keep_parents:
        queues.kept_parents = _queue(queues, "kept parent queue", queues.kept_capacity, nbytes)


def ensure_fused_queues(queues: SearchQueues) -> None:
    """Allocate, once per search, the fused kernel's spare frontier, heavy queues, scratch.

    A heavy queue holds one level's frontier vertices of more than ``heavy_degree``
    neighbours; each vertex enters one frontier once, so the rank's count of such vertices
    (``CudaGraphResources.hubs``) is a capacity no level can exceed.
    """
    if queues.spare_frontier is not None:
        return
    graph, dtype = queues.graph, queues.vertex_dtype
    length = queues.frontier.shape[0]
    heavy = queues.resources.hubs
    nbytes = (length + 2 * max(1, heavy)) * dtype.itemsize
    nbytes += FUSED_SCRATCH_SLOTS * COUNTER_DTYPE.itemsize
    queues.spare_frontier = _queue(queues, "spare vertex frontier", length, nbytes)
    queues.heavy_vertices = _queue(queues, "heavy queue", max(1, heavy), nbytes)
    queues.spare_heavy = _queue(queues, "spare heavy queue", max(1, heavy), nbytes)
    queues.heavy_capacity = heavy
    queues.fused_scratch = search_queue(
        queues.resources, graph, "fused level counts", FUSED_SCRATCH_SLOTS, COUNTER_DTYPE, nbytes
    )
    if queues.resources.fused_log is None:
        allocate_fused_log(queues.resources, FUSED_LOG_ROWS)


def allocate_fused_log(resources: CudaGraphResources, rows: int) -> None:
    """A fused level log of ``rows`` rows for the graph, in mapped host memory (the kernels
    write a row a level over the link, fire-and-forget; the host reads it with no copy once the
    launch is done), keeping the rows of the one it replaces."""
    log = host_empty(rows * FUSED_LOG_FIELDS, COUNTER_DTYPE)
    view = host_view(log)
    if resources.fused_log_host is not None:
        view[: resources.fused_log_host.shape[0]] = resources.fused_log_host
    resources.fused_log, resources.fused_log_host = log, view


def ensure_heavy_pieces(queues: SearchQueues, spread: int, hub_pieces: int | None = None) -> int:
    """Allocate, once per search, ``expand``'s queue of hub pieces; returns its capacity:
    the rank's lists of more than ``heavy_degree`` neighbours cut into pieces of that many
    (``CudaGraphResources.hub_pieces``, or ``hub_pieces`` for other rows: an inbound level's;
    each list enters a level's frontier at most once), and one piece for each vertex of a
    frontier of at most ``spread`` vertices (``LaunchPolicy.spread_frontier``); reallocated
    where ``hub_pieces`` needs more."""
    hub_pieces = queues.resources.hub_pieces if hub_pieces is None else hub_pieces
    if queues.piece_vertices is None or queues.heavy_pieces < hub_pieces + spread:
        graph, dtype = queues.graph, queues.vertex_dtype
        pieces = max(queues.resources.hub_pieces, hub_pieces) + spread
        length = max(1, pieces)
        nbytes = length * (dtype.itemsize + 2 * COUNTER_DTYPE.itemsize)
        queues.piece_vertices = allocate(graph, "hub pieces", length, dtype, nbytes)
        queues.heavy_columns = allocate(graph, "hub piece columns", length, COUNTER_DTYPE, nbytes)
        queues.heavy_slots = allocate(graph, "hub piece slots", length, COUNTER_DTYPE, nbytes)
        queues.heavy_pieces = pieces
    return queues.heavy_pieces


def zeroed_tally(queues: SearchQueues) -> Any:
    """The search's two int64 sums, zeroed (allocated on first use)."""
    if queues.tally is None:
        queues.tally = allocate(queues.graph, "tally", 2, COUNTER_DTYPE, 16)
    queues.tally.fill(0)
    return queues.tally


def ensure_bitmaps(queues: SearchQueues) -> list[Any]:
    """Allocate, once per search, the current and next frontier bitmaps of this rank and
    its candidate words."""
    if queues.bitmaps is None:
        graph = queues.graph
        words = frontier_bitmap_bytes(graph.n, graph.size) // MASK_DTYPE.itemsize
        nbytes = 3 * words * MASK_DTYPE.itemsize
        queues.bitmaps = [
            allocate(graph, f"{which} frontier bitmap", words, MASK_DTYPE, nbytes)
            for which in ("current", "next")
        ]
        queues.candidates = allocate(graph, "bottom-up candidate words", words, MASK_DTYPE, nbytes)
    return queues.bitmaps
