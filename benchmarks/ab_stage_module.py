"""In-process A/B of one stage's kernels: BFS searches with the stage's module compiled from
another checkout's ``kernels/`` against this checkout's, in ONE process, graph by graph,
alternating rounds. Between processes a search's time drifts by 5-25% (clocks, the memory
pool, the host); in one process both modules meet the same drifts.

    python benchmarks/ab_stage_module.py --before .before [--stage contract_expand] \\
        [--graphs kron24 kron20 luxembourg grid2d] [--rounds 8] [--roots 16]

The other checkout's stage must keep this one's kernel names and arguments (the Python side
launching it is this checkout's). A source that includes ``<cooperative_groups.h>`` is built
with CuPy's ``enable_cooperative_groups`` (relocatable code), as distbfs built such stages.
Prints after / before of the median over rounds of each round's mean search time.
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
from pathlib import Path
from typing import Any

import cupy

import distbfs
from distbfs.backends.cuda import kernels
from distbfs.roots import choose_roots

DATA = Path(os.environ.get("DISTBFS_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
SINGLE_SOURCE = {"luxembourg": 16, "grid2d": 3}  # searches from vertex 0 a round
STRATEGIES = ("hybrid", "direction_optimizing")


def make_graph(name: str) -> Any:
    if name == "luxembourg":
        return distbfs.Graph.from_file(DATA / "luxembourg_osm.mtx.gz", backend="cuda")
    if name == "grid2d":
        return distbfs.Graph.generate("grid2d", backend="cuda", shape=(4096, 4096))
    return distbfs.Graph.generate("kronecker", backend="cuda", scale=int(name.removeprefix("kron")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="checkout of the baseline")
    parser.add_argument("--stage", default="contract_expand")
    parser.add_argument("--graphs", nargs="+", default=["kron24", "kron20", "luxembourg", "grid2d"])
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--roots", type=int, default=16)
    args = parser.parse_args()
    ours = kernels._module

    @functools.cache
    def theirs(device_id: int, stage: str, options: tuple[str, ...]) -> Any:
        if stage != args.stage:
            return ours(device_id, stage, options)
        source = kernels.stage_source(stage, args.before / "kernels")
        with cupy.cuda.Device(device_id):
            module = cupy.RawModule(
                code=source,
                options=options,
                enable_cooperative_groups="cooperative_groups.h" in source,
            )
            module.compile()
        return module

    def build(name: str, module: Any) -> Any:
        kernels._module = module  # the graph's kernels are looked up at its first searches
        kernels._kernel.cache_clear()
        graph = make_graph(name)
        for strategy in STRATEGIES:
            distbfs.bfs(graph, 0, gather=False, strategy=strategy)
        graph.resources.load_kernels()
        kernels._module = ours
        kernels._kernel.cache_clear()
        return graph

    for name in args.graphs:
        graphs = {"before": build(name, theirs), "after": build(name, ours)}
        if name in SINGLE_SOURCE:
            roots = [0] * SINGLE_SOURCE[name]
        else:
            roots = choose_roots(graphs["after"].dist, graphs["after"].comm, args.roots)
        for strategy in STRATEGIES:
            means: dict[str, list[float]] = {"before": [], "after": []}
            for round_ in range(args.rounds):
                for version in ("before", "after") if round_ % 2 == 0 else ("after", "before"):
                    times = []
                    for root in roots:
                        result = distbfs.bfs(graphs[version], root, gather=False, strategy=strategy)
                        times.append(result.seconds)
                        del result
                    means[version].append(1e3 * sum(times) / len(times))
            before, after = (statistics.median(means[v]) for v in ("before", "after"))
            ratios = [a / b for a, b in zip(means["after"], means["before"], strict=True)]
            print(
                f"{name:10s} {strategy:21s} before {before:8.3f} ms  after {after:8.3f} ms  "
                f"after/before {after / before:.3f}  (rounds {min(ratios):.3f}-{max(ratios):.3f})",
                flush=True,
            )
        del graphs


if __name__ == "__main__":
    main()
