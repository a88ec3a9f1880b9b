"""The GPU communicators' logic on CPUs (run under mpiexec -n 1..4 with --with-mpi): NCCL and the
GPU MPI transports, driven through host stand-ins for CuPy and NCCL (tests/fake_device.py), give
exactly what the MPI communicator gives; own bins never go through the transport; receive
buffers are reused; the level loop over them finds the same distances. The same communicators
run on real GPUs in tests/test_multi_gpu.py."""

from __future__ import annotations

import numpy as np
import pytest

from distbfs.comm.base import Bins, Communicator
from distbfs.comm.device_ops import MIN_BUFFER_BYTES, GrowingBuffer
from distbfs.comm.single import SingleRankCommunicator
from distbfs.engine import STRATEGIES
from distbfs.graph import build_graph
from distbfs.runtime import get_backend

import graphs

pytest.importorskip("mpi4py", reason="the GPU communicators wrap MPI")

from fake_device import DeviceArray, FakeNccl, HostOps, device

from distbfs.comm.mpi import MPICommunicator
from distbfs.comm.mpi_gpu import MPIGPUCommunicator
from distbfs.comm.nccl import NCCLCommunicator

pytestmark = pytest.mark.mpi

TRANSPORTS = ("nccl", "nccl-host-counts", "mpi-staged", "mpi-cuda-aware")
# Top-down levels (the others run as two_phase on the numpy backend) and, where the level loop
# has them, bottom-up levels (bitmap all-gather).
LOOP_STRATEGIES = [s for s in ("two_phase", "direction_optimizing") if s in STRATEGIES]


@pytest.fixture(scope="module")
def host() -> MPICommunicator:
    return MPICommunicator()


def make(host: MPICommunicator, transport: str):
    """(communicator, ops, fake NCCL or None) for ``transport`` over host stand-ins. ``peer``:
    NCCL whose bins move by peer copies into the other ranks' memory (MPI shared memory plays
    CUDA IPC); the others have no IPC, so their exchanges fall back to the transport."""
    if transport == "peer":
        ops = HostOps(shared=host.comm)
        lib = FakeNccl(host.comm)
        return NCCLCommunicator(host, ops=ops, nccl=lib), ops, lib
    ops = HostOps()
    if transport.startswith("nccl"):
        lib = FakeNccl(host.comm)
        counts = "host" if transport == "nccl-host-counts" else "nccl"
        return NCCLCommunicator(host, counts=counts, ops=ops, nccl=lib), ops, lib
    comm = MPIGPUCommunicator(host, cuda_aware=transport == "mpi-cuda-aware", ops=ops)
    return comm, ops, None


def parents_of(bins: Bins):
    """The parents bins carry as their payload (None when they carry none)."""
    return bins.payloads[0] if bins.payloads else None


