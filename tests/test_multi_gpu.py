"""Multi-GPU runs (2 or 4 H200s, one rank per GPU): the NCCL communicator's collectives equal the
MPI communicator's, also with bins copied into the peers' memory (``peer_copies``); full
searches with backend cuda + comm nccl equal the numpy and single-GPU results on every graph
family and on the structured test graphs (also direction-optimizing, under forced switch
points), predecessors validated; the GPU MPI transport too; a failure
planted on one rank ends the job promptly with its message.

Run (each rank needs its own GPU; skipped with the reason otherwise):
    mpirun -n 2 python -m pytest --with-mpi -m "mpi and multi_gpu" tests/test_multi_gpu.py
    python -m pytest -m "multi_gpu and not mpi" tests/test_multi_gpu.py   # failures: own mpirun
Expectations derive from ``comm.size``, so the mpi tests also hold at one rank.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import distbfs
from distbfs.comm.base import Bins
from distbfs.comm.single import SingleRankCommunicator
from distbfs.constants import UNREACHED
from distbfs.roots import choose_roots

import graphs

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.multi_gpu

FAMILIES = {
    "kronecker": {"scale": 12},
    "uniform": {"scale": 12},
    "grid2d": {"shape": (64, 40)},
    "grid3d": {"shape": (12, 10, 9)},
}
STRUCTURED = graphs.ANY_RANK_COUNT


def gpu_skip_reason(ranks: int) -> str | None:
    """Why ``ranks`` ranks cannot each have a GPU and NCCL here (None if they can)."""
    try:
        import cupy

        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # no CuPy, no driver, or no device
        return f"CuPy with a CUDA device is not available ({type(exc).__name__}: {exc})"
    if count < ranks and "CUDA_VISIBLE_DEVICES" not in os.environ:
        return f"{ranks} ranks need {ranks} GPUs, {count} visible"
    from distbfs.comm.nccl import nccl_module

    module, why = nccl_module()
    return None if module is not None else why


# -- fixtures (collective: every rank decides alike) --------------------------------------------


@pytest.fixture(scope="module")
def cupy(comm):
    reasons = [r for r in comm.allgather_object(gpu_skip_reason(comm.size)) if r]
    if reasons:
        pytest.skip(reasons[0])
    from distbfs.device import bind_device

    bind_device()  # this rank's GPU, before any device memory exists
    import cupy

    return cupy


@pytest.fixture(scope="module")
def nccl_comms(comm, cupy):
    """NCCL communicators over the job's host communicator, by how counts travel, with the bins
    moved by NCCL (``peer_copies=False``); ``peer``: the default, bins copied into the peers'
    mapped memory where the ranks share a node."""
    from distbfs.comm.nccl import COUNTS_TRANSPORTS, NCCLCommunicator

    comms = {c: NCCLCommunicator(comm, counts=c, peer_copies=False) for c in COUNTS_TRANSPORTS}
    comms["peer"] = NCCLCommunicator(comm)
    return comms


@pytest.fixture(scope="module")
def nccl(nccl_comms):
    return nccl_comms["nccl"]


@pytest.fixture(scope="module")
def cuda_backend(cupy):
    """A CUDA backend without the replicated or peer small-frontier paths: every level striped,
    with exchanges (those paths have their own tests)."""
    from distbfs.api import resolve_backend
    from distbfs.backends.cuda.backend import CudaBackend

    return resolve_backend(CudaBackend(replica_limit_bytes=0, peer_levels=False))


def random_bins(
    rank: int, size: int, seed: int, *, dtype=np.int32, parents=True, scale=5000, low=0
):
    """Bins of ``low``..``scale`` random items for each rank but the next one."""
    rng = np.random.default_rng(seed * 1009 + rank)
    counts = rng.integers(low, scale + 1, size)
    counts[(rank + 1) % size] = 0
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    vertices = rng.integers(0, 2**30, int(offsets[-1])).astype(dtype)
    preds = rng.integers(0, 2**30, int(offsets[-1])).astype(dtype) if parents else None
    return Bins(offsets, vertices, () if preds is None else (preds,))


def to_device(cupy, bins: Bins) -> Bins:
    payloads = tuple(cupy.asarray(p) for p in bins.payloads)
    return Bins(bins.offsets.copy(), cupy.asarray(bins.vertices), payloads)


# -- the communicator's collectives against MPI -------------------------------------------------


@pytest.mark.mpi
@pytest.mark.parametrize("counts", ["nccl", "host", "peer"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("parents", [False, True])
def test_exchange_bins_equals_mpi(comm, cupy, nccl_comms, counts, dtype, parents):
    nccl = nccl_comms[counts]
    for seed, scale in enumerate((5000, 300000, 20)):  # the peer area grows at the second
        bins = random_bins(comm.rank, comm.size, seed, dtype=dtype, parents=parents, scale=scale)
        expected = comm.exchange_bins(bins)
        got = nccl.exchange_bins(to_device(cupy, bins))
        np.testing.assert_array_equal(got.offsets, expected.offsets)
        assert isinstance(got.vertices, cupy.ndarray) and got.vertices.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(got.vertices.get(), expected.vertices)
        if parents:
            np.testing.assert_array_equal(got.payloads[0].get(), expected.payloads[0])
    if comm.size > 1:
        assert nccl.path["exchange"] == ("cuda-ipc" if counts == "peer" else "nccl")


@pytest.mark.mpi
def test_receive_buffers_are_reused_once_warm(comm, cupy, nccl):
    # level 0 sends every bin its largest size, so no later level needs more room
    for level, scale in enumerate([200000, 3000, 50000, 200000, 100]):
        low = scale if level == 0 else 0
        bins = random_bins(comm.rank, comm.size, 40 + level, scale=scale, low=low)
        expected = comm.exchange_bins(bins)
        got = nccl.exchange_bins(to_device(cupy, bins))
        np.testing.assert_array_equal(got.vertices.get(), expected.vertices)
        np.testing.assert_array_equal(got.payloads[0].get(), expected.payloads[0])
        if level == 0:
            warm = nccl.describe()["receive_buffer_allocations"]
    assert nccl.describe()["receive_buffer_allocations"] == warm


@pytest.mark.mpi
def test_alltoallv_allreduce_allgather_equal_mpi(comm, cupy, nccl):
    r, size = comm.rank, comm.size
    rng = np.random.default_rng(5 + r)
    counts = rng.integers(0, 3000, size)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    ids = rng.integers(0, 10**12, int(offsets[-1]))
    values = rng.random(int(offsets[-1]))
    expected_offsets, expected = comm.alltoallv(offsets, ids, values)
    got_offsets, got = nccl.alltoallv(offsets, cupy.asarray(ids), values)
    np.testing.assert_array_equal(got_offsets, expected_offsets)
    np.testing.assert_array_equal(got[0].get(), expected[0])
    assert isinstance(got[1], np.ndarray)
    np.testing.assert_array_equal(got[1], expected[1])

    for op in ("sum", "max", "min"):
        assert nccl.allreduce(r + 1, op=op) == comm.allreduce(r + 1, op=op)
        array = np.array([r, -r, 3 * r + 1], dtype=np.int64)
        got_reduced = nccl.allreduce(cupy.asarray(array), op=op)
        np.testing.assert_array_equal(got_reduced.get(), comm.allreduce(array, op=op))
    assert nccl.path["allreduce"] == comm.kind and nccl.path["allreduce_device"] == "nccl"

    for length in ((r * 7) % 5, 6, 0):
        local = (np.arange(length, dtype=np.int64) + 100 * r) * (-1) ** r
        got_gathered = nccl.allgather_array(cupy.asarray(local))
        np.testing.assert_array_equal(got_gathered.get(), comm.allgather_array(local))

    words = np.arange(1000, dtype=np.uint32) * np.uint32(r + 1)
    gathered = nccl.allgather_equal(cupy.asarray(words))
    assert gathered.shape == (size, 1000)
    np.testing.assert_array_equal(gathered.get(), comm.allgather_array(words).reshape(size, -1))


@pytest.mark.mpi
def test_mpi_gpu_transport_equals_mpi(comm, cupy):
    if comm.size == 1:
        pytest.skip("the GPU MPI transport wraps an MPI job of several ranks")
    from distbfs.comm.mpi_gpu import MPIGPUCommunicator, mpi_cuda_aware

    modes = [False] + ([True] if all(comm.allgather_object(mpi_cuda_aware()[0])) else [])
    for cuda_aware in modes:
        gpu_mpi = MPIGPUCommunicator(comm, cuda_aware=cuda_aware, peer_copies=False)
        for seed in range(3):
            bins = random_bins(comm.rank, comm.size, 70 + seed)
            expected = comm.exchange_bins(bins)
            got = gpu_mpi.exchange_bins(to_device(cupy, bins))
            np.testing.assert_array_equal(got.vertices.get(), expected.vertices)
            np.testing.assert_array_equal(got.payloads[0].get(), expected.payloads[0])
        words = np.arange(500, dtype=np.uint32) + np.uint32(comm.rank)
        gathered = gpu_mpi.allgather_equal(cupy.asarray(words))
        np.testing.assert_array_equal(
            gathered.get(), comm.allgather_array(words).reshape(comm.size, -1)
        )
        assert gpu_mpi.path["exchange"] == gpu_mpi.transport


# -- full searches ------------------------------------------------------------------------------


def check_tree(distances: np.ndarray, preds: np.ndarray, source: int) -> None:
    """Every reached vertex but the source has a predecessor one level up."""
    n = distances.shape[0]
    assert preds[source] == source
    assert np.all(preds[distances == UNREACHED] == UNREACHED)
    others = np.flatnonzero((distances != UNREACHED) & (np.arange(n) != source))
    np.testing.assert_array_equal(distances[preds[others]], distances[others] - 1)


@pytest.mark.mpi
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_bfs_every_family_equals_numpy_and_one_gpu(comm, cupy, nccl, cuda_backend, family):
    params = FAMILIES[family]
    on_gpus = distbfs.Graph.generate(family, backend=cuda_backend, comm=nccl, **params)
    on_cpus = distbfs.Graph.generate(family, backend="numpy", comm=comm, **params)
    one_gpu = distbfs.Graph.generate(
        family, backend=cuda_backend, comm=SingleRankCommunicator(), **params
    )
    assert on_gpus.num_edges == on_cpus.num_edges == one_gpu.num_edges
    roots = choose_roots(on_cpus.dist, comm, count=4)
    for root in roots:
        expected = distbfs.bfs(on_cpus, root).distances
        single = distbfs.bfs(one_gpu, root, predecessors=True, validate=True)
        np.testing.assert_array_equal(cupy.asnumpy(single.distances), expected)
        for strategy in ("hybrid", "two_phase", "direction_optimizing"):
            result = distbfs.bfs(on_gpus, root, predecessors=True, validate=True, strategy=strategy)
            assert result.validated
            distances = cupy.asnumpy(result.distances)
            np.testing.assert_array_equal(distances, expected)
            check_tree(distances, cupy.asnumpy(result.predecessors), root)
    if comm.size > 1:
        assert nccl.path["exchange"] == "nccl"
        assert nccl.path["alltoallv"] == "nccl"  # graph construction moved device edges


def check_family_against_numpy(comm, cupy, gpu_comm, backend, family: str, roots: int) -> None:
    """Graph ``family`` searched on the GPUs through ``gpu_comm`` with ``backend`` equals the
    numpy ranks' search from ``roots`` Graph500 roots, both strategies, trees validated."""
    params = FAMILIES[family]
    on_gpus = distbfs.Graph.generate(family, backend=backend, comm=gpu_comm, **params)
    on_cpus = distbfs.Graph.generate(family, backend="numpy", comm=comm, **params)
    for root in choose_roots(on_cpus.dist, comm, count=roots):
        expected = distbfs.bfs(on_cpus, root).distances
        for strategy in ("hybrid", "direction_optimizing"):
            result = distbfs.bfs(on_gpus, root, predecessors=True, validate=True, strategy=strategy)
            assert result.validated
            distances = cupy.asnumpy(result.distances)
            np.testing.assert_array_equal(distances, expected)
            check_tree(distances, cupy.asnumpy(result.predecessors), root)


