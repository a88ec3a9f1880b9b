"""Validation of BFS results: correct outputs (distbfs's and scipy's) pass; planted faults are
caught with the right rule and the right first offending vertex, the same error on every rank.

Every test body runs twice: in a plain ``pytest`` on one rank, and marked ``mpi`` under
``mpiexec -n P python -m pytest --with-mpi -m mpi tests/test_validate.py`` for P = 1..4. Results
and faults are built as global arrays from scipy and sliced (``[rank::size]``), so a fault lands
on whichever rank owns the vertex.

Array modules: the ``xp`` tests build the graph in numpy or cupy (the cupy ones are gpu-marked
and need a device) and expect the same errors as on the host. ``FakeCupy`` (numpy playing cupy:
a module registered as ``cupy`` whose arrays refuse host arrays, numpy functions and the calls
cupy lacks) runs every line of the device path without a GPU. Small ``EDGE_CHUNK`` values make
the per-edge checks take many steps.
"""

from __future__ import annotations

import sys
import types
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

from distbfs import validate as validate_module
from distbfs.constants import UNREACHED
from distbfs.errors import ValidationError
from distbfs.graph import build_graph
from distbfs.runtime import get_backend
from distbfs.validate import (
    RULE_DISTANCES,
    RULE_NO_CYCLES,
    RULE_SOURCE,
    RULE_SPANS_COMPONENT,
    RULE_TREE_EDGE_LEVELS,
    RULE_TREE_EDGES_IN_GRAPH,
    _has_edges,
    _per_edge,
    _row_chunks,
    array_module,
    to_module,
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


def build(comm, case, xp=np):
    src, dst, n, directed = case
    share = graphs.share(src, dst, comm.rank, comm.size)
    return build_graph(comm, *share, n, directed=directed, xp=xp)


def run(comm, graph, source, distances, preds=None, xp=np):
    """validate() on this rank's slices of global arrays, handed over in ``xp``."""
    r, p = comm.rank, comm.size
    local_preds = None if preds is None else xp.asarray(preds[r::p])
    validate(graph, comm, source, xp.asarray(distances[r::p].astype(np.int32)), local_preds)


def error_of(comm, graph, source, distances, preds, xp=np) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        run(comm, graph, source, distances, preds, xp)
    return info.value


def expect_error(comm, graph, source, distances, preds, rule, vertex, fragment="", xp=np):
    """validate() fails on every rank with ``rule`` at ``vertex``, the same message everywhere."""
    err = error_of(comm, graph, source, distances, preds, xp)
    assert (err.rule, err.vertex) == (rule, vertex), str(err)
    assert fragment in str(err)
    assert len(set(comm.allgather_object(str(err)))) == 1
    return err


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


def check_valid_outputs_pass(comm, name, xp=np, backend=NUMPY):
    """distbfs's search (with ``backend``, unless None) and scipy's pass on a graph built in
    ``xp``; scipy's also as host arrays against a device graph."""
    case = GRAPHS[name]
    graph = build(comm, case, xp)
    for source in sources_of(case):
        if backend is not None:
            result = graphs.search(graph, source, backend, comm, predecessors=True)
            validate(graph, comm, source, result.distances, result.predecessors)
            validate(graph, comm, source, result.distances)
        distances, preds = scipy_bfs(*case, source)
        run(comm, graph, source, distances, preds, xp)
        if xp is not np:
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


def check_fault(comm, graph_name, fault, xp=np):
    """The planted fault's error; on a graph in another module, also the host graph's error."""
    case = GRAPHS[graph_name]
    graph = build(comm, case, xp)
    host = graph if xp is np else build(comm, case)
    source = sources_of(case)[1]
    ctx = context(case, source)
    planted = list(FAULTS[fault](ctx))
    assert planted, "the fault could not be planted on this graph"
    for d, p, rule, vertex, fragment in planted:
        err = expect_error(comm, graph, source, d, p, rule, vertex, fragment, xp)
        if xp is not np:
            assert str(err) == str(error_of(comm, host, source, d, p))


@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault(comm, graph_name, fault):
    check_fault(comm, graph_name, fault)


@pytest.mark.mpi
@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_planted_fault_mpi(comm, graph_name, fault):
    check_fault(comm, graph_name, fault)


def check_random_distance_faults(comm, graph_name, xp=np):
    """Random corruptions of the levels: the offender is the smallest in the reference set."""
    case = GRAPHS[graph_name]
    graph = build(comm, case, xp)
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
            run(comm, graph, source, d, None, xp)
        else:
            expect_error(comm, graph, source, d, None, RULE_DISTANCES, int(offenders[0]), xp=xp)


@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
def test_random_distance_faults(comm, graph_name):
    check_random_distance_faults(comm, graph_name)


@pytest.mark.mpi
@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
def test_random_distance_faults_mpi(comm, graph_name):
    check_random_distance_faults(comm, graph_name)


# ---- small hand-made cases ------------------------------------------------------------------


def check_small_cases(comm, xp=np):
    # Directed: 0 -> 1, 0 -> 2, 1 -> 3, 3 -> 2. Vertex 3 (level 2) with parent 2 (level 1): the
    # edge 3 -> 2 exists, 2 -> 3 does not.
    case = (np.array([0, 0, 1, 3]), np.array([1, 2, 3, 2]), 4, True)
    graph = build(comm, case, xp)
    d = np.array([0, 1, 1, 2])
    run(comm, graph, 0, d, np.array([0, 0, 0, 1]), xp)
    expect_error(
        comm, graph, 0, d, np.array([0, 0, 0, 2]), RULE_TREE_EDGES_IN_GRAPH, 3, "2 -> 3", xp
    )
    # The reverse direction is not an in-edge: 2 has level 1 via 0, never via 3.
    d = np.array([0, 1, 3, 2])
    expect_error(comm, graph, 0, d, None, RULE_DISTANCES, 2, "spans 3 levels", xp)
    # A second vertex at level 0 has no in-neighbour at level -1.
    d = np.array([0, 1, 1, 0])
    expect_error(comm, graph, 0, d, None, RULE_DISTANCES, 3, "not the source", xp)
    # Sources: out of range, isolated.
    expect_error(comm, graph, 4, d, None, RULE_SOURCE, 4, "not a vertex", xp)
    isolated = build(comm, (np.array([0]), np.array([1]), 3, False), xp)
    run(comm, isolated, 2, np.array([UNREACHED, UNREACHED, 0]), np.array([-1, -1, 2]), xp)
    d = np.array([1, UNREACHED, 0])
    expect_error(comm, isolated, 2, d, None, RULE_DISTANCES, 0, "level 1 but no", xp)
    # No edges at all (more ranks than vertices leaves some rows empty).
    empty = build(comm, (np.zeros(0, np.int64), np.zeros(0, np.int64), 2, True), xp)
    run(comm, empty, 1, np.array([UNREACHED, 0]), np.array([UNREACHED, 1]), xp)
    d = np.array([0, 0])
    expect_error(comm, empty, 1, d, None, RULE_DISTANCES, 0, "level 0 but is not the source", xp)


def test_small_cases(comm):
    check_small_cases(comm)


@pytest.mark.mpi
def test_small_cases_mpi(comm):
    check_small_cases(comm)


def check_wrong_shapes(comm, xp=np):
    case = GRAPHS["components"]
    graph = build(comm, case, xp)
    d, p = scipy_bfs(*case, 0)
    mine, preds = xp.asarray(d[comm.rank :: comm.size]), xp.asarray(p[comm.rank :: comm.size])
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


# ---- array modules --------------------------------------------------------------------------


def backend_for(xp):
    """The search backend of an array module (the CUDA one is imported only for cupy)."""
    if xp is np:
        from distbfs.backends.numpy import NumpyBackend

        return NumpyBackend()
    from distbfs.backends.cuda.backend import CudaBackend

    return CudaBackend()


XP_GRAPHS = ["random_undirected", "random_directed", "two_components_directed", "grid"]
XP_FAULTS = [
    "cycle_of_leaves",
    "cycle_with_subtree",
    "parent_two_levels_up",
    "wrong_distance",
    "parent_not_a_neighbour",
    "unreached_in_component",
    "predecessors_of_rule_4",
    "source",
]


@pytest.mark.parametrize("name", XP_GRAPHS)
def test_search_in_array_module_passes(comm, xp, name):
    graph = build(comm, GRAPHS[name], xp)
    assert array_module(graph.row_offsets) is xp
    check_valid_outputs_pass(comm, name, xp, backend_for(xp))


@pytest.mark.mpi
@pytest.mark.parametrize("name", XP_GRAPHS)
def test_search_in_array_module_passes_mpi(comm, xp, name):
    check_valid_outputs_pass(comm, name, xp, backend_for(xp))


@pytest.mark.parametrize("graph_name", ["random_undirected", "random_directed"])
@pytest.mark.parametrize("fault", XP_FAULTS)
def test_planted_fault_in_array_module(comm, xp, graph_name, fault):
    check_fault(comm, graph_name, fault, xp)


@pytest.mark.mpi
@pytest.mark.parametrize("graph_name", ["random_undirected", "random_directed"])
@pytest.mark.parametrize("fault", XP_FAULTS)
def test_planted_fault_in_array_module_mpi(comm, xp, graph_name, fault):
    check_fault(comm, graph_name, fault, xp)


def test_random_distance_faults_in_array_module(comm, xp):
    check_random_distance_faults(comm, "two_components_undirected", xp)


def test_array_module_never_imports_cupy_for_host_objects(monkeypatch):
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    for obj in (np.zeros(3), np.int64(2), [1, 2], 5):
        assert array_module(obj) is np
    assert "cupy" not in sys.modules
    host = np.arange(3)
    assert to_module(np, host) is host


# ---- numpy playing cupy ---------------------------------------------------------------------


class DeviceArray(np.ndarray):
    """A numpy array standing in for a cupy array. Like cupy's, it refuses host arrays as
    operands, indices or values, and numpy functions (cupy's arrays never turn into numpy ones
    implicitly); ``get()`` is the explicit copy to the host. Reductions give 0-d arrays."""

    __module__ = "cupy"  # what distbfs.validate.array_module looks at

    def get(self) -> np.ndarray:
        return np.array(self.view(np.ndarray))

    def __repr__(self) -> str:
        return f"DeviceArray({self.get()!r})"

    __str__ = __repr__

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "at":
            raise TypeError("cupy-like: ufunc.at is not used on the device path")
        _refuse_host(inputs)
        if out is not None:
            _refuse_host(out)
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*(_plain(x) for x in inputs), **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _device(result)

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"numpy.{func.__name__} called on a device array: use the xp module")

    def __getitem__(self, key):
        _refuse_host(key if isinstance(key, tuple) else (key,))
        return super().__getitem__(key)

    def __setitem__(self, key, value):
        _refuse_host((*(key if isinstance(key, tuple) else (key,)), value))
        super().__setitem__(key, value)

    def repeat(self, repeats, axis=None):
        if isinstance(repeats, np.ndarray):
            raise TypeError("cupy 13's repeat takes no array of counts")
        return super().repeat(repeats, axis)


