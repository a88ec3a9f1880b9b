"""Multi-source BFS and depth limits, on every backend and at any rank count (tests marked
``mpi`` run again under ``mpiexec -n P``, P = 1..4).

Several sources: one search with all of them at level 0; every distance equals scipy's minimum
over the sources, every source is its own parent, the forest passes the tree rules (checked
here on the global arrays and by ``distbfs.validate``), duplicates are one source, an isolated
source and all vertices as sources work, and the direction heuristic starts from the sources'
counts. Depth limits 0, 1, 2 and large on structured and random graphs under every strategy:
exact levels up to D, unreached beyond, and no level past D runs (the fused paths included:
the emulated numpy fused path here, the cooperative kernel in the ``gpu`` tests). Validation
catches results that break the rules of either. The API and the command line (``--source
1,2,3``, ``--depth-limit``, ``sssp --max-distance``) check their arguments with one-line errors;
shortest paths stop at a distance limit with the tree of the unlimited search.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph
from test_cli import assert_input_error, clean_env, ok, run
from test_fused_paths import FusedNumpy
from test_sssp import reference as sssp_reference
from test_sssp import weighted

import distbfs
from distbfs.constants import NO_PATH, UNREACHED
from distbfs.engine import GraphResources, SearchPlan
from distbfs.engine.direction import DirectionOptimizing
from distbfs.engine.plan import PathPlan
from distbfs.errors import ValidationError
from distbfs.runtime import get_backend
from distbfs.traversals.bfs import bfs_levels
from distbfs.traversals.sssp import delta_stepping
from distbfs.validate import RULE_DISTANCES, RULE_SOURCE, RULE_TREE_EDGE_LEVELS, validate

import graphs

STRATEGIES = ("two_phase", "hybrid", "contract_expand", "direction_optimizing")
CASES = {
    name: graphs.ANY_RANK_COUNT[name]
    for name in (
        "path",
        "grid",
        "components",
        "directed_with_sinks",
        "random_undirected",
        "random_directed",
        "fewer_vertices_than_ranks",
        "one_vertex",
    )
}
LARGE = 10**6
EVERYWHERE = pytest.mark.parametrize(
    "where", ["one_rank", pytest.param("ranks", marks=pytest.mark.mpi)]
)
"""Runs a test body in the plain suite and again, marked ``mpi``, under ``mpiexec -n P``."""


def reference(case, sources, depth_limit=None) -> np.ndarray:
    """scipy's distance to the nearest source (UNREACHED where none, or beyond the limit)."""
    src, dst, n, directed = case
    keep = src != dst
    a = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    d = csgraph.shortest_path(
        a, directed=directed, unweighted=True, indices=np.unique(sources)
    ).reshape(-1, n)
    nearest = d.min(axis=0)
    if depth_limit is not None:
        nearest[nearest > depth_limit] = np.inf
    return np.where(np.isinf(nearest), UNREACHED, nearest).astype(np.int64)


def check_forest(case, sources, distances, preds, depth_limit=None) -> np.ndarray:
    """Global arrays: distances equal ``reference``; every source its own parent; unreached
    vertices have none; every other reached vertex's parent is one level up and joined to it by
    an edge. Returns the expected distances."""
    src, dst, n, directed = case
    expected = reference(case, sources, depth_limit)
    np.testing.assert_array_equal(graphs.host(distances), expected)
    if preds is None:
        return expected
    preds = graphs.host(preds)
    roots = np.unique(sources)
    np.testing.assert_array_equal(preds[roots], roots)
    assert np.all(preds[expected == UNREACHED] == UNREACHED)
    others = np.flatnonzero((expected != UNREACHED) & ~np.isin(np.arange(n), roots))
    np.testing.assert_array_equal(expected[preds[others]], expected[others] - 1)
    tails, heads = graphs.unique_edges(src, dst, n, directed)
    assert np.isin(preds[others] * max(n, 1) + others, tails * max(n, 1) + heads).all()
    return expected


def search(graph, sources, backend, comm, strategy, depth_limit=None, predecessors=True):
    """One search on a plan of its own, validated by ``distbfs.validate`` (sources, limit)."""
    plan = SearchPlan.build(graph, backend, comm, strategy=strategy)
    result = bfs_levels(plan, sources, predecessors=predecessors, depth_limit=depth_limit)
    validate(graph, comm, sources, result.distances, result.predecessors, depth_limit=depth_limit)
    return result


