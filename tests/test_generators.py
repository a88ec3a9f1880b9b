"""Synthetic graph generators: the bijections, Kronecker quadrant statistics, exact grid structure,
reproducibility, and the same tuples and graph at every rank count (simulated in-process, and real
ranks under mpiexec for the tests marked ``mpi``)."""

from __future__ import annotations

import hashlib
import math

import networkx as nx
import numpy as np
import pytest

import distbfs.generators.chunks as generator_chunks
import distbfs.hashing as hashing
from distbfs.comm.single import SingleRankCommunicator
from distbfs.errors import InputError
from distbfs.generators import (
    DEFAULT_SEED,
    GENERATORS,
    GRAPH500_INITIATOR,
    generate,
    grid2d_edges,
    grid3d_edges,
    grid_num_edges,
    kronecker_edges,
    permute_vertices,
    scramble_edge_indices,
    uniform_edges,
)
from distbfs.graph import build_graph
from distbfs.hashing import splitmix64_sequence

ONE = SingleRankCommunicator()


def host(a):
    """numpy copy of a numpy or cupy array."""
    return a.get() if hasattr(a, "get") else np.asarray(a)


def tuples(kind: str, rank: int, size: int, xp=np, **kw):
    """This (simulated) rank's share of the tuples of one of the test graphs, as numpy."""
    if kind == "kronecker":
        src, dst = kronecker_edges(
            kw.get("scale", 9),
            kw.get("edgefactor", 16),
            kw.get("seed", DEFAULT_SEED),
            rank,
            size,
            xp,
        )
    elif kind == "uniform":
        src, dst = uniform_edges(
            kw.get("scale", 9),
            kw.get("edgefactor", 16),
            kw.get("seed", DEFAULT_SEED),
            rank,
            size,
            xp,
        )
    elif kind == "grid2d":
        src, dst = grid2d_edges(*kw.get("shape", (37, 23)), rank, size, xp)
    else:
        src, dst = grid3d_edges(*kw.get("shape", (7, 5, 9)), rank, size, xp)
    assert src.dtype == xp.int64 and dst.dtype == xp.int64
    return host(src), host(dst)


# ----------------------------------------------------------------------------- hashing, bijections


def test_splitmix64_matches_the_reference_generator():
    # First outputs of Vigna's splitmix64.c seeded with 1234567 (published test vector).
    assert splitmix64_sequence(1234567, 5) == [
        6457827717110365317,
        3203168211198807973,
        9817491932198370423,
        4593380528125082431,
        16408922859458223821,
    ]


def test_mix64_array_equals_host_finalizer(xp):
    values = [0, 1, 2**63, 2**64 - 1, 0x9E3779B97F4A7C15, 123456789]
    x = xp.asarray(np.array(values, dtype=np.uint64))
    got = host(hashing.mix64(xp, x)).tolist()
    assert got == [hashing.mix64_int(v) for v in values]


@pytest.mark.parametrize("scale", range(1, 17))
def test_vertex_permutation_is_a_bijection(xp, scale):
    v = xp.arange(2**scale, dtype=xp.int64)
    p = host(permute_vertices(v, scale, DEFAULT_SEED, xp))
    assert p.dtype == np.int64
    np.testing.assert_array_equal(np.sort(p), np.arange(2**scale))
    if scale >= 4:  # a real shuffle, and a different one for another seed
        assert np.count_nonzero(p == np.arange(2**scale)) < 2**scale // 4
        other = host(permute_vertices(v, scale, DEFAULT_SEED + 1, xp))
        assert np.count_nonzero(p == other) < 2**scale // 4


@pytest.mark.parametrize("bits", [1, 5, 17, 31, 32])
def test_bijection_does_not_depend_on_the_word_size(bits):
    keys = hashing.derive_keys(7, 99, 2 * hashing.BIJECTION_ROUNDS)
    x = np.random.default_rng(bits).integers(0, 2**bits, 5000, dtype=np.uint64)
    narrow = hashing.bijection(np, x.astype(np.uint32), bits, keys)
    wide = hashing.bijection(np, x.copy(), bits, keys)
    np.testing.assert_array_equal(narrow.astype(np.uint64), wide)