def _refuse_host(items) -> None:
    for item in items:
        if isinstance(item, (list, tuple)):
            _refuse_host(item)
        elif isinstance(item, np.ndarray) and not isinstance(item, DeviceArray):
            raise TypeError("host numpy array mixed with device arrays")


def _plain(x: Any) -> Any:
    if isinstance(x, DeviceArray):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(item) for item in x)
    return x


def _device(result: Any) -> Any:
    """numpy's result as cupy's: arrays on the device, scalars as 0-d arrays."""
    if isinstance(result, tuple):
        return tuple(_device(r) for r in result)
    if isinstance(result, np.ndarray):
        return result.view(DeviceArray)
    if isinstance(result, (np.generic, int, float, bool)):
        return np.asarray(result).view(DeviceArray)
    return result


class FakeCupy(types.ModuleType):
    """numpy's namespace with cupy's habits: functions take and give ``DeviceArray``s (only
    ``asarray``/``array`` take host data), and the calls cupy 13 lacks or restricts fail."""

    MISSING = frozenset({"lexsort", "frombuffer", "fromiter", "vectorize", "nditer"})
    TRANSFERS = frozenset({"asarray", "array"})
    ndarray = DeviceArray

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in self.MISSING:
            raise AttributeError(f"cupy-like: {name} is not available on the device path")
        value = getattr(np, name)
        if isinstance(value, type) or not callable(value):
            return value  # dtypes and constants

        def call(*args, **kwargs):
            if name not in self.TRANSFERS:
                _refuse_host((*args, *kwargs.values()))
            if name == "repeat" and isinstance(args[1], np.ndarray):
                raise TypeError("cupy 13's repeat takes no array of counts")
            if name == "searchsorted" and not isinstance(args[1], DeviceArray):
                raise NotImplementedError("cupy's searchsorted needs an array of values")
            plain_kwargs = {k: _plain(v) for k, v in kwargs.items()}
            result = value(*(_plain(a) for a in args), **plain_kwargs)
            if kwargs.get("out") is not None:
                return kwargs["out"]
            return _device(result)

        return call


