"""Graph500 statistics against hand-computed values, nedge of a search, and the root choice
(unique, degree >= 1, the same at every rank count: the mpi tests compare with a one-rank build).

nedge and the roots are also computed on graphs in cupy (``xp`` fixture, gpu-marked) and in
``FAKE_CUPY`` (numpy playing cupy, from test_validate): the same numbers as on the host."""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
from test_validate import FAKE_CUPY, DeviceArray, StagingComm, backend_for

import distbfs.stats as stats_module
from distbfs.comm.single import SingleRankCommunicator
from distbfs.graph import build_graph
from distbfs.hashing import splitmix64
from distbfs.roots import DEFAULT_ROOT_SEED, choose_roots, root_hash
from distbfs.runtime import get_backend
from distbfs.stats import (
    STATISTIC_KEYS,
    format_statistics,
    graph500_statistics,
    search_sums,
    traversed_edges,
)

import graphs

ONE = SingleRankCommunicator()
NUMPY = get_backend("numpy")


def build(comm, case, xp=np):
    src, dst, n, directed = case
    share = graphs.share(src, dst, comm.rank, comm.size)
    return build_graph(comm, *share, n, directed=directed, xp=xp)


@pytest.fixture
def fake_cupy(monkeypatch):
    """``FAKE_CUPY`` registered as the ``cupy`` module for one test."""
    monkeypatch.setitem(sys.modules, "cupy", FAKE_CUPY)
    return FAKE_CUPY


# ---- statistics -----------------------------------------------------------------------------


def test_statistics_by_hand():
    # TEPS per search: 10, 5, 5, 10; seconds per edge 0.1, 0.2, 0.2, 0.1.
    s = graph500_statistics([1.0, 2.0, 4.0, 3.0], [10, 10, 20, 30])
    assert list(s) == list(STATISTIC_KEYS)
    expected = {
        "min_time": 1.0,
        "firstquartile_time": 1.5,
        "median_time": 2.5,
        "thirdquartile_time": 3.5,
        "max_time": 4.0,
        "mean_time": 2.5,
        "stddev_time": math.sqrt(5 / 3),
        "min_nedge": 10,
        "firstquartile_nedge": 10,
        "median_nedge": 15,
        "thirdquartile_nedge": 25,
        "max_nedge": 30,
        "mean_nedge": 17.5,
        "stddev_nedge": math.sqrt(275 / 3),
        # quartiles of seconds per edge: 0.1, 0.15, 0.2, inverted and swapped
        "min_TEPS": 5.0,
        "firstquartile_TEPS": 5.0,
        "median_TEPS": 1 / 0.15,
        "thirdquartile_TEPS": 10.0,
        "max_TEPS": 10.0,
        "mean_TEPS": 7.5,
        "stddev_TEPS": math.sqrt(25 / 3),
        "harmonic_mean_TEPS": 1 / 0.15,
        # stddev(spe) = sqrt(0.01 / 3); / (0.15**2 * sqrt(3))
        "harmonic_stddev_TEPS": math.sqrt(0.01 / 3) / (0.15**2 * math.sqrt(3)),
    }
    for key, value in expected.items():
        assert s[key] == pytest.approx(value, rel=1e-12), key


@pytest.mark.parametrize(
    ("n", "quartiles"),
    [
        # sorted 1..n: q1 = (x[(n-1)//4] + x[n//4]) / 2, q3 = (x[n-1-(n-1)//4] + x[n-1-n//4]) / 2
        (1, (1, 1, 1)),
        (2, (1, 1.5, 2)),
        (5, (2, 3, 4)),
        (6, (2, 3.5, 5)),
        (7, (2, 4, 6)),
        (8, (2.5, 4.5, 6.5)),
        (64, (16.5, 32.5, 48.5)),
    ],
)
def test_quartile_convention(n, quartiles):
    times = np.random.default_rng(n).permutation(np.arange(1, n + 1, dtype=float))
    s = graph500_statistics(times, np.ones(n, dtype=np.int64))
    q1, median, q3 = quartiles
    assert (s["firstquartile_time"], s["median_time"], s["thirdquartile_time"]) == (q1, median, q3)
    assert (s["min_time"], s["max_time"]) == (1, n)
    # nedge 1 everywhere: TEPS order statistics are those of 1 / time, via seconds per edge.
    assert s["thirdquartile_TEPS"] == pytest.approx(1 / q1)
    assert s["firstquartile_TEPS"] == pytest.approx(1 / q3)


