"""distbfs: a multi-GPU distributed graph traversal framework around the breadth-first search
of Merrill, Garland & Grimshaw (2012).

Public API::

    g = distbfs.Graph.from_file("graph.mtx")       # or from_edges / from_scipy / from_networkx
    r = distbfs.bfs(g, 0, predecessors=True)        # / Graph.generate("kronecker", scale=16)
    r.distances, r.predecessors, r.seconds, r.teps
    m = distbfs.bfs_many(g, range(64)).distances    # 64 searches at once: (64, n) levels
    s = distbfs.sssp(g, 0, predecessors=True)       # shortest paths (delta-stepping)
    a = distbfs.apsp(g).distances                   # every pair, small graphs
    c = distbfs.connected_components(g).labels      # smallest vertex id per component

Every call is collective in an MPI job (``mpiexec -n P python script.py``): all ranks make it.
"""

from .api import (
    APSPResult,
    BatchedBFSResult,
    BFSResult,
    ComponentsResult,
    Graph,
    SSSPResult,
    apsp,
    bfs,
    bfs_many,
    connected_components,
    sssp,
)
from .constants import NO_PATH, UNREACHED
from .errors import GraphFormatError, InputError, ValidationError

__version__ = "0.1.0"
__all__ = [
    "NO_PATH",
    "UNREACHED",
    "APSPResult",
    "BFSResult",
    "BatchedBFSResult",
    "ComponentsResult",
    "Graph",
    "GraphFormatError",
    "InputError",
    "SSSPResult",
    "ValidationError",
    "__version__",
    "apsp",
    "bfs",
    "bfs_many",
    "connected_components",
    "sssp",
]
