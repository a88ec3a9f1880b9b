"""A reordered graph on the command line (``distbfs reorder``): the user's vertex ids are the
original ones, so sources are mapped to the graph's ids before a search and every per-vertex
output is written in original id order, with vertex-valued entries (predecessors, component
labels) mapped back too. A graph that was not reordered passes through untouched, written
striped without gathering (``write_striped_npy``).

A reordered graph's outputs are assembled on every rank (the permutation needs the whole
array) and written by rank 0: reordering is for graphs whose arrays fit one host.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..api import Graph
from ..api.search import gather_striped
from ..output import write_from_rank0, write_striped_npy


def graph_ids(graph: Graph, sources: np.ndarray) -> np.ndarray:
    """The graph's ids of the user's ``sources``."""
    relabeling = graph.relabeling
    return sources if relabeling is None else relabeling.new_ids(sources)


def original_label(graph: Graph, local_labels: Any, label: int) -> int:
    """The user's label of the component labeled ``label`` (its smallest original id)
    (collective)."""
    relabeling, comm = graph.relabeling, graph.comm
    if relabeling is None:
        return label
    labels = np.asarray(graph.backend.to_host(local_labels))
    owned = np.arange(comm.rank, graph.num_vertices, comm.size)[labels == label]
    mine = int(relabeling.original_ids[owned].min()) if owned.size else graph.num_vertices
    return int(comm.allreduce(mine, op="min"))


def write_per_vertex(graph: Graph, path: str, local: Any, values: str = "plain") -> None:
    """Write this rank's striped ``local`` values (one per owned vertex, or rows of them) as
    ``path`` in the user's vertex order (collective). ``values``: "plain", "vertices" (ids, -1
    for none: mapped to original ids) or "labels" (component labels: each component's smallest
    original id)."""
    relabeling, comm, n = graph.relabeling, graph.comm, graph.num_vertices
    if relabeling is None:
        write_striped_npy(path, local, n, comm)
        return
    ids = relabeling.original_ids
    host = np.asarray(graph.backend.to_host(local))
    full = gather_striped(comm, host, n, np)
    if values == "vertices":
        full = np.where(full >= 0, ids[np.maximum(full, 0)], full)
    elif values == "labels":
        smallest = np.full(n, n, dtype=np.int64)
        np.minimum.at(smallest, full, ids)
        full = smallest[full]
    out = np.empty_like(full)
    out[ids] = full
    write_from_rank0(path, comm, lambda temp: _save(temp, out))


def write_matrix(graph: Graph, path: str, local_rows: Any) -> None:
    """Write the striped rows of an (n, n) matrix as ``path``, rows and columns in the user's
    vertex order (collective)."""
    relabeling, comm, n = graph.relabeling, graph.comm, graph.num_vertices
    if relabeling is None:
        write_striped_npy(path, local_rows, n, comm)
        return
    rows = np.asarray(graph.backend.to_host(local_rows))
    parts = comm.allgather_object(rows)
    full = np.empty((n, n), dtype=rows.dtype)
    for r, part in enumerate(parts):
        full[r :: comm.size] = part
    order = relabeling.new_ids(np.arange(n))
    matrix = full[np.ix_(order, order)]
    write_from_rank0(path, comm, lambda temp: _save(temp, matrix))


def _save(temp: str, array: np.ndarray) -> None:
    with open(temp, "wb") as handle:
        np.save(handle, array)
