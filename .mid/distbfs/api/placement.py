"""Where a graph's rows live: compressed (varint-coded columns, ``distbfs.compressed``) and on
the device or in host memory (columns and weights in pinned host memory the kernels read over
the link, ``distbfs.backends.cuda.host_memory``). ``Graph.compress`` and ``Graph.place`` call
these; each returns a new ``Graph`` sharing the communicator and backend (plans are built again
for it) and leaves the original as it was.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidArgumentType, InvalidArgumentValue
from ..memory import available_bytes

PLACEMENTS = ("auto", "device", "host")
"""``Graph.place``'s memories: auto = the device while a search fits beside the graph there,
else compressed on the device while a search fits beside that, else host memory."""

SEARCH_DEVICE_SHARE = 1.2
"""Bytes a search takes on the device beside the graph, as a share of the plain CSR's bytes (a
compressed graph's search takes what the plain one's does): a top-down level may fill an edge
queue of half the stored edges with their parents, and a search with predecessors peaks near
2.2x the CSR (``benchmarks/RESULTS.md``)."""

AUTO_CHOICES = ("device", "compressed", "host")
"""What ``place(graph, "auto")`` may make of a graph, first choice first."""


def compress(graph: Any) -> Any:
    """``graph`` with its rows' neighbours as varint-coded gaps, decoded as the stages read
    them: the same results in less memory (on a GPU, coded there: ``compress_graph``, which
    also takes a compressed file's host-held codes to the device). A graph compressed as its
    backend holds it returns itself."""
    on_backend = getattr(graph.backend, "compress_graph", None)
    if not callable(on_backend):
        return graph if graph.compressed else _with(graph, graph.dist.compress())
    dist = on_backend(graph.dist)
    return graph if dist is graph.dist else _with(graph, dist)


def place(graph: Any, memory: str = "auto") -> Any:
    """``graph`` with its columns and weights in ``memory`` (``PLACEMENTS``; collective: every
    rank takes the same placement). On the numpy backend every graph is in host memory: "auto"
    and "device" return it as it is, "host" is refused."""
    if not isinstance(memory, str):
        raise InvalidArgumentType(f"memory: expected a str, got {type(memory).__name__}")
    if memory not in PLACEMENTS:
        raise InvalidArgumentValue(
            f"memory: expected one of {', '.join(PLACEMENTS)}, got {memory!r}"
        )
    backend = graph.backend
    if not callable(getattr(backend, "place_graph", None)):
        if memory == "host":
            raise InvalidArgumentValue(
                f"memory='host': the {backend.name} backend holds its graphs in host memory"
            )
        return graph
    if memory == "auto":
        choice = auto_choice(graph)
        if choice == "compressed":
            graph, memory = compress(graph), "device"
        else:
            memory = choice
    if backend.graph_memory(graph.dist) == memory:
        return graph
    return _with(graph, backend.place_graph(graph.dist, memory))


def auto_choice(graph: Any) -> str:
    """``AUTO_CHOICES``' first that fits every rank's device (collective): a search
    (``SEARCH_DEVICE_SHARE`` of the plain CSR) beside the plain graph, else beside its
    compressed form, else host memory. The budget is the device's free bytes plus those the
    graph holds there now."""
    backend, dist = graph.backend, graph.dist
    weights = 0 if dist.weights is None else dist.weights.nbytes
    itemsize = dist.column_indices.dtype.itemsize
    plain = dist.row_offsets.nbytes + dist.num_local_edges * itemsize + weights
    search = int(SEARCH_DEVICE_SHARE * plain)
    budget = available_bytes(backend.xp) + backend.device_bytes(dist)
    if not dist.compressed and plain + search <= budget:
        mine = 0
    elif backend.compressed_bytes(dist) + search <= budget:  # counted: no code written
        mine = 1
    else:
        mine = 2
    return AUTO_CHOICES[graph.comm.allreduce(mine, op="max")]


def _with(graph: Any, dist: Any) -> Any:
    """A new graph of ``dist`` with everything else of ``graph``."""
    return type(graph)(
        dist, graph.comm, graph.backend, load_info=graph.load_info, node_labels=graph.node_labels
    )


__all__ = [
    "AUTO_CHOICES",
    "PLACEMENTS",
    "SEARCH_DEVICE_SHARE",
    "auto_choice",
    "compress",
    "place",
]
