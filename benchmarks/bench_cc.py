"""Connected components against GAP: distbfs's Afforest and GAP's ``cc`` (the GAP Benchmark
Suite, Beamer et al.; also Afforest, Sutton, Ben-Nun & Barak) on the identical graph, in one call.

Graphs (``--graphs``): ``kronN`` (Graph500 Kronecker of scale N, any N), ``grid2d``
(``--grid-shape``, 4096x4096 by default) and ``luxembourg`` (``luxembourg_osm.mtx.gz`` from
``$DISTBFS_DATA``, else ``../shared/data``), all unweighted. Each graph is saved natively,
converted to GAP's unweighted ``.sg`` (``benchmarks/gap.py``) and labelled by both tools.

distbfs: ``distbfs.benchmark.run_cc_runs``: a warm-up, then ``--runs`` timed runs of
``distbfs.connected_components`` over the whole graph, the first ``--validate-runs`` validated
(every edge joins equal labels, every label the smallest vertex carrying it, the labels the
warm-up's).

GAP: ``cc -f G.sg -n TRIALS -a`` under ``OMP_NUM_THREADS`` for each of ``--gap-threads`` (16 and
1 by default): ``--gap-warmup`` untimed trials, then ``--gap-trials`` timed ones (``--runs`` by
default; ``--gap-trials-serial``, 4, at one thread). GAP's times are its "Trial Time" lines: the
kernel alone, without the graph's read. Checks: the vertex and edge counts GAP prints equal
distbfs's, and its analysis of the last trial (``-a``: the number of components and the sizes of
the 5 biggest) equals distbfs's count and 5 largest sizes; ``--gap-verify`` also runs GAP's own
verifier (a serial BFS from every component) on every trial.

Output: a markdown table, a row per graph and GAP thread count (graph, undirected edges, GAP's
threads, distbfs's mean ms, GAP's mean ms, GAP ms / distbfs ms: above 1 where distbfs is faster,
the components and the largest one's size, the target of the issue where it sets one: one H100,
kron26 <= 20 ms, i.e. >= 25x GAP at 16 threads; grid 4096x4096 <= 5 ms; luxembourg <= 0.5 ms);
``--json`` writes every time.

Usage (one GPU; the numpy backend for a dry run on small scales)::

    python benchmarks/bench_cc.py [--graphs kron20 kron22 kron24 kron26 grid2d luxembourg] \
        [--backend auto|numpy|cuda] [--runs 16] [--validate-runs 4] [--gap-dir .gapbs] \
        [--gap-threads 16 1] [--gap-trials N] [--gap-trials-serial 4] [--gap-verify] \
        [--no-gap] [--json F]
    python benchmarks/bench_cc.py --backend numpy --graphs kron12 grid2d luxembourg \
        --grid-shape 64x64 --runs 4 --gap-dir .gapbs --gap-threads 2 1
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import re
import shlex
import shutil
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

import distbfs
from distbfs.arrays import as_host
from distbfs.benchmark import ComponentSeries, run_cc_runs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_sssp import DATA, REPO, ROAD_FILE, Case, device_name, gap_commit, parse_shape, say
from gap import GapError, GapRun, gap_binary, run_gap_detailed, write_gap_graph

DEFAULT_GRAPHS = ("kron20", "kron22", "kron24", "kron26", "grid2d", "luxembourg")
TOP = 5
"""GAP's analysis lists the sizes of the 5 biggest components."""
TARGET_MS = {"kron26": 20.0, "grid2d 4096x4096": 5.0, "luxembourg": 0.5}
"""The issue's targets on one H100 (distbfs's mean ms)."""
GAP_COMPONENTS = re.compile(r"^There are (\d+) components", re.M)
GAP_BIGGEST = re.compile(r"^\d+ biggest clusters\n((?:\d+:\d+\n)*)", re.M)
"""GAP's ``PrintCompStats``: "K biggest clusters", then "LABEL:SIZE" lines, biggest first."""


def parse_case(name: str, grid_shape: tuple[int, int]) -> Case:
    match = re.fullmatch(r"kron(\d+)", name)
    if match:
        return Case(name, "kronecker", scale=int(match.group(1)))
    if name in ("grid2d", "luxembourg"):
        return Case(name, name, shape=grid_shape if name == "grid2d" else None)
    raise SystemExit(f"bench_cc.py: unknown graph {name!r} (kronN, grid2d or luxembourg)")


def target_ms(case: Case) -> float | None:
    key = case.name if case.shape is None else f"{case.name} {case.shape[0]}x{case.shape[1]}"
    return TARGET_MS.get(key)


# -- distbfs ------------------------------------------------------------------------------------


