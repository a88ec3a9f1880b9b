"""The subcommands ``bfs``, ``generate``, ``convert`` and ``info``, and the ``Context`` every
subcommand works with (arguments, communicator, backend, rank-0 printing). Every rank of an MPI
job runs the same command and takes part in the work; only rank 0 prints."""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from ..api import Graph, apsp, bfs, check_vertex, sssp
from ..api.arguments import check_sources
from ..backends.base import Backend
from ..comm.base import Communicator
from ..errors import InputError
from ..io.native import check_target
from ..output import prepare_output
from ..partition import bin_by_owner, local_id
from ..progress import accepts_progress, progress
from .original_ids import graph_ids, write_matrix, write_per_vertex
from .parser import RANDOM_GENERATORS
from .plot import check_plot, plot_levels
from .tables import format_level_table

EXIT_OK = 0


class Context:
    """What a subcommand works with: arguments, communicator, backend, and rank-0 printing."""

    def __init__(self, args: argparse.Namespace, comm: Communicator, backend: Backend) -> None:
        self.args = args
        self.comm = comm
        self.backend = backend
        self.quiet = bool(args.quiet)

    def say(self, text: str = "") -> None:
        """Print a result line (rank 0 only)."""
        if self.comm.rank == 0:
            print(text, flush=True)

    def note(self, text: str) -> None:
        """Print an informational line (rank 0 only, not with --quiet)."""
        if not self.quiet:
            self.say(text)

    def bar(self, desc: str, total: float | None = None, enabled: bool = True, **kw: Any) -> Any:
        """A progress bar on rank 0 (terminal only, not with --quiet); ``kw``: unit, unit_scale."""
        return progress(self.comm.rank, desc, total=total, quiet=self.quiet, enabled=enabled, **kw)

    def timed(self) -> _Stopwatch:
        return _Stopwatch(self.comm)


class _Stopwatch:
    """Wall time of a collective step: barrier, then the slowest rank's time."""

    def __init__(self, comm: Communicator) -> None:
        self.comm = comm
        self.seconds = 0.0

    def __enter__(self) -> _Stopwatch:
        self.comm.barrier()
        self._start = time.perf_counter()
        return self

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is None:
            self.seconds = float(self.comm.allreduce(time.perf_counter() - self._start, op="max"))


def check_compress(ctx: Context) -> None:
    """``--compress`` on a search (checked before any graph is built): a GPU decodes
    compressed rows in every search but the fused kernel (``--strategy contract_expand``),
    which reads plain rows."""
    args, gpu = ctx.args, ctx.backend.name == "cuda"
    if gpu and getattr(args, "strategy", None) == "contract_expand":
        raise InputError(
            "--compress: --strategy contract_expand runs every level in the fused kernel, "
            "which reads plain rows; use hybrid, direction_optimizing or two_phase"
        )


def compress_graph(ctx: Context, graph: Graph) -> Graph:
    """The graph with its columns compressed (a line says how much)."""
    plain = graph.comm.allreduce(graph.dist.nbytes())
    with ctx.timed() as took:
        graph = graph.compress()
    small = graph.comm.allreduce(graph.dist.nbytes())
    ctx.note(
        f"compressed the columns in {took.seconds:.3f} s: CSR {plain:,} -> {small:,} bytes "
        f"({plain / max(1, small):.2f}x)"
    )
    return graph


def check_graph_memory(ctx: Context, memory: str) -> None:
    """``--graph-memory host`` needs a backend that places graphs (checked before any graph is
    built)."""
    if memory == "host" and not callable(getattr(ctx.backend, "place_graph", None)):
        raise InputError(
            f"--graph-memory host: the {ctx.backend.name} backend holds its graphs in host "
            "memory already"
        )


