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
@pytest.mark.parametrize("algorithm", ["bfs", "sssp", "cc"])
def test_pairs_run_one_gpu_searches_on_every_rank_in_turn(comm, tmp_path, algorithm):
    out = Path(comm.bcast_object(str(tmp_path / "replica.json")))  # rank 0 writes it
    args = ["--backend", "numpy", "--shrink", "16", "--graphs", "grid2d", "--rounds", "2"]
    args += ["--grid-roots", "3", "--strategies", "hybrid", "--json", str(out)]
    assert bench_replica.main([*args, "--algorithm", algorithm]) == 0
    if comm.rank != 0:
        return
    (row,) = json.loads(out.read_text())
    assert row["strategy"] == {"sssp": "sssp", "cc": "cc"}.get(algorithm, "hybrid")
    assert row["ranks"] == comm.size and row["searches"] == 2 * 3
    assert len(row["one_mean_ms_by_gpu"]) == comm.size
    assert all(ms > 0 for ms in row["one_mean_ms_by_gpu"])  # every GPU ran one-GPU searches
    ratio = row["one_mean_ms"] / row["all_mean_ms"]
    assert np.isclose(row["ratio"], ratio) and len(row["ratio_rounds"]) == 2
    medians = row["one_median_ms"] / row["all_median_ms"]
    assert np.isclose(row["ratio_medians"], medians)


def test_each_timed_search_follows_an_untimed_one_of_its_side(monkeypatch):
    """A timed search comes right after an untimed search of the same graph and root (what
    the GPU ran last is that side's), and only the first round's first K roots validate."""
    from distbfs.comm.single import SingleRankCommunicator

    calls = []

    def search(graph, root, strategy, validate):
        calls.append((graph, root, validate))
        return 1.0

    monkeypatch.setattr(bench_replica, "search", search)
    comm = SingleRankCommunicator()
    solo, joint, where = bench_replica.pairs("one", "all", [5, 7, 9], "hybrid", 2, comm, 2)
    assert solo.shape == joint.shape == where.shape == (2, 3)
    assert len(calls) == 2 * 3 * 2 * 2
    for untimed, timed in zip(calls[::2], calls[1::2], strict=True):
        assert untimed[:2] == timed[:2] and not untimed[2]
    validated = [(graph, root) for graph, root, validate in calls if validate]
    assert sorted(validated) == [("all", 5), ("all", 7), ("one", 5), ("one", 7)]
