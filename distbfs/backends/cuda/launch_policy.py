"""Launch policy of the CUDA backend: the one place where its tuning is chosen.

Every tunable number the kernels in ``kernels/`` use arrives as a ``-D`` compile option made by
``LaunchPolicy.defines()`` (``kernels/common.cuh`` refuses to compile without them), so no kernel
and no host module holds a magic number of its own. Merrill et al. 2012 tune the same knobs per
architecture (section 4.1: gathering thresholds; section 4.2: warp and history culling). The host
side's tuning lives here too, as module constants: how large the edge queue may grow
(``DEFAULT_QUEUE_SIZING``, ``QUEUE_REGROWTH``), when the own bin is contracted before the
exchange (``OVERLAP_MIN_ITEMS``, section 6.1), when two bins meet in one queue
(``MEETING_BINS``), and how long a fused peer level waits (``PEER_TIMEOUT_SECONDS``).

Invariants: thread counts are multiples of the warp width (32); hash sizes are powers of two;
the policy is frozen, so a policy and a device name one compiled module.
"""

from __future__ import annotations

from dataclasses import dataclass

WARP_THREADS = 32
"""Threads per warp on every NVIDIA GPU the kernels target."""

PATH_HISTOGRAM_BINS = 256
"""Bins of the delta-stepping grid's histogram of the far pile (``kSplitBins``,
``kernels/relax.cu``)."""

MAX_THREADS_PER_SM = 2048
"""Resident threads per multiprocessor on the GPUs the kernels target (sm_70 to sm_90)."""


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