def search_graph(ctx: Context, graph: Graph) -> Graph:
    """The loaded or generated ``graph`` made ready for searching as the flags ask: its
    columns compressed (``--compress``), placed (``--graph-memory``)."""
    if getattr(ctx.args, "compress", False):
        graph = compress_graph(ctx, graph)
    memory = getattr(ctx.args, "graph_memory", "device")
    if memory == "device":  # as built
        return graph
    placed = graph.place(memory)
    if placed is not graph:
        where = ctx.backend.graph_memory(placed.dist)
        coded = " (compressed)" if placed.compressed and not graph.compressed else ""
        ctx.note(f"graph memory ({memory}): columns{coded} and weights in {where} memory")
    return placed


def load_graph(ctx: Context, path: str, search: bool = False) -> Graph:
    """The graph at ``path`` (``search``: ready for searching, ``search_graph``)."""
    from .. import io

    if search:
        check_flags(ctx)

    # A bar only where the reader reports progress (a bar that never moves says nothing).
    with ctx.bar(
        f"loading {os.path.basename(path)}",
        enabled=accepts_progress(io.read_graph),
        unit="B",
        unit_scale=True,
    ) as bar:
        graph = Graph.from_file(
            path,
            directed=False if ctx.args.undirected else None,
            format=ctx.args.format,
            backend=ctx.backend,
            comm=ctx.comm,
            progress=bar.callback if bar.active else None,
        )
    info = graph.load_info
    ctx.note(
        f"loaded {path} ({info.format}, {info.bytes:,} bytes) in {info.seconds:.3f} s, "
        f"{info.mb_per_s:.1f} MB/s"
    )
    return search_graph(ctx, graph) if search else graph


def check_flags(ctx: Context) -> None:
    """The placement flags of a search, checked before any graph is built."""
    if getattr(ctx.args, "compress", False):
        check_compress(ctx)
    check_graph_memory(ctx, getattr(ctx.args, "graph_memory", "device"))


def generator_params(args: argparse.Namespace, kind: str, default_scale: int | None) -> dict:
    """Check the generator flags against ``kind`` (naming the flags) and return the keywords
    (``weights`` only when ``--weights`` is given, as its checked spec string)."""
    from ..generators import DEFAULT_SEED, parse_weight_spec

    seed = DEFAULT_SEED if args.seed is None else args.seed
    spec = parse_weight_spec(args.weights, "--weights")
    weights = {} if spec is None else {"weights": str(spec)}
    if kind in RANDOM_GENERATORS:
        if args.shape is not None:
            raise InputError(f"--shape: not used by the {kind} generator (it takes --scale)")
        from ..generators import MAX_SCALE

        scale = default_scale if args.scale is None else args.scale
        if scale is None:
            raise InputError(f"--scale: required for the {kind} generator")
        if scale > MAX_SCALE:
            raise InputError(f"--scale: expected at most {MAX_SCALE}, got {scale}")
        return {"scale": scale, "edgefactor": args.edgefactor, "seed": seed, **weights}
    dims = 2 if kind == "grid2d" else 3
    if args.scale is not None:
        raise InputError(f"--scale: not used by the {kind} generator (it takes --shape)")
    if args.shape is None:
        raise InputError(
            f"--shape: required for the {kind} generator ({'NXxNY' if dims == 2 else 'NXxNYxNZ'})"
        )
    if len(args.shape) != dims:
        given = "x".join(str(d) for d in args.shape)
        raise InputError(f"--shape: the {kind} generator takes {dims} dimensions, got {given!r}")
    return {"shape": args.shape, "seed": seed, **weights}


def generate_graph(ctx: Context, kind: str, params: dict, search: bool = False) -> Graph:
    """A generated graph (``search``: ready for searching, ``search_graph``; built in host
    memory where the device lacks room when the flags let the graph leave the device:
    ``--compress``, ``--graph-memory host`` or ``auto``)."""
    spill = False
    if search:
        check_flags(ctx)
        memory = getattr(ctx.args, "graph_memory", "device")
        spill = getattr(ctx.args, "compress", False) or memory != "device"
    with ctx.bar(f"generating {kind}", unit="edge") as bar:
        graph = Graph.generate(
            kind,
            backend=ctx.backend,
            comm=ctx.comm,
            progress=bar.callback if bar.active else None,
            spill=spill,
            **params,
        )
    return search_graph(ctx, graph) if search else graph


