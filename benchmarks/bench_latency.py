"""BFS on high-diameter graphs (#21's latency targets) against GAP's bfs on the identical graph, in
one call: luxembourg_osm and the 4096^2 grid, searched from vertex 0.

distbfs: ``--runs`` searches through ``distbfs.bfs`` after one untimed warm-up, for each strategy
(the time a search reports: from the source labeled to the labels in memory); microseconds a
level = mean time / levels. GAP: ``bfs -f G.sg -r 0 -n TRIALS -a`` under ``OMP_NUM_THREADS`` for
each of ``--gap-threads`` (1 and 16), on the graph distbfs saved and ``benchmarks/gap.py``
converted; its mean "Trial Time" after one warm-up trial, and its reached count checked against
distbfs's. "x GAP" = GAP's mean / distbfs's mean.

    python benchmarks/bench_latency.py --gap-dir .gapbs [--graphs luxembourg grid2d] \\
        [--runs 16] [--strategies direction_optimizing hybrid] [--json F]
    python benchmarks/bench_latency.py --backend numpy --grid-shape 64x64 --runs 2 --gap-dir .gapbs

Targets (#21, one GPU): luxembourg_osm <= 2 ms (>= 2x GAP at one thread), the grid <= 30 ms,
<= 2 us a small level.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cc import make_graph, parse_case
from bench_sssp import DATA, device_name, gap_commit, parse_shape, say
from gap import GapError, gap_binary, run_gap_detailed, write_gap_graph

import distbfs

TARGET_MS = {"luxembourg": 2.0, "grid2d": 30.0}
"""The issue's targets on one GPU (distbfs's mean ms)."""


def bench_distbfs(graph: distbfs.Graph, strategy: str, runs: int) -> dict[str, Any]:
    """``runs`` searches from vertex 0 (after a warm-up): times, levels, reached. Each result
    goes before the next search, as in ``distbfs bench``: a benchmark holding every result
    would also time the memory pool growing by a search's arrays each time."""
    first = distbfs.bfs(graph, 0, gather=False, strategy=strategy)
    levels, reached = first.depth + 1, first.num_reached
    fused_levels = sum(lv.fused for lv in first.levels)
    del first
    times = [distbfs.bfs(graph, 0, gather=False, strategy=strategy).seconds for _ in range(runs)]
    mean = statistics.mean(times)
    return {
        "strategy": strategy,
        "times": times,
        "mean_ms": 1e3 * mean,
        "min_ms": 1e3 * min(times),
        "levels": levels,
        "us_per_level": 1e6 * mean / levels,
        "reached": reached,
        "fused_levels": fused_levels,
    }


def bench_gap(binary: Path, sg: Path, threads: int, trials: int, reached: int) -> dict[str, Any]:
    """GAP's bfs from vertex 0: one warm-up trial, then ``trials`` timed ones."""
    run = run_gap_detailed(binary, sg, source=0, trials=trials + 1, threads=threads, analysis=True)
    if run.reached != reached:
        raise GapError(f"GAP's tree has {run.reached} vertices, distbfs reached {reached}")
    times = run.times[1:]
    return {"threads": threads, "times": times, "mean_ms": 1e3 * statistics.mean(times)}


def bench_graph(name: str, args: argparse.Namespace, work: Path) -> dict[str, Any]:
    say(f"== {name}")
    graph = make_graph(parse_case(name, args.grid_shape), args.backend, args.data)
    doc: dict[str, Any] = {
        "graph": name,
        "vertices": graph.num_vertices,
        "undirected_edges": graph.num_undirected_edges,
        "device": device_name(graph),
        "target_ms": TARGET_MS.get(name),
        "distbfs": [bench_distbfs(graph, s, args.runs) for s in args.strategies],
        "gap": [],
    }
    if args.gap_dir is not None:
        native, sg = work / name, work / f"{name}.sg"
        graph.save(native)
        write_gap_graph(native, sg)
        shutil.rmtree(native)
        binary = gap_binary(args.gap_dir, "bfs")
        reached = doc["distbfs"][0]["reached"]
        for threads in args.gap_threads:
            doc["gap"].append(bench_gap(binary, sg, threads, args.gap_trials, reached))
        sg.unlink()
    return doc


def print_table(docs: list[dict[str, Any]]) -> None:
    threads = [gap["threads"] for gap in docs[0]["gap"]] if docs else []
    head = "| graph | strategy | levels (fused) | mean ms | min ms | us / level | target ms |"
    print(head + "".join(f" GAP {t} thr. ms | x GAP {t} |" for t in threads))
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |" + " ---: | ---: |" * len(threads))
    for doc in docs:
        for run in doc["distbfs"]:
            cells = [
                doc["graph"],
                run["strategy"],
                f"{run['levels']} ({run['fused_levels']})",
                f"{run['mean_ms']:.3f}",
                f"{run['min_ms']:.3f}",
                f"{run['us_per_level']:.2f}",
                f"{doc['target_ms']}",
            ]
            for gap in doc["gap"]:
                cells += [f"{gap['mean_ms']:.3f}", f"{gap['mean_ms'] / run['mean_ms']:.2f}"]
            print("| " + " | ".join(cells) + " |")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", nargs="+", default=["luxembourg", "grid2d"])
    p.add_argument("--strategies", nargs="+", default=["direction_optimizing", "hybrid"])
    p.add_argument("--runs", type=int, default=16)
    p.add_argument("--backend", default="cuda", help="cuda (numpy: a dry run on CPUs)")
    p.add_argument("--grid-shape", type=parse_shape, default=(4096, 4096), help="[4096x4096]")
    p.add_argument("--gap-dir", type=Path, default=None, help="built GAP (none: distbfs only)")
    p.add_argument("--gap-threads", type=int, nargs="+", default=[1, 16])
    p.add_argument("--gap-trials", type=int, default=8)
    p.add_argument("--data", type=Path, default=DATA)
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(dir="/tmp") as work:
        docs = [bench_graph(name, args, Path(work)) for name in args.graphs]
    print_table(docs)
    if args.json is not None:
        meta = {"argv": sys.argv, "gap_commit": gap_commit(args.gap_dir) if args.gap_dir else None}
        args.json.write_text(json.dumps({**meta, "graphs": docs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
