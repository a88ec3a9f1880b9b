"""The public Python API: a ``Graph`` built from a file, edges, SciPy, NetworkX or a generator
(``graph``), and the traversals over it (``search``: ``bfs``; ``batched``: ``bfs_many``;
``paths``: ``sssp``; ``components``: ``connected_components``), with the argument checks made
once at these entry points (``arguments``).

A ``Graph`` wraps the distributed CSR (``DistGraph``) together with the communicator and backend
that built it; ``comm="auto"`` and ``backend="auto"`` are resolved once per process
(``distbfs.runtime``). In an MPI job every call is collective: every rank calls it with the same
arguments (``from_edges`` takes each rank's own share of the edges instead).

Invariants: argument errors are ``TypeError``/``ValueError`` subclasses that name the argument and
its value and are raised identically on every rank (they are also ``InputError``, so the command
line prints them as one line); distances are int32 with ``UNREACHED`` for vertices not reached;
predecessors are int64 with ``predecessors[source] == source``.
"""

from __future__ import annotations

from ..errors import InvalidArgumentType, InvalidArgumentValue
from ..runtime import resolve_backend, resolve_comm
from .arguments import check_vertex
from .batched import BatchedBFSResult, bfs_many
from .components import ComponentsResult, connected_components
from .graph import FORMATS, Graph
from .paths import APSPResult, SSSPResult, apsp, sssp
from .search import BFSResult, bfs

__all__ = [
    "FORMATS",
    "APSPResult",
    "BFSResult",
    "BatchedBFSResult",
    "ComponentsResult",
    "Graph",
    "InvalidArgumentType",
    "InvalidArgumentValue",
    "SSSPResult",
    "apsp",
    "bfs",
    "bfs_many",
    "check_vertex",
    "connected_components",
    "resolve_backend",
    "resolve_comm",
    "sssp",
]
