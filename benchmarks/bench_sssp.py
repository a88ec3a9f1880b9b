"""Shortest paths against GAP: distbfs's delta-stepping SSSP and GAP's ``sssp`` (the GAP
Benchmark Suite, Beamer et al.) on the identical graph and weights, in one call.

Graphs (``--graphs``): ``kronN`` (Graph500 Kronecker of scale N, any N), ``grid2d``
(``--grid-shape``, 4096x4096 by default) and ``luxembourg`` (``luxembourg_osm.mtx.gz`` from
``$DISTBFS_DATA``, else ``../shared/data``). Every graph is weighted as GAP's SSSP benchmark
weighs them, integers uniform in 1..255: the generated graphs by ``--weights uniform:1:255``, the
road graph (unweighted as published) by the generator's own weight function applied to its edges
(``distbfs.generators.weights.edge_weights``, same seed), so each undirected edge gets the weight
a generated edge between the same endpoints would. Each graph is saved natively, converted to
GAP's ``.wsg`` (``benchmarks/gap.py``) and searched by both tools.

distbfs: ``distbfs.benchmark.run_path_searches`` (Graph500 kernel 3 style: a warm-up, one timed
search per root with the shortest-path tree unless ``--no-predecessors``, the first
``--validate-roots`` validated against Graph500's SSSP rules): 64 roots of
``distbfs.roots.choose_roots`` on Kronecker graphs, vertex 0 repeated on the grid and the road
graph (GAP's baseline figures searched those from vertex 0). Its delta: chosen from the graph
(``--delta`` overrides).

GAP: ``sssp -f G.wsg -r ROOT -d DELTA -n TRIALS -a`` under ``OMP_NUM_THREADS`` for each of
``--gap-threads`` (16 and 1 by default). GAP takes one source per process (``-r``), not a list,
so with ``--gap-sources same`` (default) every distinct root is its own process on the same roots
as distbfs (``--gap-warmup`` untimed trials first in each, as distbfs's warm-up search): the first
``--gap-roots`` roots of distbfs's list (all by default; ``--gap-roots-serial``, 4, at one
thread), and the ratio is taken against distbfs's mean over those same roots. GAP's times are its
"Trial Time" lines: the kernel alone, without the graph's read. ``--gap-sources own`` runs one
process whose trials take GAP's own random sources (its fixed-seed picker), compared with distbfs's
mean over all its roots. Two deltas: the one of GAP's published setup (2 on Kronecker, 50 on the
grid and the road graph) and distbfs's own delta rounded to an integer (GAP's ``-d`` is an int32
like its weights); one run when they agree. Checks: the vertex and edge counts GAP prints equal
distbfs's, and (same sources) the vertices GAP's last trial reaches equal distbfs's search from
that root; ``--gap-verify`` also runs GAP's own verifier (a serial Dijkstra) on the first root's
trials.

Output: one table, a row per GAP setting (graph, distbfs's mean ms and harmonic-mean GTEPS,
Graph500 TEPS: undirected edges of the searched component / time; GAP's mean ms and GTEPS on the
same roots; GAP ms / distbfs ms, above 1 where distbfs is faster); ``--json`` writes every time.

Usage (one GPU; the numpy backend for a dry run on small scales)::

    python benchmarks/bench_sssp.py [--graphs kron20 kron22 kron24 kron26 grid2d luxembourg] \
        [--backend auto|numpy|cuda] [--roots 64] [--validate-roots 4] [--gap-dir .gapbs] \
        [--gap-threads 16 1] [--gap-roots N] [--gap-roots-serial 4] [--gap-sources same|own] \
        [--gap-verify] [--no-gap] [--json F]
    python benchmarks/bench_sssp.py --backend numpy --graphs kron12 grid2d --grid-shape 64x64 \
        --roots 4 --gap-dir .gapbs --gap-threads 2 --gap-verify
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import distbfs
from distbfs.arrays import as_host
from distbfs.benchmark import PathSeries, run_path_searches
from distbfs.generators import DEFAULT_SEED
from distbfs.generators.weights import edge_weights, parse_weight_spec
from distbfs.roots import choose_roots
from distbfs.stats import graph500_statistics

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gap import GapError, GapRun, gap_binary, run_gap_detailed, write_gap_graph

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("DISTBFS_DATA", REPO.parent / "shared" / "data"))
DEFAULT_GRAPHS = ("kron20", "kron22", "kron24", "kron26", "grid2d", "luxembourg")
WEIGHTS = "uniform:1:255"
"""GAP's SSSP weights: integers uniform in 1..255."""
GAP_SETUP_DELTA = {"kronecker": 2, "grid2d": 50, "luxembourg": 50}
"""The delta of GAP's published setup per kind of graph."""
ROAD_FILE = "luxembourg_osm.mtx.gz"


