"""Per-rank phase times of searches on several GPUs: where each rank's level time goes.

    mpirun -n 2 python benchmarks/profile_ranks.py --graph kronecker --scale 27 --roots 8

For each level of each search (phase timers on): every phase's device time (CUDA events on the
stream, as the benchmarks report) and host time (the Python call's wall time), per rank, then
printed as min / max over ranks, so imbalance between ranks and host-bound phases show apart.
The last table sums each phase over the searches. ``--cprofile K``: rank 0's Python profile of
K untimed searches (top functions by own time).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import cupy
import numpy as np

import distbfs
from distbfs.engine import SearchPlan
from distbfs.roots import choose_roots
from distbfs.traversals.bfs import bfs_levels


class DualTimer:
    """Device (CUDA events) and host (perf_counter) seconds per phase per level."""

    enabled = True

    def __init__(self) -> None:
        self._levels: list[list[tuple[str, Any, Any, float]]] = [[]]

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = cupy.cuda.Event()
        start.record()
        began = time.perf_counter()
        try:
            yield
        finally:
            host = time.perf_counter() - began
            end = cupy.cuda.Event()
            end.record()
            self._levels[-1].append((name, start, end, host))

    def next_level(self) -> None:
        self._levels.append([])

    def per_level(self) -> list[dict[str, float]]:
        return [{k: v[0] for k, v in level.items()} for level in self.both()]

    def both(self) -> list[dict[str, tuple[float, float]]]:
        """Per level: phase -> (device seconds, host seconds)."""
        levels = [level for level in self._levels if level]
        if levels:
            levels[-1][-1][2].synchronize()
        out = []
        for level in levels:
            seconds: dict[str, tuple[float, float]] = {}
            for name, start, end, host in level:
                device = cupy.cuda.get_elapsed_time(start, end) / 1e3
                was = seconds.get(name, (0.0, 0.0))
                seconds[name] = (was[0] + device, was[1] + host)
            out.append(seconds)
        return out


def print_rank0_profile(comm: Any, work: Callable[[], None], top: int) -> None:
    """Run ``work`` on every rank (collective), under cProfile on rank 0; print rank 0's ``top``
    functions by own time. The device is synchronized before the profile stops."""
    profiler = cProfile.Profile() if comm.rank == 0 else None
    if profiler:
        profiler.enable()
    work()
    cupy.cuda.Device().synchronize()
    if profiler:
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(top)
        print(text.getvalue()[:9000])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="kronecker")
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--strategy", default="hybrid")
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--cprofile", type=int, default=0, metavar="K")
    parser.add_argument("--queue-sizing", type=float, default=None, help="the CUDA backend's")
    args = parser.parse_args()

    from distbfs.api import resolve_backend
    from distbfs.runtime import get_communicator

    backend = resolve_backend("cuda")  # binds this rank's GPU
    if args.queue_sizing is not None:
        from distbfs.backends.cuda.backend import CudaBackend

        backend = CudaBackend(queue_sizing=args.queue_sizing)
    comm = get_communicator("auto", "cuda")
    graph = distbfs.Graph.generate(args.graph, backend=backend, comm=comm, scale=args.scale)
    dist = graph.dist
    roots = choose_roots(dist, comm, count=args.roots)
    plan = SearchPlan.build(dist, backend, comm, args.strategy)
    bfs_levels(plan, roots[0], predecessors=True)  # warm-up
    totals: dict[str, np.ndarray] = {}
    walls = []
    for index, root in enumerate(roots):
        timer = DualTimer()
        comm.barrier()
        cupy.cuda.Device().synchronize()
        began = time.perf_counter()
        result = bfs_levels(plan, root, predecessors=True, timer=timer)
        cupy.cuda.Device().synchronize()
        walls.append(time.perf_counter() - began)
        mine = timer.both()
        everyone = comm.allgather_object(mine)
        for level in range(len(mine)):
            for name in mine[level]:
                rows = np.array([rank[level].get(name, (0.0, 0.0)) for rank in everyone]) * 1e3
                totals.setdefault(name, np.zeros((comm.size, 2)))
                totals[name] += rows
                if index == 0 and comm.rank == 0:
                    stat = result.levels[level]
                    print(
                        f"L{stat.level} f={stat.frontier} e={stat.edges_expanded} "
                        f"sent={stat.items_sent} {name:>16}: device "
                        f"{rows[:, 0].min():7.3f}-{rows[:, 0].max():7.3f}  host "
                        f"{rows[:, 1].min():7.3f}-{rows[:, 1].max():7.3f} ms"
                    )
    wall = np.array(comm.allgather_object(walls))
    if comm.rank == 0:
        print(f"{comm.size} ranks, {args.graph} {args.scale}, {args.strategy}, {len(roots)} roots")
        print(f"search wall ms (mean over roots, max over ranks): {wall.max(0).mean() * 1e3:.2f}")
        print("phase totals over the roots, ms: device min-max over ranks | host min-max")
        for name, rows in sorted(totals.items()):
            print(
                f"  {name:>16}: {rows[:, 0].min():8.2f}-{rows[:, 0].max():8.2f} | "
                f"{rows[:, 1].min():8.2f}-{rows[:, 1].max():8.2f}"
            )
    if args.cprofile:

        def searches() -> None:
            for root in roots[: args.cprofile]:
                bfs_levels(plan, root, predecessors=True)

        print_rank0_profile(comm, searches, 30)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
