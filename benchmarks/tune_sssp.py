"""Tune the one-GPU delta-stepping grid (``kernels/relax.cu``): the bucket cut's width cap
(``LaunchPolicy.path_bucket_bins``), its pile divisor and the one-block limit, on the graphs of
``bench_sssp.py`` (same weights and roots), every configuration in the same process.

    python benchmarks/tune_sssp.py --graphs luxembourg grid2d kron22 --bins 4 16 64 --roots 4

Prints per graph and configuration the mean search time (with the tree), the tree's share, the
buckets, steps and relaxations per stored edge; checks that every configuration gives the
distances of the first.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sssp
import numpy as np

import distbfs
from distbfs.backends.cuda.backend import CudaBackend


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d", "kron22"])
    p.add_argument("--grid-shape", type=bench_sssp.parse_shape, default=(4096, 4096))
    p.add_argument("--data", type=Path, default=bench_sssp.DATA)
    p.add_argument("--bins", type=int, nargs="+", default=[16])
    p.add_argument("--divisors", type=int, nargs="+", default=[8])
    p.add_argument("--one-block", type=int, nargs="+", default=[1 << 19])
    p.add_argument("--roots", type=int, default=4)
    args = p.parse_args()
    backend = CudaBackend()
    base = backend.policy
    print(
        f"{'graph':12} {'bins':>5} {'div':>4} {'1blk':>8} {'ms':>9} {'tree ms':>8} "
        f"{'buckets':>8} {'steps':>7} {'relax/m':>8}"
    )
    for name in args.graphs:
        case = bench_sssp.parse_case(name, args.grid_shape)
        graph = bench_sssp.make_graph(case, backend, args.data)
        roots = bench_sssp.search_roots(case, graph, args.roots)
        want = None
        for bins in args.bins:
            for divisor in args.divisors:
                for one in args.one_block:
                    backend.policy = dataclasses.replace(
                        base,
                        path_bucket_bins=bins,
                        path_split_divisor=divisor,
                        path_one_block_vertices=one,
                    )
                    distbfs.sssp(graph, roots[0], predecessors=True)  # warm
                    times, trees, buckets, steps, relax = [], [], [], [], []
                    for root in roots:
                        start = time.perf_counter()
                        r = distbfs.sssp(graph, root, predecessors=True, timing=True)
                        times.append(time.perf_counter() - start)
                        trees.append(sum(b.seconds.get("tree", 0.0) for b in r.buckets))
                        buckets.append(len(r.buckets))
                        steps.append(sum(b.phases for b in r.buckets))
                        relax.append(sum(b.relaxations for b in r.buckets))
                    got = np.asarray(backend.to_host(r.distances))
                    if want is None:
                        want = got
                    ok = "" if np.array_equal(got, want) else "  DIFFERENT DISTANCES"
                    print(
                        f"{name:12} {bins:5d} {divisor:4d} {one:8d} "
                        f"{1e3 * np.mean(times):9.3f} {1e3 * np.mean(trees):8.3f} "
                        f"{np.mean(buckets):8.0f} {np.mean(steps):7.0f} "
                        f"{np.mean(relax) / graph.dist.num_local_edges:8.2f}{ok}",
                        flush=True,
                    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