@dataclass(frozen=True)
class Case:
    """One graph of the benchmark: its name, kind and size."""

    name: str
    kind: str  # "kronecker", "grid2d" or "luxembourg"
    scale: int | None = None
    shape: tuple[int, int] | None = None


def parse_case(name: str, grid_shape: tuple[int, int]) -> Case:
    match = re.fullmatch(r"kron(\d+)", name)
    if match:
        return Case(name, "kronecker", scale=int(match.group(1)))
    if name in ("grid2d", "luxembourg"):
        return Case(name, name, shape=grid_shape if name == "grid2d" else None)
    raise SystemExit(f"bench_sssp.py: unknown graph {name!r} (kronN, grid2d or luxembourg)")


def parse_shape(text: str) -> tuple[int, int]:
    parts = text.lower().split("x")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise argparse.ArgumentTypeError(f"expected NXxNY, e.g. 4096x4096, got {text!r}")
    return int(parts[0]), int(parts[1])


# -- the graphs ---------------------------------------------------------------------------------


def make_graph(case: Case, backend: str, data: Path) -> distbfs.Graph:
    """The weighted graph of ``case`` on ``backend``."""
    if case.kind == "kronecker":
        return distbfs.Graph.generate(
            "kronecker", scale=case.scale, weights=WEIGHTS, backend=backend
        )
    if case.kind == "grid2d":
        return distbfs.Graph.generate("grid2d", shape=case.shape, weights=WEIGHTS, backend=backend)
    path = data / ROAD_FILE
    if not path.is_file():
        raise SystemExit(f"bench_sssp.py: {path} not found (set DISTBFS_DATA)")
    return with_generated_weights(distbfs.Graph.from_file(path, backend=backend))


def with_generated_weights(graph: distbfs.Graph) -> distbfs.Graph:
    """``graph`` (unweighted) with every edge weighted as the generator weighs a generated
    edge between the same endpoints (``uniform:1:255``, the default seed): a function of the
    undirected edge, so both directions get one weight. Each rank weighs its own rows."""
    dist = graph.dist
    src = np.repeat(as_host(dist.owned_vertices()), as_host(dist.local_degrees()))
    dst = as_host(dist.column_indices).astype(np.int64)
    weights = edge_weights(np, src, dst, parse_weight_spec(WEIGHTS), DEFAULT_SEED)
    return distbfs.Graph.from_edges(
        src,
        dst,
        weights=weights,
        num_vertices=dist.n,
        directed=dist.directed,
        backend=graph.backend,
        comm=graph.comm,
    )


def search_roots(case: Case, graph: distbfs.Graph, count: int) -> list[int]:
    """Graph500 roots on Kronecker graphs; vertex 0 (a corner of the grid) ``count`` times on
    the others, as GAP's baseline searched them."""
    if case.kind == "kronecker":
        return choose_roots(graph.dist, graph.comm, count)
    return [0] * count


def device_name(graph: distbfs.Graph) -> str:
    if graph.backend.name != "cuda":
        return platform.processor() or platform.machine()
    import cupy

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])


# -- distbfs ------------------------------------------------------------------------------------


def run_distbfs(
    graph: distbfs.Graph, roots: list[int], args: argparse.Namespace
) -> tuple[PathSeries, list[int]]:
    """distbfs's series over ``roots`` and the number of vertices each search reached."""
    reached: list[int] = []

    def count(result: Any) -> None:
        xp = graph.backend.xp
        local = int(xp.isfinite(result.local_distances).sum())
        reached.append(int(graph.comm.allreduce(local, op="sum")))

    series = run_path_searches(
        graph,
        roots,
        delta=args.delta,
        predecessors=not args.no_predecessors,
        validate=args.validate_roots,
        after_each=count,
    )
    return series, reached


def synchronize_device(graph: distbfs.Graph) -> None:
    """Wait for the graph's device work (a no-op on numpy)."""
    if graph.backend.name == "cuda":
        import cupy

        cupy.cuda.Device().synchronize()


