"""Where a connected-components run spends its time: ``connected_components(timing=True)`` on
one graph, ``--runs`` times after a warm-up; per phase of each round, the median seconds, and the
whole run's median wall time. Also a target for a profiler (``nsys profile python3 ...``).

    python3 benchmarks/profile_cc.py --graph luxembourg --runs 16
    python3 benchmarks/profile_cc.py --graph kron26 --runs 8
    mpirun -n 2 python3 benchmarks/profile_cc.py --graph kron27 --runs 8   (rank 0 prints)
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_cc
import bench_sssp

import distbfs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graph", default="luxembourg", help="kronN, grid2d or luxembourg")
    p.add_argument("--grid-shape", type=bench_sssp.parse_shape, default=(4096, 4096))
    p.add_argument("--backend", default="cuda")
    p.add_argument("--runs", type=int, default=8)
    p.add_argument("--data", type=Path, default=bench_sssp.DATA)
    args = p.parse_args()
    case = bench_cc.parse_case(args.graph, args.grid_shape)
    graph = bench_cc.make_graph(case, args.backend, args.data)
    distbfs.connected_components(graph, gather=False)  # warm-up: kernels compiled
    walls, timed, phases = [], [], {}
    for _ in range(args.runs):
        walls.append(distbfs.connected_components(graph, gather=False).seconds)
        result = distbfs.connected_components(graph, gather=False, timing=True)
        timed.append(result.seconds)
        for row in result.rounds:
            for name, seconds in row.seconds.items():
                phases.setdefault((row.phase, row.round, name), []).append(seconds)
    if graph.comm.rank:
        return 0
    print(
        f"{args.graph} on {graph.comm.size} rank(s): {len(result.rounds)} rounds, "
        f"{result.count} components; median "
        f"{1e3 * statistics.median(walls):.3f} ms a run ({1e3 * statistics.median(timed):.3f} ms "
        "timed by phase)"
    )
    for (phase, index, name), seconds in phases.items():
        if any(seconds):
            print(f"  {phase:>13} {index:>2} {name:>15} {1e3 * statistics.median(seconds):9.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
