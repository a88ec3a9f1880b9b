"""The memory refusal (``distbfs.memory.require``): ranks that draw on one memory count together."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import distbfs
import distbfs.memory as memory
from distbfs.comm.device_ops import CupyOps
from distbfs.engine.components import ComponentPlan
from distbfs.engine.plan import SEARCH_FIX
from distbfs.errors import CUDA_OUT_OF_MEMORY, DeviceError, out_of_device_memory
from distbfs.traversals.cc import afforest


class Ranks:
    """A stand-in communicator: rank 0 of ``size``, every rank reporting what this one does
    but from the hosts ``hosts``."""

    def __init__(self, hosts: list[str]) -> None:
        self.hosts, self.size, self.rank = hosts, len(hosts), 0

    def allgather_object(self, item):
        _, wanted, available = item
        return [((host,), wanted, available) for host in self.hosts]


@pytest.fixture
def gigabyte(monkeypatch):
    monkeypatch.setattr(memory, "available_host_bytes", lambda: 1 << 30)


def test_ranks_of_one_node_fit_together(gigabyte):
    memory.require(600 << 20, np, Ranks(["a", "b"]), "work", "fix")  # one rank a node: fits
    with pytest.raises(distbfs.InputError) as caught:
        memory.require(600 << 20, np, Ranks(["a", "a"]), "work", "fewer ranks a node")
    message = str(caught.value)
    assert "work needs 629,145,600 bytes of host memory on rank 0" in message
    assert "(1,258,291,200 with the other ranks sharing that memory)" in message
    assert message.endswith("1,073,741,824 are available: fewer ranks a node")


def test_one_rank_alone(gigabyte):
    memory.require(1 << 30, np, None, "work", "fix")
    with pytest.raises(distbfs.InputError, match=r"needs 1,073,741,825 bytes of host memory"):
        memory.require((1 << 30) + 1, np, None, "work", "fix")


def test_graph_construction_is_refused_before_it_allocates(gigabyte):
    with pytest.raises(distbfs.InputError, match=r"CSR of 200,000,000 vertices .* needs"):
        distbfs.Graph.from_edges([0], [199_999_999], backend="numpy")


def test_a_streamed_build_checks_its_passes(monkeypatch):
    """One rank streams a generated graph too large to hold as a list; after counting the rows
    it refuses the columns and sort spans that would not fit."""
    import distbfs.generators as generators

    monkeypatch.setattr(memory, "available_host_bytes", lambda: 20 << 20)
    monkeypatch.setattr(generators, "available_host_bytes", lambda: 20 << 20)
    # the streamed build's
    refusal = r"CSR of 65,536 vertices and [\d,]+ directed edges \(this rank's\) needs"
    with pytest.raises(distbfs.InputError, match=refusal):
        distbfs.Graph.generate("kronecker", scale=16, backend="numpy")


@pytest.mark.parametrize(
    ("run", "what"),
    [
        (lambda g: distbfs.bfs(g, 0), "a BFS of 4,096 vertices needs"),
        (lambda g: distbfs.sssp(g, 0), "a shortest-path search of 4,096 vertices needs"),
        (lambda g: distbfs.connected_components(g), "components of 4,096 vertices needs"),
        (lambda g: distbfs.bfs_many(g, [0, 1]), "searches from 2 sources as bit lanes needs"),
    ],
)
def test_searches_are_refused_before_they_allocate(monkeypatch, run, what):
    """A search whose peak (the numpy backend's estimate) would not fit beside the graph is
    refused with the bytes and the fix before it starts; with the memory there it runs."""
    graph, fresh = (distbfs.Graph.generate("kronecker", scale=12, backend="numpy") for _ in "ab")
    run(graph)
    monkeypatch.setattr(memory, "available_host_bytes", lambda: 100_000)
    with pytest.raises(distbfs.InputError, match=what) as caught:
        run(fresh)  # a graph without plans yet
    assert str(caught.value).endswith("100,000 are available: " + SEARCH_FIX)


SEARCHES = {
    "bfs": lambda g: distbfs.bfs(g, 1, predecessors=True, strategy="hybrid"),
    "paths": lambda g: distbfs.sssp(g, 1, predecessors=True),
    "components": lambda g: afforest(ComponentPlan(g.resources)),  # sampling: the larger peak
    "lanes": lambda g: distbfs.bfs_many(g, list(range(64)), gather=False),
}


@pytest.mark.parametrize("scale", [12, 16])
def test_the_search_estimates_bound_what_searches_take(scale):
    """The numpy backend's estimates are at least the peaks tracemalloc measures and at most
    ten times them (Kronecker graphs, one rank; the graph itself not counted; components are
    estimated for graphs without a giant component, 7x a Kronecker graph's sampled run, and
    bound the run that finds the giant component by a search too)."""
    import tracemalloc

    graph = distbfs.Graph.generate("kronecker", scale=scale, backend="numpy", weights="uniform:1:9")
    for traversal, search in SEARCHES.items():
        search(graph)
        tracemalloc.start()
        search(graph)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        estimate = graph.backend.search_bytes(graph.dist, traversal)
        assert peak <= estimate < 10 * peak, (traversal, peak, estimate)
    distbfs.connected_components(graph)  # the giant component by a search: within the estimate
    tracemalloc.start()
    distbfs.connected_components(graph)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak <= graph.backend.search_bytes(graph.dist, "components")


class _RuntimeError(Exception):
    """A stand-in for CuPy's ``CUDARuntimeError``: an error with a CUDA status."""

    def __init__(self, status: int) -> None:
        super().__init__(f"status {status}")
        self.status = status


def _ops_whose_malloc_fails(status: int) -> CupyOps:
    """GPU communicator operations whose whole allocations (``cupy.cuda.Memory``) fail."""

    def malloc(nbytes):
        raise _RuntimeError(status)

    ops = object.__new__(CupyOps)  # without CuPy: only ``allocation`` is called
    ops._cupy = SimpleNamespace(cuda=SimpleNamespace(Memory=malloc))
    return ops


def test_a_whole_allocation_out_of_device_memory_names_the_bytes_and_the_fix():
    """cudaMalloc's out-of-memory status (``cupy.cuda.Memory`` raises it as a runtime error,
    not as CuPy's ``OutOfMemoryError``) is a ``DeviceError`` naming what, the bytes and the
    fix; another runtime error goes on as it is."""
    ops = _ops_whose_malloc_fails(CUDA_OUT_OF_MEMORY)
    expected = r"allocating the bin exchange receive area \(4096 bytes\): use more GPUs"
    with pytest.raises(DeviceError, match=expected):
        ops.allocation(4096, "bin exchange receive area")
    with pytest.raises(_RuntimeError):
        _ops_whose_malloc_fails(CUDA_OUT_OF_MEMORY + 1).allocation(4096, "area")
    assert out_of_device_memory(MemoryError()) and not out_of_device_memory(ValueError())