def make_graph(case: Case, backend: str, data: Path) -> distbfs.Graph:
    """The unweighted graph of ``case`` on ``backend``."""
    if case.kind == "kronecker":
        return distbfs.Graph.generate("kronecker", scale=case.scale, backend=backend)
    if case.kind == "grid2d":
        return distbfs.Graph.generate("grid2d", shape=case.shape, backend=backend)
    path = data / ROAD_FILE
    if not path.is_file():
        raise SystemExit(f"bench_cc.py: {path} not found (set DISTBFS_DATA)")
    return distbfs.Graph.from_file(path, backend=backend)


def top_sizes(series: ComponentSeries) -> list[int]:
    """The sizes of the ``TOP`` largest components, largest first."""
    sizes = np.sort(as_host(series.profile.sizes))[::-1]
    return [int(s) for s in sizes[:TOP]]


# -- GAP ----------------------------------------------------------------------------------------


def gap_components(run: GapRun) -> tuple[int, list[int]]:
    """GAP's analysis of its last trial: the number of components and the biggest sizes."""
    count, biggest = GAP_COMPONENTS.search(run.output), GAP_BIGGEST.search(run.output)
    if count is None or biggest is None:
        raise GapError(f"GAP printed no component analysis (-a)\n{run.output}")
    sizes = [int(line.split(":")[1]) for line in biggest.group(1).splitlines()]
    return int(count.group(1)), sizes


def run_gap_setting(
    binary: Path, sg: Path, doc: dict[str, Any], threads: int, args: argparse.Namespace
) -> dict[str, Any]:
    """GAP's cc at ``threads`` threads, checked against distbfs's graph (vertex and edge counts)
    and components (count and largest sizes)."""
    trials = args.gap_trials_serial if threads == 1 else args.gap_trials or args.runs
    warm = args.gap_warmup
    run = run_gap_detailed(
        binary,
        sg,
        trials=warm + trials,
        threads=threads,
        verify=args.gap_verify,
        analysis=True,
        timeout=args.gap_timeout,
    )
    count, sizes = gap_components(run)
    ours = doc["distbfs"]
    if (run.nodes, run.edges) != (doc["vertices"], doc["undirected_edges"]):
        raise GapError(
            f"GAP read {run.nodes} nodes and {run.edges} edges, distbfs has "
            f"{doc['vertices']} and {doc['undirected_edges']}\n{run.output}"
        )
    if (count, sizes) != (ours["components"], ours["top_sizes"]):
        raise GapError(
            f"GAP found {count} components, the biggest of sizes {sizes}; distbfs "
            f"{ours['components']}, {ours['top_sizes']}\n{run.output}"
        )
    times = run.times[warm:]
    mean_ms = 1e3 * sum(times) / len(times)
    return {
        "threads": threads,
        "warmup_trials": warm,
        "times": times,
        "mean_ms": mean_ms,
        "ratio": mean_ms / ours["mean_ms"],
        "components": count,
        "top_sizes": sizes,
        "read_seconds": run.read_seconds,
        "verified": run.verified,
        "run": run.document(),
    }


# -- one graph ----------------------------------------------------------------------------------