def describe(graph: Graph) -> str:
    kind = "directed" if graph.directed else "undirected"
    return (
        f"{graph.num_vertices:,} vertices, {graph.num_undirected_edges:,} "
        f"{'edges' if graph.directed else 'undirected edges'} ({graph.num_edges:,} stored), {kind}"
        + (", columns compressed" if graph.compressed else "")
    )


def graph_name(info: dict[str, Any], path: str | None) -> str:
    """A benchmarked graph in words: the generator and its parameters, or the file."""
    if info.get("generator") in RANDOM_GENERATORS:
        return f"{info['generator']} scale {info['scale']}, edgefactor {info['edgefactor']}"
    if "generator" in info:
        return f"{info['generator']} {'x'.join(map(str, info['shape']))}"
    return str(path)


def say_bench_header(
    ctx: Context, graph: Graph, info: dict[str, Any], algorithm: str, count: str, build: float
) -> None:
    """The lines that open every ``bench`` report, Graph500's among them: the graph (``info``:
    the file or the generator's parameters), backend, ``algorithm``, SCALE and edgefactor of a
    random graph, ``count`` (e.g. "NBFS: 64"), ranks, construction and load time."""
    comm = ctx.comm
    random = info.get("generator") in RANDOM_GENERATORS
    ctx.say(f"graph: {graph_name(info, ctx.args.graph)}: {describe(graph)}")
    ctx.say(f"backend: {ctx.backend.name}, comm: {comm.kind}, ranks: {comm.size}")
    ctx.say(f"algorithm: {algorithm}")
    if random:
        ctx.say(f"SCALE: {info['scale']}")
        ctx.say(f"edgefactor: {info['edgefactor']}")
    ctx.say(count)
    ctx.say(f"num_mpi_processes: {comm.size}")
    ctx.say(f"construction_time: {build:.6g}")
    if graph.load_info is not None:
        load = graph.load_info
        ctx.say(
            f"load: {load.format}, {load.bytes:,} bytes, {load.seconds:.3f} s, "
            f"{load.mb_per_s:.1f} MB/s"
        )


def cmd_bfs(ctx: Context) -> int:
    """``bfs GRAPH --source S[,S...] [--depth-limit D]``: one search (from every source at
    once), a summary, optional .npy output."""
    args = ctx.args
    if args.output:
        prepare_output(args.output, ctx.comm)
    check_plot(args.plot, ctx.comm)
    compile_ahead = getattr(ctx.backend, "compile_ahead", None)
    if callable(compile_ahead):
        compile_ahead()  # a first run's kernels build while the graph is read
    graph = load_graph(ctx, args.graph, search=True)
    sources = check_sources(args.source, graph.num_vertices, "--source")
    result = bfs(
        graph,
        graph_ids(graph, sources),
        predecessors=args.predecessors,
        gather=False,
        validate=args.validate,
        strategy=args.strategy,
        alpha=args.alpha,
        beta=args.beta,
        depth_limit=args.depth_limit,
    )
    limit = "" if args.depth_limit is None else f", depth limit {args.depth_limit}"
    ctx.say(f"graph: {args.graph}: {describe(graph)}")
    ctx.say(
        f"{_name_sources(sources)}: reached {result.num_reached:,} of {graph.num_vertices:,} "
        f"vertices, depth {result.depth} ({result.depth + 1} levels{limit})"
    )
    ctx.say(
        f"time: {result.seconds:.6f} s, {result.edges_traversed:,} edges traversed, "
        f"{result.teps:.4g} TEPS"
    )
    if args.validate:
        ctx.say("validation: passed")
    write_outputs(ctx, graph, result.local_distances, result.local_predecessors)
    if args.plot:
        title = f"{os.path.basename(args.graph)}, {_name_sources(sources)}"
        plot_levels(args.plot, result.levels, title, ctx.comm)
        ctx.note(f"wrote {args.plot}")
    if not ctx.quiet:
        ctx.say("per-level summary:")
        ctx.say(format_level_table(result.levels, every_level=args.levels == "all"))
    return EXIT_OK


