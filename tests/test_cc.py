"""Connected components (Afforest, ``distbfs.traversals.cc``) on every backend and at any rank
count: the labels equal scipy's components (weakly connected on directed graphs) mapped to the
smallest vertex id of each, on graphs with many components, isolated vertices, self-loops and
duplicates, long permuted paths, grids with edges removed, power-law and directed graphs; the
rounds are the same at every rank count; the count agrees with a BFS-based count; the validator
catches planted faults; the API's sizes, gathering and argument checks.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import distbfs
from distbfs.api.components import member_counts
from distbfs.backends.arrays.components import ComponentState
from distbfs.comm.single import SingleRankCommunicator
from distbfs.engine import GraphResources, SearchPlan
from distbfs.engine.components import (
    ComponentPlan,
    highest_degree_vertex,
    most_frequent,
    sample_vertices,
)
from distbfs.graph import DistGraph
from distbfs.traversals.bfs import run_levels
from distbfs.traversals.cc import afforest
from distbfs.validate import (
    RULE_EDGE_LABELS,
    RULE_LABEL_VALUES,
    RULE_SMALLEST_LABELS,
    validate_components,
)

import graphs

ONE = SingleRankCommunicator()


def reference(case) -> np.ndarray:
    """scipy's (weakly) connected components, each labeled with its smallest vertex id."""
    src, dst, n, directed = case
    matrix = sp.csr_matrix((np.ones(len(src)), (src, dst)), shape=(n, n))
    count, labels = csgraph.connected_components(matrix, directed=directed, connection="weak")
    smallest = np.full(count, n, dtype=np.int64)
    np.minimum.at(smallest, labels, np.arange(n))
    return smallest[labels]


def permuted_paths(count: int, length: int, seed: int):
    """``count`` paths of ``length`` vertices each, under a random relabeling: long chains whose
    smallest vertex sits anywhere along them."""
    rng = np.random.default_rng(seed)
    n = count * length
    perm = rng.permutation(n)
    ids = np.arange(n).reshape(count, length)
    src, dst = ids[:, :-1].ravel(), ids[:, 1:].ravel()
    return perm[src], perm[dst], n, False


def holey_grid(nx: int, ny: int, keep: float, seed: int):
    """A grid with a random share of its edges removed: many components of many shapes."""
    src, dst, n, _ = graphs.grid(nx, ny)
    chosen = np.random.default_rng(seed).random(src.shape[0]) < keep
    return src[chosen], dst[chosen], n, False


def power_law(n: int, m: int, seed: int, directed: bool = False):
    """Endpoints drawn with probability ~ 1 / rank: hubs, and many isolated vertices."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, n + 1)
    p /= p.sum()
    perm = rng.permutation(n)
    return perm[rng.choice(n, m, p=p)], perm[rng.choice(n, m, p=p)], n, directed


def core_with_tail(core: int, edges: int, tail: int, seed: int, smallest_in_tail: bool = False):
    """A dense random core (a direction-optimizing search goes bottom-up there and turns
    top-down again once it is crossed) with a path of ``tail`` vertices off it, which a
    search stopped at its tail leaves unreached but one, and twenty two-vertex components;
    vertex 0 in the core, or (``smallest_in_tail``) at the path's far end, where the tail's
    finish could lower the component's label: the stopped search then counts as partial."""
    rng = np.random.default_rng(seed)
    path = np.arange(core, core + tail)
    pairs = np.arange(core + tail, core + tail + 40).reshape(-1, 2)
    src = np.concatenate([rng.integers(0, core, edges), [0], path[:-1], pairs[:, 0]])
    dst = np.concatenate([rng.integers(0, core, edges), [path[0]], path[1:], pairs[:, 1]])
    n = core + tail + 40
    perm = rng.permutation(n)
    zero = path[-1] if smallest_in_tail else 1  # the vertex that takes id 0
    at = int(np.flatnonzero(perm == 0)[0])
    perm[at], perm[zero] = perm[zero], 0
    return perm[src], perm[dst], n, False


def into_hub(leaves: int):
    """Every edge points into vertex ``leaves`` (the largest id): a directed star whose
    leaves reach the hub but not each other; the hub has no out-edge."""
    src = np.arange(leaves, dtype=np.int64)
    return src, np.full(leaves, leaves, dtype=np.int64), leaves + 1, True


def out_of_hub(leaves: int):
    """Every edge leaves vertex ``leaves``: the leaves are found through in-neighbours only."""
    dst = np.arange(leaves, dtype=np.int64)
    return np.full(leaves, leaves, dtype=np.int64), dst, leaves + 1, True


