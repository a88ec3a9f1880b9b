"""A search from a hub on several ranks, its row broadcast at level 0 or not, in one job.

On several ranks a search from a vertex of more than ``broadcast_row_edges`` out-edges starts
with that row on every rank (``distbfs.traversals.bfs.broadcast_level``). This benchmark runs
connected components (whose giant component is a BFS from the hub) and a direction-optimizing
BFS from the hub, with the plans' broadcast rows as built ("on") and emptied ("off": the
owner expands, filters and sends the row), in alternating rounds of one job, so both sides
meet the same machine state. One run of each side is validated (components and the BFS tree),
outside the timing, and one BFS from the hub of each side is timed by phase (its first two
levels printed). On one rank both sides are the same code: the one-GPU figure.

    mpirun -n 2 python benchmarks/bench_hub_row.py --scale 27
    python benchmarks/bench_hub_row.py --scale 27          (one GPU)
    mpiexec -n 2 python benchmarks/bench_hub_row.py --backend numpy --scale 12 --limit 100

Rank 0 prints the median, mean and least milliseconds of each side. ``--limit`` sets the
backend's ``broadcast_row_edges`` (a dry run on small graphs). ``--one-gpu``: every rank also
holds the graph whole as a one-rank graph of its own, and each round also runs connected
components on it, on every rank's GPU in turn (the others waiting): the one-GPU side of the
ratio, measured in the same job as the ranks' (separately launched processes of one machine
differ by up to a tenth)."""

from __future__ import annotations

import argparse
import statistics
from typing import Any

import distbfs
from distbfs.comm.single import SingleRankCommunicator
from distbfs.engine.components import highest_degree_vertex

DO = "direction_optimizing"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=27, help="Kronecker scale")
    parser.add_argument("--backend", default="cuda")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds")
    parser.add_argument("--runs", type=int, default=6, help="runs of each side a round")
    parser.add_argument("--limit", type=int, default=None, help="broadcast_row_edges")
    parser.add_argument("--one-gpu", action="store_true", help="the one-GPU side too")
    args = parser.parse_args(argv)
    graph = distbfs.Graph.generate("kronecker", scale=args.scale, backend=args.backend)
    if args.limit is not None:
        graph.backend.broadcast_row_edges = args.limit
    comm = graph.comm
    hub = highest_degree_vertex(graph.dist, comm)
    plans = list({id(p): p for p in (graph.plan(), graph.plan(DO))}.values())
    built = [getattr(p, "broadcast_rows", {}) for p in plans]

    def side(on: bool) -> None:
        for plan, rows in zip(plans, built, strict=True):
            plan.broadcast_rows = rows if on else {}

    def components() -> float:
        return distbfs.connected_components(graph, gather=False).seconds * 1e3

    def search() -> float:
        return distbfs.bfs(graph, hub, gather=False, strategy=DO).seconds * 1e3

    sides = {"cc": components, "bfs": search}
    if args.one_gpu:
        one = distbfs.Graph.generate(
            "kronecker", scale=args.scale, backend=args.backend, comm=SingleRankCommunicator()
        )

        def in_turn() -> float:  # every rank's GPU in turn, the others waiting
            mine = 0.0
            for rank in range(comm.size):
                comm.barrier()
                if rank == comm.rank:
                    mine = distbfs.connected_components(one, gather=False).seconds * 1e3
            return sum(comm.allgather_object(mine)) / comm.size

        sides["cc one GPU"] = in_turn
    for _ in range(3):  # warm-up: kernels, queues
        for run in sides.values():
            run()
    if comm.rank == 0:
        print(f"{comm.size} ranks, kron{args.scale}, hub {hub}, broadcast rows {built[0]}")
    for on in (True, False):
        side(on)
        distbfs.connected_components(graph, gather=False, validate=True)
        distbfs.bfs(graph, hub, gather=False, strategy=DO, predecessors=True, validate=True)
        timed = distbfs.bfs(graph, hub, gather=False, strategy=DO, timing=True)
        if comm.rank == 0:
            for level in timed.levels[:2]:
                phases = {k: round(v * 1e3, 3) for k, v in level.seconds.items() if v > 1e-5}
                print(f"  {'on' if on else 'off'} L{level.level} {level.direction}: {phases} ms")
    times: dict[tuple[bool, str], list[float]] = {}
    for index in range(args.rounds):
        for on in (True, False) if index % 2 == 0 else (False, True):
            side(on)
            for what, run in sides.items():
                for _ in range(args.runs):
                    comm.barrier()
                    times.setdefault((on, what), []).append(run())
    if comm.rank == 0:
        report(comm, args.scale, times)
    return 0


def report(comm: Any, scale: int, times: dict[tuple[bool, str], list[float]]) -> None:
    for (on, what), ms in sorted(times.items(), key=lambda item: (item[0][1], not item[0][0])):
        print(
            f"{comm.size} ranks kron{scale} {what:>10} broadcast {'on ' if on else 'off'}: median "
            f"{statistics.median(ms):.3f} mean {statistics.mean(ms):.3f} least {min(ms):.3f} ms"
        )


if __name__ == "__main__":
    raise SystemExit(main())
