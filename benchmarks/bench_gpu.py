"""Single-GPU benchmark of the CUDA backend, with a cuSPARSE SpMV BFS baseline in the same run.

Graph500-style: every graph is made on the device; Kronecker and uniform graphs are searched from
64 roots of degree >= 1 (distbfs.roots.choose_roots), grids and the road network from vertex 0
(a corner); every search is validated (Graph500 rules and exact levels, outside the timing).
Reported per graph: harmonic-mean Graph500 TEPS, mean time, levels and microseconds per level,
per-phase time of one profiled search, redundant expansion factor (items sent to contraction per
vertex discovered), peak device memory of one search with predecessors against the CSR's bytes
(the bytes held at once by live arrays, the graph and its edge queue included, validation
excluded; CuPy's pool may cache more, freed blocks it hands back and retries with before an
allocation would fail, so they never decide what fits), and the SpMV baseline
(frontier vector times adjacency matrix through ``cupyx.scipy.sparse``, one host read per level)
on the first roots, as a ratio. ``--strategies`` runs each graph once per strategy (built once),
e.g. ``hybrid direction_optimizing``; each row also gives the edges inspected in one search
(top-down: expanded; bottom-up: in-neighbour slots tested) against the stored edges, and the
per-level directions.

Usage: python benchmarks/bench_gpu.py [--graphs kron20 kron22 ...] [--roots 64]
       [--strategies hybrid direction_optimizing] [--json FILE]
"""

from __future__ import annotations

import argparse
import collections
import gc
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import cupy
import cupyx.scipy.sparse as cusparse
from cupy.cuda.memory_hook import MemoryHook

import distbfs
from distbfs.benchmark import run_searches
from distbfs.engine import check_strategy
from distbfs.roots import choose_roots
from distbfs.stats import graph500_statistics

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("DISTBFS_DATA", REPO.parent / "shared" / "data"))

GRAPHS = {
    "kron20": ("kronecker", {"scale": 20}),
    "kron22": ("kronecker", {"scale": 22}),
    "kron24": ("kronecker", {"scale": 24}),
    "kron26": ("kronecker", {"scale": 26}),
    "kron27": ("kronecker", {"scale": 27}),
    "uniform24": ("uniform", {"scale": 24}),
    "grid2d": ("grid2d", {"shape": (4096, 4096)}),
    "grid3d": ("grid3d", {"shape": (300, 300, 300)}),
    "luxembourg": ("file", {"path": "luxembourg_osm.mtx.gz"}),
}
SINGLE_SOURCE = {"grid2d", "grid3d", "luxembourg"}  # searched from vertex 0, repeated


class PeakHook(MemoryHook):
    """Live bytes of pool allocations, their peak, and at the peak the live bytes per site (the
    innermost distbfs line of the allocation's stack)."""

    name = "PeakHook"

    def __init__(self) -> None:
        self.live: dict[int, tuple[int, str]] = {}
        self.bytes = self.peak = 0
        self.at_peak: dict[str, int] = {}

    def malloc_postprocess(self, **kwargs: Any) -> None:
        frames = [
            f
            for f in traceback.extract_stack()[:-1]
            if "distbfs" in f.filename and f.name != "_allocate"
        ]
        site = f"{frames[-1].filename.split('distbfs')[-1]}:{frames[-1].lineno}" if frames else "?"
        self.live[kwargs["pmem_id"]] = (kwargs["mem_size"], site)
        self.bytes += kwargs["mem_size"]
        if self.bytes > self.peak:
            self.peak = self.bytes
            self.at_peak = collections.Counter()
            for size, where in self.live.values():
                self.at_peak[where] += size

    def free_postprocess(self, **kwargs: Any) -> None:
        size, _ = self.live.pop(kwargs["pmem_id"], (0, ""))
        self.bytes -= size


def make_graph(name: str) -> distbfs.Graph:
    kind, params = GRAPHS[name]
    if kind == "file":
        path = Path(params["path"])
        path = path if path.exists() else DATA / path
        return distbfs.Graph.from_file(path, backend="cuda")
    return distbfs.Graph.generate(kind, backend="cuda", **params)


