"""Shortest paths, connected components and batched BFS on plain against compressed columns
(#20: the relax, link and lane kernels decode compressed rows): one weighted Kronecker graph
(weights uniform 1..255, as ``bench --algorithm sssp``) generated once, compressed beside
itself, then each traversal run plain and compressed alternating ``--repeats`` times from the
same sources. The first compressed run of each is checked against the plain one (distances,
labels). Prints a markdown table of median milliseconds and the ratio; ``--json`` keeps every
time.

    python3 benchmarks/bench_compressed_traversals.py --scale 24            # one GPU
    python benchmarks/bench_compressed_traversals.py --backend numpy --scale 14 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

import distbfs
from distbfs.roots import choose_roots


def host(array: Any) -> np.ndarray:
    return array.get() if hasattr(array, "get") else np.asarray(array)


def traversals(sources: list[int], batch: list[int]) -> dict[str, Callable[[Any], Any]]:
    """Each traversal: graph -> (what must agree, seconds)."""

    def sssp(g: Any) -> tuple[Any, float]:
        distances, seconds = [], 0.0
        for source in sources:  # each result goes before the next search (no pool growth)
            result = distbfs.sssp(g, source)
            distances.append(host(result.distances))
            seconds += result.seconds
            del result
        return distances, seconds

    def cc(g: Any) -> tuple[Any, float]:
        result = distbfs.connected_components(g)
        return host(result.labels), result.seconds

    def batched(g: Any) -> tuple[Any, float]:
        result = distbfs.bfs_many(g, batch)
        return host(result.distances), result.seconds

    return {"sssp": sssp, "cc": cc, "bfs_many": batched}


def same(a: Any, b: Any) -> bool:
    if isinstance(a, list):
        return all(same(x, y) for x, y in zip(a, b, strict=True))
    return bool(np.array_equal(a, b))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=24)
    p.add_argument("--sources", type=int, default=4, help="SSSP sources per run")
    p.add_argument("--batch", type=int, default=64, help="bfs_many sources")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--backend", default="auto", choices=("auto", "numpy", "cuda"))
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()

    t0 = time.perf_counter()
    plain = distbfs.Graph.generate(
        "kronecker", scale=args.scale, weights="uniform:1:255", backend=args.backend
    )
    built = time.perf_counter() - t0
    small = plain.compress()
    comm = plain.comm
    sizes = {
        n: comm.allreduce(g.dist.nbytes()) for n, g in (("plain", plain), ("compressed", small))
    }
    roots = choose_roots(plain.dist, comm, max(args.sources, args.batch))
    runs = traversals(roots[: args.sources], roots[: args.batch])
    times: dict[str, dict[str, list[float]]] = {t: {"plain": [], "compressed": []} for t in runs}
    checked = {}
    for name, run in runs.items():
        for repeat in range(args.repeats):
            for kind, graph in (("plain", plain), ("compressed", small)):
                out, seconds = run(graph)
                times[name][kind].append(seconds)
                if repeat == 0:
                    checked.setdefault(name, []).append(out)
        checked[name] = same(*checked[name])
    rows = []
    for name, by_kind in times.items():
        a, b = (statistics.median(by_kind[k]) for k in ("plain", "compressed"))
        rows.append(
            {
                "traversal": name,
                "plain_ms": 1e3 * a,
                "compressed_ms": 1e3 * b,
                "speed_ratio": a / b,
                "agree": checked[name],
            }
        )
    if comm.rank == 0:
        print(
            f"kron{args.scale} weighted 1..255, built in {built:.1f} s; CSR {sizes['plain']:,}"
            f" -> {sizes['compressed']:,} bytes; {args.repeats} repeats, medians"
        )
        print("| traversal | plain ms | compressed ms | compressed speed / plain | agree |")
        print("| --- | ---: | ---: | ---: | --- |")
        for r in rows:
            print(
                f"| {r['traversal']} | {r['plain_ms']:.2f} | {r['compressed_ms']:.2f} | "
                f"{r['speed_ratio']:.3f} | {'yes' if r['agree'] else 'NO'} |"
            )
        if args.json:
            doc = {
                "date": datetime.now(timezone.utc).isoformat(),
                "scale": args.scale,
                "sizes": sizes,
                "rows": rows,
                "times": times,
                "args": vars(args) | {"json": str(args.json)},
            }
            args.json.write_text(json.dumps(doc, indent=1))
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