def random_bins(rank: int, size: int, seed: int, *, dtype=np.int32, parents=True, scale=40):
    """Bins of random length per destination (some empty), random ids; host arrays."""
    rng = np.random.default_rng(seed * 1009 + rank)
    counts = rng.integers(0, scale + 1, size)
    counts[(rank + 1) % size] = 0  # one empty bin per rank
    offsets = np.zeros(size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    vertices = rng.integers(0, 2**30, int(offsets[-1])).astype(dtype)
    preds = rng.integers(0, 2**30, int(offsets[-1])).astype(dtype) if parents else None
    return Bins(offsets, vertices, () if preds is None else (preds,))


def on_device(bins: Bins) -> Bins:
    return Bins(bins.offsets.copy(), device(bins.vertices), tuple(map(device, bins.payloads)))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("parents", [False, True])
def test_exchange_bins_equals_mpi(host, transport, dtype, parents):
    comm, ops, lib = make(host, transport)
    me, size = host.rank, host.size
    bins = random_bins(me, size, 3, dtype=dtype, parents=parents)
    expected = host.exchange_bins(bins)
    got = comm.exchange_bins(on_device(bins))
    np.testing.assert_array_equal(got.offsets, expected.offsets)
    assert isinstance(got.vertices, DeviceArray) and got.vertices.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.vertices, expected.vertices)
    if parents:
        assert isinstance(parents_of(got), DeviceArray)
        np.testing.assert_array_equal(parents_of(got), parents_of(expected))
    else:
        assert parents_of(got) is None
    # Bytes that crossed ranks: everything but the own bin, which was copied device to device.
    item = np.dtype(dtype).itemsize * (2 if parents else 1)
    sent = bins.counts
    remote_sent = int(sent.sum() - sent[me]) * item
    remote_received = int(expected.offsets[-1] - np.diff(expected.offsets)[me]) * item
    assert comm.stats["bytes_sent"] == remote_sent
    assert comm.stats["bytes_received"] == remote_received
    assert ops.copied("d2d") == int(sent[me]) * item
    if size > 1:
        assert comm.path["exchange"] == comm.transport
    # NCCL moves the remote segments on a side stream, after the bins were written, and the
    # current stream waits for their arrival (at once, or with overlap through in_flight,
    # and in any case before the transport's next operation). MPI moves them in order.
    assert got.in_flight is None
    if lib is not None:  # the fake refuses sends to this rank itself
        counts_bytes = 8 * (size - 1) if transport == "nccl" else 0
        assert sum(n for _, n in lib.sent) == remote_sent + counts_bytes
    elif transport == "mpi-staged":
        assert ops.copied("d2h") == remote_sent and ops.copied("h2d") == remote_received
    else:
        assert ops.copied("d2h") == ops.copied("h2d") == 0
    if lib is not None and size > 1:
        assert ops.waits == 2  # the side stream on the bins, the current one on the arrival
        again = comm.exchange_bins(on_device(bins), overlap=True)
        np.testing.assert_array_equal(again.vertices, expected.vertices)
        assert again.in_flight is not None
        assert ops.waits == 4  # the last move (before the transport's next use), the bins
        again.in_flight.wait()
        assert ops.waits == 5


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_own_segment_contracted_before_is_not_copied(host, transport):
    """Bins whose own segment the backend contracted already (``own_contracted``): the other
    segments arrive as usual, the own one is neither copied nor sent, and the received bins say
    so (their own segment is left unwritten)."""
    comm, ops, lib = make(host, transport)
    me = host.rank
    bins = random_bins(me, host.size, 7)
    expected = host.exchange_bins(bins)
    sent = on_device(bins)
    sent.own_contracted = True
    got = comm.exchange_bins(sent)
    assert got.own_contracted
    np.testing.assert_array_equal(got.offsets, expected.offsets)
    assert ops.copied("d2d") == 0
    own = slice(int(expected.offsets[me]), int(expected.offsets[me + 1]))
    for payload, want in (
        (got.vertices, expected.vertices),
        (parents_of(got), parents_of(expected)),
    ):
        others = np.ones(want.shape[0], dtype=bool)
        others[own] = False
        np.testing.assert_array_equal(np.asarray(payload)[others], want[others])
    if lib is not None:
        assert all(peer != me for peer, _ in lib.sent)


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
@pytest.mark.parametrize("parents", [False, True])
def test_peer_copies_equal_mpi(host, dtype, parents):
    """Ranks that map each other's memory: bins land in the receivers' areas (every segment
    where the receiver's offsets say), nothing goes through NCCL, the area grows (all ranks
    together, the old mappings closed) and is then reused; an own segment contracted before is
    not copied. Two areas take turns."""
    comm, ops, lib = make(host, "peer")
    me, size = host.rank, host.size
    scales = [50, 9000, 300, 40000, 7]
    remote = 0  # items sent to other ranks
    for level, scale in enumerate(scales):
        bins = random_bins(me, size, 20 + level, dtype=dtype, parents=parents, scale=scale)
        expected = host.exchange_bins(bins)
        sent = on_device(bins)
        sent.own_contracted = level == 2
        remote += int(bins.counts.sum() - bins.counts[me])
        got = comm.exchange_bins(sent)
        np.testing.assert_array_equal(got.offsets, expected.offsets)
        assert got.in_flight is None and got.own_contracted == (level == 2)
        others = np.ones(int(expected.offsets[-1]), dtype=bool)
        if level == 2:
            others[int(expected.offsets[me]) : int(expected.offsets[me + 1])] = False
        assert isinstance(got.vertices, DeviceArray) and got.vertices.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(got.vertices)[others], expected.vertices[others])
        if parents:
            np.testing.assert_array_equal(
                np.asarray(parents_of(got))[others], parents_of(expected)[others]
            )
        else:
            assert parents_of(got) is None
    if size == 1:
        return
    assert comm.path["exchange"] == "cuda-ipc" and comm.path["peer_memory"] == "cuda-ipc"
    assert lib.sent == []  # counts through the host, payloads by copies
    areas = sum(1 for what, _ in ops.allocations if what == "bin exchange receive area")
    assert areas >= 3  # both made, one grown at least once
    assert ops.mapped == areas * (size - 1) and ops.closed == (areas - 2) * (size - 1)
    item = np.dtype(dtype).itemsize * (2 if parents else 1)
    assert comm.stats["exchanges"] == len(scales) and comm.stats["bytes_sent"] == remote * item


