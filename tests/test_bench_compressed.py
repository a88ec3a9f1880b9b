"""``benchmarks/bench_compressed.py`` counts what a degree-ordered graph's columns take without
building it: the count equals the bytes of the graph actually relabeled by ``distbfs.reorder``
and compressed."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import distbfs
import distbfs.compressed as compressed
from distbfs.compressed import coded_bytes
from distbfs.graph import build_local_graph
from distbfs.reorder import order_vertices

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_compressed


@pytest.mark.parametrize("chunk", [compressed.CHUNK_EDGES, 1000])
@pytest.mark.parametrize("kind", ["kronecker", "grid2d"])
def test_degree_order_count_is_the_reordered_graphs(monkeypatch, kind, chunk):
    monkeypatch.setattr(compressed, "CHUNK_EDGES", chunk)  # 1000: many chunks of rows
    params = {"scale": 10} if kind == "kronecker" else {"shape": (20, 30)}
    graph = distbfs.Graph.generate(kind, backend="numpy", **params)
    dist = graph.dist
    src, dst = dist.stored_edges()
    order = order_vertices("degree", src, dst, dist.n)
    new_id = np.empty(dist.n, dtype=np.int64)
    new_id[order] = np.arange(dist.n)
    np.testing.assert_array_equal(bench_compressed.degree_order(dist.row_offsets), new_id)
    relabeled = build_local_graph(new_id[src], new_id[dst], dist.n, directed=True)
    want = coded_bytes(relabeled.row_offsets, relabeled.column_indices)
    got = bench_compressed.relabeled_coded_bytes(dist.row_offsets, dist.column_indices, new_id)
    assert got == want
    assert got != coded_bytes(dist.row_offsets, dist.column_indices)  # the order matters
