"""Validation of shortest-path results (``distbfs.validate.validate_sssp``): correct results
(scipy's dijkstra with a tree of tight edges, and distbfs's delta-stepping) pass on weighted
directed and undirected graphs with integer, float32, float64 and zero weights and unreachable
parts; planted faults are caught with the right rule and the right first offending vertex, the
same error on every rank.

Every test body runs twice: in a plain ``pytest`` on one rank, and marked ``mpi`` under
``mpiexec -n P python -m pytest --with-mpi -m mpi tests/test_validate_sssp.py`` for P = 1..4.
Results and faults are global arrays sliced ``[rank::size]``, so a fault lands on whichever rank
owns its vertex and the expectations hold at every rank count. The expected (rule, vertex) of a
fault comes from its design and is checked against ``reference_offender``, a direct global
restatement of the rules. ``FakeCupy`` (from ``test_validate``) runs the device path without a
GPU, and small ``EDGE_CHUNK`` values make the relaxation check take many steps.
"""

from __future__ import annotations

import itertools
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph
from test_validate import FAKE_CUPY, StagingComm, backend_for

import distbfs.validate.common as validate_common
from distbfs.constants import NO_PATH, UNREACHED
from distbfs.engine.plan import GraphResources, PathPlan
from distbfs.errors import ValidationError
from distbfs.graph import build_graph
from distbfs.runtime import get_backend
from distbfs.traversals.sssp import delta_stepping
from distbfs.validate import (
    RULE_ACYCLIC,
    RULE_DISTANCE_VALUES,
    RULE_EDGE_RELAXATION,
    RULE_REACHED_SET,
    RULE_SOURCE,
    RULE_TREE_EDGES,
    validate_sssp,
)

import graphs

NUMPY = get_backend("numpy")

# ---- graphs: (src, dst, n, directed, weights or None) ----------------------------------------


def random_weighted(n, m, seed, directed, kind, isolated=0, parts=1):
    """``m`` random edges in each of ``parts`` equal parts of the first ``n - isolated``
    vertices (the last ``isolated`` stay isolated), with weights of ``kind``: "int" (1..9),
    "zero" (0..3), "real" (float64 in [0, 1), not float32 values), "float32", or None."""
    rng = np.random.default_rng(seed)
    bounds = np.linspace(0, n - isolated, parts + 1).astype(np.int64)
    src = np.concatenate([rng.integers(a, b, m) for a, b in itertools.pairwise(bounds)])
    dst = np.concatenate([rng.integers(a, b, m) for a, b in itertools.pairwise(bounds)])
    total = src.size
    weights = {
        "int": lambda: rng.integers(1, 10, total).astype(np.float64),
        "zero": lambda: rng.integers(0, 4, total).astype(np.float64),
        "real": lambda: rng.random(total),
        "float32": lambda: rng.random(total).astype(np.float32),
        None: lambda: None,
    }[kind]()
    return src, dst, n, directed, weights


ZERO_CYCLE = [57, 101, 23, 88]
ZERO_PAIR = [70, 12]


def with_zero_cycles(case):
    """``case`` plus a zero-weight cycle through ``ZERO_CYCLE`` and a zero-weight pair of edges
    both ways between ``ZERO_PAIR`` (what a tree may close into a cycle of equal distances)."""
    src, dst, n, directed, weights = case
    cycle = np.array(ZERO_CYCLE, np.int64)
    a, b = ZERO_PAIR
    extra_src = np.concatenate([cycle, [a, b]])
    extra_dst = np.concatenate([np.roll(cycle, -1), [b, a]])
    zeros = np.zeros(extra_src.size, dtype=weights.dtype)
    return (
        np.concatenate([src, extra_src]),
        np.concatenate([dst, extra_dst]),
        n,
        directed,
        np.concatenate([weights, zeros]),
    )


def unweighted(case):
    return (*case, None)