def test_ranks_on_several_hosts_exchange_through_the_transport(host, monkeypatch):
    """Ranks on different hosts (host names told apart) map none of each other's memory, though
    each could map its own host's: every bin goes through NCCL, the same as MPI's, and the job
    counts its hosts (``Communicator.hosts``: shortest paths push across hosts)."""
    import socket

    monkeypatch.setattr(socket, "gethostname", lambda: f"node{host.rank % 2}")
    comm, ops, lib = make(host, "peer")
    me, size = host.rank, host.size
    rng = np.random.default_rng(40 + me)
    for scale in (50, 9000, 300):
        offsets = np.concatenate([[0], np.cumsum(rng.integers(1, scale, size))])  # none empty
        vertices, preds = rng.integers(0, 2**30, (2, int(offsets[-1])), dtype=np.int32)
        bins = Bins(offsets, vertices, (preds,))
        expected = host.exchange_bins(bins)
        got = comm.exchange_bins(on_device(bins))
        np.testing.assert_array_equal(got.offsets, expected.offsets)
        np.testing.assert_array_equal(np.asarray(got.vertices), expected.vertices)
        np.testing.assert_array_equal(np.asarray(parents_of(got)), parents_of(expected))
    assert comm.hosts() == min(size, 2)
    if size > 1:
        assert comm.path["exchange"] == comm.transport and "peer_memory" not in comm.path
        assert ops.mapped == 0 and sum(nbytes for _, nbytes in lib.sent) > 0


def test_peer_views_outlive_the_next_exchange(host):
    """A reply computed on the device from a request's views may still be reading them while
    the peers copy their replies in: the next exchange writes the other area."""
    comm, _, _ = make(host, "peer")
    me, size = host.rank, host.size
    request = random_bins(me, size, 5, dtype=np.int64, parents=False, scale=300)
    got = comm.exchange_bins(on_device(request))
    kept = np.asarray(got.vertices).copy()
    reply = random_bins(me, size, 6, dtype=np.int64, parents=False, scale=300)
    comm.exchange_bins(on_device(reply))
    np.testing.assert_array_equal(np.asarray(got.vertices), kept)
    np.testing.assert_array_equal(kept, host.exchange_bins(request).vertices)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_receive_buffers_are_reused_once_warm(host, transport):
    comm, ops, _ = make(host, transport)
    scales = [4000, 300, 1200, 4000, 2500, 10]
    for level, scale in enumerate(scales):
        bins = random_bins(host.rank, host.size, level, scale=scale)
        expected = host.exchange_bins(bins)
        got = comm.exchange_bins(on_device(bins))
        np.testing.assert_array_equal(got.vertices, expected.vertices)
        np.testing.assert_array_equal(parents_of(got), parents_of(expected))
        if level == 0:
            warm = len(ops.allocations)
    assert len(ops.allocations) == warm, "a level allocated after the largest one"
    assert comm.stats["exchanges"] == (len(scales) if host.size > 1 else 0)


def test_growing_buffer_grows_geometrically():
    buffer = GrowingBuffer(lambda n, what: np.empty(n, np.uint8), "test buffer")
    assert buffer.get(0).nbytes == 0 and buffer.capacity == MIN_BUFFER_BYTES
    big = MIN_BUFFER_BYTES * 3
    assert buffer.get(big).nbytes == big and buffer.capacity == big
    assert buffer.get(big + 1).nbytes == big + 1 and buffer.capacity == 2 * big
    assert buffer.get(5).nbytes == 5 and buffer.capacity == 2 * big
    assert buffer.allocations == 3


class _PendingBins(Bins):
    """Bins whose length is known only after ``resolve`` (like the CUDA backend's)."""

    resolved = 0

    def resolve(self) -> Bins:
        type(self).resolved += 1
        return Bins(self.offsets.copy(), self.vertices, self.payloads)


