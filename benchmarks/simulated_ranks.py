"""Stage times of several ranks' top-down levels simulated on ONE GPU: a Kronecker graph striped
into P ranks in one process, each level's stages run rank after rank (the bins exchanged by
concatenation; each rank's own bin contracted first by ``contract_local``, and large new
frontiers shared, as the level loop does), every stage timed with CUDA events. It measures
what the multi-rank path costs per stage when no machine with several GPUs is at hand; it says
nothing of transfers or of ranks waiting for each other.

    python benchmarks/simulated_ranks.py --scale 25 --ranks 2 --roots 4

``--ranks 1`` times the one-GPU search's top-down levels the same way (no fused levels here),
the baseline that two ranks' summed stage times compare with.

Prints the ms per search of each stage by level, summed over the ranks, averaged over the roots
after a warm-up root; and a checksum of the first root's distances (equal between two versions
of the code run on the same arguments: an A/B with ``PYTHONPATH`` pointing at either).
"""

from __future__ import annotations

import argparse
from collections import defaultdict

import cupy
import numpy as np

import distbfs
from distbfs.backends.cuda.backend import CudaBackend
from distbfs.backends.cuda.buffers import CudaGraphResources
from distbfs.comm.base import Bins
from distbfs.engine import SHARE_FRONTIER
from distbfs.graph import DistGraph

STAGES = ("expand", "filter_partition", "contract", "share")


def striped(graph: DistGraph, size: int) -> list[DistGraph]:
    """The ``size`` ranks' graphs of a one-rank device graph (rank r: rows r, r + size, ...)."""
    degrees = graph.row_offsets[1:] - graph.row_offsets[:-1]
    first = cupy.zeros(graph.column_indices.shape[0], dtype=cupy.int32)
    starts = graph.row_offsets[1:-1]
    cupy.add.at(first, starts[starts < first.shape[0]], 1)
    row_of_edge = cupy.cumsum(first)
    parts = []
    for rank in range(size):
        offsets = cupy.zeros(-(-(graph.n - rank) // size) + 1, dtype=cupy.int64)
        cupy.cumsum(degrees[rank::size], out=offsets[1:])
        columns = graph.column_indices[(row_of_edge % size) == rank]
        parts.append(
            DistGraph(graph.n, graph.num_edges, graph.directed, rank, size, offsets, columns)
        )
    return parts


def search(
    parts: list[DistGraph],
    resources: list[CudaGraphResources],
    backend: CudaBackend,
    source: int,
    times: dict,
) -> np.ndarray:
    """One search from ``source`` (``resources``: each part's ``backend.prepare``, kept from
    one search to the next), the stages' ms added to ``times[(stage, level)]``; returns the
    distances by global id."""
    size = len(parts)
    states = [
        backend.start(part, source, True, prepared)
        for part, prepared in zip(parts, resources, strict=True)
    ]
    pairs = list(zip(parts, states, strict=True))

    def timed(stage: str, level: int, call, *args):
        begin, end = cupy.cuda.Event(), cupy.cuda.Event()
        begin.record()
        result = call(*args)
        end.record()
        end.synchronize()
        times[(stage, level)] += cupy.cuda.get_elapsed_time(begin, end)
        return result

    level, total = 0, 1
    while total > 0:
        frontier, sent = total, []
        for part, state in pairs:
            for strip in range(backend.expansion_strips(part, state)):
                edges = timed("expand", level, backend.expand, part, state, strip)
                filtered = backend.filter_partition
                bins = timed("filter_partition", level, filtered, state, edges, size)
            timed("contract", level, backend.contract_local, part, state, bins, level + 1)
            if size > 1 and hasattr(bins, "resolve"):  # lengths on the device: as the exchange
                bins = timed("filter_partition", level, bins.resolve)
            sent.append(bins)
        for rank, (part, state) in enumerate(pairs):
            if size == 1:  # the one-rank exchange leaves the single bin where it is
                timed("contract", level, backend.contract, part, state, sent[0], level + 1)
                continue
            pieces = [(b.offsets[rank], b.offsets[rank + 1], b) for b in sent]
            vertices = cupy.concatenate([b.vertices[lo:hi] for lo, hi, b in pieces])
            parents = cupy.concatenate([b.payloads[0][lo:hi] for lo, hi, b in pieces])
            offsets = np.zeros(size + 1, dtype=np.int64)
            np.cumsum([hi - lo for lo, hi, _ in pieces], out=offsets[1:])
            received = Bins(offsets, vertices, (parents,))
            timed("contract", level, backend.contract, part, state, received, level + 1)
        total = sum(state.frontier_size for state in states)
        if size > 1 and frontier < total and total * SHARE_FRONTIER >= parts[0].n:
            # the level loop's shared frontier: every rank's bitmap into every visited mask
            bitmaps = [timed("share", level, backend.frontier_bitmap, *ps) for ps in pairs]
            shared = cupy.stack(bitmaps)
            for part, state in pairs:
                timed("share", level, backend.mark_visited, part, state, shared)
        level += 1
    distances = np.empty(parts[0].n, dtype=np.int64)
    for rank, state in enumerate(states):
        distances[rank::size] = cupy.asnumpy(state.labels)
    return distances


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=25)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--roots", type=int, default=4)
    args = parser.parse_args()
    graph = distbfs.Graph.generate("kronecker", scale=args.scale, backend="cuda").dist
    degrees = cupy.asnumpy(graph.row_offsets[1:] - graph.row_offsets[:-1])
    # the same roots whatever the rank count: vertices with edges, drawn with a fixed seed
    roots = np.random.default_rng(3).choice(np.flatnonzero(degrees > 0), args.roots + 1, False)
    parts = striped(graph, args.ranks)
    del graph
    backend = CudaBackend()
    resources = [backend.prepare(part) for part in parts]
    warmup: dict = defaultdict(float)
    distances = search(parts, resources, backend, int(roots[0]), warmup)
    checksum = int((distances * np.arange(distances.shape[0]) % 1_000_003).sum())
    print(
        f"kron{args.scale}, {args.ranks} simulated ranks, {args.roots} roots; first search "
        f"reached {int((distances >= 0).sum())} vertices, checksum {checksum}"
    )
    times: dict = defaultdict(float)
    for root in roots[1:]:
        search(parts, resources, backend, int(root), times)
    levels = sorted({level for _, level in times})
    print("ms per search  " + " ".join(f"{'L' + str(level):>7}" for level in levels) + "    sum")
    for stage in STAGES:
        row = [times[(stage, level)] / args.roots for level in levels]
        print(f"{stage:<16}" + " ".join(f"{t:7.3f}" for t in row) + f" {sum(row):7.3f}")


if __name__ == "__main__":
    main()