@pytest.mark.parametrize("scale", [33, 40])
def test_wide_vertex_permutation_stays_in_range_and_injective(scale):
    v = np.random.default_rng(scale).integers(0, 2**scale, 200_000, dtype=np.int64)
    v = np.unique(v)
    p = permute_vertices(v, scale)
    assert p.min() >= 0 and p.max() < 2**scale
    assert p.max() >= 2**scale // 2  # the top bit is reached
    assert np.unique(p).shape[0] == v.shape[0]


@pytest.mark.parametrize("m", [1, 2, 3, 5, 17, 1000, 12345, 2**16, 2**16 + 1, 3 * 2**12])
def test_scramble_is_a_bijection_of_the_tuple_range(xp, m):
    e = host(scramble_edge_indices(xp.arange(m, dtype=xp.int64), m, DEFAULT_SEED, xp))
    np.testing.assert_array_equal(np.sort(e), np.arange(m))
    if m >= 1000:
        assert np.count_nonzero(e == np.arange(m)) < m // 100


# ----------------------------------------------------------------------------- Kronecker statistics


def quadrant_frequencies(u: np.ndarray, v: np.ndarray, bit: int) -> np.ndarray:
    q = ((u >> bit) & 1) * 2 + ((v >> bit) & 1)
    return np.bincount(q, minlength=4) / q.shape[0]


def assert_close(freq, probs, n):
    probs = np.asarray(probs, dtype=float)
    bound = 5 * np.sqrt(probs * (1 - probs) / n) + 1e-9
    assert np.all(np.abs(freq - probs) <= bound), (freq, probs, bound)


@pytest.mark.parametrize(
    "initiator", [GRAPH500_INITIATOR, (0.25, 0.25, 0.25, 0.25), (0.7, 0.2, 0.1, 0.0)]
)
def test_quadrant_frequencies_follow_the_initiator_at_every_level(initiator):
    scale, ef = 13, 16
    u, v = kronecker_edges(scale, ef, DEFAULT_SEED, 0, 1, initiator=initiator, permute=False)
    n = u.shape[0]
    for bit in range(scale):
        assert_close(quadrant_frequencies(u, v, bit), initiator, n)
    # levels are independent: the row bits of two levels are both set with probability (C+D)^2
    both = np.mean(((u & 1) == 1) & (((u >> 1) & 1) == 1))
    cd = initiator[2] + initiator[3]
    assert_close(np.array([both]), [cd * cd], n)


def test_quadrant_frequencies_at_scale_40():
    # 2**16 tuples of the scale-40 list: every one of the 40 levels (uint64 path) is Kronecker.
    size = 2**24
    u, v = kronecker_edges(40, 1, DEFAULT_SEED, 12345, size, permute=False)
    assert u.shape[0] == 2**16 and u.max() < 2**40 and v.max() < 2**40
    for bit in range(40):
        assert_close(quadrant_frequencies(u, v, bit), GRAPH500_INITIATOR, u.shape[0])


def test_kronecker_degrees_are_skewed_and_uniform_degrees_are_not():
    kron = generate("kronecker", ONE, scale=14)
    deg = np.diff(kron.row_offsets)
    assert deg.max() > 50 * deg.mean()
    assert np.count_nonzero(deg == 0) > kron.n // 10  # Kronecker leaves many vertices isolated
    uni = generate("uniform", ONE, scale=14)
    deg = np.diff(uni.row_offsets)
    assert deg.max() < 2.5 * deg.mean()
    assert np.count_nonzero(deg == 0) == 0


def test_uniform_endpoints_are_uniform():
    u, v = uniform_edges(6, 256, DEFAULT_SEED, 0, 1)  # 16384 tuples on 64 vertices
    for ends in (u, v):
        counts = np.bincount(ends, minlength=64)
        expected = ends.shape[0] / 64
        chi2 = float(np.sum((counts - expected) ** 2 / expected))
        assert chi2 < 63 + 6 * math.sqrt(2 * 63)  # chi-square, 63 degrees of freedom


