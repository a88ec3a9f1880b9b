"""Where a warm search of a road network goes, step by step: host time before the fused
kernel's launch, the kernel itself (CUDA events around its launch), the wait for its counts,
host time after them; medians over the searches.

    python benchmarks/host_steps.py [--graph luxembourg_osm.mtx.gz] [--searches 64] \\
        [--strategies hybrid direction_optimizing]

Host clock marks come from wrappers around ``run_levels`` (as the API calls it),
``SearchPlan.start``, the cooperative kernels' launch and ``LevelCounts.read``; they assume a
search of ONE fused launch (every level of a road network runs in one block), and mark the last
launch of a search that has several. The first searches (warm-up) are dropped.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

import cupy

import distbfs
import distbfs.api.search as api_search
from distbfs.backends.cuda import counters, kernels
from distbfs.engine import plan

DATA = Path(os.environ.get("DISTBFS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
WARM_UP = 6
marks: dict[str, float] = {}
events = (cupy.cuda.Event(), cupy.cuda.Event())


def marked(function: Any, before: str | None, after: str | None) -> Any:
    def wrapper(*args: Any, **options: Any) -> Any:
        if before:
            marks[before] = time.perf_counter()
        out = function(*args, **options)
        if after:
            marks[after] = time.perf_counter()
        return out

    return wrapper


def launch(launch_kernel: Any) -> Any:
    def wrapper(*args: Any, **options: Any) -> None:
        marks["launch"] = time.perf_counter()
        events[0].record()
        launch_kernel(*args, **options)
        events[1].record()
        marks["launched"] = time.perf_counter()

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", type=Path, default=DATA / "luxembourg_osm.mtx.gz")
    parser.add_argument("--source", type=int, default=0)
    parser.add_argument("--searches", type=int, default=64)
    parser.add_argument("--strategies", nargs="+", default=["hybrid", "direction_optimizing"])
    args = parser.parse_args()
    kernels.CooperativeKernel.__call__ = launch(kernels.CooperativeKernel.__call__)
    plan.SearchPlan.start = marked(plan.SearchPlan.start, "start", "started")
    counters.LevelCounts.read = marked(counters.LevelCounts.read, None, "read")
    api_search.run_levels = marked(api_search.run_levels, "enter", "exit")
    graph = distbfs.Graph.from_file(args.graph, backend="cuda")
    steps = {
        "search (BFSResult.seconds)": lambda m, r: r.seconds * 1e6,
        "into run_levels, to start": lambda m, r: (m["start"] - m["enter"]) * 1e6,
        "start": lambda m, r: (m["started"] - m["start"]) * 1e6,
        "start to the launch": lambda m, r: (m["launch"] - m["started"]) * 1e6,
        "the launch call": lambda m, r: (m["launched"] - m["launch"]) * 1e6,
        "the kernel (events)": lambda m, r: cupy.cuda.get_elapsed_time(*events) * 1e3,
        "launched to the counts read": lambda m, r: (m["read"] - m["launched"]) * 1e6,
        "after the counts": lambda m, r: (m["exit"] - m["read"]) * 1e6,
    }
    for strategy in args.strategies:
        rows = []
        for index in range(WARM_UP + args.searches):
            result = distbfs.bfs(graph, args.source, gather=False, strategy=strategy)
            if index >= WARM_UP:
                rows.append({name: step(marks, result) for name, step in steps.items()})
            del result
        print(f"{strategy}: medians of {len(rows)} searches (us)")
        for name in steps:
            values = sorted(row[name] for row in rows)
            low, high = values[len(values) // 10], values[9 * len(values) // 10]
            median = statistics.median(values)
            print(f"  {name:28s} {median:9.1f}   (p10 {low:.1f}, p90 {high:.1f})")


if __name__ == "__main__":
    main()