CASES = {
    **graphs.ANY_RANK_COUNT,
    "many_components": graphs.random_graph(4000, 2500, 3, False),
    "many_components_directed": graphs.random_graph(4000, 2500, 5, True),
    "permuted_paths": permuted_paths(5, 700, 1),
    "one_long_path": permuted_paths(1, 3000, 2),
    "holey_grid": holey_grid(40, 30, 0.55, 4),
    "power_law": power_law(3000, 6000, 6),
    "core_with_tail": core_with_tail(2000, 16000, 40, 9),
    "tail_below_the_core": core_with_tail(2000, 16000, 40, 9, smallest_in_tail=True),
    "power_law_directed": power_law(3000, 5000, 7, True),
    "into_hub": into_hub(300),
    "out_of_hub": out_of_hub(300),
    "isolated_only": (np.zeros(0, np.int64), np.zeros(0, np.int64), 50, False),
    "self_loops_only": (np.arange(10), np.arange(10), 10, True),
}


GIANT = {
    "samples": {},
    "search": {"search_degree": 0.0},
    "partial search": {"search_degree": 0.0, "search_levels": 2},
}
"""How a run finds the component whose vertices skip their remaining edges: Afforest's
samples; a BFS from the highest-degree vertex whatever the degree; one stopped after two
levels (its partial tree, then the samples)."""


def run(case, backend, comm, giant="samples", **plan_options):
    """(global labels, the search) of one run on a plan of its own."""
    graph = graphs.build(case, comm, backend)
    resources = GraphResources(graph, backend, comm)
    options = dict(GIANT[giant], **plan_options)
    if giant != "samples":
        options["search"] = lambda: SearchPlan(resources)
    plan = ComponentPlan(resources, **options)
    search = afforest(plan)
    return graphs.gather_global(comm, search.labels, case[2]), search


def round_rows(search):
    """What every rank count must agree on: per round, the phase, index, links, crossing links,
    roots hooked and jumps (the hook requests sent depend on the local reduction)."""
    return [(r.phase, r.round, r.links, r.crossing, r.hooked, r.jumps) for r in search.rounds]


def search_in_place(backend) -> bool:
    """Whether ``backend`` links in place on one rank."""
    return callable(getattr(backend, "link_in_place", None))


def first_rounds(search):
    """Per set of links (each phase's first round): the phase and its links."""
    return [(r.phase, r.links) for r in search.rounds if r.round == 0]


TAILED = ("core_with_tail", "tail_below_the_core")
"""Cases whose search stops at its tail with 39 of the path's vertices left (``by_levels``)."""


def by_levels(backend, monkeypatch) -> None:
    """Searches on ``backend`` level by level: a fused path (CUDA's) crosses a core of a few
    thousand vertices in one launch, top-down, and never reaches a tail."""
    monkeypatch.setattr(backend, "small_frontier_limit", 0)


@pytest.mark.parametrize("giant", sorted(GIANT))
@pytest.mark.parametrize("name", sorted(CASES))
def test_labels_match_scipy(backend, name, giant, monkeypatch):
    if name in TAILED:
        by_levels(backend, monkeypatch)
    case = CASES[name]
    labels, search = run(case, backend, ONE, giant)
    assert labels.dtype == np.int64
    np.testing.assert_array_equal(labels, reference(case))
    assert search.rounds[-1].phase == "finish"
    if not search_in_place(backend):
        assert search.rounds[-1].crossing == 0
    phases = [r.phase for r in search.rounds]
    assert (phases[0] == "search") == (giant != "samples" and not case[3])
    if phases[0] == "search":
        sampled = any(phase.startswith("sample") for phase in phases)
        hub = highest_degree_vertex(graphs.build(case, ONE, backend), ONE)
        reached = int(np.count_nonzero(labels == labels[hub]))
        assert search.rounds[0].hooked <= reached - 1
        if name in TAILED and giant == "search":  # stopped before the path: whole, or
            assert search.rounds[0].hooked == reached - 1 - 39  # (vertex 0 on it) partial
            assert sampled == (name == "tail_below_the_core")
        elif not sampled:  # the search ran to its end: the hub's whole component
            assert search.rounds[0].hooked == reached - 1
        if not sampled:
            assert search.giant == labels[hub]


def test_a_search_stopped_at_its_tail(backend, monkeypatch):
    """A BFS told to stop at its tail stops where its direction-optimizing levels turn
    top-down again: its last frontier labeled and not expanded, every label it set the whole
    search's, and every unreached vertex beside a reached one beside the last frontier only
    (the property the components' finish relies on). A search that never goes bottom-up runs
    to its end."""
    by_levels(backend, monkeypatch)
    case = CASES["core_with_tail"]
    graph = graphs.build(case, ONE, backend)
    resources = GraphResources(graph, backend, ONE)
    hub = highest_degree_vertex(graph, ONE)
    plan = SearchPlan(resources, "direction_optimizing")
    run = run_levels(plan, hub, tail=True)
    assert run.tail and run.at_limit
    stopped = graphs.host(run.distances).astype(np.int64)
    whole = graphs.host(run_levels(plan, hub).distances).astype(np.int64)
    reached = stopped >= 0
    np.testing.assert_array_equal(stopped[reached], whole[reached])
    last = stopped.max()
    assert 0 < reached.sum() < (whole >= 0).sum()  # the path's far part is left
    src, dst = case[0], case[1]
    crossing = reached[src] != reached[dst]
    inside = np.where(reached[src], stopped[src], stopped[dst])[crossing]
    assert crossing.any() and (inside == last).all()
    top_down = run_levels(SearchPlan(resources, "hybrid"), hub, tail=True)
    assert not top_down.tail and not top_down.at_limit