def _name_sources(sources: np.ndarray, shown: int = 8) -> str:
    """``source S``, or ``sources A, B, C`` (the first ``shown``, then how many in all)."""
    if sources.shape[0] == 1:
        return f"source {int(sources[0])}"
    listed = ", ".join(str(int(v)) for v in sources[:shown])
    more = f", ... ({sources.shape[0]:,} in all)" if sources.shape[0] > shown else ""
    return f"sources {listed}{more}"


def cmd_sssp(ctx: Context) -> int:
    """``sssp GRAPH --source S``: shortest paths from one source, a summary, optional .npy."""
    args = ctx.args
    if args.output:
        prepare_output(args.output, ctx.comm)
    graph = load_graph(ctx, args.graph, search=True)
    source = check_vertex(args.source, graph.num_vertices, "--source")
    result = sssp(
        graph,
        int(graph_ids(graph, np.array([source]))[0]),
        predecessors=args.predecessors,
        delta=args.delta,
        gather=False,
        validate=args.validate,
        max_distance=args.max_distance,
    )
    xp, comm = graph.backend.xp, graph.comm
    finite = result.local_distances[xp.isfinite(result.local_distances)]
    reached = int(comm.allreduce(int(finite.shape[0])))
    farthest = comm.allreduce(float(finite.max()) if finite.shape[0] else 0.0, op="max")
    ctx.say(f"graph: {args.graph}: {describe(graph)}")
    ctx.say(
        f"source {source}: reached {reached:,} of {graph.num_vertices:,} vertices, "
        f"max distance {farthest:.10g}"
    )
    ctx.say(
        f"time: {result.seconds:.6f} s, {len(result.buckets):,} buckets (delta "
        f"{result.delta:.6g}), {result.relaxations:,} relaxations, "
        f"{result.edges_traversed:,} edges traversed, {result.teps:.4g} TEPS"
    )
    if result.rows is not None:
        ctx.say(f"rows read: {result.rows}")
    if args.validate:
        ctx.say("validation: passed")
    preds = result.local_predecessors if args.predecessors else None
    write_outputs(ctx, graph, result.local_distances, preds)
    return EXIT_OK


def cmd_apsp(ctx: Context) -> int:
    """``apsp GRAPH --output PREFIX``: every pair's distance, written row by row."""
    args, comm = ctx.args, ctx.comm
    prepare_output(args.output, comm)
    graph = load_graph(ctx, args.graph)
    result = apsp(graph, delta=args.delta, gather=False)
    xp, n = graph.backend.xp, graph.num_vertices
    pairs = int(comm.allreduce(int(xp.isfinite(result.local_rows).sum())))
    ctx.say(f"graph: {args.graph}: {describe(graph)}")
    ctx.say(f"pairs: {n * n:,}, {pairs:,} joined by a path; time: {result.seconds:.6f} s")
    path = f"{args.output}.distances.npy"
    write_matrix(graph, path, result.local_rows)
    ctx.say(f"wrote {path}")
    return EXIT_OK