def gathered(comm, result, n):
    preds = (
        None if result.predecessors is None else graphs.gather_global(comm, result.predecessors, n)
    )
    return graphs.gather_global(comm, result.distances, n), preds


def source_lists(n: int) -> list[list[int]]:
    """Spread sources, duplicates (out of order), one vertex alone in a list, every vertex."""
    spread = sorted({0, n // 3, n - 1})
    return [spread, [n - 1, 0, n - 1, 0, n // 2], [n // 2], list(range(n))]


def check_levels(result, expected, depth_limit=None) -> None:
    """The level rows: level 0 holds the distinct sources; the spans add up to the depth plus
    one; no row expands a level at or past the limit."""
    depth = int(expected.max())
    assert sum(lv.span for lv in result.levels) == depth + 1
    if depth_limit is not None:
        assert all(lv.level + lv.span - 1 <= depth_limit for lv in result.levels)
        expanded = [lv for lv in result.levels if lv.edges_inspected or lv.discovered]
        assert all(lv.level < depth_limit for lv in expanded)


# ---------------------------------------------------------------------------- several sources


@EVERYWHERE
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_multi_source_distances_are_the_nearest_sources(
    where, backend, backend_comm, name, strategy
):
    case = CASES[name]
    n = case[2]
    graph = graphs.build(case, backend_comm, backend)
    for sources in source_lists(n):
        result = search(graph, sources, backend, backend_comm, strategy)
        distances, preds = gathered(backend_comm, result, n)
        expected = check_forest(case, sources, distances, preds)
        check_levels(result, expected)
        assert result.levels[0].frontier == len(set(sources))
        assert result.source == (
            sources[0] if len(set(sources)) == 1 else tuple(sorted(set(sources)))
        )


@EVERYWHERE
def test_isolated_source_among_others(where, backend, backend_comm):
    """An isolated vertex in the list is its own tree of one; the others search as usual."""
    case = graphs.components()  # vertices 4, 8, 11 and 12 are isolated
    graph = graphs.build(case, backend_comm, backend)
    for strategy in STRATEGIES:
        result = search(graph, [4, 0, 9], backend, backend_comm, strategy)
        distances, preds = gathered(backend_comm, result, case[2])
        expected = check_forest(case, [0, 4, 9], distances, preds)
        assert (
            expected[4] == 0 and preds[4] == 4 and expected[[1, 2, 3, 10]].tolist() == [1, 2, 3, 1]
        )


@EVERYWHERE
def test_multi_source_through_the_api(where, backend, backend_comm):
    """``distbfs.bfs`` with a list: validated, ``source`` the distinct sources (an int for one),
    ``num_reached`` and ``depth`` counting every source."""
    src, dst, n, directed = case = graphs.grid(13, 9)
    mine = graphs.share(src, dst, backend_comm.rank, backend_comm.size)
    g = distbfs.Graph.from_edges(
        *mine, num_vertices=n, directed=directed, backend=backend, comm=backend_comm
    )
    r = distbfs.bfs(g, np.array([116, 0, 0]), predecessors=True, validate=True)
    expected = check_forest(case, [0, 116], r.distances, r.predecessors)
    assert r.source == (0, 116) and r.validated and r.depth == int(expected.max())
    assert r.num_reached == n
    assert distbfs.bfs(g, [5, 5]).source == 5
    assert distbfs.bfs(g, (5,)).source == 5


@EVERYWHERE
def test_direction_heuristic_starts_from_the_sources(where, comm):
    """n_u = n - sources, m_f = the sources' out-edges, m_u = the others' (all-reduced); every
    vertex a source: level 0 goes bottom-up (m_f > n_u = 0) and finds nothing more."""
    backend = get_backend("numpy")
    src, dst, n, directed = case = graphs.random_graph(3000, 12000, 2, False)
    graph = graphs.build(case, comm, backend)
    tails, _ = graphs.unique_edges(src, dst, n, directed)
    degree = np.bincount(tails, minlength=n)
    plan = SearchPlan.build(graph, backend, comm, strategy="direction_optimizing")
    sources = np.arange(0, n, 7)
    state = plan.start(sources, False)
    counts = DirectionOptimizing(plan, state, len(sources)).counts
    assert (counts.frontier, counts.unvisited) == (len(sources), n - len(sources))
    assert counts.frontier_edges == int(degree[sources].sum())
    assert counts.unexplored_edges == int(degree.sum() - degree[sources].sum())
    everything = search(
        graph, np.arange(n), backend, comm, "direction_optimizing", predecessors=True
    )
    distances, preds = gathered(comm, everything, n)
    assert not distances.any() and np.array_equal(preds, np.arange(n))
    assert [lv.direction for lv in everything.levels] == ["bottom_up"]
    one = search(graph, [0], backend, comm, "direction_optimizing")
    assert one.levels[0].direction == "top_down"


# -------------------------------------------------------------------------------- depth limits


@EVERYWHERE
@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_depth_limits(where, backend, backend_comm, name, strategy):
    """Limits 0, 1, 2 and large from one source and from several: exact levels up to D,
    unreached (distance and predecessor) beyond, no level past D."""
    case = CASES[name]
    n = case[2]
    graph = graphs.build(case, backend_comm, backend)
    for sources in ([0], sorted({0, n - 1})):
        for limit in (0, 1, 2, LARGE):
            result = search(graph, sources, backend, backend_comm, strategy, depth_limit=limit)
            distances, preds = gathered(backend_comm, result, n)
            expected = check_forest(case, sources, distances, preds, depth_limit=limit)
            check_levels(result, expected, limit)


@EVERYWHERE
def test_depth_limit_through_the_api(where, backend, backend_comm):
    src, dst, n, directed = case = graphs.path(40)
    mine = graphs.share(src, dst, backend_comm.rank, backend_comm.size)
    g = distbfs.Graph.from_edges(
        *mine, num_vertices=n, directed=directed, backend=backend, comm=backend_comm
    )
    for strategy in STRATEGIES:
        r = distbfs.bfs(g, 10, depth_limit=3, predecessors=True, validate=True, strategy=strategy)
        check_forest(case, [10], r.distances, r.predecessors, depth_limit=3)
        assert r.depth == 3 and r.edges_traversed == 7  # the degrees of 7..13, halved
        assert r.num_reached == 7
        assert distbfs.bfs(g, 10, depth_limit=0, strategy=strategy).num_reached == 1
        assert distbfs.bfs(g, [0, 39], depth_limit=LARGE, strategy=strategy).depth == 19


@EVERYWHERE
@pytest.mark.parametrize("strategy", ["hybrid", "contract_expand", "direction_optimizing"])
def test_fused_path_stops_at_the_depth_limit(where, comm, strategy):
    """The emulated fused path (one rank: fused runs; several: each rank's run on its copy of
    the graph) ends at D: a path searched whole by one fused run otherwise."""
    case = graphs.path(60)
    for sources, limit in (([0], 1), ([0], 17), ([0, 59], 5), ([30], 40)):
        backend = FusedNumpy(small_frontier_limit=10**9)
        graph = graphs.build(case, comm, backend)
        result = search(graph, sources, backend, comm, strategy, depth_limit=limit)
        distances, preds = gathered(comm, result, case[2])
        expected = check_forest(case, sources, distances, preds, depth_limit=limit)
        check_levels(result, expected, limit)
        if int(expected.max()) == limit:  # the limit stopped the run, at level D
            assert backend.runs == [(0, limit)]
            assert [lv.fused for lv in result.levels] == [True] * limit + [False]
        else:  # the run went on until the frontier was empty
            assert backend.runs == [(0, int(expected.max()) + 1)]


# -------------------------------------------------------------------------------- validation


def run_validate(comm, case, sources, distances, preds=None, depth_limit=None):
    graph = graphs.build(case, comm, get_backend("numpy"))
    r, p = comm.rank, comm.size
    local_preds = None if preds is None else preds[r::p]
    validate(
        graph, comm, sources, distances[r::p].astype(np.int32), local_preds, depth_limit=depth_limit
    )


def expect(comm, case, sources, distances, preds, rule, vertex, fragment, depth_limit=None):
    with pytest.raises(ValidationError) as info:
        run_validate(comm, case, sources, distances, preds, depth_limit)
    err = info.value
    assert (err.rule, err.vertex) == (rule, vertex), str(err)
    assert fragment in str(err)
    assert len(set(comm.allgather_object(str(err)))) == 1


def valid_forest(case, sources, depth_limit=None):
    """Distances and a parent forest by the rules (the smallest parent one level up)."""
    src, dst, n, directed = case
    d = reference(case, sources, depth_limit)
    preds = np.full(n, UNREACHED, dtype=np.int64)
    tails, heads = graphs.unique_edges(src, dst, n, directed)
    for u, v in zip(tails.tolist(), heads.tolist(), strict=True):
        if d[u] != UNREACHED and d[v] == d[u] + 1 and (preds[v] < 0 or u < preds[v]):
            preds[v] = u
    roots = np.unique(sources)
    preds[roots] = roots
    return d, preds


@EVERYWHERE
def test_validation_of_several_sources_and_limits(where, comm):
    case = graphs.grid(9, 7)
    for sources, limit in (([0, 62], None), ([31], 2), ([0, 8, 62], 1), ([5], 0)):
        d, p = valid_forest(case, sources, limit)
        run_validate(comm, case, sources, d, p, limit)
        run_validate(comm, case, sources, d, None, limit)
    d, p = valid_forest(case, [0, 62])
    bad = d.copy()
    bad[62] = 1
    expect(comm, case, [0, 62], bad, p, RULE_SOURCE, 62, "source 62 has distance 1, not 0")
    bad = p.copy()
    bad[62] = 61
    expect(comm, case, [0, 62], d, bad, RULE_SOURCE, 62, "source 62 has predecessor 61")
    bad = d.copy()
    bad[1] = 0
    expect(
        comm,
        case,
        [0, 62],
        bad,
        None,
        RULE_DISTANCES,
        1,
        "vertex 1 has level 0 but is not a source",
    )
    bad = p.copy()
    far = int(np.flatnonzero(d == 3)[0])
    bad[far] = int(np.flatnonzero(d == 1)[0])
    expect(comm, case, [0, 62], d, bad, RULE_TREE_EDGE_LEVELS, far, "has level 3 but its parent")


@EVERYWHERE
def test_validation_catches_labels_beyond_the_limit(where, comm):
    case = graphs.path(30)
    d, p = valid_forest(case, [10], 3)
    full, full_preds = valid_forest(case, [10])
    message = "vertex 0 has distance 10, beyond the depth limit 3"
    expect(comm, case, [10], full, full_preds, RULE_DISTANCES, 0, message, 3)
    bad = d.copy()
    bad[13] = UNREACHED  # its neighbour 12 has level 2 < D: (A)
    expect(comm, case, [10], bad, None, RULE_DISTANCES, 13, "vertex 13 is unreached", 3)
    run_validate(comm, case, [10], d, p, 3)
    run_validate(comm, case, [10], full, full_preds, 30)


# ----------------------------------------------------------------------------------- CUDA


@pytest.mark.parametrize("backend", [pytest.param("cuda", marks=pytest.mark.gpu)], indirect=True)
def test_cooperative_grid_stops_at_max_levels(backend):
    """The fused kernel on a path: ``max_levels`` levels run in one launch, the labels stop at
    ``level + max_levels``, the frontier is that level's vertex; the next run goes on."""
    from distbfs.comm.single import SingleRankCommunicator

    one = SingleRankCommunicator()
    src, dst, n, _ = graphs.path(3000)
    graph = graphs.build((src, dst, n, False), one, backend)
    state = backend.start(graph, [0], True, backend.prepare(graph))
    assert backend.run_small_levels(graph, state, 0, 10**9, max_levels=7) == 7
    labels = graphs.host(state.labels)
    assert labels[:8].tolist() == list(range(8)) and (labels[8:] == UNREACHED).all()
    assert state.frontier_size == 1 and graphs.host(state.vertex_frontier).tolist() == [7]
    assert backend.run_small_levels(graph, state, 7, 10**9, max_levels=0) == 0
    assert backend.run_small_levels(graph, state, 7, 10**9) == n - 8 + 1
    assert graphs.host(state.labels).tolist() == list(range(n))
    assert graphs.host(state.preds).tolist() == [0, *range(n - 1)]


@EVERYWHERE
@pytest.mark.parametrize("backend", [pytest.param("cuda", marks=pytest.mark.gpu)], indirect=True)
@pytest.mark.parametrize("strategy", ["hybrid", "contract_expand", "direction_optimizing"])
def test_depth_limit_inside_a_fused_span_on_the_gpu(where, backend, backend_comm, strategy):
    """Fused spans that would run a whole path end at D: one rank (its fused run), several
    (each rank's run on its copy of the graph, and the peer run where the replica is off)."""
    from distbfs.backends.cuda.backend import CudaBackend

    case = graphs.path(3000)
    for cuda in (CudaBackend(), backend):  # backend: no replica
        graph = graphs.build(case, backend_comm, cuda)
        for sources, limit in (([0], 5), ([0], 1000), ([0, 2999], 40), ([1500], 2000)):
            result = search(graph, sources, cuda, backend_comm, strategy, depth_limit=limit)
            distances, preds = gathered(backend_comm, result, case[2])
            expected = check_forest(case, sources, distances, preds, depth_limit=limit)
            check_levels(result, expected, limit)


@pytest.mark.parametrize("backend", [pytest.param("cuda", marks=pytest.mark.gpu)], indirect=True)
def test_cuda_start_marks_every_source(backend):
    from distbfs.comm.single import SingleRankCommunicator

    one = SingleRankCommunicator()
    src, dst, n, _ = graphs.random_graph(200, 600, 3, False)
    graph = graphs.build((src, dst, n, False), one, backend)
    sources = [5, 31, 32, 33, 64, 199, 5]
    state = backend.start(graph, sources, True, backend.prepare(graph))
    mask = np.unpackbits(graphs.host(state.visited_mask).view(np.uint8), bitorder="little")[:n]
    distinct = sorted(set(sources))
    assert np.flatnonzero(mask).tolist() == distinct
    assert np.flatnonzero(graphs.host(state.labels) == 0).tolist() == distinct
    assert graphs.host(state.preds)[distinct].tolist() == distinct
    assert sorted(graphs.host(state.vertex_frontier).tolist()) == distinct
    assert state.frontier_size == len(distinct)


# ------------------------------------------------------------------------- API arguments


def test_bad_sources_and_limits_are_refused():
    g = distbfs.Graph.from_edges(np.arange(9), np.arange(1, 10), directed=False, backend="numpy")
    with pytest.raises(ValueError, match=r"^source: vertex 99 is out of range for a graph of 10"):
        distbfs.bfs(g, [1, 99])
    with pytest.raises(ValueError, match=r"^source: vertex -2 is out of range"):
        distbfs.bfs(g, np.array([-2, 3]))
    with pytest.raises(ValueError, match=r"^source: expected at least one vertex id"):
        distbfs.bfs(g, [])
    with pytest.raises(TypeError, match=r"^source: expected integer vertex ids, got dtype float"):
        distbfs.bfs(g, [1.5, 2])
    with pytest.raises(TypeError, match=r"^source: .*bool"):
        distbfs.bfs(g, [True])
    with pytest.raises(ValueError, match=r"^depth_limit: expected an integer >= 0, got -1"):
        distbfs.bfs(g, 0, depth_limit=-1)
    with pytest.raises(TypeError, match=r"^depth_limit: expected an integer"):
        distbfs.bfs(g, 0, depth_limit=1.5)
    with pytest.raises(ValueError, match=r"^max_distance: expected a number >= 0, got -1"):
        distbfs.sssp(g, 0, max_distance=-1)
    with pytest.raises(ValueError, match=r"^max_distance: expected a number >= 0, got nan"):
        distbfs.sssp(g, 0, max_distance=float("nan"))


# ------------------------------------------------------------------ shortest paths, a limit


@EVERYWHERE
@pytest.mark.parametrize("name", ["grid", "random_undirected", "random_directed", "components"])
def test_sssp_max_distance(where, backend, backend_comm, name):
    """Distances within X as without the limit, with the same tree; NO_PATH and UNREACHED
    beyond; validated through the API."""
    case = graphs.ANY_RANK_COUNT[name]
    src, dst, n, directed = case
    weights = weighted(case, 5)
    graph = graphs.build(case, backend_comm, backend, weights)
    plan = PathPlan(GraphResources(graph, backend, backend_comm))
    want, want_preds = sssp_reference(case, weights, 0)
    for limit in (0.0, 7.0, 23.5, float(np.max(want[np.isfinite(want)])), np.inf):
        search = delta_stepping(plan, 0, predecessors=True, max_distance=limit)
        distances = graphs.gather_global(backend_comm, search.distances, n)
        preds = graphs.gather_global(backend_comm, search.predecessors, n)
        inside = want <= limit
        np.testing.assert_array_equal(distances, np.where(inside, want, NO_PATH))
        np.testing.assert_array_equal(preds, np.where(inside, want_preds, UNREACHED))
    mine = graphs.share(src, dst, backend_comm.rank, backend_comm.size)
    g = distbfs.Graph.from_edges(
        *mine,
        weights=weights[backend_comm.rank :: backend_comm.size],
        num_vertices=n,
        directed=directed,
        backend=backend,
        comm=backend_comm,
    )
    r = distbfs.sssp(g, 0, max_distance=7, predecessors=True, validate=True)
    np.testing.assert_array_equal(graphs.host(r.distances), np.where(want <= 7, want, NO_PATH))
    assert r.validated


# ---------------------------------------------------------------------------- command line

GOOD = "0 1\n1 2\n2 3\n3 4\n4 5\n5 6\n6 7\n7 8\n8 9\n"


def test_cli_several_sources_and_a_depth_limit(tmp_path):
    graph = tmp_path / "g.txt"
    graph.write_text(GOOD)
    case = (np.arange(9), np.arange(1, 10), 10, True)
    out = ok(
        run(
            "bfs",
            graph,
            "--source",
            "1,2,3",
            "--predecessors",
            "--validate",
            "--output",
            tmp_path / "m",
            cwd=tmp_path,
        )
    )
    assert "sources 1, 2, 3: reached 9 of 10 vertices" in out and "validation: passed" in out
    check_forest(
        case,
        [1, 2, 3],
        np.load(tmp_path / "m.distances.npy"),
        np.load(tmp_path / "m.predecessors.npy"),
    )
    out = ok(
        run(
            "bfs",
            graph,
            "--source",
            "0",
            "--depth-limit",
            "2",
            "--validate",
            "--output",
            tmp_path / "d",
            cwd=tmp_path,
        )
    )
    assert "depth 2 (3 levels, depth limit 2)" in out
    check_forest(case, [0], np.load(tmp_path / "d.distances.npy"), None, depth_limit=2)


@pytest.mark.parametrize(
    ("args", "needles"),
    [
        (["--source", "1,,2"], ["--source", "'1,,2'"]),
        (["--source", "1,99"], ["--source: vertex 99 is out of range for a graph of 10 vertices"]),
        (["--source", "0", "--depth-limit", "-1"], ["--depth-limit", "-1"]),
        (["--source", "0", "--depth-limit", "x"], ["--depth-limit", "'x'"]),
    ],
)
def test_cli_bad_sources_and_limits(tmp_path, args, needles):
    (tmp_path / "g.txt").write_text(GOOD)
    assert_input_error(run("bfs", "g.txt", *args, cwd=tmp_path), *needles)


def test_cli_sssp_max_distance(tmp_path):
    graph = tmp_path / "w.txt"
    graph.write_text("0 1 2\n1 2 3\n2 3 4\n3 4 5\n")
    out = ok(
        run(
            "sssp",
            graph,
            "--source",
            "0",
            "--max-distance",
            "5",
            "--predecessors",
            "--validate",
            "--output",
            tmp_path / "s",
            cwd=tmp_path,
        )
    )
    assert "reached 3 of 5 vertices, max distance 5" in out and "validation: passed" in out
    assert np.load(tmp_path / "s.distances.npy").tolist() == [0, 2, 5, np.inf, np.inf]
    assert np.load(tmp_path / "s.predecessors.npy").tolist() == [0, 0, 1, -1, -1]
    assert_input_error(
        run("sssp", graph, "--source", "0", "--max-distance", "-1", cwd=tmp_path),
        "--max-distance",
        "-1",
    )


def test_depth_limit_benchmark_runs_on_numpy(tmp_path):
    """``benchmarks/bench_depth_limit.py`` at a small scale on the host: the ratio table for
    both strategies and D = 1, 2, 3, and its JSON."""
    script = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_depth_limit.py"
    report = tmp_path / "depth.json"
    args = ["--backend", "numpy", "--scale", "9", "--roots", "2", "--json", str(report)]
    proc = subprocess.run(
        [sys.executable, str(script), *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "full 0..D ms" in proc.stdout
    document = json.loads(report.read_text())
    strategies = [series["strategy"] for series in document["results"]]
    assert strategies == ["hybrid", "direction_optimizing"]
    for series in document["results"]:
        assert [row["depth"] for row in series["rows"]] == [1, 2, 3]
        assert all(row["limited_ms"] > 0 for row in series["rows"])
