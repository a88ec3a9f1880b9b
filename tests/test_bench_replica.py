"""``benchmarks/bench_replica.py`` pairs every all-rank search with a one-GPU search of the same
root, the one-GPU searches spread over the ranks in turn; a dry run on CPU ranks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_replica


@pytest.mark.mpi
@pytest.mark.parametrize("algorithm", ["bfs", "sssp"])
def test_pairs_run_one_gpu_searches_on_every_rank_in_turn(comm, tmp_path, algorithm):
    out = Path(comm.bcast_object(str(tmp_path / "replica.json")))  # rank 0 writes it
    args = ["--backend", "numpy", "--shrink", "16", "--graphs", "grid2d", "--rounds", "2"]
    args += ["--grid-roots", "3", "--strategies", "hybrid", "--json", str(out)]
    assert bench_replica.main([*args, "--algorithm", algorithm]) == 0
    if comm.rank != 0:
        return
    (row,) = json.loads(out.read_text())
    assert row["strategy"] == ("sssp" if algorithm == "sssp" else "hybrid")
    assert row["ranks"] == comm.size and row["searches"] == 2 * 3
    assert len(row["one_mean_ms_by_gpu"]) == comm.size
    assert all(ms > 0 for ms in row["one_mean_ms_by_gpu"])  # every GPU ran one-GPU searches
    ratio = row["one_mean_ms"] / row["all_mean_ms"]
    assert np.isclose(row["ratio"], ratio) and len(row["ratio_rounds"]) == 2
