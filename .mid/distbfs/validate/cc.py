"""Distributed validation of one connected-components result (``distbfs.connected_components``,
Afforest): canonical labels, every vertex labeled with the smallest vertex id of its (weakly, on
a directed graph) connected component.

A result is this rank's labels: one integer per owned vertex, local order. Checks, in this
order, each ending in an agreement: if any rank found an offender, every rank raises the same
``ValidationError`` naming the rule and the smallest offending global vertex id (the machinery
is ``distbfs.validate.common``'s, shared with the BFS and SSSP checks):

- ``label values``: every label is a vertex id no larger than its vertex: 0 <= label(v) <= v.
- ``smallest labels``: every label is a vertex carrying itself: label(label(v)) == label(v) (one
  query to the owner of each label and a reply). With the rule above, label L is then the
  smallest id carrying L: a smaller vertex w carrying L would have label(w) > w.
- ``edge labels``: every stored edge u -> v joins equal labels (each rank walks its rows in
  chunks of whole rows and asks the owners of the heads for their labels: the distinct ids, one
  all-to-all-v, one reply). Offender: v, the head (the smallest tail picks the message). On a
  directed graph every edge lies in its tail's row, so the out-rows hold them all.

What they prove: the label classes are unions of components (edges join equal labels), each
labeled by its smallest vertex. That no class joins two components is not a local property (a
label is a vertex of its class, but the rules cannot see a class's separate parts); the
algorithm ensures it by hooking only along edges, and the tests compare the number of
components with a BFS's.

Invariants: every rank runs the same collectives in the same order whatever it finds; the error
is the same at every rank count. Only scalars reach the host; per-edge temporaries are a few
arrays of one chunk of edges (``common.EDGE_CHUNK``), plus one label per vertex this rank's rows
point to on several ranks.
"""

from __future__ import annotations

from typing import Any

from ..comm.base import Communicator
from ..graph import DistGraph
from ..partition import local_id
from .common import (
    _agree,
    _ask,
    _check_shapes,
    _first,
    _first_bad_edge,
    _Local,
    _per_edge,
    _value_table,
)

RULE_LABEL_VALUES = "label values"
RULE_SMALLEST_LABELS = "smallest labels"
RULE_EDGE_LABELS = "edge labels"


def validate_components(graph: DistGraph, comm: Communicator, labels: Any) -> None:
    """Check one connected-components result against the graph (collective).

    Parameters
    ----------
    graph : DistGraph
        The graph whose components were computed (this rank's rows). The checks run in the
        array module of its arrays: numpy on the host, cupy on the GPU.
    comm : Communicator
        The job's communicator.
    labels : array
        The component label of every owned vertex in local order: an integer array, numpy or
        cupy (moved to the graph's array module when it is the other one), compared as int64.

    Raises
    ------
    ValidationError
        On every rank, with the first failing rule's name and the smallest offending vertex over
        all ranks (see the module docstring for the rules and their order).
    ValueError
        On every rank, when some rank's labels do not have one integer per owned vertex.
    """
    local = _Local(graph, labels, None)
    _check_shapes(comm, graph, [("labels", local.labels, "iu", "an integer array")])
    local.labels = local.labels.astype(local.xp.int64, copy=False)
    _check_label_values(comm, local)
    _check_smallest_labels(comm, local)
    _check_edge_labels(comm, graph, local)


def _check_label_values(comm: Communicator, local: _Local) -> None:
    bad = (local.labels < 0) | (local.labels > local.vertices)
    i = _first(local.xp, local.vertices, bad)
    candidate = None
    if i is not None:
        v, label = int(local.vertices[i]), int(local.labels[i])
        why = "is negative" if label < 0 else f"is larger than the vertex id {v}"
        candidate = (v, 0, label, f"vertex {v} has label {label}, which {why}")
    _agree(comm, RULE_LABEL_VALUES, candidate)


def _check_smallest_labels(comm: Communicator, local: _Local) -> None:
    """label(label(v)) == label(v): the owner of each label answers with its label."""
    xp, labels = local.xp, local.labels
    (theirs,) = _ask(comm, xp, labels, (), lambda loc: (labels[loc],))
    i = _first(xp, local.vertices, theirs != labels)
    candidate = None
    if i is not None:
        v, label, other = int(local.vertices[i]), int(labels[i]), int(theirs[i])
        why = (
            f"vertex {v} has label {label}, but vertex {label} has label {other}: a label must "
            "be the smallest vertex of its component, which carries it"
        )
        candidate = (v, 0, label, why)
    _agree(comm, RULE_SMALLEST_LABELS, candidate)


def _check_edge_labels(comm: Communicator, graph: DistGraph, local: _Local) -> None:
    """Every stored edge joins equal labels."""
    xp, labels = local.xp, local.labels
    table = _value_table(comm, graph, local, labels)

    def bad_edges(offsets: Any, r0: int, r1: int, e0: int, e1: int, heads: Any) -> Any:
        return table[heads] != _per_edge(xp, offsets, labels[r0:r1], e1 - e0)

    worst = _first_bad_edge(xp, graph, local, bad_edges)
    candidate = None
    if worst is not None:
        v, u, _ = worst
        lu, lv = int(labels[local_id(u, graph.size)]), int(table[v])
        edge = f"edge {u} -> {v}" if graph.directed else f"edge {{{u}, {v}}}"
        candidate = (v, 0, u, f"{edge} joins vertex {u} of label {lu} and {v} of label {lv}")
    _agree(comm, RULE_EDGE_LABELS, candidate)
