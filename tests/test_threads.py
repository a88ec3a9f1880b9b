"""One-rank construction and generation cut into pieces on host threads (``distbfs.threads``):
the same graph as in one piece, whatever the cut."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import distbfs.generators.chunks as chunks
import distbfs.graph as graph_module
import distbfs.threads as threads
from distbfs.comm.single import SingleRankCommunicator
from distbfs.generators import generate


def arrays(g):
    return g.row_offsets, g.column_indices, g.weights


def test_spans_cover_in_order():
    assert threads.spans(np, 10, 4, 100) == [(0, 10)]  # below MIN_PIECE: one piece
    cut = threads.spans(np, 5 * threads.MIN_PIECE, 3, 1 << 40)
    assert len(cut) == 3 and cut[0][0] == 0 and cut[-1][1] == 5 * threads.MIN_PIECE
    assert all(a[1] == b[0] for a, b in itertools.pairwise(cut))
    assert len(threads.spans(np, 100, 1, 30)) == 4  # at most `most` a piece
    assert threads.parallel_map(lambda x: x * x, [1, 2, 3], 3) == [1, 4, 9]


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_build_in_pieces_is_the_same_graph(monkeypatch, directed, weighted):
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 3000, 20_000), rng.integers(0, 3000, 20_000)
    weights = rng.integers(1, 9, 20_000).astype(np.float64) if weighted else None
    one = graph_module.build_graph(
        SingleRankCommunicator(), src, dst, 3000, directed=directed, weights=weights
    )
    monkeypatch.setattr(threads, "MIN_PIECE", 1000)
    monkeypatch.setattr(graph_module, "host_threads", lambda ranks: 3)
    pieces = graph_module.build_graph(
        SingleRankCommunicator(), src, dst, 3000, directed=directed, weights=weights
    )
    for a, b in zip(arrays(one), arrays(pieces), strict=True):
        if a is None:
            assert b is None
        else:
            np.testing.assert_array_equal(a, b)


def test_generation_in_pieces_is_the_same_graph(monkeypatch):
    comm = SingleRankCommunicator()
    one = generate("kronecker", comm, scale=11, weights="uniform:1:255")
    monkeypatch.setattr(threads, "MIN_PIECE", 1000)
    monkeypatch.setattr(graph_module, "host_threads", lambda ranks: 3)
    monkeypatch.setattr(chunks, "host_threads", lambda ranks: 3)
    seen = []
    pieces = generate(
        "kronecker", comm, scale=11, weights="uniform:1:255", progress=lambda d, t: seen.append(d)
    )
    for a, b in zip(arrays(one), arrays(pieces), strict=True):
        np.testing.assert_array_equal(a, b)
    assert seen == sorted(seen) and seen[-1] == 16 * 2**11  # progress in order, to the end
