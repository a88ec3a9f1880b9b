"""``Graph``: a graph distributed over the ranks of a job, built from a file, edges, SciPy,
NetworkX or a generator, together with the communicator and backend that built it, and the
search plans of its searches (``plan``: built once per strategy and thresholds, sharing the
graph's ``GraphResources``, released with the graph).

In an MPI job every constructor is collective: every rank calls it with the same arguments
(``from_edges`` takes each rank's own share of the edges instead).

One convention for directedness: ``directed`` is True, False (every edge stored in both
directions) or, where the input can say, None (as it says). Weights: a constructor given weights
(a file with a weight column, ``weights=``, a SciPy matrix's values, a NetworkX attribute, a
generator's ``weights=``) builds a weighted graph (``Graph.weighted``); weights are
non-negative finite numbers, of duplicate edges the smallest is kept.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

from ..backends.base import Backend
from ..comm.base import Communicator
from ..engine.components import ComponentPlan
from ..engine.plan import GraphResources, PathPlan, SearchPlan
from ..engine.strategy import DEFAULT_ALPHA, DEFAULT_BETA, Strategy, check_strategy
from ..errors import InputError, InvalidArgumentType, InvalidArgumentValue
from ..graph import DistGraph, build_graph
from ..progress import accepts_progress
from ..runtime import resolved
from . import placement
from .arguments import (
    check_bool,
    check_directed,
    check_generator,
    check_int,
    edge_arrays,
    host_weights,
    is_symmetric,
    local_share,
    raise_first,
    scipy_matrix,
)

FORMATS = ("mtx", "edgelist", "metis", "native")
"""Graph file formats ``Graph.from_file`` reads (``format=None`` detects from the name)."""


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
        self._resources: GraphResources | None = None
        self._plans: dict[Any, Any] = {}  # every plan of the graph, by kind and settings

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

    @property
    def weighted(self) -> bool:
        """True when the edges carry weights (``dist.weights``, float32 or float64)."""
        return self.dist.weighted

    def plan(
        self,
        strategy: Strategy | str | None = None,
        alpha: float = DEFAULT_ALPHA,
        beta: float = DEFAULT_BETA,
    ) -> SearchPlan:
        """The search plan of ``strategy`` (None: the backend's default) with the direction
        heuristic's thresholds, built on first use (collective) and kept with the graph; every
        plan of the graph shares one ``GraphResources`` (in-neighbours, replica, mailbox,
        backend resources), so none is built twice."""
        key = (check_strategy(strategy, self.backend), float(alpha), float(beta))
        return self._kept(key, lambda: SearchPlan(self.resources, *key))

    def path_plan(self, delta: float | None = None) -> PathPlan:
        """The shortest-path plan with bucket width ``delta`` (None: chosen from the weights and
        degrees, ``distbfs.engine.buckets.choose_delta``), built on first use (collective) and
        kept with the graph over the same ``GraphResources``."""
        return self._kept(("paths", delta), lambda: PathPlan(self.resources, delta))

    def components_plan(self) -> ComponentPlan:
        """The connected-components plan (its hub, samples and way of linking), built on first
        use (collective: the hub is all-gathered) and kept with the graph, so that a run does
        not look for the highest-degree vertex again."""
        return self._kept("components", lambda: ComponentPlan(self.resources, search=self.plan))

    def _kept(self, key: Any, build: Callable[[], Any]) -> Any:
        """The plan kept under ``key``, built by ``build`` on its first use."""
        if key not in self._plans:
            self._plans[key] = build()
        return self._plans[key]

    @property
    def resources(self) -> GraphResources:
        """What every search of this graph shares (built on first use; collective)."""
        if self._resources is None:
            self._resources = GraphResources(self.dist, self.backend, self.comm)
        return self._resources

    def __repr__(self) -> str:
        kind = ("directed" if self.directed else "undirected") + (
            ", weighted" if self.weighted else ""
        )
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
        directed: bool | None = None,
        format: str | None = None,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
        progress: Callable[[int, int], None] | None = None,
    ) -> Graph:
        """Read a graph file (Matrix Market, edge list, METIS or the native format), weighted
        when the file carries weights (Matrix Market ``integer``/``real`` values, a third
        edge-list column, METIS edge weights, native ``weights.npy``).

        Parameters
        ----------
        path : str or os.PathLike
            The file (``.mtx``, ``.txt``/``.el``/``.edges``, ``.graph``, each optionally ``.gz``)
            or a native-format directory.
        directed : bool, optional
            None (default): as the file says. False: store every edge in both directions,
            whatever the file says. True on a file undirected by definition (symmetric Matrix
            Market, METIS, a native graph recorded undirected) is a ValueError.
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
            Bad argument types or values (``directed=True`` on an undirected file).
        InputError, GraphFormatError
            Missing, unknown or malformed file, or a bad weight (the message names
            ``PATH:LINE``).
        """
        if not isinstance(path, str | os.PathLike):
            raise InvalidArgumentType(f"path: expected a str or path, got {type(path).__name__}")
        directed = check_directed(directed)
        if format is not None and format not in FORMATS:
            raise InvalidArgumentValue(
                f"format: unknown format {format!r} (choose from {', '.join(FORMATS)})"
            )
        backend_obj, comm_obj = resolved(backend, comm)
        from .. import io

        kwargs: dict[str, Any] = {"fmt": format, "directed": directed, "xp": backend_obj.xp}
        if progress is not None and accepts_progress(io.read_graph):
            kwargs["progress"] = progress
        dist, info = io.read_graph(os.fspath(path), comm_obj, **kwargs)
        graph = cls(dist, comm_obj, backend_obj, load_info=info)
        return graph.compress() if dist.compressed else graph  # the codes in the backend's form

    @classmethod
    def from_edges(
        cls,
        src: Any,
        dst: Any,
        *,
        weights: Any = None,
        num_vertices: int | None = None,
        directed: bool = True,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
    ) -> Graph:
        """Build a graph from edge lists ``src[i] -> dst[i]`` (of weight ``weights[i]``).

        In an MPI job each rank passes its own share of the edges (possibly empty), and its
        weights (every rank or none); the graph is the union. Self-loops are dropped; of
        duplicate edges one is kept, the one of smallest weight.

        Parameters
        ----------
        src, dst : array_like of int
            Endpoints, 1-d, equal lengths (numpy, cupy or sequences).
        weights : array_like of numbers, optional
            Edge weights aligned with ``src``: non-negative and finite (zero allowed); stored
            as float32 when every weight of the graph is exactly a float32 value, else float64.
            None: an unweighted graph.
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
            Non-integer ids, non-number weights or a non-integer ``num_vertices``.
        ValueError
            Ids negative or ``>= num_vertices`` (naming ``src`` or ``dst`` and the id), a
            negative, NaN or infinite weight (naming it), arrays not 1-d or of different
            lengths, weights on some ranks only.
        """
        directed = check_bool("directed", directed)
        backend_obj, comm_obj = resolved(backend, comm)
        src_ids, dst_ids, weights, error = edge_arrays(src, dst, weights, num_vertices)
        agreed = comm_obj.allgather_object((error, weights is not None))
        raise_first([item[0] for item in agreed])
        if len({item[1] for item in agreed}) > 1:
            raise InvalidArgumentValue(
                "weights: given on some ranks only (give every rank's share, or none)"
            )
        ids = (src_ids, dst_ids, num_vertices, directed, backend_obj, comm_obj)
        return cls._from_id_arrays(*ids, names=("src", "dst"), weights=weights)

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
        weights: np.ndarray | None = None,
    ) -> Graph:
        """Check the ids against the vertex count (agreed over ranks) and build the graph (with
        ``weights``, already checked, when given)."""
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
        weights = None if weights is None else xp.asarray(weights)
        dist = build_graph(
            comm, xp.asarray(src), xp.asarray(dst), n, directed=directed, xp=xp, weights=weights
        )
        return cls(dist, comm, backend, node_labels=node_labels)

    @classmethod
    def from_scipy(
        cls,
        matrix: Any,
        *,
        directed: bool | None = None,
        weighted: bool = True,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
    ) -> Graph:
        """Build a graph from a square sparse matrix or array: entry (i, j) is edge i -> j, its
        value the edge's weight.

        Every stored entry is an edge, explicit zeros included (edges of weight 0); of
        duplicate entries the smallest value is kept. The graph is weighted whatever the values
        are (a matrix of ones gives weights 1): ``weighted=False`` ignores the values and builds
        an unweighted graph. In an MPI job every rank passes the same matrix and takes its
        share of the entries.

        Parameters
        ----------
        matrix : scipy.sparse matrix or array, or cupyx.scipy.sparse matrix
            Square adjacency matrix (a CuPy one is copied to the host first).
        directed : bool, optional
            Default (None): undirected when the matrix is symmetric (its pattern, and its values
            when weighted), directed otherwise. False stores every edge in both directions (an
            entry and its transpose of different values: the smaller both ways).
        weighted : bool, default True
            False: the values are not looked at (an unweighted graph).
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"

        Returns
        -------
        Graph

        Raises
        ------
        TypeError
            ``matrix`` is not a sparse matrix/array, or (weighted) holds values that are not
            real numbers.
        ValueError
            ``matrix`` is not square (or not 2-d), or (weighted) holds a negative, NaN or
            infinite value (naming its entry).
        """
        matrix = scipy_matrix(matrix)
        directed = check_directed(directed)
        weighted = check_bool("weighted", weighted)
        backend_obj, comm_obj = resolved(backend, comm)
        coo = matrix.tocoo()
        rows = np.asarray(coo.row, dtype=np.int64)
        cols = np.asarray(coo.col, dtype=np.int64)
        n = int(matrix.shape[0])
        weights = None
        if weighted:
            weights, error = host_weights(
                "matrix", coo.data, lambda i: f"entry ({rows[i]}, {cols[i]})"
            )
            raise_first([error])
        if directed is None:
            directed = not is_symmetric(rows, cols, n, weights)
        src, dst, *shared = local_share(
            comm_obj, rows, cols, *([] if weights is None else [weights])
        )
        ids = (src, dst, n, directed, backend_obj, comm_obj)
        weights = shared[0] if shared else None
        return cls._from_id_arrays(*ids, names=("matrix", "matrix"), weights=weights)

    @classmethod
    def from_networkx(
        cls,
        G: Any,
        *,
        weight: str | None = "weight",
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
    ) -> Graph:
        """Build a graph from a NetworkX graph, weighted by the edge attribute ``weight``.

        Nodes are numbered ``0 .. n-1`` in ``G.nodes`` order; ``node_labels[i]`` is the node
        that became vertex ``i``. ``nx.Graph`` gives an undirected graph, ``nx.DiGraph`` a
        directed one (multigraphs likewise, parallel edges merged into the one of smallest
        weight). In an MPI job every rank passes the same graph.

        Parameters
        ----------
        G : networkx.Graph or networkx.DiGraph
        weight : str or None, default "weight"
            The edge attribute holding the weight; an edge without it weighs 1, as in
            NetworkX. None: an unweighted graph.
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"

        Returns
        -------
        Graph
            With ``node_labels``.

        Raises
        ------
        TypeError
            ``G`` is not a NetworkX graph, ``weight`` not a str or None, or a weight not a
            number (naming the edge).
        ValueError
            A negative, NaN or infinite weight (naming the edge).
        """
        try:
            import networkx as nx
        except ImportError as exc:
            raise InvalidArgumentType(f"G: networkx is not importable ({exc})") from None
        if not isinstance(G, nx.Graph):
            raise InvalidArgumentType(f"G: expected a networkx graph, got {type(G).__name__}")
        if weight is not None and not isinstance(weight, str):
            raise InvalidArgumentType(
                f"weight: expected an attribute name (a str) or None, got "
                f"{type(weight).__name__} {weight!r}"
            )
        backend_obj, comm_obj = resolved(backend, comm)
        labels = list(G.nodes)
        index = {node: i for i, node in enumerate(labels)}
        edges = list(G.edges() if weight is None else G.edges(data=weight, default=1))
        rows = np.fromiter((index[e[0]] for e in edges), dtype=np.int64, count=len(edges))
        cols = np.fromiter((index[e[1]] for e in edges), dtype=np.int64, count=len(edges))
        arrays = [rows, cols]
        if weight is not None:
            values = np.empty(len(edges), dtype=object)
            values[:] = [e[2] for e in edges]
            weights, error = host_weights(
                "G", values, lambda i: f"the {weight!r} of edge ({edges[i][0]!r}, {edges[i][1]!r})"
            )
            raise_first([error])
            arrays.append(weights)
        src, dst, *shared = local_share(comm_obj, *arrays)
        return cls._from_id_arrays(
            src,
            dst,
            len(labels),
            G.is_directed(),
            backend_obj,
            comm_obj,
            names=("G", "G"),
            node_labels=labels,
            weights=shared[0] if shared else None,
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
        weights: str | None = None,
        backend: str | Backend = "auto",
        comm: str | Communicator = "auto",
        progress: Callable[[int, int], None] | None = None,
        spill: bool = False,
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
        weights : str, optional
            ``"uniform:LO:HI"``: integer edge weights uniform in ``[LO, HI]`` (``0 <= LO <= HI
            <= 2**53``), a function of the undirected edge and the seed (the same both ways and
            at any rank count). None: unweighted.
        backend : {"auto", "numpy", "cuda"} or Backend, default "auto"
        comm : {"auto", "mpi", "nccl"} or Communicator, default "auto"
        progress : callable(done, total), optional
            Progress callback, where the generator supports it.
        spill : bool, default False
            One rank on a GPU: columns (and weights) that do not fit the device are built in
            host memory the device reads over the link, and stay there (a host-resident graph,
            ``place``; ``compress`` codes it onto the device). False: such a graph is refused
            with the bytes it needs.

        Returns
        -------
        Graph

        Raises
        ------
        TypeError, ValueError
            Bad or missing parameters for ``kind``.
        """
        from .. import generators

        scale, edgefactor, shape = check_generator(kind, scale, edgefactor, shape)
        seed = generators.DEFAULT_SEED if seed is None else check_int("seed", seed, minimum=0)
        spec = generators.parse_weight_spec(weights, "weights")
        backend_obj, comm_obj = resolved(backend, comm)
        kwargs: dict[str, Any] = {
            "scale": scale,
            "edgefactor": edgefactor,
            "shape": shape,
            "seed": seed,
            "xp": backend_obj.xp,
            "weights": spec,
        }
        if progress is not None and accepts_progress(generators.generate):
            kwargs["progress"] = progress
        if check_bool("spill", spill) and callable(getattr(backend_obj, "host_empty", None)):
            kwargs["spill"] = backend_obj.host_empty
        try:
            dist = generators.generate(kind, comm_obj, **kwargs)
        except InputError as exc:  # parameter errors (replicated, so raised on every rank)
            if not exc.all_ranks:
                raise
            raise InvalidArgumentValue(str(exc)) from None
        return cls(dist, comm_obj, backend_obj)

    # -- output -----------------------------------------------------------------------------

    @property
    def relabeling(self) -> Any:
        """A reordered native graph's original ids (``distbfs.io.Relabeling``: vertex ``v``
        was ``original_ids[v]`` before ``distbfs reorder``); None for any other graph. Searches
        run and answer in the graph's own ids; the command line maps them back."""
        return None if self.load_info is None else self.load_info.relabeling

    @property
    def compressed(self) -> bool:
        """True when the columns are varint-coded (``compress``)."""
        return self.dist.compressed

    def compress(self) -> Graph:
        """This graph with varint-coded columns, decoded as read (``placement.compress``)."""
        return placement.compress(self)

    def place(self, memory: str = "auto") -> Graph:
        """This graph with its columns and weights on the device or in host memory read over
        the link (``placement.place``: "auto", "device" or "host")."""
        return placement.place(self, memory)

    def save(self, path: str | os.PathLike[str], *, compress: bool = False) -> None:
        """Write the graph in the native format (a directory; atomic; collective; a reordered
        graph keeps its original ids).

        Parameters
        ----------
        path : str or os.PathLike
            Target directory (replaced as a whole).
        compress : bool, default False
            Store the columns varint-coded (``distbfs.compressed``; native version 3), which
            every backend reads back compressed.
        """
        if not isinstance(path, str | os.PathLike):
            raise InvalidArgumentType(f"path: expected a str or path, got {type(path).__name__}")
        if not isinstance(compress, bool):
            raise InvalidArgumentType(f"compress: expected a bool, got {type(compress).__name__}")
        from .. import io

        io.write_native(self.dist, os.fspath(path), self.comm, self.relabeling, compress)
