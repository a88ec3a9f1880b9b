"""CPU benchmark: the numpy backend against scipy's compiled BFS (``--algorithm sssp``: its
Dijkstra; ``cc``: its connected components), and the same graph on MPI ranks.

Graph500-style: Kronecker graphs (scale 18 and 20 by default; weights uniform 1..255 for
shortest paths), the same 16 roots for every contender (components: 16 runs of the whole graph,
labels compared with scipy's), Graph500 TEPS (undirected edges of the
component / search time), harmonic means; every distbfs search validated (outside the timing).
scipy's ``scipy.sparse.csgraph.breadth_first_order`` (``dijkstra``) runs in the same process on
the same CSR, so the ratio is taken within one run. MPI runs launch ``mpiexec -n P python -m
distbfs bench`` on the same graph and roots. Also reports load throughput (MB/s) of the file
readers on real graphs.

Usage: python benchmarks/bench_cpu.py [--scales 18 20] [--roots 16] [--ranks 2 4]
       [--algorithm bfs|sssp|cc] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph

import distbfs
from distbfs.benchmark import run_cc_runs, run_path_searches, run_searches
from distbfs.roots import choose_roots
from distbfs.stats import graph500_statistics

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("DISTBFS_DATA", REPO.parent / "shared" / "data"))
LOAD_FILES = (
    "ego-Twitter-undirected.txt.gz",
    "soc-Slashdot0902.txt.gz",
    "wave.graph.gz",
    "luxembourg_osm.mtx.gz",
)


def harmonic_teps(times: list[float], nedges: list[int]) -> float:
    return graph500_statistics(times, nedges)["harmonic_mean_TEPS"]


SSSP_WEIGHTS = "uniform:1:255"
"""The weights of shortest-path runs (GAP's benchmark's, ``bench --algorithm sssp``'s default)."""


def bench_scale_sssp(scale: int, nroots: int) -> dict:
    """distbfs's delta-stepping against scipy's dijkstra, same graph, weights and roots."""
    t0 = time.perf_counter()
    graph = distbfs.Graph.generate(
        "kronecker", scale=scale, backend="numpy", comm="auto", weights=SSSP_WEIGHTS
    )
    build = time.perf_counter() - t0
    roots = choose_roots(graph.dist, graph.comm, nroots)
    dist = graph.dist
    matrix = sp.csr_matrix(
        (dist.weights.astype(np.float64), dist.column_indices, dist.row_offsets),
        shape=(dist.n, dist.n),
    )
    found: list[np.ndarray] = []
    series = run_path_searches(
        graph, roots, after_each=lambda result: found.append(result.local_distances)
    )
    scipy_t = []
    for root, ours in zip(roots, found, strict=True):
        start = time.perf_counter()
        theirs = csgraph.dijkstra(matrix, indices=root)
        scipy_t.append(time.perf_counter() - start)
        if not np.array_equal(theirs, ours):
            raise SystemExit(f"root {root}: distances differ from scipy's")
    mine, theirs = harmonic_teps(series.times, series.nedges), harmonic_teps(scipy_t, series.nedges)
    return {
        "scale": scale,
        "undirected_edges": dist.num_undirected_edges,
        "construction_seconds": build,
        "roots": roots,
        "delta": series.delta,
        "numpy_times": series.times,
        "scipy_times": scipy_t,
        "nedges": series.nedges,
        "numpy_hmean_teps": mine,
        "scipy_hmean_teps": theirs,
        "ratio_numpy_to_scipy": mine / theirs,
    }


def bench_scale_cc(scale: int, runs: int) -> dict:
    """distbfs's Afforest against scipy's connected_components, same graph, ``runs`` each; the
    labels must describe the same components (distbfs's: the smallest vertex id of each)."""
    graph = distbfs.Graph.generate("kronecker", scale=scale, backend="numpy", comm="auto")
    dist = graph.dist
    matrix = sp.csr_matrix(
        (np.ones(dist.num_local_edges, np.int8), dist.column_indices, dist.row_offsets),
        shape=(dist.n, dist.n),
    )
    labels: list[np.ndarray] = []
    series = run_cc_runs(graph, runs, after_each=lambda result: labels.append(result.local_labels))
    scipy_t = []
    for _ in range(runs):
        start = time.perf_counter()
        count, theirs = csgraph.connected_components(matrix, directed=False)
        scipy_t.append(time.perf_counter() - start)
    smallest = np.full(count, dist.n, dtype=np.int64)
    np.minimum.at(smallest, theirs, np.arange(dist.n))
    if count != series.count or not np.array_equal(smallest[theirs], labels[0]):
        raise SystemExit(f"scale {scale}: components differ from scipy's")
    mine = harmonic_teps(series.times, series.nedges)
    theirs_teps = harmonic_teps(scipy_t, series.nedges)
    return {
        "scale": scale,
        "undirected_edges": dist.num_undirected_edges,
        "components": count,
        "numpy_times": series.times,
        "scipy_times": scipy_t,
        "nedges": series.nedges,
        "numpy_hmean_teps": mine,
        "scipy_hmean_teps": theirs_teps,
        "ratio_numpy_to_scipy": mine / theirs_teps,
    }


def bench_scale(scale: int, nroots: int, strategy: str | None) -> dict:
    t0 = time.perf_counter()
    graph = distbfs.Graph.generate("kronecker", scale=scale, backend="numpy", comm="auto")
    build = time.perf_counter() - t0
    roots = choose_roots(graph.dist, graph.comm, nroots)
    dist = graph.dist
    matrix = sp.csr_matrix(
        (np.ones(dist.num_local_edges, np.int8), dist.column_indices, dist.row_offsets),
        shape=(dist.n, dist.n),
    )
    reached: list[int] = []
    series = run_searches(
        graph,
        roots,
        predecessors=True,
        strategy=strategy,
        after_each=lambda result: reached.append(result.num_reached),
    )
    ours_t, nedges, scipy_t = series.times, series.nedges, []
    for root, count in zip(roots, reached, strict=True):
        start = time.perf_counter()
        order, _ = csgraph.breadth_first_order(matrix, root, directed=True)
        scipy_t.append(time.perf_counter() - start)
        if len(order) != count:
            raise SystemExit(f"root {root}: scipy reached {len(order)}, distbfs {count}")
    ours, theirs = harmonic_teps(ours_t, nedges), harmonic_teps(scipy_t, nedges)
    return {
        "scale": scale,
        "vertices": dist.n,
        "undirected_edges": dist.num_undirected_edges,
        "construction_seconds": build,
        "roots": roots,
        "numpy_times": ours_t,
        "scipy_times": scipy_t,
        "nedges": nedges,
        "numpy_hmean_teps": ours,
        "scipy_hmean_teps": theirs,
        "ratio_numpy_to_scipy": ours / theirs,
    }


def bench_ranks(
    scale: int, nroots: int, ranks: int, strategy: str | None, algorithm: str = "bfs"
) -> dict:
    mpiexec = shutil.which("mpiexec", path=str(Path(sys.executable).parent)) or shutil.which(
        "mpiexec"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [
            mpiexec,
            "-n",
            str(ranks),
            sys.executable,
            "-m",
            "distbfs",
            "bench",
            "--scale",
            str(scale),
            "--roots",
            str(nroots),
            "--backend",
            "numpy",
            "--predecessors",
            "--json",
            str(out),
            "--quiet",
            "--algorithm",
            algorithm,
        ] + (["--strategy", strategy] if strategy else [])
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        document = json.loads(out.read_text())
    return {
        "ranks": ranks,
        "scale": scale,
        "roots": document.get("roots"),  # (none for components)
        "hmean_teps": document["statistics"]["harmonic_mean_TEPS"],
    }


def bench_load() -> list[dict]:
    rows = []
    for name in LOAD_FILES:
        path = DATA / name
        if not path.exists():
            continue
        graph = distbfs.Graph.from_file(path, backend="numpy")
        info = graph.load_info
        rows.append(
            {
                "file": name,
                "format": info.format,
                "bytes": info.bytes,
                "seconds": info.seconds,
                "mb_per_s": info.mb_per_s,
            }
        )
    with tempfile.TemporaryDirectory() as tmp:  # a large plain-text edge list
        rng = np.random.default_rng(0)
        edges = rng.integers(0, 2**22, size=(6_000_000, 2))
        path = Path(tmp) / "random.el"
        np.savetxt(path, edges, fmt="%d")
        graph = distbfs.Graph.from_file(path, backend="numpy")
        info = graph.load_info
        rows.append(
            {
                "file": "random.el (6 M lines, generated)",
                "format": info.format,
                "bytes": info.bytes,
                "seconds": info.seconds,
                "mb_per_s": info.mb_per_s,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scales", type=int, nargs="+", default=[18, 20])
    parser.add_argument("--roots", type=int, default=16)
    parser.add_argument("--ranks", type=int, nargs="*", default=[2, 4])
    parser.add_argument("--strategy", default=None, help="level strategy (default: the loop's)")
    parser.add_argument("--no-load", action="store_true", help="skip the load-throughput table")
    parser.add_argument("--algorithm", choices=("bfs", "sssp", "cc"), default="bfs")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    report = {
        "machine": f"{platform.node()} {os.cpu_count()} cores {platform.processor()}",
        "date": time.strftime("%Y-%m-%d"),
        "command": " ".join(sys.argv),
        "scales": [],
        "ranks": [],
        "strategy": args.strategy,
        "algorithm": args.algorithm,
        "load": [] if args.no_load else bench_load(),
    }
    print("| file | format | MB | s | MB/s |\n| --- | --- | ---: | ---: | ---: |")
    for row in report["load"]:
        print(
            f"| {row['file']} | {row['format']} | {row['bytes'] / 1e6:.1f} | "
            f"{row['seconds']:.2f} | {row['mb_per_s']:.0f} |"
        )
    print(
        "\n| scale | edges | numpy 1 rank GTEPS | scipy GTEPS | ratio | "
        + " | ".join(f"{p} ranks GTEPS (x 1 rank)" for p in args.ranks)
        + " |"
    )
    print("| ---: | ---: | ---: | ---: | ---: |" + " ---: |" * len(args.ranks))
    for scale in args.scales:
        if args.algorithm == "sssp":
            row = bench_scale_sssp(scale, args.roots)
        elif args.algorithm == "cc":
            row = bench_scale_cc(scale, args.roots)
        else:
            row = bench_scale(scale, args.roots, args.strategy)
        report["scales"].append(row)
        cells = []
        for p in args.ranks:
            mpi = bench_ranks(scale, args.roots, p, args.strategy, args.algorithm)
            if mpi["roots"] != row.get("roots"):
                raise SystemExit(f"{p} ranks chose other roots than 1 rank")
            mpi["ratio_to_one_rank"] = mpi["hmean_teps"] / row["numpy_hmean_teps"]
            report["ranks"].append(mpi)
            cells.append(f"{mpi['hmean_teps'] / 1e9:.4f} ({mpi['ratio_to_one_rank']:.2f}x)")
        print(
            f"| {scale} | {row['undirected_edges'] / 1e6:.1f} M | "
            f"{row['numpy_hmean_teps'] / 1e9:.4f} | {row['scipy_hmean_teps'] / 1e9:.4f} | "
            f"{row['ratio_numpy_to_scipy']:.2f} | " + " | ".join(cells) + " |",
            flush=True,
        )
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
