"""Launch policy of the CUDA kernels: the one place where block sizes and hash sizes are chosen.

Every tunable number the kernels in ``kernels/`` use arrives as a ``-D`` compile option made by
``LaunchPolicy.defines()`` (``kernels/common.cuh`` refuses to compile without them), so no kernel
and no host module holds a magic number of its own. Merrill et al. 2012 tune the same knobs per
architecture (section 4.1: gathering thresholds; section 4.2: warp and history culling).

Invariants: thread counts are multiples of the warp width (32); hash sizes are powers of two;
the policy is frozen, so a policy and a device name one compiled module.
"""

from __future__ import annotations

from dataclasses import dataclass

WARP_THREADS = 32
"""Threads per warp on every NVIDIA GPU the kernels target."""


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
        Threads of the one block that runs small levels back to back (contract-expand, 5.2/5.4).
    fused_max_edges : int
        The fused block stops before a level whose frontier has more edges than this (one block
        strip-mining a hub's list is slower than the two-phase path with the whole GPU).
    fused_max_frontier : int
        The hybrid strategy hands a level to the fused block while its vertex frontier holds at
        most this many vertices (section 5.4's switch: below it one block beats a grid launch).
    """

    block_threads: int = 256
    items_per_thread: int = 4
    blocks_per_sm: int = 4
    warp_hash_slots: int = 128
    history_hash_slots: int = 1024
    max_bins: int = 1024
    fused_threads: int = 1024
    fused_max_edges: int = 1 << 16
    fused_max_frontier: int = 8192

    def __post_init__(self) -> None:
        for name in ("block_threads", "fused_threads"):
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
            "fused_max_edges",
            "fused_max_frontier",
        ):
            value = getattr(self, name)
            if value < 1:
                raise ValueError(f"LaunchPolicy.{name}={value}: need at least 1")

    @property
    def tile_items(self) -> int:
        """Queue items one block handles per tile in filter_partition and contract."""
        return self.block_threads * self.items_per_thread

    def defines(self) -> tuple[str, ...]:
        """The ``-D`` compile options that hand this policy to ``kernels/common.cuh``."""
        return (
            f"-DDISTBFS_BLOCK_THREADS={self.block_threads}",
            f"-DDISTBFS_ITEMS_PER_THREAD={self.items_per_thread}",
            f"-DDISTBFS_WARP_HASH_SLOTS={self.warp_hash_slots}",
            f"-DDISTBFS_HISTORY_HASH_SLOTS={self.history_hash_slots}",
            f"-DDISTBFS_MAX_BINS={self.max_bins}",
            f"-DDISTBFS_FUSED_THREADS={self.fused_threads}",
            f"-DDISTBFS_FUSED_MAX_EDGES={self.fused_max_edges}",
        )


DEFAULT_POLICY = LaunchPolicy()
"""The policy the CUDA backend uses unless given another (tuned for H100/H200, sm_90)."""