def test_single_search_and_edge_cases():
    s = graph500_statistics([0.5], [7])
    assert s["median_TEPS"] == 14 and s["harmonic_mean_TEPS"] == 14
    assert math.isnan(s["stddev_time"]) and math.isnan(s["harmonic_stddev_TEPS"])
    s = graph500_statistics([1.0, 1.0], [0, 10])  # an isolated root: TEPS 0, harmonic mean 0
    assert s["min_TEPS"] == 0 and s["harmonic_mean_TEPS"] == 0 and s["max_TEPS"] == 10
    with pytest.raises(ValueError, match="one time and one nedge per search"):
        graph500_statistics([1.0, 2.0], [3])
    with pytest.raises(ValueError):
        graph500_statistics([], [])


def test_format_like_the_reference():
    s = graph500_statistics([1.0, 2.0, 4.0, 3.0], [10, 10, 20, 30])
    lines = format_statistics(s).splitlines()
    assert [line.split(":")[0] for line in lines] == list(STATISTIC_KEYS)
    assert lines[0] == "min_time:" + " " * 23 + "1"
    assert lines[6] == "stddev_time:                    1.29099444874"  # %.12g
    assert lines[13] == "stddev_nedge:                   9.5742710776"  # %.11g
    assert lines[-1] == "harmonic_stddev_TEPS:           1.48148148148"
    assert all(line[31] == " " and line[32] != " " for line in lines)


# ---- nedge ----------------------------------------------------------------------------------


def levels_on(comm, case, graph, source, xp, backend):
    """Distances of a search on ``graph`` (in ``xp``); without a backend, searched on the host
    and handed over in ``xp``."""
    if backend is not None:
        return graphs.search(graph, source, backend, comm).distances
    return xp.asarray(graphs.search(build(comm, case), source, NUMPY, comm).distances)


def sums(graph, comm, distances, backend):
    """(nedge, reached) of a search, the same from every entry: counted by ``backend`` where it
    counts (the CUDA backend's kernel), in steps in the array module without it, and nedge
    alone."""
    counted = search_sums(graph, comm, distances, backend)
    assert search_sums(graph, comm, distances) == counted
    assert traversed_edges(graph, comm, distances, backend) == counted[0]
    return counted


