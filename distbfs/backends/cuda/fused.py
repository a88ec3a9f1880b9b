"""Fused small-frontier levels on the CUDA backend (contract-expand, Merrill et al. 2012, sections
5.2 and 5.4; ``kernels/contract_expand.cu``): one persistent cooperative grid runs levels back
to back, one grid barrier per level, while the frontier is small: one launch and one host read
for the whole run.

Two ways in: ``run_small_levels`` (one rank, its CSR, or every rank its replica of a small
graph: ``SearchPlan.whole``) and ``run_peer_levels`` (several ranks of one node: a grid on each
GPU, the items and the level barrier going through peer memory, ``PeerMailbox``, mapped by the
communicator over CUDA IPC).

Every fused level is logged: the kernels write a row per level (its frontier's vertices over all
ranks, this rank's vertices and their out-edges) into the graph's log in mapped host memory,
which the level table reads after the search with no copy (``level_log``).

Invariants: a fused run stops before a level whose frontier holds more than ``max_frontier``
vertices or more than ``fused_max_edges`` edges, or once it ran ``max_levels`` levels (a
search's depth limit: the kernels' ``max_levels`` parameter), and leaves the state exactly as
that many two-phase levels would (labels, predecessors, visited mask, frontier in
``queues.frontier``); the cooperative grid never exceeds what is resident at once
(``fused_grid``); peer runs end on the same level on every rank, or with an error on every rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import cupy
import numpy as np

from ...constants import UNLIMITED
from ...errors import DeviceError, out_of_device_memory
from ...graph import DistGraph
from ..base import SearchState
from .buffers import (
    FUSED_LOG_ROWS,
    SearchQueues,
    allocate_fused_log,
    as_vertices,
    check_graph,
    ensure_fused_queues,
    fill_bytes,
    level_of,
    queues_of,
)
from .counters import COUNTER_DTYPE
from .kernels import FUSED_LOG_FIELDS, PEER_HEADER_WORDS, Counter
from .launch_policy import PEER_TIMEOUT_SECONDS, LaunchPolicy

KERNEL_LEVELS_LIMIT = 2**31 - 1
"""The largest ``max_levels`` the fused kernels take (an int): more levels than any run has."""

_LOG_EDGES = 2
"""The field of a fused log row (``FUSED_LOG_FIELDS``: the frontier's vertices over all ranks,
this rank's, their out-edges) that holds the out-edges."""


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


def run_small_levels(
    policy: LaunchPolicy,
    grids: dict[tuple[int, int], int],
    graph: DistGraph,
    state: SearchState,
    level: int,
    max_frontier: int,
    *,
    max_levels: int = UNLIMITED,
) -> int:
    """Run BFS levels in one cooperative grid while the frontier is small (one rank only).

    ``level`` is the label of the current frontier's vertices. Levels run until the
    frontier is empty, holds more than ``max_frontier`` vertices, or has more than
    ``LaunchPolicy.fused_max_edges`` edges, or ``max_levels`` levels ran (the last labels
    ``level + max_levels``: a search's depth limit); the state is then as after that many
    two-phase levels (labels, predecessors, bitmask, ``vertex_frontier``, ``frontier_size``).
    One launch and one read of the counters for the whole run, one more at each hand-over
    between tiers (``grids``: the backend's memo of ``fused_grid``).

    On a sparse graph, frontiers of few edges run in a grid of one block
    (``LaunchPolicy.fused_block_edges``), larger ones in a small grid
    (``fused_small_grid_edges``), the largest in the full grid (``_tiers``); a run hands over
    between them as the frontier grows and shrinks, one launch each time.

    Returns the number of levels run: 0 when the graph is striped over several ranks
    (levels need exchanges), the frontier is empty or too large to start, or
    ``max_levels`` < 1.
    """
    if graph.size != 1:
        return 0
    queues = queues_of(state)
    ensure_fused_queues(queues)
    if queues.resources.fused_tiers is None:
        queues.resources.fused_tiers = _tiers(policy, graph, queues.resources.max_degree)
    tiers = queues.resources.fused_tiers
    mean_degree = -(-graph.num_local_edges // max(graph.nlocal, 1))
    first, total = queues.fused_log_rows, 0
    while total < max_levels:
        size = int(state.frontier_size)
        generation, edges = queues.frontier_edges
        known = generation == queues.generation
        if size == 0 or size > max_frontier or (known and edges > policy.fused_max_edges):
            break  # the grid would stop at once
        levels = _log_room(queues, first + total, max_levels - total)
        launch = (policy, grids, graph, state, queues, level + total, max_frontier)
        launch += (levels, first + total)
        estimate = edges if known else size * mean_degree  # unknown: the kernel stops on more
        start = next((i for i, tier in enumerate(tiers) if estimate <= tier.max_edges), -1)
        ran = 0
        for tier in tiers[start:]:  # a tier that stops at once: the next one
            ran = _launch_small_levels(*launch, tier)
            if ran:
                break
        total += ran  # the next launch's first row overwrites this one's last
        if ran == 0:
            break
    if total:
        queues.fused_log_rows = first + total + 1
    return total


class Tier(NamedTuple):
    """A kind of launch of fused levels: the one-block kernel (``one_block``), or the
    cooperative grid of at most ``blocks`` blocks (None: every resident one, ``fused_grid``),
    its levels in pairs between grid barriers when ``pairs`` (``level_pairs_kernel``); it takes
    a frontier of at most ``max_edges`` edges and, after its first level, of at least
    ``min_edges``."""

    one_block: bool
    blocks: int | None
    max_edges: int
    min_edges: int
    pairs: bool = False


def _tiers(policy: LaunchPolicy, graph: DistGraph, max_degree: int) -> list[Tier]:
    """The launches a run of fused levels chooses from, smallest first. On a sparse graph (a
    mean degree of at most ``fused_block_degree``): one block up to ``fused_block_edges``, a
    small grid up to ``fused_small_grid_edges``, the full grid beyond, each grid handing a
    frontier back below half the tier under it (0 in either policy field: no such tier); a
    denser graph: the full grid alone. No tier takes more than ``fused_max_edges``. The grids
    run their levels in pairs when no out-degree exceeds the policy's ``pair_degree``."""
    most = policy.fused_max_edges
    sparse = graph.num_local_edges <= policy.fused_block_degree * max(graph.nlocal, 1)
    pairs = 0 < policy.pair_degree and max_degree <= policy.pair_degree
    tiers, below = [], 0
    if sparse and policy.fused_block_edges:
        below = min(policy.fused_block_edges, most)
        tiers.append(Tier(True, 1, below, 0))
    if sparse and min(policy.fused_small_grid_edges, most) > below:
        small = min(policy.fused_small_grid_edges, most)
        tiers.append(Tier(False, policy.fused_small_grid_blocks, small, below // 2, pairs))
        below = small
    return [*tiers, Tier(False, None, most, below // 2, pairs)]


def _log_room(queues: SearchQueues, row: int, wanted: int) -> int:
    """The levels a launch whose log starts at ``row`` may run, at most ``wanted``: the log
    rows left after ``row``, less the one for the frontier it stops before; the log grows
    first when fewer than ``min(wanted, FUSED_LOG_ROWS // 4)`` are left."""
    rows = _grow_log(queues, row + min(wanted, FUSED_LOG_ROWS // 4) + 1)
    return min(wanted, rows - row - 1)


def _grow_log(queues: SearchQueues, need: int) -> int:
    """Make the graph's log hold at least ``need`` rows (doubling, its rows kept); returns the
    rows it holds."""
    rows = queues.resources.fused_log_host.shape[0] // FUSED_LOG_FIELDS
    if need > rows:
        rows = max(need, 2 * rows)
        allocate_fused_log(queues.resources, rows)
    return rows


def _log_at(queues: SearchQueues, row: int) -> Any:
    """The log from ``row`` on: where a launch writes its rows."""
    return queues.resources.fused_log[row * FUSED_LOG_FIELDS :]


def level_log(state: SearchState) -> np.ndarray | None:
    """The rows the fused runs of a search logged (``Backend.fused_level_log``): read from
    the mapped log, whose last rows a launch wrote before the host read its counters."""
    queues = state.scratch.get("cuda")
    if not isinstance(queues, SearchQueues) or queues.fused_log_rows == 0:
        return None
    rows = queues.resources.fused_log_host[: queues.fused_log_rows * FUSED_LOG_FIELDS]
    return rows.reshape(-1, FUSED_LOG_FIELDS).copy()


def _block_layout(
    policy: LaunchPolicy, queues: SearchQueues, state: SearchState
) -> tuple[int, int, int]:
    """(queue capacity, bitmask words copied to shared memory, dynamic shared bytes) of
    ``block_levels_kernel`` for the searches of this graph (memoized in its resources): two
    queues of ``fused_block_edges`` vertices with their rows (a level appends at most its
    edges; fewer if a block's shared memory holds fewer: the kernel stops before a level of
    more edges), and the visited bitmask when it fits the rest (the kernel's attribute is
    raised to match)."""
    resources = queues.resources
    if resources.block_layout is None:
        kernel = queues.kernels["block_levels"]
        runtime = cupy.cuda.runtime
        optin = runtime.cudaDevAttrMaxSharedMemoryPerBlockOptin
        limit = runtime.deviceGetAttribute(optin, cupy.cuda.Device().id)
        limit -= kernel.shared_size_bytes
        entry = 2 * COUNTER_DTYPE.itemsize + queues.vertex_dtype.itemsize
        capacity = min(policy.fused_block_edges, policy.fused_max_edges, limit // (2 * entry))
        queue_bytes = 2 * capacity * entry
        mask = state.visited_mask
        words = mask.size if queue_bytes + mask.nbytes <= limit else 0
        nbytes = queue_bytes + words * mask.itemsize
        if kernel.max_dynamic_shared_size_bytes < nbytes:
            kernel.max_dynamic_shared_size_bytes = nbytes
        resources.block_layout = (capacity, words, nbytes)
    return resources.block_layout


def _launch_small_levels(
    policy: LaunchPolicy,
    grids: dict[tuple[int, int], int],
    graph: DistGraph,
    state: SearchState,
    queues: SearchQueues,
    level: int,
    max_frontier: int,
    max_levels: int,
    log_row: int,
    tier: Tier,
) -> int:
    """One launch of fused levels from the current frontier, its log from row ``log_row`` on,
    in ``tier``: ONE block with the frontiers and (when it fits) the visited bitmask in shared
    memory (``block_levels_kernel``), or a cooperative grid (``contract_expand_kernel``); it
    stops before a level outside the tier's edges; returns the levels it ran."""
    _enter(state, queues)
    entry = (queues.frontier, queues.spare_frontier, np.int64(state.frontier_size))
    csr = (graph.row_offsets, graph.column_indices, np.int32(level), state.labels, state.preds)
    log = (_log_at(queues, log_row), queues.counters)
    levels = _kernel_levels(max_levels)
    if tier.one_block:
        capacity, words, nbytes = _block_layout(policy, queues, state)
        shape = (np.int64(capacity), np.int64(words), np.int64(max_frontier))
        args = (*entry, *shape, levels, np.int64(tier.max_edges), *csr, state.visited_mask, *log)
        queues.kernels["block_levels"]((1,), (policy.fused_threads,), args, shared_mem=nbytes)
        return _leave(state, queues, level_of(queues).read(int(Counter.BINS)), log_row)
    kernel = queues.kernels["level_pairs" if tier.pairs else "contract_expand"]
    blocks = fused_grid(policy, grids, kernel)
    blocks = blocks if tier.blocks is None else min(blocks, tier.blocks)
    limits = (np.int64(queues.frontier.shape[0]), np.int64(max_frontier), levels)
    limits += (np.int64(tier.max_edges), np.int64(tier.min_edges))
    heavy = (queues.heavy_vertices, queues.spare_heavy, np.int64(queues.heavy_capacity))
    args = (*entry, *limits, *csr, state.visited_mask, *heavy, queues.fused_scratch, *log)
    kernel((blocks,), (policy.fused_threads,), args)
    return _leave(state, queues, level_of(queues).read(int(Counter.BINS)), log_row)


def _kernel_levels(max_levels: int) -> np.int32:
    """The fused kernels' ``max_levels`` argument (their sixth, after ``max_frontier``): an
    int, so "no limit" (``UNLIMITED``) becomes the largest one."""
    return np.int32(min(max_levels, KERNEL_LEVELS_LIMIT))


def make_peer_mailbox(policy: LaunchPolicy, graph: DistGraph) -> PeerMailbox:
    """This rank's mailbox for ``run_peer_levels`` (zeroed, an allocation of its own):
    ``fused_max_edges`` pairs per sender, since no rank sends a peer more items in a level
    than the whole frontier has edges, and the fused levels stop before more."""
    dtype = check_graph(graph)
    capacity = policy.fused_max_edges
    nbytes = graph.size * (PEER_HEADER_WORDS * COUNTER_DTYPE.itemsize)
    nbytes += graph.size * 2 * capacity * dtype.itemsize
    try:
        memory = cupy.cuda.Memory(nbytes)  # cudaMalloc, not the pool: IPC maps it whole
    except Exception as exc:
        if not out_of_device_memory(exc):
            raise
        raise DeviceError(
            f"out of GPU memory allocating the peer mailbox ({nbytes} bytes) on rank "
            f"{graph.rank}: lower LaunchPolicy.fused_max_edges or turn peer_levels off"
        ) from None
    array = cupy.ndarray((nbytes,), dtype=np.uint8, memptr=cupy.cuda.MemoryPointer(memory, 0))
    fill_bytes(array, 0)
    cupy.cuda.get_current_stream().synchronize()  # zero before any peer can write into it
    return PeerMailbox(array, capacity)


def run_peer_levels(
    policy: LaunchPolicy,
    grids: dict[tuple[int, int], int],
    graph: DistGraph,
    state: SearchState,
    level: int,
    max_frontier: int,
    mailbox: PeerMailbox,
    entry: tuple[int, int],
    *,
    max_levels: int = UNLIMITED,
) -> int:
    """Several ranks of one node: levels in one cooperative grid per GPU while the whole
    frontier is small, exchanging through the peers' mailboxes (collective: every rank,
    the same ``entry``: the current frontier's vertices over all ranks and a bound on their
    out-edges, which only the stop rule reads, and the same ``max_levels``).

    Stops as ``run_small_levels`` does, on the whole frontier (and before a level of more
    edges than a mailbox segment holds, or after ``max_levels`` levels); the state is then
    as after that many striped levels. Returns the levels run, the same on every rank (0:
    ``entry`` is over the limits or ``max_levels`` < 1, nothing ran).
    """
    vertices, edges = entry
    if vertices == 0 or vertices > max_frontier or edges > mailbox.capacity or max_levels < 1:
        return 0
    if edges > policy.fused_max_edges:
        return 0
    queues = queues_of(state)
    size = int(state.frontier_size)
    _enter(state, queues)
    first = queues.fused_log_rows
    max_levels = _log_room(queues, first, max_levels)  # the same on every rank: so are the logs
    kernel = queues.kernels["contract_expand_peers"]
    kernel(
        (fused_grid(policy, grids, kernel),),
        (policy.fused_threads,),
        (
            queues.frontier,
            queues.spare_frontier,
            np.int64(size),
            np.int64(queues.frontier.shape[0]),
            np.int64(max_frontier),
            _kernel_levels(max_levels),
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
            _log_at(queues, first),
            queues.counters,
        ),
    )
    host = level_of(queues).read(int(Counter.BINS))
    _check_peers(graph, host)
    levels = _leave(state, queues, host, first)
    mailbox.epoch += 2 * levels
    if levels:
        queues.fused_log_rows = first + levels + 1
    return levels


def _check_peers(graph: DistGraph, host: np.ndarray) -> None:
    """Raise if the fused peer kernel reported a failure (``host``: its counters)."""
    failure = int(host[Counter.PEER_FAILURE])
    if failure:
        what = (
            f"a peer rank did not reach a level barrier within {PEER_TIMEOUT_SECONDS:g} s"
            if failure == 1
            else "a mailbox segment overflowed (a bug: the stop rule excludes it)"
        )
        raise DeviceError(f"fused peer levels on rank {graph.rank}: {what}")


def _enter(state: SearchState, queues: SearchQueues) -> None:
    """Before a fused kernel: its queues exist, the frontier is in queue A, counters zeroed."""
    ensure_fused_queues(queues)
    size = int(state.frontier_size)
    frontier = as_vertices(state.vertex_frontier, queues)
    if size and frontier.data.ptr != queues.frontier.data.ptr:  # set from elsewhere
        queues.frontier[:size] = frontier
    queues.begin_level(edge_bound=0, cleared=queues.levels_begun == 1)


def _leave(state: SearchState, queues: SearchQueues, host: np.ndarray, log_row: int) -> int:
    """After a fused kernel (``host``: its counters; its log from row ``log_row`` on): the
    state as after the levels it ran (the final frontier is in queue B after an odd number);
    returns that number. A run from the sources' frontier also leaves their out-edges in its
    first log row, so n_u and m_u are carried from there on (``queues.advance``) with no read
    of their rows."""
    if queues.generation == 0 and queues.unexplored is None:
        edges = int(queues.resources.fused_log_host[log_row * FUSED_LOG_FIELDS + _LOG_EDGES])
        queues.count_frontier_edges(edges, queues.graph, int(state.frontier_size))
    levels = int(host[Counter.FUSED_LEVELS])
    if levels % 2:
        queues.frontier, queues.spare_frontier = queues.spare_frontier, queues.frontier
    size = int(host[Counter.FRONTIER])
    state.frontier_size = size
    state.vertex_frontier = queues.frontier[:size]
    queues.advance(int(host[Counter.FUSED_LABELED]), int(host[Counter.FUSED_LABELED_EDGES]))
    queues.frontier_edges = (queues.generation, int(host[Counter.FRONTIER_EDGES]))
    return levels


def fused_grid(policy: LaunchPolicy, grids: dict[tuple[int, int], int], kernel: Any) -> int:
    """Blocks of a fused cooperative grid of ``kernel`` on the current device (memoized in
    ``grids`` by device and kernel).

    ``fused_blocks_per_sm`` per multiprocessor, or fewer if the occupancy calculator says
    fewer blocks of the compiled kernel are resident at once: a cooperative launch needs
    every block resident, and CuPy would shrink a larger grid with a warning.
    """
    key = (cupy.cuda.Device().id, kernel.kernel.ptr)
    if key not in grids:
        processors = cupy.cuda.Device().attributes["MultiProcessorCount"]
        resident = cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, policy.fused_threads, 0
        )
        if resident < 1:
            raise DeviceError(
                f"the fused kernel does not fit a multiprocessor with "
                f"LaunchPolicy.fused_threads={policy.fused_threads}; lower it"
            )
        per_sm = min(policy.fused_blocks_per_sm, resident)
        grids[key] = processors * per_sm
    return grids[key]
