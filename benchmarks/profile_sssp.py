"""One shortest-path search on one GPU, for a profiler (``ncu -k delta_stepping``): the road
network of ``bench_sssp.py`` (or a Kronecker / grid graph) from vertex 0.

    ncu --section WarpStateStats --section SourceCounters -k delta_stepping -c 1 \\
        python3 benchmarks/profile_sssp.py --graph luxembourg
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sssp

import distbfs


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graph", default="luxembourg")
    p.add_argument("--grid-shape", type=bench_sssp.parse_shape, default=(4096, 4096))
    p.add_argument("--data", type=Path, default=bench_sssp.DATA)
    args = p.parse_args()
    case = bench_sssp.parse_case(args.graph, args.grid_shape)
    graph = bench_sssp.make_graph(case, "cuda", args.data)
    result = distbfs.sssp(graph, 0, predecessors=True)
    print(f"{args.graph}: {result.seconds * 1e3:.3f} ms, {len(result.buckets)} buckets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
