"""``benchmarks/bench_hub_row.py`` runs a hub's searches with its row broadcast and without, in
alternating rounds; a dry run on CPU ranks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import bench_hub_row


@pytest.mark.mpi
def test_both_sides_run_and_only_the_broadcast_skips_the_hub_filter(comm, capsys):
    args = ["--backend", "numpy", "--scale", "10", "--limit", "60", "--rounds", "2", "--runs", "1"]
    assert bench_hub_row.main(args) == 0
    if comm.rank != 0:
        return
    lines = capsys.readouterr().out.splitlines()
    for what in ("cc", "bfs"):
        for side in ("on ", "off"):
            assert any(f"{what} broadcast {side}" in line for line in lines)
    level0 = {line.split()[0]: line for line in lines if " L0 top_down" in line}
    assert "filter_partition" in level0["off"]
    assert ("filter_partition" in level0["on"]) == (comm.size == 1)
