"""Whether a Kronecker graph fits one GPU: build it (one rank: streamed), then a few validated
searches per strategy; prints the build time, the pool's peak during the build, and GTEPS.

    python benchmarks/check_one_gpu_kron.py --scale 28 --roots 4
"""

from __future__ import annotations

import argparse
import time

import cupy

import distbfs
from distbfs.benchmark import run_searches
from distbfs.roots import choose_roots


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=28)
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--strategies", nargs="+", default=["hybrid", "direction_optimizing"])
    args = parser.parse_args()
    pool = cupy.get_default_memory_pool()
    started = time.perf_counter()
    graph = distbfs.Graph.generate("kronecker", scale=args.scale, backend="cuda")
    cupy.cuda.Device().synchronize()
    built, peak = time.perf_counter() - started, pool.total_bytes()
    csr = graph.dist.nbytes()
    print(
        f"kron{args.scale}: built in {built:.1f} s; pool at its end {peak / 1e9:.1f} GB; "
        f"CSR {csr / 1e9:.1f} GB ({graph.dist.num_edges:,} stored edges)"
    )
    roots = choose_roots(graph.dist, graph.comm, args.roots)
    for strategy in args.strategies:
        series = run_searches(graph, roots, predecessors=True, validate=1, strategy=strategy)
        stats = series.statistics
        print(f"  {strategy}: seconds per search {', '.join(f'{t:.3f}' for t in series.times)}")
        print(
            f"  {strategy}: {stats['harmonic_mean_TEPS'] / 1e9:.2f} GTEPS over {len(roots)} "
            f"roots (first validated); pool {pool.total_bytes() / 1e9:.1f} GB"
        )


if __name__ == "__main__":
    main()