GRAPHS = {
    "int_directed": random_weighted(300, 1200, 21, True, "int", isolated=4),
    "int_undirected": random_weighted(300, 700, 22, False, "int", isolated=4),
    "real_directed": random_weighted(260, 900, 23, True, "real", isolated=5, parts=2),
    "real_undirected": random_weighted(260, 500, 24, False, "real", isolated=5, parts=2),
    "float32_undirected": random_weighted(200, 600, 25, False, "float32"),
    "zero_directed": with_zero_cycles(random_weighted(240, 800, 26, True, "zero", isolated=3)),
    "zero_undirected": with_zero_cycles(random_weighted(240, 500, 27, False, "zero", isolated=3)),
    "unweighted_directed": random_weighted(200, 500, 28, True, None, isolated=2),
    "components": unweighted(graphs.components()),
    "fewer_vertices_than_ranks": (np.array([0]), np.array([1]), 2, False, np.array([2.5])),
}
FAULT_GRAPHS = [
    "int_directed",
    "int_undirected",
    "real_directed",
    "real_undirected",
    "zero_directed",
    "zero_undirected",
]


def build(comm, case, xp=np):
    src, dst, n, directed, weights = case
    r, p = comm.rank, comm.size
    mine = None if weights is None else xp.asarray(weights[r::p])
    return build_graph(
        comm,
        xp.asarray(src[r::p]),
        xp.asarray(dst[r::p]),
        n,
        directed=directed,
        xp=xp,
        weights=mine,
    )


def stored_edges(case):
    """(tails, heads, float64 weights) of the stored edges, sorted by (tail, head): no
    self-loops, both directions of an undirected edge, of duplicates the smallest weight."""
    src, dst, n, directed, weights = case
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    w = np.ones(src.size) if weights is None else np.asarray(weights, np.float64)
    if not directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.tile(w, 2)
    keep = src != dst
    keys, w = src[keep] * n + dst[keep], w[keep]
    order = np.lexsort((w, keys))
    keys, w = keys[order], w[order]
    first = np.ones(keys.size, bool)
    first[1:] = keys[1:] != keys[:-1]
    return keys[first] // n, keys[first] % n, w[first]


def reference_result(case, source):
    """(distances, predecessors) by scipy: dijkstra's distances and a tree of fewest hops over
    the tight edges (d(u) + w == d(v)), acyclic even over zero weights."""
    n = case[2]
    tails, heads, w = stored_edges(case)
    a = sp.csr_matrix((w, (tails, heads)), shape=(n, n))  # explicit zeros stay edges
    d = csgraph.dijkstra(a, directed=True, indices=source)
    tight = np.isfinite(d[tails]) & (d[tails] + w == d[heads])
    t = sp.csr_matrix((np.ones(int(tight.sum())), (tails[tight], heads[tight])), shape=(n, n))
    _, preds = csgraph.breadth_first_order(t, source, directed=True, return_predecessors=True)
    preds = np.where(preds < 0, UNREACHED, preds).astype(np.int64)
    preds[source] = source
    return d, preds


def bfs_reached(case, source):
    src, dst, n, directed, _ = case
    return graphs.reference_distances(src, dst, n, directed, source) != UNREACHED


