"""The command line: ``python -m distbfs`` (or ``distbfs``) with subcommands.

``bench`` (also what runs without a subcommand: the embedded Graph500-style job), ``bfs``,
``generate``, ``convert`` and ``info``. Every rank of an MPI job runs the same command and takes
part in the work; only rank 0 prints results and progress bars.

Invariants on bad input (a flag, an argument, a file, a source out of range): exactly one line
``distbfs: error: <message>`` naming the argument or ``file:line`` and the bad value, on stderr,
printed once, exit status 2 on every rank, no traceback, and no rank left waiting:

- argparse errors and other errors every rank knows (``InputError.all_ranks``): rank 0 prints
  (``launcher_rank()`` before MPI starts), every rank returns 2 (``mpiexec`` then exits 2);
- a rank-local ``InputError`` that escaped agreement: that rank prints and calls ``abort(2)``
  (MPICH's ``mpiexec`` exits with the abort code);
- ``ValidationError`` (raised alike on every rank): rank 0 prints, exit 1;
- anything else is a bug: the traceback on the failing rank, then ``abort(1)`` in a job of several
  ranks (exit 1 otherwise); Ctrl-C ends the job with 130.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any, NoReturn

import numpy as np

from . import __version__
from .api import FORMATS, BFSResult, Graph, bfs, check_vertex, resolve_backend, resolve_comm
from .backends import BACKEND_CHOICES, Backend
from .bfs import DEFAULT_ALPHA, DEFAULT_BETA, STRATEGIES, LevelStats
from .comm import COMM_CHOICES, Communicator, launcher_rank
from .errors import EXIT_INPUT_ERROR, DeviceError, InputError, ValidationError
from .output import make_parent_dirs, write_json, write_striped_npy
from .partition import bin_by_owner, local_id
from .progress import accepts_progress, progress

PROG = "distbfs"

DEFAULT_SCALE_CPU = 18
"""Kronecker scale of the default job on the numpy backend (about 6 s on a 2-core machine, at 1
or 4 ranks, with 64 validated searches)."""
DEFAULT_SCALE_GPU = 22
"""Kronecker scale of the default job on the cuda backend."""
DEFAULT_ROOTS = 64
"""Graph500 runs 64 searches."""
DEFAULT_EDGEFACTOR = 16

GENERATOR_CHOICES = ("kronecker", "uniform", "grid2d", "grid3d")
"""The generators of ``distbfs.generators.GENERATORS`` (listed here so --help needs no import)."""
RANDOM_GENERATORS = ("kronecker", "uniform")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_INTERRUPTED = 130

PHASE_ORDER = (
    "contract_expand",
    "expand",
    "filter_partition",
    "exchange",
    "contract",
    "bitmap",
    "bottom_up",
    "termination",
)


# --------------------------------------------------------------------------------------------
# Argument parsing


class _ParserExit(Exception):
    """argparse wanted to exit (after --help or --version) with ``status``."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are ``InputError``s and which prints on launcher rank 0 only.

    Every rank parses the same argv, so every rank raises the same error.
    """

    def error(self, message: str) -> NoReturn:
        raise InputError(message)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if message:
            self._print_message(message, sys.stderr)
        raise _ParserExit(status)

    def _print_message(self, message: str, file: Any = None) -> None:
        if launcher_rank() == 0:
            super()._print_message(message, file)


def _int_at_least(minimum: int, wording: str) -> Any:
    """An argparse type: an integer >= ``minimum``, refused as "expected <wording>"."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wording}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {wording}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1, "a positive integer")
_nonnegative_int = _int_at_least(0, "an integer >= 0")


def _vertex(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a vertex id (an integer), got {text!r}"
        ) from None


def _shape(text: str) -> tuple[int, ...]:
    parts = text.lower().replace(",", "x").split("x")
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        dims = ()
    if len(dims) not in (2, 3) or min(dims) < 1:
        raise argparse.ArgumentTypeError(
            f"expected NXxNY or NXxNYxNZ with positive integers, got {text!r}"
        )
    return dims


