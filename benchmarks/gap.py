"""GAP (the GAP Benchmark Suite, github.com/sbeamer/gapbs) on distbfs's graphs: a converter from
distbfs's native directory to GAP's serialized graph (``.sg`` / ``.wsg``), and a runner of GAP's
kernels (``sssp``, ``cc``, ``bfs``, ...) that returns the per-trial seconds GAP prints. With it a
benchmark runs GAP on the identical graph, and the identical weights, in the same call as distbfs.

GAP's serialized graph, as ``src/writer.h`` writes it and ``src/reader.h`` reads it (GAP compiled
as shipped: ``NodeID = SGID = int32_t``, ``SGOffset = int64_t``, ``WeightT = int32_t``), all
little-endian, packed, no padding::

    bool    directed            1 byte (0 or 1)
    int64   num_edges           stored (directed) edges: an undirected edge counts twice
    int64   num_nodes
    int64   offsets[num_nodes + 1]          out-CSR row offsets
    dest    neighbours[num_edges]           .sg: int32 v; .wsg: NodeWeight {int32 v; int32 w}
    -- directed graphs only: the inverse (in-neighbour) CSR, which GAP's builders read --
    int64   in_offsets[num_nodes + 1]
    dest    in_neighbours[num_edges]        .wsg: {int32 u; int32 w} of each edge u -> v

GAP picks the reader by the file's suffix: ``.wsg`` is weighted (``sssp`` needs it), ``.sg`` is
not (``bfs``, ``cc``, ``pr``, ``tc`` need it; GAP refuses the other one). An undirected graph's
``num_edges`` over 2 is the edge count GAP prints ("Graph has N nodes and M undirected edges").
GAP's distances are int32 too (unreached: INT32_MAX / 2), so weights must be integers whose path
sums stay below 2^30; distbfs's generated weights 1..255 do.

Conversion streams: the native arrays are memory-mapped and copied a chunk of edges at a time,
so peak memory is a few chunks (``CHUNK_EDGES``), whatever the graph's size; a directed graph's
inverse CSR is a counting sort (in-degrees counted a chunk at a time, then every chunk's edges
scattered into a memory map of the output, stably, so each in-row lists its sources in order).
The file is written beside its target and renamed into place: never a partial ``.sg``.

Usage::

    python benchmarks/gap.py convert NATIVE_DIR OUT.wsg      # or OUT.sg (drops any weights)
    python benchmarks/gap.py run sssp OUT.wsg --source 0 --delta 2 --trials 4 --threads 16 \
        --gap-dir .gapbs [--verify]
    python benchmarks/gap.py run cc OUT.sg --trials 8 --threads 16
    python benchmarks/gap.py run bfs OUT.sg --source 5 --trials 8

Preparing GAP's source (not committed; the device scripts carry it as ``.gapbs``)::

    rm -rf .gapbs && mkdir .gapbs && git --git-dir=/work/.mirror/sbeamer+gapbs/repo archive HEAD \
        | tar -x -C .gapbs && git --git-dir=/work/.mirror/sbeamer+gapbs/repo rev-parse HEAD \
        > .gapbs/COMMIT
    make -C .gapbs -j16 sssp cc bfs converter
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HEADER_FORMAT = np.dtype([("directed", "u1"), ("num_edges", "<i8"), ("num_nodes", "<i8")])
"""GAP's 17-byte header (bool, int64, int64, packed)."""
OFFSET_DTYPE = np.dtype("<i8")
NODE_DTYPE = np.dtype("<i4")
WEIGHTED_DTYPE = np.dtype([("v", "<i4"), ("w", "<i4")])
"""``NodeWeight<int32_t, int32_t>``: the vertex, then the weight, 8 bytes."""
MAX_NODE = 2**31 - 1
MAX_WEIGHT = 2**31 - 1
CHUNK_EDGES = 1 << 23
"""Edges per conversion step: its temporaries take a few hundred MB at most."""
SUFFIXES = (".sg", ".wsg")
KERNELS = ("bfs", "sssp", "cc", "cc_sv", "pr", "pr_spmv", "bc", "tc")
"""GAP's kernels; ``sssp`` takes ``.wsg``, the others ``.sg``."""


class GapError(RuntimeError):
    """GAP failed (its output attached to the message), or a graph cannot be written for it."""


# -- conversion ---------------------------------------------------------------------------------


