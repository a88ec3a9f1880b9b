"""Connected components by Afforest (Sutton, Ben-Nun & Barak, "Optimizing Parallel Graph
Connectivity Computation via Subgraph Sampling", IPDPS 2018; gapbs ``cc.cc``) over the array
module: the state of one run on one rank and the links it hooks.

State. ``labels`` holds, for every owned vertex (local order), the global id of its parent in a
forest of min-label trees (Shiloach-Vishkin style union-find). A root points at itself. Every
pointer goes down: ``labels[v] <= v``, and a root only ever takes a smaller label, so there is
no cycle, every tree's root is its smallest vertex, and a vertex's label only decreases. After
every compress (``hook.jump``) every vertex points at its tree's root (the forest is stars), and
hooking reads only those: so the tree of a finished run is a star whose root is the smallest
vertex of the component, the canonical label.

Links: pairs (tail, head) of an edge, the tail an owned vertex (local id), the head any vertex
(global id), in the undirected view of the graph (out-neighbours, and on a directed graph the
in-neighbours too: weakly connected components). ``sample_links``: neighbour ``r`` of every
owned vertex (Afforest's sampled subgraph, gapbs's ``out_neigh(u, r)``); ``remaining_links``:
every neighbour of the owned vertices outside the largest intermediate component (the edges
Afforest still has to link; an edge inside that component joins a tree with itself already, and
an edge with an endpoint outside it is in that endpoint's row).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ...constants import UNREACHED
from ...graph import DistGraph
from ...partition import global_id, local_id
from ..base import frontier_bitmap_bytes
from .ops import gather_ranges

LABEL_NONE = 2**63 - 1
"""The empty slot of the per-vertex scratch tables (larger than every vertex id)."""


@dataclass
class ComponentState:
    """Everything one connected-components run keeps on one rank.

    ``labels``: int64, the parent (global id) of every owned vertex, local order (module
    docstring). ``scratch``: the run's tables, each made at first use (``scratch_table``:
    ``mark``, bool over all n vertices; ``table`` and ``best``, int64 over all n,
    ``LABEL_NONE`` where empty; ``owned``, the owned vertices' ids), the ids kept between steps
    (``queries``, ``active``) and a backend's own (a replica's ``hooked``). ``resources``: the
    backend's per-graph resources; ``graph``: the graph whose vertices these are.
    """

    labels: Any
    scratch: dict[str, Any]
    resources: Any = None
    graph: DistGraph | None = None


@dataclass
class Links:
    """Edges to hook: ``tails`` (local ids of owned vertices, int64) and ``heads`` (global
    ids, int64); after ``hook.cross``, only the links joining different labels, with ``low``
    and ``high``, the smaller and larger of their two labels."""

    tails: Any
    heads: Any
    low: Any = None
    high: Any = None

    @property
    def size(self) -> int:
        return int(self.tails.shape[0])


def components_start(
    xp: Any, graph: DistGraph, resources: Any, seeded: bool = False
) -> ComponentState:
    """Every owned vertex a root (its own label); no scratch table yet (``scratch_table``).
    ``seeded``: the labels are left unset, for ``seed_labels`` to write every one."""
    if seeded:
        labels = xp.empty(graph.nlocal, dtype=xp.int64)
    else:
        labels = graph.owned_vertices(xp)
    return ComponentState(labels, {}, resources, graph)


def scratch_table(xp: Any, state: ComponentState, name: str) -> Any:
    """The run's table ``name`` (``ComponentState``), made at its first use: a run that links
    in place never needs one, and its start would spend on them as long as on its labels."""
    table = state.scratch.get(name)
    if table is None:
        graph = state.graph
        if name == "owned":
            table = graph.owned_vertices(xp)
        elif name == "mark":
            table = xp.zeros(graph.n, dtype=xp.bool_)
        elif name in ("table", "best"):
            table = xp.full(graph.n, LABEL_NONE, dtype=xp.int64)
        else:
            raise KeyError(f"no scratch table {name!r}")
        state.scratch[name] = table
    return table


class Reached(NamedTuple):
    """What a search reached on this rank (``reached_bits``): the owned vertices' packed bits
    (the frontier bitmap layout, ``distbfs.backends.base``), how many, the smallest global id
    among them (n where none) and, where asked for, the owned vertices it did not reach that
    have out-edges (global ids, in no particular order; else None) and their out-edges: after
    a search that found a whole component of an undirected graph, the only rows left to link,
    and a bound on their pairs (``listed_pairs``)."""

    bits: Any
    count: int
    smallest: int
    rows: Any = None
    edges: int = 0


def reached_bits(xp: Any, graph: DistGraph, distances: Any, rows: bool = False) -> Reached:
    """The owned vertices a search reached (``distances`` not UNREACHED, local order) as a
    ``Reached``, with the rows left to link where ``rows``."""
    flags = distances != UNREACHED
    count = int(flags.sum())
    smallest = int(flags.argmax()) * graph.size + graph.rank if count else graph.n
    bits = xp.zeros(frontier_bitmap_bytes(graph.n, graph.size), dtype=xp.uint8)
    packed = xp.packbits(flags, bitorder="little")
    bits[: packed.shape[0]] = packed
    left, edges = None, 0
    if rows:
        degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
        listed = ~flags & (degrees > 0)
        left = global_id(xp.flatnonzero(listed), graph.rank, graph.size)
        edges = int(degrees[listed].sum())
    return Reached(bits, count, smallest, left, edges)


def seed_labels(xp: Any, state: ComponentState, bits: Any, label: int) -> None:
    """Every label of a new run's state written: a vertex whose bit is set takes ``label``,
    any other its own id (``reached_bits``'s layout). ``bits`` are this rank's (a state of the
    owned labels) or every rank's stacked, ``(size, bytes)``, for a replica of every label
    (global vertex v: row ``v % size``, bit ``v // size``)."""
    rows = bits.shape[0] if bits.ndim == 2 else 1
    flags = xp.unpackbits(bits.reshape(-1), bitorder="little").reshape(rows, -1)
    if rows > 1:
        flags = flags.T
    count = state.labels.shape[0]
    flags = flags.reshape(-1)[:count].view(xp.bool_)
    ids = xp.arange(count, dtype=xp.int64) if rows > 1 else state.graph.owned_vertices(xp)
    xp.copyto(state.labels, xp.where(flags, xp.int64(label), ids))


def take_labels(
    xp: Any,
    graph: DistGraph,
    state: ComponentState,
    source: ComponentState,
    rows: Any,
    replica: bool,
) -> None:
    """The labels of the owned vertices ``rows`` (global ids) from ``source`` (another run's
    owned labels, or where ``replica`` a replica, indexed by global id) into ``state``."""
    local = local_id(rows, graph.size)
    state.labels[local] = source.labels[rows if replica else local]


def _row_heads(xp: Any, graph: DistGraph, rows: Any) -> tuple[Any, Any]:
    """(tails, heads): every neighbour of the owned ``rows`` in ``graph``, row by row."""
    starts = graph.row_offsets[rows]
    slots, owners = gather_ranges(xp, starts, graph.row_offsets[rows + 1] - starts)
    return rows[owners], graph.column_indices[slots].astype(xp.int64)


def sample_links(xp: Any, graph: DistGraph, in_graph: DistGraph, r: int) -> Links:
    """Neighbour ``r`` of every owned vertex that has one: of its out-row, then (a directed
    graph) of its in-row after it."""
    out_degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
    tails = xp.flatnonzero(out_degrees > r)
    heads = graph.column_indices[graph.row_offsets[tails] + r].astype(xp.int64)
    if in_graph is graph:
        return Links(tails, heads)
    in_degrees = in_graph.row_offsets[1:] - in_graph.row_offsets[:-1]
    more = xp.flatnonzero((out_degrees <= r) & (in_degrees > r - out_degrees))
    at = in_graph.row_offsets[more] + (r - out_degrees[more])
    in_heads = in_graph.column_indices[at].astype(xp.int64)
    return Links(xp.concatenate([tails, more]), xp.concatenate([heads, in_heads]))


def remaining_links(
    xp: Any,
    graph: DistGraph,
    in_graph: DistGraph,
    state: ComponentState,
    giant: int,
    rows: Any = None,
) -> Links:
    """Every neighbour (out, and in on a directed graph) of the owned vertices whose label is
    not ``giant`` (Afforest's skip of the largest intermediate component), or of the owned
    vertices ``rows`` (global ids: ``reached_bits``) where given."""
    if rows is not None:
        rows = local_id(rows, graph.size).astype(xp.int64, copy=False)
    else:
        degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
        if in_graph is not graph:
            degrees = degrees + (in_graph.row_offsets[1:] - in_graph.row_offsets[:-1])
        rows = xp.flatnonzero((state.labels != giant) & (degrees > 0))
    tails, heads = _row_heads(xp, graph, rows)
    if in_graph is not graph:
        in_tails, in_heads = _row_heads(xp, in_graph, rows)
        tails, heads = xp.concatenate([tails, in_tails]), xp.concatenate([heads, in_heads])
    return Links(tails, heads)


def owned_labels(xp: Any, graph: DistGraph, state: ComponentState, ids: Any) -> Any:
    """The labels of owned vertices ``ids`` (global ids)."""
    if graph.size == 1:
        return state.labels[ids]
    return state.labels[local_id(ids, graph.size)]


def roots(xp: Any, state: ComponentState) -> Any:
    """Local ids of the owned vertices that are their own label (the components' smallest
    vertices, once the run is done)."""
    return xp.flatnonzero(state.labels == scratch_table(xp, state, "owned"))
