"""Inbound levels against bin levels against one GPU, in one job (benchmarks/RESULTS.md,
"inbound levels").

Every rank of the job holds Kronecker graph SCALE striped and also whole as a one-GPU graph of
its own. Per root, in turn first: a one-GPU search (each rank's GPU in turn, the others
waiting), the all-rank search with bin levels only (``GATHER_DEGREE`` inf) and with inbound
levels at each degree of DEGREES; each timed search right after an untimed one of its own side
and root; with predecessors. The first root's search is validated (Graph500 rules) at the first
degree. Prints the means, the ratios and the medians, then for the first root the levels that
ran in two phases (sent and remote items) and their phase times (CUDA events, slowest rank).

    mpirun -n 2 python3 benchmarks/ab_inbound.py 27 16 hybrid 256,64
    mpirun -n 4 python3 benchmarks/ab_inbound.py 28 12 hybrid 256,64,32
"""

import math
import statistics
import sys
import time

import cupy

import distbfs
import distbfs.engine.plan as pm
import distbfs.traversals.bfs as tb
from distbfs.comm.single import SingleRankCommunicator
from distbfs.roots import choose_roots


def main() -> None:
    """Run the comparison (arguments: SCALE ROOTS STRATEGIES [DEGREES])."""
    scale, nroots, strategies = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].split(",")
    gathers = (
        [float(x) for x in sys.argv[4].split(",")] if len(sys.argv) > 4 else [pm.GATHER_DEGREE]
    )
    t0 = time.perf_counter()
    g = distbfs.Graph.generate("kronecker", scale=scale, backend="cuda")
    comm = g.comm
    one = distbfs.Graph.generate(
        "kronecker", scale=scale, backend="cuda", comm=SingleRankCommunicator()
    )
    roots = [int(r) for r in choose_roots(g.dist, comm, nroots)]
    built = time.perf_counter() - t0

    def timed(plan, root, c):
        c.barrier()
        t = time.perf_counter()
        run = tb.run_levels(plan, [root], predecessors=True)
        cupy.cuda.Device().synchronize()
        secs = c.allreduce(time.perf_counter() - t, op="max")
        table = tb.level_table(run, plan.backend.make_timer(False))
        return secs, table

    def phases(plan, root):
        timer = plan.backend.make_timer(True)
        comm.barrier()
        run = tb.run_levels(plan, [root], predecessors=True, timer=timer)
        table = tb.level_table(run, timer)
        rows = []
        for lv in table.levels:
            if not lv.fused and lv.seconds:
                rows.append(
                    (lv.level, {k: round(v * 1e3, 3) for k, v in lv.seconds.items() if v > 2e-5})
                )
        return rows

    for strategy in strategies:
        t1 = time.perf_counter()
        plans = {}
        for gather in [math.inf, *gathers]:
            pm.GATHER_DEGREE = gather
            plans["binned" if gather == math.inf else f"d{gather:g}"] = pm.SearchPlan(
                g.resources, strategy
            )
        solo = pm.SearchPlan(one.resources, strategy)
        pm.GATHER_DEGREE = gathers[0]
        planned = time.perf_counter() - t1
        check = distbfs.bfs(
            g, roots[0], strategy=strategy, predecessors=True, validate=True, gather=False
        )
        valid = check.validated
        sides = ["one", *plans]
        times = {k: [] for k in sides}
        tables = {}
        for i, root in enumerate(roots):
            order = sides if i % 2 == 0 else sides[::-1]
            for side in order:
                if side == "one":
                    secs = 0.0
                    for r in range(comm.size):
                        comm.barrier()
                        if r == (i % comm.size) and r == comm.rank:
                            timed(solo, root, SingleRankCommunicator())
                            secs = timed(solo, root, SingleRankCommunicator())[0]
                    secs = comm.allreduce(secs, op="max")
                else:
                    timed(plans[side], root, comm)
                    secs, table = timed(plans[side], root, comm)
                    if i == 0:
                        tables[side] = table
                times[side].append(secs * 1e3)
        timings = {side: phases(plans[side], roots[0]) for side in plans}
        if comm.rank == 0:
            mean = {k: statistics.mean(v) for k, v in times.items()}
            med = {k: statistics.median(v) for k, v in times.items()}
            print(
                f"INBOUND kron{scale} {strategy} ranks {comm.size} roots {len(roots)} "
                f"(built {built:.1f} s, plans {planned:.1f} s, validated root {roots[0]} "
                f"with gather {gathers[0]}: {valid}): means "
                + ", ".join(f"{k} {v:.3f}" for k, v in mean.items())
                + " ms; one/side "
                + ", ".join(f"{k} {mean['one'] / v:.3f}" for k, v in mean.items())
                + "; binned/side "
                + ", ".join(f"{k} {mean['binned'] / v:.3f}" for k, v in mean.items())
                + "; medians "
                + ", ".join(f"{k} {v:.3f}" for k, v in med.items()),
                flush=True,
            )
            for side, table in tables.items():
                rows = [
                    (
                        lv.level,
                        lv.frontier,
                        str(lv.direction)[:2],
                        int(lv.fused),
                        lv.edges_expanded,
                        lv.items_sent,
                        lv.items_sent_remote,
                    )
                    for lv in table.levels
                    if not lv.fused
                ]
                columns = "level, frontier, dir, fused, expanded, sent, remote"
                print(f"  levels {side} ({columns}): {rows}", flush=True)
                print(f"  phases {side} (ms, rank max): {timings[side]}", flush=True)


if __name__ == "__main__":
    main()
