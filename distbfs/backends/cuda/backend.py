"""``CudaBackend``: the backend interface (``distbfs.backends.base.Backend``) over the stage
modules of this package, one method per stage of Merrill et al. 2012 (section 6.1) and of the
direction-optimizing levels; each method delegates to its stage module.

Invariants: a backend holds no state of any graph or search (per-graph resources come from
``prepare`` and travel with each search's state; a search's buffers live in its
``SearchState``); it holds only its settings and memos of launch grids per device, which depend
on nothing but the device and the launch policy.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import cupy
import numpy as np

from ...comm.base import Bins
from ...compressed import code_bytes
from ...constants import UNLIMITED
from ...graph import DistGraph
from ...timing import NullTimer
from ..arrays import ArrayPathStages
from ..arrays.component_stages import ArrayComponentStages
from ..arrays.components import ComponentState, Reached
from ..arrays.lanes import ArrayLaneStages, LaneState
from ..base import EdgeFrontier, Inbound, PathState, Relaxations, SearchState
from . import (
    bottom_up,
    contract,
    expand,
    filter_partition,
    fused,
    host_memory,
    kernels,
    lanes,
    link,
    relax,
    search,
    striped_steps,
)
from . import inbound as inbound_stage
from .buffers import CudaGraphResources, check_graph, prepare
from .compressed import DeviceColumns
from .launch_policy import DEFAULT_POLICY, DEFAULT_QUEUE_SIZING, LaunchPolicy
from .timing import CudaEventTimer


class CudaBackend(ArrayPathStages, ArrayComponentStages, ArrayLaneStages):
    """The level stages as CUDA kernels, on the current CuPy device (the shortest-path stages:
    ``distbfs.backends.arrays`` on CuPy).

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
        rank once, and every rank runs each search whole on its copy, as one GPU would, and
        keeps its own vertices' part (``SearchPlan.whole``; shortest paths in place): small
        graphs then pay no exchange at all. 0 turns the copy off (every search striped).
    peer_levels : bool
        Several ranks on one node, a graph not copied: small frontiers run fused on every GPU
        at once, the items and level barriers going through peer memory
        (``run_peer_levels``; ``distbfs.engine.fused``). False: such levels are striped
        levels with host exchanges.
    """

    name = "cuda"
    xp = cupy
    lane_state_bytes = lanes.STATE_BYTES  # a batched BFS's state, per owned vertex

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
        self.broadcast_row_edges = policy.fused_max_edges  # the rows no fused level takes
        # Launch grids by device (and kernel): memos of search.persistent_grid, of
        # search.resident_grid (bottom-up levels, the delta-stepping grid, the union-find
        # passes, the batched levels: latency-bound kernels) and of fused.fused_grid.
        self._persistent: dict[int, int] = {}
        self._resident: search.ResidentGrids = {}
        self._fused_grids: dict[tuple[int, int], int] = {}

    # -- interface shared with the other backends ------------------------------------------

    def to_host(self, array: Any) -> np.ndarray:
        return cupy.asnumpy(array) if isinstance(array, cupy.ndarray) else np.asarray(array)

    def make_timer(self, enabled: bool) -> CudaEventTimer | NullTimer:
        return CudaEventTimer() if enabled else NullTimer()

    def prepare(self, graph: DistGraph) -> CudaGraphResources:
        """What every search of ``graph`` reuses on this rank (``buffers.prepare``): built once
        per graph by the search plan."""
        return prepare(graph, self.policy, self.queue_sizing)

    def start(
        self, graph: DistGraph, sources: Any, predecessors: bool, resources: CudaGraphResources
    ) -> SearchState:
        """A new search of ``graph`` from ``sources`` (one vertex id or several;
        ``search.start``); ``resources``: ``prepare(graph)``."""
        options = (self.policy, self.queue_sizing, self._persistent)
        return search.start(graph, sources, predecessors, resources, *options)

    def expansion_strips(self, graph: DistGraph, state: SearchState) -> int:
        """Strips the current frontier's expansion takes: 1 unless its out-edges (m_f, known
        exactly) exceed the edge queue's limit; then as few equal strips as fit it."""
        need = self.frontier_edges(graph, state) if state.frontier_size > 0 else 0
        return expand.strip_count(state, need)

    def expand(self, graph: DistGraph, state: SearchState, strip: int = 0) -> EdgeFrontier:
        need = self.frontier_edges(graph, state) if state.frontier_size > 0 else 0  # exact: m_f
        strips = self.expansion_strips(graph, state)
        return expand.expand(self.policy, graph, state, strip, need, strips)

    def filter_partition(self, state: SearchState, edges: EdgeFrontier, nbins: int) -> Bins | None:
        return filter_partition.filter_partition(self.policy, state, edges, nbins)

    def contract_local(self, graph: DistGraph, state: SearchState, bins: Bins, level: int) -> None:
        contract.contract_local(self.policy, graph, state, bins, level)

    def contract(self, graph: DistGraph, state: SearchState, received: Bins, level: int) -> None:
        contract.contract(self.policy, graph, state, received, level)

    def long_rows(
        self, graph: DistGraph, resources: CudaGraphResources, limit: int
    ) -> dict[int, int] | None:
        return expand.long_rows(self.policy, graph, resources, limit)

    def source_row(self, graph: DistGraph, state: SearchState, edges: int) -> Any:
        return expand.source_row(graph, state, edges)

    def contract_row(
        self, graph: DistGraph, state: SearchState, row: Any, parent: int, level: int
    ) -> None:
        contract.contract_row(self.policy, graph, state, row, parent, level)

    # -- direction-optimizing levels (kernels/bottom_up.cu) ---------------------------------

    def frontier_edges(self, graph: DistGraph, state: SearchState) -> int:
        return bottom_up.frontier_edges(self.policy, graph, state)

    def frontier_bitmap(self, graph: DistGraph, state: SearchState) -> Any:
        return bottom_up.frontier_bitmap(self.policy, graph, state)

    def row_frontier(self, graph: DistGraph, state: SearchState, row: Any, source: int) -> Any:
        return bottom_up.row_frontier(self.policy, graph, state, row, source)

    def mark_visited(self, graph: DistGraph, state: SearchState, frontier: Any) -> None:
        bottom_up.mark_visited(self.policy, graph, state, frontier)

    def inbound_frontier(
        self, graph: DistGraph, inbound: Inbound, state: SearchState, frontier: Any
    ) -> None:
        inbound_stage.inbound_frontier(self.policy, graph, inbound, state, frontier)

    def bottom_up(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: SearchState,
        frontier: Any,
        level: int,
    ) -> int:
        return bottom_up.bottom_up(
            self.policy, self._resident, graph, in_graph, state, frontier, level
        )

    def unexplored(self, graph: DistGraph, state: SearchState) -> tuple[int, int]:
        return bottom_up.unexplored(self.policy, graph, state)

    def unlabeled(self, graph: DistGraph, labels: Any) -> tuple[int, int]:
        return search.unlabeled(self.policy, self._resident, graph, labels)

    # -- fused small-frontier levels (contract-expand, sections 5.2 and 5.4) ---------------

    def run_small_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        *,
        max_levels: int = UNLIMITED,
    ) -> int:
        return fused.run_small_levels(
            self.policy,
            self._fused_grids,
            graph,
            state,
            level,
            max_frontier,
            max_levels=max_levels,
        )

    def fused_level_log(self, state: SearchState) -> np.ndarray | None:
        return fused.level_log(state)

    def place_graph(self, graph: DistGraph, memory: str) -> DistGraph:
        """``graph`` with its columns and weights in ``memory``: "host" (mapped pinned host
        memory the kernels read over the link, ``host_memory``) or "device"; the row offsets,
        read once a row, stay on the device."""
        move = host_memory.to_host_memory if memory == "host" else cupy.array

        def placed(array: Any) -> Any:
            if array is None or host_memory.in_host_memory(array) == (memory == "host"):
                return array
            return move(array)

        columns = graph.column_indices
        columns = columns.map(placed) if isinstance(columns, DeviceColumns) else placed(columns)
        return dataclasses.replace(graph, column_indices=columns, weights=placed(graph.weights))

    def graph_memory(self, graph: DistGraph) -> str:
        """Where ``graph``'s columns are: "host" or "device"."""
        columns = graph.column_indices
        held = columns.data if isinstance(columns, DeviceColumns) else columns
        return "host" if host_memory.in_host_memory(held) else "device"

    def device_bytes(self, graph: DistGraph) -> int:
        """Bytes of ``graph``'s arrays held in device memory (not mapped host memory)."""
        columns = graph.column_indices
        coded = isinstance(columns, DeviceColumns)
        arrays = (
            graph.row_offsets,
            graph.weights,
            *(columns.kernel_args() if coded else [columns]),
        )
        held = [a for a in arrays if a is not None and not host_memory.in_host_memory(a)]
        return int(sum(a.nbytes for a in held))

    def compressed_bytes(self, graph: DistGraph) -> int:
        """Bytes ``compress_graph`` would make of ``graph`` (its codes counted on the device,
        none written): codes, int64 byte offsets, decode points, row offsets and weights."""
        columns = graph.column_indices
        if graph.compressed:
            return int(columns.nbytes + graph.row_offsets.nbytes + self._weight_bytes(graph))
        codes = code_bytes(graph.row_offsets, columns, graph.rank, graph.size)
        rows = graph.row_offsets.shape[0]
        points = -(-graph.num_local_edges // self.policy.decode_point_edges)
        coded = codes + 8 * rows + points * (8 + columns.dtype.itemsize)
        return int(coded + graph.row_offsets.nbytes + self._weight_bytes(graph))

    @staticmethod
    def _weight_bytes(graph: DistGraph) -> int:
        return 0 if graph.weights is None else int(graph.weights.nbytes)

    def host_empty(self, length: int, dtype: Any) -> Any:
        """An empty array in mapped host memory the kernels read over the link (a spilled
        build's columns: ``distbfs.streamed.build_graph_streamed``)."""
        return host_memory.host_empty(length, dtype)

    def compress_graph(self, graph: DistGraph) -> DistGraph:
        """``graph`` with its columns varint-coded on the device (``DeviceColumns``, decode
        points for this backend's policy); the plain columns are released when the caller
        drops ``graph``. Codes held on the host (a compressed file) go to the device as they
        are; a graph compressed on the device is returned as it is."""
        columns = graph.column_indices
        if isinstance(columns, DeviceColumns):
            return graph
        if graph.compressed:
            columns = DeviceColumns.from_host(columns, self.policy)
        else:
            check_graph(graph)
            columns = DeviceColumns.encode_on_device(
                graph.row_offsets, columns, graph.rank, graph.size, self.policy
            )
        return dataclasses.replace(graph, column_indices=columns)

    def load_kernels(self, resources: CudaGraphResources) -> None:
        """Every kernel the searches of ``resources``'s graph may launch, compiled (or loaded
        from the kernel cache) now rather than at its first use (``kernels.StageKernels``)."""
        resources.kernels.load_all()

    def compile_ahead(self, stages: tuple[str, ...] = kernels.FIRST_SEARCH_STAGES) -> None:
        """Start building the kernels of ``stages`` (32-bit ids) in the background
        (``kernels.compile_ahead``): by default those a first search of a road network runs."""
        kernels.compile_ahead(stages, self.policy)

    def warm_up(self, threads: int = 4) -> list[tuple[str, int, float]]:
        """Compile every kernel this backend may launch into CuPy's on-disk cache
        (``kernels.warm_up``): (stage, vertex width, seconds) per module."""
        return kernels.warm_up(self.policy, threads=threads)

    def link_in_place(
        self,
        graph: DistGraph,
        in_graph: DistGraph,
        state: ComponentState,
        neighbour: int | None,
        skip: Any,
        compress: bool = True,
        rows: Any = None,
    ) -> Any:
        """Afforest's Link over neighbour ``neighbour`` of every owned vertex (None: every
        neighbour of the owned vertices not labeled ``skip``, or of the owned vertices ``rows``,
        global ids, where given: ``reached_bits``) in one union-find pass over the labels of
        every vertex (one rank's, or this rank's replica), then Compress unless told not to
        (``link.link_in_place``); its counts (links, crossing, hooked), left on the device."""
        grids = (self._persistent, self._resident)
        return link.link_in_place(
            self.policy, grids, graph, in_graph, state, neighbour, skip, compress, rows
        )

    def reached_bits(self, graph: DistGraph, distances: Any, resources: Any = None) -> Reached:
        grids = (self._persistent, self._resident)
        return link.reached_bits(self.policy, grids, graph, distances, resources)

    def seed_labels(self, graph: DistGraph, state: ComponentState, bits: Any, label: int) -> None:
        grids = (self._persistent, self._resident)
        link.seed_labels(self.policy, grids, graph, state, bits, label)

    def take_labels(
        self,
        graph: DistGraph,
        state: ComponentState,
        source: ComponentState,
        rows: Any,
        replica: bool,
    ) -> None:
        grids = (self._persistent, self._resident)
        link.take_labels(self.policy, grids, graph, state, source, rows, replica)

    def replica_start(
        self,
        graph: DistGraph,
        resources: Any,
        seeded: bool = False,
        listed: Any = None,
        reached: Any = None,
        label: int = -1,
    ) -> ComponentState:
        """A connected-components run over a replica of every vertex's label (several ranks;
        ``link``): every vertex its own label (``seeded``: left unset, for ``seed_labels``),
        no root hooked yet. ``listed`` (global ids, repeats allowed: ``listed_pairs``'s): a
        replica of those vertices' labels alone, the rest left unset and never read, and no
        marks (a whole search's remainder, whose edges join listed vertices only, linked whole
        on every rank): no pass over every vertex. With ``reached`` (a flag for each listed
        vertex: ``reached_ends``, OR-reduced over the ranks) the flagged ones, and ``label``,
        hold ``label`` (a search stopped at its tail: ``link.remainder_labels``)."""
        if listed is None:
            scratch = {"hooked": cupy.zeros(graph.n, dtype=np.uint8)}
            labels = (
                cupy.empty(graph.n, np.int64) if seeded else cupy.arange(graph.n, dtype=np.int64)
            )
            return ComponentState(labels, scratch, resources, graph)
        grids = (self._persistent, self._resident)
        labels = link.remainder_labels(self.policy, grids, graph, listed, reached, label)
        return ComponentState(labels, {}, resources, graph)

    def replica_bytes(self, graph: DistGraph) -> int:
        """Device bytes a replicated run takes beyond the graph, at most: the labels and marks
        of every vertex; this rank's pairs of hooked roots and every rank's all-gathered (twice
        where NCCL pads unequal parts), each rank's fewer than n."""
        width = check_graph(graph).itemsize
        return graph.n * (8 + 1 + 2 * width * (1 + 2 * graph.size))

    def listed_pairs(self, graph: DistGraph, rows: Any, capacity: int, every: bool = False) -> Any:
        grids = (self._persistent, self._resident)
        return link.listed_pairs(self.policy, grids, graph, rows, capacity, every)

    def reached_ends(self, graph: DistGraph, listed: Any, bits: Any) -> Any:
        grids = (self._persistent, self._resident)
        return link.reached_ends(self.policy, grids, graph, listed, bits)

    def hooked_pairs(self, graph: DistGraph, state: ComponentState) -> Any:
        grids = (self._persistent, self._resident)
        return link.hooked_pairs(self.policy, grids, graph, state)

    def link_pairs(
        self, graph: DistGraph, state: ComponentState, segments: list[Any], rows: Any = None
    ) -> Any:
        grids = (self._persistent, self._resident)
        return link.link_pairs(self.policy, grids, graph, state, segments, rows)

    def replica_owned(self, graph: DistGraph, state: ComponentState) -> ComponentState:
        """The run's state over the owned vertices' labels alone (local order), the replica
        dropped."""
        labels = state.labels[graph.rank :: graph.size].copy()
        return ComponentState(labels, {}, state.resources, graph)

    def largest_in_place(self, graph: DistGraph, state: ComponentState, samples: Any) -> Any:
        """One rank: the most frequent label of the sampled vertices ``samples`` (the smallest
        among equals; -1 without samples) as a 0-d device array that ``link_in_place``
        takes as its ``skip``, with no round trip to the host (``link.most_frequent``); None
        past ``link.LARGEST_ON_DEVICE`` samples, which the caller counts on the host."""
        if samples.shape[0] > link.LARGEST_ON_DEVICE:
            return None
        bits = 8 * check_graph(graph).itemsize
        return link.most_frequent(self.policy, state.labels, samples, bits)

    # -- shortest paths on one GPU holding the whole graph (``relax``) ------------------------

    def prepare_paths(self, graph: DistGraph, resources: CudaGraphResources) -> str | None:
        """Once per graph, before its first search: the rows the search kernels read
        (``relax.search_rows``); returns how they read them where there was a choice ("by
        weight", or "as stored" and why), else None."""
        if resources.search_rows is None:
            rows, note = relax.search_rows(self.policy, graph)
            resources.search_rows, resources.search_rows_note = rows, note
        return resources.search_rows_note

    def path_start_in_place(
        self, graph: DistGraph, source: int, integers: bool, resources: CudaGraphResources
    ) -> relax.DevicePathState:
        policy, settle = self.policy, relax.settle_passes(self.policy, graph)
        kernel = relax.relax_kernel(policy, graph, relax.search_kernel(False, False, settle))
        grid = search.resident_grid(policy, self._resident, kernel, policy.path_threads)
        most = 0 if settle else policy.path_steps_blocks_per_sm
        steps = search.resident_grid(policy, self._resident, kernel, policy.path_threads, most)
        self.prepare_paths(graph, resources)
        rows = resources.search_rows
        return relax.path_start(policy, graph, source, grid, integers, resources, rows, steps)

    def shortest_paths_in_place(
        self, graph: DistGraph, state: relax.DevicePathState, delta: float, limit: float
    ) -> tuple[list[Any], bool]:
        return relax.run_buckets(self.policy, graph, state, delta, limit)

    def settled_in_buckets(self, state: relax.DevicePathState, lowers: list[float]) -> list[int]:
        return relax.settled_in_buckets(self.policy, state.distances, lowers)

    def shortest_path_tree_in_place(self, graph: DistGraph, distances: Any, source: int) -> Any:
        grid = search.persistent_grid(self.policy, self._persistent)
        return relax.shortest_path_tree(self.policy, graph, grid, distances, source)

    # -- shortest paths as striped steps (several ranks; ``striped_steps``): the search's
    # state is a StripedPathState; a tree pass's state (predecessors) is the array stages'

    def path_start(
        self,
        graph: DistGraph,
        source: int,
        predecessors: bool,
        resources: Any,
        integers: bool = False,
        tree: bool = False,
    ) -> PathState:
        """The array stages' state of a tree pass, else a striped search's (whose tied words,
        with ``integers``, record the tree whether or not ``tree`` asks for it)."""
        if predecessors:
            return super().path_start(graph, source, predecessors, resources)
        bits = 8 * check_graph(graph).itemsize
        rows = [relax.relax_kernel(self.policy, graph, name) for name in striped_steps.ROW_KERNELS]
        pulls = [relax.relax_kernel(self.policy, graph, n) for n in striped_steps.PULL_KERNELS]
        scans = [
            kernels.get_kernel("relax", n, self.policy, bits)
            for n in striped_steps.SCAN_GRID_KERNELS
        ]
        resident = self._resident_paths
        grids = (min(map(resident, rows)), min(map(resident, scans)), min(map(resident, pulls)))
        self.prepare_paths(graph, resources)
        return striped_steps.path_start(
            self.policy, graph, source, integers, grids, resources.search_rows
        )

    def _resident_paths(self, kernel: Any) -> int:
        """Every block of ``path_threads`` of ``kernel`` the device holds at once: a striped
        step's kernels (launched cooperatively, as every kernel of ``kernels/relax.cu``) stream
        memory and want them all."""
        return search.resident_grid(self.policy, self._resident, kernel, self.policy.path_threads)

    @property
    def striped_delta_factor(self) -> int:
        """How much wider than ``choose_delta``'s the striped steps' buckets are by default
        (``LaunchPolicy.path_striped_delta``)."""
        return self.policy.path_striped_delta

    heavy_by_landing = True
    """A striped bucket's steps relax the edges that land inside it and its heavy step the
    others (``striped_steps.relax``), whatever their weight: every bucket has a heavy step."""

    @property
    def heavy_pull_above(self) -> float:
        """When a striped heavy step pulls (``LaunchPolicy.path_pull_above``)."""
        return self.policy.path_pull_above

    def path_finish(self, state: PathState) -> None:
        if isinstance(state, striped_steps.StripedPathState):
            striped_steps.finish(self.policy, state)

    def relax(
        self, graph: DistGraph, state: PathState, vertices: Any, delta: float, heavy: bool
    ) -> Relaxations:
        if isinstance(state, striped_steps.StripedPathState):
            return striped_steps.relax(self.policy, graph, state, vertices, delta, heavy)
        return super().relax(graph, state, vertices, delta, heavy)

    def partition_min(self, state: PathState, requests: Relaxations, nbins: int) -> Bins:
        if isinstance(state, striped_steps.StripedPathState):
            return striped_steps.partition_min(self.policy, state, requests, nbins)
        return super().partition_min(state, requests, nbins)

    def contract_min(self, graph: DistGraph, state: PathState, received: Bins, end: float) -> int:
        if isinstance(state, striped_steps.StripedPathState):
            return striped_steps.contract_min(self.policy, graph, state, received, end)
        return super().contract_min(graph, state, received, end)

    def next_bucket(self, state: PathState) -> float:
        return striped_steps.next_bucket(state)

    def row_edges(self, graph: DistGraph, state: PathState, vertices: Any) -> int:
        return striped_steps.row_edges(graph, state, vertices)

    def path_words(self, state: PathState) -> Any:
        return state.words

    def pull_requests(
        self, graph: DistGraph, state: PathState, everywhere: Any, lower: float, end: float
    ) -> Relaxations:
        return striped_steps.pull_requests(self.policy, graph, state, everywhere, lower, end)

    def bucket_members(self, state: PathState, end: float) -> Any:
        return striped_steps.bucket_scan(self.policy, state.graph, state, end, False)

    def settle(self, state: PathState, members: list[Any]) -> Any:
        return striped_steps.bucket_scan(self.policy, state.graph, state, state.end, True)

    def make_peer_mailbox(self, graph: DistGraph) -> fused.PeerMailbox:
        return fused.make_peer_mailbox(self.policy, graph)

    def run_peer_levels(
        self,
        graph: DistGraph,
        state: SearchState,
        level: int,
        max_frontier: int,
        mailbox: fused.PeerMailbox,
        entry: tuple[int, int],
        *,
        max_levels: int = UNLIMITED,
    ) -> int:
        return fused.run_peer_levels(
            self.policy,
            self._fused_grids,
            graph,
            state,
            level,
            max_frontier,
            mailbox,
            entry,
            max_levels=max_levels,
        )

    # -- batched BFS (bit lanes; ``distbfs.traversals.batched``) -----------------------------

    def lanes_start(self, graph: DistGraph, sources: np.ndarray, resources: Any) -> LaneState:
        return lanes.lanes_start(self.policy, graph, sources, resources)

    def push_lanes(self, graph: DistGraph, state: LaneState) -> None:
        lanes.push_lanes(self.policy, self._resident, graph, state)

    def bin_lanes(self, graph: DistGraph, state: LaneState, nbins: int) -> Bins:
        if graph.compressed or nbins == 1:  # a stretch a thread: the arrays' items, then bins
            return super().bin_lanes(graph, state, nbins)
        return lanes.bin_lanes(self.policy, self._resident, graph, state)

    def contract_lanes(self, graph: DistGraph, state: LaneState, received: Bins) -> None:
        lanes.contract_lanes(self.policy, self._resident, graph, state, received)

    def frontier_words(self, graph: DistGraph, state: LaneState) -> Any:
        return lanes.frontier_words(graph, state)

    def pull_lanes(self, in_graph: DistGraph, state: LaneState, frontier: Any) -> None:
        lanes.pull_lanes(self.policy, self._resident, in_graph, state, frontier)

    def settle_lanes(self, graph: DistGraph, state: LaneState, level: int) -> int:
        return lanes.settle_lanes(self.policy, self._resident, graph, state, level)

    def lanes_prepare(self, resources: Any) -> None:
        super().lanes_prepare(resources)
        graph = resources.graph
        in_graph = resources.in_neighbours()
        lanes.gather_order(resources.backend_resources, graph.row_offsets, in_graph, resources.comm)

    def lanes_distances(self, graph: DistGraph, state: LaneState) -> Any:
        return lanes.lanes_distances(self.policy, self._resident, graph, state)
