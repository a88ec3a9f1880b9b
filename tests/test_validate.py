"""Validation of BFS results: correct outputs (distbfs's and scipy's) pass; planted faults are
caught with the right rule and the right first offending vertex, the same error on every rank.

Every test body runs twice: in a plain ``pytest`` on one rank, and marked ``mpi`` under
``mpiexec -n P python -m pytest --with-mpi -m mpi tests/test_validate.py`` for P = 1..4. Results
and faults are built as global arrays from scipy and sliced (``[rank::size]``), so a fault lands
on whichever rank owns the vertex.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from distbfs.backends import get_backend
from distbfs.bfs import bfs_levels
from distbfs.constants import UNREACHED
from distbfs.errors import ValidationError
from distbfs.graph import build_graph
from distbfs.validate import (
    RULE_DISTANCES,
    RULE_NO_CYCLES,
    RULE_SOURCE,
    RULE_SPANS_COMPONENT,
    RULE_TREE_EDGE_LEVELS,
    RULE_TREE_EDGES_IN_GRAPH,
    validate,
)

import graphs

NUMPY = get_backend("numpy")


def with_isolated(case, extra: int):
    """The same edges on ``extra`` more vertices, which stay isolated."""
    src, dst, n, directed = case
    return src, dst, n + extra, directed


def two_components(n: int, m: int, seed: int, directed: bool):
    """Two random parts on [0, n/2) and [n/2, n - 5), plus 5 isolated vertices at the end."""
    rng = np.random.default_rng(seed)
    half = n // 2
    src = np.concatenate([rng.integers(0, half, m), rng.integers(half, n - 5, m)])
    dst = np.concatenate([rng.integers(0, half, m), rng.integers(half, n - 5, m)])
    return src, dst, n, directed


GRAPHS = {
    "random_undirected": with_isolated(graphs.random_graph(300, 700, 11, False), 4),
    "random_directed": with_isolated(graphs.random_graph(300, 1200, 12, True), 4),
    "two_components_undirected": two_components(260, 500, 13, False),
    "two_components_directed": two_components(260, 900, 14, True),
    "sparse_undirected": graphs.random_graph(400, 300, 15, False),
    "components": graphs.components(),
    "directed_with_sinks": graphs.directed_with_sinks(),
    "grid": graphs.grid(9, 7),
}


def adjacency(src, dst, n, directed) -> sp.csr_matrix:
    """Global 0/1 adjacency without self-loops (symmetric for undirected graphs)."""
    keep = src != dst
    a = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    if not directed:
        a = a + a.T
    a.data[:] = 1
    return a


def scipy_bfs(src, dst, n, directed, source):
    """(distances, predecessors) by scipy, in distbfs's encoding."""
    a = adjacency(src, dst, n, directed)
    _, preds = csgraph.breadth_first_order(a, source, directed=True, return_predecessors=True)
    preds = np.where(preds < 0, UNREACHED, preds).astype(np.int64)
    preds[source] = source
    return graphs.reference_distances(src, dst, n, directed, source), preds


def build(comm, case):
    src, dst, n, directed = case
    return build_graph(comm, *graphs.share(src, dst, comm.rank, comm.size), n, directed=directed)


def run(comm, graph, source, distances, preds=None):
    """validate() on this rank's slices of global arrays."""
    r, p = comm.rank, comm.size
    local_preds = None if preds is None else preds[r::p]
    validate(graph, comm, source, distances[r::p].astype(np.int32), local_preds)


def expect_error(comm, graph, source, distances, preds, rule, vertex, fragment=""):
    """validate() fails on every rank with ``rule`` at ``vertex``, the same message everywhere."""
    with pytest.raises(ValidationError) as info:
        run(comm, graph, source, distances, preds)
    err = info.value
    assert (err.rule, err.vertex) == (rule, vertex), str(err)
    assert fragment in str(err)
    assert len(set(comm.allgather_object(str(err)))) == 1


def tree_children(preds, source):
    """Number of children of every vertex in the parent tree."""
    has = (preds != UNREACHED) & (np.arange(preds.size) != source)
    return np.bincount(preds[has], minlength=preds.size)


def off_cycle(preds, reached, source):
    """Reached vertices whose parent chain reaches the source (plain n-step pointer following)."""
    current = np.where(reached, np.arange(preds.size), source)
    for _ in range(preds.size):
        current = preds[current]
    return current == source