def write_outputs(ctx: Context, graph: Graph, distances: Any, predecessors: Any | None) -> None:
    """``--output PREFIX``: PREFIX.distances.npy and, when given, PREFIX.predecessors.npy, in
    global vertex order, each written atomically (collective)."""
    prefix = ctx.args.output
    if not prefix:
        return
    written = [f"{prefix}.distances.npy"]
    write_per_vertex(graph, written[0], distances)
    if predecessors is not None:
        written.append(f"{prefix}.predecessors.npy")
        write_per_vertex(graph, written[1], predecessors, "vertices")
    ctx.say(f"wrote {', '.join(written)}")


def cmd_generate(ctx: Context) -> int:
    """``generate KIND -o PATH``: a synthetic graph written in the native format."""
    args = ctx.args
    params = generator_params(args, args.kind, None)
    check_target(args.output, ctx.comm, "--output")
    with ctx.timed() as build:
        graph = generate_graph(ctx, args.kind, params)
    with ctx.timed() as save:
        graph.save(args.output, compress=args.compress)
    ctx.say(
        f"generated {args.kind}: {describe(graph)}{_weight_note(graph)} in {build.seconds:.3f} s"
    )
    ctx.say(f"wrote {args.output} in {save.seconds:.3f} s")
    return EXIT_OK


def cmd_convert(ctx: Context) -> int:
    """``convert IN OUT``: any supported format to the native format."""
    args = ctx.args
    check_target(args.output, ctx.comm, "OUT")
    graph = load_graph(ctx, args.input)
    with ctx.timed() as save:
        graph.save(args.output, compress=args.compress)
    ctx.say(f"converted {args.input}: {describe(graph)}{_weight_note(graph)}")
    ctx.say(f"wrote {args.output} in {save.seconds:.3f} s")
    return EXIT_OK


def _weight_note(graph: Graph) -> str:
    """The note ``, weighted (DTYPE)`` after a weighted graph's description; empty otherwise."""
    return f", weighted ({graph.dist.weights.dtype})" if graph.weighted else ""


def _weight_summary(graph: Graph) -> str:
    """The ``weights:`` line of ``info`` (collective): unweighted, or the dtype and the
    min/mean/max over every stored edge."""
    if not graph.weighted:
        return "weights: none (unweighted)"
    weights = graph.backend.to_host(graph.dist.weights)
    comm = graph.comm
    low = comm.allreduce(float(weights.min()) if weights.size else float("inf"), op="min")
    high = comm.allreduce(float(weights.max()) if weights.size else float("-inf"), op="max")
    total = comm.allreduce(float(weights.sum(dtype=np.float64)))
    if graph.num_edges == 0:
        return f"weights: {weights.dtype}, no edges"
    mean = total / graph.num_edges
    return f"weights: {weights.dtype}, min {low:.6g}, mean {mean:.6g}, max {high:.6g}"


def _in_degrees(graph: Graph) -> np.ndarray:
    """In-degree of every owned vertex (local order): column ids travel to their owners."""
    dist, comm = graph.dist, graph.comm
    columns = np.asarray(graph.backend.to_host(dist.column_indices), dtype=np.int64)
    offsets, columns, _ = bin_by_owner(np, columns, comm.size)
    _, (received,) = comm.alltoallv(offsets, columns)
    return np.bincount(local_id(received, comm.size), minlength=dist.nlocal)


def cmd_warmup(ctx: Context) -> int:
    """``warmup``: every CUDA kernel compiled into CuPy's cache, ahead of the runs."""
    backend = ctx.backend
    if not callable(getattr(backend, "warm_up", None)):
        raise InputError(
            f"warmup compiles the CUDA kernels; the {backend.name} backend has none "
            "(--backend cuda says why CUDA is not available here)"
        )
    if ctx.args.threads < 1:
        raise InputError(f"--threads: expected at least 1, got {ctx.args.threads}")
    from ..api.warmup import WARMUP_SCALE, exercise

    with ctx.timed() as total:
        modules = backend.warm_up(threads=ctx.args.threads)
    for stage, bits, seconds in modules:
        ctx.say(f"{stage:18s} {bits}-bit ids  {seconds:7.2f} s")
    cache = os.environ.get("CUPY_CACHE_DIR", "~/.cupy/kernel_cache (CuPy's default)")
    ctx.say(f"compiled {len(modules)} modules in {total.seconds:.2f} s into {cache}")
    seconds = exercise(backend, ctx.comm)
    ctx.say(
        f"ran every traversal on a Kronecker scale {WARMUP_SCALE} graph in {seconds:.2f} s "
        "(CuPy's own kernels compiled into the same cache)"
    )
    return EXIT_OK


