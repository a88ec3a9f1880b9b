"""Multi-GPU benchmark: strong and weak scaling of the distributed BFS (section 6.1), a rank a GPU.

Run once per GPU count, then compare:

    python benchmarks/bench_multi_gpu.py --json out/p1.json                 # 1 GPU (no MPI)
    mpirun -n 2 python benchmarks/bench_multi_gpu.py --json out/p2.json     # 2 GPUs
    python benchmarks/bench_multi_gpu.py --compare out/p1.json out/p2.json  # speedups

Graphs (made on the GPUs, each rank its share): ``kron24`` ... ``kron28`` (strong scaling: the
same graph at every GPU count), ``weak26`` (Kronecker of scale 26 + log2(GPUs): 2**26 vertices
per GPU), ``uniform25`` (uniform random), ``grid2d`` (4096 x 4096, thousands of levels: the per-
level cost), ``luxembourg`` (luxembourg_osm from ``$DISTBFS_DATA`` or ../shared/data).
``--strategies`` searches each graph once per strategy (e.g. ``hybrid direction_optimizing``),
built once. ``--compare`` also reads weak scaling off the Kronecker rows (scale s on the fewest
GPUs against s + log2(P) on P). Kronecker and uniform graphs are searched
from ``--roots`` Graph500 roots (default 64), grids from ``--grid-roots``; every search is
validated (Graph500 rules with BFS trees, outside the timing; ``--validate-roots K``: the first
K). Reported per graph and strategy: harmonic-mean Graph500 TEPS and the time of a search; from
one more search with phase timers, per level:
direction, frontier, edges expanded, items sent and sent to other ranks, bytes exchanged between
GPUs (top-down: the bins' remote items; bottom-up: the frontier bitmap all-gather, P (P - 1) ceil(n
/ P / 32) 4-byte words), the share of the edge frontier culled before the exchange (duplicates and
visited vertices), and the exchange's share of the level's time; the communicator's path (which
transport each operation took) and its byte counters. ``--compare`` prints GTEPS per GPU count, the
speedup over the fewest GPUs that ran the graph, and the issues' targets (``TARGETS``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any

GRAPHS: dict[str, tuple[str, dict[str, Any]]] = {
    "kron24": ("kronecker", {"scale": 24}),
    "kron26": ("kronecker", {"scale": 26}),
    "kron27": ("kronecker", {"scale": 27}),
    "kron28": ("kronecker", {"scale": 28}),
    "weak26": ("kronecker", {"scale_per_gpu": 26}),
    "uniform25": ("uniform", {"scale": 25}),
    "grid2d": ("grid2d", {"shape": (4096, 4096)}),
    "luxembourg": ("file", {"path": "luxembourg_osm.mtx.gz"}),
}
GRIDS = {"grid2d", "luxembourg"}  # searched from --grid-roots roots
DATA = Path(os.environ.get("DISTBFS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
TARGETS = [  # graph, direction, GPUs, speedup over one GPU, issue
    ("kron27", "top-down", 2, 1.9, "#22"),
    ("kron27", "direction-optimizing", 2, 1.6, "#22"),
    ("kron28", "top-down", 4, 3.5, "#22"),
    ("kron28", "direction-optimizing", 4, 3.0, "#22"),
]


def log2_floor(value: int) -> int:
    return max(value.bit_length() - 1, 0)


def make_communicator(kind: str, counts: str, backend: str) -> Any:
    """The job's communicator for ``backend`` (the cuda backend binds this rank's GPU first)."""
    from distbfs.api import resolve_backend
    from distbfs.runtime import get_communicator

    resolve_backend(backend)  # cuda: binds the GPU of this rank's node-local rank
    comm = get_communicator(kind, backend)
    if comm.kind == "nccl" and counts != comm.counts_via:
        from distbfs.comm.nccl import NCCLCommunicator

        comm = NCCLCommunicator(comm.host, counts=counts)
    return comm


def level_rows(levels: list[Any], item_bytes: int, n: int, ranks: int) -> list[dict[str, Any]]:
    """Per-level figures of one profiled search."""
    bitmap_bytes = ranks * (ranks - 1) * -(-n // ranks // 32) * 4
    rows = []
    for lv in levels:
        bottom_up = getattr(lv, "direction", "top_down") == "bottom_up"
        seconds = sum(lv.seconds.values())
        expanded = lv.edges_expanded
        rows.append(
            {
                "level": lv.level,
                "span": lv.span,
                "direction": getattr(lv, "direction", "top_down"),
                "frontier": lv.frontier,
                "edges_expanded": expanded,
                "items_sent": lv.items_sent,
                "items_sent_remote": lv.items_sent_remote,
                "bytes_exchanged": bitmap_bytes if bottom_up else lv.items_sent_remote * item_bytes,
                "culled_share": (expanded - lv.items_sent) / expanded if expanded else None,
                "exchange_share": lv.seconds.get("exchange", 0.0) / seconds if seconds else None,
                "ms": seconds * 1e3,
                "phases_ms": {k: v * 1e3 for k, v in lv.seconds.items()},
            }
        )
    return rows


class _NoPool:
    """Stands in for CuPy's memory pool on the numpy backend (dry runs)."""

    def free_all_blocks(self) -> None:
        pass

    def total_bytes(self) -> int:
        return 0


