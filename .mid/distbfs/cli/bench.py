"""``bench`` (also what runs without a subcommand: the embedded Graph500-style job): build or
load a graph, choose the roots, run and validate one search per root through the benchmark
harness (``distbfs.benchmark``), print Graph500 statistics and the per-level table of one
search, optionally as JSON."""

from __future__ import annotations

from typing import Any

from .. import roots as roots_mod
from .. import stats as stats_mod
from ..benchmark import (
    DEFAULT_BATCHED_RUNS,
    BatchedSeries,
    PathSeries,
    SearchSeries,
    run_batched,
    run_cc_runs,
    run_path_searches,
    run_searches,
)
from ..errors import InputError
from ..output import make_parent_dirs, prepare_output, write_json
from .commands import (
    EXIT_OK,
    Context,
    generate_graph,
    generator_params,
    graph_name,
    load_graph,
    say_bench_header,
)
from .components import print_cc_report
from .parser import DEFAULT_SCALE_CPU, DEFAULT_SCALE_GPU, DEFAULT_SSSP_WEIGHTS
from .plot import check_plot, plot_levels
from .tables import format_level_table


def cmd_bench(ctx: Context) -> int:
    """``bench``: Graph500-style benchmark on a file or a generated graph."""
    args, comm = ctx.args, ctx.comm
    if args.batched and args.algorithm != "bfs":
        raise InputError(f"--batched: batches BFS only, not --algorithm {args.algorithm}")
    if args.batched and args.predecessors:
        raise InputError("--batched: batched searches keep distances only, not --predecessors")
    if args.plot and args.algorithm != "bfs":
        raise InputError(f"--plot: draws BFS levels, not --algorithm {args.algorithm}")
    check_plot(args.plot, comm)
    if args.json:
        prepare_output(args.json, comm, "--json")
    with ctx.timed() as build:
        graph, graph_info = _bench_graph(ctx)
    root_seed = roots_mod.DEFAULT_ROOT_SEED if args.root_seed is None else args.root_seed
    roots = roots_mod.choose_roots(graph.dist, comm, count=args.roots, seed=root_seed)
    if not roots:
        raise InputError(
            f"{args.graph or 'generated graph'}: no vertex has an edge, nothing to search"
        )
    series = _run_series(ctx, graph, roots)
    if isinstance(series, BatchedSeries):
        _print_batched_report(ctx, graph, graph_info, series, build.seconds)
    elif args.algorithm == "cc":
        print_cc_report(ctx, graph, graph_info, series, build.seconds)
    else:
        _print_report(ctx, graph, graph_info, series, build.seconds)
    if args.plot:
        profile = series.profile
        levels = profile.batches[0] if args.batched else profile.levels
        what = "64 sources a batch" if args.batched else f"root {series.roots[0]}"
        title = f"{graph_name(graph_info, args.graph)}, {args.strategy or 'BFS'}, {what}"
        plot_levels(args.plot, levels, title, comm)
        ctx.note(f"wrote {args.plot}")
    if args.json:
        document = {
            "graph": graph_info,
            "backend": ctx.backend.name,
            "comm": comm.kind,
            "comm_detail": comm.describe() if hasattr(comm, "describe") else {"kind": comm.kind},
            "ranks": comm.size,
            "construction_seconds": build.seconds,
            "load": _load_document(graph),
            "root_seed": root_seed,
            "predecessors": bool(args.predecessors or args.algorithm == "sssp"),
            **series.document(),
            "validated": not args.no_validate,
        }
        make_parent_dirs(args.json, comm)
        write_json(args.json, document, comm)
        ctx.note(f"wrote {args.json}")
    return EXIT_OK


def _run_series(ctx: Context, graph: Any, roots: list[int]) -> Any:
    """The benchmark's timed work, with a progress bar: one search per root (one run of the
    whole graph per root for cc), or, ``--batched``, runs of all the roots 64 at a time."""
    args = ctx.args
    validate = not args.no_validate
    if args.batched:
        with ctx.bar("BFS batched", total=DEFAULT_BATCHED_RUNS, unit="run") as bar:
            return run_batched(graph, roots, validate=validate, after_each=lambda _: bar.update())
    with ctx.bar(args.algorithm.upper(), total=len(roots), unit="search") as bar:
        if args.algorithm == "cc":  # --roots runs of the whole graph
            return run_cc_runs(
                graph, args.roots, validate=validate, after_each=lambda _: bar.update()
            )
        if args.algorithm == "sssp":
            return run_path_searches(
                graph,
                roots,
                delta=args.delta,
                predecessors=True,
                validate=validate,
                after_each=lambda _: bar.update(),
            )
        return run_searches(
            graph,
            roots,
            predecessors=args.predecessors,
            validate=validate,
            strategy=args.strategy,
            alpha=args.alpha,
            beta=args.beta,
            after_each=lambda _: bar.update(),
        )


