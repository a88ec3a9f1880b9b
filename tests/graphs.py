"""Small structured graphs for tests, as global edge lists, a scipy reference BFS and the one
BFS-tree checker of the tests.

Every builder returns ``(src, dst, n, directed)`` with int64 arrays. ``share(edges, comm)`` gives a
rank its slice, so tests build the same graph at any rank count; ``build`` builds it in a
backend's array module and ``search`` runs one search on a plan of its own. The
direction-optimizing tests also find here the (alpha, beta) forcings and the directions Beamer's
rule should pick.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.io
import scipy.sparse as sp
from scipy.sparse import csgraph

from distbfs.constants import UNREACHED
from distbfs.engine import BOTTOM_UP, TOP_DOWN, SearchPlan
from distbfs.graph import build_graph
from distbfs.traversals.bfs import bfs_levels


def read_matrix_market(path) -> sp.coo_array | sp.coo_matrix:
    """scipy's reading of a Matrix Market file, as COO: a sparse array where scipy has the
    ``spmatrix`` keyword (its matrix default is deprecated), a matrix before."""
    try:
        return scipy.io.mmread(str(path), spmatrix=False).tocoo()
    except TypeError:  # scipy without the keyword
        return scipy.io.mmread(str(path)).tocoo()


def path(n: int):
    v = np.arange(n - 1, dtype=np.int64)
    return v, v + 1, n, False


def star(leaves: int):
    return np.zeros(leaves, np.int64), np.arange(1, leaves + 1, dtype=np.int64), leaves + 1, False


def grid(nx: int, ny: int):
    ids = np.arange(nx * ny, dtype=np.int64).reshape(nx, ny)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return src, dst, nx * ny, False


def components():
    """Three components (a path, a triangle, an edge) and two isolated vertices."""
    src = np.array([0, 1, 2, 5, 6, 7, 9], np.int64)
    dst = np.array([1, 2, 3, 6, 7, 5, 10], np.int64)
    return src, dst, 13, False


def loops_and_duplicates():
    src = np.array([0, 0, 0, 1, 1, 2, 2, 3, 3, 3], np.int64)
    dst = np.array([0, 1, 1, 0, 2, 2, 3, 1, 3, 4], np.int64)
    return src, dst, 5, False


def directed_with_sinks():
    """0 -> 1 -> 2 (sink), 0 -> 3 -> 4 (sink), 5 -> 0 (5 unreachable from 0), 6 isolated."""
    src = np.array([0, 1, 0, 3, 5, 4, 2], np.int64)
    dst = np.array([1, 2, 3, 4, 0, 4, 2], np.int64)
    return src, dst, 7, True


def random_graph(n: int, m: int, seed: int, directed: bool):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m), rng.integers(0, n, m), n, directed


def share(src: np.ndarray, dst: np.ndarray, rank: int, size: int):
    return src[rank::size], dst[rank::size]


def reference_distances(src, dst, n: int, directed: bool, source: int) -> np.ndarray:
    """Unweighted shortest-path lengths from ``source`` by scipy (UNREACHED where none)."""
    keep = src != dst
    a = sp.csr_matrix((np.ones(int(keep.sum())), (src[keep], dst[keep])), shape=(n, n))
    d = csgraph.shortest_path(a, directed=directed, unweighted=True, indices=source)
    return np.where(np.isinf(d), UNREACHED, d).astype(np.int64)


def host(array) -> np.ndarray:
    """A numpy copy of a numpy or cupy array."""
    return array.get() if hasattr(array, "get") else np.asarray(array)


def build(case, comm, backend, weights=None):
    """The graph of ``case`` (``(src, dst, n, directed)``) built from every rank's share, in
    ``backend``'s array module; ``weights`` (aligned with the edges), when given, shared alike."""
    src, dst, n, directed = case
    mine = share(src, dst, comm.rank, comm.size)
    xp = backend.xp
    mine_weights = None if weights is None else xp.asarray(weights[comm.rank :: comm.size])
    return build_graph(
        comm,
        xp.asarray(mine[0]),
        xp.asarray(mine[1]),
        n,
        directed=directed,
        xp=xp,
        weights=mine_weights,
    )


def search(graph, source, backend, comm, *, predecessors=False, timer=None, **plan_options):
    """One search from ``source`` on a plan made for it (``plan_options``: strategy, alpha,
    beta)."""
    plan = SearchPlan.build(graph, backend, comm, **plan_options)
    return bfs_levels(plan, source, predecessors=predecessors, timer=timer)


def check_bfs_tree(case, source: int, distances, preds=None) -> np.ndarray:
    """The BFS checker of the tests, on global arrays: distances equal scipy's; with
    predecessors, Graph500's tree rules: the source is its own parent, unreached vertices have
    none, and every other reached vertex's parent is one level up and joined to it by an edge of
    the graph. Returns scipy's distances."""
    src, dst, n, directed = case
    distances = host(distances)
    expected = reference_distances(src, dst, n, directed, source)
    np.testing.assert_array_equal(distances, expected)
    if preds is None:
        return expected
    preds = host(preds)
    assert preds[source] == source
    assert np.all(preds[expected == UNREACHED] == UNREACHED)
    reached = np.flatnonzero((expected != UNREACHED) & (np.arange(n) != source))
    np.testing.assert_array_equal(expected[preds[reached]], expected[reached] - 1)
    tails, heads = unique_edges(src, dst, n, directed)
    assert np.isin(preds[reached] * max(n, 1) + reached, tails * max(n, 1) + heads).all()
    return expected


