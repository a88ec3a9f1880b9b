"""Small graphs on several GPUs against one GPU, search by search in one job.

Every rank of a job holds a small graph whole and searches it whole (``SearchPlan.whole``); a
search's time is the slower rank's. On a road network what several GPUs add over one is then
tens of microseconds in a 1.6-1.9 ms search, less than separately launched processes of one
machine differ (benchmarks/RESULTS.md, "road network, 2 GPUs"). So this benchmark measures both in
one job at the same moments: every rank also holds the graph as a one-GPU graph of its own
(``SingleRankCommunicator``), and the searches alternate root by root, a one-GPU search (on each
rank's GPU in turn, the others waiting) and the search of all ranks, in turn first. Each timed
search comes right after an untimed one of the same side and root: a search that follows
another graph's on the same GPU pays for the switch, kron27 DO on two GPUs about 5%
(benchmarks/RESULTS.md, "paired searches"). The untimed search may not absorb all of it:
kron28 connected components on four GPUs took 4.10-4.60 ms a run alternating with one-GPU runs
and 3.77-4.21 ms after other four-GPU runs (in rotation or in blocks), one GPU 9.96-10.39 ms,
with processes on one machine as far apart as the orders (history 2026-11-28-held-hub-row).
The first round's searches (``--validate-roots K``: those of the first K roots) are validated
(Graph500 rules, BFS trees), outside the timing.
``--algorithm sssp`` pairs shortest-path searches the same way (with the tree, on the graphs
weighted as ``bench_sssp.py`` weighs them: 1..255, Graph500's SSSP rules), ``--algorithm cc``
connected-components runs (validated by ``distbfs.validate.validate_components``; a run has no
root, the roots only count the runs).

Graphs too large for a replica are striped over the ranks as usual and paired the same way,
as long as one GPU holds them whole (kron27 on H200s): separately launched one-GPU processes
of one machine spread by up to a fifth there (benchmarks/RESULTS.md, "kron27, 2 GPUs, DO").

    mpirun -n 2 python benchmarks/bench_replica.py --graphs luxembourg grid2d --json out.json
    mpirun -n 2 python benchmarks/bench_replica.py --algorithm sssp --graphs luxembourg
    mpirun -n 4 python benchmarks/bench_replica.py --algorithm cc --graphs kron28 --roots 16
    mpirun -n 2 python benchmarks/bench_replica.py --graphs kron27 --roots 64 --rounds 2

Per graph and strategy: the mean and median search of each side, the ratio of the means (one GPU
/ P GPUs: above 1, P GPUs are faster), its spread over the rounds, the ratio of the medians,
the share of the pairs in which P GPUs took longer, and the one-GPU mean of each GPU.
``--backend numpy --shrink K`` is a dry run on CPU ranks."""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

import numpy as np
from bench_multi_gpu import DATA, GRAPHS, GRIDS, graph_params, make_communicator
from bench_sssp import WEIGHTS, with_generated_weights

SSSP = "sssp"
"""The strategy column of shortest-path searches (``--algorithm sssp``)."""
CC = "cc"
"""The strategy column of connected-components runs (``--algorithm cc``)."""


def build(name: str, comm: Any, backend: str, shrink: int, weighted: bool) -> Any:
    """Graph ``name`` over ``comm`` (a file from ``DATA``, else generated), with
    ``bench_sssp.py``'s weights where ``weighted``."""
    import distbfs

    kind, params = graph_params(name, comm.size, shrink)
    if kind == "file":
        path = Path(params["path"])
        graph = distbfs.Graph.from_file(
            path if path.exists() else DATA / path, backend=backend, comm=comm
        )
        return with_generated_weights(graph) if weighted else graph
    if weighted:
        params["weights"] = WEIGHTS
    return distbfs.Graph.generate(kind, backend=backend, comm=comm, **params)


def search(graph: Any, root: int, strategy: str, validate: bool) -> float:
    """Seconds of one search from ``root``: a BFS of ``strategy``, or shortest paths
    (``SSSP``), with its tree; or of one connected-components run (``CC``, no root)."""
    import distbfs

    if strategy == CC:
        return distbfs.connected_components(graph, gather=False, validate=validate).seconds
    options = {"predecessors": True, "gather": False, "validate": validate}
    if strategy == SSSP:
        return distbfs.sssp(graph, root, **options).seconds
    return distbfs.bfs(graph, root, strategy=strategy, **options).seconds