@pytest.mark.parametrize("transport", ["nccl", "mpi-staged"])
def test_pending_bins_resolved_only_when_they_travel(host, transport):
    comm, _, _ = make(host, transport)
    bins = random_bins(host.rank, host.size, 5)
    expected = host.exchange_bins(bins)
    pending = _PendingBins(bins.offsets.copy(), device(bins.vertices), (device(parents_of(bins)),))
    before = _PendingBins.resolved
    got = comm.exchange_bins(pending)
    if host.size == 1:  # the one bin stays where it is, unresolved (the one-bin contract)
        assert got is pending and _PendingBins.resolved == before
    else:
        assert _PendingBins.resolved == before + 1
        np.testing.assert_array_equal(got.vertices, expected.vertices)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_host_bins_go_through_the_host_communicator(host, transport):
    comm, ops, _ = make(host, transport)
    bins = random_bins(host.rank, host.size, 7)
    got = comm.exchange_bins(bins)
    expected = host.exchange_bins(bins)
    assert not isinstance(got.vertices, DeviceArray)
    np.testing.assert_array_equal(got.vertices, expected.vertices)
    assert ops.copies == []


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_alltoallv_mixed_payloads_keep_their_modules(host, transport):
    comm, _, _ = make(host, transport)
    rng = np.random.default_rng(11 + host.rank)
    counts = rng.integers(0, 30, host.size)
    offsets = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
    ids = rng.integers(0, 10**12, int(offsets[-1]))
    small = ids.astype(np.int32) % 1000
    values = rng.random(int(offsets[-1]))
    expected_offsets, expected = host.alltoallv(offsets, ids, small, values)
    got_offsets, got = comm.alltoallv(offsets, device(ids), small, device(values))
    np.testing.assert_array_equal(got_offsets, expected_offsets)
    assert [isinstance(a, DeviceArray) for a in got] == [True, False, True]
    for a, b in zip(got, expected, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)
    # Fresh arrays, not the exchange's reused buffers: a second call leaves the first's intact.
    comm.alltoallv(offsets, device(ids * 0))
    np.testing.assert_array_equal(got[0], expected[0])


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("op", ["sum", "max", "min"])
def test_allreduce_host_values_and_device_arrays(host, transport, op):
    comm, _, _ = make(host, transport)
    r = host.rank
    assert comm.allreduce(r + 1, op=op) == host.allreduce(r + 1, op=op)
    assert comm.path["allreduce"] == "mpi"
    array = np.array([r, -r, 3 * r + 1, 7], dtype=np.int64)
    got = comm.allreduce(device(array), op=op)
    assert isinstance(got, DeviceArray)
    np.testing.assert_array_equal(got, host.allreduce(array, op=op))
    floats = np.array([[0.5 * r, 1.0], [2.0, -r]], dtype=np.float64)
    np.testing.assert_array_equal(comm.allreduce(device(floats), op=op), host.allreduce(floats, op))
    if transport.startswith("nccl"):
        assert comm.path["allreduce_device"] == "nccl"
        shorts = np.array([r, -r, 5], dtype=np.int16)  # NCCL has no 16-bit integers
        np.testing.assert_array_equal(
            comm.allreduce(device(shorts), op=op), host.allreduce(shorts, op)
        )
        assert comm.path["allreduce_device"] == "mpi-staged"


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("lengths", ["uneven", "equal", "empty"])
def test_allgather_array(host, transport, lengths):
    comm, _, _ = make(host, transport)
    r = host.rank
    length = {"uneven": (r * 7) % 5, "equal": 6, "empty": 0}[lengths]
    local = (np.arange(length, dtype=np.int64) + 100 * r) * (-1) ** r
    got = comm.allgather_array(device(local))
    assert isinstance(got, DeviceArray) and got.dtype == np.int64
    np.testing.assert_array_equal(got, host.allgather_array(local))
    np.testing.assert_array_equal(comm.allgather_array(local), host.allgather_array(local))


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("length", [0, 1, 37])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_broadcast_array(host, transport, length, dtype):
    """The root's array on every rank, device arrays on the device (NCCL's broadcast in
    place), host arrays through the host communicator; the default (``allgather_array`` of
    the root's alone) gives the same."""
    comm, _, _ = make(host, transport)
    root = host.size - 1
    expected = (np.arange(length) * 7919 + 11).astype(dtype)
    mine = expected.copy() if host.rank == root else np.full(length, -1, dtype=dtype)
    got = comm.broadcast_array(device(mine), root)
    assert isinstance(got, DeviceArray) and got.dtype == dtype
    np.testing.assert_array_equal(got, expected)
    if transport.startswith("nccl") and length:
        assert comm.path["broadcast_array"] == "nccl"
    np.testing.assert_array_equal(comm.broadcast_array(mine.copy(), root), expected)
    default = Communicator.broadcast_array(host, mine.copy(), root)
    np.testing.assert_array_equal(default, expected)


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("length", [0, 1, 37])
def test_allgather_equal(host, transport, length):
    comm, _, _ = make(host, transport)
    words = ((np.arange(length, dtype=np.uint64) * 2654435761 + host.rank) % 2**32).astype(
        np.uint32
    )
    expected = host.allgather_array(words).reshape(host.size, length)
    got = comm.allgather_equal(device(words))
    assert isinstance(got, DeviceArray) and got.dtype == np.uint32
    assert got.shape == (host.size, length)
    np.testing.assert_array_equal(got, expected)
    if transport.startswith("nccl") and length:
        assert comm.path["allgather_equal"] == "nccl"
    np.testing.assert_array_equal(comm.allgather_equal(words), expected)