def reference_offender(case, source, d, p, reached=None):
    """(rule, smallest offending vertex) of a global result by the rules restated directly, or
    None when it is valid."""
    n = case[2]
    tails, heads, w = stored_edges(case)
    ids = np.arange(n)
    if not (d[source] == 0 and p[source] == source):
        return RULE_SOURCE, source
    bad = ~(d >= 0)
    if bad.any():
        return RULE_DISTANCE_VALUES, int(np.flatnonzero(bad)[0])
    violated = np.isfinite(d[tails]) & (d[heads] > d[tails] + w)
    if violated.any():
        return RULE_EDGE_RELAXATION, int(heads[violated].min())
    finite, has, is_vertex = d < NO_PATH, p != UNREACHED, (p >= 0) & (p < n)
    needs = finite & (ids != source)
    bad = (needs & ~(has & is_vertex)) | (~finite & has)
    v = ids[needs & is_vertex]
    u = p[v]
    keys, wanted = tails * n + heads, u * n + v
    at = np.searchsorted(keys, wanted)
    found = at < keys.size
    found[found] = keys[at[found]] == wanted[found]
    weight = np.full(v.size, np.nan)
    weight[found] = w[at[found]]
    bad[v[~(found & (d[u] < NO_PATH) & (d[v] == d[u] + weight))]] = True
    if bad.any():
        return RULE_TREE_EDGES, int(np.flatnonzero(bad)[0])
    current = np.where(needs, ids, source)
    for _ in range(n):
        current = p[current]
    stuck = needs & (current != source)
    if stuck.any():
        return RULE_ACYCLIC, int(np.flatnonzero(stuck)[0])
    if reached is not None and (finite != reached).any():
        return RULE_REACHED_SET, int(np.flatnonzero(finite != reached)[0])
    return None


def fault_source_of(case):
    """The source of the fault tests: the vertex of largest degree."""
    src, dst, n, _, _ = case
    return int(np.argmax(np.bincount(np.concatenate([src, dst]), minlength=n)))


def sources_of(case):
    return sorted({0, fault_source_of(case), case[2] - 1})


# ---- running the validator ---------------------------------------------------------------------


def run(comm, graph, source, d, p, reached=None, xp=np):
    """validate_sssp() on this rank's slices of global arrays, handed over in ``xp``."""
    r, s = comm.rank, comm.size
    mine = None if reached is None else xp.asarray(reached[r::s])
    validate_sssp(graph, comm, source, xp.asarray(d[r::s]), xp.asarray(p[r::s]), mine)


def expect_error(comm, graph, source, d, p, reached, rule, vertex, fragment="", xp=np):
    """validate_sssp() fails on every rank with ``rule`` at ``vertex``, the same message
    everywhere."""
    with pytest.raises(ValidationError) as info:
        run(comm, graph, source, d, p, reached, xp)
    err = info.value
    assert (err.rule, err.vertex) == (rule, vertex), str(err)
    assert fragment in str(err), str(err)
    assert len(set(comm.allgather_object(str(err)))) == 1
    return err


def path_search(comm, graph, source, backend=NUMPY):
    """distbfs's delta-stepping from ``source``: this rank's distances and predecessors."""
    search = delta_stepping(
        PathPlan(GraphResources(graph, backend, comm)), source, predecessors=True
    )
    return search.distances, search.predecessors


# ---- correct results pass ----------------------------------------------------------------------


def check_valid_outputs_pass(comm, name, xp=np, backend=NUMPY):
    """scipy's result passes, with and without the BFS reached set (also as host arrays against
    a device graph); distbfs's delta-stepping (``backend``, unless None) passes and its
    distances are scipy's."""
    case = GRAPHS[name]
    graph = build(comm, case, xp)
    for source in sources_of(case):
        d, p = reference_result(case, source)
        assert reference_offender(case, source, d, p, bfs_reached(case, source)) is None
        run(comm, graph, source, d, p, bfs_reached(case, source), xp)
        run(comm, graph, source, d, p, None, xp)
        if xp is not np:
            run(comm, graph, source, d, p, bfs_reached(case, source))
        if backend is not None:
            distances, preds = path_search(comm, graph, source, backend)
            validate_sssp(graph, comm, source, distances, preds)
            found = graphs.gather_global(comm, distances, case[2])
            np.testing.assert_array_equal(found, d)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_valid_outputs_pass(comm, name):
    check_valid_outputs_pass(comm, name)


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_valid_outputs_pass_mpi(comm, name):
    check_valid_outputs_pass(comm, name)