def bench_graph(case: Case, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    say(f"== {case.name}: building")
    t0 = time.perf_counter()
    graph = make_graph(case, args.backend, args.data)
    build = time.perf_counter() - t0
    if graph.comm.size > 1:  # the files and GAP's runs are one process's
        raise SystemExit("bench_cc.py: run it as one process (one GPU, or numpy), not under MPI")
    doc: dict[str, Any] = {
        "graph": case.name,
        "kind": case.kind,
        "scale": case.scale,
        "shape": case.shape,
        "vertices": graph.num_vertices,
        "undirected_edges": graph.num_undirected_edges,
        "backend": graph.backend.name,
        "device": device_name(graph),
        "build_seconds": build,
        "target_ms": target_ms(case),
    }
    sg = work / f"{case.name}.sg"
    if not args.no_gap:
        t0 = time.perf_counter()
        native = work / case.name
        graph.save(native)
        doc["gap_file"] = write_gap_graph(native, sg)
        if not args.keep:
            shutil.rmtree(native)
        doc["convert_seconds"] = time.perf_counter() - t0
    say(f"   distbfs: {args.runs} runs")
    series = run_cc_runs(graph, args.runs, validate=args.validate_runs)
    stats = series.statistics
    doc["distbfs"] = {
        **series.document(),
        "top_sizes": top_sizes(series),
        "mean_ms": 1e3 * stats["mean_time"],
        "hmean_gteps": stats["harmonic_mean_TEPS"] / 1e9,
    }
    del graph, series
    gc.collect()  # the graph's memory is free before GAP reads its copy
    doc["gap"] = []
    if not args.no_gap:
        binary = gap_binary(args.gap_dir, "cc")
        for threads in args.gap_threads:
            say(f"   GAP cc: {threads} threads")
            doc["gap"].append(run_gap_setting(binary, sg, doc, threads, args))
    if not args.keep:
        sg.unlink(missing_ok=True)
    return doc


# -- output -------------------------------------------------------------------------------------


def print_table(docs: list[dict[str, Any]]) -> None:
    head = (
        "graph",
        "undirected edges",
        "GAP threads",
        "distbfs ms",
        "GAP ms",
        "GAP / distbfs",
        "components",
        "largest",
        "target ms",
    )
    print("| " + " | ".join(head) + " |")
    print("|---|" + "--:|" * (len(head) - 2) + "---|")
    for doc in docs:
        ours = doc["distbfs"]
        for gap in doc["gap"] or [None]:
            cells = [doc["graph"], f"{doc['undirected_edges']:,}", "-"]
            cells += [f"{ours['mean_ms']:.3f}", "-", "-"]
            if gap is not None:
                cells[2], cells[4] = str(gap["threads"]), f"{gap['mean_ms']:.3f}"
                cells[5] = f"{gap['ratio']:.2f}x"
            cells += [f"{ours['components']:,}", f"{ours['largest_size']:,}", target_cell(doc)]
            print("| " + " | ".join(cells) + " |")
    print(
        "\nGAP / distbfs: GAP's mean ms over distbfs's (above 1: distbfs faster); components and "
        "largest: distbfs's, equal to GAP's where GAP ran."
    )


def target_cell(doc: dict[str, Any]) -> str:
    """The issue's target for the graph, and whether distbfs's mean met it."""
    target = doc["target_ms"]
    if target is None:
        return "-"
    return f"{target:g} ({'met' if doc['distbfs']['mean_ms'] <= target else 'missed'})"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", nargs="+", default=list(DEFAULT_GRAPHS))
    p.add_argument("--grid-shape", type=parse_shape, default=(4096, 4096))
    p.add_argument("--data", type=Path, default=DATA, help="folder of luxembourg_osm.mtx.gz")
    p.add_argument("--backend", default="auto", choices=("auto", "numpy", "cuda"))
    p.add_argument("--runs", type=int, default=16, help="timed runs per graph [16]")
    p.add_argument("--validate-runs", type=int, default=4, help="validate the first K [4]")
    p.add_argument("--no-gap", action="store_true", help="distbfs only")
    p.add_argument("--gap-dir", type=Path, default=REPO / ".gapbs", help="built GAP [.gapbs]")
    p.add_argument("--gap-threads", type=int, nargs="+", default=[16, 1])
    p.add_argument("--gap-trials", type=int, help="GAP's timed trials [--runs]")
    p.add_argument("--gap-trials-serial", type=int, default=4, help="... at one thread [4]")
    p.add_argument("--gap-warmup", type=int, default=1, help="untimed trials first [1]")
    p.add_argument("--gap-verify", action="store_true", help="GAP's verifier on every trial")
    p.add_argument("--gap-timeout", type=float, default=1800, help="seconds per GAP process")
    p.add_argument("--work", type=Path, help="folder for the graph files [a temporary one]")
    p.add_argument("--keep", action="store_true", help="keep the native and .sg files")
    p.add_argument("--json", type=Path, help="write every figure as JSON")
    args = p.parse_args(argv)
    trials = [args.gap_trials_serial] + ([] if args.gap_trials is None else [args.gap_trials])
    if min(args.runs, min(args.gap_threads), *trials) < 1 or args.gap_warmup < 0:
        p.error("--runs, --gap-threads and --gap-trials at least 1, --gap-warmup at least 0")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    cases = [parse_case(name, args.grid_shape) for name in args.graphs]
    if not args.no_gap:
        try:
            gap_binary(args.gap_dir, "cc")  # before any graph is built
        except GapError as exc:
            print(f"bench_cc.py: {exc}; or run with --no-gap", file=sys.stderr)
            return 2
    work = args.work or Path(tempfile.mkdtemp(prefix="bench_cc-"))
    work.mkdir(parents=True, exist_ok=True)
    docs, failure = [], None
    try:
        for case in cases:
            docs.append(bench_graph(case, args, work))
    except GapError as exc:  # the graphs done so far are still reported
        failure = f"bench_cc.py: GAP: {exc}"
    finally:
        if args.work is None and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    print_table(docs)
    if args.json:
        command = sys.argv if argv is None else [sys.argv[0], *argv]
        document = {
            "benchmark": "cc against GAP",
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "command": shlex.join(command),
            "device": docs[0]["device"] if docs else None,
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
