"""The one-block fused levels' threshold on one GPU (``LaunchPolicy.fused_block_edges``): mean
milliseconds of the same searches with each threshold in turn (0: always the full grid), every
graph built once, the thresholds interleaved search by search so drift hits them alike.

    python benchmarks/tune_fused_block.py --graphs luxembourg grid2d grid3d kron24 \\
        --edges 0 256 512 1024 2048 --repeat 6

Road networks and meshes (luxembourg_osm, grids from a corner) are searched from vertex 0,
Kronecker graphs from Graph500 roots (dense: they never take one block, so their rows check
that nothing else changed). Searches are not validated here (the GPU tests validate the
hand-over).
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

import distbfs
from distbfs.backends.cuda.backend import CudaBackend
from distbfs.backends.cuda.launch_policy import LaunchPolicy
from distbfs.roots import choose_roots

SINGLE_SOURCE = {"luxembourg", "grid2d", "grid3d"}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d", "kron24"])
    p.add_argument("--edges", nargs="+", type=int, default=[0, 256, 512, 1024, 2048])
    p.add_argument("--repeat", type=int, default=6, help="searches per threshold")
    p.add_argument("--strategy", default="direction_optimizing")
    args = p.parse_args()
    print("| graph | fused_block_edges | mean ms | against 0 |")
    print("| --- | ---: | ---: | ---: |")
    for name in args.graphs:
        built = make_graph(name)
        graphs = {
            e: distbfs.Graph(built.dist, built.comm, CudaBackend(LaunchPolicy(fused_block_edges=e)))
            for e in args.edges
        }
        roots = (
            [0] * args.repeat
            if name in SINGLE_SOURCE
            else choose_roots(built.dist, built.comm, args.repeat)
        )
        times: dict[int, list[float]] = {e: [] for e in args.edges}
        for g in graphs.values():  # warm-up: kernels, queues
            distbfs.bfs(g, roots[0], strategy=args.strategy)
        for root in roots:
            for e, g in graphs.items():
                cupy.cuda.Device().synchronize()
                start = time.perf_counter()
                distbfs.bfs(g, root, strategy=args.strategy)
                cupy.cuda.Device().synchronize()
                times[e].append(time.perf_counter() - start)
        base = statistics.mean(times[args.edges[0]])
        for e in args.edges:
            mean = statistics.mean(times[e])
            print(f"| {name} | {e} | {1e3 * mean:.3f} | {mean / base:.3f} |")
        del graphs, built
    return 0


if __name__ == "__main__":
    sys.exit(main())