def check_traversed_edges(comm, xp=np, backend=NUMPY):
    # components(): path 0-1-2-3, triangle 5-6-7, edge 9-10, isolated 4, 8, 11, 12.
    case = graphs.components()
    graph = build(comm, case, xp)
    for source, nedge, nreached in [(0, 3, 4), (6, 3, 3), (10, 1, 2), (12, 0, 1)]:
        distances = levels_on(comm, case, graph, source, xp, backend)
        assert sums(graph, comm, distances, backend) == (nedge, nreached)
    # directed_with_sinks from 0 reaches 0..4; out-edges 0->1, 0->3, 1->2, 3->4 (self-loops gone).
    case = graphs.directed_with_sinks()
    graph = build(comm, case, xp)
    distances = levels_on(comm, case, graph, 0, xp, backend)
    assert sums(graph, comm, distances, backend) == (4, 5)
    # A random undirected graph: the edges of the component, each once (scipy reference).
    src, dst, n, _ = case = graphs.random_graph(500, 400, 3, False)
    graph = build(comm, case, xp)
    distances = levels_on(comm, case, graph, int(src[0]), xp, backend)
    reached = graphs.reference_distances(src, dst, n, False, int(src[0])) >= 0
    keep = src != dst
    edges = np.unique(np.minimum(src, dst)[keep] * n + np.maximum(src, dst)[keep])
    expected = (int(np.count_nonzero(reached[edges // n])), int(np.count_nonzero(reached)))
    assert sums(graph, comm, distances, backend) == expected
    if xp is not np:  # host distances against a device graph are moved over
        assert sums(graph, comm, distances.get(), backend) == expected


@pytest.mark.parametrize("chunk", [None, 3])
def test_traversed_edges(comm, chunk, monkeypatch):
    """Both counts over whole arrays and in chunks of 3 vertices."""
    if chunk is not None:
        monkeypatch.setattr(stats_module, "SUM_CHUNK", chunk)
    check_traversed_edges(comm)


@pytest.mark.mpi
def test_traversed_edges_mpi(comm):
    check_traversed_edges(comm)


# ---- roots ----------------------------------------------------------------------------------


def splitmix64_reference(seed: int, k: int) -> int:
    """Vigna's splitmix64, k-th output (k >= 1) from state ``seed``, in Python integers."""
    mask = 2**64 - 1
    z = (seed + k * 0x9E3779B97F4A7C15) & mask
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
    return z ^ (z >> 31)


def test_splitmix64():
    assert int(splitmix64(0, np.array([1], np.uint64))[0]) == 0xE220A8397B1DCDAF
    counters = np.array([1, 2, 3, 2**40, 2**64 - 1], dtype=np.uint64)
    for seed in (0, 12345, DEFAULT_ROOT_SEED, -1):
        got = splitmix64(seed, counters)
        expected = [splitmix64_reference(seed % 2**64, int(k)) for k in counters]
        assert got.tolist() == expected


ROOT_GRAPHS = {
    "random_undirected": graphs.random_graph(3000, 4000, 21, False),
    "random_directed": graphs.random_graph(3000, 2500, 22, True),
    "components": graphs.components(),
    "loops_and_duplicates": graphs.loops_and_duplicates(),
}


def one_rank_roots(case, count, seed=DEFAULT_ROOT_SEED):
    return choose_roots(build(ONE, case), ONE, count, seed)


def check_roots(comm, name, xp=np):
    src, dst, _, directed = case = ROOT_GRAPHS[name]
    graph = build(comm, case, xp)
    keep = src != dst
    with_edges = np.unique(src[keep] if directed else np.concatenate([src[keep], dst[keep]]))
    for count in (1, 5, 64):
        roots = choose_roots(graph, comm, count)
        assert len(roots) == min(count, with_edges.size)
        assert len(set(roots)) == len(roots)
        assert set(roots) <= set(with_edges.tolist())  # degree >= 1, self-loops not counted
        hashes = root_hash(DEFAULT_ROOT_SEED, np.array(roots, dtype=np.int64))
        assert np.all(hashes[1:] > hashes[:-1])  # in hash order
        assert roots == one_rank_roots(case, count)  # the same at every rank count
        assert comm.allgather_object(roots) == [roots] * comm.size
    # The count smallest hashes among all vertices of degree >= 1.
    hashes = root_hash(DEFAULT_ROOT_SEED, with_edges)
    expected = with_edges[np.argsort(hashes)][:64].tolist()
    assert choose_roots(graph, comm, 64) == expected
    assert choose_roots(graph, comm, 64, seed=7) != choose_roots(graph, comm, 64)
    assert choose_roots(graph, comm, 0) == []


@pytest.mark.parametrize("name", sorted(ROOT_GRAPHS))
def test_roots(comm, name):
    check_roots(comm, name)


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(ROOT_GRAPHS))
def test_roots_mpi(comm, name):
    check_roots(comm, name)


def test_fewer_roots_when_few_vertices_have_edges():
    # Only 0, 1 (an edge) and 3, 4 (an edge) qualify: 2 has a self-loop only, 5..9 nothing.
    case = (np.array([0, 2, 3, 2]), np.array([1, 2, 4, 2]), 10, False)
    assert sorted(one_rank_roots(case, 64)) == [0, 1, 3, 4]
    assert one_rank_roots((np.zeros(0, np.int64), np.zeros(0, np.int64), 4, False), 64) == []
    assert one_rank_roots(case, 0) == []


# ---- array modules --------------------------------------------------------------------------


def test_traversed_edges_in_array_module(comm, xp):
    check_traversed_edges(comm, xp, backend_for(xp))


@pytest.mark.mpi
def test_traversed_edges_in_array_module_mpi(comm, xp):
    check_traversed_edges(comm, xp, backend_for(xp))


@pytest.mark.parametrize("name", sorted(ROOT_GRAPHS))
def test_roots_in_array_module(comm, xp, name):
    check_roots(comm, name, xp)


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(ROOT_GRAPHS))
def test_roots_in_array_module_mpi(comm, xp, name):
    check_roots(comm, name, xp)


def test_fake_cupy_traversed_edges(comm, fake_cupy):
    check_traversed_edges(StagingComm(comm), fake_cupy, backend=None)


@pytest.mark.mpi
def test_fake_cupy_traversed_edges_mpi(comm, fake_cupy):
    check_traversed_edges(StagingComm(comm), fake_cupy, backend=None)


@pytest.mark.parametrize("name", sorted(ROOT_GRAPHS))
def test_fake_cupy_roots(comm, fake_cupy, name):
    check_roots(StagingComm(comm), name, fake_cupy)


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(ROOT_GRAPHS))
def test_fake_cupy_roots_mpi(comm, fake_cupy, name):
    check_roots(StagingComm(comm), name, fake_cupy)


def test_fake_cupy_hashes(fake_cupy):
    vertices = np.array([0, 1, 5, 2**40, 2**62], dtype=np.int64)
    got = root_hash(DEFAULT_ROOT_SEED, fake_cupy.asarray(vertices))
    assert isinstance(got, DeviceArray)
    assert np.array_equal(got.get(), root_hash(DEFAULT_ROOT_SEED, vertices))
    assert root_hash(7, [3, 4]).tolist() == root_hash(7, np.array([3, 4])).tolist()