def _common_options() -> _Parser:
    common = _Parser(add_help=False)
    group = common.add_argument_group("common options")
    group.add_argument(
        "--backend",
        choices=BACKEND_CHOICES,
        default="auto",
        help="array backend: numpy on the host, cuda on GPUs, auto = cuda when usable "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--comm",
        choices=COMM_CHOICES,
        default="auto",
        help="communicator between ranks: auto = NCCL for the cuda backend on several GPUs "
        "(GPU-aware MPI if NCCL is missing), MPI under a launcher, else one rank "
        "(default: %(default)s)",
    )
    group.add_argument(
        "--undirected",
        action="store_true",
        help="store every edge of an input file in both directions",
    )
    group.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bars and no informational lines (results and errors still print)",
    )
    return common


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="input format (default: from the file name: .mtx, .txt/.el/.edges, .graph, each "
        "optionally .gz; a directory is the native format)",
    )


def _add_generator_options(parser: argparse.ArgumentParser, *, with_kind: bool) -> None:
    if with_kind:
        parser.add_argument(
            "--generator",
            choices=GENERATOR_CHOICES,
            default=None,
            help="synthetic graph to generate (default: kronecker)",
        )
    parser.add_argument(
        "--scale",
        type=_positive_int,
        default=None,
        help="log2 of the vertex count (kronecker, uniform)",
    )
    parser.add_argument(
        "--edgefactor",
        type=_positive_int,
        default=DEFAULT_EDGEFACTOR,
        help="edges generated per vertex (kronecker, uniform; default: %(default)s)",
    )
    parser.add_argument(
        "--shape",
        type=_shape,
        default=None,
        metavar="NXxNY[xNZ]",
        help="grid extent (grid2d: NXxNY, grid3d: NXxNYxNZ)",
    )
    parser.add_argument(
        "--seed",
        type=_nonnegative_int,
        default=None,
        help="random seed of the generator (default: distbfs.generators.DEFAULT_SEED)",
    )


