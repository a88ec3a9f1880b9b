"""What one small multi-GPU level costs, and its parts: the per-level floor of the top-down loop.

    mpirun -n 2 python benchmarks/level_overhead.py

Searches a 2D grid (hundreds of levels whose frontiers hold a few hundred vertices) with the
replica and the peer fused path off, so every level runs the full loop (expand,
filter+partition, bin exchange, contract, termination), and prints microseconds per level
(``--peer-levels``: the fused levels through peer memory instead, two cross-GPU barriers a
level); then the host cost of the operations a level is made of, each repeated, per rank: a
trivial kernel launch, a CUDA event, a small device-to-host read, MPI all-to-all and all-reduce
of a few int64, an NCCL grouped send/recv of 64 bytes (with a stream synchronization).
``--cprofile``: rank 0's Python profile of one search (top functions by own time).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import cupy
import numpy as np

import distbfs
from distbfs.engine import SearchPlan
from distbfs.traversals.bfs import bfs_levels

sys.path.insert(0, str(Path(__file__).resolve().parent))
from profile_ranks import print_rank0_profile


def per_call_us(action: Callable[[], object], repeat: int, comm: object) -> float:
    """Mean host microseconds of ``action`` (every rank runs it ``repeat`` times, together)."""
    action()
    comm.barrier()
    began = time.perf_counter()
    for _ in range(repeat):
        action()
    return (time.perf_counter() - began) / repeat * 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--side", type=int, default=512, help="grid side (levels: 2 side - 1)")
    parser.add_argument("--searches", type=int, default=3)
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument(
        "--peer-levels", action="store_true", help="fused levels through peer memory on"
    )
    args = parser.parse_args()

    from distbfs.api import resolve_backend
    from distbfs.backends.cuda.backend import CudaBackend
    from distbfs.runtime import get_communicator

    resolve_backend("cuda")  # binds this rank's GPU
    # every level through the full loop, or (--peer-levels) fused on every GPU at once
    backend = CudaBackend(replica_limit_bytes=0, peer_levels=args.peer_levels)
    comm = get_communicator("auto", "cuda")
    shape = (args.side, args.side)
    graph = distbfs.Graph.generate("grid2d", shape=shape, backend=backend, comm=comm)
    dist = graph.dist
    plan = SearchPlan.build(dist, backend, comm, "hybrid")
    result = bfs_levels(plan, 0, predecessors=True)  # warm-up
    levels = sum(level.span for level in result.levels)  # a fused row spans many
    times = []
    for _ in range(args.searches):
        comm.barrier()
        began = time.perf_counter()
        bfs_levels(plan, 0, predecessors=True)
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - began)
    slowest = comm.allreduce(min(times), op="max")
    if comm.rank == 0:
        print(
            f"{comm.size} ranks, grid2d {shape}, {levels} levels: {slowest * 1e3:.1f} ms a "
            f"search, {slowest / levels * 1e6:.1f} us a level"
        )

    kernel = cupy.RawKernel('extern "C" __global__ void nop(long long* x) {}', "nop")
    word = cupy.zeros(8, dtype=np.int64)
    pinned = np.empty(8, dtype=np.int64)
    host = comm.host.comm  # the MPI communicator under the NCCL one
    send, received = np.arange(comm.size, dtype=np.int64), np.empty(comm.size, dtype=np.int64)
    nccl, lib = comm._nccl, comm._lib
    stream = cupy.cuda.get_current_stream()

    def nccl_pair() -> None:
        lib.groupStart()
        for peer in range(comm.size):
            if peer != comm.rank:
                nccl.send(word.data.ptr, 64, lib.NCCL_UINT8, peer, stream.ptr)
                nccl.recv(word.data.ptr, 64, lib.NCCL_UINT8, peer, stream.ptr)
        lib.groupEnd()
        stream.synchronize()

    def read() -> None:
        kernel((1,), (32,), (word,))
        word[:1].get(out=pinned[:1])

    def event() -> None:
        cupy.cuda.Event().record()

    costs = {
        "kernel launch": lambda: kernel((1,), (32,), (word,)),
        "launch + 8-byte read": read,
        "event create + record": event,
        "MPI Alltoall (P int64)": lambda: host.Alltoall(send, received),
        "MPI Allreduce (4 int64)": lambda: comm.allreduce(pinned[:4]),
        "NCCL send/recv 64 B + sync": nccl_pair,
    }
    rows = {name: per_call_us(action, 500, comm) for name, action in costs.items()}
    everyone = comm.allgather_object(rows)
    if comm.rank == 0:
        for name in rows:
            values = " ".join(f"{r[name]:7.1f}" for r in everyone)
            print(f"  {name:>28}: {values} us (per rank)")
    if args.cprofile:
        print_rank0_profile(comm, lambda: bfs_levels(plan, 0, predecessors=True), 40)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