def check_level_rows(case, expected: np.ndarray, levels) -> None:
    """A search's level table (``LevelStats`` rows of a search to the end, from one source):
    a row per level (fused levels included), each with the level's frontier, the vertices it
    discovered and, top-down, the out-edges of its frontier as edges expanded."""
    tails, _ = unique_edges(*case)
    degrees = np.bincount(tails, minlength=case[2])
    assert [lv.level for lv in levels] == list(range(int(expected.max()) + 1))
    for lv in levels:
        assert lv.span == 1 and lv.frontier == np.count_nonzero(expected == lv.level)
        assert lv.discovered == np.count_nonzero(expected == lv.level + 1)
        if lv.direction == "top_down":
            assert lv.edges_expanded == degrees[expected == lv.level].sum()


def gather_global(comm, local, n: int) -> np.ndarray:
    """Global array in vertex order from every rank's striped local part (numpy)."""
    parts = comm.allgather_object(host(local))
    out = np.empty(n, dtype=parts[0].dtype)
    for r, part in enumerate(parts):
        out[r :: comm.size] = part
    return out


ANY_RANK_COUNT = {
    "path": path(40),
    "star": star(2000),
    "grid": grid(13, 9),
    "components": components(),
    "loops_and_duplicates": loops_and_duplicates(),
    "directed_with_sinks": directed_with_sinks(),
    "fewer_vertices_than_ranks": (np.array([0], np.int64), np.array([1], np.int64), 2, False),
    "one_vertex": (np.zeros(0, np.int64), np.zeros(0, np.int64), 1, False),
    "random_undirected": random_graph(3000, 12000, 2, False),
    "random_directed": random_graph(3000, 9000, 4, True),
}
"""Structured graphs the multi-rank searches (numpy on CPU ranks, CUDA on GPUs) are checked on,
including fewer vertices than ranks."""

# --- direction-optimizing search: forcings and the expected directions ---------------------

# (alpha, beta): GAP's defaults; bottom-up as early as the safeguards allow and back only after
# a losing level; as early as allowed and back as soon as the frontier shrinks; never bottom-up.
FORCINGS = {
    "default": (15.0, 18.0),
    "stay_bottom_up": (math.inf, math.inf),
    "oscillate": (math.inf, 1e-9),
    "top_down_only": (0.0, 18.0),
}


def unique_edges(src, dst, n, directed):
    """The stored edge set of ``build_graph``: no self-loops, no duplicates, both directions of
    an undirected edge. Returns (tails, heads) sorted by (tail, head)."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    if not directed:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    keep = src != dst
    keys = np.unique(src[keep] * max(n, 1) + dst[keep])
    return keys // max(n, 1), keys % max(n, 1)


def expected_directions(src, dst, n, directed, source, alpha, beta, inspected):
    """The direction of every level, from scipy's distances, out-degrees and the slots each
    bottom-up level reported testing (``inspected``, per level).

    The rule (``distbfs.bfs.choose_direction``), restated: level 0 is top-down; top-down ->
    bottom-up when the frontier at least doubled, its out-edges m_f exceed the unlabeled
    vertices n_u and m_u / alpha' (m_u: out-edges of unlabeled vertices; alpha' = alpha, or the
    m_u / slots realized by the last bottom-up level if lower); bottom-up -> top-down when the
    frontier shrinks below n / beta, or the last bottom-up level tested more slots than m_f and
    the first test fails.
    """
    tails, _ = unique_edges(src, dst, n, directed)
    degree = np.bincount(tails, minlength=n)
    dist = reference_distances(src, dst, n, directed, source)
    depth = int(dist.max())
    sizes = [int(np.count_nonzero(dist == k)) for k in range(depth + 1)]
    edges = [int(degree[dist == k].sum()) for k in range(depth + 1)]
    directions, direction = [TOP_DOWN], TOP_DOWN
    previous, lost, seen = 1, False, math.inf
    unexplored, unvisited = int(degree.sum()) - edges[0], n - 1
    for k in range(1, depth + 1):
        unexplored -= edges[k]
        unvisited -= sizes[k]
        frontier, frontier_edges = sizes[k], edges[k]
        if direction == TOP_DOWN or lost:
            worth = frontier_edges * min(alpha, seen) > unexplored and frontier_edges > unvisited
            direction = BOTTOM_UP if frontier >= 2 * previous and worth else TOP_DOWN
        elif frontier < previous and frontier * beta < n:
            direction = TOP_DOWN
        directions.append(direction)
        if direction == BOTTOM_UP and inspected[k]:
            lost, seen = inspected[k] > frontier_edges, unexplored / inspected[k]
        previous = frontier
    return directions


def losing_bottom_up(leaves=50, layer=120, fan=5, clique=30, seed=0):
    """A root with ``leaves`` leaves, each joined to ``fan`` random vertices of a second layer,
    and a clique the root does not reach. Level 1 goes bottom-up (its frontier exploded and has
    more edges than there are unlabeled vertices) and loses: the clique's vertices scan all
    their edges in vain. Level 2 doubles again but, with the alpha that level 1 realized,
    stays top-down."""
    rng = np.random.default_rng(seed)
    ring = np.arange(1, leaves + 1)
    second = np.arange(leaves + 1, leaves + 1 + layer)
    a, b = np.triu_indices(clique, 1)
    first_clique = leaves + 1 + layer
    src = np.concatenate([np.zeros(leaves, np.int64), np.repeat(ring, fan), first_clique + a])
    dst = np.concatenate([ring, rng.choice(second, leaves * fan), first_clique + b])
    return src.astype(np.int64), dst.astype(np.int64), first_clique + clique, False
