"""Shortest paths on the small high-diameter graphs at any rank count: from vertex 0 of the road
graph and the 4096^2 grid, weighted as ``bench_sssp.py`` weighs them (1..255), through
``distbfs.sssp`` with the tree, so one GPU and several (``mpirun -n N``) compare in one call.

    mpirun --bind-to none -n 2 python benchmarks/bench_sssp_small.py --graphs luxembourg grid2d

One validated search, then ``--searches`` timed ones; prints, on rank 0, the mean and median
milliseconds and which path the plan took (in place on one rank, on every rank's replica, or
striped steps).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_sssp

import distbfs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d"])
    p.add_argument("--grid-shape", type=bench_sssp.parse_shape, default=(4096, 4096))
    p.add_argument("--searches", type=int, default=16)
    p.add_argument("--data", type=Path, default=bench_sssp.DATA)
    args = p.parse_args()
    for name in args.graphs:
        case = bench_sssp.parse_case(name, args.grid_shape)
        graph = bench_sssp.make_graph(case, "cuda", args.data)
        distbfs.sssp(graph, 0, predecessors=True, gather=False, validate=True)
        times = [
            distbfs.sssp(graph, 0, predecessors=True, gather=False).seconds
            for _ in range(args.searches)
        ]
        plan = graph.path_plan()
        if plan.replica is not None:
            path = "every rank's replica, in place"
        else:
            path = "in place" if plan.in_place else "striped steps"
        if graph.comm.rank == 0:
            mean, median = statistics.mean(times), statistics.median(times)
            print(
                f"{name}, {graph.comm.size} rank(s), {path}: mean {mean * 1e3:.3f} ms, "
                f"median {median * 1e3:.3f} ms",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
