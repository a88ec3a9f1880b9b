"""The direction heuristic's thresholds on one GPU: Graph500 harmonic-mean TEPS of the
direction-optimizing search for each (alpha, beta), every graph built once, same roots, same
run; each root is searched with every pair in turn, so drift hits all pairs alike.

    python benchmarks/tune_direction.py --graphs kron24 kron26 uniform24 --alpha 15 30 60 \\
        --beta 18 --roots 64

GAP's 15 and 18 were tuned on CPUs, where a top-down edge and a bottom-up slot cost about the
same; on a GPU a bottom-up slot is a bitmap read that usually hits L2, a top-down edge a label
lookup that usually misses. Prints one row per (graph, alpha, beta): harmonic-mean GTEPS, its
ratio to the first pair's, and the most common per-level directions (F: fused top-down levels,
T: a top-down level, B: bottom-up) with how many roots took them. Searches are not validated
here (bench_gpu.py validates the default thresholds).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import cupy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import GRAPHS, make_graph

import distbfs
from distbfs.roots import choose_roots


def pattern(levels: list) -> str:
    """Directions of one search, e.g. ``F2 T B B F3``."""
    words = []
    for level in levels:
        if level.span > 1 or (level.direction == "top_down" and not level.edges_expanded):
            words.append(f"F{level.span}")
        else:
            words.append("B" if level.direction == "bottom_up" else "T")
    return " ".join(words)


def detail(graph, roots: list[int], options: dict, alpha: float, beta: float) -> None:
    """One timed search per distinct direction pattern: each level's frontier, direction,
    edges expanded or slots inspected, and milliseconds (in all, and per phase)."""
    seen = set()
    for root in roots:
        result = distbfs.bfs(graph, root, alpha=alpha, beta=beta, timing=True, **options)
        shape = pattern(result.levels)
        if shape in seen:
            continue
        seen.add(shape)
        print(f"  root {root}: {shape}, {1e3 * result.seconds:.3f} ms")
        for lv in result.levels:
            ms = 1e3 * sum(lv.seconds.values())
            phases = " ".join(f"{k} {1e3 * v:.3f}" for k, v in lv.seconds.items() if v)
            print(
                f"    level {lv.level} x{lv.span} {lv.direction:9s} frontier {lv.frontier:>10,} "
                f"inspected {lv.edges_inspected:>13,} discovered {lv.discovered:>10,} {ms:.3f} ms"
                f" ({phases})"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=["kron26"], choices=list(GRAPHS))
    parser.add_argument("--alpha", nargs="+", type=float, default=[15.0])
    parser.add_argument("--beta", nargs="+", type=float, default=[18.0])
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--detail", action="store_true", help="per-level table per pattern")
    args = parser.parse_args()

    print("graph alpha beta GTEPS ratio patterns")
    for name in args.graphs:
        graph = make_graph(name)
        roots = choose_roots(graph.dist, graph.comm, args.roots)
        options = {"predecessors": True, "gather": False, "strategy": "direction_optimizing"}
        edges = {r: distbfs.bfs(graph, r, **options).edges_traversed for r in roots}  # warm-up
        pairs = [(alpha, beta) for alpha in args.alpha for beta in args.beta]
        seconds_per_edge = dict.fromkeys(pairs, 0.0)
        shapes = {pair: collections.Counter() for pair in pairs}
        for root in roots:  # every pair on each root in turn: drift hits all pairs alike
            for alpha, beta in pairs:
                result = distbfs.bfs(graph, root, alpha=alpha, beta=beta, **options)
                seconds_per_edge[alpha, beta] += result.seconds / edges[root]
                shapes[alpha, beta][pattern(result.levels)] += 1
        first = len(roots) / seconds_per_edge[pairs[0]] / 1e9
        for alpha, beta in pairs:
            gteps = len(roots) / seconds_per_edge[alpha, beta] / 1e9
            common = "; ".join(f"{p} x{k}" for p, k in shapes[alpha, beta].most_common(3))
            print(f"{name} {alpha:g} {beta:g} {gteps:.2f} {gteps / first:.3f} {common}")
        if args.detail:
            detail(graph, roots, options, *pairs[0])
        del graph
        cupy.get_default_memory_pool().free_all_blocks()


if __name__ == "__main__":
    main()