def _native(native_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and memory-mapped arrays of a distbfs native directory (no MPI)."""
    root = Path(native_dir)
    try:
        header = json.loads((root / "header.json").read_text())
    except (OSError, ValueError) as exc:
        raise GapError(f"{root}: not a distbfs native graph directory ({exc})") from None
    if not isinstance(header, dict) or header.get("format") != "distbfs-csr":
        raise GapError(f"{root}/header.json: not a distbfs-csr header")
    names = {"offsets": "row_offsets.npy", "columns": "column_indices.npy"}
    if header.get("weight_dtype") is not None:
        names["weights"] = "weights.npy"
    try:
        arrays = {key: np.load(root / name, mmap_mode="r") for key, name in names.items()}
    except (OSError, ValueError) as exc:
        raise GapError(f"{root}: cannot read the graph's arrays ({exc})") from None
    n, m = int(header["n"]), int(header["num_edges"])
    if arrays["offsets"].shape != (n + 1,) or any(
        a.shape != (m,) for k, a in arrays.items() if k != "offsets"
    ):
        raise GapError(f"{root}: array shapes do not match the header (n={n}, num_edges={m})")
    if m and int(arrays["offsets"][n]) != m:
        raise GapError(f"{root}/row_offsets.npy: last offset is not num_edges={m}")
    return header, arrays


def _gap_weights(weights: np.ndarray, where: str) -> np.ndarray:
    """``weights`` (one chunk) as GAP's int32, refusing what int32 cannot hold exactly."""
    if weights.size == 0:
        return weights.astype(np.int32)
    whole = np.floor(weights) == weights
    if not whole.all():
        bad = weights[~whole][0]
        raise GapError(
            f"{where}: GAP's weights are int32, but the graph has a non-integer weight "
            f"({bad!r}); give the graph integer weights (e.g. generate --weights uniform:1:255)"
        )
    if weights.min() < 0 or weights.max() > MAX_WEIGHT:
        raise GapError(
            f"{where}: GAP's weights are int32, weights range {weights.min()!r}..{weights.max()!r}"
        )
    return weights.astype(np.int32)


def _row_ids(offsets: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The source row of every edge ``lo .. hi - 1`` of the CSR ``offsets``."""
    first = int(np.searchsorted(offsets, lo, side="right")) - 1
    last = int(np.searchsorted(offsets, hi, side="left"))
    bounds = np.clip(np.asarray(offsets[first : last + 1], dtype=np.int64), lo, hi)
    return np.repeat(np.arange(first, last, dtype=np.int64), np.diff(bounds))


def _records(ids: np.ndarray, weights: np.ndarray | None) -> np.ndarray:
    """GAP's neighbour records: int32 ids, or ``NodeWeight`` pairs when ``weights`` is given."""
    if weights is None:
        return ids.astype(NODE_DTYPE)
    out = np.empty(ids.shape[0], dtype=WEIGHTED_DTYPE)
    out["v"], out["w"] = ids, weights
    return out


def _chunks(m: int, chunk: int) -> range:
    return range(0, m, max(1, chunk))


def write_gap_graph(
    native_dir: str | os.PathLike[str],
    out_path: str | os.PathLike[str],
    *,
    chunk_edges: int = CHUNK_EDGES,
) -> dict[str, Any]:
    """Write the distbfs native graph ``native_dir`` as GAP's serialized graph ``out_path``.

    Parameters
    ----------
    native_dir : path
        A distbfs native directory (``Graph.save`` / ``distbfs generate -o`` / ``convert``).
    out_path : path
        Ends in ``.wsg`` (weighted: the graph must have integer weights in ``0 .. 2^31 - 1``)
        or ``.sg`` (unweighted: a weighted graph's weights are left out, for GAP's ``bfs`` and
        ``cc``). Replaced atomically.
    chunk_edges : int
        Edges per streaming step.

    Returns
    -------
    dict
        ``num_nodes``, ``num_edges`` (stored, directed), ``directed``, ``weighted``, ``bytes``.

    Raises
    ------
    GapError
        A bad suffix, a graph GAP cannot hold (over 2^31 - 1 vertices, non-integer or too large
        weights, ``.wsg`` of an unweighted graph), or an unreadable native directory.
    """
    out = Path(out_path)
    if out.suffix not in SUFFIXES:
        raise GapError(f"{out}: GAP reads serialized graphs by suffix: name it .sg or .wsg")
    header, arrays = _native(native_dir)
    weighted = out.suffix == ".wsg"
    if weighted and "weights" not in arrays:
        raise GapError(f"{native_dir}: the graph has no weights; write a .sg for it")
    n, m, directed = int(header["n"]), int(header["num_edges"]), bool(header["directed"])
    if n > MAX_NODE:
        raise GapError(f"{native_dir}: {n} vertices; GAP's vertex ids are int32")
    record = WEIGHTED_DTYPE if weighted else NODE_DTYPE
    half = HEADER_FORMAT.itemsize + (n + 1) * OFFSET_DTYPE.itemsize + m * record.itemsize
    tmp = out.with_name(f".{out.name}.tmp-{uuid.uuid4().hex[:8]}")
    try:
        with open(tmp, "wb") as f:
            head = np.zeros(1, dtype=HEADER_FORMAT)
            head["directed"], head["num_edges"], head["num_nodes"] = directed, m, n
            head.tofile(f)
            _write_forward(f, arrays, weighted, n, m, chunk_edges, str(native_dir))
            if directed:
                f.truncate(2 * half - HEADER_FORMAT.itemsize)
        if directed:
            _write_inverse(tmp, half, arrays, weighted, n, m, chunk_edges, str(native_dir))
        os.replace(tmp, out)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    size = out.stat().st_size
    return {
        "num_nodes": n,
        "num_edges": m,
        "directed": directed,
        "weighted": weighted,
        "bytes": size,
    }


def _write_forward(
    f: Any, arrays: dict[str, np.ndarray], weighted: bool, n: int, m: int, chunk: int, where: str
) -> None:
    """Append the out-CSR (offsets, then neighbour records) to the open file ``f``."""
    offsets = arrays["offsets"]
    for lo in _chunks(n + 1, chunk):
        np.asarray(offsets[lo : lo + chunk], dtype=OFFSET_DTYPE).tofile(f)
    for lo in _chunks(m, chunk):
        hi = min(m, lo + chunk)
        ids = np.asarray(arrays["columns"][lo:hi])
        weights = _gap_weights(np.asarray(arrays["weights"][lo:hi]), where) if weighted else None
        _records(ids, weights).tofile(f)


def _write_inverse(
    path: Path,
    start: int,
    arrays: dict[str, np.ndarray],
    weighted: bool,
    n: int,
    m: int,
    chunk: int,
    where: str,
) -> None:
    """Fill the inverse CSR of a directed graph at byte ``start`` of ``path`` (counting sort)."""
    columns, offsets = arrays["columns"], arrays["offsets"]
    in_offsets = np.zeros(n + 1, dtype=np.int64)
    for lo in _chunks(m, chunk):
        in_offsets[1:] += np.bincount(np.asarray(columns[lo : lo + chunk]), minlength=n)
    np.cumsum(in_offsets, out=in_offsets)
    head = np.memmap(path, dtype=OFFSET_DTYPE, mode="r+", offset=start, shape=(n + 1,))
    head[:] = in_offsets
    head.flush()
    del head
    if m == 0:
        return
    record = WEIGHTED_DTYPE if weighted else NODE_DTYPE
    body_start = start + (n + 1) * OFFSET_DTYPE.itemsize
    body = np.memmap(path, dtype=record, mode="r+", offset=body_start, shape=(m,))
    cursor = in_offsets[:-1].copy()  # next free slot of every in-row
    for lo in _chunks(m, chunk):
        hi = min(m, lo + chunk)
        dst = np.asarray(columns[lo:hi]).astype(np.int64)
        order = np.argsort(dst, kind="stable")  # edges come in source order: rows stay sorted
        dst = dst[order]
        new = np.flatnonzero(np.r_[True, dst[1:] != dst[:-1]])
        counts = np.diff(np.r_[new, dst.size])
        rank = np.arange(dst.size) - np.repeat(new, counts)
        slots = cursor[dst] + rank
        cursor[dst[new]] += counts
        src = _row_ids(offsets, lo, hi)[order]
        weights = None
        if weighted:
            weights = _gap_weights(np.asarray(arrays["weights"][lo:hi])[order], where)
        body[slots] = _records(src, weights)
    body.flush()
    del body


def read_gap_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The header of a GAP serialized graph: ``directed``, ``num_edges``, ``num_nodes``."""
    head = np.fromfile(path, dtype=HEADER_FORMAT, count=1)
    if head.size != 1:
        raise GapError(f"{path}: shorter than GAP's header")
    return {
        "directed": bool(head["directed"][0]),
        "num_edges": int(head["num_edges"][0]),
        "num_nodes": int(head["num_nodes"][0]),
    }


# -- running GAP --------------------------------------------------------------------------------


@dataclass
class GapRun:
    """One run of a GAP kernel: its per-trial seconds and what it printed about the graph.

    ``nodes``/``edges``: GAP's "Graph has N nodes and M (un)directed edges" (undirected edges
    counted once); ``verified``: one bool per trial with ``-v`` (empty without); ``reached``:
    GAP's analysis of the last trial (``-a``) where it prints a count (sssp: "SSSP Tree reaches
    N nodes", bfs: "BFS Tree has N nodes"), else None."""

    kernel: str
    command: list[str]
    threads: int
    times: list[float]
    read_seconds: float | None = None
    nodes: int | None = None
    edges: int | None = None
    directed: bool | None = None
    verified: list[bool] = field(default_factory=list)
    reached: int | None = None
    output: str = ""

    @property
    def mean_seconds(self) -> float:
        return sum(self.times) / len(self.times)

    def document(self) -> dict[str, Any]:
        """JSON-ready data (without the raw output)."""
        keys = ("kernel", "command", "threads", "times", "read_seconds", "nodes", "edges")
        data = {k: getattr(self, k) for k in keys}
        data.update(directed=self.directed, verified=self.verified, reached=self.reached)
        return data


NUMBER = r"([-+0-9.eE]+)"
PATTERNS = {
    "trial": re.compile(rf"^Trial Time:\s*{NUMBER}\s*$", re.M),
    "read": re.compile(rf"^Read Time:\s*{NUMBER}\s*$", re.M),
    "graph": re.compile(r"^Graph has (\d+) nodes and (\d+) (un)?directed edges", re.M),
    "verify": re.compile(r"^Verification:\s*(PASS|FAIL)\s*$", re.M),
    "reached": re.compile(r"^(?:SSSP Tree reaches|BFS Tree has) (\d+) nodes", re.M),
}


def gap_binary(gap_dir: str | os.PathLike[str], kernel: str) -> Path:
    """The built binary of ``kernel`` in a GAP source tree (``make -C DIR KERNEL``)."""
    binary = Path(gap_dir) / kernel
    if not (binary.is_file() and os.access(binary, os.X_OK)):
        raise GapError(f"{binary}: GAP's {kernel} is not built (make -C {gap_dir} {kernel})")
    return binary


def gap_command(
    binary: str | os.PathLike[str],
    graph_path: str | os.PathLike[str],
    *,
    source: int | None = None,
    delta: int | None = None,
    trials: int = 1,
    verify: bool = False,
    analysis: bool = False,
) -> list[str]:
    """GAP's command line: ``-f GRAPH -n TRIALS`` [``-r SOURCE``] [``-d DELTA``] [``-v``]
    [``-a``]. Without ``-r`` GAP picks a random source of nonzero degree per trial (its own
    fixed-seed sequence); ``-d`` is sssp's bucket width, an integer (GAP's weights are int32)."""
    if trials < 1:
        raise GapError(f"trials: at least 1, got {trials}")
    command = [str(binary), "-f", str(graph_path), "-n", str(int(trials))]
    if source is not None:
        if int(source) < 0:
            raise GapError(f"source: a vertex id, got {source}")
        command += ["-r", str(int(source))]
    if delta is not None:
        if int(delta) != delta or delta < 1:
            raise GapError(f"delta: GAP's delta is a positive integer, got {delta!r}")
        command += ["-d", str(int(delta))]
    return command + (["-v"] if verify else []) + (["-a"] if analysis else [])


def run_gap_detailed(
    binary: str | os.PathLike[str],
    graph_path: str | os.PathLike[str],
    *,
    source: int | None = None,
    delta: int | None = None,
    trials: int = 1,
    threads: int | None = None,
    verify: bool = False,
    analysis: bool = False,
    timeout: float | None = None,
) -> GapRun:
    """Run GAP's ``binary`` on ``graph_path`` with ``OMP_NUM_THREADS=threads`` and parse its
    output (``GapRun``). Raises ``GapError`` with GAP's output when it exits non-zero, prints no
    trial times, or a verification fails."""
    command = gap_command(
        binary,
        graph_path,
        source=source,
        delta=delta,
        trials=trials,
        verify=verify,
        analysis=analysis,
    )
    env = dict(os.environ)
    threads = int(threads) if threads else os.cpu_count() or 1
    env["OMP_NUM_THREADS"] = str(threads)
    try:
        done = subprocess.run(
            command, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        raise GapError(f"{' '.join(command)}: timed out after {timeout} s") from exc
    output = done.stdout + done.stderr
    run = _parse(output, Path(binary).name, command, threads)
    fail = _failure(done.returncode, run, trials, verify)
    if fail:
        raise GapError(f"{' '.join(command)} (OMP_NUM_THREADS={threads}): {fail}\n{output}")
    return run


def _failure(returncode: int, run: GapRun, trials: int, verify: bool) -> str | None:
    """Why a run failed, or None."""
    if returncode:
        return f"exit status {returncode}"
    if len(run.times) != trials:
        return f"{len(run.times)} trial times for {trials} trials"
    if verify and (len(run.verified) != trials or not all(run.verified)):
        passed = sum(run.verified)
        return f"verification failed ({passed} of {trials} trials passed)"
    return None


def _parse(output: str, kernel: str, command: list[str], threads: int) -> GapRun:
    run = GapRun(kernel=kernel, command=command, threads=threads, output=output, times=[])
    run.times = [float(t) for t in PATTERNS["trial"].findall(output)]
    read = PATTERNS["read"].search(output)
    run.read_seconds = float(read.group(1)) if read else None
    graph = PATTERNS["graph"].search(output)
    if graph:
        run.nodes, run.edges = int(graph.group(1)), int(graph.group(2))
        run.directed = graph.group(3) is None
    run.verified = [v == "PASS" for v in PATTERNS["verify"].findall(output)]
    reached = PATTERNS["reached"].findall(output)
    run.reached = int(reached[-1]) if reached else None
    return run


def run_gap(
    binary: str | os.PathLike[str],
    graph_path: str | os.PathLike[str],
    *,
    source: int | None = None,
    delta: int | None = None,
    trials: int,
    threads: int,
    verify: bool = False,
) -> list[float]:
    """Seconds of each of GAP's ``trials`` (its "Trial Time" lines) of ``binary`` on
    ``graph_path`` with ``threads`` OpenMP threads; ``source`` (``-r``; None: GAP's own random
    sources), ``delta`` (sssp's ``-d``). Raises ``GapError`` with GAP's output on failure."""
    run = run_gap_detailed(
        binary,
        graph_path,
        source=source,
        delta=delta,
        trials=trials,
        threads=threads,
        verify=verify,
    )
    return run.times


# -- command line -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    convert = sub.add_parser("convert", help="native directory -> GAP .sg/.wsg")
    convert.add_argument("native")
    convert.add_argument("out", help="OUT.sg (unweighted) or OUT.wsg (weighted)")
    run = sub.add_parser("run", help="run one GAP kernel, print its trial times")
    run.add_argument("kernel", choices=KERNELS)
    run.add_argument("graph", help="a .sg/.wsg (or any file GAP reads)")
    run.add_argument("--gap-dir", default=".gapbs", help="GAP's built source tree [.gapbs]")
    run.add_argument("--source", type=int, help="-r: the search's source (default GAP's own)")
    run.add_argument("--delta", type=int, help="-d: sssp's bucket width (GAP's default 1)")
    run.add_argument("--trials", type=int, default=1, help="-n [1]")
    run.add_argument("--threads", type=int, help="OMP_NUM_THREADS [all cores]")
    run.add_argument("--verify", action="store_true", help="-v: GAP's verifier on every trial")
    run.add_argument("--json", help="write the run as JSON")
    args = parser.parse_args(argv)
    try:
        if args.command == "convert":
            info = write_gap_graph(args.native, args.out)
            print(json.dumps(info))
            return 0
        result = run_gap_detailed(
            gap_binary(args.gap_dir, args.kernel),
            args.graph,
            source=args.source,
            delta=args.delta,
            trials=args.trials,
            threads=args.threads,
            verify=args.verify,
            analysis=True,
        )
    except GapError as exc:
        print(f"gap.py: error: {exc}", file=sys.stderr)
        return 2
    times_ms = " ".join(f"{t * 1e3:.3f}" for t in result.times)
    print(
        f"{args.kernel} on {args.graph} ({result.nodes} nodes, {result.edges} edges), "
        f"{result.threads} threads: trials {times_ms} ms, mean {result.mean_seconds * 1e3:.3f}"
        f" ms"
        + (f", verified {sum(result.verified)}/{len(result.verified)}" if result.verified else "")
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result.document(), indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
