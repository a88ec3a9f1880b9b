"""A/B of two versions of distbfs in one call: the same graphs, roots and strategies searched by
each version in turn, alternating their order every round, so drifts of the machine (clocks,
other tenants) fall on both alike.

Each run is a fresh process importing distbfs from that version's folder (``PYTHONPATH``), so
the versions never share a module; it builds the graphs on the GPU, runs one untimed warm-up
search per strategy (kernel compilation, queue growth), then times the searches through the
public API that every version has (``distbfs.Graph``, ``distbfs.bfs``, ``distbfs.roots``,
``distbfs.stats``). ``--ranks 2`` runs each version under ``mpirun`` with two ranks sharing GPU 0
(each told, as under ``srun --gpus-per-task``, that the GPU is its own; MPI moves the bins).

Usage:
  python benchmarks/ab_versions.py --before OLD_CHECKOUT --after . \\
      [--graphs kron26 grid2d luxembourg] [--strategies hybrid direction_optimizing] \\
      [--rounds 2] [--roots 32] [--ranks 1] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("DISTBFS_DATA", REPO.parent / "shared" / "data"))
GRAPHS = {
    "kron20": ("kronecker", {"scale": 20}),
    "kron24": ("kronecker", {"scale": 24}),
    "kron26": ("kronecker", {"scale": 26}),
    "grid2d": ("grid2d", {"shape": (4096, 4096)}),
    "luxembourg": ("file", {"path": "luxembourg_osm.mtx.gz"}),
}
SINGLE_SOURCE = {"grid2d", "luxembourg"}  # searched from vertex 0, repeated


def worker(args: argparse.Namespace) -> None:
    """One version's searches; prints one JSON object (rank 0)."""
    import distbfs
    from distbfs.roots import choose_roots
    from distbfs.stats import graph500_statistics

    comm = "mpi" if args.ranks > 1 else "auto"
    rows = []
    for name in args.graphs:
        kind, params = GRAPHS[name]
        if kind == "file":
            path = DATA / params["path"]
            graph = distbfs.Graph.from_file(path, backend=args.backend, comm=comm)
        else:
            graph = distbfs.Graph.generate(kind, backend=args.backend, comm=comm, **params)
        if name in SINGLE_SOURCE:
            roots = [0] * args.repeat
        else:
            roots = choose_roots(graph.dist, graph.comm, args.roots)
        for strategy in args.strategies:
            distbfs.bfs(graph, roots[0], gather=False, strategy=strategy)  # warm-up
            getattr(graph.resources, "load_kernels", lambda: None)()  # every stage, if lazy
            times, edges = [], []
            for root in roots:  # each result goes before the next search (no pool growth)
                result = distbfs.bfs(graph, root, gather=False, strategy=strategy)
                times.append(result.seconds)
                edges.append(result.edges_traversed)
                del result
            stats = graph500_statistics(times, edges)
            profile = distbfs.bfs(graph, roots[0], gather=False, strategy=strategy, timing=True)
            phases: dict[str, float] = {}
            for level in profile.levels:
                for phase, seconds in level.seconds.items():
                    phases[phase] = phases.get(phase, 0.0) + 1e3 * seconds
            rows.append(
                {
                    "graph": name,
                    "strategy": strategy,
                    "mean_ms": 1e3 * sum(times) / len(times),
                    "hmean_gteps": stats["harmonic_mean_TEPS"] / 1e9,
                    "profile_ms": 1e3 * profile.seconds,
                    "phases_ms": phases,
                }
            )
        del graph
    if int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0"))) == 0:
        print("AB-RESULT " + json.dumps(rows), flush=True)


def run_version(folder: Path, args: argparse.Namespace) -> list[dict]:
    """One run of the version in ``folder`` (a fresh process, or ranks under mpirun)."""
    env = dict(os.environ, PYTHONPATH=str(folder.resolve()), PYTHONUNBUFFERED="1")
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", *worker_args(args)]
    if args.ranks > 1:
        mpirun = shutil.which("mpirun") or "mpirun"
        shared = ["-x", "SLURM_GPUS_PER_TASK=1", "-x", "CUDA_VISIBLE_DEVICES=0", "-x", "PYTHONPATH"]
        root = ["--allow-run-as-root"] if os.geteuid() == 0 else []
        command = [mpirun, *root, "--bind-to", "none", "-n", str(args.ranks), *shared, *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout)
    for line in done.stdout.splitlines():
        if line.startswith("AB-RESULT "):
            return json.loads(line[len("AB-RESULT ") :])
    raise RuntimeError(f"{folder}: no result (exit {done.returncode})\n{done.stderr[-3000:]}")


def worker_args(args: argparse.Namespace) -> list[str]:
    return [
        "--graphs",
        *args.graphs,
        "--strategies",
        *args.strategies,
        "--roots",
        str(args.roots),
        "--repeat",
        str(args.repeat),
        "--ranks",
        str(args.ranks),
        "--backend",
        args.backend,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="folder of the baseline version")
    parser.add_argument("--after", type=Path, help="folder of the version under test")
    parser.add_argument("--graphs", nargs="+", default=["kron26", "grid2d", "luxembourg"])
    parser.add_argument("--strategies", nargs="+", default=["hybrid", "direction_optimizing"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--roots", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5, help="searches of single-source graphs")
    parser.add_argument("--ranks", type=int, default=1)
    parser.add_argument("--backend", default="cuda", help="cuda (numpy: a dry run on CPUs)")
    parser.add_argument("--timeout", type=int, default=400, help="seconds a run may take")
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    versions = {"before": args.before, "after": args.after}
    runs: dict[str, list[list[dict]]] = {"before": [], "after": []}
    print(f"A/B {time.strftime('%Y-%m-%d')}: {' '.join(sys.argv)}", flush=True)
    for r in range(args.rounds):
        order = ("before", "after") if r % 2 == 0 else ("after", "before")
        for name in order:
            runs[name].append(run_version(versions[name], args))
            print(f"round {r}: {name} done", flush=True)
    print("| graph | strategy | before ms (rounds) | after ms (rounds) | after / before |")
    print("| --- | --- | --- | --- | ---: |")
    table = []
    for i, row in enumerate(runs["after"][0]):
        before = [run[i]["mean_ms"] for run in runs["before"]]
        after = [run[i]["mean_ms"] for run in runs["after"]]
        ratio = (sum(after) / len(after)) / (sum(before) / len(before))
        table.append({**row, "before_ms": before, "after_ms": after, "ratio": ratio})
        table[-1]["phases_ms_before"] = runs["before"][-1][i]["phases_ms"]
        cells = [" / ".join(f"{t:.3f}" for t in ts) for ts in (before, after)]
        print(f"| {row['graph']} | {row['strategy']} | {cells[0]} | {cells[1]} | {ratio:.3f} |")
    print("phases of one profiled search (ms, phase timers on), last round:")
    for i, row in enumerate(runs["after"][0]):
        for name in ("before", "after"):
            phases = runs[name][-1][i]["phases_ms"]
            cells = ", ".join(f"{k} {v:.3f}" for k, v in sorted(phases.items()))
            print(f"  {row['graph']} {row['strategy']} {name}: {cells}")
    if args.json:
        args.json.write_text(json.dumps({"argv": sys.argv, "rows": table}, indent=1))


if __name__ == "__main__":
    main()
