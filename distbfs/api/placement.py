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
else host memory."""

SEARCH_DEVICE_SHARE = 1.2
"""Bytes a search takes on the device beside the CSR, as a share of the CSR's bytes: a search
with predecessors peaks near 2.2x the CSR (``benchmarks/RESULTS.md``)."""


def compress(graph: Any) -> Any:
    """``graph`` with its rows' neighbours as varint-coded gaps, decoded as the stages read
    them: the same results in less memory (on a GPU, coded there: ``compress_graph``). A
    compressed graph returns itself."""
    if graph.compressed:
        return graph
    on_backend = getattr(graph.backend, "compress_graph", None)
    return _with(graph, on_backend(graph.dist) if callable(on_backend) else graph.dist.compress())


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
    backend, dist = graph.backend, graph.dist
    if not callable(getattr(backend, "place_graph", None)):
        if memory == "host":
            raise InvalidArgumentValue(
                f"memory='host': the {backend.name} backend holds its graphs in host memory"
            )
        return graph
    if memory == "auto":
        search = int(SEARCH_DEVICE_SHARE * dist.nbytes())
        fits = int(available_bytes(backend.xp) >= search)
        memory = "device" if graph.comm.allreduce(fits, op="min") else "host"
    if backend.graph_memory(dist) == memory:
        return graph
    return _with(graph, backend.place_graph(dist, memory))


def _with(graph: Any, dist: Any) -> Any:
    """A new graph of ``dist`` with everything else of ``graph``."""
    return type(graph)(
        dist, graph.comm, graph.backend, load_info=graph.load_info, node_labels=graph.node_labels
    )


__all__ = ["PLACEMENTS", "SEARCH_DEVICE_SHARE", "compress", "place"]
