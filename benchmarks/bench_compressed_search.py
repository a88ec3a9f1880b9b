"""Searches of plain against compressed columns (#20's target: a compressed search on the device
at least 0.7x the plain search's speed on kron27, same call): one Kronecker graph generated
once, compressed beside itself, and searched from the same Graph500 roots with each strategy,
plain and compressed alternating ``--repeats`` times (the first searches of each series are
validated). Prints a markdown table of harmonic-mean TEPS and the ratio; ``--json`` keeps it.

    python3 benchmarks/bench_compressed_search.py --scale 27 --roots 16       # one GPU
    python benchmarks/bench_compressed_search.py --backend numpy --scale 16 --roots 4
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import distbfs
from distbfs.benchmark import run_searches
from distbfs.roots import choose_roots


def level_row(level: Any) -> dict:
    """A profiled level: number, direction, frontier and milliseconds (all phases)."""
    ms = 1e3 * sum(level.seconds.values())
    return {
        "level": level.level,
        "direction": level.direction,
        "frontier": level.frontier,
        "ms": ms,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=27)
    p.add_argument("--roots", type=int, default=16)
    p.add_argument("--strategies", nargs="+", default=["direction_optimizing", "hybrid"])
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--validate-roots", type=int, default=2)
    p.add_argument("--backend", default="auto", choices=("auto", "numpy", "cuda"))
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()

    t0 = time.perf_counter()
    plain = distbfs.Graph.generate("kronecker", scale=args.scale, backend=args.backend)
    built = time.perf_counter() - t0
    t0 = time.perf_counter()
    small = plain.compress()
    coded = time.perf_counter() - t0
    comm = plain.comm
    sizes = {
        name: comm.allreduce(g.dist.nbytes())
        for name, g in (("plain", plain), ("compressed", small))
    }
    roots = choose_roots(plain.dist, comm, args.roots)
    print(
        f"kron{args.scale} on {plain.backend.name}: built in {built:.1f} s, compressed in "
        f"{coded:.1f} s; CSR {sizes['plain']:,} -> {sizes['compressed']:,} bytes "
        f"({sizes['plain'] / sizes['compressed']:.2f}x)",
        flush=True,
    )
    print("| strategy | repeat | plain GTEPS | compressed GTEPS | compressed / plain |")
    print("| --- | ---: | ---: | ---: | ---: |")
    rows = []
    for strategy in args.strategies:
        for repeat in range(args.repeats):
            teps, levels = {}, {}
            for name, graph in (("plain", plain), ("compressed", small)):
                series = run_searches(
                    graph,
                    roots,
                    strategy=strategy,
                    validate=args.validate_roots if repeat == 0 else 0,
                )
                teps[name] = series.statistics["harmonic_mean_TEPS"]
                levels[name] = [level_row(level) for level in series.profile.levels]
            ratio = teps["compressed"] / teps["plain"]
            rows.append(
                {"strategy": strategy, "repeat": repeat, **teps, "ratio": ratio, "levels": levels}
            )
            print(
                f"| {strategy} | {repeat} | {teps['plain'] / 1e9:.2f} | "
                f"{teps['compressed'] / 1e9:.2f} | {ratio:.3f} |",
                flush=True,
            )
    for row in rows[-1:]:  # where the time goes: the first root's levels (fused rows: plain)
        print(f"levels of root {roots[0]} ({row['strategy']}): plain ms, compressed ms")
        compressed_ms = {b["level"]: b["ms"] for b in row["levels"]["compressed"]}
        for a in row["levels"]["plain"]:
            b = compressed_ms.get(a["level"], float("nan"))
            where = f"  {a['level']:>3} {a['direction']:>9} {a['frontier']:>11,}"
            print(f"{where} {a['ms']:9.3f} {b:9.3f}")
    if args.json is not None:
        document = {
            "benchmark": "compressed search",
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "scale": args.scale,
            "backend": plain.backend.name,
            "roots": roots,
            "bytes": sizes,
            "build_seconds": built,
            "compress_seconds": coded,
            "rows": rows,
        }
        args.json.write_text(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