def test_reached_set_of_the_real_bfs_passes(comm):
    """The reached set of distbfs's BFS on the same (weighted) graph agrees."""
    case = GRAPHS["real_directed"]
    graph = build(comm, case)
    source = fault_source_of(case)
    d, p = reference_result(case, source)
    levels = graphs.search(graph, source, NUMPY, comm).distances
    r, s = comm.rank, comm.size
    validate_sssp(graph, comm, source, d[r::s], p[r::s], levels != UNREACHED)


# ---- planted faults ----------------------------------------------------------------------------


def context(case, source):
    d, p = reference_result(case, source)
    n = case[2]
    tails, heads, w = stored_edges(case)
    finite = d < NO_PATH
    return {
        "case": case,
        "d": d,
        "p": p,
        "n": n,
        "source": source,
        "reached": finite,
        "ids": np.arange(n),
        "inner": np.flatnonzero(finite & (np.arange(n) != source)),
        "unreached": np.flatnonzero(~finite),
        "edges": (tails, heads, w),
        "delta": 0.25 * float(w[w > 0].min()),
        "directed": case[3],
    }


def search_fault(ctx, candidates, plant, rule):
    """The first planting ``plant(v)`` -> (d, p) over ``candidates`` whose reference offender
    breaks ``rule``, as a fault tuple; None when no candidate does."""
    for v in candidates:
        d, p = plant(int(v))
        found = reference_offender(ctx["case"], ctx["source"], d, p)
        if found is not None and found[0] == rule:
            return d, p, None, rule, found[1], ""
    return None


def fault_source(ctx):
    s, other = ctx["source"], int(ctx["inner"][0])
    for bad in (1.0, np.nan):
        d = ctx["d"].copy()
        d[s] = bad
        yield d, ctx["p"], None, RULE_SOURCE, s, f"source {s} has distance {bad!r}, not 0"
    p = ctx["p"].copy()
    p[s] = other
    yield ctx["d"], p, None, RULE_SOURCE, s, f"source {s} has predecessor {other}, not itself"


