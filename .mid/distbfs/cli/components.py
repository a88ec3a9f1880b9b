"""The subcommand ``cc``: the connected components of a graph file (Afforest, Sutton et al.
2018; ``distbfs.connected_components``): the number of components, the largest one's size and
label, the run's time and rounds, and with ``--output PREFIX`` the labels (int64, the smallest
vertex id of each vertex's component) as ``PREFIX.components.npy`` in global vertex order,
written atomically without gathering them on one rank. Every rank takes part; rank 0 prints.
``print_cc_report``: the report of ``bench --algorithm cc``."""

from __future__ import annotations

from typing import Any

from .. import stats
from ..api import connected_components
from ..output import prepare_output
from .commands import EXIT_OK, Context, describe, load_graph, say_bench_header
from .original_ids import original_label, write_per_vertex


def cmd_cc(ctx: Context) -> int:
    """``cc GRAPH``: connected components, a summary, optional .npy output."""
    args, comm = ctx.args, ctx.comm
    if args.output:
        prepare_output(args.output, comm)
    graph = load_graph(ctx, args.graph, search=True)
    result = connected_components(graph, gather=False, validate=args.validate)
    kind = "weakly connected components" if graph.directed else "connected components"
    label, size = result.largest
    label = original_label(graph, result.local_labels, label) if result.count else label
    ctx.say(f"graph: {args.graph}: {describe(graph)}")
    ctx.say(f"components: {result.count:,} {kind}")
    if result.count:
        share = size / graph.num_vertices
        ctx.say(f"largest component: {size:,} vertices ({share:.1%}), label {label}")
    ctx.say(
        f"time: {result.seconds:.6f} s, {len(result.rounds):,} rounds, "
        f"{result.edges:,} edges, {result.teps:.4g} TEPS"
    )
    if args.validate:
        ctx.say("validation: passed")
    if args.output:
        path = f"{args.output}.components.npy"
        write_per_vertex(graph, path, result.local_labels, "labels")
        ctx.say(f"wrote {path}")
    if not ctx.quiet:
        ctx.say(format_rounds(result.rounds))
    return EXIT_OK


def format_rounds(rounds: list) -> str:
    """One line per phase of the run: its rounds, links compared, crossing links, roots hooked,
    pointer jumps and labels asked of other ranks."""
    phases: dict[str, list[int]] = {}
    for row in rounds:
        totals = phases.setdefault(row.phase, [0] * 6)
        values = (1, row.links, row.crossing, row.hooked, row.jumps, row.label_requests)
        for i, value in enumerate(values):
            totals[i] += value
    header = ("phase", "rounds", "links", "crossing", "hooked", "jumps", "asked")
    table = [header] + [(phase, *(f"{v:,}" for v in t)) for phase, t in phases.items()]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["rounds by phase:"]
    for row in table:
        lines.append("  ".join(cell.rjust(width) for cell, width in zip(row, widths, strict=True)))
    return "\n".join(lines)


def print_cc_report(
    ctx: Context, graph: Any, info: dict[str, Any], series: Any, build_seconds: float
) -> None:
    """The report of ``bench --algorithm cc`` (``distbfs.benchmark.ComponentSeries``): the
    Graph500-style lines, then the rounds of the profiled run by phase and its time by phase."""
    say_bench_header(ctx, graph, info, "cc (Afforest)", f"NCC: {series.runs}", build_seconds)
    label, size = series.largest
    ctx.say(f"components: {series.count:,}; largest: {size:,} vertices, label {label}")
    passed = f"passed ({series.validated} runs)" if series.validated else "skipped"
    ctx.say(f"validation: {passed}")
    ctx.say(stats.format_statistics(series.statistics))
    if ctx.quiet:
        return
    profile = series.profile
    phases: dict[str, float] = {}
    for row in profile.rounds:
        for phase, seconds in row.seconds.items():
            phases[phase] = phases.get(phase, 0.0) + seconds
    ctx.say()
    ctx.say(
        f"run with phase timers: {profile.seconds * 1e3:.3f} ms, {len(profile.rounds):,} "
        "rounds; ms by phase: "
        + ", ".join(f"{name} {seconds * 1e3:.3f}" for name, seconds in sorted(phases.items()))
    )
    ctx.say(format_rounds(profile.rounds))