def distance_offenders(src, dst, n, directed, source, d):
    """Reference for the 'distances' rule on a global array: (A) heads of edges leaving a
    reached vertex that end unreached or more than one level down; (B) reached vertices other than
    the source without an in-edge from one level up."""
    a = adjacency(src, dst, n, directed).tocoo()
    u, w = a.row, a.col
    from_reached = d[u] != UNREACHED
    heads = w[from_reached & ((d[w] == UNREACHED) | (d[w] > d[u] + 1))]
    witnessed = np.zeros(n, dtype=bool)
    witnessed[w[from_reached & (d[w] == d[u] + 1)]] = True
    lonely = np.flatnonzero((d != UNREACHED) & ~witnessed & (np.arange(n) != source))
    return np.union1d(heads, lonely)


def sources_of(case):
    src, dst, n, _ = case
    deg = np.bincount(np.concatenate([src, dst]), minlength=n)
    return sorted({0, int(np.argmax(deg)), n - 1})


# ---- correct results pass -------------------------------------------------------------------


def check_valid_outputs_pass(comm, name):
    case = GRAPHS[name]
    graph = build(comm, case)
    for source in sources_of(case):
        result = bfs_levels(graph, source, NUMPY, comm, predecessors=True)
        validate(graph, comm, source, result.distances, result.predecessors)
        validate(graph, comm, source, result.distances)
        distances, preds = scipy_bfs(*case, source)
        run(comm, graph, source, distances, preds)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_valid_outputs_pass(comm, name):
    check_valid_outputs_pass(comm, name)


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_valid_outputs_pass_mpi(comm, name):
    check_valid_outputs_pass(comm, name)


# ---- planted faults -------------------------------------------------------------------------


def fault_source(ctx):
    d, p = ctx["d"].copy(), ctx["p"].copy()
    s = ctx["source"]
    d[s] = 1
    yield d, p, RULE_SOURCE, s, f"source {s} has distance 1, not 0"
    d, p = ctx["d"].copy(), ctx["p"].copy()
    other = int(np.flatnonzero(ctx["reached"] & (ctx["ids"] != s))[0])
    p[s] = other
    yield d, p, RULE_SOURCE, s, f"source {s} has predecessor {other}, not itself"