@dataclass(frozen=True)
class LaunchPolicy:
    """Block shapes and culling-hash sizes of the CUDA backend.

    Attributes
    ----------
    block_threads : int
        Threads per block of the two-phase kernels (expand, filter_partition, contract). Adjacency
        lists of at least this many neighbours are strip-mined by the whole block (CTA gathering).
    items_per_thread : int
        Items each thread handles per tile in filter_partition and contract (a tile is
        ``block_threads * items_per_thread`` queue items).
    blocks_per_sm : int
        Resident blocks per multiprocessor aimed at; the persistent grid of a kernel whose input
        length lives on the device is ``blocks_per_sm * multiprocessors`` blocks (grid-stride).
    warp_hash_slots : int
        Slots of the per-warp hash used for warp culling (section 4.2), power of two.
    history_hash_slots : int
        Slots of the per-block history hash of recently seen ids (section 4.2), power of two.
    max_bins : int
        Most owner bins (ranks) filter_partition can sort into; sizes the per-block histograms.
    fused_threads : int
        Threads per block of the cooperative grid that runs small levels back to back
        (contract-expand, sections 5.2 and 5.4; ``kernels/contract_expand.cu``).
    fused_blocks_per_sm : int
        Resident blocks per multiprocessor of that grid. The grid is this many blocks per
        multiprocessor, fewer if the occupancy calculator says fewer fit (a cooperative launch
        needs every block resident at once). Compiled into ``__launch_bounds__`` as the minimum
        blocks per multiprocessor, so registers are budgeted for it; ``fused_threads *
        fused_blocks_per_sm`` must not exceed the 2048 threads a multiprocessor holds. 256 x 3
        (396 blocks on an H200): the kernel needs 80 registers a thread on sm_90 (4 blocks would
        cap it at 64 and spill more); ``python -m distbfs.backends.cuda.kernels`` reports the
        registers, shared memory and spills of the compiled kernel.
    heavy_degree : int
        Adjacency lists longer than this (hubs) are gathered by the whole grid (grid gathering:
        their edges are dealt out over every thread of every block), in the fused kernel and in
        two-phase expansion (``expand_heavy_kernel``); shorter lists are gathered inside the
        block that owns their vertex. A block strip-mines at most this many edges of one list
        (8 rounds of 256 threads by default), so no single hub serialises a level on one
        multiprocessor: a Kronecker frontier of 200 vertices can hold 2 M edges.
    spread_frontier : int
        A two-phase frontier of at most this many vertices (fewer tiles of ``block_threads``
        than the grid has blocks) also sends its lists of more than ``spread_degree``
        neighbours to grid gathering, one piece each; larger frontiers keep ``heavy_degree``.
        A Kronecker search's level from its first hubs (hundreds of vertices, lists of hundreds
        to thousands of edges besides the hubs) otherwise expands in a few blocks, the same
        time on one GPU as on each of two. 0: never.
    spread_degree : int
        The list length above which such a frontier's lists go to grid gathering (a piece
        fills at least half a block's threads).
    decode_point_edges : int
        Compressed columns (``distbfs.backends.cuda.compressed``) keep a decode point every
        this many edge slots (the byte where a slot's code starts and the neighbour before it,
        12 bytes with int32 ids): any slot is decoded from a row's head or the point before it
        in fewer than this many steps, and expansion decodes lists in pieces of at most this
        many neighbours, one thread a piece. 128: the points cost under 0.1 bytes an edge
        (3% of a Kronecker graph's compressed columns) and a hub is decoded by 16 threads per
        ``heavy_degree`` piece.
    fused_max_edges : int
        The fused grid stops before a level whose frontier has more edges than this.
    fused_max_frontier : int
        The hybrid strategy hands a level to the fused grid while its vertex frontier holds at
        most this many vertices, and the grid stops before a larger one (the peer grids of
        several ranks: this many per rank, the whole frontier up to ranks x this).
    fused_block_edges : int
        On a sparse graph (``fused_block_degree``), one rank's fused levels run in a grid of ONE
        block (block barriers, 0.12 us, instead of grid barriers, 1 us; the frontiers and the
        visited bitmask in shared memory) while the frontier has at most this many edges, in a
        grid beyond, and back in one block once they fall below half of it: a road network's
        or a mesh's thousands of tiny levels each pay a barrier. 0: never one block. 1024 (one
        H100, ``benchmarks/tune_fused_block.py``; one H200 with the bitmask in shared memory:
        1024 to 4096 alike on luxembourg_osm, none of whose frontiers has more edges).
    fused_small_grid_edges : int
        On a sparse graph, frontiers of more than ``fused_block_edges`` edges and at most this
        many run in a grid of ``fused_small_grid_blocks`` blocks, larger ones in the full grid
        (which hands back below half of this): a grid barrier costs less over fewer blocks,
        and a mesh's frontier of a few thousand edges has work for few. 0: no small grid.
    fused_small_grid_blocks : int
        Blocks of that small grid (at most the full grid's). 65536 edges, 64 blocks (one H200,
        ``benchmarks/profile_fused_levels.py``): the 4096^2 grid 0.74x the time of the full
        grid alone; 8192 to 32768 edges with 16 or 32 blocks: 0.90-0.95x, 132 blocks 0.78x;
        luxembourg_osm and the 300^3 grid unchanged.
    fused_block_degree : int
        Graphs of a higher mean degree never take the one-block grid or the small grid: a
        Kronecker frontier of a few vertices has thousands of edges, and the extra launch at
        each hand-over costs more than its few levels save.
    fused_pair_degree : int
        Graphs whose every out-degree is at most this run their fused grid levels two between
        grid barriers (``level_pairs_kernel``: the owner of a vertex claimed in the first level
        claims its row's columns at once, tentatively; ``kernels/contract_expand.cu``): a mesh's
        level is a chain of dependent accesses and a barrier, and the second level of a pair
        pays neither the barrier nor the frontier's count and append. Also the width of a
        thread's row of claims: 6 takes the 2D and 3D lattices, and the kernel's registers fit
        three blocks a multiprocessor without spilling (8 spills). 0: never in pairs; above
        ``heavy_degree``, that (``pair_degree``: a paired graph has no heavy list).
    fused_prefetch_edges : int
        A pair from a frontier of at most this many edges asks L2 for the lines that follow
        its claimed vertices' rows, labels and columns (a mesh's frontier moves along the
        vertex order; a small frontier waits on latency, and some thread of every level is the
        first to touch a line); larger frontiers keep the memory system busy without it.
    path_threads : int
        Threads per block of the shortest-path kernels (``kernels/relax.cu``): the persistent
        delta-stepping grid and the tree passes.
    path_piece_edges : int
        Rows longer than this are cut into pieces of this many edges that the whole grid's
        warps share after a barrier; rows longer than a warp up to it are relaxed by one warp.
    path_one_block_vertices : int
        Graphs of at most this many vertices run the delta-stepping grid as ONE block (block
        barriers, 0.12 us, instead of grid barriers, 1 us): road networks, whose buckets hold
        a few hundred vertices, pay a barrier per step thousands of times. Those without settle
        passes run the one-block kernel, whose near queues live in shared memory.
    path_block_threads : int
        Threads of the one-block kernel (its only block: a step of more vertices than threads
        takes more than one chain of memory round trips; the advance makes a bucket at least
        this many vertices wide). luxembourg_osm on one H200, 64-delta buckets: 256 threads
        6.75 ms, 512 5.23 to 5.67 ms (35 buckets against 66, 1,313 steps against 1,402), 1024
        6.92 ms (64 registers a thread: spills).
    path_steps_blocks_per_sm : int
        Blocks a multiprocessor of the grid search without settle passes
        (``delta_stepping_steps``: meshes, road networks past ``path_one_block_vertices``), at
        most as many as are resident (0: every resident block). A step there holds a few hundred
        warps' work, and every block of the grid meets at each step's barrier. 4096^2 grid, one
        H100, alternating processes: 1 block 61.4-61.8 ms, every resident block (2) 61.6-62.3.
    path_steps_window : int
        That search's step window, in deltas: a step relaxes the rows of its queued vertices
        less than this many deltas above the queue's least distance; the others wait a step
        in the next queue (0: every queued vertex relaxes). A bucket takes about as many steps
        as its paths have hops, whatever its width; the window keeps wide buckets from
        relaxing each edge again and again. 4096^2 grid, weights 1..255 (delta 32), one H100,
        buckets of 256 bins of 8 deltas: window 32 / 64 / 96 / 128 deltas 59.1 / 57.6 / 62.0 /
        71.4 ms (1.8 / 3.8 / 7.1 / 11.2 relaxations an edge). Window 64 on bins of 8 against
        none on bins of 1: luxembourg_osm on this kernel 0.89x, a 1024^2 grid 0.99x.
    path_steps_bin_deltas : int
        That search's advance cuts buckets on histogram bins this many deltas wide (buckets
        up to ``path_bucket_bins`` bins): with the window, wider buckets take fewer steps. Same
        grid, window 64 deltas: bins of 4 / 8 / 16 deltas 58.4 / 57.6 / 57.8 ms (16 / 9 / 5
        buckets, 8,859 / 8,738 / 8,655 steps); without a window, bins of one delta: 61.9 ms
        (60 buckets, 9,356 steps, 6.9 relaxations an edge).
    path_block_queue : int
        Vertices of each of the one-block kernel's two near queues held in shared memory (a
        step that queues more puts the rest in the global queue).
    path_split_divisor : int
        A bucket ends at the first delta-wide histogram boundary below which at least 1 / this
        of the far pile's live vertices lie, and at least as many as the grid has threads: a
        long pile shrinks by a fixed fraction per bucket rather than being rescanned once per
        delta, and a bucket has work for the whole grid.
    path_bucket_bins : int
        ... but at most this many deltas past the previous end, on graphs of mean degree below
        ``path_dense_degree`` (road networks, meshes: wide buckets, fewer steps, which cost more
        than the relaxations they repeat). One H200, 64 / 128 / 256: luxembourg_osm 5.0 / 4.4 /
        4.1 ms (35 / 18 / 10 buckets, 1.11 / 1.21 / 1.37 relaxations an edge), the 4096^2 grid
        103.6 / 92.2 / 85.6 ms (2.5 / 4.0 / 7.1 relaxations an edge). At most the advance's
        histogram bins (``PATH_HISTOGRAM_BINS``).
    path_dense_bucket_bins : int
        The same cap on denser graphs (Kronecker): a vertex improved again and again within one
        wide bucket relaxes all its edges each time.
    path_dense_degree : int
        Mean degree (stored edges over vertices) from which a graph is dense.
    path_log_rows : int
        Buckets one launch of the delta-stepping grid logs before it returns to the host.
    path_striped_delta : int
        The striped steps of several GPUs (``striped_steps``) widen the bucket width chosen
        from the weights and degrees (``choose_delta``) by this factor: a step costs a few host
        round trips and an exchange whatever its size, a bucket two scans of the owned
        vertices, and on a dense graph a wider bucket repeats few relaxations. kron26, weights
        1..255 (delta 4.08), two H100s: x1 296 ms a search (142 buckets), x4 197, x8 131, x16
        126 (11 buckets), x32 206, x64 165; one GPU's persistent search 140 ms.
    path_pull_above : float
        A striped bucket's heavy step on an undirected graph pulls (``pull_requests``) where
        the settled vertices' out-edges exceed this many times the unsettled vertices'
        (``PathPlan.pull_above``; >= 0, ``inf``: never). kron26, weights 1..255, two H200s,
        same process, alternating: 80.4-88.3 ms a search against 92.2-95.0 pushing, the
        bucket that settles the hubs 38.5 ms of relaxation against 56 (0.25: the same
        buckets pull).
    path_near_fraction : float
        Slots of each near queue of the grid search, as a fraction of the vertices (0 <
        fraction <= 1; at least one). A step reserves a slot for every improvement inside the
        bucket while the target's claim is in flight and leaves a hole where the claim fails,
        so a step can reserve more slots than there are vertices; a queue that outgrows its
        slots is replaced by a scan of every vertex's stamp at the next step.
    path_far_fraction : float
        Slots of each far pile, as a fraction of the vertices (0 < fraction <= 1; at least
        one). A vertex has an entry for each bucket in which it improved beyond the bucket's
        end, until its distance's turn comes, so 1 overflows only when many vertices improve
        in several buckets each; a pile that outgrows its slots is replaced by a scan of every
        vertex at the next advance: less memory (8 bytes a slot with int32 ids: the vertex and
        its distance as float32), a pass over all vertices per bucket.
    path_settle_degree : int
        Graphs of at least this mean degree (0: every graph) split each bucket's relaxations:
        its steps relax the edges that land inside it, a settle pass at its end the others,
        once, from the final distances (Kronecker: a hub improved several times within its
        bucket reads its long row again each time, but relaxes it once). Below, steps relax
        every edge and there are no settle passes (road networks, meshes: a wide bucket keeps
        nearly every edge inside, and a settle pass would cost a pass and a barrier a bucket).

    Notes
    -----
    Why the fused limits are as large as they are. A two-phase level pays several launches from
    Python, stream gaps and a host read of its counters besides its work; a fused level pays one
    grid barrier (the costs: benchmarks/RESULTS.md, "fused limits"), and its work is the
    two-phase level's minus the edge queue: one column read, a bitmask test and, for new
    vertices, a claim per edge, dealt over the whole device as a two-phase kernel's is (frontier
    split evenly over the blocks, lists longer than ``heavy_degree`` over every thread). So a
    fused level is not slower per edge at any size; the limits only bound what one launch can
    take, and a level of 2**20 edges (about three memory operations an edge) stays far under a
    two-phase level's fixed cost. The 300^3 3D grid searched from a corner (frontier up to
    67,500 vertices and ~400 k edges) thus runs every level fused, and so do the 2D grids and
    road networks. Kronecker graphs reach frontiers of millions of edges within two or three
    levels: those go to the two-phase path (a launch of the fused grid that stops at once is
    paid once per such level). Retune both with ``benchmarks/bench_gpu.py --strategies hybrid
    two_phase`` on the Kronecker graphs.
    """

    block_threads: int = 256
    items_per_thread: int = 4
    blocks_per_sm: int = 4
    warp_hash_slots: int = 128
    history_hash_slots: int = 1024
    max_bins: int = 1024
    fused_threads: int = 256
    fused_blocks_per_sm: int = 3
    heavy_degree: int = 2048
    spread_frontier: int = 1 << 14
    spread_degree: int = 128
    decode_point_edges: int = 128
    fused_max_edges: int = 1 << 20
    fused_max_frontier: int = 1 << 17
    fused_block_edges: int = 1024
    fused_small_grid_edges: int = 1 << 16
    fused_small_grid_blocks: int = 64
    fused_block_degree: int = 8
    fused_pair_degree: int = 6
    fused_prefetch_edges: int = 1 << 16
    path_threads: int = 256
    path_piece_edges: int = 256
    path_one_block_vertices: int = 1 << 19
    path_block_threads: int = 512
    path_block_queue: int = 4096
    path_steps_blocks_per_sm: int = 1
    path_steps_window: int = 64
    path_steps_bin_deltas: int = 8
    path_split_divisor: int = 8
    path_bucket_bins: int = 256
    path_dense_bucket_bins: int = 4
    path_dense_degree: int = 8
    path_log_rows: int = 1024
    path_striped_delta: int = 16
    path_pull_above: float = 1.0
    path_near_fraction: float = 1.0
    path_far_fraction: float = 1.0
    path_settle_degree: int = 8

    def __post_init__(self) -> None:
        for name in ("block_threads", "fused_threads", "path_threads", "path_block_threads"):
            value = getattr(self, name)
            if value % WARP_THREADS or not WARP_THREADS <= value <= 1024:
                raise ValueError(f"LaunchPolicy.{name}={value}: need a multiple of 32, 32 to 1024")
        for name in ("warp_hash_slots", "history_hash_slots"):
            value = getattr(self, name)
            if not _is_power_of_two(value):
                raise ValueError(f"LaunchPolicy.{name}={value}: need a power of two")
        for name in (
            "items_per_thread",
            "blocks_per_sm",
            "max_bins",
            "fused_blocks_per_sm",
            "heavy_degree",
            "spread_degree",
            "decode_point_edges",
            "fused_max_edges",
            "fused_max_frontier",
            "fused_small_grid_blocks",
            "path_piece_edges",
            "path_block_queue",
            "path_split_divisor",
            "path_bucket_bins",
            "path_dense_bucket_bins",
            "path_dense_degree",
            "path_log_rows",
            "path_striped_delta",
            "path_steps_bin_deltas",
        ):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"LaunchPolicy.{name}={value}: need at least 1")
        if self.tile_items >= 1 << 16:
            raise ValueError(
                f"LaunchPolicy.block_threads={self.block_threads} x items_per_thread="
                f"{self.items_per_thread} = {self.tile_items} items a tile: the filter counts a "
                "tile's survivors per meeting bin in 16 bits, so a tile holds at most 65535"
            )
        for name in (
            "spread_frontier",
            "fused_block_edges",
            "fused_small_grid_edges",
            "fused_block_degree",
            "fused_pair_degree",
            "fused_prefetch_edges",
            "path_settle_degree",
            "path_steps_blocks_per_sm",
            "path_steps_window",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"LaunchPolicy.{name}={getattr(self, name)}: need at least 0")
        if not self.path_pull_above >= 0:
            raise ValueError(f"LaunchPolicy.path_pull_above={self.path_pull_above}: need >= 0")
        for name in ("path_near_fraction", "path_far_fraction"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"LaunchPolicy.{name}={getattr(self, name)}: need 0 < it <= 1")
        for name in ("path_bucket_bins", "path_dense_bucket_bins"):
            if getattr(self, name) > PATH_HISTOGRAM_BINS:
                raise ValueError(
                    f"LaunchPolicy.{name}={getattr(self, name)}: the advance's histogram has "
                    f"{PATH_HISTOGRAM_BINS} bins"
                )
        resident = self.fused_threads * self.fused_blocks_per_sm
        if resident > MAX_THREADS_PER_SM:
            raise ValueError(
                f"LaunchPolicy.fused_threads={self.fused_threads} x fused_blocks_per_sm="
                f"{self.fused_blocks_per_sm} = {resident} threads: a multiprocessor holds at most "
                f"{MAX_THREADS_PER_SM}, and the fused grid needs all its blocks resident"
            )

    @property
    def tile_items(self) -> int:
        """Queue items one block handles per tile in filter_partition and contract."""
        return self.block_threads * self.items_per_thread

    @property
    def pair_degree(self) -> int:
        """The largest out-degree of a graph whose fused grid levels run in pairs (0: none)."""
        return min(self.fused_pair_degree, self.heavy_degree)

    def defines(self) -> tuple[str, ...]:
        """The ``-D`` compile options that hand this policy to ``kernels/common.cuh``."""
        return (
            f"-DDISTBFS_BLOCK_THREADS={self.block_threads}",
            f"-DDISTBFS_ITEMS_PER_THREAD={self.items_per_thread}",
            f"-DDISTBFS_WARP_HASH_SLOTS={self.warp_hash_slots}",
            f"-DDISTBFS_HISTORY_HASH_SLOTS={self.history_hash_slots}",
            f"-DDISTBFS_MAX_BINS={self.max_bins}",
            f"-DDISTBFS_FUSED_THREADS={self.fused_threads}",
            f"-DDISTBFS_FUSED_BLOCKS_PER_SM={self.fused_blocks_per_sm}",
            f"-DDISTBFS_HEAVY_DEGREE={self.heavy_degree}",
            f"-DDISTBFS_DECODE_POINT_EDGES={self.decode_point_edges}",
            f"-DDISTBFS_FUSED_MAX_EDGES={self.fused_max_edges}",
            f"-DDISTBFS_FUSED_PAIR_DEGREE={max(1, self.pair_degree)}",
            f"-DDISTBFS_FUSED_PREFETCH_EDGES={self.fused_prefetch_edges}",
            f"-DDISTBFS_PATH_THREADS={self.path_threads}",
            f"-DDISTBFS_PATH_BLOCK_THREADS={self.path_block_threads}",
        )