def spmv_bfs(matrix: cusparse.csr_matrix, root: int) -> cupy.ndarray:
    """Level-synchronous BFS as repeated SpMV: next = (A x > 0) & unvisited (A symmetric)."""
    n = matrix.shape[0]
    dist = cupy.full(n, -1, dtype=cupy.int32)
    dist[root] = 0
    x = cupy.zeros(n, dtype=cupy.float32)
    x[root] = 1
    level = 0
    while True:
        new = (matrix @ x > 0) & (dist < 0)
        level += 1
        if not bool(new.any()):  # one host read per level
            return dist
        dist[new] = level
        x = new.astype(cupy.float32)


def timed(fn, *args):
    cupy.cuda.Device().synchronize()
    start = time.perf_counter()
    out = fn(*args)
    cupy.cuda.Device().synchronize()
    return out, time.perf_counter() - start


def bench_graph(name: str, args: argparse.Namespace) -> list[dict]:
    """Build graph ``name`` once; one row per strategy of ``args.strategies``."""
    pool = cupy.get_default_memory_pool()
    pool.free_all_blocks()
    started = time.perf_counter()
    graph = make_graph(name)
    cupy.cuda.Device().synchronize()
    build_seconds = time.perf_counter() - started
    dist = graph.dist
    pool.free_all_blocks()  # what is held from here on: the graph and the searches' queues
    if name in SINGLE_SOURCE:
        roots = [0] * args.repeat
    else:
        roots = choose_roots(dist, graph.comm, args.roots)
    rows = []
    for strategy in args.strategies:
        row = {
            "graph": name,
            "vertices": dist.n,
            "undirected_edges": dist.num_undirected_edges,
            "build_seconds": build_seconds,
            **search_graph(graph, roots, strategy, args),
        }
        rows.append(row)
    if args.spmv_roots:
        spmv_roots = roots[: 1 if name in SINGLE_SOURCE else args.spmv_roots]
        baseline = spmv_baseline(graph, spmv_roots, name)
        for row in rows:
            row.update(baseline)
            if "spmv_hmean_teps" in baseline:
                row["ratio_to_spmv"] = row["hmean_teps"] / baseline["spmv_hmean_teps"]
    del graph, dist
    pool.free_all_blocks()
    return rows


def search_graph(graph: distbfs.Graph, roots: list, strategy: str | None, args) -> dict:
    """Graph500 searches from ``roots`` with ``strategy`` (the harness: a profiled warm-up, then
    one timed search per root, the first validated); peak memory of one more."""
    pool = cupy.get_default_memory_pool()
    dist = graph.dist
    series = run_searches(
        graph, roots, predecessors=True, validate=args.validate_roots, strategy=strategy
    )
    times, phases_profile = series.times, series.profile.levels
    levels = [depth + 1 for depth in series.depths]
    stats = series.statistics
    del series  # the peak of one search alone, with predecessors, validation excluded
    gc.collect()  # as CuPy does before it gives up an allocation
    pool.free_all_blocks()
    held = pool.used_bytes()  # the graph and its edge queue
    hook = PeakHook()
    with hook:
        distbfs.bfs(graph, roots[0], predecessors=True, gather=False, strategy=strategy)
    peak = held + hook.peak
    phases: dict[str, float] = {}
    for row in phases_profile:
        for phase, seconds in row.seconds.items():
            phases[phase] = phases.get(phase, 0.0) + seconds
    sent = sum(row.items_sent for row in phases_profile if row.span == 1)
    discovered = sum(row.discovered for row in phases_profile if row.span == 1)
    mean_time = sum(times) / len(times)
    return {
        "strategy": str(check_strategy(strategy, graph.backend)),
        "roots": len(roots),
        "validated": min(len(roots), args.validate_roots),
        "hmean_teps": stats["harmonic_mean_TEPS"],
        "mean_ms": mean_time * 1e3,
        "levels": levels[0],
        "us_per_level": mean_time / levels[0] * 1e6,
        "phases_ms": {k: v * 1e3 for k, v in sorted(phases.items())},
        "redundant_expansion": sent / discovered if discovered else None,
        "per_level": [
            {
                "level": row.level,
                "span": row.span,
                "direction": row.direction,
                "frontier": row.frontier,
                "edges_inspected": row.edges_inspected,
                "ms": sum(row.seconds.values()) * 1e3,
            }
            for row in phases_profile
        ],
        "edges_inspected": sum(row.edges_inspected for row in phases_profile),
        "peak_bytes": peak,
        "held_bytes": held,
        "live_at_peak": dict(sorted(hook.at_peak.items(), key=lambda kv: -kv[1])[:8]),
        "pool_bytes": pool.total_bytes(),
        "csr_bytes": dist.nbytes(),
        "memory_ratio": peak / dist.nbytes(),
    }


