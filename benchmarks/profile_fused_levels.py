"""Fused levels alone on one GPU: a whole fused run from vertex 0 of a high-diameter graph
(luxembourg_osm, the 4096^2 grid), timed around ``run_small_levels`` (no level table, no
validation), for several launch policies and with the visited bitmask kept in global memory
instead of shared (``--global-mask``), with other small grids (``--small-grids``), one level
a grid barrier (``--single-levels``: no level pairs), interleaved search by search.

    python benchmarks/profile_fused_levels.py --graphs luxembourg grid2d --repeat 8 \\
        --small-grids 16384:16 32768:32 65536:64

Prints one table row per graph and configuration: levels run, mean milliseconds, microseconds
a level. Runs with whatever distbfs is importable (PYTHONPATH), so two versions compare by
running it twice in one call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import make_graph

from distbfs.backends.cuda import fused
from distbfs.backends.cuda.backend import CudaBackend
from distbfs.backends.cuda.launch_policy import LaunchPolicy
from distbfs.engine import SearchPlan

CONFIGS = {
    "full grid alone": {"fused_block_edges": 0, "fused_small_grid_edges": 0},
    "one block, full grid": {"fused_small_grid_edges": 0},
    "default": {},
}
SINGLE_LEVELS = {"default, one level a barrier": {"fused_pair_degree": 0}}
"""``--single-levels``: the default tiers with no level pairs (``level_pairs_kernel``)."""


def fused_run(plan: SearchPlan) -> tuple[int, float]:
    """One search from vertex 0, every level fused: (levels, seconds)."""
    state = plan.start([0], False)
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    levels = plan.backend.run_small_levels(plan.graph, state, 0, 1 << 30)
    cupy.cuda.Device().synchronize()
    return levels, time.perf_counter() - start


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d"])
    p.add_argument("--repeat", type=int, default=8)
    p.add_argument("--global-mask", action="store_true", help="also: one block, global bitmask")
    p.add_argument("--small-grids", nargs="*", default=[], help="also: EDGES:BLOCKS small grids")
    p.add_argument("--single-levels", action="store_true", help="also: no level pairs")
    args = p.parse_args()
    configs = dict(CONFIGS)
    if args.single_levels:
        configs.update(SINGLE_LEVELS)
    for spec in args.small_grids:
        edges, blocks = (int(x) for x in spec.split(":"))
        configs[f"small grid of {blocks} blocks to {edges} edges"] = {
            "fused_small_grid_edges": edges,
            "fused_small_grid_blocks": blocks,
        }
    if args.global_mask and hasattr(fused, "_block_layout"):
        configs["default, global mask"] = {}
    print("| graph | configuration | levels | mean ms | us / level |")
    print("| --- | --- | ---: | ---: | ---: |")
    layout = getattr(fused, "_block_layout", None)
    for name in args.graphs:
        built = make_graph(name)
        plans = {
            label: SearchPlan.build(
                built.dist, CudaBackend(LaunchPolicy(**options)), built.comm, "contract_expand"
            )
            for label, options in configs.items()
        }
        times: dict[str, list[float]] = {label: [] for label in plans}
        levels: dict[str, int] = {}
        for turn in range(args.repeat + 1):  # turn 0: warm-up (kernels, queues)
            for label, plan in plans.items():
                if layout is not None:
                    fused._block_layout = layout if "global" not in label else _global(layout)
                ran, seconds = fused_run(plan)
                levels[label] = ran
                if turn:
                    times[label].append(seconds)
        for label in plans:
            mean = statistics.mean(times[label])
            per_level = 1e6 * mean / max(levels[label], 1)
            print(f"| {name} | {label} | {levels[label]} | {1e3 * mean:.3f} | {per_level:.2f} |")
        del plans, built
    return 0


def _global(layout):
    """``fused._block_layout`` with no bitmask words in shared memory."""

    def in_global(policy, queues, state):
        capacity, words, nbytes = layout(policy, queues, state)
        return capacity, 0, nbytes - words * state.visited_mask.itemsize

    return in_global


if __name__ == "__main__":
    sys.exit(main())