def peak_memory(graph: distbfs.Graph, root: int, args: argparse.Namespace) -> dict[str, Any]:
    """Device bytes a search (its tree included) holds at its peak, with the graph and what its
    plan keeps (the CSR with its weights, rows by weight), against the CSR's bytes
    (``bench_gpu.PeakHook``). Call it while no earlier result is alive."""
    import cupy
    from bench_gpu import PeakHook

    pool = cupy.get_default_memory_pool()
    gc.collect()
    pool.free_all_blocks()
    held = pool.used_bytes()
    hook = PeakHook()
    with hook:
        distbfs.sssp(
            graph, root, predecessors=not args.no_predecessors, gather=False, delta=args.delta
        )
    csr = graph.dist.nbytes()
    return {
        "peak_bytes": held + hook.peak,
        "csr_bytes": csr,
        "peak_over_csr": (held + hook.peak) / csr,
        "live_at_peak": dict(sorted(hook.at_peak.items(), key=lambda kv: -kv[1])[:8]),
    }


# -- GAP ----------------------------------------------------------------------------------------


def root_groups(roots: list[int]) -> list[tuple[int, int]]:
    """(root, times) of the runs of equal consecutive roots: one GAP process each."""
    groups: list[tuple[int, int]] = []
    for root in roots:
        if groups and groups[-1][0] == root:
            groups[-1] = (root, groups[-1][1] + 1)
        else:
            groups.append((root, 1))
    return groups


def run_gap_setting(
    binary: Path,
    wsg: Path,
    case_graph: dict[str, Any],
    ours: dict[str, Any],
    delta: int,
    threads: int,
    args: argparse.Namespace,
) -> dict[str, Any]:
    """GAP's sssp at one (delta, threads) on the roots of the setting; checked against distbfs's
    graph (vertex and edge counts) and searches (vertices reached)."""
    limit = args.gap_roots_serial if threads == 1 else args.gap_roots
    count = len(ours["roots"]) if limit is None else min(limit, len(ours["roots"]))
    warm, runs, times = args.gap_warmup, [], []
    if args.gap_sources == "own":
        plan = [(None, count)]
    else:
        plan = root_groups(ours["roots"][:count])
    for i, (root, trials) in enumerate(plan):
        run = run_gap_detailed(
            binary,
            wsg,
            source=root,
            delta=delta,
            trials=warm + trials,
            threads=threads,
            verify=args.gap_verify and i == 0,
            analysis=True,
            timeout=args.gap_timeout,
        )
        check_gap_run(run, case_graph, ours, root)
        runs.append(run)
        times += run.times[warm:]
    setting = {
        "delta": delta,
        "threads": threads,
        "sources": args.gap_sources,
        "warmup_trials": warm,
        "times": times,
        "mean_ms": 1e3 * sum(times) / len(times),
        "read_seconds": [run.read_seconds for run in runs],
        "verified": [v for run in runs for v in run.verified],
        "runs": [run.document() for run in runs],
    }
    if args.gap_sources == "same":
        nedges = ours["nedges"][:count]
        setting["roots"] = ours["roots"][:count]
        setting["hmean_gteps"] = graph500_statistics(times, nedges)["harmonic_mean_TEPS"] / 1e9
        setting["distbfs_mean_ms"] = 1e3 * float(np.mean(ours["times"][:count]))
    else:
        setting["hmean_gteps"] = None  # GAP's own sources: their components are not known here
        setting["distbfs_mean_ms"] = 1e3 * float(np.mean(ours["times"]))
    setting["ratio"] = setting["mean_ms"] / setting["distbfs_mean_ms"]
    return setting


def check_gap_run(
    run: GapRun, graph: dict[str, Any], ours: dict[str, Any], root: int | None
) -> None:
    """GAP read the graph distbfs searched, and reached what distbfs reached from ``root``."""
    if (run.nodes, run.edges) != (graph["vertices"], graph["undirected_edges"]):
        raise GapError(
            f"GAP read {run.nodes} nodes and {run.edges} edges, distbfs has "
            f"{graph['vertices']} and {graph['undirected_edges']}\n{run.output}"
        )
    if root is not None and run.reached is not None:
        expected = ours["reached"][ours["roots"].index(root)]
        if run.reached != expected:
            raise GapError(
                f"root {root}: GAP reached {run.reached} vertices, distbfs {expected}\n{run.output}"
            )