def _add_strategy(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--strategy",
        choices=STRATEGIES,
        default=None,
        help="how levels run (default: direction_optimizing where the backend has bottom-up "
        "stages, else hybrid): " + ", ".join(STRATEGIES),
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=None,
        help="direction_optimizing: go bottom-up when the frontier's edges exceed the "
        f"unexplored edges / ALPHA (default {DEFAULT_ALPHA:g})",
    )
    parser.add_argument(
        "--beta",
        type=float,
        default=None,
        help="direction_optimizing: back to top-down when the frontier holds fewer than "
        f"n / BETA vertices (default {DEFAULT_BETA:g})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line (subcommands bench, bfs, generate, convert, info)."""
    common = _common_options()
    parser = _Parser(
        prog=PROG,
        description="Distributed breadth-first search (Merrill, Garland & Grimshaw 2012). "
        "Without a subcommand, runs the default Graph500-style benchmark (bench with defaults: "
        f"a Kronecker graph of scale {DEFAULT_SCALE_CPU} on numpy, {DEFAULT_SCALE_GPU} on cuda, "
        f"{DEFAULT_ROOTS} validated searches). Run several ranks with mpiexec -n P.",
        epilog=f"Options of a command: {PROG} COMMAND --help.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")

    bench = sub.add_parser(
        "bench",
        parents=[common],
        help="Graph500-style benchmark (the default)",
        description="Build or load a graph, choose search roots, run and validate one BFS per "
        "root, print Graph500 statistics and a per-level summary of one search.",
    )
    bench.add_argument(
        "graph", nargs="?", metavar="GRAPH", help="graph file (default: generate a graph)"
    )
    _add_format(bench)
    _add_generator_options(bench, with_kind=True)
    bench.add_argument(
        "--roots",
        type=_positive_int,
        default=DEFAULT_ROOTS,
        help="number of search roots (default: %(default)s)",
    )
    bench.add_argument(
        "--root-seed",
        type=_nonnegative_int,
        default=None,
        help="seed of the root choice (default: distbfs.roots.DEFAULT_ROOT_SEED)",
    )
    bench.add_argument(
        "--predecessors",
        action="store_true",
        help="compute BFS trees (validated with Graph500 rules 1-5)",
    )
    bench.add_argument("--no-validate", action="store_true", help="skip validating each search")
    _add_strategy(bench)
    bench.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="write statistics, per-root times and per-level counts as JSON",
    )
    bench.set_defaults(handler=cmd_bench)

    run = sub.add_parser(
        "bfs",
        parents=[common],
        help="one BFS from a source vertex",
        description="Load a graph and search it from one source; print a summary and optionally "
        "write the distances (and predecessors) as .npy files in global vertex order.",
    )
    run.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(run)
    run.add_argument(
        "--source", type=_vertex, required=True, metavar="S", help="source vertex id (0-based)"
    )
    run.add_argument("--predecessors", action="store_true", help="compute the BFS tree")
    run.add_argument(
        "--output",
        metavar="PREFIX",
        default=None,
        help="write PREFIX.distances.npy (and PREFIX.predecessors.npy); missing directories "
        "are created",
    )
    run.add_argument("--validate", action="store_true", help="validate the result")
    _add_strategy(run)
    run.set_defaults(handler=cmd_bfs)

    gen = sub.add_parser(
        "generate",
        parents=[common],
        help="generate a synthetic graph in the native format",
        description="Generate an undirected synthetic graph and write it in the native format.",
    )
    gen.add_argument(
        "kind",
        choices=GENERATOR_CHOICES,
        metavar="KIND",
        help=f"one of {', '.join(GENERATOR_CHOICES)}",
    )
    _add_generator_options(gen, with_kind=False)
    gen.add_argument(
        "-o", "--output", required=True, metavar="PATH", help="target (native format directory)"
    )
    gen.set_defaults(handler=cmd_generate)

    conv = sub.add_parser(
        "convert",
        parents=[common],
        help="convert a graph file to the native format",
        description="Read a graph in any supported format and write it in the native format.",
    )
    conv.add_argument("input", metavar="IN", help="graph file")
    conv.add_argument("output", metavar="OUT", help="target (native format directory)")
    _add_format(conv)
    conv.set_defaults(handler=cmd_convert)

    info = sub.add_parser(
        "info",
        parents=[common],
        help="sizes, degrees and per-rank balance of a graph",
        description="Print vertex and edge counts, degree statistics, isolated vertices and how "
        "vertices, edges and bytes are spread over the ranks.",
    )
    info.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(info)
    info.set_defaults(handler=cmd_info)
    return parser


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; without a subcommand (or with only options) the command is ``bench``."""
    argv = list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "bench")
    return build_parser().parse_args(argv)


# --------------------------------------------------------------------------------------------
# Context shared by the subcommands


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


def _load(ctx: Context, path: str) -> Graph:
    from . import io

    # A bar only where the reader reports progress (a bar that never moves says nothing).
    with ctx.bar(
        f"loading {os.path.basename(path)}",
        enabled=accepts_progress(io.read_graph),
        unit="B",
        unit_scale=True,
    ) as bar:
        graph = Graph.from_file(
            path,
            undirected=ctx.args.undirected,
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
    return graph


def _generator_params(args: argparse.Namespace, kind: str, default_scale: int | None) -> dict:
    """Check the generator flags against ``kind`` (naming the flags) and return the keywords."""
    from .generators import DEFAULT_SEED

    seed = DEFAULT_SEED if args.seed is None else args.seed
    if kind in RANDOM_GENERATORS:
        if args.shape is not None:
            raise InputError(f"--shape: not used by the {kind} generator (it takes --scale)")
        from .generators import MAX_SCALE

        scale = default_scale if args.scale is None else args.scale
        if scale is None:
            raise InputError(f"--scale: required for the {kind} generator")
        if scale > MAX_SCALE:
            raise InputError(f"--scale: expected at most {MAX_SCALE}, got {scale}")
        return {"scale": scale, "edgefactor": args.edgefactor, "seed": seed}
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
    return {"shape": args.shape, "seed": seed}


def _generate(ctx: Context, kind: str, params: dict) -> Graph:
    with ctx.bar(f"generating {kind}", unit="edge") as bar:
        return Graph.generate(
            kind,
            backend=ctx.backend,
            comm=ctx.comm,
            progress=bar.callback if bar.active else None,
            **params,
        )


def _describe(graph: Graph) -> str:
    kind = "directed" if graph.directed else "undirected"
    return (
        f"{graph.num_vertices:,} vertices, {graph.num_undirected_edges:,} "
        f"{'edges' if graph.directed else 'undirected edges'} ({graph.num_edges:,} stored), {kind}"
    )


# --------------------------------------------------------------------------------------------
# Subcommands


def cmd_bfs(ctx: Context) -> int:
    """``bfs GRAPH --source S``: one search, a summary, optional .npy output."""
    args, comm = ctx.args, ctx.comm
    graph = _load(ctx, args.graph)
    source = check_vertex(args.source, graph.num_vertices, "--source")
    result = bfs(
        graph,
        source,
        predecessors=args.predecessors,
        gather=False,
        validate=args.validate,
        strategy=args.strategy,
        alpha=args.alpha,
        beta=args.beta,
    )
    ctx.say(f"graph: {args.graph}: {_describe(graph)}")
    ctx.say(
        f"source {source}: reached {result.num_reached:,} of {graph.num_vertices:,} vertices, "
        f"depth {result.depth} ({len(result.levels)} levels)"
    )
    ctx.say(
        f"time: {result.seconds:.6f} s, {result.edges_traversed:,} edges traversed, "
        f"{result.teps:.4g} TEPS"
    )
    if args.validate:
        ctx.say("validation: passed")
    if args.output:
        n = graph.num_vertices
        make_parent_dirs(args.output + ".distances.npy", comm)
        written = [f"{args.output}.distances.npy"]
        write_striped_npy(written[0], result.local_distances, n, comm)
        if args.predecessors:
            written.append(f"{args.output}.predecessors.npy")
            write_striped_npy(written[1], result.local_predecessors, n, comm)
        ctx.say(f"wrote {', '.join(written)}")
    return EXIT_OK


def cmd_bench(ctx: Context) -> int:
    """``bench``: Graph500-style benchmark on a file or a generated graph."""
    from . import roots as roots_mod
    from . import stats as stats_mod

    args, comm = ctx.args, ctx.comm
    given = {"--generator": args.generator, "--scale": args.scale, "--shape": args.shape}
    given["--seed"] = args.seed
    gen_flags = [flag for flag, value in given.items() if value is not None]
    graph_info: dict[str, Any] = {}
    with ctx.timed() as build:
        if args.graph is not None:
            if gen_flags:
                raise InputError(
                    f"{gen_flags[0]}: not used with a graph file ({args.graph}); "
                    "give either GRAPH or generator options"
                )
            graph = _load(ctx, args.graph)
            graph_info["file"] = args.graph
        else:
            kind = args.generator or "kronecker"
            default = DEFAULT_SCALE_GPU if ctx.backend.name == "cuda" else DEFAULT_SCALE_CPU
            params = _generator_params(args, kind, default)
            graph = _generate(ctx, kind, params)
            graph_info.update(generator=kind, **params)
    graph_info.update(
        num_vertices=graph.num_vertices,
        num_edges=graph.num_edges,
        num_undirected_edges=graph.num_undirected_edges,
        directed=graph.directed,
    )
    root_seed = roots_mod.DEFAULT_ROOT_SEED if args.root_seed is None else args.root_seed
    roots = roots_mod.choose_roots(graph.dist, comm, count=args.roots, seed=root_seed)
    if not roots:
        raise InputError(
            f"{args.graph or 'generated graph'}: no vertex has an edge, nothing to search"
        )
    validate = not args.no_validate
    # First one search of the first root with phase timers, for the per-level table; it also
    # warms up what a first search pays once (kernel compilation, NCCL connections), which the
    # timed searches (run without timers) then do not count.
    profile = bfs(
        graph,
        roots[0],
        predecessors=args.predecessors,
        gather=False,
        timing=True,
        strategy=args.strategy,
        alpha=args.alpha,
        beta=args.beta,
    )
    times: list[float] = []
    nedges: list[int] = []
    with ctx.bar("BFS", total=len(roots), unit="search") as bar:
        for root in roots:
            result = bfs(
                graph,
                root,
                predecessors=args.predecessors,
                gather=False,
                validate=validate,
                strategy=args.strategy,
                alpha=args.alpha,
                beta=args.beta,
            )
            times.append(result.seconds)
            nedges.append(result.edges_traversed)
            bar.update()
    statistics = {k: float(v) for k, v in stats_mod.graph500_statistics(times, nedges).items()}

    if "generator" in graph_info:
        if graph_info["generator"] in RANDOM_GENERATORS:
            what = (
                f"{graph_info['generator']} scale {graph_info['scale']}, "
                f"edgefactor {graph_info['edgefactor']}"
            )
        else:
            what = f"{graph_info['generator']} {'x'.join(map(str, graph_info['shape']))}"
    else:
        what = args.graph
    ctx.say(f"graph: {what}: {_describe(graph)}")
    ctx.say(f"backend: {ctx.backend.name}, comm: {comm.kind}, ranks: {comm.size}")
    if graph_info.get("generator") in RANDOM_GENERATORS:
        ctx.say(f"SCALE: {graph_info['scale']}")
        ctx.say(f"edgefactor: {graph_info['edgefactor']}")
    ctx.say(f"NBFS: {len(roots)}")
    ctx.say(f"num_mpi_processes: {comm.size}")
    ctx.say(f"construction_time: {build.seconds:.6g}")
    if graph.load_info is not None:
        info = graph.load_info
        ctx.say(
            f"load: {info.format}, {info.bytes:,} bytes, {info.seconds:.3f} s, "
            f"{info.mb_per_s:.1f} MB/s"
        )
    ctx.say(f"validation: {'passed (' + str(len(roots)) + ' searches)' if validate else 'skipped'}")
    ctx.say(stats_mod.format_statistics(statistics))
    ctx.say()
    ctx.say(
        f"per-level summary of the search from root {roots[0]} "
        f"({profile.seconds * 1e3:.3f} ms with phase timers):"
    )
    ctx.say(format_level_table(profile.levels))

    if args.json:
        load = None
        if graph.load_info is not None:
            info = graph.load_info
            load = {
                "format": info.format,
                "bytes": int(info.bytes),
                "seconds": float(info.seconds),
                "mb_per_s": float(info.mb_per_s),
            }
        document = {
            "graph": graph_info,
            "backend": ctx.backend.name,
            "comm": comm.kind,
            "comm_detail": comm.describe() if hasattr(comm, "describe") else {"kind": comm.kind},
            "ranks": comm.size,
            "construction_seconds": build.seconds,
            "load": load,
            "roots": roots,
            "root_seed": root_seed,
            "predecessors": bool(args.predecessors),
            "validated": validate,
            "times": times,
            "nedges": nedges,
            "statistics": statistics,
            "levels_root": roots[0],
            "levels": [asdict(level) for level in profile.levels],
        }
        make_parent_dirs(args.json, comm)
        write_json(args.json, document, comm)
        ctx.note(f"wrote {args.json}")
    return EXIT_OK


def format_level_table(levels: Sequence[LevelStats]) -> str:
    """A text table of per-level counters and per-phase milliseconds (one row per level)."""
    names = [p for p in PHASE_ORDER if any(p in lv.seconds for lv in levels)]
    names += sorted({k for lv in levels for k in lv.seconds} - set(names))
    header = ["level", "dir", "frontier", "edges expanded", "edges inspected", "sent remote"]
    header += ["discovered"]
    header += [f"{name} ms" for name in names]
    rows = [
        [
            str(lv.level) if lv.span == 1 else f"{lv.level}-{lv.level + lv.span - 1}",
            "BU" if lv.direction == "bottom_up" else "TD",
            f"{lv.frontier:,}",
            f"{lv.edges_expanded:,}",
            f"{lv.edges_inspected:,}",
            f"{lv.items_sent_remote:,}",
            f"{lv.discovered:,}",
        ]
        + [f"{lv.seconds.get(name, 0.0) * 1e3:.3f}" for name in names]
        for lv in levels
    ]
    widths = [
        max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)
    ]
    lines = ["  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(lines)


def cmd_generate(ctx: Context) -> int:
    """``generate KIND -o PATH``: a synthetic graph written in the native format."""
    args = ctx.args
    params = _generator_params(args, args.kind, None)
    with ctx.timed() as build:
        graph = _generate(ctx, args.kind, params)
    with ctx.timed() as save:
        graph.save(args.output)
    ctx.say(f"generated {args.kind}: {_describe(graph)} in {build.seconds:.3f} s")
    ctx.say(f"wrote {args.output} in {save.seconds:.3f} s")
    return EXIT_OK


def cmd_convert(ctx: Context) -> int:
    """``convert IN OUT``: any supported format to the native format."""
    args = ctx.args
    graph = _load(ctx, args.input)
    with ctx.timed() as save:
        graph.save(args.output)
    ctx.say(f"converted {args.input}: {_describe(graph)}")
    ctx.say(f"wrote {args.output} in {save.seconds:.3f} s")
    return EXIT_OK


def _in_degrees(graph: Graph) -> np.ndarray:
    """In-degree of every owned vertex (local order): column ids travel to their owners."""
    dist, comm = graph.dist, graph.comm
    columns = np.asarray(graph.backend.to_host(dist.column_indices), dtype=np.int64)
    offsets, columns, _ = bin_by_owner(np, columns, comm.size)
    _, (received,) = comm.alltoallv(offsets, columns)
    return np.bincount(local_id(received, comm.size), minlength=dist.nlocal)


def cmd_info(ctx: Context) -> int:
    """``info GRAPH``: sizes, degree statistics, isolated vertices, balance over ranks."""
    args, comm = ctx.args, ctx.comm
    graph = _load(ctx, args.graph)
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
    ctx.say(f"vertices: {n:,}")
    ctx.say(f"stored edges: {graph.num_edges:,}")
    ctx.say(f"undirected edges: {graph.num_undirected_edges:,}")
    ctx.say(f"directed: {'yes' if graph.directed else 'no'}")
    if n:
        ctx.say(f"{degree}: min {low:,}, mean {graph.num_edges / n:.3f}, max {high:,}")
    ctx.say(f"isolated vertices: {isolated:,}")
    total_bytes = sum(b for _, _, b in per_rank)
    ctx.say(f"bytes (CSR, all ranks): {total_bytes:,}")
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


# --------------------------------------------------------------------------------------------
# Entry point and error policy


def _error_line(message: object) -> str:
    text = " ".join(str(message).split("\n")).strip()
    return f"{PROG}: error: {text}"


def _print_err(line: str) -> None:
    sys.stdout.flush()
    print(line, file=sys.stderr, flush=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with ``argv`` (default ``sys.argv[1:]``); returns the exit status.

    Every rank of an MPI job calls it with the same arguments.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    comm: Communicator | None = None

    def rank() -> int:
        return comm.rank if comm is not None else launcher_rank()

    def several() -> bool:
        return comm is not None and comm.size > 1

    try:
        try:
            args = parse_args(argv)
        except _ParserExit as done:
            return done.status
        backend = resolve_backend(args.backend)
        comm = resolve_comm(args.comm, backend)
        return int(args.handler(Context(args, comm, backend)))
    except InputError as exc:
        if exc.all_ranks:
            if rank() == 0:
                _print_err(_error_line(exc))
            return EXIT_INPUT_ERROR
        _print_err(_error_line(exc))
        if several():
            comm.abort(EXIT_INPUT_ERROR)
        return EXIT_INPUT_ERROR
    except ValidationError as exc:
        if rank() == 0:
            _print_err(_error_line(exc))
        return EXIT_FAILURE
    except DeviceError as exc:  # may be one rank's device only
        _print_err(_error_line(exc))
        if several():
            comm.abort(EXIT_FAILURE)
        return EXIT_FAILURE
    except BrokenPipeError:  # stdout closed early (a pager, `| head`): not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        if several():
            comm.abort(EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except Exception:
        sys.stdout.flush()
        prefix = f"[rank {rank()}] " if several() else ""
        print(f"{prefix}{PROG}: internal error (a bug), traceback follows:", file=sys.stderr)
        traceback.print_exc()
        sys.stderr.flush()
        if several():
            comm.abort(EXIT_FAILURE)
        return EXIT_FAILURE


__all__ = [
    "DEFAULT_ROOTS",
    "DEFAULT_SCALE_CPU",
    "DEFAULT_SCALE_GPU",
    "BFSResult",
    "build_parser",
    "format_level_table",
    "main",
    "parse_args",
]