@pytest.mark.parametrize("giant", ["samples", "search"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_in_place_links_what_the_rounds_link(backend, name, giant):
    """One rank of a backend that links in place (CUDA): the same labels, largest component and
    links per phase as the rounds; one row per phase, and no label or hook requests."""
    if not search_in_place(backend):
        pytest.skip(f"the {backend.name} backend links in rounds only")
    case = CASES[name]
    labels, search = run(case, backend, ONE, giant)
    by_rounds, rounds = run(case, backend, ONE, giant, in_place=False)
    np.testing.assert_array_equal(labels, by_rounds)
    assert search.giant == rounds.giant
    assert first_rounds(search) == first_rounds(rounds)
    assert [r.round for r in search.rounds] == [0] * len(search.rounds)
    assert all(r.label_requests == r.hooks_sent == 0 for r in search.rounds)
    assert sum(r.hooked for r in search.rounds) == sum(r.hooked for r in rounds.rounds)


@pytest.mark.parametrize("sample_rounds", [0, 1, 3])
def test_any_number_of_sample_rounds(backend, sample_rounds):
    """No sampling (the finish links every edge), one, or more than gapbs's two."""
    case = CASES["power_law_directed"]
    labels, search = run(case, backend, ONE, sample_rounds=sample_rounds)
    np.testing.assert_array_equal(labels, reference(case))
    phases = {r.phase for r in search.rounds}
    assert phases == {f"sample {r}" for r in range(sample_rounds)} | {"finish"}


@pytest.mark.parametrize("giant", ["samples", "search"])
def test_kronecker_skips_the_giant_component(backend, giant):
    """On a Kronecker graph the sampled subgraph already joins most vertices, and a BFS from
    the hub reaches the whole giant component: either way it is the final giant one, and the
    finish links a small share of the edges."""
    g = distbfs.Graph.generate("kronecker", scale=12, backend=backend.name, comm=ONE)
    search = g.plan if giant == "search" else None
    result = afforest(ComponentPlan(g.resources, search=search))
    src, dst = (graphs.host(a) for a in g.dist.stored_edges(g.backend.xp))
    want = reference((src, dst, g.num_vertices, False))
    np.testing.assert_array_equal(graphs.host(result.labels), want)
    finish = [r for r in result.rounds if r.phase == "finish"]
    assert result.giant == np.bincount(want).argmax()
    assert finish[0].links < g.num_edges // 20
    phases = {r.phase for r in result.rounds}
    assert ("search" in phases, "sample 0" in phases) == (giant == "search", giant == "samples")


def test_the_api_searches_dense_graphs_only(backend):
    """``connected_components`` finds the giant component by a search on a Kronecker graph (32
    edges a vertex) and by sampling on a grid (4)."""
    kron = distbfs.Graph.generate("kronecker", scale=10, backend=backend.name, comm=ONE)
    assert kron.num_edges >= 8 * kron.num_vertices
    assert distbfs.connected_components(kron).rounds[0].phase == "search"
    src, dst, n, _ = graphs.grid(30, 20)
    grid = distbfs.Graph.from_edges(src, dst, num_vertices=n, directed=False, backend=backend.name)
    assert distbfs.connected_components(grid).rounds[0].phase == "sample 0"


def test_the_components_plan_is_kept_with_the_graph(backend, monkeypatch):
    """The plan (its hub: a pass over the degrees and an all-gather) is built by the first
    ``connected_components`` of a graph and reused by the next ones, which give the same
    labels."""
    import distbfs.engine.components as components

    looked = []

    def counted(*args):
        looked.append(args)
        return highest_degree_vertex(*args)

    monkeypatch.setattr(components, "highest_degree_vertex", counted)
    kron = distbfs.Graph.generate("kronecker", scale=10, backend=backend.name, comm=ONE)
    first, second = (distbfs.connected_components(kron) for _ in range(2))
    assert len(looked) == 1
    assert kron.components_plan() is kron.components_plan()
    assert kron.components_plan().hub == highest_degree_vertex(kron.dist, ONE)
    np.testing.assert_array_equal(graphs.host(first.labels), graphs.host(second.labels))


@pytest.mark.parametrize("size", [1, 3])
def test_reached_bits_seed_the_labels(backend, size):
    """A search's reached vertices as bits (the frontier bitmap layout), their count and the
    smallest; the labels seeded from one rank's bits (owned vertices) or every rank's (a
    replica): the reached take the label, the others their own id, whatever the labels held
    before (a seeded start leaves them unset)."""
    n, xp = 1000, backend.xp
    levels = np.random.default_rng(size).integers(-1, 3, n).astype(np.int32)
    levels[:5] = -1  # UNREACHED
    want = np.full(n, 7, dtype=np.int64)
    want[levels < 0] = np.flatnonzero(levels < 0)
    gathered = []
    for rank in range(size):
        mine = levels[rank::size]
        offsets = xp.zeros(mine.shape[0] + 1, dtype=xp.int64)
        graph = DistGraph(n, 0, False, rank, size, offsets, xp.zeros(0, dtype=xp.int32))
        bits, count, smallest, rows, edges = backend.reached_bits(graph, xp.asarray(mine))
        assert rows is None and edges == 0  # rows listed only where asked for
        flags = np.zeros(8 * bits.shape[0], dtype=bool)
        flags[: mine.shape[0]] = mine >= 0
        np.testing.assert_array_equal(graphs.host(bits), np.packbits(flags, bitorder="little"))
        assert count == int((mine >= 0).sum())
        assert smallest == rank + size * int(np.argmax(mine >= 0))
        state = ComponentState(xp.full(mine.shape[0], -5, dtype=xp.int64), {}, None, graph)
        backend.seed_labels(graph, state, bits, 7)
        np.testing.assert_array_equal(graphs.host(state.labels), want[rank::size])
        gathered.append(graphs.host(bits))
    if size > 1:
        replica = ComponentState(xp.full(n, -5, dtype=xp.int64), {}, None, graph)
        backend.seed_labels(graph, replica, xp.asarray(np.stack(gathered)), 7)
        np.testing.assert_array_equal(graphs.host(replica.labels), want)


@pytest.mark.parametrize("size", [1, 3])
def test_unreached_rows_are_the_rows_left_to_link(backend, size):
    """The owned vertices (global ids) a search did not reach that have edges: after a whole
    search, the only rows its finish links, listed by the pass that packs the reached bits
    (whose bits and counts are those of a pass that lists none), with their out-edges."""
    xp, rng = backend.xp, np.random.default_rng(size)
    for rank in range(size):
        nlocal = 3000
        degrees = rng.integers(0, 3, nlocal)
        offsets = np.concatenate([[0], np.cumsum(degrees)])
        columns = rng.integers(0, nlocal * size, offsets[-1]).astype(np.int32)
        graph = DistGraph(
            nlocal * size,
            int(offsets[-1]),
            False,
            rank,
            size,
            xp.asarray(offsets),
            xp.asarray(columns),
        )
        levels = rng.integers(-1, 3, nlocal).astype(np.int32)  # -1: UNREACHED
        plain = backend.reached_bits(graph, xp.asarray(levels))
        reached = backend.reached_bits(graph, xp.asarray(levels), backend.prepare(graph))
        np.testing.assert_array_equal(graphs.host(reached.bits), graphs.host(plain.bits))
        assert (reached.count, reached.smallest) == (plain.count, plain.smallest)
        assert reached.count == int((levels >= 0).sum())
        rows = graphs.host(reached.rows)
        want = np.flatnonzero((levels < 0) & (degrees > 0)) * size + rank
        assert rows.dtype == (np.int32 if search_in_place(backend) else np.int64)
        np.testing.assert_array_equal(np.sort(rows), want)
        assert reached.edges == int(degrees[levels < 0].sum())


def test_unreached_rows_of_many_words(backend):
    """The reached bits' pass over more vertices than one trip of a device's resident grid
    takes (an H100's or H200's: about 8.6 M; a count that is no whole number of words), with
    long runs of rows left in some words and none in others: the same bits, count, smallest and
    rows as the definition."""
    xp, rng, nlocal = backend.xp, np.random.default_rng(5), 9_000_037
    degrees = rng.integers(0, 2, nlocal)
    degrees[1_000_000:1_100_000] = 1  # every word's rows have edges
    offsets = np.concatenate([[0], np.cumsum(degrees)])
    columns = np.zeros(offsets[-1], dtype=np.int32)
    graph = DistGraph(
        nlocal, int(offsets[-1]), False, 0, 1, xp.asarray(offsets), xp.asarray(columns)
    )
    levels = np.where(rng.random(nlocal) < 0.7, 1, -1).astype(np.int32)
    levels[:40], levels[40] = -1, 1  # the first reached vertex is not the first
    levels[1_000_000:1_050_000] = -1  # words whose rows are all left
    levels[1_050_000:1_100_000] = 2
    reached = backend.reached_bits(graph, xp.asarray(levels), backend.prepare(graph))
    flags = np.zeros(8 * reached.bits.shape[0], dtype=bool)
    flags[:nlocal] = levels >= 0
    np.testing.assert_array_equal(graphs.host(reached.bits), np.packbits(flags, bitorder="little"))
    assert (reached.count, reached.smallest) == (int((levels >= 0).sum()), 40)
    want = np.flatnonzero((levels < 0) & (degrees > 0))
    np.testing.assert_array_equal(np.sort(graphs.host(reached.rows)), want)
    assert reached.edges == int(degrees[levels < 0].sum())


@pytest.mark.parametrize("replica", [False, True], ids=["owned", "replica"])
@pytest.mark.parametrize("size", [1, 3])
def test_rows_take_their_labels_from_another_run(backend, size, replica):
    """The owned rows listed (global ids, in any order) take their labels from another run's
    (a replica indexed by global id, or owned labels in local order); the others keep theirs."""
    xp, rng, nlocal = backend.xp, np.random.default_rng(size), 500
    n = nlocal * size
    for rank in range(size):
        offsets = xp.zeros(nlocal + 1, dtype=xp.int64)
        graph = DistGraph(n, 0, False, rank, size, offsets, xp.zeros(0, dtype=xp.int32))
        local = rng.permutation(nlocal)[: nlocal // 3]
        rows = (local * size + rank).astype(np.int32)
        source = rng.integers(0, n, n if replica else nlocal)
        labels = rng.integers(0, n, nlocal)
        want = labels.copy()
        want[local] = source[rows] if replica else source[local]
        state = ComponentState(xp.asarray(labels), {}, None, graph)
        other = ComponentState(xp.asarray(source), {}, None, graph)
        backend.take_labels(graph, state, other, xp.asarray(rows), replica)
        np.testing.assert_array_equal(graphs.host(state.labels), want)


@pytest.mark.parametrize("every", [False, True], ids=["v>=u", "every"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "compressed"])
@pytest.mark.parametrize("size", [1, 3])
def test_listed_pairs_are_the_rows_edges(backend, size, compressed, every):
    """The edges (u, v), v >= u (``every``: all of them, a search stopped at its tail), of the
    listed owned rows as pairs, self loops included (a backend with replicas: every rank's,
    all-gathered, are a whole search's remainder, linked whole on each), first, then (0, 0)
    pairs to the capacity asked for: the rows' out-edges (``Reached.edges``, which bound their
    pairs) or more."""
    if not callable(getattr(backend, "listed_pairs", None)):
        pytest.skip(f"the {backend.name} backend keeps no replicas")
    xp, rng = backend.xp, np.random.default_rng(size)
    n = 400 * size
    for rank in range(size):
        rows = [np.unique(rng.integers(0, n, rng.integers(0, 12))) for _ in range(400)]
        rows[7] = np.array([7 * size + rank])  # a self loop alone
        offsets = np.concatenate([[0], np.cumsum([r.shape[0] for r in rows])])
        columns = np.concatenate(rows).astype(np.int32)
        graph = DistGraph(
            n, int(offsets[-1]), False, rank, size, xp.asarray(offsets), xp.asarray(columns)
        )
        if compressed:
            graph = backend.compress_graph(graph)
        local = np.union1d(np.flatnonzero([r.shape[0] > 0 for r in rows])[::2], [7])
        listed = (local * size + rank).astype(np.int32)
        ends = zip(local, listed, strict=True)
        want = sorted((int(u), int(v)) for i, u in ends for v in rows[i] if every or v >= u)
        edges = sum(rows[i].shape[0] for i in local)
        assert every == (len(want) == edges)
        for capacity in (edges, edges + 5):
            pairs = backend.listed_pairs(graph, xp.asarray(listed), capacity, every=every)
            pairs = graphs.host(pairs)
            assert pairs.shape[0] == 2 * capacity
            got = list(zip(pairs[0::2].tolist(), pairs[1::2].tolist(), strict=True))
            assert sorted(got[: len(want)]) == want and (7 * size + rank,) * 2 in want
            assert not pairs[2 * len(want) :].any()  # the padding: (0, 0) pairs


@pytest.mark.parametrize("width", [np.int32, np.int64])
def test_a_remainder_replica_holds_its_listed_vertices(backend, width):
    """A whole search's remainder replica: every vertex listed (repeats and the (0, 0) padding
    alike, as all-gathered ``listed_pairs`` give them) holds its own id; the others are never
    read. Given a flag for each listed vertex (a search stopped at its tail), the flagged ones,
    and the label itself, hold the label."""
    if not callable(getattr(backend, "replica_start", None)):
        pytest.skip(f"the {backend.name} backend keeps no replicas")
    xp, rng, n = backend.xp, np.random.default_rng(5), 5000
    offsets = xp.zeros(n + 1, dtype=xp.int64)
    graph = DistGraph(n, 0, False, 0, 1, offsets, xp.zeros(0, dtype=width))
    listed = np.concatenate([rng.integers(0, n, 3000), [0, 0, 0, n - 1]]).astype(width)
    state = backend.replica_start(graph, None, listed=xp.asarray(listed))
    labels = graphs.host(state.labels)
    np.testing.assert_array_equal(labels[listed], listed)
    assert labels.shape == (n,) and labels.dtype == np.int64
    reached = rng.random(n) < 0.5  # a search stopped at its tail: the flagged ones hold it
    label = int(np.flatnonzero(reached)[0])
    flags = reached[listed].astype(np.uint8)
    state = backend.replica_start(
        graph, None, listed=xp.asarray(listed), reached=xp.asarray(flags), label=label
    )
    labels = graphs.host(state.labels)
    np.testing.assert_array_equal(labels[listed], np.where(reached[listed], label, listed))
    assert labels[label] == label


@pytest.mark.parametrize("size", [1, 3])
def test_reached_ends_flag_the_owned_reached_vertices(backend, size):
    """Each rank flags the listed vertices (global ids, repeats allowed) it owns and its reached
    bits have; OR-reduced over the ranks, the flags are exactly the reached listed vertices."""
    if not callable(getattr(backend, "reached_ends", None)):
        pytest.skip(f"the {backend.name} backend keeps no replicas")
    xp, rng, n = backend.xp, np.random.default_rng(size), 3000
    reached = rng.random(n) < 0.3
    listed = np.concatenate([rng.integers(0, n, 2000), [0, 0, n - 1]]).astype(np.int32)
    total = np.zeros(listed.shape[0], dtype=np.uint8)
    for rank in range(size):
        mine = reached[rank::size]
        offsets = xp.zeros(mine.shape[0] + 1, dtype=xp.int64)
        graph = DistGraph(n, 0, False, rank, size, offsets, xp.zeros(0, dtype=xp.int32))
        levels = np.where(mine, 1, -1).astype(np.int32)
        bits = backend.reached_bits(graph, xp.asarray(levels)).bits
        flags = graphs.host(backend.reached_ends(graph, xp.asarray(listed), bits))
        assert flags.dtype == np.uint8
        np.testing.assert_array_equal(flags, (listed % size == rank) & reached[listed])
        total |= flags
    np.testing.assert_array_equal(total, reached[listed])


def test_the_hub_is_the_smallest_of_the_highest_degree():
    src, dst = [0, 3, 3, 5, 5], [1, 1, 2, 1, 2]
    directed = distbfs.Graph.from_edges(src, dst, directed=True, backend="numpy")
    assert highest_degree_vertex(directed.dist, ONE) == 3  # out-degrees 1, 2, 2 at 0, 3, 5
    undirected = distbfs.Graph.from_edges(src, dst, directed=False, backend="numpy")
    assert highest_degree_vertex(undirected.dist, ONE) == 1
    empty = distbfs.Graph.from_edges([], [], num_vertices=0, backend="numpy")
    assert highest_degree_vertex(empty.dist, ONE) == -1


def test_count_agrees_with_bfs():
    """The components counted by BFS from the smallest vertex not yet reached, again and again
    (the undirected graph of a directed one), have the same number and labels."""
    for case in (CASES["holey_grid"], CASES["many_components_directed"]):
        src, dst, n, _ = case
        g = distbfs.Graph.from_edges(src, dst, num_vertices=n, directed=False, backend="numpy")
        by_bfs = np.full(n, -1, dtype=np.int64)
        count = 0
        while (by_bfs < 0).any():
            root = int(np.flatnonzero(by_bfs < 0)[0])
            by_bfs[distbfs.bfs(g, root).distances >= 0] = root
            count += 1
        directed = distbfs.Graph.from_edges(src, dst, num_vertices=n, backend="numpy")
        result = distbfs.connected_components(directed if case[3] else g)
        assert result.count == count
        np.testing.assert_array_equal(result.labels, by_bfs)


def test_api_result(backend):
    case = CASES["components"]  # {0..3}, {4}, {5, 6, 7}, {8}, {9, 10}, {11}, {12}
    src, dst, n, _ = case
    g = distbfs.Graph.from_edges(src, dst, num_vertices=n, directed=False, backend=backend.name)
    result = distbfs.connected_components(g, validate=True, timing=True)
    np.testing.assert_array_equal(graphs.host(result.labels), reference(case))
    assert result.count == 7 and result.validated and result.largest == (0, 4)
    np.testing.assert_array_equal(graphs.host(result.component_labels), [0, 4, 5, 8, 9, 11, 12])
    np.testing.assert_array_equal(graphs.host(result.sizes), [4, 1, 3, 1, 2, 1, 1])
    assert result.edges == g.num_undirected_edges and result.teps > 0
    assert all(row.seconds for row in result.rounds)
    local = distbfs.connected_components(g, gather=False)
    assert local.labels is None
    np.testing.assert_array_equal(graphs.host(local.local_labels), reference(case))
    np.testing.assert_array_equal(graphs.host(local.local_vertices), np.arange(n))


def test_bad_arguments():
    g = distbfs.Graph.from_edges([0], [1], backend="numpy")
    with pytest.raises(TypeError, match=r"^graph: expected a distbfs.Graph"):
        distbfs.connected_components("g")
    with pytest.raises(TypeError, match=r"^gather: expected True or False"):
        distbfs.connected_components(g, gather=1)
    with pytest.raises(ValueError, match="sample_rounds and samples must be >= 0"):
        ComponentPlan(g.resources, sample_rounds=-1)
    with pytest.raises(ValueError, match="search_levels >= 1, got 2, 1024, 0"):
        ComponentPlan(g.resources, search_levels=0)
    with pytest.raises(ValueError, match="the numpy backend cannot link in place"):
        ComponentPlan(g.resources, in_place=True)


def test_samples_are_hashed_and_the_mode_is_the_smallest():
    a, b = sample_vertices(1000, 1024), sample_vertices(1000, 1024)
    np.testing.assert_array_equal(a, b)
    assert a.min() >= 0 and a.max() < 1000 and len(np.unique(a)) > 500
    assert sample_vertices(0, 1024).shape == (0,)
    assert most_frequent(np.array([5, 3, 5, 3, 7])) == 3 and most_frequent(np.zeros(0)) == -1


@pytest.mark.parametrize("count", [0, 1, 255, 256, 1024, 1500, 4096, 4097])
def test_the_largest_label_found_in_place_is_the_hosts(backend, count):
    """A backend that finds the largest label on the device agrees with ``most_frequent``,
    ties (the smallest wins) and several tiles of samples included; past its bound it leaves
    the samples to the host."""
    if not callable(getattr(backend, "largest_in_place", None)):
        pytest.skip(f"the {backend.name} backend finds the largest label on the host")
    case = graphs.grid(40, 50)
    graph = graphs.build(case, ONE, backend)
    plan = ComponentPlan(GraphResources(graph, backend, ONE))
    state = plan.start()
    rng = np.random.default_rng(count)
    labels = rng.integers(0, 40, case[2]) * 37 % 41  # a few labels, often tied
    state.labels[...] = backend.xp.asarray(labels)
    samples = rng.integers(0, case[2], count)
    found = backend.largest_in_place(graph, state, backend.xp.asarray(samples))
    if count > 4096:
        assert found is None
    else:
        assert int(found) == most_frequent(labels[samples])


# --- validation: planted faults ----------------------------------------------------------------


def planted(case, labels, comm, backend):
    graph = graphs.build(case, comm, backend)
    local = backend.xp.asarray(np.asarray(labels, dtype=np.int64)[comm.rank :: comm.size])
    return graph, local


FAULTS = [
    # (labels of the path 0-1-2-3-4 and the isolated 5, the rule, the smallest offender)
    ([0, 0, 0, 0, 0, 6], RULE_LABEL_VALUES, 5),  # not a vertex id <= 5
    ([0, -1, 0, 0, 0, 5], RULE_LABEL_VALUES, 1),  # negative
    ([0, 0, 0, 1, 1, 5], RULE_SMALLEST_LABELS, 3),  # vertex 1 does not carry 1
    ([0, 0, 0, 3, 3, 5], RULE_EDGE_LABELS, 2),  # edge {2, 3}: its smallest endpoint
    ([0, 0, 0, 0, 4, 5], RULE_EDGE_LABELS, 3),
]
PATH_AND_ISOLATED = (np.arange(4), np.arange(1, 5), 6, False)


def check_faults(backend, comm):
    graph, good = planted(PATH_AND_ISOLATED, [0, 0, 0, 0, 0, 5], comm, backend)
    validate_components(graph, comm, good)
    for labels, rule, vertex in FAULTS:
        graph, bad = planted(PATH_AND_ISOLATED, labels, comm, backend)
        with pytest.raises(distbfs.ValidationError) as caught:
            validate_components(graph, comm, bad)
        assert (caught.value.rule, caught.value.vertex) == (rule, vertex), str(caught.value)


def test_validator_catches_planted_faults(backend):
    check_faults(backend, ONE)


def test_validator_checks_directed_edges_and_shapes(backend):
    case = (np.array([3, 1]), np.array([0, 2]), 4, True)  # 3 -> 0, 1 -> 2
    graph, labels = planted(case, [0, 1, 1, 3], ONE, backend)
    with pytest.raises(distbfs.ValidationError, match=r"edge 3 -> 0 joins vertex 3 of label 3"):
        validate_components(graph, ONE, labels)
    with pytest.raises(ValueError, match="labels must be an integer array of the 4 owned"):
        validate_components(graph, ONE, backend.xp.zeros(3, dtype=backend.xp.int64))


# --- at any rank count (mpiexec -n 1..4 python -m pytest --with-mpi -m mpi) -------------------


@pytest.mark.mpi
@pytest.mark.parametrize("mode", ["default", "rounds", "no room"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_any_rank_count(backend, backend_comm, name, mode, monkeypatch):
    """The labels are scipy's. Several ranks of a backend that links in place (CUDA) link into
    replicas of the labels: the same largest component and links per phase as the rounds, and
    a merge after the sampled passes and after the finish. Otherwise (numpy, told not to, or no
    room for a replica: ``fits`` says no), striped rounds: those of one rank. (One GPU alone
    links in place: its passes count links as the threads' races fall, which
    test_in_place_links_what_the_rounds_link checks.)"""
    if mode == "no room":
        monkeypatch.setattr("distbfs.engine.components.fits", lambda *args: False)
    case = CASES[name]
    labels, search = run(case, backend, backend_comm, in_place=False if mode == "rounds" else None)
    np.testing.assert_array_equal(labels, reference(case))
    _, alone = run(case, backend, ONE, in_place=False)
    if backend_comm.size > 1 and mode == "default" and search_in_place(backend):
        assert [r.phase for r in search.rounds if r.phase.startswith("merge")] == [
            "merge samples",
            "merge",
        ]
        assert search.giant == alone.giant
        linked = [row for row in first_rounds(search) if not row[0].startswith("merge")]
        assert linked == first_rounds(alone)
        assert all(r.label_requests == 0 for r in search.rounds)
    elif backend_comm.size > 1 or not search_in_place(backend):
        assert round_rows(search) == round_rows(alone)


SEARCHED = [
    "random_undirected",
    "power_law",
    "core_with_tail",
    "tail_below_the_core",
    "many_components",
    "one_long_path",
    "star",
    "isolated_only",
    "fewer_vertices_than_ranks",
    "one_vertex",
]
"""Undirected cases whose giant component is also found by a search at any rank count."""


@pytest.mark.mpi
@pytest.mark.parametrize("mode", ["default", "rounds"])
@pytest.mark.parametrize("giant", ["search", "partial search"])
@pytest.mark.parametrize("name", SEARCHED)
def test_searched_giant_at_any_rank_count(backend, backend_comm, name, giant, mode, monkeypatch):
    """The labels are scipy's and the search's row (the vertices it joined) that of one rank;
    striped rounds are those of one rank; replicas merge nothing when the search ran to its end
    (every rank links the remainder's edges whole), and after the sampling and the finish when
    it stopped at its level limit."""
    if name in TAILED:
        by_levels(backend, monkeypatch)
    case = CASES[name]
    labels, search = run(case, backend, backend_comm, giant, in_place=mode != "rounds" and None)
    np.testing.assert_array_equal(labels, reference(case))
    _, alone = run(case, backend, ONE, giant, in_place=False)
    assert round_rows(search)[0] == round_rows(alone)[0]
    assert search.giant == alone.giant
    merges = [r.phase for r in search.rounds if r.phase.startswith("merge")]
    if backend_comm.size > 1 and mode == "default" and search_in_place(backend):
        sampled = any(r.phase.startswith("sample") for r in alone.rounds)
        assert merges == (["merge samples", "merge"] if sampled else [])
    elif backend_comm.size > 1 or not search_in_place(backend):
        assert round_rows(search) == round_rows(alone)


@pytest.mark.mpi
def test_api_at_any_rank_count(backend, backend_comm):
    case = CASES["power_law_directed"]
    src, dst, n, _ = case
    mine = graphs.share(src, dst, backend_comm.rank, backend_comm.size)
    g = distbfs.Graph.from_edges(
        *mine, num_vertices=n, backend=backend.name, comm=backend_comm, directed=True
    )
    result = distbfs.connected_components(g, validate=True)
    want = reference(case)
    np.testing.assert_array_equal(graphs.host(result.labels), want)
    roots, sizes = np.unique(want, return_counts=True)
    np.testing.assert_array_equal(graphs.host(result.component_labels), roots)
    np.testing.assert_array_equal(graphs.host(result.sizes), sizes)
    assert result.count == roots.shape[0]


@pytest.mark.mpi
@pytest.mark.parametrize("whole", [False, True])
@pytest.mark.parametrize("replicated", [False, True])
def test_seed_bounds_in_one_all_reduce(comm, whole, replicated):
    """The hub search's label is the smallest vertex any rank reached; the remainder's pair
    bound the most out-edges any rank's rows left have, only where a whole search's finish runs
    on replicas (else 0)."""
    plan = SimpleNamespace(comm=comm, replicated=replicated)
    smallest, edges = 100 - 7 * comm.rank, 3 + 5 * comm.rank
    label, pairs = ComponentPlan.seed_bounds(plan, smallest, edges, whole)
    assert label == 100 - 7 * (comm.size - 1)
    assert pairs == (3 + 5 * (comm.size - 1) if whole and replicated else 0)
    assert (type(label), type(pairs)) == (int, int)


@pytest.mark.mpi
def test_validator_at_any_rank_count(backend, backend_comm):
    check_faults(backend, backend_comm)


@pytest.mark.parametrize("giant", [-1, 0, 3, 7, 40])
@pytest.mark.parametrize("labels", [[0, 0, 0, 3, 3, 0, 3, 7, 3, 0, 9, 9], [0, 1, 2], [0, 0, 0], []])
def test_member_counts_with_the_giant_apart(xp, labels, giant):
    """The labels of the vertices off their root (vertex i's label is not i), with how many carry
    each, whichever label is called the giant (the most frequent, another, one not among them,
    none) and however many carry it (all, none, no labels at all)."""
    labels = np.array(labels, dtype=np.int64)
    owned = np.arange(labels.shape[0], dtype=np.int64)
    found, counts = member_counts(xp, xp.asarray(labels), xp.asarray(owned), giant)
    found, counts = graphs.host(found), graphs.host(counts)
    assert found.dtype == counts.dtype == np.int64
    got = dict(zip(found.tolist(), counts.tolist(), strict=True))
    assert len(got) == found.shape[0]  # each label once
    want, many = np.unique(labels[labels != owned], return_counts=True)
    assert got == dict(zip(want.tolist(), many.tolist(), strict=True))
