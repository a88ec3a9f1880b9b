"""The command line's arguments: one parser with the subcommands ``bench``, ``bfs``,
``generate``, ``convert`` and ``info``, whose errors are ``InputError``s (one line, exit status
2 on every rank) and whose help prints on launcher rank 0 only."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from .. import __version__
from ..api import FORMATS
from ..api.placement import PLACEMENTS
from ..engine.strategy import DEFAULT_ALPHA, DEFAULT_BETA, STRATEGIES
from ..errors import InputError
from ..launcher import launcher_rank
from ..reorder import ORDERS
from ..runtime import BACKEND_CHOICES, COMM_CHOICES

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

ALGORITHMS = ("bfs", "sssp", "cc")
"""What ``bench`` measures: BFS (Graph500 kernel 2), shortest paths (kernel 3) or connected
components (Afforest: ``--roots`` runs of the whole graph)."""
DEFAULT_SSSP_WEIGHTS = "uniform:1:255"
"""Weights of a generated graph for ``bench --algorithm sssp`` when none are given (GAP's)."""

LEVEL_TABLES = ("summary", "all")
"""``--levels``: the per-level table bounded (runs of small levels merged) or every level,
fused ones included."""


class ParserExit(Exception):
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
        raise ParserExit(status)

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


def _float_above(minimum: float, *, inclusive: bool, finite: bool, wording: str) -> Any:
    """An argparse type: a float above ``minimum`` (or equal, ``inclusive``), finite if
    ``finite``, refused as "expected <wording>"."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {wording}, got {text!r}") from None
        low = value >= minimum if inclusive else value > minimum
        if not low or (finite and value == float("inf")):
            raise argparse.ArgumentTypeError(f"expected {wording}, got {text!r}")
        return value

    return parse


_positive_float = _float_above(0.0, inclusive=False, finite=True, wording="a positive number")


def _vertex(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a vertex id (an integer), got {text!r}"
        ) from None


def _vertices(text: str) -> list[int]:
    """``--source``: a vertex id, or several separated by commas (duplicates are one)."""
    try:
        return [int(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a vertex id (an integer) or several separated by commas, got {text!r}"
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
    parser.add_argument(
        "--weights",
        default=None,
        metavar="uniform:LO:HI",
        help="edge weights: integers uniform in [LO, HI] (0 <= LO <= HI), the same for both "
        "directions of an edge and at any rank count (default: unweighted)",
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
        type=_float_above(0.0, inclusive=True, finite=False, wording="a number >= 0"),
        default=None,
        help="direction_optimizing: go bottom-up when the frontier's edges exceed the "
        f"unexplored edges / ALPHA (default {DEFAULT_ALPHA:g})",
    )
    parser.add_argument(
        "--beta",
        type=_float_above(0.0, inclusive=False, finite=False, wording="a number > 0"),
        default=None,
        help="direction_optimizing: back to top-down when the frontier holds fewer than "
        f"n / BETA vertices (default {DEFAULT_BETA:g})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the command line (subcommands bench, bfs, generate, convert, info);
    each subcommand's namespace names its handler in ``command``."""
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
    for add in (
        _add_bench,
        _add_bfs,
        _add_sssp,
        _add_apsp,
        _add_cc,
        _add_generate,
        _add_convert,
        _add_reorder,
        _add_info,
        _add_warmup,
    ):
        add(sub, common)
    return parser


def _add_plot(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--plot",
        metavar="FILE.png",
        default=None,
        help=f"draw {what}: per level the vertex frontier and the edges read, log scale, "
        "bottom-up levels shaded (needs matplotlib: pip install 'distbfs[plot]')",
    )


def _add_placement(parser: argparse.ArgumentParser, *, stored: bool = False) -> None:
    """``--compress`` (``stored``: of the file written), and where a search's graph lives."""
    parser.add_argument(
        "--compress",
        action="store_true",
        help="write every row's neighbours as varint-coded gaps (native version 3: about half "
        "the bytes on Kronecker graphs)"
        if stored
        else "hold every row's neighbours as varint-coded gaps, decoded as the search reads "
        "them (less memory, same results; numpy and cuda backends)",
    )
    if not stored:
        parser.add_argument(
            "--graph-memory",
            choices=PLACEMENTS,
            default="device",
            help="cuda backend: where the graph's columns and weights live: device, host "
            "(pinned memory read over the link), or auto = the device while a search fits beside "
            "the graph there, else compressed there if it fits, else host (default: %(default)s)",
        )


def _add_levels(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--levels",
        choices=LEVEL_TABLES,
        default="summary",
        help="the per-level table: summary = at most about 40 rows (runs of small levels "
        "merged), all = every level (default: %(default)s; -q prints none)",
    )


def _add_bench(sub: Any, common: argparse.ArgumentParser) -> None:
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
    _add_levels(bench)
    _add_placement(bench)
    bench.add_argument(
        "--algorithm",
        choices=ALGORITHMS,
        default="bfs",
        help="bfs (Graph500 kernel 2) or sssp (kernel 3: delta-stepping; generated graphs get "
        f"weights {DEFAULT_SSSP_WEIGHTS} unless --weights says otherwise) (default: %(default)s)",
    )
    bench.add_argument(
        "--batched",
        action="store_true",
        help="bfs: search the roots 64 at a time as the bit lanes of one traversal "
        "(distbfs.bfs_many); report searches per second and the aggregate TEPS of "
        "4 runs over all the roots",
    )
    bench.add_argument(
        "--delta",
        type=_positive_float,
        default=None,
        help="sssp: bucket width (default: the mean weight over the mean degree, at least the "
        "smallest positive weight; 16 times wider on several GPUs)",
    )
    bench.add_argument(
        "--json",
        metavar="FILE",
        default=None,
        help="write statistics, per-root times and per-level counts as JSON",
    )
    _add_plot(bench, "the profiled search's levels (BFS)")


def _add_bfs(sub: Any, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser(
        "bfs",
        parents=[common],
        help="one BFS from a source vertex (or several)",
        description="Load a graph and search it from one source, or from several at once (every "
        "vertex gets its distance to the nearest); print a summary and optionally write the "
        "distances (and predecessors) as .npy files in global vertex order.",
    )
    run.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(run)
    run.add_argument(
        "--source",
        type=_vertices,
        required=True,
        metavar="S[,S...]",
        help="source vertex id (0-based), or several separated by commas: one search from all "
        "of them (each at level 0, its own predecessor)",
    )
    run.add_argument(
        "--depth-limit",
        type=_nonnegative_int,
        default=None,
        metavar="D",
        help="stop once level D is labeled: farther vertices stay unreached (default: no limit)",
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
    _add_plot(run, "the search's levels")
    _add_levels(run)
    _add_placement(run)


def _add_sssp(sub: Any, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser(
        "sssp",
        parents=[common],
        help="shortest paths from a source vertex (delta-stepping)",
        description="Load a graph and compute the shortest distances from one source (weight 1 "
        "on every edge of an unweighted graph); print a summary and optionally write the "
        "distances (float64, inf where unreached) and predecessors as .npy files.",
    )
    run.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(run)
    run.add_argument(
        "--source", type=_vertex, required=True, metavar="S", help="source vertex id (0-based)"
    )
    run.add_argument("--predecessors", action="store_true", help="compute a shortest-path tree")
    run.add_argument(
        "--output",
        metavar="PREFIX",
        default=None,
        help="write PREFIX.distances.npy (and PREFIX.predecessors.npy); missing directories "
        "are created",
    )
    run.add_argument(
        "--delta",
        type=_positive_float,
        default=None,
        help="bucket width (default: the mean weight over the mean degree, at least the "
        "smallest positive weight; 16 times wider on several GPUs)",
    )
    run.add_argument(
        "--max-distance",
        type=_float_above(0.0, inclusive=True, finite=False, wording="a number >= 0"),
        default=None,
        metavar="X",
        help="stop past distance X: farther vertices stay unreached (default: no limit)",
    )
    run.add_argument(
        "--validate", action="store_true", help="validate the result (Graph500 SSSP rules)"
    )
    _add_placement(run)


def _add_apsp(sub: Any, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser(
        "apsp",
        parents=[common],
        help="every pair's shortest distance (small graphs)",
        description="Load a graph and compute the shortest distance between every pair of "
        "vertices (shortest paths from every source on a weighted graph, BFS on an unweighted "
        "one; sources spread over the ranks); write the n x n matrix (float64, inf where "
        "unreached) as PREFIX.distances.npy.",
    )
    run.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(run)
    run.add_argument("--output", metavar="PREFIX", required=True, help="write PREFIX.distances.npy")
    run.add_argument(
        "--delta", type=_positive_float, default=None, help="bucket width (weighted graphs)"
    )


def _add_generate(sub: Any, common: argparse.ArgumentParser) -> None:
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
    _add_placement(gen, stored=True)


def _add_convert(sub: Any, common: argparse.ArgumentParser) -> None:
    conv = sub.add_parser(
        "convert",
        parents=[common],
        help="convert a graph file to the native format",
        description="Read a graph in any supported format and write it in the native format.",
    )
    _add_in_out(conv)
    _add_placement(conv, stored=True)


def _add_in_out(parser: argparse.ArgumentParser) -> None:
    """IN (any graph file, its --format) and OUT (a native directory)."""
    parser.add_argument("input", metavar="IN", help="graph file")
    parser.add_argument("output", metavar="OUT", help="target (native format directory)")
    _add_format(parser)


def _add_reorder(sub: Any, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser(
        "reorder",
        parents=[common],
        help="relabel a graph's vertices (degree, RCM or BFS order)",
        description="Relabel the vertices of a graph so that neighbours get nearby ids and write "
        "it in the native format with every vertex's original id: every command run on the "
        "result takes and reports the original ids. Prints the bits per neighbour gap before "
        "and after (what a delta-coded CSR would store per edge).",
    )
    _add_in_out(run)
    run.add_argument("--order", choices=ORDERS, required=True, help="the vertex order")


def _add_cc(sub: Any, common: argparse.ArgumentParser) -> None:
    run = sub.add_parser(
        "cc",
        parents=[common],
        help="connected components (Afforest)",
        description="Load a graph and label every vertex with the smallest vertex id of its "
        "connected component (weakly connected on a directed graph; Afforest, Sutton et al. "
        "2018); print the number of components and the largest, and optionally write the labels "
        "(int64) as a .npy file in global vertex order.",
    )
    run.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(run)
    run.add_argument(
        "--output",
        metavar="PREFIX",
        default=None,
        help="write PREFIX.components.npy; missing directories are created",
    )
    run.add_argument(
        "--validate",
        action="store_true",
        help="validate the labels (every edge joins equal labels, every label is the smallest "
        "vertex carrying it)",
    )
    _add_placement(run)


def _add_info(sub: Any, common: argparse.ArgumentParser) -> None:
    info = sub.add_parser(
        "info",
        parents=[common],
        help="sizes, degrees and per-rank balance of a graph",
        description="Print vertex and edge counts, degree statistics, isolated vertices and how "
        "vertices, edges and bytes are spread over the ranks.",
    )
    info.add_argument("graph", metavar="GRAPH", help="graph file")
    _add_format(info)


def _add_warmup(sub: Any, common: argparse.ArgumentParser) -> None:
    warmup = sub.add_parser(
        "warmup",
        parents=[common],
        help="compile the CUDA kernels ahead, into CuPy's cache",
        description="Compile every CUDA kernel stage (both vertex widths) on this rank's GPU into "
        "CuPy's on-disk kernel cache (CUPY_CACHE_DIR), so that later runs and batch jobs sharing "
        "the cache load the kernels instead of compiling them on first use.",
    )
    warmup.add_argument(
        "--threads", type=int, default=4, help="modules compiled at once (default: %(default)s)"
    )


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; without a subcommand (or with only options) the command is ``bench``."""
    argv = list(argv)
    if not argv or (argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version")):
        argv.insert(0, "bench")
    return build_parser().parse_args(argv)
