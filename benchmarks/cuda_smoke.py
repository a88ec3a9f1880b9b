"""Smoke benchmark of the CUDA backend on one GPU: a graph made on the device, searches from
random roots checked against the numpy backend (on a host copy), then timed, in Graph500 TEPS.

Graph500 TEPS: undirected edges of the traversed component (sum of the degrees of the reached
vertices / 2) per second, one search timed from its start until its labels are final on the
device. ``--small-frontier N`` times a one-rank hybrid loop instead of ``bfs_levels``: levels
whose frontier holds at most N vertices run in the fused one-block kernel (sections 5.2/5.4).

    python benchmarks/cuda_smoke.py                       # Kronecker scale 20, 8 roots
    python benchmarks/cuda_smoke.py --generator grid2d --scale 10 --small-frontier 4096
"""

from __future__ import annotations

import argparse
import time

import cupy
import numpy as np

from distbfs.backends.cuda_backend import CudaBackend
from distbfs.backends.numpy_backend import NumpyBackend
from distbfs.bfs import bfs_levels
from distbfs.comm.single import SingleRankCommunicator
from distbfs.generators import DEFAULT_SEED, grid2d_edges, kronecker_edges, uniform_edges
from distbfs.graph import DistGraph, build_graph

ONE_RANK = SingleRankCommunicator()


def make_graph(generator: str, scale: int, edgefactor: int, seed: int) -> DistGraph:
    """The undirected graph on the device (``grid2d``: a 2**scale x 2**scale lattice)."""
    if generator == "grid2d":
        side = 1 << scale
        src, dst = grid2d_edges(side, side, 0, 1, xp=cupy)
        n = side * side
    else:
        make = kronecker_edges if generator == "kronecker" else uniform_edges
        src, dst = make(scale, edgefactor, seed, 0, 1, xp=cupy)
        n = 1 << scale
    return build_graph(ONE_RANK, src, dst, n, directed=False, xp=cupy)


def hybrid_search(graph: DistGraph, root: int, backend: CudaBackend, small: int) -> tuple:
    """One-rank level loop handing frontiers of at most ``small`` vertices to the fused kernel."""
    state = backend.start(graph, root, True)
    level = 0
    while state.frontier_size > 0:
        done = backend.run_small_levels(graph, state, level, small)
        if done:
            level += done
            continue
        bins = backend.filter_partition(state, backend.expand(graph, state), 1)
        backend.contract(graph, state, ONE_RANK.exchange_bins(bins), level + 1)
        level += 1
    return state.labels, level


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--generator", choices=("kronecker", "uniform", "grid2d"), default="kronecker"
    )
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--check", type=int, default=None, help="roots checked on the host")
    parser.add_argument("--small-frontier", type=int, default=0, help="fused below this size")
    args = parser.parse_args()

    started = time.perf_counter()
    graph = make_graph(args.generator, args.scale, args.edgefactor, args.seed)
    cupy.cuda.get_current_stream().synchronize()
    print(
        f"graph: {args.generator} scale {args.scale}, n={graph.n}, "
        f"{graph.num_undirected_edges} undirected edges, built on "
        f"{cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()} in "
        f"{time.perf_counter() - started:.2f} s"
    )
    row_offsets = cupy.asnumpy(graph.row_offsets)
    degrees = np.diff(row_offsets)
    host_graph = DistGraph(
        graph.n, graph.num_edges, False, 0, 1, row_offsets, cupy.asnumpy(graph.column_indices)
    )
    candidates = np.flatnonzero(degrees > 0)
    rng = np.random.default_rng(args.seed)
    roots = [0] if args.generator == "grid2d" else []
    roots += rng.choice(candidates, args.roots - len(roots), replace=False).tolist()
    check = args.roots if args.check is None else args.check

    backend = CudaBackend()
    bfs_levels(graph, roots[0], backend, ONE_RANK, predecessors=True)  # compile, warm up
    rows = []
    for i, root in enumerate(roots):
        cupy.cuda.get_current_stream().synchronize()
        start = time.perf_counter()
        if args.small_frontier:
            labels, levels = hybrid_search(graph, root, backend, args.small_frontier)
        else:
            result = bfs_levels(graph, root, backend, ONE_RANK, predecessors=True)
            labels, levels = result.distances, len(result.levels)
        cupy.cuda.get_current_stream().synchronize()
        seconds = time.perf_counter() - start
        distances = cupy.asnumpy(labels)
        reached = distances >= 0
        edges = int(degrees[reached].sum()) // 2
        match = "-"
        if i < check:
            want = bfs_levels(host_graph, root, NumpyBackend(), ONE_RANK).distances
            match = "yes" if np.array_equal(distances, want) else "NO"
        rows.append((root, levels, int(reached.sum()), edges, seconds, match))

    print(f"{'root':>10} {'levels':>7} {'reached':>10} {'edges':>12} {'ms':>9} {'GTEPS':>7} host")
    for root, levels, reached, edges, seconds, match in rows:
        gteps = edges / seconds / 1e9
        print(
            f"{root:>10} {levels:>7} {reached:>10} {edges:>12} {seconds * 1e3:>9.2f} "
            f"{gteps:>7.3f} {match}"
        )
    teps = np.array([edges / seconds for *_, edges, seconds, _ in rows])
    mean_ms = 1e3 * np.mean([seconds for *_, seconds, _ in rows])
    harmonic = len(teps) / np.sum(1.0 / teps) / 1e9 if np.all(teps > 0) else 0.0
    mismatches = sum(match == "NO" for *_, match in rows)
    print(f"mean {mean_ms:.2f} ms per BFS, harmonic mean {harmonic:.3f} GTEPS")
    if mismatches:
        raise SystemExit(f"{mismatches} searches differ from the numpy backend")


if __name__ == "__main__":
    main()