class _DeviceBinsBackend:
    """The numpy backend whose bins live in "device" arrays (so the exchange runs on them)."""

    def __init__(self) -> None:
        self.inner = get_backend("numpy")

    def __getattr__(self, name: str):
        return getattr(self.inner, name)

    def filter_partition(self, state, edges, nbins):
        bins = self.inner.filter_partition(state, edges, nbins)
        return on_device(bins)

    def frontier_bitmap(self, *args):  # bottom-up levels: the bitmap is gathered on "device"
        return device(self.inner.frontier_bitmap(*args))

    def bottom_up(self, *args):
        host = [np.asarray(a).view(np.ndarray) if isinstance(a, DeviceArray) else a for a in args]
        return self.inner.bottom_up(*host)

    def contract(self, graph, state, received, level):
        host_bins = Bins(
            received.offsets,
            np.asarray(received.vertices).view(np.ndarray),
            tuple(np.asarray(p).view(np.ndarray) for p in received.payloads),
        )
        return self.inner.contract(graph, state, host_bins, level)


@pytest.mark.parametrize("transport", [*TRANSPORTS, "peer"])
@pytest.mark.parametrize("strategy", LOOP_STRATEGIES)
@pytest.mark.parametrize("name", ["random_undirected", "random_directed", "grid", "path"])
def test_level_loop_over_gpu_transports_equals_mpi(host, transport, strategy, name):
    cases = {
        "random_undirected": graphs.random_graph(1500, 6000, 2, False),
        "random_directed": graphs.random_graph(1500, 5000, 4, True),
        "grid": graphs.grid(11, 13),
        "path": graphs.path(30),
    }
    src, dst, n, directed = cases[name]
    comm, _, _ = make(host, transport)
    graph = build_graph(host, *graphs.share(src, dst, host.rank, host.size), n, directed=directed)
    backend = _DeviceBinsBackend()
    for source in (0, n // 2):
        numpy = get_backend("numpy")
        expected = graphs.search(graph, source, numpy, host, predecessors=True, strategy=strategy)
        got = graphs.search(graph, source, backend, comm, predecessors=True, strategy=strategy)
        np.testing.assert_array_equal(got.distances, expected.distances)
        distances = graphs.gather_global(host, got.distances, n)
        preds = graphs.gather_global(host, got.predecessors, n)
        graphs.check_bfs_tree(cases[name], source, distances, preds)
        assert [lv.discovered for lv in got.levels] == [lv.discovered for lv in expected.levels]
    if host.size > 1:
        assert comm.path["exchange"] == ("cuda-ipc" if transport == "peer" else comm.transport)
        assert comm.stats["exchanges"] > 0
        if any(getattr(lv, "direction", "top_down") == "bottom_up" for lv in got.levels):
            assert comm.path["allgather_equal"] == comm.transport


class _RecordingHost(SingleRankCommunicator):
    def __init__(self) -> None:
        self.aborted: list[int] = []

    def abort(self, code: int) -> None:
        self.aborted.append(code)


def test_nccl_abort_aborts_nccl_then_the_job():
    from mpi4py import MPI

    host = _RecordingHost()
    lib = FakeNccl(MPI.COMM_SELF)
    comm = NCCLCommunicator(host, ops=HostOps(), nccl=lib)
    comm.abort(3)
    assert lib.comms[0].aborted and host.aborted == [3]
    info = comm.describe()
    assert info["kind"] == "nccl" and info["transport"] == "nccl" and info["counts"] == "host"


def test_mpi_gpu_needs_an_mpi_host():
    with pytest.raises(TypeError, match="MPI communicator"):
        MPIGPUCommunicator(SingleRankCommunicator(), cuda_aware=False, ops=HostOps())


def test_nccl_unavailable_is_one_agreed_error(host):
    from distbfs.errors import InputError
    from distbfs.launcher import launcher_size
    from distbfs.runtime import get_communicator, nccl_available

    if any(host.allgather_object(nccl_available()[0])):
        pytest.skip("NCCL is available on some rank")
    with pytest.raises(InputError, match=r"^--comm nccl: not available") as info:
        get_communicator("nccl")
    assert info.value.all_ranks  # raised alike on every rank: printed once
    if launcher_size() > 1:
        assert "on rank 0:" in str(info.value)