def _compression_line(graph: Graph) -> str:
    """What ``--compress`` makes of the columns: their bytes coded (with the row byte offsets)
    against plain, over all ranks."""
    from ..compressed import coded_bytes

    dist, columns = graph.dist, graph.dist.column_indices
    plain = graph.comm.allreduce(int(columns.shape[0]) * columns.dtype.itemsize)
    if dist.compressed:  # what it holds
        coded = columns.nbytes
    else:
        coded = coded_bytes(dist.row_offsets, columns, dist.rank, dist.size)
    small = graph.comm.allreduce(coded)
    return (
        f"compressed columns (--compress): {small:,} bytes against {plain:,} "
        f"({plain / max(1, small):.2f}x; varint gaps and row byte offsets)"
    )


def cmd_info(ctx: Context) -> int:
    """``info GRAPH``: sizes, degree statistics, isolated vertices, balance over ranks."""
    args, comm = ctx.args, ctx.comm
    graph = load_graph(ctx, args.graph)
    dist = graph.dist
    out_degrees = np.asarray(graph.backend.to_host(dist.local_degrees()), dtype=np.int64)
    touched = out_degrees if not graph.directed else out_degrees + _in_degrees(graph)
    big = np.iinfo(np.int64).max
    low = comm.allreduce(int(out_degrees.min()) if out_degrees.size else big, op="min")
    high = comm.allreduce(int(out_degrees.max()) if out_degrees.size else 0, op="max")
    isolated = comm.allreduce(int(np.count_nonzero(touched == 0)))
    per_rank = comm.allgather_object((dist.nlocal, dist.num_local_edges, dist.nbytes()))
    n = graph.num_vertices
    degree = "out-degree" if graph.directed else "degree"
    ctx.say(f"graph: {args.graph}")
    ctx.say(f"format: {graph.load_info.format}, {graph.load_info.bytes:,} bytes read")
    if graph.relabeling is not None:
        ctx.say(f"reordered: {graph.relabeling.order} (commands take and report original ids)")
    ctx.say(f"vertices: {n:,}")
    ctx.say(f"stored edges: {graph.num_edges:,}")
    ctx.say(f"undirected edges: {graph.num_undirected_edges:,}")
    ctx.say(f"directed: {'yes' if graph.directed else 'no'}")
    ctx.say(f"weighted: {'yes' if graph.weighted else 'no'}")
    ctx.say(_weight_summary(graph))
    if n:
        ctx.say(f"{degree}: min {low:,}, mean {graph.num_edges / n:.3f}, max {high:,}")
    ctx.say(f"isolated vertices: {isolated:,}")
    total_bytes = sum(b for _, _, b in per_rank)
    ctx.say(f"bytes (CSR, all ranks): {total_bytes:,}")
    ctx.say(_compression_line(graph))
    ctx.say(f"ranks: {comm.size}")
    rows = [("rank", "vertices", "edges", "bytes")]
    rows += [(str(r), f"{v:,}", f"{e:,}", f"{b:,}") for r, (v, e, b) in enumerate(per_rank)]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    for row in rows:
        ctx.say("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))
    for i, label in ((1, "edges"), (0, "vertices")):
        values = [r[i] for r in per_rank]
        mean = sum(values) / len(values)
        ctx.say(f"{label} imbalance (max/mean): {max(values) / mean if mean else 1.0:.3f}")
    return EXIT_OK