def fault_cycle_of_leaves(ctx):
    leaves = np.flatnonzero(ctx["leaves"])
    a, b, c = (int(x) for x in leaves[[0, len(leaves) // 2, -1]])
    p = ctx["p"].copy()
    p[a], p[b] = b, a
    yield ctx["d"], p, RULE_NO_CYCLES, min(a, b), "cycle"
    p = ctx["p"].copy()
    p[a], p[b], p[c] = b, c, a
    yield ctx["d"], p, RULE_NO_CYCLES, min(a, b, c), "cycle"


def fault_cycle_with_subtree(ctx):
    p = ctx["p"].copy()
    inner = np.flatnonzero(ctx["reached"] & (ctx["children"] > 0) & (ctx["ids"] != ctx["source"]))
    x = int(inner[len(inner) // 2])
    child = int(np.flatnonzero(p == x)[0])
    p[x] = child  # x and its whole subtree hang from the cycle x -> child -> x
    stuck = ctx["reached"] & ~off_cycle(p, ctx["reached"], ctx["source"])
    assert stuck[x] and stuck[child]
    yield ctx["d"], p, RULE_NO_CYCLES, int(np.flatnonzero(stuck)[0]), "cycle"


def fault_self_parent(ctx):
    p = ctx["p"].copy()
    v = int(np.flatnonzero(ctx["leaves"])[-1])
    p[v] = v
    yield ctx["d"], p, RULE_NO_CYCLES, v, "cycle"


def fault_pred_out_of_range(ctx):
    n, d = ctx["n"], ctx["d"]
    for bad in (n + 3, -5):
        p = ctx["p"].copy()
        v = int(np.flatnonzero(ctx["reached"] & (ctx["ids"] != ctx["source"]))[-1])
        p[v] = bad
        yield d, p, RULE_NO_CYCLES, v, f"vertex {v} has predecessor {bad}, which is not a vertex"
    unreached = np.flatnonzero(~ctx["reached"])
    if unreached.size:
        p = ctx["p"].copy()
        p[unreached[0]] = n
        yield d, p, RULE_NO_CYCLES, int(unreached[0]), "not a vertex"


def fault_parent_two_levels_up(ctx):
    d, p = ctx["d"], ctx["p"].copy()
    deep = np.flatnonzero(d >= 2)
    v = int(deep[len(deep) // 2])
    g = int(p[p[v]])
    p[v] = g
    message = f"vertex {v} has level {d[v]} but its parent {g} has level {d[v] - 2}"
    yield d, p, RULE_TREE_EDGE_LEVELS, v, message


def fault_parent_unreached(ctx):
    unreached = np.flatnonzero(~ctx["reached"])
    if unreached.size == 0:
        return
    d, p = ctx["d"], ctx["p"].copy()
    v = int(np.flatnonzero(ctx["reached"] & (ctx["ids"] != ctx["source"]))[0])
    p[v] = unreached[-1]
    yield d, p, RULE_TREE_EDGE_LEVELS, v, f"its parent {unreached[-1]} is unreached"


def fault_wrong_distance(ctx):
    d0, top = ctx["d"], int(ctx["d"].max())
    v = int(np.flatnonzero(d0 == top)[-1])  # deepest level: nobody relies on it as a parent
    d = d0.copy()
    d[v] = top + 1
    yield d, ctx["p"], RULE_DISTANCES, v, f"vertex {v} has level {top + 1} but"
    if top >= 2:
        d = d0.copy()
        d[v] = top - 1
        yield d, ctx["p"], RULE_DISTANCES, v, f"vertex {v} has level {top - 1} but no"
    for bad in (ctx["n"], -3):
        d = d0.copy()
        d[v] = bad
        yield d, ctx["p"], RULE_DISTANCES, v, f"vertex {v} has distance {bad}, neither"


def fault_unreached_in_component(ctx):
    top = int(ctx["d"].max())
    v = int(np.flatnonzero(ctx["d"] == top)[0])
    d, p = ctx["d"].copy(), ctx["p"].copy()
    d[v], p[v] = UNREACHED, UNREACHED
    yield d, p, RULE_DISTANCES, v, f"vertex {v} is unreached but"
    yield d, None, RULE_DISTANCES, v, RULE_SPANS_COMPONENT


def fault_predecessors_of_rule_4(ctx):
    d, p = ctx["d"], ctx["p"].copy()
    v = int(np.flatnonzero(ctx["leaves"])[0])
    p[v] = UNREACHED
    yield d, p, RULE_SPANS_COMPONENT, v, f"vertex {v} is reached (level {d[v]}) but has no"
    unreached = np.flatnonzero(~ctx["reached"])
    if unreached.size:
        p = ctx["p"].copy()
        u = int(unreached[-1])
        p[u] = ctx["source"]
        yield d, p, RULE_SPANS_COMPONENT, u, f"vertex {u} is unreached but has predecessor"


def fault_parent_not_a_neighbour(ctx):
    d, a = ctx["d"], ctx["adj"]
    for v in np.flatnonzero(d >= 1)[::-1]:
        above = np.flatnonzero(d == d[v] - 1)
        strangers = above[np.asarray(a[above, v].todense()).ravel() == 0]
        if strangers.size:
            p = ctx["p"].copy()
            p[v] = strangers[0]
            edge = f"{strangers[0]} -> {v}" if ctx["directed"] else f"{{{strangers[0]}, {v}}}"
            yield d, p, RULE_TREE_EDGES_IN_GRAPH, int(v), f"no edge {edge}"
            return


FAULTS = {
    f.__name__[len("fault_") :]: f
    for f in [
        fault_source,
        fault_cycle_of_leaves,
        fault_cycle_with_subtree,
        fault_self_parent,
        fault_pred_out_of_range,
        fault_parent_two_levels_up,
        fault_parent_unreached,
        fault_wrong_distance,
        fault_unreached_in_component,
        fault_predecessors_of_rule_4,
        fault_parent_not_a_neighbour,
    ]
}
FAULT_GRAPHS = [
    "random_undirected",
    "random_directed",
    "two_components_undirected",
    "two_components_directed",
]


def context(case, source):
    d, p = scipy_bfs(*case, source)
    n = case[2]
    reached = d != UNREACHED
    children = tree_children(p, source)
    ids = np.arange(n)
    return {
        "d": d,
        "p": p,
        "n": n,
        "source": source,
        "reached": reached,
        "ids": ids,
        "children": children,
        "leaves": reached & (children == 0) & (ids != source),
        "adj": adjacency(*case),
        "directed": case[3],
    }


def check_fault(comm, graph_name, fault):
    case = GRAPHS[graph_name]
    graph = build(comm, case)
    source = sources_of(case)[1]
    ctx = context(case, source)
    planted = list(FAULTS[fault](ctx))
    assert planted, "the fault could not be planted on this graph"
    for d, p, rule, vertex, fragment in planted:
        expect_error(comm, graph, source, d, p, rule, vertex, fragment)


@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault(comm, graph_name, fault):
    check_fault(comm, graph_name, fault)


@pytest.mark.mpi
@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault_mpi(comm, graph_name, fault):
    check_fault(comm, graph_name, fault)


def check_random_distance_faults(comm, graph_name):
    """Random corruptions of the levels: the offender is the smallest in the reference set."""
    case = GRAPHS[graph_name]
    graph = build(comm, case)
    source = sources_of(case)[1]
    d0, _ = scipy_bfs(*case, source)
    rng = np.random.default_rng(7)
    reached = np.flatnonzero(d0 != UNREACHED)
    for trial in range(12):
        d = d0.copy()
        hit = rng.choice(reached[reached != source], size=1 + trial % 3, replace=False)
        d[hit] = np.where(
            rng.random(hit.size) < 0.2, UNREACHED, d[hit] + rng.integers(-2, 3, hit.size)
        )
        d[hit] = np.maximum(d[hit], UNREACHED)
        offenders = distance_offenders(*case, source, d)
        if offenders.size == 0:
            run(comm, graph, source, d)
        else:
            expect_error(comm, graph, source, d, None, RULE_DISTANCES, int(offenders[0]))


@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
def test_random_distance_faults(comm, graph_name):
    check_random_distance_faults(comm, graph_name)


@pytest.mark.mpi
@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
def test_random_distance_faults_mpi(comm, graph_name):
    check_random_distance_faults(comm, graph_name)


# ---- small hand-made cases ------------------------------------------------------------------


def check_small_cases(comm):
    # Directed: 0 -> 1, 0 -> 2, 1 -> 3, 3 -> 2. Vertex 3 (level 2) with parent 2 (level 1): the
    # edge 3 -> 2 exists, 2 -> 3 does not.
    case = (np.array([0, 0, 1, 3]), np.array([1, 2, 3, 2]), 4, True)
    graph = build(comm, case)
    d = np.array([0, 1, 1, 2])
    run(comm, graph, 0, d, np.array([0, 0, 0, 1]))
    expect_error(comm, graph, 0, d, np.array([0, 0, 0, 2]), RULE_TREE_EDGES_IN_GRAPH, 3, "2 -> 3")
    # The reverse direction is not an in-edge: 2 has level 1 via 0, never via 3.
    expect_error(comm, graph, 0, np.array([0, 1, 3, 2]), None, RULE_DISTANCES, 2, "spans 3 levels")
    # A second vertex at level 0 has no in-neighbour at level -1.
    expect_error(comm, graph, 0, np.array([0, 1, 1, 0]), None, RULE_DISTANCES, 3, "not the source")
    # Sources: out of range, isolated.
    expect_error(comm, graph, 4, d, None, RULE_SOURCE, 4, "not a vertex")
    isolated = build(comm, (np.array([0]), np.array([1]), 3, False))
    run(comm, isolated, 2, np.array([UNREACHED, UNREACHED, 0]), np.array([-1, -1, 2]))
    expect_error(
        comm, isolated, 2, np.array([1, UNREACHED, 0]), None, RULE_DISTANCES, 0, "level 1 but no"
    )


def test_small_cases(comm):
    check_small_cases(comm)


@pytest.mark.mpi
def test_small_cases_mpi(comm):
    check_small_cases(comm)


def check_wrong_shapes(comm):
    case = GRAPHS["components"]
    graph = build(comm, case)
    d, p = scipy_bfs(*case, 0)
    mine, preds = d[comm.rank :: comm.size], p[comm.rank :: comm.size]
    last = comm.rank == comm.size - 1  # only the last rank passes a bad array: all ranks raise
    with pytest.raises(ValueError, match=f"rank {comm.size - 1}: distances must be an integer"):
        validate(graph, comm, 0, mine[:-1] if last else mine, None)
    with pytest.raises(ValueError, match="predecessors must be an integer array"):
        validate(graph, comm, 0, mine, preds + 0.5 if last else preds)


def test_wrong_shapes_are_value_errors(comm):
    check_wrong_shapes(comm)


@pytest.mark.mpi
def test_wrong_shapes_are_value_errors_mpi(comm):
    check_wrong_shapes(comm)
