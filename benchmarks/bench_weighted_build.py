"""Build time and traced peak host memory of a weighted Kronecker graph (weights 1..255) on the
numpy backend, per rank: the construction's sort of edges with their weights.

    mpiexec -n 2 python benchmarks/bench_weighted_build.py --scale 21

A/B against another version: ``PYTHONPATH=OTHER_CHECKOUT mpiexec -n 2 python ...``.
"""

from __future__ import annotations

import argparse
import sys
import time
import tracemalloc

import distbfs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=20)
    args = p.parse_args()
    tracemalloc.start()
    start = time.perf_counter()
    graph = distbfs.Graph.generate(
        "kronecker", scale=args.scale, weights="uniform:1:255", backend="numpy"
    )
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 1e9
    rows = graph.comm.allgather_object((round(seconds, 2), round(peak, 3)))
    if graph.comm.rank == 0:
        print(
            f"kron{args.scale}, {graph.comm.size} rank(s), {graph.num_edges:,} edges: "
            f"seconds {[r[0] for r in rows]}, traced peak GB {[r[1] for r in rows]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