def gap_deltas(case: Case, distbfs_delta: float) -> list[dict[str, Any]]:
    """GAP's deltas: its published setup's, and distbfs's rounded (one entry when equal)."""
    setup = GAP_SETUP_DELTA[case.kind]
    ours = max(1, round(distbfs_delta))
    if ours == setup:
        return [{"delta": setup, "from": ["gap_setup", "distbfs"]}]
    return [{"delta": setup, "from": ["gap_setup"]}, {"delta": ours, "from": ["distbfs"]}]


# -- one graph ----------------------------------------------------------------------------------


def bench_graph(case: Case, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    say(f"== {case.name}: building")
    t0 = time.perf_counter()
    graph = make_graph(case, args.backend, args.data)
    build = time.perf_counter() - t0
    if graph.comm.size > 1:  # the files and GAP's runs are one process's
        raise SystemExit("bench_sssp.py: run it as one process (one GPU, or numpy), not under MPI")
    doc: dict[str, Any] = {
        "graph": case.name,
        "kind": case.kind,
        "scale": case.scale,
        "shape": case.shape,
        "weights": WEIGHTS,
        "vertices": graph.num_vertices,
        "undirected_edges": graph.num_undirected_edges,
        "backend": graph.backend.name,
        "device": device_name(graph),
        "build_seconds": build,
    }
    wsg = work / f"{case.name}.wsg"
    if not args.no_gap:
        t0 = time.perf_counter()
        native = work / case.name
        graph.save(native)
        doc["gap_file"] = write_gap_graph(native, wsg)
        if not args.keep:
            shutil.rmtree(native)
        doc["convert_seconds"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph.path_plan(args.delta)  # per graph, untimed by the searches (rows by weight, dense)
    synchronize_device(graph)
    doc["plan_seconds"] = time.perf_counter() - t0
    roots = search_roots(case, graph, args.roots)
    say(f"   distbfs: {len(roots)} searches (plan {doc['plan_seconds']:.3f} s)")
    # the peak before the series: its profiled result (distances, tree, vertex ids) would
    # count as held by the graph
    memory = peak_memory(graph, roots[0], args) if graph.backend.name == "cuda" else {}
    series, reached = run_distbfs(graph, roots, args)
    stats = series.statistics
    doc["distbfs"] = {
        **series.document(),
        "reached": reached,
        "predecessors": not args.no_predecessors,
        "mean_ms": 1e3 * stats["mean_time"],
        "hmean_gteps": stats["harmonic_mean_TEPS"] / 1e9,
        **memory,
    }
    del graph, series
    gc.collect()  # the graph's memory is free before GAP reads its copy
    doc["gap"] = [] if args.no_gap else gap_settings(case, doc, wsg, args)
    if not args.keep:
        wsg.unlink(missing_ok=True)
    return doc


def gap_settings(case: Case, doc: dict[str, Any], wsg: Path, args: argparse.Namespace) -> list:
    binary = gap_binary(args.gap_dir, "sssp")
    ours = doc["distbfs"]
    settings = []
    for delta in gap_deltas(case, ours["delta"]):
        for threads in args.gap_threads:
            say(f"   GAP sssp: delta {delta['delta']}, {threads} threads")
            setting = run_gap_setting(binary, wsg, doc, ours, delta["delta"], threads, args)
            setting["delta_from"] = delta["from"]
            settings.append(setting)
    return settings


# -- output -------------------------------------------------------------------------------------


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def print_table(docs: list[dict[str, Any]]) -> None:
    head = (
        f"{'graph':<11}{'vertices':>12}{'edges':>15}{'delta':>8}{'distbfs ms':>12}{'GTEPS':>10}"
        f" |{'GAP delta':>10}{'thr':>5}{'roots':>6}{'GAP ms':>11}{'GTEPS':>10}{'GAP/distbfs':>13}"
    )
    print(head)
    print("-" * len(head))
    for doc in docs:
        ours = doc["distbfs"]
        left = (
            f"{doc['graph']:<11}{doc['vertices']:>12,}{doc['undirected_edges']:>15,}"
            f"{ours['delta']:>8.3g}{ours['mean_ms']:>12.3f}{ours['hmean_gteps']:>10.3g}"
        )
        if not doc["gap"]:
            print(left + " |")
        for i, gap in enumerate(doc["gap"]):
            gteps = "-" if gap["hmean_gteps"] is None else f"{gap['hmean_gteps']:.3g}"
            roots = len(gap["roots"]) if "roots" in gap else f"{len(gap['times'])}*"
            right = (
                f" |{gap['delta']:>10}{gap['threads']:>5}{roots!s:>6}{gap['mean_ms']:>11.3f}"
                f"{gteps:>10}{gap['ratio']:>12.2f}x"
            )
            print((left if i == 0 else " " * len(left)) + right)
    for doc in docs:
        if "peak_over_csr" in doc["distbfs"]:
            ours = doc["distbfs"]
            print(
                f"{doc['graph']}: peak device memory {ours['peak_bytes'] / 1e9:.3f} GB, "
                f"{ours['peak_over_csr']:.2f}x the weighted CSR ({ours['csr_bytes'] / 1e9:.3f} GB)"
            )
    print(
        "GAP/distbfs: GAP's mean ms over distbfs's mean ms on the same roots (above 1: distbfs "
        "faster); GTEPS: Graph500 harmonic mean; roots N*: GAP's own sources."
    )


def gap_commit(gap_dir: Path) -> str | None:
    commit = gap_dir / "COMMIT"
    return commit.read_text().strip() if commit.is_file() else None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", nargs="+", default=list(DEFAULT_GRAPHS))
    p.add_argument("--grid-shape", type=parse_shape, default=(4096, 4096))
    p.add_argument("--data", type=Path, default=DATA, help="folder of luxembourg_osm.mtx.gz")
    p.add_argument("--backend", default="auto", choices=("auto", "numpy", "cuda"))
    p.add_argument("--roots", type=int, default=64, help="searches per graph [64]")
    p.add_argument("--validate-roots", type=int, default=4, help="validate the first K [4]")
    p.add_argument("--delta", type=float, help="distbfs's delta (default: its own choice)")
    p.add_argument("--no-predecessors", action="store_true", help="distances only (as GAP)")
    p.add_argument("--no-gap", action="store_true", help="distbfs only")
    p.add_argument("--gap-dir", type=Path, default=REPO / ".gapbs", help="built GAP [.gapbs]")
    p.add_argument("--gap-threads", type=int, nargs="+", default=[16, 1])
    p.add_argument("--gap-sources", choices=("same", "own"), default="same")
    p.add_argument("--gap-roots", type=int, help="GAP runs the first N roots [all]")
    p.add_argument("--gap-roots-serial", type=int, default=4, help="... at one thread [4]")
    p.add_argument("--gap-warmup", type=int, default=1, help="untimed trials per process [1]")
    p.add_argument("--gap-verify", action="store_true", help="GAP's verifier on the first root")
    p.add_argument("--gap-timeout", type=float, default=1800, help="seconds per GAP process")
    p.add_argument("--work", type=Path, help="folder for the graph files [a temporary one]")
    p.add_argument("--keep", action="store_true", help="keep the native and .wsg files")
    p.add_argument("--json", type=Path, help="write every figure as JSON")
    args = p.parse_args(argv)
    if args.roots < 1 or args.gap_warmup < 0 or min(args.gap_threads) < 1:
        p.error("--roots and --gap-threads at least 1, --gap-warmup at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = [parse_case(name, args.grid_shape) for name in args.graphs]
    if not args.no_gap:
        try:
            gap_binary(args.gap_dir, "sssp")  # before any graph is built
        except GapError as exc:
            print(f"bench_sssp.py: {exc}; or run with --no-gap", file=sys.stderr)
            return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_sssp-"))
    work.mkdir(parents=True, exist_ok=True)
    docs, failure = [], None
    try:
        for case in cases:
            docs.append(bench_graph(case, args, work))
    except GapError as exc:  # the graphs done so far are still reported
        failure = f"bench_sssp.py: GAP: {exc}"
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_table(docs)
    if args.json:
        document = {
            "benchmark": "sssp against GAP",
            "argv": sys.argv[1:] if argv is None else argv,
            "host": {"cpus": os.cpu_count(), "machine": platform.node()},
            "gap_commit": None if args.no_gap else gap_commit(args.gap_dir),
            "failure": failure,
            "graphs": docs,
        }
        args.json.write_text(json.dumps(document, indent=1))
    if failure:
        print(failure, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