FAKE_CUPY = FakeCupy("cupy")


def _host_payload(array: Any) -> tuple[Any, bool]:
    return (array.get(), True) if isinstance(array, DeviceArray) else (array, False)


class StagingComm:
    """``comm`` moving ``DeviceArray`` payloads through the host as the MPI communicator does
    for cupy arrays; host-only collectives refuse device arrays."""

    def __init__(self, comm) -> None:
        self.comm, self.rank, self.size, self.kind = comm, comm.rank, comm.size, comm.kind

    def __getattr__(self, name: str) -> Any:  # the other collectives, for host data
        return getattr(self.comm, name)

    def alltoallv(self, offsets, *payloads):
        _refuse_device(offsets)
        staged = [_host_payload(p) for p in payloads]
        recv_offsets, received = self.comm.alltoallv(offsets, *(h for h, _ in staged))
        return recv_offsets, tuple(
            FAKE_CUPY.asarray(r) if dev else r for r, (_, dev) in zip(received, staged, strict=True)
        )

    def allgather_array(self, array):
        host, dev = _host_payload(array)
        out = self.comm.allgather_array(host)
        return FAKE_CUPY.asarray(out) if dev else out

    def allreduce(self, value, op="sum"):
        _refuse_device(value)
        return self.comm.allreduce(value, op)

    def allgather_object(self, obj):
        _refuse_device(obj)
        return self.comm.allgather_object(obj)