def fault_distance_values(ctx):
    inner = ctx["inner"]
    v, u = int(inner[-1]), int(inner[len(inner) // 2])
    for bad in (np.nan, -1.0, -np.inf):
        d = ctx["d"].copy()
        d[v] = bad
        yield d, ctx["p"], None, RULE_DISTANCE_VALUES, v, f"vertex {v} has distance {bad!r}"
    d = ctx["d"].copy()
    d[v], d[u] = np.nan, -2.0
    yield d, ctx["p"], None, RULE_DISTANCE_VALUES, min(u, v), "neither NO_PATH (inf)"


def fault_distance_too_large(ctx):
    """A larger distance breaks only the edges into v (its tree edge among them)."""
    v = int(ctx["inner"][len(ctx["inner"]) // 3])
    d = ctx["d"].copy()
    d[v] += 1.0
    yield d, ctx["p"], None, RULE_EDGE_RELAXATION, v, f"vertex {v} has distance {float(d[v])!r}"
    d, p = ctx["d"].copy(), ctx["p"].copy()
    d[v], p[v] = NO_PATH, UNREACHED
    yield d, p, None, RULE_EDGE_RELAXATION, v, f"vertex {v} is unreached but"


def fault_distance_too_small(ctx):
    """Slightly smaller: caught at a head its tight out-edges now relax (edge relaxation), or,
    for a vertex without one, at its own tree edge."""

    def lower(v):
        d = ctx["d"].copy()
        d[v] -= ctx["delta"]
        return d, ctx["p"]

    candidates = [v for v in ctx["inner"] if ctx["d"][v] >= ctx["delta"]]
    for rule in (RULE_EDGE_RELAXATION, RULE_TREE_EDGES):
        fault = search_fault(ctx, candidates, lower, rule)
        assert fault is not None, rule
        yield fault


def fault_unreached_given_distance(ctx):
    """An unreached vertex with a finite distance (and no predecessor): caught at a head of its
    edges, or, isolated, for lacking a predecessor."""

    def reach(v):
        d = ctx["d"].copy()
        d[v] = 1.0
        return d, ctx["p"]

    for rule in (RULE_EDGE_RELAXATION, RULE_TREE_EDGES):
        fault = search_fault(ctx, ctx["unreached"], reach, rule)
        if fault is not None:
            yield fault


def fault_parent_not_an_in_neighbour(ctx):
    d, n = ctx["d"], ctx["n"]
    tails, heads, _ = ctx["edges"]
    edges = set((tails * n + heads).tolist())
    inner = ctx["inner"]
    v = int(inner[len(inner) // 2])
    linked = {int(u) for u in inner if int(u) * n + v in edges or v * n + int(u) in edges}
    stranger = next(int(u) for u in inner if u != v and int(u) not in linked)
    shown = f"{stranger} -> {v}" if ctx["directed"] else f"{{{stranger}, {v}}}"
    p = ctx["p"].copy()
    p[v] = stranger
    message = f"vertex {v} has parent {stranger} but the graph has no edge {shown}"
    yield d, p, None, RULE_TREE_EDGES, v, message
    p = ctx["p"].copy()
    p[v] = v
    yield d, p, None, RULE_TREE_EDGES, v, "has no edge"
    if ctx["directed"]:  # an out-neighbour that is no in-neighbour: looked up in its own row
        for v in inner[::-1]:
            v = int(v)
            outs = heads[(tails == v) & ctx["reached"][heads] & (heads != ctx["source"])]
            strangers = [int(u) for u in outs if int(u) * n + v not in edges]
            if strangers:
                p = ctx["p"].copy()
                p[v] = strangers[0]
                yield d, p, None, RULE_TREE_EDGES, v, f"no edge {strangers[0]} -> {v}"
                return
        raise AssertionError("no out-neighbour that is not an in-neighbour")


def fault_parent_not_tight(ctx):
    """A parent joined by an edge whose distance plus weight is not the child's."""
    d, tails, heads, w = ctx["d"], *ctx["edges"]
    loose = np.isfinite(d[tails]) & (d[tails] + w != d[heads]) & (heads != ctx["source"])
    i = int(np.flatnonzero(loose)[len(np.flatnonzero(loose)) // 2])
    u, v = int(tails[i]), int(heads[i])
    p = ctx["p"].copy()
    p[v] = u
    du, weight = float(d[u]), float(w[i])
    message = f"its parent {u} has distance {du!r} and the tree edge weighs {weight!r}"
    yield d, p, None, RULE_TREE_EDGES, v, message


def fault_pointers(ctx):
    """Predecessors wrong on their own: none for a reached vertex, one for an unreached vertex,
    one that is no vertex, an unreached parent."""
    d, n, inner, unreached = ctx["d"], ctx["n"], ctx["inner"], ctx["unreached"]
    v, u = int(inner[-1]), int(unreached[0])
    p = ctx["p"].copy()
    p[v] = UNREACHED
    message = f"vertex {v} is reached (distance {float(d[v])!r}) but has no predecessor"
    yield d, p, None, RULE_TREE_EDGES, v, message
    p = ctx["p"].copy()
    p[u] = ctx["source"]
    yield d, p, None, RULE_TREE_EDGES, u, f"vertex {u} is unreached but has predecessor"
    for bad in (n + 3, -5):
        p = ctx["p"].copy()
        p[v] = bad
        yield d, p, None, RULE_TREE_EDGES, v, f"predecessor {bad}, which is not a vertex"
    p = ctx["p"].copy()
    p[v] = unreached[-1]
    yield d, p, None, RULE_TREE_EDGES, v, f"its parent {unreached[-1]} is unreached"


def fault_zero_weight_cycles(ctx):
    """Tight cycles over zero-weight edges: a pair pointing at each other, and ZERO_CYCLE
    followed backwards (each vertex's parent the one before it on the cycle)."""
    assert ctx["reached"][ZERO_CYCLE + ZERO_PAIR].all()
    a, b = ZERO_PAIR
    p = ctx["p"].copy()
    p[a], p[b] = b, a
    cycle = np.array(ZERO_CYCLE)
    q = ctx["p"].copy()
    q[np.roll(cycle, -1)] = cycle
    for preds in (p, q):
        found = reference_offender(ctx["case"], ctx["source"], ctx["d"], preds)
        assert found is not None and found[0] == RULE_ACYCLIC
        yield ctx["d"], preds, None, RULE_ACYCLIC, found[1], "cycle of predecessors"


def fault_reached_set(ctx):
    d, p = ctx["d"], ctx["p"]
    v, u = int(ctx["inner"][1]), int(ctx["unreached"][-1])
    reached = ctx["reached"].copy()
    reached[v] = False
    message = f"vertex {v} has distance {float(d[v])!r} but the BFS did not reach it"
    yield d, p, reached, RULE_REACHED_SET, v, message
    reached = ctx["reached"].copy()
    reached[u] = True
    yield d, p, reached, RULE_REACHED_SET, u, f"vertex {u} is unreached (distance inf) but"


FAULTS = {
    f.__name__[len("fault_") :]: f
    for f in [
        fault_source,
        fault_distance_values,
        fault_distance_too_large,
        fault_distance_too_small,
        fault_unreached_given_distance,
        fault_parent_not_an_in_neighbour,
        fault_parent_not_tight,
        fault_pointers,
        fault_zero_weight_cycles,
        fault_reached_set,
    ]
}
ZERO_ONLY = {"zero_weight_cycles"}


def fault_cases():
    return [
        (g, f)
        for g in FAULT_GRAPHS
        for f in sorted(FAULTS)
        if g.startswith("zero") or f not in ZERO_ONLY
    ]


def check_fault(comm, graph_name, fault, xp=np):
    """Every planting of ``fault``: the reference agrees with its design, and the validator
    raises it (on a graph in another module, also the host graph's message)."""
    case = GRAPHS[graph_name]
    graph = build(comm, case, xp)
    host = graph if xp is np else build(comm, case)
    source = fault_source_of(case)
    ctx = context(case, source)
    planted = list(FAULTS[fault](ctx))
    assert planted, "the fault could not be planted on this graph"
    for d, p, reached, rule, vertex, fragment in planted:
        assert reference_offender(case, source, d, p, reached) == (rule, vertex)
        err = expect_error(comm, graph, source, d, p, reached, rule, vertex, fragment, xp)
        if xp is not np:
            with pytest.raises(ValidationError) as info:
                run(comm, host, source, d, p, reached)
            assert str(info.value) == str(err)


@pytest.mark.parametrize(("graph_name", "fault"), fault_cases())
def test_planted_fault(comm, graph_name, fault):
    check_fault(comm, graph_name, fault)


@pytest.mark.mpi
@pytest.mark.parametrize(("graph_name", "fault"), fault_cases())
def test_planted_fault_mpi(comm, graph_name, fault):
    check_fault(comm, graph_name, fault)


# ---- small hand-made cases ---------------------------------------------------------------------


def check_small_cases(comm, xp=np):
    inf = NO_PATH
    # Directed 0 -> 1 (2), 0 -> 2 (5), 1 -> 3 (1), 3 -> 2 (1), 2 -> 4 (0); 5 isolated. The edge
    # 3 -> 2 exists, 2 -> 3 does not: 3's parent cannot be 2.
    src, dst = np.array([0, 0, 1, 3, 2]), np.array([1, 2, 3, 2, 4])
    case = (src, dst, 6, True, np.array([2.0, 5.0, 1.0, 1.0, 0.0]))
    graph = build(comm, case, xp)
    d = np.array([0.0, 2.0, 4.0, 3.0, 4.0, inf])
    p = np.array([0, 0, 3, 1, 2, UNREACHED])
    run(comm, graph, 0, d, p, d < inf, xp)
    q = p.copy()
    q[3] = 2
    expect_error(comm, graph, 0, d, q, None, RULE_TREE_EDGES, 3, "no edge 2 -> 3", xp)
    q = p.copy()
    q[2] = 0  # 0 -> 2 weighs 5: 0 + 5 != 4
    expect_error(comm, graph, 0, d, q, None, RULE_TREE_EDGES, 2, "0.0 + 5.0 = 5.0", xp)
    e = d.copy()
    e[4] = 5.0  # 2 -> 4 weighs 0: 4 is at most 4
    expect_error(comm, graph, 0, e, p, None, RULE_EDGE_RELAXATION, 4, "4.0 + 0.0 = 4.0", xp)
    # Sources: out of range, isolated.
    expect_error(comm, graph, 6, d, p, None, RULE_SOURCE, 6, "not a vertex", xp)
    alone = np.full(6, inf)
    alone[5] = 0.0
    lonely = np.full(6, UNREACHED)
    lonely[5] = 5
    run(comm, graph, 5, alone, lonely, alone < inf, xp)
    # Exact comparison, no tolerance: float32 weights count at their float32 value, and
    # 0.1 + 0.2 is 0.30000000000000004.
    chain = (np.array([0, 1]), np.array([1, 2]), 3, False, np.array([0.1, 0.2], np.float32))
    graph = build(comm, chain, xp)
    w = np.float32([0.1, 0.2]).astype(np.float64)
    d = np.array([0.0, w[0], w[0] + w[1]])
    run(comm, graph, 0, d, np.array([0, 0, 1]), None, xp)
    near = np.array([0.0, 0.1, 0.1 + 0.2])
    expect_error(comm, graph, 0, near, np.array([0, 0, 1]), None, RULE_TREE_EDGES, 1, "", xp)
    chain = (np.array([0, 1]), np.array([1, 2]), 3, False, np.array([0.1, 0.2]))
    graph = build(comm, chain, xp)
    run(comm, graph, 0, near, np.array([0, 0, 1]), None, xp)
    rounded = np.array([0.0, 0.1, 0.3])
    why = "0.1 + 0.2 = 0.30000000000000004"
    expect_error(comm, graph, 0, rounded, np.array([0, 0, 1]), None, RULE_TREE_EDGES, 2, why, xp)
    above = near.copy()
    above[2] = np.nextafter(near[2], np.inf)  # one unit in the last place too far
    why = f"vertex 2 has distance {float(above[2])!r} but edge {{1, 2}} weighs 0.2"
    expect_error(comm, graph, 0, above, np.array([0, 0, 1]), None, RULE_EDGE_RELAXATION, 2, why, xp)
    # No edges at all (more ranks than vertices leaves some rows empty).
    empty = build(comm, (np.zeros(0, np.int64), np.zeros(0, np.int64), 2, True, np.zeros(0)), xp)
    run(comm, empty, 1, np.array([inf, 0.0]), np.array([UNREACHED, 1]), None, xp)
    d, p = np.array([0.0, 0.0]), np.array([UNREACHED, 1])
    expect_error(comm, empty, 1, d, p, None, RULE_TREE_EDGES, 0, "but has no predecessor", xp)


def test_small_cases(comm):
    check_small_cases(comm)


@pytest.mark.mpi
def test_small_cases_mpi(comm):
    check_small_cases(comm)


def check_wrong_inputs(comm, xp=np):
    case = GRAPHS["int_undirected"]
    graph = build(comm, case, xp)
    d, p = reference_result(case, 0)
    r, s = comm.rank, comm.size
    mine, preds, reached = xp.asarray(d[r::s]), xp.asarray(p[r::s]), xp.asarray(d[r::s] < NO_PATH)
    last = r == s - 1  # only the last rank passes a bad array: all ranks raise
    with pytest.raises(ValueError, match=f"rank {s - 1}: distances must be a float array"):
        validate_sssp(graph, comm, 0, preds if last else mine, preds)
    with pytest.raises(ValueError, match="predecessors must be an integer array"):
        validate_sssp(graph, comm, 0, mine, mine if last else preds)
    with pytest.raises(ValueError, match="reached must be a bool array"):
        validate_sssp(graph, comm, 0, mine, preds, reached[:-1] if last else reached)
    with pytest.raises(ValueError, match="predecessors"):
        validate_sssp(graph, comm, 0, mine, None)


def test_wrong_inputs_are_value_errors(comm):
    check_wrong_inputs(comm)


@pytest.mark.mpi
def test_wrong_inputs_are_value_errors_mpi(comm):
    check_wrong_inputs(comm)


# ---- array modules -----------------------------------------------------------------------------

XP_GRAPHS = ["int_directed", "real_undirected", "zero_directed"]


@pytest.mark.parametrize("name", XP_GRAPHS)
def test_search_in_array_module_passes(comm, xp, name):
    check_valid_outputs_pass(comm, name, xp, backend_for(xp))


@pytest.mark.mpi
@pytest.mark.parametrize("name", XP_GRAPHS)
def test_search_in_array_module_passes_mpi(comm, xp, name):
    check_valid_outputs_pass(comm, name, xp, backend_for(xp))


@pytest.fixture
def fake_cupy(monkeypatch):
    """``FAKE_CUPY`` registered as the ``cupy`` module for one test."""
    monkeypatch.setitem(sys.modules, "cupy", FAKE_CUPY)
    return FAKE_CUPY


FAKE_CUPY_CASES = [
    (g, f)
    for g, f in fault_cases()
    if g in ("int_directed", "real_undirected", "zero_directed", "zero_undirected")
]


def check_fake_cupy(comm, xp):
    staging = StagingComm(comm)
    for name in ("int_directed", "real_undirected", "zero_undirected", "components"):
        check_valid_outputs_pass(staging, name, xp, backend=None)
    for graph_name, fault in FAKE_CUPY_CASES:
        check_fault(staging, graph_name, fault, xp)
    check_small_cases(staging, xp)
    check_wrong_inputs(staging, xp)


def test_fake_cupy(comm, fake_cupy):
    check_fake_cupy(comm, fake_cupy)


@pytest.mark.mpi
def test_fake_cupy_mpi(comm, fake_cupy):
    check_fake_cupy(comm, fake_cupy)


# ---- edge chunks -------------------------------------------------------------------------------


def check_small_chunks(comm, xp, monkeypatch, chunk):
    """The relaxation check in many steps: every result and error as with one step."""
    monkeypatch.setattr(validate_common, "EDGE_CHUNK", chunk)
    comm = StagingComm(comm) if xp is not np else comm
    for name in ("int_directed", "zero_undirected", "components"):
        check_valid_outputs_pass(comm, name, xp, NUMPY if xp is np else None)
    for graph_name in ("int_directed", "real_undirected"):
        for fault in ("distance_too_large", "distance_too_small", "unreached_given_distance"):
            check_fault(comm, graph_name, fault, xp)
    check_small_cases(comm, xp)


@pytest.mark.parametrize("chunk", [1, 7, 200])
@pytest.mark.parametrize("module", ["numpy", "fake_cupy"])
def test_small_edge_chunks(comm, request, monkeypatch, module, chunk):
    xp = np if module == "numpy" else request.getfixturevalue("fake_cupy")
    check_small_chunks(comm, xp, monkeypatch, chunk)


@pytest.mark.mpi
@pytest.mark.parametrize("chunk", [1, 7, 200])
@pytest.mark.parametrize("module", ["numpy", "fake_cupy"])
def test_small_edge_chunks_mpi(comm, request, monkeypatch, module, chunk):
    xp = np if module == "numpy" else request.getfixturevalue("fake_cupy")
    check_small_chunks(comm, xp, monkeypatch, chunk)
