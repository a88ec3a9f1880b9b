"""A distbfs command's first run with an empty kernel cache, in one process: every NVRTC
compile (seconds, the kernels it holds) and, with ``--profile``, cProfile's slowest calls.

    python benchmarks/trace_first_run.py [--profile] -- bfs luxembourg_osm.mtx.gz --source 0 -q

Runs the command through ``distbfs.cli.main`` with ``CUPY_CACHE_DIR`` set to a new empty
folder, wrapping CuPy's NVRTC call (``cupy.cuda.compiler._compile_using_nvrtc_no_warning``).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import re
import tempfile
import time
from typing import Any

KERNEL = re.compile(r"__global__\s+void\s+(?:__launch_bounds__\([^)]*\)\s*)?(\w+)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", action="store_true", help="also print cProfile's top calls")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the distbfs command line")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    began = time.perf_counter()
    os.environ["CUPY_CACHE_DIR"] = tempfile.mkdtemp()
    import cupy.cuda.compiler as compiler

    compiles: list[tuple[float, float, str]] = []
    nvrtc = compiler._compile_using_nvrtc_no_warning

    def traced(source: str, *rest: Any, **options: Any) -> Any:
        start = time.perf_counter()
        out = nvrtc(source, *rest, **options)
        names = ",".join(KERNEL.findall(source)[:4]) or source[:60].replace("\n", " ")
        compiles.append((time.perf_counter() - start, time.perf_counter() - began, names))
        return out

    compiler._compile_using_nvrtc_no_warning = traced
    from distbfs.cli import main as cli

    imported = time.perf_counter() - began
    profile = cProfile.Profile()
    if args.profile:
        profile.enable()
    try:
        cli(command)
    except SystemExit:
        pass
    profile.disable()
    total = time.perf_counter() - began
    if args.profile:
        text = io.StringIO()
        pstats.Stats(profile, stream=text).sort_stats("cumulative").print_stats(40)
        print(text.getvalue())
    for seconds, at, names in compiles:
        print(f"{seconds:6.3f} s (ends at {at:6.2f} s) {names}")
    print(
        f"compiles {sum(c[0] for c in compiles):.3f} s of {total:.3f} s in process "
        f"(imports {imported:.3f} s)"
    )


if __name__ == "__main__":
    main()
