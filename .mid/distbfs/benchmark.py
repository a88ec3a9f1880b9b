"""The benchmark harness (Graph500 kernels 2 and 3: BFS and shortest paths; batched BFS;
connected components), the one that ``distbfs bench`` and the scripts in ``benchmarks/`` call:
searches of one graph from a list of roots (runs of the whole graph for connected components;
runs over all the roots at once for batched BFS), each timed, the first ones validated, with
Graph500 statistics over all of them and the per-level (per-bucket, per-round) profile of one
search.

A warm-up search of ``roots[0]`` runs first, untimed: it pays once what a first search pays
(kernel compilation, NCCL connections, queue growth), so no timed search counts it; BFS then
compiles the stages that search did not run (``GraphResources.load_kernels``). The timed
searches run without phase timers; the profiled search (phase timers on, ``roots[0]`` again)
runs last, on a warm graph. Timing stays here and in the API's search call, never in the
stages.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from .api import (
    BatchedBFSResult,
    BFSResult,
    ComponentsResult,
    Graph,
    SSSPResult,
    bfs,
    bfs_many,
    connected_components,
    sssp,
)
from .engine.strategy import check_strategy
from .stats import graph500_statistics


@dataclass
class SearchSeries:
    """Searches of one graph under one strategy: one per root.

    Attributes
    ----------
    strategy : str
        The strategy the searches ran (the backend's default resolved).
    roots : list of int
    times : list of float
        Seconds of each search (slowest rank), in root order.
    nedges : list of int
        Graph500 edge count of each search.
    depths : list of int
        Largest distance each search reached.
    validated : int
        How many searches were validated (the first ones).
    statistics : dict
        ``distbfs.stats.graph500_statistics`` of ``times`` and ``nedges``.
    profile : BFSResult
        The search from ``roots[0]`` with phase timers (its ``levels`` carry the seconds).
    """

    strategy: str
    roots: list[int]
    times: list[float]
    nedges: list[int]
    depths: list[int]
    validated: int
    statistics: dict[str, float]
    profile: BFSResult

    @property
    def mean_seconds(self) -> float:
        return sum(self.times) / len(self.times)

    def document(self) -> dict[str, Any]:
        """The series as JSON-ready data (per-root times, statistics, the profile's levels)."""
        return {
            "strategy": self.strategy,
            "roots": self.roots,
            "validated": self.validated,
            "times": self.times,
            "nedges": self.nedges,
            "depths": self.depths,
            "statistics": self.statistics,
            "levels_root": self.roots[0],
            "levels": [asdict(level) for level in self.profile.levels],
        }


def run_searches(
    graph: Graph,
    roots: Sequence[int],
    *,
    predecessors: bool = False,
    validate: bool | int = True,
    strategy: str | None = None,
    alpha: float | None = None,
    beta: float | None = None,
    after_each: Callable[[BFSResult], None] | None = None,
) -> SearchSeries:
    """A warm-up search, one timed search per root, then the profiled search (collective).

    ``validate``: True validates every search, False none, an int the first that many (each
    against Graph500's rules and exact levels; a failure raises ``ValidationError``).
    ``after_each`` is called with every timed search's result (progress bars).
    """
    if not roots:
        raise ValueError("roots: at least one root is needed")
    options = {"predecessors": predecessors, "gather": False, "strategy": strategy}
    options.update(alpha=alpha, beta=beta)
    bfs(graph, roots[0], **options)  # the warm-up
    graph.resources.load_kernels()  # the stages the warm-up root's search did not run
    checked = len(roots) if validate is True else int(validate)
    times, nedges, depths = [], [], []
    for i, root in enumerate(roots):
        result = bfs(graph, root, validate=i < checked, **options)
        times.append(result.seconds)
        nedges.append(result.edges_traversed)
        depths.append(result.depth)
        if after_each is not None:
            after_each(result)
    profile = bfs(graph, roots[0], timing=True, **options)
    statistics = {k: float(v) for k, v in graph500_statistics(times, nedges).items()}
    return SearchSeries(
        strategy=str(check_strategy(strategy, graph.backend)),
        roots=[int(r) for r in roots],
        times=times,
        nedges=nedges,
        depths=depths,
        validated=min(checked, len(roots)),
        statistics=statistics,
        profile=profile,
    )


@dataclass
class PathSeries:
    """Shortest-path searches of one graph (Graph500 kernel 3 style): one per root.

    Attributes
    ----------
    delta : float
        The bucket width the searches used.
    roots, times, nedges, validated, statistics
        As in ``SearchSeries``.
    buckets : list of int
        Buckets each search ran.
    relaxations : list of int
        Relaxation requests each search made.
    profile : SSSPResult
        The search from ``roots[0]`` with phase timers.
    """

    delta: float
    roots: list[int]
    times: list[float]
    nedges: list[int]
    buckets: list[int]
    relaxations: list[int]
    validated: int
    statistics: dict[str, float]
    profile: SSSPResult

    def document(self) -> dict[str, Any]:
        """The series as JSON-ready data."""
        return {
            "algorithm": "sssp",
            "delta": self.delta,
            "roots": self.roots,
            "validated": self.validated,
            "times": self.times,
            "nedges": self.nedges,
            "buckets": self.buckets,
            "relaxations": self.relaxations,
            "statistics": self.statistics,
            "buckets_root": self.roots[0],
            "bucket_stats": [asdict(bucket) for bucket in self.profile.buckets],
            "rows": self.profile.rows,
        }


def run_path_searches(
    graph: Graph,
    roots: Sequence[int],
    *,
    delta: float | None = None,
    predecessors: bool = True,
    validate: bool | int = True,
    after_each: Callable[[SSSPResult], None] | None = None,
) -> PathSeries:
    """Shortest paths as ``run_searches`` runs BFS (collective): a warm-up, one timed search per
    root (the first ``validate`` validated against Graph500's SSSP rules), the profiled one."""
    if not roots:
        raise ValueError("roots: at least one root is needed")
    options = {"predecessors": predecessors, "gather": False, "delta": delta}
    sssp(graph, roots[0], **options)  # the warm-up
    checked = len(roots) if validate is True else int(validate)
    times, nedges, buckets, relaxations = [], [], [], []
    for i, root in enumerate(roots):
        result = sssp(graph, root, validate=i < checked, **options)
        times.append(result.seconds)
        nedges.append(result.edges_traversed)
        buckets.append(len(result.buckets))
        relaxations.append(result.relaxations)
        if after_each is not None:
            after_each(result)
    profile = sssp(graph, roots[0], timing=True, **options)
    statistics = {k: float(v) for k, v in graph500_statistics(times, nedges).items()}
    return PathSeries(
        delta=profile.delta,
        roots=[int(r) for r in roots],
        times=times,
        nedges=nedges,
        buckets=buckets,
        relaxations=relaxations,
        validated=min(checked, len(roots)),
        statistics=statistics,
        profile=profile,
    )


@dataclass
class ComponentSeries:
    """Connected-components runs of one graph (Afforest), timed like Graph500's searches: every
    run labels the whole graph, so each counts the graph's edges (undirected edges once).

    Attributes
    ----------
    runs : int
    times : list of float
        Seconds of each run (slowest rank).
    nedges : list of int
        The graph's edges, once per run (what the TEPS statistics divide).
    rounds : list of int
        Rounds each run took.
    count : int
        Components of the graph (isolated vertices included).
    largest : tuple of int
        (label, size) of the largest component.
    validated : int
        How many runs were validated (the first ones).
    statistics : dict
        ``distbfs.stats.graph500_statistics`` of ``times`` and ``nedges``.
    profile : ComponentsResult
        A last run with phase timers (its ``rounds`` carry the seconds).
    """

    runs: int
    times: list[float]
    nedges: list[int]
    rounds: list[int]
    count: int
    largest: tuple[int, int]
    validated: int
    statistics: dict[str, float]
    profile: ComponentsResult

    def document(self) -> dict[str, Any]:
        """The series as JSON-ready data (per-run times, statistics, the profile's rounds)."""
        return {
            "algorithm": "cc",
            "runs": self.runs,
            "validated": self.validated,
            "times": self.times,
            "nedges": self.nedges,
            "rounds": self.rounds,
            "components": self.count,
            "largest_label": self.largest[0],
            "largest_size": self.largest[1],
            "statistics": self.statistics,
            "round_stats": [asdict(row) for row in self.profile.rounds],
        }


def run_cc_runs(
    graph: Graph,
    runs: int,
    *,
    validate: bool | int = True,
    after_each: Callable[[ComponentsResult], None] | None = None,
) -> ComponentSeries:
    """Connected components as ``run_searches`` runs BFS (collective): a warm-up run, ``runs``
    timed runs (the first ``validate`` validated: True all, False none, an int that many; each
    against ``distbfs.validate.validate_components``'s rules and the first run's labels), then
    the profiled run with phase timers."""
    if runs < 1:
        raise ValueError(f"runs: at least one run is needed, got {runs}")
    first = connected_components(graph, gather=False)  # the warm-up
    checked = runs if validate is True else int(validate)
    times, rounds = [], []
    for i in range(runs):
        result = connected_components(graph, gather=False, validate=i < checked)
        if i < checked:
            _same_labels(graph, first, result)
        times.append(result.seconds)
        rounds.append(len(result.rounds))
        if after_each is not None:
            after_each(result)
    profile = connected_components(graph, gather=False, timing=True)
    nedges = [graph.num_undirected_edges] * runs
    statistics = {k: float(v) for k, v in graph500_statistics(times, nedges).items()}
    return ComponentSeries(
        runs=runs,
        times=times,
        nedges=nedges,
        rounds=rounds,
        count=profile.count,
        largest=profile.largest,
        validated=min(checked, runs),
        statistics=statistics,
        profile=profile,
    )


def _same_labels(graph: Graph, first: ComponentsResult, result: ComponentsResult) -> None:
    """``ValidationError`` on every rank unless ``result``'s labels are the warm-up's (the
    labels are canonical, so every run must give the same)."""
    from .validate.common import _agree, _first

    xp = graph.backend.xp
    vertices = result.local_vertices
    i = _first(xp, vertices, first.local_labels != result.local_labels)
    candidate = None
    if i is not None:
        v, a, b = int(vertices[i]), int(first.local_labels[i]), int(result.local_labels[i])
        candidate = (v, 0, 0, f"vertex {v} has label {b}, but {a} in the first run")
    _agree(graph.comm, "same labels", candidate)


DEFAULT_BATCHED_RUNS = 4
"""Timed runs of ``bench --batched`` (every run searches all the roots)."""


@dataclass
class BatchedSeries:
    """Runs of ``bfs_many`` over the same roots (64 per traversal), each timed as a whole.

    Attributes
    ----------
    roots : list of int
    times : list of float
        Seconds of each run (slowest rank): every root searched.
    nedges : list of int
        Graph500 edge counts of all the run's searches together, once per run.
    validated : int
        Searches validated (every row of the first run, or none).
    statistics : dict
        ``distbfs.stats.graph500_statistics`` of ``times`` and ``nedges`` (aggregate TEPS).
    profile : BatchedBFSResult
        A last run with phase timers (its ``batches`` carry the seconds).
    """

    roots: list[int]
    times: list[float]
    nedges: list[int]
    validated: int
    statistics: dict[str, float]
    profile: BatchedBFSResult

    @property
    def searches_per_second(self) -> float:
        """Roots searched per second in the median run."""
        median = sorted(self.times)[len(self.times) // 2]
        return len(self.roots) / median if median > 0 else float("inf")

    def document(self) -> dict[str, Any]:
        """The series as JSON-ready data (per-run times, statistics, the profile's levels)."""
        return {
            "algorithm": "bfs",
            "batched": True,
            "roots": self.roots,
            "validated": self.validated,
            "times": self.times,
            "nedges": self.nedges,
            "searches_per_second": self.searches_per_second,
            "statistics": self.statistics,
            "batch_levels": [[asdict(row) for row in rows] for rows in self.profile.batches],
        }


def run_batched(
    graph: Graph,
    roots: Sequence[int],
    runs: int = DEFAULT_BATCHED_RUNS,
    *,
    validate: bool = True,
    after_each: Callable[[BatchedBFSResult], None] | None = None,
) -> BatchedSeries:
    """A warm-up run, ``runs`` timed runs of ``bfs_many(graph, roots)`` (the first validated,
    every row), then the profiled run (collective)."""
    if not roots or runs < 1:
        raise ValueError(f"roots and runs: at least one each is needed, got {len(roots)}, {runs}")
    bfs_many(graph, roots, gather=False)  # the warm-up
    times, nedges = [], []
    for i in range(runs):
        result = bfs_many(graph, roots, gather=False, validate=validate and i == 0)
        times.append(result.seconds)
        nedges.append(result.edges_traversed)
        if after_each is not None:
            after_each(result)
    profile = bfs_many(graph, roots, gather=False, timing=True)
    statistics = {k: float(v) for k, v in graph500_statistics(times, nedges).items()}
    return BatchedSeries(
        roots=[int(r) for r in roots],
        times=times,
        nedges=nedges,
        validated=len(roots) if validate else 0,
        statistics=statistics,
        profile=profile,
    )