@pytest.mark.mpi
@pytest.mark.parametrize("family", ["kronecker", "grid2d"])
def test_bfs_through_peer_copies(comm, cupy, nccl_comms, cuda_backend, family):
    """The default communicator on one node: bins copied into the peers' receive areas."""
    peer = nccl_comms["peer"]
    check_family_against_numpy(comm, cupy, peer, cuda_backend, family, roots=3)
    if comm.size > 1:
        assert peer.path["exchange"] == "cuda-ipc"


@pytest.mark.mpi
@pytest.mark.parametrize("name", sorted(STRUCTURED))
def test_bfs_structured_graphs(comm, cupy, nccl, cuda_backend, name):
    src, dst, n, directed = STRUCTURED[name]
    mine = graphs.share(src, dst, comm.rank, comm.size)
    graph = distbfs.Graph.from_edges(
        *mine, num_vertices=n, directed=directed, backend=cuda_backend, comm=nccl
    )
    for source in sorted({0, n // 3, n - 1}):
        expected = graphs.reference_distances(src, dst, n, directed, source)
        for forcing in ("default", "stay_bottom_up", "oscillate"):
            alpha, beta = graphs.FORCINGS[forcing]
            result = distbfs.bfs(
                graph,
                source,
                predecessors=True,
                validate=True,
                strategy="direction_optimizing",
                alpha=alpha,
                beta=beta,
            )
            distances = cupy.asnumpy(result.distances)
            np.testing.assert_array_equal(distances, expected)
            check_tree(distances, cupy.asnumpy(result.predecessors), source)
        two_phase = distbfs.bfs(graph, source, predecessors=True, strategy="two_phase")
        np.testing.assert_array_equal(cupy.asnumpy(two_phase.distances), expected)


@pytest.mark.mpi
def test_bfs_over_the_gpu_mpi_transport(comm, cupy, cuda_backend):
    if comm.size == 1:
        pytest.skip("the GPU MPI transport wraps an MPI job of several ranks")
    from distbfs.comm.mpi_gpu import MPIGPUCommunicator

    gpu_mpi = MPIGPUCommunicator(comm, cuda_aware=False, peer_copies=False)
    graph = distbfs.Graph.generate("kronecker", scale=12, backend=cuda_backend, comm=gpu_mpi)
    reference = distbfs.Graph.generate("kronecker", scale=12, backend="numpy", comm=comm)
    for root in choose_roots(reference.dist, comm, count=3):
        result = distbfs.bfs(graph, root, predecessors=True, validate=True)
        np.testing.assert_array_equal(
            cupy.asnumpy(result.distances), distbfs.bfs(reference, root).distances
        )
    assert gpu_mpi.path["exchange"] == "mpi-staged"


# -- a failure on one rank ends the job (each test launches its own 2-rank job) -----------------


def _mpirun() -> str | None:
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    return shutil.which("mpirun") or shutil.which("mpiexec")


@pytest.mark.parametrize(("stage", "kind"), [("filter_partition", "bug"), ("contract", "device")])
def test_failure_on_one_rank_ends_the_nccl_job(tmp_path, stage, kind):
    """Rank 1 fails in the level loop; rank 0 waits in the NCCL exchange (filter_partition) or
    the termination all-reduce (contract). The job must end within 60 s, non-zero, with the
    message."""
    reason = gpu_skip_reason(2)
    if reason:
        pytest.skip(reason)
    mpirun = _mpirun()
    if mpirun is None:
        pytest.skip("no mpirun or mpiexec")
    pytest.importorskip("mpi4py")
    launcher = ("PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCAL", "SLURM_")
    # drop the launcher state of this process (keep configuration such as OMPI_MCA_*)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(launcher) or k.startswith("OMPI_MCA_")
    }
    env.update(
        PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]),
        DISTBFS_TEST_FAIL_RANK="1",
        DISTBFS_TEST_FAIL_STAGE=stage,
        DISTBFS_TEST_FAIL_KIND=kind,
    )
    if os.geteuid() == 0:  # Open MPI refuses root without these
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    command = [mpirun, "-n", "2", sys.executable, str(REPO / "tests" / "fail_job.py")]
    command += ["bench", "--backend", "cuda", "--comm", "nccl", "--scale", "14", "--roots", "2"]
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"the job still ran after 60 s\n{out[-3000:]}\n{err[-3000:]}")
    elapsed = time.monotonic() - start
    assert proc.returncode != 0, out[-2000:]
    assert f"planted failure on rank 1 at level 1 in {stage}" in err, err[-3000:]
    print(f"job ended in {elapsed:.1f} s with status {proc.returncode}")