def _refuse_device(obj: Any) -> None:
    if isinstance(obj, (list, tuple)):
        for item in obj:
            _refuse_device(item)
    elif isinstance(obj, DeviceArray):
        raise TypeError("device array handed to a host-only collective")


@pytest.fixture
def fake_cupy(monkeypatch):
    """``FAKE_CUPY`` registered as the ``cupy`` module for one test."""
    monkeypatch.setitem(sys.modules, "cupy", FAKE_CUPY)
    return FAKE_CUPY


def test_fake_cupy_refuses_what_cupy_refuses(fake_cupy):
    xp = fake_cupy
    a = xp.arange(5, dtype=xp.int64)
    assert isinstance(a, DeviceArray) and array_module(a) is xp
    host = np.arange(5)
    for bad in (
        lambda: a + host,
        lambda: a[host],
        lambda: a.__setitem__(host, 1),
        lambda: np.diff(a),
        lambda: xp.repeat(a, a),
        lambda: xp.searchsorted(a, 3),
        lambda: xp.lexsort((a, a)),
        lambda: StagingComm(validate_module).allreduce(a),
    ):
        with pytest.raises((TypeError, AttributeError, NotImplementedError)):
            bad()
    assert isinstance(xp.asarray(host), DeviceArray) and isinstance(a.get(), np.ndarray)
    assert isinstance(a.sum(), DeviceArray) and int(xp.count_nonzero(a)) == 4
    assert to_module(xp, a) is not None and array_module(to_module(np, a)) is np


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fake_cupy_valid_outputs_pass(comm, fake_cupy, name):
    check_valid_outputs_pass(StagingComm(comm), name, fake_cupy, backend=None)


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fake_cupy_valid_outputs_pass_mpi(comm, fake_cupy, name):
    check_valid_outputs_pass(StagingComm(comm), name, fake_cupy, backend=None)


@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fake_cupy_planted_fault(comm, fake_cupy, graph_name, fault):
    check_fault(StagingComm(comm), graph_name, fault, fake_cupy)


@pytest.mark.mpi
@pytest.mark.parametrize("graph_name", FAULT_GRAPHS)
@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fake_cupy_planted_fault_mpi(comm, fake_cupy, graph_name, fault):
    check_fault(StagingComm(comm), graph_name, fault, fake_cupy)