def graph_params(name: str, ranks: int, shrink: int) -> tuple[str, dict[str, Any]]:
    """(generator, parameters) of graph ``name`` at ``ranks`` GPUs, ``shrink`` scales smaller."""
    kind, params = GRAPHS[name]
    params = dict(params)
    if "scale_per_gpu" in params:
        params["scale"] = params.pop("scale_per_gpu") + log2_floor(ranks)
    if "scale" in params:
        params["scale"] = max(params["scale"] - shrink, 1)
    if "shape" in params:
        params["shape"] = tuple(max(side >> (shrink // 2), 2) for side in params["shape"])
    return kind, params


def bench_graph(
    name: str, comm: Any, backend: Any, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """Build graph ``name`` once, then benchmark it with each strategy of ``args.strategies``."""
    import distbfs
    from distbfs.roots import choose_roots

    on_gpu = backend.name == "cuda"
    if on_gpu:
        import cupy

        pool = cupy.get_default_memory_pool()
    else:
        pool = _NoPool()
    kind, params = graph_params(name, comm.size, args.shrink)
    pool.free_all_blocks()
    comm.barrier()
    started = time.perf_counter()
    if kind == "file":
        path = Path(params["path"])
        path = path if path.exists() else DATA / path
        graph = distbfs.Graph.from_file(path, backend=backend, comm=comm)
    else:
        graph = distbfs.Graph.generate(kind, backend=backend, comm=comm, **params)
    if on_gpu:
        cupy.cuda.Device().synchronize()
    build_seconds = comm.allreduce(time.perf_counter() - started, op="max")
    roots = choose_roots(graph.dist, comm, count=args.grid_roots if name in GRIDS else args.roots)
    base = {
        "graph": name,
        "kind": kind,
        "params": {k: list(v) if isinstance(v, tuple) else v for k, v in params.items()},
        "vertices": graph.dist.n,
        "undirected_edges": graph.dist.num_undirected_edges,
        "build_seconds": build_seconds,
    }
    rows = []
    for strategy in args.strategies:
        row = dict(base, **search_graph(graph, roots, strategy, comm, pool, args))
        rows.append(row)
    del graph
    pool.free_all_blocks()
    return rows


def search_graph(
    graph: Any,
    roots: list[int],
    strategy: str | None,
    comm: Any,
    pool: Any,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Graph500 searches from ``roots`` with ``strategy`` (the harness: a profiled warm-up,
    then one timed search per root), then one more counting the bytes the communicator moved."""
    import distbfs
    from distbfs.benchmark import run_searches
    from distbfs.engine import check_strategy

    dist = graph.dist
    validate = 0 if args.no_validate else (args.validate_roots or len(roots))
    series = run_searches(
        graph, roots, predecessors=args.predecessors, validate=validate, strategy=strategy
    )
    times, depths, stats, profile = series.times, series.depths, series.statistics, series.profile
    before = dict(getattr(comm, "stats", {}))
    distbfs.bfs(graph, roots[0], predecessors=args.predecessors, gather=False, strategy=strategy)
    after = dict(getattr(comm, "stats", {}))
    item_bytes = dist.column_indices.dtype.itemsize * (2 if args.predecessors else 1)
    levels = level_rows(profile.levels, item_bytes, dist.n, comm.size)
    total_ms = sum(row["ms"] for row in levels)
    exchange_ms = sum(row["phases_ms"].get("exchange", 0.0) for row in levels)
    expanded = sum(row["edges_expanded"] for row in levels if row["span"] == 1)
    sent = sum(row["items_sent"] for row in levels if row["span"] == 1)
    counted = after.get("bytes_sent", 0) - before.get("bytes_sent", 0)
    mean_time = sum(times) / len(times)
    return {
        "strategy": str(check_strategy(strategy, graph.backend)),
        "roots": len(roots),
        "validated": 0 if args.no_validate else min(len(roots), args.validate_roots or len(roots)),
        "hmean_teps": stats["harmonic_mean_TEPS"],
        "mean_ms": mean_time * 1e3,
        "depth_max": max(depths),
        "us_per_level": mean_time / (max(depths) + 1) * 1e6,
        "profile_ms": total_ms,
        "exchange_share": exchange_ms / total_ms if total_ms else None,
        "bytes_exchanged": sum(row["bytes_exchanged"] for row in levels),
        "bytes_counted_by_comm": int(comm.allreduce(counted)),
        "culled_share": (expanded - sent) / expanded if expanded else None,
        "edges_inspected": sum(getattr(lv, "edges_inspected", 0) for lv in profile.levels),
        "levels": levels,
        "peak_pool_bytes": int(comm.allreduce(pool.total_bytes(), op="max")),
        "statistics": stats,
    }


def print_levels(row: dict[str, Any]) -> None:
    print(f"  per level, one {row['strategy']} search of {row['graph']} (phase timers on):")
    print("  level  dir  frontier  edges expanded  sent remote  MB exchanged  culled  exchange  ms")
    for lv in row["levels"]:
        culled = "-" if lv["culled_share"] is None else f"{lv['culled_share']:.1%}"
        share = "-" if lv["exchange_share"] is None else f"{lv['exchange_share']:.1%}"
        direction = "BU" if lv["direction"] == "bottom_up" else "TD"
        print(
            f"  {lv['level']:>5}  {direction:>3}  {lv['frontier']:>8,}  {lv['edges_expanded']:>14,}"
            f"  {lv['items_sent_remote']:>11,}  {lv['bytes_exchanged'] / 1e6:>12.2f}"
            f"  {culled:>6}  {share:>8}  {lv['ms']:.3f}"
        )


def print_row(row: dict[str, Any], ranks: int) -> None:
    share = row["exchange_share"]
    culled = row["culled_share"]
    print(
        f"| {row['graph']} | {row['strategy']} | {row['vertices']:,} | "
        f"{row['undirected_edges']:,} | {ranks} | {row['hmean_teps'] / 1e9:.3f} | "
        f"{row['mean_ms']:.2f} | {row['depth_max']} | "
        f"{'-' if share is None else f'{share:.1%}'} | {row['bytes_exchanged'] / 1e6:.1f} | "
        f"{'-' if culled is None else f'{culled:.1%}'} | {row['build_seconds']:.1f} |",
        flush=True,
    )


def run(args: argparse.Namespace) -> int:
    comm = make_communicator(args.comm, args.counts, args.backend)
    try:
        return run_on(comm, args)
    except Exception:  # one rank's failure must not leave the others waiting in NCCL
        traceback.print_exc()
        sys.stderr.flush()
        comm.abort(1)
        raise


def run_on(comm: Any, args: argparse.Namespace) -> int:
    from distbfs.api import resolve_backend

    backend = resolve_backend(args.backend)
    if backend.name == "cuda":
        import cupy

        backend.peer_levels = args.peer_levels
        if hasattr(comm, "peer_copies"):
            comm.peer_copies = args.peer_copies

        device = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)["name"]
        device = device.decode() if isinstance(device, bytes) else str(device)
    else:
        device = "host (numpy backend)"
    if comm.rank == 0:
        print(
            f"{comm.size} GPU(s) ({device}), comm {comm.kind}, date {time.strftime('%Y-%m-%d')}, "
            f"command: {' '.join(sys.argv)}",
            flush=True,
        )
        print(
            "| graph | strategy | vertices | edges | GPUs | GTEPS (hmean) | ms (mean) | depth | "
            "exchange share | MB exchanged | culled before exchange | build s |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    rows: list[dict[str, Any]] = []

    def write_json() -> None:  # after every graph: a run cut short keeps what it measured
        if comm.rank == 0 and args.json:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            document = {
                "ranks": comm.size,
                "device": device,
                "comm": comm.describe() if hasattr(comm, "describe") else {"kind": comm.kind},
                "predecessors": args.predecessors,
                "strategies": args.strategies,
                "backend": args.backend,
                "shrink": args.shrink,
                "peer_levels": getattr(backend, "peer_levels", False),
                "peer_copies": getattr(comm, "peer_copies", False),
                "rows": rows,
            }
            args.json.write_text(json.dumps(document, indent=1))

    for name in args.graphs:
        for row in bench_graph(name, comm, backend, args):
            rows.append(row)
            write_json()
            if comm.rank == 0:
                print_row(row, comm.size)
                if args.levels:
                    print_levels(row)
    if comm.rank == 0:
        describe = comm.describe() if hasattr(comm, "describe") else {"kind": comm.kind}
        print(f"communicator: {json.dumps(describe)}")
        if args.json:
            print(f"wrote {args.json}")
    return 0


def compare(paths: list[Path]) -> int:
    """Strong and weak scaling tables over runs at different GPU counts (no GPU needed)."""
    runs = sorted((json.loads(p.read_text()) for p in paths), key=lambda d: d["ranks"])
    rows = [dict(row, ranks=run_["ranks"]) for run_ in runs for row in run_["rows"]]
    first: dict[tuple[str, str], dict[str, Any]] = {}  # (graph, strategy) at the fewest GPUs
    for row in rows:
        first.setdefault((row["graph"], row["strategy"]), row)
    print("strong scaling (the same graph; speedup over the fewest GPUs that ran it):")
    print("| graph | strategy | GPUs | GTEPS (hmean) | speedup | over GPUs | efficiency |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        if row["graph"].startswith("weak"):
            continue
        base = first[(row["graph"], row["strategy"])]
        speedup = row["hmean_teps"] / base["hmean_teps"]
        efficiency = speedup / (row["ranks"] / base["ranks"])
        print(
            f"| {row['graph']} | {row['strategy']} | {row['ranks']} | "
            f"{row['hmean_teps'] / 1e9:.3f} | {speedup:.2f} | {base['ranks']} | {efficiency:.0%} |"
        )
    print()
    print("weak scaling (Kronecker, the same scale per GPU; over the fewest GPUs):")
    print("| scale per GPU | strategy | GPUs | scale | GTEPS (hmean) | efficiency |")
    print("| ---: | --- | ---: | ---: | ---: | ---: |")
    fewest = runs[0]["ranks"]
    kron = {
        (row["params"]["scale"], row["strategy"]): row
        for row in rows
        if row["kind"] == "kronecker" and row["ranks"] == fewest
    }
    seen = set()
    for row in rows:
        factor = row["ranks"] // fewest
        if row["kind"] != "kronecker" or factor < 2 or factor & (factor - 1):
            continue  # the scale grows by log2(GPUs): powers of two only
        key = (row["ranks"], row["params"]["scale"], row["strategy"])
        base = kron.get((row["params"]["scale"] - log2_floor(factor), row["strategy"]))
        if base is None or key in seen:
            continue
        seen.add(key)
        efficiency = row["hmean_teps"] / base["hmean_teps"] / factor
        print(
            f"| {base['params']['scale']} | {row['strategy']} | {row['ranks']} | "
            f"{row['params']['scale']} | {row['hmean_teps'] / 1e9:.3f} | {efficiency:.0%} |"
        )
    print()
    for graph, direction, gpus, wanted, issue in TARGETS:
        chosen = [
            r
            for r in rows
            if r["graph"] == graph
            and (r["strategy"] == "direction_optimizing") == (direction == "direction-optimizing")
        ]
        one = [r for r in chosen if r["ranks"] == 1]
        many = [r for r in chosen if r["ranks"] == gpus]
        label = f"target ({issue}): {graph} {direction} on {gpus} GPUs >= {wanted}x one GPU:"
        if one and many:
            speedup = max(r["hmean_teps"] for r in many) / max(r["hmean_teps"] for r in one)
            print(f"{label} {speedup:.2f}x, {'met' if speedup >= wanted else 'NOT met'}")
        elif many or one:
            missing = "one GPU" if many else f"{gpus} GPUs"
            print(f"{label} not measured (no {missing} run of it)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", nargs="+", default=list(GRAPHS), choices=list(GRAPHS))
    parser.add_argument("--roots", type=int, default=64, help="roots of Kronecker/uniform graphs")
    parser.add_argument("--grid-roots", type=int, default=4, help="roots of grid graphs")
    parser.add_argument("--comm", default="auto", choices=("auto", "nccl", "mpi"))
    parser.add_argument(
        "--counts", default="host", choices=("host", "nccl"), help="NCCL: how bin counts travel"
    )
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=[None],
        help="level strategies, each searched on the same graph (default: the loop's)",
    )
    parser.add_argument(
        "--backend", default="cuda", choices=("cuda", "numpy"), help="numpy: a dry run on CPUs"
    )
    parser.add_argument(
        "--shrink", type=int, default=0, help="make every graph 2**K times smaller (dry runs)"
    )
    parser.add_argument(
        "--no-predecessors",
        dest="predecessors",
        action="store_false",
        help="distances only (default: BFS trees, as Graph500)",
    )
    parser.add_argument("--no-validate", action="store_true")
    parser.add_argument(
        "--no-peer-levels",
        dest="peer_levels",
        action="store_false",
        help="CUDA, several ranks: small frontiers as striped levels (not fused over peer memory)",
    )
    parser.add_argument(
        "--no-peer-copies",
        dest="peer_copies",
        action="store_false",
        help="GPU communicators: bins moved by the transport (NCCL, MPI), not copied into the "
        "peers' mapped memory",
    )
    parser.add_argument(
        "--validate-roots", type=int, default=None, help="validate the first K searches (all)"
    )
    parser.add_argument("--levels", action="store_true", help="print the per-level tables")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--compare", nargs="+", type=Path, default=None, metavar="JSON")
    args = parser.parse_args(argv)
    if args.compare:
        return compare(args.compare)
    return run(args)


if __name__ == "__main__":
    raise SystemExit(main())