def check_fused_spans(comm, cupy, nccl, name, strategy, **backend_options):
    """Search structured graph ``name`` from three sources with a CUDA backend made with
    ``backend_options``, at the default fused limits (every level in one fused span: these
    graphs fit whole) and at tight ones (fused spans hand over to striped levels and back):
    distances equal the reference, trees are valid, spans add up to the levels."""
    from distbfs.backends.cuda.backend import CudaBackend
    from distbfs.backends.cuda.launch_policy import LaunchPolicy

    src, dst, n, directed = STRUCTURED[name]
    mine = graphs.share(src, dst, comm.rank, comm.size)
    for policy in (LaunchPolicy(), LaunchPolicy(fused_max_frontier=8, fused_max_edges=64)):
        backend = CudaBackend(policy, **backend_options)
        graph = distbfs.Graph.from_edges(
            *mine, num_vertices=n, directed=directed, backend=backend, comm=nccl
        )
        for source in sorted({0, n // 3, n - 1}):
            result = distbfs.bfs(graph, source, predecessors=True, validate=True, strategy=strategy)
            distances = cupy.asnumpy(result.distances)
            expected = graphs.reference_distances(src, dst, n, directed, source)
            np.testing.assert_array_equal(distances, expected)
            check_tree(distances, cupy.asnumpy(result.predecessors), source)
            graphs.check_level_rows((src, dst, n, directed), expected, result.levels)
            if policy.fused_max_frontier > 8:  # these graphs fit the fused path whole
                assert all(lv.fused for lv in result.levels)


@pytest.mark.mpi
@pytest.mark.parametrize("strategy", ["hybrid", "direction_optimizing", "contract_expand"])
@pytest.mark.parametrize("name", ["grid", "path", "random_undirected", "directed_with_sinks"])
def test_small_graphs_searched_whole_on_every_rank(comm, cupy, nccl, name, strategy):
    """Small graphs are copied to every rank, and every rank searches its copy whole, as one
    GPU would (fused spans and, past tight limits, two-phase levels), with no exchange, then
    keeps its own vertices' part."""
    check_fused_spans(comm, cupy, nccl, name, strategy)


@pytest.mark.mpi
@pytest.mark.parametrize("strategy", ["hybrid", "direction_optimizing", "contract_expand"])
@pytest.mark.parametrize(
    "name", ["grid", "path", "star", "random_undirected", "directed_with_sinks"]
)
def test_peer_small_frontier_path(comm, cupy, nccl, name, strategy):
    """Graphs not copied to every rank: small frontiers run fused on every GPU at once, the
    items and level barriers going through peer memory (CUDA IPC)."""
    check_fused_spans(comm, cupy, nccl, name, strategy, replica_limit_bytes=0)
    if comm.size > 1:
        assert nccl.path["peer_memory"] == "cuda-ipc"


@pytest.mark.mpi
def test_peer_mailboxes_unmapped_with_their_graph(comm, cupy, nccl, monkeypatch):
    """The peers' mailboxes a graph's fused peer levels mapped are unmapped when the graph
    goes, so a process that builds graph after graph keeps no peer's old mailbox alive."""
    import gc

    from distbfs.backends.cuda.backend import CudaBackend

    closed = []
    close = nccl.ops.ipc_close
    monkeypatch.setattr(
        nccl.ops, "ipc_close", lambda address: (closed.append(address), close(address))
    )
    graph = distbfs.Graph.generate(
        "kronecker", scale=12, backend=CudaBackend(replica_limit_bytes=0), comm=nccl
    )
    distbfs.bfs(graph, choose_roots(graph.dist, nccl, count=1)[0])
    mapped = graph.resources.peer_mailbox() is not None
    assert mapped == (comm.size > 1)
    del graph
    gc.collect()
    assert len(closed) == (comm.size - 1 if mapped else 0)


@pytest.mark.mpi
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_peer_small_frontier_path_every_family(comm, cupy, nccl, family):
    """The generated families (Kronecker hubs in the first levels, grids' long tails) with
    the peer path on, against numpy on the CPU ranks, both strategies."""
    from distbfs.backends.cuda.backend import CudaBackend

    backend = CudaBackend(replica_limit_bytes=0)
    check_family_against_numpy(comm, cupy, nccl, backend, family, roots=4)