def check_fake_cupy_others(comm, xp):
    staging = StagingComm(comm)
    for graph_name in FAULT_GRAPHS:
        check_random_distance_faults(staging, graph_name, xp)
    check_small_cases(staging, xp)
    check_wrong_shapes(staging, xp)


def test_fake_cupy_small_cases_and_random_faults(comm, fake_cupy):
    check_fake_cupy_others(comm, fake_cupy)


@pytest.mark.mpi
def test_fake_cupy_small_cases_and_random_faults_mpi(comm, fake_cupy):
    check_fake_cupy_others(comm, fake_cupy)


# ---- edge chunks ----------------------------------------------------------------------------


def check_small_chunks(comm, xp, monkeypatch, chunk):
    """Per-edge checks in many steps: every result and error as with one step."""
    monkeypatch.setattr(validate_module.common, "EDGE_CHUNK", chunk)
    comm = StagingComm(comm) if xp is not np else comm
    for name in ("random_undirected", "components", "directed_with_sinks"):
        check_valid_outputs_pass(comm, name, xp, NUMPY if xp is np else None)
    for graph_name in FAULT_GRAPHS:
        check_random_distance_faults(comm, graph_name, xp)
        for fault in ("wrong_distance", "unreached_in_component", "parent_not_a_neighbour"):
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


def random_csr(seed: int, rows: int):
    """Row offsets and sorted unique columns of a random CSR with empty rows and a long row."""
    rng = np.random.default_rng(seed)
    degrees = rng.choice([0, 0, 1, 2, 5, 40], size=rows)
    if rows:
        degrees[rng.integers(rows)] = 300
    columns = np.concatenate(
        [np.sort(rng.choice(1000, size=d, replace=False)) for d in degrees]
        + [np.zeros(0, np.int64)]
    ).astype(np.int32)
    offsets = np.zeros(rows + 1, np.int64)
    np.cumsum(degrees, out=offsets[1:])
    return offsets, columns


@pytest.mark.parametrize("module", ["numpy", "fake_cupy"])
@pytest.mark.parametrize("seed", range(4))
def test_edge_helpers(request, module, seed):
    xp = np if module == "numpy" else request.getfixturevalue("fake_cupy")
    rows = [0, 1, 30, 200][seed]
    offsets, columns = random_csr(seed, rows)
    d_offsets, d_columns = xp.asarray(offsets), xp.asarray(columns)
    degrees = np.diff(offsets)
    total = int(offsets[-1])
    values = np.arange(rows, dtype=np.int32) * 3 - 1
    # _row_chunks: whole rows, every edge once, each step below chunk + the longest row.
    for chunk in (1, 3, 64, 10**6):
        steps = _row_chunks(xp, d_offsets, chunk)
        covered = [e for _, _, e0, e1 in steps for e in range(e0, e1)]
        assert covered == list(range(total))
        for r0, r1, e0, e1 in steps:
            assert (int(offsets[r0]), int(offsets[r1])) == (e0, e1) and e1 > e0
            assert e1 - e0 < chunk + max(degrees.max(initial=0), 1)
            got = _per_edge(xp, d_offsets[r0 : r1 + 1] - e0, xp.asarray(values)[r0:r1], e1 - e0)
            assert np.array_equal(to_module(np, got), np.repeat(values[r0:r1], degrees[r0:r1]))
    # _has_edges: present columns, absent ones, empty rows.
    rng = np.random.default_rng(seed)
    query_rows = rng.integers(0, rows, 500) if rows else np.zeros(0, np.int64)
    targets = rng.integers(0, 1000, query_rows.size)
    pick = np.flatnonzero((rng.random(query_rows.size) < 0.5) & (degrees[query_rows] > 0))
    r = query_rows[pick]
    targets[pick] = columns[offsets[r] + rng.integers(0, degrees[r])]  # edges that exist
    edge_keys = np.repeat(np.arange(rows), degrees) * 1000 + columns
    expected = np.isin(query_rows * 1000 + targets, edge_keys)
    assert 0 < np.count_nonzero(expected) < expected.size or rows == 0
    found = _has_edges(xp, d_offsets, d_columns, xp.asarray(query_rows), xp.asarray(targets))
    assert np.array_equal(to_module(np, found), expected)