def pairs(
    one: Any,
    every: Any,
    roots: list[int],
    strategy: str,
    rounds: int,
    comm: Any,
    validated: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Seconds of the one-GPU searches and of the all-rank searches, a row per round and a
    column per root, the two alternating (in turn first), each right after an untimed search
    of its own side, with the rank that ran each one-GPU search (in turn), on every rank. The
    first round's searches from the first ``validated`` roots are validated."""
    solo = np.zeros((rounds, len(roots)))
    joint = np.zeros((rounds, len(roots)))
    where = np.zeros((rounds, len(roots)), dtype=np.int64)
    for r in range(rounds):
        for i, root in enumerate(roots):
            where[r, i] = (r * len(roots) + i) % comm.size
            validate = r == 0 and i < validated
            for side in (0, 1) if (r + i) % 2 == 0 else (1, 0):
                if side == 0 and where[r, i] == comm.rank:
                    search(one, root, strategy, False)
                    solo[r, i] = search(one, root, strategy, validate)
                elif side == 1:
                    search(every, root, strategy, False)
                    joint[r, i] = search(every, root, strategy, validate)
    return comm.allreduce(solo, op="max"), joint, where


def summary(
    name: str, strategy: str, solo: np.ndarray, joint: np.ndarray, where: np.ndarray
) -> dict[str, Any]:
    """The figures of one graph and strategy."""
    ranks = int(where.max()) + 1
    return {
        "graph": name,
        "strategy": strategy,
        "ranks": ranks,
        "searches": int(joint.size),
        "one_mean_ms": float(solo.mean() * 1e3),
        "one_median_ms": float(np.median(solo) * 1e3),
        "one_mean_ms_by_gpu": [float(solo[where == r].mean() * 1e3) for r in range(ranks)],
        "all_mean_ms": float(joint.mean() * 1e3),
        "all_median_ms": float(np.median(joint) * 1e3),
        "ratio": float(solo.mean() / joint.mean()),
        "ratio_medians": float(np.median(solo) / np.median(joint)),
        "ratio_rounds": [float(x) for x in solo.mean(axis=1) / joint.mean(axis=1)],
        "slower_share": float(np.mean(joint > solo)),
    }


def run(args: argparse.Namespace) -> int:
    comm = make_communicator("auto", "host", args.backend)
    try:
        return run_on(comm, args)
    except Exception:  # one rank's failure must not leave the others waiting in a collective
        traceback.print_exc()
        sys.stderr.flush()
        comm.abort(1)
        raise


def run_on(comm: Any, args: argparse.Namespace) -> int:
    from distbfs.comm.single import SingleRankCommunicator
    from distbfs.roots import choose_roots

    if comm.rank == 0:
        columns = ["graph", "strategy", "ranks", "1 GPU ms", "P GPUs ms", "1 / P", "rounds"]
        columns += ["1 / P of medians", "P slower", "1 GPU ms by GPU"]
        print("| " + " | ".join(columns) + " |")
        print("| --- | --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | --- |", flush=True)
    rows = []
    weighted = args.algorithm == SSSP
    strategies = {SSSP: [SSSP], CC: [CC]}.get(args.algorithm, args.strategies)
    for name in args.graphs:
        every = build(name, comm, args.backend, args.shrink, weighted)
        one = build(name, SingleRankCommunicator(), args.backend, args.shrink, weighted)
        count = args.grid_roots if name in GRIDS else args.roots
        roots = choose_roots(every.dist, comm, count=count)
        for strategy in strategies:
            started = time.perf_counter()
            pairs(one, every, roots[: comm.size], strategy, 1, comm, 0)  # kernels built
            validated = len(roots) if args.validate_roots is None else args.validate_roots
            solo, joint, where = pairs(one, every, roots, strategy, args.rounds, comm, validated)
            if comm.rank == 0:
                row = summary(name, strategy, solo, joint, where)
                row["seconds"] = time.perf_counter() - started
                rows.append(row)
                print(
                    f"| {name} | {strategy} | {comm.size} | {row['one_mean_ms']:.3f} | "
                    f"{row['all_mean_ms']:.3f} | **{row['ratio']:.3f}** | "
                    f"{min(row['ratio_rounds']):.3f}-{max(row['ratio_rounds']):.3f} | "
                    f"{row['ratio_medians']:.3f} | {row['slower_share']:.0%} | "
                    + " / ".join(f"{ms:.3f}" for ms in row["one_mean_ms_by_gpu"])
                    + " |",
                    flush=True,
                )
        del every, one
    if comm.rank == 0 and args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--graphs", nargs="+", default=["luxembourg", "grid2d"], choices=list(GRAPHS)
    )
    parser.add_argument("--algorithm", default="bfs", choices=("bfs", SSSP, CC))
    parser.add_argument(
        "--strategies",
        nargs="+",
        default=["hybrid", "direction_optimizing"],
        help="BFS strategies (--algorithm bfs)",
    )
    parser.add_argument("--roots", type=int, default=16, help="Graph500 roots of Kronecker graphs")
    parser.add_argument(
        "--grid-roots", type=int, default=16, help="roots of grids and road networks"
    )
    parser.add_argument("--rounds", type=int, default=4, help="passes over the roots")
    parser.add_argument(
        "--validate-roots", type=int, default=None, help="validate the first K roots' searches"
    )
    parser.add_argument("--backend", default="cuda", choices=("cuda", "numpy"))
    parser.add_argument("--shrink", type=int, default=0, help="graphs 2**K times smaller")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
