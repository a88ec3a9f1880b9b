"""Host-side wall time of every backend call of one search (CUDA), synchronizing around each:
where a search's time goes beyond the kernels' own (allocation, launches, host reads).

    python benchmarks/profile_search.py --graph kronecker --scale 26 --strategy direction_optimizing

Prints, per backend method, its calls and total milliseconds, then the search's own time
(without the extra synchronization) for comparison. ``--memory``: the peak of the device bytes
the search's own arrays held at once (CuPy's pool hook: allocations live at the same time,
cached free blocks excluded), and what was live at that peak, by the line that allocated it.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path
from typing import Any

import cupy

import distbfs
from distbfs.roots import choose_roots

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_gpu import PeakHook

METHODS = (
    "start",
    "expand",
    "filter_partition",
    "contract",
    "run_small_levels",
    "frontier_edges",
    "frontier_bitmap",
    "bottom_up",
    "unexplored",
)


def instrument(backend: Any, totals: dict[str, list[float]]) -> None:
    """Wrap ``backend``'s stage methods with synchronized wall-clock timers (in place)."""
    for name in METHODS:
        method = getattr(backend, name, None)
        if method is None:
            continue

        def timed(*args: Any, _method: Any = method, _name: str = name, **kwargs: Any) -> Any:
            cupy.cuda.Device().synchronize()
            start = time.perf_counter()
            out = _method(*args, **kwargs)
            cupy.cuda.Device().synchronize()
            totals[_name].append(time.perf_counter() - start)
            return out

        setattr(backend, name, timed)


def memory_report(graph: Any, roots: list[int], options: dict[str, Any]) -> None:
    """The search's peak live bytes against the CSR, and what was live then."""
    csr = graph.dist.nbytes()
    pool = cupy.get_default_memory_pool()
    for root in roots[:2]:
        pool.free_all_blocks()
        held = pool.used_bytes()
        hook = PeakHook()
        with hook:
            result = distbfs.bfs(graph, root, **options)
            del result
        print(
            f"  root {root}: CSR {csr / 1e9:.2f} GB; held before the search {held / 1e9:.2f} GB "
            f"(the CSR, the graph's edge queue, caches); peak live during it +{hook.peak / 1e9:.2f}"
            f" GB: {(held + hook.peak) / csr:.2f}x the CSR; pool after "
            f"{pool.total_bytes() / 1e9:.2f} GB"
        )
        for where, size in sorted(hook.at_peak.items(), key=lambda kv: -kv[1])[:8]:
            print(f"    {size / 1e9:8.3f} GB  {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graph", default="kronecker")
    parser.add_argument("--scale", type=int, default=24)
    parser.add_argument("--strategy", default=None)
    parser.add_argument("--roots", type=int, default=4)
    parser.add_argument("--alpha", type=float, default=None, help="direction heuristic alpha")
    parser.add_argument("--memory", action="store_true", help="peak live bytes of a search")
    args = parser.parse_args()
    graph = distbfs.Graph.generate(args.graph, scale=args.scale, backend="cuda")
    roots = choose_roots(graph.dist, graph.comm, args.roots)
    options = {"predecessors": True, "gather": False, "strategy": args.strategy}
    if args.alpha is not None:
        options["alpha"] = args.alpha
    plain = [distbfs.bfs(graph, root, **options).seconds for root in roots * 2][len(roots) :]
    totals: dict[str, list[float]] = collections.defaultdict(list)
    instrument(graph.backend, totals)
    timed = [distbfs.bfs(graph, root, **options).seconds for root in roots]
    print(f"{args.graph} scale {args.scale}, strategy {args.strategy or 'default'}:")
    print(f"  search, plain: {1e3 * sum(plain) / len(plain):.3f} ms (mean of {len(plain)})")
    print(f"  search, every call synchronized: {1e3 * sum(timed) / len(timed):.3f} ms")
    for name, seconds in totals.items():
        print(
            f"  {name:18s} {len(seconds) / len(roots):6.1f} calls/search "
            f"{1e3 * sum(seconds) / len(roots):9.3f} ms/search"
        )
    if args.memory:
        memory_report(graph, roots, options)


if __name__ == "__main__":
    main()
