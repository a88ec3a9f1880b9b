"""``reorder IN OUT --order {degree,rcm,bfs}``: the graph relabeled by a vertex order
(``distbfs.reorder``) and written in the native format with the original id of every vertex,
so that every command run on it takes and reports the original ids
(``distbfs.cli.original_ids``).

The order is computed on every rank from the whole edge list (all-gathered: a preprocessing
step for graphs whose edges fit one host); each rank then relabels its own edges and the
relabeled graph is built striped as any other. Printed: the mean bits of the gaps between
consecutive neighbours before and after (what a delta-coded CSR would spend per edge).
"""

from __future__ import annotations

import numpy as np

from ..arrays import as_host
from ..graph import DistGraph, build_graph
from ..io import Relabeling, write_native
from ..io.native import check_target
from ..reorder import order_vertices
from .commands import EXIT_OK, Context, describe, load_graph


def cmd_reorder(ctx: Context) -> int:
    """``reorder IN OUT --order ORDER``."""
    args, comm = ctx.args, ctx.comm
    check_target(args.output, comm, "OUT")
    graph = load_graph(ctx, args.input)
    dist, backend = graph.dist, graph.backend
    src, dst, weights = dist.stored_edges(backend.xp, with_weights=True)
    src, dst = np.asarray(as_host(src)), np.asarray(as_host(dst))
    with ctx.timed() as ordering:
        order = order_vertices(
            args.order, comm.allgather_array(src), comm.allgather_array(dst), dist.n
        )
        new = np.empty_like(order)
        new[order] = np.arange(dist.n)
        relabeled = build_graph(
            comm,
            new[src],
            new[dst],
            dist.n,
            directed=dist.directed,
            xp=backend.xp,
            weights=weights,
        )
    before = graph.relabeling
    original = order if before is None else before.original_ids[order]
    write_native(relabeled, args.output, comm, Relabeling(args.order, original))
    gaps = f"{gap_bits(dist, comm):.2f} -> {gap_bits(relabeled, comm):.2f}"
    ctx.say(f"reordered {args.input}: {describe(graph)}")
    ctx.say(f"order: {args.order} in {ordering.seconds:.3f} s; bits per neighbour gap {gaps}")
    ctx.say(f"wrote {args.output} (original ids kept)")
    return EXIT_OK


def gap_bits(dist: DistGraph, comm: object) -> float:
    """Mean over stored edges of log2(1 + |gap|), the gap of a neighbour from the one before it
    in its row (the first from the row's own id): the bits a delta code stores per edge, roughly
    (collective)."""
    offsets = np.asarray(as_host(dist.row_offsets))
    columns = np.asarray(as_host(dist.column_indices), dtype=np.int64)
    degrees = np.diff(offsets)
    rows = np.repeat(np.arange(dist.rank, dist.n, dist.size)[: dist.nlocal], degrees)
    previous = np.empty_like(columns)
    previous[1:] = columns[:-1]
    starts = offsets[:-1][degrees > 0]
    previous[starts] = rows[starts]
    bits = float(np.log2(1 + np.abs(columns - previous)).sum())
    total = comm.allreduce(np.array([bits, float(columns.shape[0])]))
    return float(total[0] / total[1]) if total[1] else 0.0