def _bench_graph(ctx: Context) -> tuple[Any, dict[str, Any]]:
    """The graph to benchmark (the file, or the generator's graph) and what describes it."""
    args = ctx.args
    given = {"--generator": args.generator, "--scale": args.scale, "--shape": args.shape}
    given["--seed"] = args.seed
    gen_flags = [flag for flag, value in given.items() if value is not None]
    info: dict[str, Any] = {}
    if args.graph is not None:
        if gen_flags:
            raise InputError(
                f"{gen_flags[0]}: not used with a graph file ({args.graph}); "
                "give either GRAPH or generator options"
            )
        graph = load_graph(ctx, args.graph, search=True)
        info["file"] = args.graph
    else:
        kind = args.generator or "kronecker"
        default = DEFAULT_SCALE_GPU if ctx.backend.name == "cuda" else DEFAULT_SCALE_CPU
        params = generator_params(args, kind, default)
        if args.algorithm == "sssp" and "weights" not in params:
            params["weights"] = DEFAULT_SSSP_WEIGHTS  # GAP's delta-stepping benchmark's
        graph = generate_graph(ctx, kind, params, search=True)
        info.update(generator=kind, **params)
    info.update(
        num_vertices=graph.num_vertices,
        num_edges=graph.num_edges,
        num_undirected_edges=graph.num_undirected_edges,
        directed=graph.directed,
        compressed=graph.compressed,
    )
    return graph, info


def _print_report(
    ctx: Context,
    graph: Any,
    info: dict[str, Any],
    series: SearchSeries | PathSeries,
    build_seconds: float,
) -> None:
    """Graph500's report lines, then the per-level table of the profiled search."""
    paths = isinstance(series, PathSeries)
    if paths:
        algorithm = f"sssp (delta-stepping, delta {series.delta:.6g})"
    else:
        algorithm = f"bfs, strategy: {series.strategy}"
    count = f"{'NSSSP' if paths else 'NBFS'}: {len(series.roots)}"
    say_bench_header(ctx, graph, info, algorithm, count, build_seconds)
    passed = f"passed ({series.validated} searches)" if series.validated else "skipped"
    ctx.say(f"validation: {passed}")
    ctx.say(stats_mod.format_statistics(series.statistics))
    if ctx.quiet:
        return
    ctx.say()
    if isinstance(series, PathSeries):
        _print_buckets(ctx, series)
        return
    ctx.say(
        f"per-level summary of the search from root {series.roots[0]} "
        f"({series.profile.seconds * 1e3:.3f} ms with phase timers):"
    )
    ctx.say(format_level_table(series.profile.levels, every_level=ctx.args.levels == "all"))


def _print_batched_report(
    ctx: Context, graph: Any, info: dict[str, Any], series: BatchedSeries, build_seconds: float
) -> None:
    """``bench --batched``: the Graph500-style lines over the runs (each run all the roots;
    TEPS aggregate), searches per second, then the level table of the profiled run's first
    batch (frontier and discovered count (vertex, source) pairs)."""
    roots = len(series.roots)
    algorithm = f"bfs, batched: {roots} sources, up to 64 per traversal"
    count = f"NRUNS: {len(series.times)} (each {roots} searches)"
    say_bench_header(ctx, graph, info, algorithm, count, build_seconds)
    passed = f"passed ({series.validated} searches)" if series.validated else "skipped"
    ctx.say(f"validation: {passed}")
    ctx.say(stats_mod.format_statistics(series.statistics))
    ctx.say(f"searches_per_second:            {series.searches_per_second:.12g}")
    if ctx.quiet:
        return
    ctx.say()
    profile = series.profile
    ctx.say(
        f"per-level summary of the first batch of the run with phase timers "
        f"({profile.seconds * 1e3:.3f} ms in all; frontier = (vertex, source) pairs):"
    )
    ctx.say(format_level_table(profile.batches[0], every_level=ctx.args.levels == "all"))


def _print_buckets(ctx: Context, series: PathSeries) -> None:
    """Delta-stepping's work: buckets, light phases and relaxations per search, and the
    profiled search's time by phase."""
    profile = series.profile
    phases: dict[str, float] = {}
    for bucket in profile.buckets:
        for phase, seconds in bucket.seconds.items():
            phases[phase] = phases.get(phase, 0.0) + seconds
    steps = sum(bucket.phases for bucket in profile.buckets)
    ctx.say(
        f"delta {series.delta:.6g}; per search: {sum(series.buckets) / len(series.buckets):,.1f} "
        f"buckets, {sum(series.relaxations) / len(series.relaxations):,.0f} relaxations"
    )
    if profile.rows is not None:
        ctx.say(f"rows read: {profile.rows}")
    ctx.say(
        f"search from root {series.roots[0]} with phase timers: {profile.seconds * 1e3:.3f} ms, "
        f"{len(profile.buckets):,} buckets, {steps:,} light phases; ms by phase: "
        + ", ".join(f"{name} {seconds * 1e3:.3f}" for name, seconds in sorted(phases.items()))
    )


def _load_document(graph: Any) -> dict[str, Any] | None:
    """The file load's figures for the JSON document (None for a generated graph)."""
    if graph.load_info is None:
        return None
    info = graph.load_info
    return {
        "format": info.format,
        "bytes": int(info.bytes),
        "seconds": float(info.seconds),
        "mb_per_s": float(info.mb_per_s),
    }