DEFAULT_POLICY = LaunchPolicy()
"""The policy the CUDA backend uses unless given another (tuned for H100/H200, sm_90)."""


DEFAULT_QUEUE_SIZING = 0.5
"""The edge queue's limit as a fraction of the rank's stored edges. A Kronecker level expands
most of them; with the queue that large a search would hold over 3x the CSR's bytes (a vertex
and a parent per item), so such levels are expanded in strips instead. A smaller fraction saves
memory but makes mid-size graphs pay the extra strips' launches; at 0.5 only levels over half
the edges take two (measured: benchmarks/RESULTS.md, 'queue sizing')."""

QUEUE_REGROWTH = 1.125
"""Least factor by which a graph's edge queue grows once it exists (``buffers.grow_edge_queue``):
searches from other roots, whose largest levels differ by a few percent, then do not reallocate
it each time."""

OVERLAP_MIN_ITEMS = 1 << 16
"""Several ranks: an own bin of at least this many items is contracted before the exchange
(``contract_local``), while the host exchanges the counts and the other ranks' bins travel;
smaller levels contract everything in one launch once it arrived."""

MEETING_BINS = 2
"""Bins written in place by the filter: two meet in the middle of a bin queue of twice the kept
capacity (bin 0 growing down, bin 1 up), so two ranks skip the partition pass at no memory cost:
the kept queue it replaces is as long. With ``MeetingBins`` the own bin's contraction is launched
before their lengths are read (measured: benchmarks/RESULTS.md, 'meeting bins').
The kernel counts both in one 64-bit counter, 32 bits each, so graphs of ``MEETING_MAX_N``
vertices or more, and more bins, go through the kept queue and the partition pass (a counting
sort by owner)."""

MEETING_MAX_N = (1 << 33) - 1
"""Meeting bins need n below this: bin b counts vertices v = b mod 2, under 2^32 of them."""

PEER_TIMEOUT_SECONDS = 30.0
"""Longest a rank of fused peer levels waits for another at a level barrier before it stops
with an error (a rank that failed ends the job through MPI before that)."""


def uses_meeting_bins(nbins: int, n: int) -> bool:
    """Whether ``nbins`` bins of a graph of ``n`` vertices are filtered into meeting bins."""
    return nbins == MEETING_BINS and n < MEETING_MAX_N
