"""distbfs: multi-GPU distributed breadth-first search after Merrill, Garland & Grimshaw (2012).

Public API::

    g = distbfs.Graph.from_file("road.mtx")        # or from_edges / from_scipy / from_networkx
    r = distbfs.bfs(g, 0, predecessors=True)        # / Graph.generate("kronecker", scale=16)
    r.distances, r.predecessors, r.seconds, r.teps

Every call is collective in an MPI job (``mpiexec -n P python script.py``): all ranks make it.
"""

from .api import BFSResult, Graph, SSSPResult, bfs, sssp
from .constants import NO_PATH, UNREACHED
from .errors import GraphFormatError, InputError, ValidationError

__version__ = "0.1.0"
__all__ = [
    "NO_PATH",
    "UNREACHED",
    "BFSResult",
    "Graph",
    "GraphFormatError",
    "InputError",
    "SSSPResult",
    "ValidationError",
    "__version__",
    "bfs",
    "sssp",
]
