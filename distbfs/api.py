"""The public Python API: a ``Graph`` built from a file, edges, SciPy, NetworkX or a generator,
and ``bfs`` returning a ``BFSResult`` in global vertex order (shaped like cuGraph and SciPy).

A ``Graph`` wraps the distributed CSR (``DistGraph``) together with the communicator and backend
that built it; ``comm="auto"`` and ``backend="auto"`` are resolved once per process (MPI
initializes once). In an MPI job every call is collective: every rank calls it with the same
arguments (``from_edges`` takes each rank's own share of the edges instead).

Invariants: argument errors are ``TypeError``/``ValueError`` subclasses that name the argument and
its value and are raised identically on every rank (they are also ``InputError``, so the command
line prints them as one line); distances are int32 with ``UNREACHED`` for vertices not reached;
predecessors are int64 with ``predecessors[source] == source``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any

import numpy as np

from .backends import BACKEND_CHOICES, Backend, get_backend
from .backends.base import supports_bottom_up
from .bfs import (
    STRATEGIES,
    LevelStats,
    bfs_levels,
    default_strategy,
    in_neighbours,
    replicated,
)
from .comm import COMM_CHOICES, Communicator, get_communicator
from .errors import InputError
from .graph import DistGraph, build_graph
from .partition import num_local
from .progress import accepts_progress

__all__ = [
    "FORMATS",
    "BFSResult",
    "Graph",
    "InvalidArgumentType",
    "InvalidArgumentValue",
    "bfs",
    "check_vertex",
    "resolve_backend",
    "resolve_comm",
]

FORMATS = ("mtx", "edgelist", "metis", "native")
"""Graph file formats ``Graph.from_file`` reads (``format=None`` detects from the name)."""


class InvalidArgumentType(InputError, TypeError):
    """An argument of the wrong type (a ``TypeError`` naming it; also an ``InputError``)."""


class InvalidArgumentValue(InputError, ValueError):
    """An argument with a bad value (a ``ValueError`` naming it; also an ``InputError``)."""


_ERROR_KINDS: dict[str, type[InputError]] = {
    "type": InvalidArgumentType,
    "value": InvalidArgumentValue,
}

_COMMUNICATORS: dict[tuple[str, str | None], Communicator] = {}
_BACKENDS: dict[str, Backend] = {}


# --------------------------------------------------------------------------------------------
# Resolving the communicator and the backend


def resolve_comm(
    comm: str | Communicator = "auto", backend: str | Backend | None = None
) -> Communicator:
    """The communicator for ``comm``: a ``Communicator`` as is, or a name from ``COMM_CHOICES``.

    Names are resolved once per process and cached (per backend), so MPI initializes once.
    ``backend`` (a name or a backend) lets ``auto`` pick NCCL or a GPU transport for the cuda
    backend (``distbfs.comm.get_communicator``); without it ``auto`` gives one rank or MPI.

    Raises
    ------
    TypeError, ValueError
        ``comm`` is neither a communicator nor a known name.
    InputError
        The communicator is not available here (e.g. NCCL without a GPU, or mpi4py missing).
    """
    if isinstance(comm, Communicator):
        return comm
    if not isinstance(comm, str):
        raise InvalidArgumentType(
            f"comm: expected a Communicator or one of {', '.join(COMM_CHOICES)}, "
            f"got {type(comm).__name__}"
        )
    if comm not in COMM_CHOICES:
        raise InvalidArgumentValue(
            f"comm: unknown communicator {comm!r} (choose from {', '.join(COMM_CHOICES)})"
        )
    backend_name = None
    if backend is not None:
        backend_name = getattr(resolve_backend(backend), "name", None)
    elif comm == "nccl":
        backend_name = "cuda"  # NCCL moves device arrays
    # One communicator per name and kind of backend (host or cuda): MPI and NCCL start once.
    key = (comm, "cuda" if backend_name == "cuda" else None)
    if key not in _COMMUNICATORS:
        _COMMUNICATORS[key] = get_communicator(comm, backend_name)
    return _COMMUNICATORS[key]


def resolve_backend(backend: str | Backend = "auto") -> Backend:
    """The backend for ``backend``: a backend object as is, or a name from ``BACKEND_CHOICES``.

    A cuda backend binds this rank to its GPU first (``distbfs.device.bind_device``: the
    node-local rank's GPU, once per process).

    Raises
    ------
    TypeError, ValueError
        ``backend`` is neither a backend nor a known name.
    InputError
        The backend is not available here (e.g. CUDA without a GPU), or the node has more ranks
        than GPUs.
    """
    if not isinstance(backend, str):
        if hasattr(backend, "xp") and hasattr(backend, "expand"):
            _bind_if_cuda(backend)
            return backend
        raise InvalidArgumentType(
            f"backend: expected a backend or one of {', '.join(BACKEND_CHOICES)}, "
            f"got {type(backend).__name__}"
        )
    if backend not in BACKEND_CHOICES:
        raise InvalidArgumentValue(
            f"backend: unknown backend {backend!r} (choose from {', '.join(BACKEND_CHOICES)})"
        )
    if backend not in _BACKENDS:
        resolved = get_backend(backend)
        _bind_if_cuda(resolved)
        _BACKENDS[backend] = resolved
    return _BACKENDS[backend]


def _bind_if_cuda(backend: Backend) -> None:
    """Bind this rank's GPU (once per process) before a cuda backend touches a device."""
    if getattr(backend, "name", None) == "cuda":
        from .device import bind_device

        bind_device()


# --------------------------------------------------------------------------------------------
# Argument checks


def _raise_agreed(comm: Communicator, error: tuple[str, str] | None) -> None:
    """Raise the first rank's argument error on every rank (collective; one all-gather).

    ``error`` is ``(kind, message)`` with kind "type" or "value", or None on a rank without one.
    """
    _raise_first(comm.allgather_object(error))


def _raise_first(errors: list[tuple[str, str] | None]) -> None:
    """Raise the first of the ranks' argument errors, if any."""
    for item in errors:
        if item is not None:
            raise _ERROR_KINDS[item[0]](item[1])


def _is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool | np.bool_)


