"""What compression makes of Kronecker graphs' columns (#20's target: at least 1.5x on scales
26-28): each scale generated on the backend, then the bytes of its varint-coded columns and
byte offsets counted where the graph is (``distbfs.compressed.coded_bytes``: on a GPU, without
writing a code), against the plain int32/int64 columns and against the whole CSR.

    python3 benchmarks/bench_compressed.py --scales 26 27 28          # one GPU
    python benchmarks/bench_compressed.py --backend numpy --scales 16 18 20
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import distbfs
from distbfs.compressed import coded_bytes


def measure(scale: int, backend: str) -> dict:
    """One scale: sizes and the seconds each step took."""
    t0 = time.perf_counter()
    graph = distbfs.Graph.generate("kronecker", scale=scale, backend=backend)
    built = time.perf_counter() - t0
    dist, comm = graph.dist, graph.comm
    t0 = time.perf_counter()
    coded = comm.allreduce(coded_bytes(dist.row_offsets, dist.column_indices, dist.rank, dist.size))
    counted = time.perf_counter() - t0
    columns = comm.allreduce(int(dist.column_indices.nbytes))
    offsets = comm.allreduce(int(dist.row_offsets.nbytes))
    return {
        "scale": scale,
        "vertices": graph.num_vertices,
        "stored_edges": graph.num_edges,
        "backend": graph.backend.name,
        "ranks": comm.size,
        "plain_columns_bytes": columns,
        "compressed_columns_bytes": coded,
        "columns_ratio": columns / coded,
        "csr_ratio": (columns + offsets) / (coded + offsets),
        "build_seconds": built,
        "count_seconds": counted,
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scales", type=int, nargs="+", default=[26, 27, 28])
    p.add_argument("--backend", default="auto", choices=("auto", "numpy", "cuda"))
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()
    rows = []
    print("| scale | stored edges | plain columns | compressed | columns | CSR | build s |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for scale in args.scales:
        row = measure(scale, args.backend)
        rows.append(row)
        print(
            f"| {scale} | {row['stored_edges']:,} | {row['plain_columns_bytes']:,} | "
            f"{row['compressed_columns_bytes']:,} | {row['columns_ratio']:.2f}x | "
            f"{row['csr_ratio']:.2f}x | {row['build_seconds']:.1f} |",
            flush=True,
        )
    if args.json is not None:
        document = {
            "benchmark": "compressed columns",
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "rows": rows,
        }
        args.json.write_text(json.dumps(document, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
