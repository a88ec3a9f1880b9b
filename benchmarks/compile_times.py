"""NVRTC seconds of stage modules, each compiled into an empty kernel cache: what a first run
with an empty cache waits for, per module, for one or more versions of distbfs.

    python benchmarks/compile_times.py --versions .before . --stages contract_expand relax \\
        --rounds 2

Each version is compiled in a fresh process importing distbfs from its folder, versions
alternating every round. One trivial compile goes first (NVRTC's own start, timed apart), then
each stage's module alone (one thread), each into its own empty ``CUPY_CACHE_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def worker(stages: list[str]) -> None:
    import cupy

    from distbfs.backends.cuda import kernels

    start = time.perf_counter()
    cupy.RawModule(code='extern "C" __global__ void k(int* x) { x[0] = 1; }').compile()
    row = {"nvrtc_start": time.perf_counter() - start}
    for stage in stages:
        os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp()
        row[stage] = kernels.build_modules([stage], threads=1)[0][2]
    print("COMPILE-TIMES " + json.dumps(row), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--versions", nargs="+", type=Path, default=[Path(".")])
    parser.add_argument("--stages", nargs="+", default=["contract_expand"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.stages)
        return
    print(f"| round | version | NVRTC start | {' | '.join(args.stages)} |")
    print(f"| ---: | --- | ---: |{' ---: |' * len(args.stages)}")
    for round_ in range(args.rounds):
        versions = args.versions if round_ % 2 == 0 else args.versions[::-1]
        for folder in versions:
            env = dict(
                os.environ, PYTHONPATH=str(folder.resolve()), CUPY_CACHE_DIR=tempfile.mkdtemp()
            )
            command = [sys.executable, __file__, "--worker", "--stages", *args.stages]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
            line = next(x for x in done.stdout.splitlines() if x.startswith("COMPILE-TIMES "))
            row = json.loads(line.split(" ", 1)[1])
            cells = " | ".join(f"{row[s]:.2f} s" for s in args.stages)
            print(f"| {round_ + 1} | {folder} | {row['nvrtc_start']:.2f} s | {cells} |", flush=True)


if __name__ == "__main__":
    main()
