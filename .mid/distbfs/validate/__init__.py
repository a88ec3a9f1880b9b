"""Distributed validation of search results against the graph (collective checks).

- ``validate``: one BFS result, exact levels and Graph500's five rules (``bfs``).
- ``validate_sssp``: one shortest-path result, Graph500's SSSP rules, exact (``sssp``).
- ``validate_components``: one connected-components result, canonical labels (``cc``).
- ``common``: the machinery both share (agreement on the first offender, queries to the owners
  of far endpoints, chunked walks over the local edges, edge lookups, pointer jumping). Its
  ``EDGE_CHUNK`` is read there at each walk: set it on ``distbfs.validate.common``.

Every check raises the same ``ValidationError(rule, vertex, message)`` on every rank, naming the
rule and the smallest offending global vertex id.
"""

from ..arrays import array_module, to_module
from . import common
from .bfs import (
    RULE_DISTANCES,
    RULE_EDGE_LEVELS,
    RULE_NO_CYCLES,
    RULE_SPANS_COMPONENT,
    RULE_TREE_EDGE_LEVELS,
    RULE_TREE_EDGES_IN_GRAPH,
    validate,
)
from .cc import RULE_EDGE_LABELS, RULE_LABEL_VALUES, RULE_SMALLEST_LABELS, validate_components
from .common import (
    RULE_SOURCE,
    Candidate,
    _edge_slots,
    _has_edges,
    _per_edge,
    _pointer_jumping,
    _row_chunks,
)
from .sssp import (
    RULE_ACYCLIC,
    RULE_DISTANCE_VALUES,
    RULE_EDGE_RELAXATION,
    RULE_REACHED_SET,
    RULE_TREE_EDGES,
    validate_sssp,
)

__all__ = [
    "RULE_ACYCLIC",
    "RULE_DISTANCES",
    "RULE_DISTANCE_VALUES",
    "RULE_EDGE_LABELS",
    "RULE_EDGE_LEVELS",
    "RULE_EDGE_RELAXATION",
    "RULE_LABEL_VALUES",
    "RULE_NO_CYCLES",
    "RULE_REACHED_SET",
    "RULE_SMALLEST_LABELS",
    "RULE_SOURCE",
    "RULE_SPANS_COMPONENT",
    "RULE_TREE_EDGES",
    "RULE_TREE_EDGES_IN_GRAPH",
    "RULE_TREE_EDGE_LEVELS",
    "Candidate",
    "_edge_slots",
    "_has_edges",
    "_per_edge",
    "_pointer_jumping",
    "_row_chunks",
    "array_module",
    "common",
    "to_module",
    "validate",
    "validate_components",
    "validate_sssp",
]
