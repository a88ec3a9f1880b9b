"""Graph500 kernel 2 statistics: the edge count of a search and the summary over all searches.

``traversed_edges`` is Graph500's ``nedge``: the edges of the searched component, each undirected
edge once (sum of the degrees of the reached vertices over 2 on the symmetric, self-loop-free CSR);
for a directed graph the out-edges of the reached vertices.

``graph500_statistics`` follows the reference code (``get_statistics`` in the Graph500 MPI
reference, printed by ``output.c``/``logfile.h``):

- mean; stddev with the n - 1 denominator (NaN for a single search, as 0/0 in the reference);
- order statistics of the sorted sample x[0..n-1] (0-based, integer division):
  min = x[0], firstquartile = (x[(n-1)/4] + x[n/4]) / 2, median = (x[(n-1)/2] + x[n/2]) / 2,
  thirdquartile = (x[n-1-(n-1)/4] + x[n-1-n/4]) / 2, max = x[n-1];
- TEPS order statistics are those of the seconds per edge (time / nedge), inverted: min_TEPS =
  1 / max(spe), firstquartile_TEPS = 1 / thirdquartile(spe), and so on;
  harmonic_mean_TEPS = 1 / mean(spe); harmonic_stddev_TEPS = stddev(spe) / (mean(spe)**2 *
  sqrt(n - 1)) (Norris 1940, as in the reference);
- mean_TEPS and stddev_TEPS, which the reference does not print, are the arithmetic mean and
  the n - 1 standard deviation of the per-search TEPS nedge / time.
A search with nedge 0 has infinite seconds per edge (TEPS 0); the harmonic mean is then 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .arrays import array_module, to_module
from .comm.base import Communicator
from .constants import UNREACHED
from .graph import DistGraph

ORDER_STATISTICS = ("min", "firstquartile", "median", "thirdquartile", "max")
SUMMARY = (*ORDER_STATISTICS, "mean", "stddev")
STATISTIC_KEYS = (
    *(f"{s}_time" for s in SUMMARY),
    *(f"{s}_nedge" for s in SUMMARY),
    *(f"{s}_TEPS" for s in SUMMARY),
    "harmonic_mean_TEPS",
    "harmonic_stddev_TEPS",
)
"""Keys of ``graph500_statistics`` in the order ``format_statistics`` prints them."""

SUM_CHUNK = 1 << 21
"""Vertices per step of ``search_sums`` in an array module (no backend's count): its
temporaries (17 bytes a vertex) stay small beside the graph, which still holds the search's
labels and predecessors then."""


def search_sums(
    graph: DistGraph, comm: Communicator, distances: Any, backend: Any = None
) -> tuple[int, int]:
    """Graph500 ``nedge`` of one search and the vertices it reached, over all ranks
    (collective: one all-reduce).

    Parameters
    ----------
    graph : DistGraph
        The graph that was searched.
    comm : Communicator
        The job's communicator.
    distances : array
        Levels of this rank's owned vertices in local order (UNREACHED where not reached), numpy
        or cupy (moved to the array module of the graph's arrays when it is the other one).
    backend : Backend, optional
        The backend that searched; one with ``unlabeled`` (the CUDA backend's: one kernel, one
        read) counts where the graph lives. Otherwise the counts are summed in the graph's array
        module, ``SUM_CHUNK`` vertices a step, each step read back (a step's few launches and
        read cost tens of microseconds on a GPU: kron27 on one GPU takes 64 of them).

    Returns
    -------
    tuple of int
        (nedge, reached). nedge: undirected graphs: sum of the degrees of the reached vertices
        // 2 (each edge of the searched component once); directed: sum of their out-degrees.
    """
    xp = array_module(graph.row_offsets)  # summed where the graph lives; two counts come back
    distances = to_module(xp, distances)
    count = getattr(backend, "unlabeled", None)
    if count is not None and xp is getattr(backend, "xp", None):
        unlabeled, unlabeled_edges = count(graph, distances)
        local = [graph.num_local_edges - unlabeled_edges, graph.nlocal - unlabeled]
    else:
        local = _summed_in_steps(xp, graph, distances)
    edges, reached = comm.allreduce(np.asarray(local, dtype=np.int64)).tolist()
    return (int(edges) if graph.directed else int(edges) // 2), int(reached)


def _summed_in_steps(xp: Any, graph: DistGraph, distances: Any) -> list[int]:
    """[out-edges of the reached owned vertices, how many] in ``xp``, ``SUM_CHUNK`` at a time.
    The reached are counted as int64 ones: CuPy sums int64 with CUB's reduction compiled into
    CuPy, while a boolean sum compiles a reduction kernel with CUB's headers on first use (about
    3 s with an empty kernel cache)."""
    offsets = graph.row_offsets
    edges = reached = 0
    for start in range(0, graph.nlocal, SUM_CHUNK):  # temporaries of one chunk at a time
        stop = min(start + SUM_CHUNK, graph.nlocal)
        flags = (distances[start:stop] != UNREACHED).astype(np.int64)
        reached += int(flags.sum())
        flags *= offsets[start + 1 : stop + 1] - offsets[start:stop]  # (no boolean selection)
        edges += int(flags.sum())
    return [edges, reached]


def traversed_edges(
    graph: DistGraph, comm: Communicator, distances: Any, backend: Any = None
) -> int:
    """Graph500 ``nedge`` of one search (collective): ``search_sums``'s first count."""
    return search_sums(graph, comm, distances, backend)[0]


def _summary(x: np.ndarray) -> dict[str, float]:
    """The reference's ``get_statistics``: order statistics, mean, stddev (n - 1)."""
    n = x.size
    xs = np.sort(x)
    mean = float(np.mean(x))
    with np.errstate(invalid="ignore", divide="ignore"):
        var = np.sum((x - mean) ** 2) / np.float64(n - 1)
    return {
        "min": float(xs[0]),
        "firstquartile": float((xs[(n - 1) // 4] + xs[n // 4]) * 0.5),
        "median": float((xs[(n - 1) // 2] + xs[n // 2]) * 0.5),
        "thirdquartile": float((xs[n - 1 - (n - 1) // 4] + xs[n - 1 - n // 4]) * 0.5),
        "max": float(xs[n - 1]),
        "mean": mean,
        "stddev": float(np.sqrt(var)),
    }


def graph500_statistics(times: Sequence[float], nedges: Sequence[int]) -> dict[str, float]:
    """Graph500 statistics of a set of searches.

    Parameters
    ----------
    times : sequence of float
        Seconds of each search.
    nedges : sequence of int
        Graph500 ``nedge`` of each search (see ``traversed_edges``).

    Returns
    -------
    dict
        ``STATISTIC_KEYS`` -> value, computed as the module docstring says.
    """
    t = np.asarray(times, dtype=np.float64)
    m = np.asarray(nedges, dtype=np.float64)
    if t.ndim != 1 or t.shape != m.shape or t.size == 0:
        raise ValueError(
            f"need one time and one nedge per search, got {t.size} times and {m.size} nedges"
        )
    stats: dict[str, float] = {}
    for name, value in _summary(t).items():
        stats[f"{name}_time"] = value
    for name, value in _summary(m).items():
        stats[f"{name}_nedge"] = value
    with np.errstate(divide="ignore", invalid="ignore"):
        secs_per_edge = t / m
        spe = _summary(secs_per_edge)
        teps = _summary(m / t)
        inverse = {k: float(1.0 / np.float64(v)) for k, v in spe.items()}
        harmonic_stddev = np.float64(spe["stddev"]) / (
            np.float64(spe["mean"]) ** 2 * np.sqrt(np.float64(t.size - 1))
        )
    stats["min_TEPS"] = inverse["max"]
    stats["firstquartile_TEPS"] = inverse["thirdquartile"]
    stats["median_TEPS"] = inverse["median"]
    stats["thirdquartile_TEPS"] = inverse["firstquartile"]
    stats["max_TEPS"] = inverse["min"]
    stats["mean_TEPS"] = teps["mean"]
    stats["stddev_TEPS"] = teps["stddev"]
    stats["harmonic_mean_TEPS"] = inverse["mean"]
    stats["harmonic_stddev_TEPS"] = float(harmonic_stddev)
    return {key: stats[key] for key in STATISTIC_KEYS}


def format_statistics(stats: Mapping[str, float]) -> str:
    """The statistics as the Graph500 reference prints them: ``name:`` padded to 32 columns,
    then the value (``%.11g`` for nedge, ``%.12g`` otherwise), one per line, in
    ``STATISTIC_KEYS`` order."""
    lines = []
    for key in STATISTIC_KEYS:
        digits = 11 if key.endswith("_nedge") else 12
        lines.append(f"{key + ':':<32}{stats[key]:.{digits}g}")
    return "\n".join(lines)
