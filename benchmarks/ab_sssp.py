"""A/B of two versions of distbfs's shortest paths in one call: the same graphs (those of
``bench_sssp.py``, weights 1..255) and roots searched by each version in turn, alternating, each
run a fresh process importing distbfs from its version's folder (``PYTHONPATH``).

Prints per run and graph the median and least search time (with the tree), buckets, steps,
relaxations per stored edge and a digest of the first roots' distances and trees, which must
agree between the versions.

Usage (one GPU):
  python benchmarks/ab_sssp.py --before OLD_CHECKOUT --after . \\
      [--graphs luxembourg grid2d kron26] [--rounds 3] [--roots 3] [--repeat 6]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def worker(args: argparse.Namespace) -> None:
    """One version, every graph: the searches and one line each."""
    sys.path.insert(0, str(HERE))
    import bench_sssp
    import numpy as np

    import distbfs

    for name in args.graphs:
        case = bench_sssp.parse_case(name, args.grid_shape)
        graph = bench_sssp.make_graph(case, "cuda", bench_sssp.DATA)
        roots = bench_sssp.search_roots(case, graph, args.roots)
        distbfs.sssp(graph, roots[0], predecessors=True)  # warm-up
        times, relaxations, steps, digest = [], [], [], hashlib.sha1()
        for rep in range(args.repeat):
            r = distbfs.sssp(graph, roots[rep % len(roots)], predecessors=True, timing=True)
            times.append(r.seconds * 1e3)
            relaxations.append(sum(b.relaxations for b in r.buckets))
            steps.append(sum(b.phases for b in r.buckets))
            if rep < len(roots):
                for array in (r.distances, r.predecessors):
                    digest.update(np.asarray(getattr(array, "get", lambda a=array: a)()).tobytes())
        edges = graph.dist.num_local_edges
        print(
            f"{name}: median {statistics.median(times):.3f} ms, least {min(times):.3f}, "
            f"buckets {len(r.buckets)}, steps {np.mean(steps):.0f}, "
            f"relaxations/edge {np.mean(relaxations) / edges:.3f}, "
            f"digest {digest.hexdigest()[:12]}",
            flush=True,
        )
        del graph, r


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", type=Path, help="folder of the baseline version")
    p.add_argument("--after", type=Path, help="folder of the version under test")
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d", "kron26"])
    p.add_argument("--grid-shape", default="4096x4096")
    p.add_argument("--rounds", type=int, default=3, help="runs of each version, alternating")
    p.add_argument("--roots", type=int, default=3)
    p.add_argument("--repeat", type=int, default=6, help="timed searches a graph")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.worker:
        sys.path.insert(0, str(HERE))
        import bench_sssp

        args.grid_shape = bench_sssp.parse_shape(args.grid_shape)
        worker(args)
        return 0
    for run in range(2 * args.rounds):
        label, folder = ("after", args.after) if run % 2 == 0 else ("before", args.before)
        print(f"== {label} ({folder})", flush=True)
        paths = [str(folder.resolve()), os.environ.get("PYTHONPATH", "")]
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in paths if p))
        command = [sys.executable, __file__, "--worker", "--graphs", *args.graphs]
        command += ["--grid-shape", args.grid_shape, "--roots", str(args.roots)]
        command += ["--repeat", str(args.repeat)]
        subprocess.run(command, env=env, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