@pytest.mark.parametrize("scale", [1, 2, 33])
def test_small_and_wide_scales_stay_in_range(scale):
    size = max(1, 2**scale // 4096)
    for make in (kronecker_edges, uniform_edges):
        u, v = make(scale, 2, DEFAULT_SEED, size - 1, size)
        assert u.shape[0] == 2 * 2**scale // size
        assert min(u.min(), v.min()) >= 0 and max(u.max(), v.max()) < 2**scale
        if scale > 32:
            assert max(u.max(), v.max()) >= 2**32


# ----------------------------------------------------------------------------- grids


def expected_grid_degrees(shape):
    coords = np.indices(shape).reshape(len(shape), -1)
    return sum((c > 0).astype(np.int64) + (c < n - 1) for c, n in zip(coords, shape, strict=True))


GRID_SHAPES = [(1, 1), (1, 7), (7, 1), (2, 2), (13, 9), (1, 1, 1), (1, 1, 5), (3, 1, 4), (4, 5, 6)]


@pytest.mark.parametrize("shape", GRID_SHAPES)
def test_grid_edges_and_degrees_are_exact(xp, shape):
    n = math.prod(shape)
    kind = "grid2d" if len(shape) == 2 else "grid3d"
    count = sum(n // s * (s - 1) for s in shape)
    if len(shape) == 2:
        assert count == 2 * shape[0] * shape[1] - shape[0] - shape[1]
    assert grid_num_edges(shape) == count
    src, dst = tuples(kind, 0, 1, xp, shape=shape)
    assert src.shape[0] == count
    assert np.all(src < dst) and np.all(dst < n)
    # the same edges as networkx's lattice, with row-major labels
    lattice = nx.grid_graph(dim=list(shape))  # nodes are coordinates, last axis first
    expected = {
        tuple(sorted(int(np.ravel_multi_index(tuple(reversed(a)), shape)) for a in e))
        for e in lattice.edges()
    }
    assert set(zip(src.tolist(), dst.tolist(), strict=True)) == expected
    assert len(expected) == count  # each edge exactly once
    graph = generate(kind, ONE, shape=shape, xp=xp)
    assert graph.n == n and graph.num_edges == 2 * count and not graph.directed
    np.testing.assert_array_equal(host(graph.local_degrees()), expected_grid_degrees(shape))


def test_grid_labels_are_row_major_with_a_corner_at_zero():
    src, dst = grid2d_edges(3, 4, 0, 1)
    edges = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert (0, 1) in edges and (0, 4) in edges and (1 * 4 + 2, 2 * 4 + 2) in edges
    assert {e for e in edges if 0 in e} == {(0, 1), (0, 4)}
    src, dst = grid3d_edges(2, 3, 4, 0, 1)
    edges = set(zip(src.tolist(), dst.tolist(), strict=True))
    assert {e for e in edges if 0 in e} == {(0, 1), (0, 4), (0, 12)}


# ----------------------------------------------------------------------------- reproducibility


@pytest.mark.parametrize("make", [kronecker_edges, uniform_edges])
def test_seed_reproducibility_and_sensitivity(make):
    a = make(10, 8, 5, 0, 1)
    b = make(10, 8, 5, 0, 1)
    c = make(10, 8, 6, 0, 1)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert np.count_nonzero((a[0] == c[0]) & (a[1] == c[1])) < a[0].shape[0] // 100
    assert not np.array_equal(np.sort(a[0]), np.sort(c[0]))  # not merely reordered


CASES = {
    "kronecker": {"scale": 9, "edgefactor": 16},
    "kronecker-cycle-walk": {"scale": 7, "edgefactor": 3},  # 384 tuples: not a power of two
    "uniform": {"scale": 8, "edgefactor": 5},
    "grid2d": {"shape": (37, 23)},
    "grid3d": {"shape": (7, 5, 9)},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_tuples_at_any_simulated_rank_count(case):
    kind = case.split("-")[0]
    src1, dst1 = tuples(kind, 0, 1, **CASES[case])
    for size in (2, 3, 4, 7):
        shares = [tuples(kind, r, size, **CASES[case]) for r in range(size)]
        counts = [s.shape[0] for s, _ in shares]
        assert max(counts) - min(counts) <= 1
        # the concatenation is the one-rank list, order included (hence the same multiset)
        np.testing.assert_array_equal(np.concatenate([s for s, _ in shares]), src1)
        np.testing.assert_array_equal(np.concatenate([d for _, d in shares]), dst1)


@pytest.mark.parametrize("case", sorted(CASES))
def test_chunk_size_does_not_change_the_tuples(monkeypatch, case):
    kind = case.split("-")[0]
    expected = tuples(kind, 1, 3, **CASES[case])
    for chunk in (1, 7, 1000):
        monkeypatch.setattr(generator_chunks, "CHUNK_EDGES_HOST", chunk)
        got = tuples(kind, 1, 3, **CASES[case])
        np.testing.assert_array_equal(got[0], expected[0])
        np.testing.assert_array_equal(got[1], expected[1])


@pytest.mark.parametrize("case", sorted(CASES))
def test_array_module_gives_the_numpy_tuples(xp, case):
    kind = case.split("-")[0]
    expected = tuples(kind, 1, 2, np, **CASES[case])
    got = tuples(kind, 1, 2, xp, **CASES[case])
    np.testing.assert_array_equal(got[0], expected[0])
    np.testing.assert_array_equal(got[1], expected[1])


def test_kronecker_tuples_are_pinned():
    """The graph of a seed never changes between versions (published benchmark inputs)."""
    src, dst = kronecker_edges(10, 16, DEFAULT_SEED, 0, 1)
    digest = hashlib.sha256(src.tobytes() + dst.tobytes()).hexdigest()
    assert digest == PINNED_KRONECKER_DIGEST


PINNED_KRONECKER_DIGEST = "c25fabfd20d9be942e0acddc941dc27038634fd61fbf7759e000e3a845c69615"


# ----------------------------------------------------------------------------- generate()


def test_generate_builds_the_graph_of_the_tuples():
    graph = generate("kronecker", ONE, scale=10, edgefactor=8, seed=3)
    src, dst = kronecker_edges(10, 8, 3, 0, 1)
    ref = build_graph(ONE, src, dst, 2**10, directed=False)
    assert graph.n == 1024 and not graph.directed
    np.testing.assert_array_equal(graph.row_offsets, ref.row_offsets)
    np.testing.assert_array_equal(graph.column_indices, ref.column_indices)
    assert graph.column_indices.dtype == ref.column_indices.dtype
    rows = np.repeat(np.arange(graph.n), np.diff(graph.row_offsets))
    assert np.all(rows != graph.column_indices)  # self-loops dropped
    assert graph.num_edges < 2 * src.shape[0]  # duplicates and self-loops were present


@pytest.mark.parametrize(
    "kind,params,make",
    [
        ("uniform", {"scale": 9, "edgefactor": 6}, lambda: uniform_edges(9, 6, DEFAULT_SEED, 0, 1)),
        ("grid2d", {"shape": (13, 17)}, lambda: grid2d_edges(13, 17, 0, 1)),
        ("grid3d", {"shape": (5, 6, 7)}, lambda: grid3d_edges(5, 6, 7, 0, 1)),
    ],
)
def test_one_rank_generation_streams_the_same_graph(monkeypatch, kind, params, make):
    """One rank builds from the replayed chunks (build_graph_streamed), in chunks and spans
    smaller than a row: the CSR of the whole tuple list all the same."""
    import distbfs.graph as graph_module

    src, dst = make()
    n = int(max(src.max(), dst.max())) + 1 if kind != "uniform" else 2**9
    ref = build_graph(ONE, src, dst, n, directed=False)
    monkeypatch.setattr(generator_chunks, "CHUNK_EDGES_HOST", 37)
    monkeypatch.setattr(graph_module, "CHUNK", 5)
    graph = generate(kind, ONE, **params)
    np.testing.assert_array_equal(graph.row_offsets, ref.row_offsets)
    np.testing.assert_array_equal(graph.column_indices, ref.column_indices)
    assert graph.num_edges == ref.num_edges


def test_progress_reports_this_ranks_tuples(monkeypatch):
    monkeypatch.setattr(generator_chunks, "CHUNK_EDGES_HOST", 100)
    calls = []
    src, _ = kronecker_edges(8, 4, DEFAULT_SEED, 1, 3, progress=lambda d, t: calls.append((d, t)))
    total = src.shape[0]
    assert calls[0] == (0, total) and calls[-1] == (total, total)
    done = [d for d, _ in calls]
    assert done == sorted(done) and len(calls) == 1 + math.ceil(total / 100)
    calls.clear()
    generate("grid2d", ONE, shape=(10, 10), progress=lambda d, t: calls.append((d, t)))
    assert calls[-1] == (180, 180)


def test_progress_of_a_streamed_build_runs_over_both_passes(monkeypatch):
    """A build that makes the whole list twice reports 2x the tuples, in order, to the end:
    the bar does not sit at 100% through the second pass."""
    import distbfs.generators as generators_module

    monkeypatch.setattr(generators_module, "_streamed", lambda *args: True)
    monkeypatch.setattr(generator_chunks, "CHUNK_EDGES_HOST", 100)
    calls = []
    generate("grid2d", ONE, shape=(10, 10), progress=lambda d, t: calls.append((d, t)))
    done = [d for d, _ in calls]
    assert {t for _, t in calls} == {360} and done == sorted(done)
    assert (180, 360) in calls and done[-1] == 360


BAD = [
    ({"kind": "rmat", "scale": 5}, "kind", "'rmat'"),
    ({"kind": "kronecker"}, "scale", "kronecker"),
    ({"kind": "uniform", "scale": -1}, "scale", "-1"),
    ({"kind": "kronecker", "scale": 0}, "scale", "0"),
    ({"kind": "kronecker", "scale": 41}, "scale", "41"),
    ({"kind": "kronecker", "scale": 2.5}, "scale", "2.5"),
    ({"kind": "kronecker", "scale": 5, "edgefactor": 0}, "edgefactor", "0"),
    ({"kind": "uniform", "scale": 5, "edgefactor": -3}, "edgefactor", "-3"),
    ({"kind": "kronecker", "scale": 40, "edgefactor": 2**23}, "edgefactor", str(2**23)),
    ({"kind": "kronecker", "scale": 5, "seed": -1}, "seed", "-1"),
    ({"kind": "kronecker", "scale": 5, "shape": (4, 4)}, "shape", "kronecker"),
    ({"kind": "grid2d"}, "shape", "grid2d"),
    ({"kind": "grid2d", "shape": (4, 4, 4)}, "shape", "(4, 4, 4)"),
    ({"kind": "grid3d", "shape": (4, 4)}, "shape", "(4, 4)"),
    ({"kind": "grid2d", "shape": (4, 0)}, "shape", "(4, 0)"),
    ({"kind": "grid3d", "shape": (4, -2, 3)}, "shape", "(4, -2, 3)"),
    ({"kind": "grid2d", "shape": 16}, "shape", "16"),
    ({"kind": "grid2d", "shape": (2**21, 2**20)}, "shape", str(2**21)),
    ({"kind": "grid2d", "shape": (4, 4), "scale": 3}, "scale", "grid2d"),
]


@pytest.mark.parametrize(("kwargs", "name", "value"), BAD, ids=[f"{b[1]}={b[2]}" for b in BAD])
def test_bad_parameters_raise_input_error_naming_them(kwargs, name, value):
    kwargs = dict(kwargs)
    kind = kwargs.pop("kind")
    with pytest.raises(InputError) as info:
        generate(kind, ONE, **kwargs)
    assert name in str(info.value) and value in str(info.value)
    assert info.value.all_ranks


def test_bad_initiator_raises_input_error():
    for initiator in [(0.5, 0.5, 0.5, 0.5), (0.5, 0.5), (1.2, -0.2, 0, 0), ("a", 0, 0, 1)]:
        with pytest.raises(InputError, match="initiator"):
            kronecker_edges(5, 1, 1, 0, 1, initiator=initiator)


def test_generators_are_listed():
    assert GENERATORS == ("kronecker", "uniform", "grid2d", "grid3d")


# ----------------------------------------------------------------------------- real ranks


def global_digest(graph, comm) -> str:
    """Hash of the rows in global vertex order: degrees then neighbour lists (every rank)."""
    owned = comm.allgather_array(host(graph.owned_vertices()).astype(np.int64))
    degrees = comm.allgather_array(host(graph.local_degrees()).astype(np.int64))
    columns = comm.allgather_array(host(graph.column_indices).astype(np.int64))
    row_of_edge = np.repeat(owned, degrees)
    by_vertex = np.argsort(owned, kind="stable")
    by_row = np.argsort(row_of_edge, kind="stable")  # columns stay sorted within a row
    assert np.array_equal(owned[by_vertex], np.arange(graph.n))
    payload = [graph.n, graph.num_edges, degrees[by_vertex], columns[by_row]]
    return hashlib.sha256(
        repr(payload[:2]).encode() + b"".join(a.tobytes() for a in payload[2:])
    ).hexdigest()


MPI_CASES = {
    "kronecker": {"scale": 11, "edgefactor": 16},
    "kronecker-cycle-walk": {"scale": 9, "edgefactor": 5, "seed": 77},
    "uniform": {"scale": 10, "edgefactor": 6},
    "grid2d": {"shape": (41, 29)},
    "grid2d-tiny": {"shape": (1, 2)},  # fewer vertices than ranks
    "grid3d": {"shape": (9, 6, 7)},
}


@pytest.mark.mpi
@pytest.mark.parametrize("case", sorted(MPI_CASES))
def test_generated_graph_is_the_same_at_every_rank_count(comm, case):
    kind = case.split("-")[0]
    graph = generate(kind, comm, **MPI_CASES[case])
    assert graph.size == comm.size and graph.rank == comm.rank
    reference = generate(kind, ONE, **MPI_CASES[case])
    assert global_digest(graph, comm) == global_digest(reference, ONE)
    assert graph.num_edges == reference.num_edges


@pytest.mark.mpi
@pytest.mark.parametrize("weights", [None, "uniform:0:9"])
@pytest.mark.parametrize("case", ["kronecker", "grid2d", "grid2d-tiny"])
def test_ranks_without_room_for_the_held_lists_stream_the_same_graph(
    comm, case, weights, monkeypatch
):
    """Where the held lists would not fit (``fits`` says no), every rank replays the whole
    tuple list and keeps its rows (build_graph_streamed, in chunks and spans smaller than a
    row): the graph (and weights) of the held build at that rank count."""
    import distbfs.generators as generators_module
    import distbfs.graph as graph_module

    kind = case.split("-")[0]
    held = generate(kind, comm, weights=weights, **MPI_CASES[case])
    monkeypatch.setattr(generators_module, "fits", lambda *args: False)
    monkeypatch.setattr(generator_chunks, "CHUNK_EDGES_HOST", 37)
    monkeypatch.setattr(graph_module, "CHUNK", 5)
    calls = []

    def build_streamed(*args, _build=generators_module.build_graph_streamed, **kwargs):
        calls.append(kwargs["comm"])
        return _build(*args, **kwargs)

    monkeypatch.setattr(generators_module, "build_graph_streamed", build_streamed)
    streamed = generate(kind, comm, weights=weights, **MPI_CASES[case])
    assert calls == ([comm] if comm.size > 1 else [])  # one rank: held while numpy has room
    assert (streamed.rank, streamed.size, streamed.num_edges) == (
        comm.rank,
        comm.size,
        held.num_edges,
    )
    np.testing.assert_array_equal(streamed.row_offsets, held.row_offsets)
    np.testing.assert_array_equal(streamed.column_indices, held.column_indices)
    if weights is None:
        assert streamed.weights is None
    else:
        assert streamed.weights.dtype == held.weights.dtype
        np.testing.assert_array_equal(streamed.weights, held.weights)


@pytest.mark.mpi
def test_each_rank_makes_its_slice_of_the_tuples(comm):
    src, dst = kronecker_edges(9, 3, 11, comm.rank, comm.size)
    all_src = comm.allgather_array(src)
    all_dst = comm.allgather_array(dst)
    ref_src, ref_dst = kronecker_edges(9, 3, 11, 0, 1)
    np.testing.assert_array_equal(all_src, ref_src)
    np.testing.assert_array_equal(all_dst, ref_dst)
