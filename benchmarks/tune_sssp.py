"""Tune the one-GPU delta-stepping grid (``kernels/relax.cu``): any of its ``LaunchPolicy``
fields (the bucket cut's width caps, its pile divisor, the far pile's size, the one-block
limit), on the graphs of ``bench_sssp.py`` (same weights and roots), every combination in the
same process.

    python benchmarks/tune_sssp.py --graphs luxembourg grid2d kron22 \\
        --set path_bucket_bins=4,16,64 path_far_fraction=1,0.25 --roots 4

Prints per graph and configuration the median search time (with the tree; the first
configuration's first searches run slow), the tree's share, the
buckets, steps and relaxations per stored edge; checks that every configuration gives the
distances of the first.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_sssp
import numpy as np

import distbfs
from distbfs.backends.cuda.backend import CudaBackend
from distbfs.backends.cuda.launch_policy import LaunchPolicy


def parse_setting(text: str) -> tuple[str, list[Any]]:
    """``name=v1,v2,...`` -> (a LaunchPolicy field, its values in the field's type)."""
    name, _, values = text.partition("=")
    fields = {f.name: f for f in dataclasses.fields(LaunchPolicy)}
    if name not in fields or not values:
        raise argparse.ArgumentTypeError(f"expected FIELD=V1,V2 of LaunchPolicy, got {text!r}")
    kind = float if fields[name].type in (float, "float") else int
    return name, [kind(v) for v in values.split(",")]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d", "kron22"])
    p.add_argument("--grid-shape", type=bench_sssp.parse_shape, default=(4096, 4096))
    p.add_argument("--data", type=Path, default=bench_sssp.DATA)
    p.add_argument(
        "--set",
        type=parse_setting,
        nargs="*",
        default=[("path_bucket_bins", [16])],
        help="LaunchPolicy fields to try, FIELD=V1,V2 each; every combination is run",
    )
    p.add_argument("--roots", type=int, default=4)
    args = p.parse_args()
    backend = CudaBackend()
    base = backend.policy
    names = [name for name, _ in args.set]
    print(
        f"{'graph':12} {' '.join(f'{n[5:]:>12}' for n in names)} {'ms':>9} {'tree ms':>8} "
        f"{'buckets':>8} {'steps':>7} {'relax/m':>8}"
    )
    for name in args.graphs:
        case = bench_sssp.parse_case(name, args.grid_shape)
        graph = bench_sssp.make_graph(case, backend, args.data)
        roots = bench_sssp.search_roots(case, graph, args.roots)
        want = None
        for values in itertools.product(*(v for _, v in args.set)):
            backend.policy = dataclasses.replace(base, **dict(zip(names, values, strict=True)))
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
                f"{name:12} {' '.join(f'{v:12g}' for v in values)} "
                f"{1e3 * np.median(times):9.3f} {1e3 * np.mean(trees):8.3f} "
                f"{np.mean(buckets):8.0f} {np.mean(steps):7.0f} "
                f"{np.mean(relax) / graph.dist.num_local_edges:8.2f}{ok}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