def spmv_baseline(graph: distbfs.Graph, roots: list, name: str) -> dict:
    """The cuSPARSE SpMV BFS from ``roots`` (distances checked against distbfs's)."""
    dist = graph.dist
    try:
        matrix = cusparse.csr_matrix(
            (
                cupy.ones(dist.num_local_edges, dtype=cupy.float32),
                dist.column_indices,
                dist.row_offsets,
            ),
            shape=(dist.n, dist.n),
        )
        spmv_times, spmv_edges = [], []
        timed(spmv_bfs, matrix, roots[0])  # warm-up: cuSPARSE set-up, kernel loads
        for root in roots:
            labels, seconds = timed(spmv_bfs, matrix, root)
            ours = distbfs.bfs(graph, root, gather=False)
            if not bool(cupy.array_equal(labels, ours.local_distances)):
                raise SystemExit(f"{name}: SpMV BFS and distbfs disagree from root {root}")
            spmv_times.append(seconds)
            spmv_edges.append(ours.edges_traversed)
        del matrix
    except (cupy.cuda.memory.OutOfMemoryError, ValueError, TypeError) as exc:
        return {"spmv_error": f"{type(exc).__name__}: {exc}"}
    spmv = graph500_statistics(spmv_times, spmv_edges)["harmonic_mean_TEPS"]
    return {"spmv_hmean_teps": spmv, "spmv_mean_ms": sum(spmv_times) / len(spmv_times) * 1e3}


def print_row(row: dict) -> None:
    spmv = row.get("spmv_hmean_teps")
    spmv_cells = "- | -" if spmv is None else f"{spmv / 1e9:.2f} | {row['ratio_to_spmv']:.1f}"
    redundant = row["redundant_expansion"]
    stored = 2 * row["undirected_edges"]
    print(
        f"| {row['graph']} | {row['strategy']} | {row['undirected_edges'] / 1e6:.1f} M | "
        f"{row['hmean_teps'] / 1e9:.2f} | {row['mean_ms']:.2f} | {row['levels']} | "
        f"{row['us_per_level']:.1f} | {'-' if redundant is None else f'{redundant:.3f}'} | "
        f"{row['edges_inspected'] / stored if stored else 0:.3f} | "
        f"{row['memory_ratio']:.2f} | {spmv_cells} |",
        flush=True,
    )
    print(f"    phases (ms, one search): {row['phases_ms']}", flush=True)
    levels = " ".join(
        f"{lv['level']}{'BU' if lv['direction'] == 'bottom_up' else 'TD'}"
        f"{'x' + str(lv['span']) if lv['span'] > 1 else ''}:{lv['edges_inspected']}"
        for lv in row["per_level"]
    )
    print(f"    levels (direction: edges inspected): {levels}", flush=True)
    if "spmv_error" in row:
        print(f"    SpMV baseline failed: {row['spmv_error']}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS), choices=list(GRAPHS))
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--repeat", type=int, default=5, help="searches of single-source graphs")
    parser.add_argument("--validate-roots", type=int, default=10**9, help="validate the first K")
    parser.add_argument("--spmv-roots", type=int, default=8)
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=[None],
        help="level strategies, each searched on the same graph (default: the loop's)",
    )
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    device = cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"device: {device}; date {time.strftime('%Y-%m-%d')}; command: {' '.join(sys.argv)}")
    header = (
        "| graph | strategy | edges | GTEPS (hmean) | ms (mean) | levels | us/level | redundant "
        "expansion | edges inspected / edges | peak mem / CSR | SpMV GTEPS | x SpMV |"
    )
    print(header)
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows = []
    for name in args.graphs:
        for row in bench_graph(name, args):
            rows.append(row)
            print_row(row)
    if args.json:
        args.json.write_text(json.dumps({"device": device, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