def _check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    if not _is_int(value):
        raise InvalidArgumentType(
            f"{name}: expected an integer, got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if minimum is not None and value < minimum:
        raise InvalidArgumentValue(f"{name}: expected an integer >= {minimum}, got {value}")
    return value


def _check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise InvalidArgumentType(
            f"{name}: expected True or False, got {type(value).__name__} {value!r}"
        )
    return bool(value)


def check_vertex(value: Any, n: int, name: str = "source") -> int:
    """``value`` as a vertex id of a graph of ``n`` vertices.

    Raises
    ------
    TypeError
        ``value`` is not an integer.
    ValueError
        ``value`` is outside ``[0, n)``: "<name>: vertex 99 is out of range for a graph of 10
        vertices".
    """
    if not _is_int(value):
        raise InvalidArgumentType(
            f"{name}: expected an integer vertex id, got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if not 0 <= value < n:
        raise InvalidArgumentValue(
            f"{name}: vertex {value} is out of range for a graph of {n} vertices"
        )
    return value


def _host_ids(name: str, value: Any) -> tuple[np.ndarray | None, tuple[str, str] | None]:
    """``value`` as a host int64 1-d array, or the (kind, message) of what is wrong with it."""
    if hasattr(value, "get") and not isinstance(value, np.ndarray):  # cupy array
        value = value.get()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        return None, ("type", f"{name}: expected an array of integer vertex ids ({exc})")
    if array.ndim != 1:
        return None, ("value", f"{name}: expected a 1-d array, got shape {array.shape}")
    if array.size and (array.dtype.kind not in "iu"):
        return None, (
            "type",
            f"{name}: expected integer vertex ids, got dtype {array.dtype}",
        )
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        return None, ("value", f"{name}: vertex id {int(array.max())} is too large")
    return array.astype(np.int64, copy=False), None


def _local_share(comm: Communicator, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """This rank's share (entries rank::size) of arrays every rank holds in full."""
    return tuple(np.ascontiguousarray(a[comm.rank :: comm.size]) for a in arrays)


# --------------------------------------------------------------------------------------------
# Graph


class Graph:
    """A graph distributed over the ranks of a job, ready for ``bfs``.

    Build one with a constructor: ``from_file``, ``from_edges``, ``from_scipy``,
    ``from_networkx`` or ``generate``. Vertices are ``0 .. num_vertices - 1``; vertex ``v`` is
    stored on rank ``v % size``.

    Parameters
    ----------
    dist : DistGraph
        This rank's share of the graph.
    comm : Communicator
        The communicator that built it.
    backend : Backend
        The backend whose array module holds it.
    load_info : LoadInfo, optional
        Format, bytes read and time of the load (``from_file`` only).
    node_labels : list, optional
        Original node of every vertex id (``from_networkx`` only).

    Examples
    --------
    >>> g = distbfs.Graph.from_file("road.mtx")          # doctest: +SKIP
    >>> r = distbfs.bfs(g, 0, predecessors=True)         # doctest: +SKIP
    >>> r.distances                                      # doctest: +SKIP
    """

    def __init__(
        self,
        dist: DistGraph,
        comm: Communicator,
        backend: Backend,
        *,
        load_info: Any = None,
        node_labels: list[Any] | None = None,
    ) -> None:
        if not isinstance(dist, DistGraph):
            raise InvalidArgumentType(f"dist: expected a DistGraph, got {type(dist).__name__}")
        self.dist = dist
        self.comm = comm
        self.backend = backend
        self.load_info = load_info
        self.node_labels = node_labels

    # -- properties -------------------------------------------------------------------------

    @property
    def num_vertices(self) -> int:
        """Number of vertices."""
        return self.dist.n

    @property
    def num_edges(self) -> int:
        """Number of stored directed edges (an undirected edge counts twice)."""
        return self.dist.num_edges

    @property
    def num_undirected_edges(self) -> int:
        """Graph500 edge count: each undirected edge once (equals ``num_edges`` if directed)."""
        return self.dist.num_undirected_edges

    @property
    def directed(self) -> bool:
        """False when every edge is stored in both directions."""
        return self.dist.directed

    def __repr__(self) -> str:
        kind = "directed" if self.directed else "undirected"
        return (
            f"Graph({kind}, num_vertices={self.num_vertices}, num_edges={self.num_edges}, "
            f"backend={self.backend.name!r}, comm={self.comm.kind!r}, ranks={self.comm.size})"
        )

    # -- constructors -----------------------------------------------------------------------

    @classmethod
    def from_file(
        cls,
        path: str | os.PathLike[str],
        *,
        undirected: bool = False,
        format: str | None = None,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
        progress: Callable[[int, int], None] | None = None,
    ) -> Graph:
        """Read a graph file (Matrix Market, edge list, METIS or the native format).

        Parameters
        ----------
        path : str or os.PathLike
            The file (``.mtx``, ``.txt``/``.el``/``.edges``, ``.graph``, each optionally ``.gz``)
            or a native-format directory.
        undirected : bool, default False
            Store every edge in both directions, whatever the file says.
        format : {"mtx", "edgelist", "metis", "native"}, optional
            Override detection from the file name.
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"
        progress : callable(done, total), optional
            Called as the file is read, where the reader supports it.

        Returns
        -------
        Graph
            With ``load_info`` (format, bytes, seconds, ``mb_per_s``).

        Raises
        ------
        TypeError, ValueError
            Bad argument types or values.
        InputError, GraphFormatError
            Missing, unknown or malformed file (the message names ``PATH:LINE``).
        """
        if not isinstance(path, str | os.PathLike):
            raise InvalidArgumentType(f"path: expected a str or path, got {type(path).__name__}")
        undirected = _check_bool("undirected", undirected)
        if format is not None and format not in FORMATS:
            raise InvalidArgumentValue(
                f"format: unknown format {format!r} (choose from {', '.join(FORMATS)})"
            )
        backend_obj = resolve_backend(backend)
        comm_obj = resolve_comm(comm, backend_obj)
        from . import io

        kwargs: dict[str, Any] = {"fmt": format, "undirected": undirected, "xp": backend_obj.xp}
        if progress is not None and accepts_progress(io.read_graph):
            kwargs["progress"] = progress
        dist, info = io.read_graph(os.fspath(path), comm_obj, **kwargs)
        return cls(dist, comm_obj, backend_obj, load_info=info)

    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        *,
        num_vertices: int | None = None,
        directed: bool = True,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
    ) -> Graph:
        """Build a graph from edge lists ``src[i] -> dst[i]``.

        In an MPI job each rank passes its own share of the edges (possibly empty); the graph
        is the union. Self-loops and duplicate edges are dropped.

        Parameters
        ----------
        src, dst : array_like of int
            Endpoints, 1-d, equal lengths (numpy, cupy or sequences).
        num_vertices : int, optional
            Vertex count; default ``max id + 1`` over all ranks (0 without edges).
        directed : bool, default True
            False stores every edge in both directions.
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"

        Returns
        -------
        Graph

        Raises
        ------
        TypeError
            Non-integer ids or a non-integer ``num_vertices``.
        ValueError
            Ids negative or ``>= num_vertices`` (naming ``src`` or ``dst`` and the id), arrays
            not 1-d or of different lengths.
        """
        directed = _check_bool("directed", directed)
        backend_obj = resolve_backend(backend)
        comm_obj = resolve_comm(comm, backend_obj)
        error: tuple[str, str] | None = None
        if num_vertices is not None:
            if not _is_int(num_vertices):
                error = (
                    "type",
                    f"num_vertices: expected an integer, got "
                    f"{type(num_vertices).__name__} {num_vertices!r}",
                )
            elif num_vertices < 0:
                error = ("value", f"num_vertices: expected an integer >= 0, got {num_vertices}")
        src_ids, src_error = _host_ids("src", src)
        dst_ids, dst_error = _host_ids("dst", dst)
        error = error or src_error or dst_error
        if error is None and src_ids.shape[0] != dst_ids.shape[0]:
            error = (
                "value",
                f"src, dst: lengths differ ({src_ids.shape[0]} != {dst_ids.shape[0]})",
            )
        _raise_agreed(comm_obj, error)
        return cls._from_id_arrays(
            src_ids, dst_ids, num_vertices, directed, backend_obj, comm_obj, names=("src", "dst")
        )

    @classmethod
    def _from_id_arrays(
        cls,
        src: np.ndarray,
        dst: np.ndarray,
        num_vertices: int | None,
        directed: bool,
        backend: Backend,
        comm: Communicator,
        *,
        names: tuple[str, str],
        node_labels: list[Any] | None = None,
    ) -> Graph:
        """Check the ids against the vertex count (agreed over ranks) and build the graph."""
        big = np.iinfo(np.int64).max
        lows = np.array([src.min() if src.size else big, dst.min() if dst.size else big])
        highs = np.array([src.max() if src.size else -1, dst.max() if dst.size else -1])
        lows = comm.allreduce(lows.astype(np.int64), op="min")
        highs = comm.allreduce(highs.astype(np.int64), op="max")
        n = int(max(highs.max() + 1, 0)) if num_vertices is None else int(num_vertices)
        for name, low, high in zip(names, lows.tolist(), highs.tolist(), strict=True):
            if low < 0:
                raise InvalidArgumentValue(f"{name}: vertex id {low} is negative")
            if high >= n:
                raise InvalidArgumentValue(
                    f"{name}: vertex id {high} is out of range for num_vertices={n}"
                )
        xp = backend.xp
        dist = build_graph(comm, xp.asarray(src), xp.asarray(dst), n, directed=directed, xp=xp)
        return cls(dist, comm, backend, node_labels=node_labels)

    @classmethod
    def from_scipy(
        cls,
        matrix: Any,
        *,
        directed: bool | None = None,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
    ) -> Graph:
        """Build a graph from a square SciPy sparse matrix or array: entry (i, j) is edge i -> j.

        Every stored entry is an edge (its value is not looked at, explicit zeros included).
        In an MPI job every rank passes the same matrix and takes its share of the entries.

        Parameters
        ----------
        matrix : scipy.sparse matrix or array
            Square adjacency matrix.
        directed : bool, optional
            Default (None): undirected when the sparsity pattern is symmetric, directed
            otherwise. False stores every edge in both directions.
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"

        Returns
        -------
        Graph

        Raises
        ------
        TypeError
            ``matrix`` is not a SciPy sparse matrix/array.
        ValueError
            ``matrix`` is not square (or not 2-d).
        """
        import scipy.sparse as sp

        if not sp.issparse(matrix):
            raise InvalidArgumentType(
                f"matrix: expected a scipy.sparse matrix or array, got {type(matrix).__name__}"
            )
        if len(matrix.shape) != 2 or matrix.shape[0] != matrix.shape[1]:
            raise InvalidArgumentValue(
                f"matrix: expected a square matrix, got shape {matrix.shape}"
            )
        if directed is not None:
            directed = _check_bool("directed", directed)
        backend_obj = resolve_backend(backend)
        comm_obj = resolve_comm(comm, backend_obj)
        coo = matrix.tocoo()
        rows = np.asarray(coo.row, dtype=np.int64)
        cols = np.asarray(coo.col, dtype=np.int64)
        n = int(matrix.shape[0])
        if directed is None:
            pattern = sp.csr_matrix(
                (np.ones(rows.shape[0], dtype=np.int8), (rows, cols)), shape=(n, n)
            )
            pattern.sum_duplicates()
            pattern.data[:] = 1
            directed = (pattern != pattern.T).nnz != 0
        src, dst = _local_share(comm_obj, rows, cols)
        return cls._from_id_arrays(
            src, dst, n, directed, backend_obj, comm_obj, names=("matrix", "matrix")
        )

    @classmethod
    def from_networkx(
        cls,
        G: Any,
        *,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
    ) -> Graph:
        """Build a graph from a NetworkX graph.

        Nodes are numbered ``0 .. n-1`` in ``G.nodes`` order; ``node_labels[i]`` is the node
        that became vertex ``i``. ``nx.Graph`` gives an undirected graph, ``nx.DiGraph`` a
        directed one (multigraphs likewise, parallel edges merged). In an MPI job every rank
        passes the same graph.

        Parameters
        ----------
        G : networkx.Graph or networkx.DiGraph
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"

        Returns
        -------
        Graph
            With ``node_labels``.

        Raises
        ------
        TypeError
            ``G`` is not a NetworkX graph.
        """
        try:
            import networkx as nx
        except ImportError as exc:
            raise InvalidArgumentType(f"G: networkx is not importable ({exc})") from None
        if not isinstance(G, nx.Graph):
            raise InvalidArgumentType(f"G: expected a networkx graph, got {type(G).__name__}")
        backend_obj = resolve_backend(backend)
        comm_obj = resolve_comm(comm, backend_obj)
        labels = list(G.nodes)
        n = len(labels)
        if n:
            coo = nx.to_scipy_sparse_array(G, nodelist=labels, weight=None, format="coo")
            rows = np.asarray(coo.row, dtype=np.int64)
            cols = np.asarray(coo.col, dtype=np.int64)
        else:
            rows = cols = np.zeros(0, dtype=np.int64)
        src, dst = _local_share(comm_obj, rows, cols)
        return cls._from_id_arrays(
            src,
            dst,
            n,
            G.is_directed(),
            backend_obj,
            comm_obj,
            names=("G", "G"),
            node_labels=labels,
        )

    @classmethod
    def generate(
        cls,
        kind: str,
        *,
        scale: int | None = None,
        edgefactor: int = 16,
        shape: tuple[int, ...] | None = None,
        seed: int | None = None,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
        progress: Callable[[int, int], None] | None = None,
    ) -> Graph:
        """Generate an undirected synthetic graph (distributed: each rank makes its share).

        Parameters
        ----------
        kind : {"kronecker", "uniform", "grid2d", "grid3d"}
            Graph500 Kronecker (R-MAT), uniform random, 2-D or 3-D grid.
        scale : int, optional
            ``2**scale`` vertices (kronecker, uniform; required there).
        edgefactor : int, default 16
            Edges per vertex generated (kronecker, uniform).
        shape : tuple of int, optional
            ``(nx, ny)`` for grid2d, ``(nx, ny, nz)`` for grid3d (required there).
        seed : int, optional
            Random seed (default ``distbfs.generators.DEFAULT_SEED``); the graph does not depend
            on the number of ranks.
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"
        progress : callable(done, total), optional
            Progress callback, where the generator supports it.

        Returns
        -------
        Graph

        Raises
        ------
        TypeError, ValueError
            Bad or missing parameters for ``kind``.
        """
        from . import generators

        if not isinstance(kind, str):
            raise InvalidArgumentType(f"kind: expected a str, got {type(kind).__name__}")
        if kind not in generators.GENERATORS:
            raise InvalidArgumentValue(
                f"kind: unknown generator {kind!r} (choose from {', '.join(generators.GENERATORS)})"
            )
        if kind in ("kronecker", "uniform"):
            if scale is None:
                raise InvalidArgumentValue(f"scale: required for the {kind} generator")
            scale = _check_int("scale", scale, minimum=1)
            edgefactor = _check_int("edgefactor", edgefactor, minimum=1)
            if shape is not None:
                raise InvalidArgumentValue(f"shape: not used by the {kind} generator")
        else:
            dims = 2 if kind == "grid2d" else 3
            if shape is None:
                raise InvalidArgumentValue(f"shape: required for the {kind} generator")
            if not isinstance(shape, tuple | list) or len(shape) != dims:
                raise InvalidArgumentValue(f"shape: {kind} needs {dims} dimensions, got {shape!r}")
            shape = tuple(_check_int("shape", d, minimum=1) for d in shape)
            if scale is not None:
                raise InvalidArgumentValue(f"scale: not used by the {kind} generator")
        seed = generators.DEFAULT_SEED if seed is None else _check_int("seed", seed, minimum=0)
        backend_obj = resolve_backend(backend)
        comm_obj = resolve_comm(comm, backend_obj)
        kwargs: dict[str, Any] = {
            "scale": scale,
            "edgefactor": edgefactor,
            "shape": shape,
            "seed": seed,
            "xp": backend_obj.xp,
        }
        if progress is not None and accepts_progress(generators.generate):
            kwargs["progress"] = progress
        try:
            dist = generators.generate(kind, comm_obj, **kwargs)
        except InputError as exc:  # parameter errors (replicated, so raised on every rank)
            if not exc.all_ranks:
                raise
            raise InvalidArgumentValue(str(exc)) from None
        return cls(dist, comm_obj, backend_obj)

    # -- output -----------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the graph in the native format (a directory; atomic; collective).

        Parameters
        ----------
        path : str or os.PathLike
            Target directory (replaced as a whole).
        """
        if not isinstance(path, str | os.PathLike):
            raise InvalidArgumentType(f"path: expected a str or path, got {type(path).__name__}")
        from . import io

        io.write_native(self.dist, os.fspath(path), self.comm)


# --------------------------------------------------------------------------------------------
# BFS


@dataclass
class BFSResult:
    """The result of one breadth-first search.

    Attributes
    ----------
    source : int
        The root.
    distances : array of int32 or None
        BFS level of every vertex in global order (``UNREACHED`` = -1 when not reached), on every
        rank; numpy, or cupy on the cuda backend. None when ``gather=False``.
    predecessors : array of int64 or None
        Parent of every vertex in the BFS tree, ``predecessors[source] == source``,
        ``UNREACHED`` when not reached. None unless ``predecessors=True`` and ``gather=True``.
    local_distances, local_predecessors : array
        This rank's owned vertices only, in local order (always set; predecessors only when
        requested).
    local_vertices : array of int64
        Global ids of the owned vertices (``rank, rank + size, ...``).
    levels : list of LevelStats
        Per-level counters summed over ranks (and per-phase seconds with ``timing=True``).
    seconds : float
        Wall time of the search (slowest rank), from just before the root is visited until the
        labels are in memory; gathering and validation are not included.
    edges_traversed : int
        Graph500 edge count of the search (``distbfs.stats.traversed_edges``; undirected:
        the edges of the reached component).
    validated : bool
        Whether the result was checked by ``distbfs.validate.validate``.
    """

    source: int
    distances: Any
    predecessors: Any
    local_distances: Any
    local_predecessors: Any
    local_vertices: Any
    levels: list[LevelStats] = field(default_factory=list)
    seconds: float = 0.0
    edges_traversed: int = 0
    validated: bool = False

    @property
    def teps(self) -> float:
        """Traversed edges per second (``edges_traversed / seconds``)."""
        if self.seconds > 0:
            return self.edges_traversed / self.seconds
        return float("inf") if self.edges_traversed else 0.0

    @property
    def num_reached(self) -> int:
        """Number of vertices reached, the source included."""
        return 1 + sum(level.discovered for level in self.levels)

    @property
    def depth(self) -> int:
        """Largest distance from the source (0 when nothing else was reached)."""
        return max(len(self.levels) - 1, 0)


def _gather_striped(comm: Communicator, local: Any, n: int, xp: Any) -> Any:
    """The global array in vertex order from every rank's striped part (on every rank)."""
    parts = comm.allgather_array(local)
    out = xp.empty(n, dtype=local.dtype)
    start = 0
    for r in range(comm.size):
        count = num_local(n, comm.size, r)
        out[r :: comm.size] = parts[start : start + count]
        start += count
    return out


def _synchronize(backend: Backend) -> None:
    """Wait until the backend's device work is done (the labels are in memory)."""
    synchronize = getattr(backend, "synchronize", None)
    if synchronize is not None:
        synchronize()
    elif backend.xp is not np and hasattr(backend.xp, "cuda"):
        backend.xp.cuda.Device().synchronize()


def bfs(
    graph: Graph,
    source: int,
    *,
    predecessors: bool = False,
    gather: bool = True,
    validate: bool = False,
    timing: bool = False,
    strategy: str | None = None,
    alpha: float | None = None,
    beta: float | None = None,
) -> BFSResult:
    """Breadth-first search from ``source`` (collective: every rank calls it alike).

    Parameters
    ----------
    graph : Graph
    source : int
        Root vertex, in ``[0, graph.num_vertices)``.
    predecessors : bool, default False
        Also compute the BFS tree (parent of every reached vertex).
    gather : bool, default True
        Assemble ``distances``/``predecessors`` in global vertex order on every rank. With
        False only the ``local_*`` arrays are set (no all-gather: for large graphs).
    validate : bool, default False
        Check the result with ``distbfs.validate.validate`` (Graph500 rules; exact levels).
    timing : bool, default False
        Record per-phase seconds in ``levels[i].seconds``.
    strategy : str, optional
        How levels run, one of ``distbfs.bfs.STRATEGIES`` (default: ``direction_optimizing``
        where the backend has bottom-up stages, else ``hybrid``).
    alpha, beta : float, optional
        Thresholds of the direction heuristic (``distbfs.bfs.choose_direction``; GAP's 15 and
        18 by default): top-down -> bottom-up when the frontier's edges exceed the unexplored
        edges / alpha; back when the frontier falls below n / beta.

    Returns
    -------
    BFSResult

    Raises
    ------
    TypeError
        ``graph`` is not a ``Graph`` or ``source`` not an integer.
    ValueError
        ``source`` out of range, e.g. "source: vertex 99 is out of range for a graph of 10
        vertices" (raised on every rank).
    ValidationError
        ``validate=True`` and the result breaks a rule.

    Examples
    --------
    >>> g = distbfs.Graph.from_edges([0, 1], [1, 2], directed=False)   # doctest: +SKIP
    >>> distbfs.bfs(g, 0).distances                                    # doctest: +SKIP
    array([0, 1, 2], dtype=int32)
    """
    if not isinstance(graph, Graph):
        raise InvalidArgumentType(f"graph: expected a distbfs.Graph, got {type(graph).__name__}")
    predecessors = _check_bool("predecessors", predecessors)
    gather = _check_bool("gather", gather)
    validate = _check_bool("validate", validate)
    timing = _check_bool("timing", timing)
    if strategy is not None and strategy not in STRATEGIES:
        raise InvalidArgumentValue(
            f"strategy: unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})"
        )
    options: dict[str, Any] = {} if strategy is None else {"strategy": strategy}
    for name, value in (("alpha", alpha), ("beta", beta)):
        if value is None:
            continue
        low_ok = value > 0 if name == "beta" else value >= 0
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not low_ok:
            bound = "> 0" if name == "beta" else ">= 0"
            raise InvalidArgumentValue(f"{name}: expected a number {bound}, got {value!r}")
        options[name] = float(value)
    if (strategy or default_strategy(graph.backend)) == "direction_optimizing":
        if not supports_bottom_up(graph.backend):
            raise InvalidArgumentValue(
                f"strategy: direction_optimizing is not available on the {graph.backend.name} "
                "backend (it has no bottom-up stages); use hybrid"
            )
        in_neighbours(graph.dist, graph.comm, graph.backend.xp)  # built once, outside the timing
    if strategy != "two_phase":
        replicated(graph.dist, graph.comm, graph.backend)  # likewise (None if not replicated)
    comm, backend, dist = graph.comm, graph.backend, graph.dist
    error: tuple[str, str] | None = None
    try:
        source = check_vertex(source, dist.n, "source")
    except InputError as exc:
        error = ("type" if isinstance(exc, TypeError) else "value", str(exc))
    # Ranks must agree on the root and on any error about it (one all-gather).
    agreed = comm.allgather_object((error, None if error else source))
    _raise_first([item[0] for item in agreed])
    sources = [item[1] for item in agreed]
    if len(set(sources)) > 1:
        raise InvalidArgumentValue(f"source: ranks passed different sources {sources}")
    from . import stats
    from . import validate as validation

    timer = backend.make_timer(timing)
    comm.barrier()
    start = time.perf_counter()
    search = bfs_levels(
        dist, source, backend, comm, predecessors=predecessors, timer=timer, **options
    )
    _synchronize(backend)
    seconds = comm.allreduce(time.perf_counter() - start, op="max")

    if validate:  # in the graph's array module: on the GPU for the cuda backend
        validation.validate(dist, comm, source, search.distances, search.predecessors)
    traversed = int(stats.traversed_edges(dist, comm, search.distances))
    xp = backend.xp
    result = BFSResult(
        source=source,
        distances=None,
        predecessors=None,
        local_distances=search.distances,
        local_predecessors=search.predecessors,
        local_vertices=dist.owned_vertices(xp),
        levels=search.levels,
        seconds=float(seconds),
        edges_traversed=traversed,
        validated=validate,
    )
    if gather:
        result.distances = _gather_striped(comm, search.distances, dist.n, xp)
        if search.predecessors is not None:
            result.predecessors = _gather_striped(comm, search.predecessors, dist.n, xp)
    return result
