"""Bytes a search of a host-resident graph reads over the host link (#20: report them and the
fraction of the link's 48 GB/s sequential limit): one Kronecker graph with its columns in
mapped host memory (``Graph.place("host")``), searched back to back from its Graph500 roots
for ``--seconds`` while ``nvidia-smi dmon -s t`` samples the GPU's PCIe receive rate once a
second; the mean rate over the samples inside the searching window, times the window, over the
searches made, is the bytes a search read. The first search is validated.

    python3 benchmarks/bench_host_link.py --scale 27 --seconds 20      # one GPU
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import distbfs
from distbfs.roots import choose_roots

LINK_LIMIT = 48.3e9
"""Bytes a second a kernel reads from mapped pinned host memory sequentially on the H100
machine (PCIe Gen5 x16; #20, ../shared/DEVICE.md)."""


def receive_rates(log: str, first: float, last: float) -> list[float]:
    """PCIe receive rates (bytes a second) of ``nvidia-smi dmon -s t -o T`` lines stamped
    inside [first, last] (epoch seconds of this day's local clock)."""
    day = datetime.fromtimestamp(first).strftime("%Y-%m-%d")
    rates, columns = [], None
    for line in log.splitlines():
        fields = line.lstrip("#").split()
        if line.startswith("#"):  # "#Time gpu rxpci txpci", then the units
            columns = columns or [f.lower() for f in fields]
            continue
        if columns is None or len(fields) != len(columns):
            continue
        row = dict(zip(columns, fields, strict=True))
        stamp = datetime.strptime(f"{day} {row['time']}", "%Y-%m-%d %H:%M:%S").timestamp()
        if first <= stamp <= last and row.get("rxpci", "-").isdigit():
            rates.append(float(row["rxpci"]) * 1e6)  # dmon: MB/s
    return rates


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=int, default=27)
    p.add_argument("--roots", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--strategy", default="direction_optimizing")
    p.add_argument("--compress", action="store_true", help="compressed columns in host memory")
    p.add_argument("--json", type=Path, default=None)
    args = p.parse_args()

    graph = distbfs.Graph.generate("kronecker", scale=args.scale, backend="cuda")
    if args.compress:
        graph = graph.compress()
    graph = graph.place("host")
    roots = choose_roots(graph.dist, graph.comm, args.roots)
    distbfs.bfs(graph, roots[0], strategy=args.strategy, validate=True)  # checked, warm
    graph.resources.load_kernels()
    dmon = subprocess.Popen(
        ["nvidia-smi", "dmon", "-s", "t", "-d", "1", "-o", "T"],
        stdout=subprocess.PIPE,
        text=True,
    )
    time.sleep(2.5)  # samples before the window are discarded
    first = time.time()
    searches, searching = 0, 0.0
    while time.time() - first < args.seconds:
        result = distbfs.bfs(graph, roots[searches % len(roots)], strategy=args.strategy)
        searching += result.seconds
        searches += 1
    last = time.time()
    time.sleep(1.5)
    dmon.terminate()
    log = dmon.communicate()[0]
    rates = receive_rates(log, first + 1, last)  # whole seconds inside the window
    rate = sum(rates) / len(rates) if rates else float("nan")
    per_search = rate * (last - first) / searches
    row = {
        "scale": args.scale,
        "strategy": args.strategy,
        "compressed": graph.compressed,
        "searches": searches,
        "window_seconds": last - first,
        "search_seconds": searching,
        "mean_search_ms": 1e3 * searching / searches,
        "samples": len(rates),
        "receive_bytes_per_second": rate,
        "bytes_per_search": per_search,
        "link_fraction": rate / LINK_LIMIT,
        "column_bytes": graph.comm.allreduce(graph.dist.column_indices.nbytes),
    }
    print(
        f"kron{args.scale} {args.strategy}{' compressed' if graph.compressed else ''}, columns "
        f"in host memory ({row['column_bytes']:,} bytes): {searches} searches in "
        f"{row['window_seconds']:.1f} s ({row['mean_search_ms']:.1f} ms each); PCIe receive "
        f"{rate / 1e9:.2f} GB/s over {len(rates)} samples = {per_search / 1e9:.2f} GB a search, "
        f"{row['link_fraction']:.0%} of {LINK_LIMIT / 1e9:.1f} GB/s"
    )
    if args.json is not None:
        stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
        args.json.write_text(json.dumps({"date": stamp, **row, "dmon": log}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
