"""What compression makes of Kronecker graphs' columns (#20's target: at least 1.5x on scales
26-28): each scale generated on the backend, then the bytes of its varint-coded columns and
byte offsets counted where the graph is (``distbfs.compressed.coded_bytes``: on a GPU, without
writing a code), against the plain int32/int64 columns and against the whole CSR; and on one
rank what the columns would take relabeled in ``distbfs reorder --order degree``'s order,
counted from the graph as it is (scale 28 leaves no room on a GPU for a reordered copy).

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
from typing import Any

import numpy as np

import distbfs
from distbfs.arrays import array_module
from distbfs.compressed import byte_offset_dtype, coded_bytes, row_chunks, row_codes, varint_lengths


def degree_order(row_offsets: Any) -> Any:
    """The new id of every vertex of a one-rank undirected CSR in ``distbfs reorder``'s degree
    order (degree descending, ties by id): one sort of a combined key."""
    xp = array_module(row_offsets)
    degrees = xp.diff(row_offsets)
    n = degrees.shape[0]
    key = (int(degrees.max()) - degrees) * n if n else degrees
    key += xp.arange(n, dtype=np.int64)
    order = xp.argsort(key)
    del key
    new_id = xp.empty(n, dtype=np.int64)
    new_id[order] = xp.arange(n, dtype=np.int64)
    return new_id


def relabeled_coded_bytes(row_offsets: Any, columns: Any, new_id: Any) -> int:
    """Bytes ``coded_bytes`` counts for a one-rank CSR relabeled by ``new_id`` (each row's new
    neighbours sorted, the first coded against the row's new id), without building it: a chunk
    of rows at a time, where the arrays are."""
    xp, total, n = array_module(columns), 0, new_id.shape[0]
    for first, last in row_chunks(row_offsets):
        e0, e1 = int(row_offsets[first]), int(row_offsets[last])
        offsets = row_offsets[first : last + 1] - e0
        owners = xp.searchsorted(offsets[1:], xp.arange(e1 - e0), side="right")
        key = owners * n + new_id[columns[e0:e1]]
        key.sort()  # rows keep their order; each row's new neighbours sorted
        key -= owners * n
        vertices = new_id[first:last]
        total += int(varint_lengths(row_codes(offsets, key, vertices)).sum())
    return total + row_offsets.shape[0] * byte_offset_dtype(total).itemsize


def measure(scale: int, backend: str) -> dict:
    """One scale: sizes and the seconds each step took."""
    t0 = time.perf_counter()
    graph = distbfs.Graph.generate("kronecker", scale=scale, backend=backend)
    built = time.perf_counter() - t0
    dist, comm = graph.dist, graph.comm
    t0 = time.perf_counter()
    coded = comm.allreduce(coded_bytes(dist.row_offsets, dist.column_indices, dist.rank, dist.size))
    counted = time.perf_counter() - t0
    reordered = None
    if comm.size == 1:  # the degree order of the whole graph
        new_id = degree_order(dist.row_offsets)
        reordered = relabeled_coded_bytes(dist.row_offsets, dist.column_indices, new_id)
        del new_id
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
        "degree_order_columns_bytes": reordered,
        "degree_order_columns_ratio": None if reordered is None else columns / reordered,
        "build_seconds": built,
        "count_seconds": counted,
    }


def reordered_ratio(row: dict) -> str:
    ratio = row["degree_order_columns_ratio"]
    return "-" if ratio is None else f"{ratio:.2f}x"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scales", type=int, nargs="+", default=[26, 27, 28])
    p.add_argument("--backend", default="auto", choices=("auto", "numpy", "cuda"))
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()
    rows = []
    print(
        "| scale | stored edges | plain columns | compressed | columns | CSR | degree order "
        "columns | build s |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for scale in args.scales:
        row = measure(scale, args.backend)
        rows.append(row)
        print(
            f"| {scale} | {row['stored_edges']:,} | {row['plain_columns_bytes']:,} | "
            f"{row['compressed_columns_bytes']:,} | {row['columns_ratio']:.2f}x | "
            f"{row['csr_ratio']:.2f}x | {reordered_ratio(row)} | {row['build_seconds']:.1f} |",
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
