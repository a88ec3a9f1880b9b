"""The one loader of the CUDA kernels in ``kernels/`` (one ``.cu`` file per stage of Merrill et al.
2012: a search's start, expand, filter_partition, contract, contract_expand, the bottom-up
levels, and Afforest's link for connected components on one rank, batched BFS's lanes): each
stage's ``cupy.RawModule`` is built once per device, launch policy and vertex width, and
memoized. Invariant: a kernel never holds a tuning number of its own; every one arrives as a
``-D`` option (``compile_options``).

Sources: ``kernels/`` at the root of a checkout (next to ``distbfs/``), or ``distbfs/_kernels``
inside an installed wheel (package data); ``kernel_dir()`` looks in both. Each stage file is
compiled with ``kernels/common.cuh`` pasted in place of its ``#include "common.cuh"`` (with
``#line`` marks, so errors still name the right file and line): CuPy's on-disk cache keys on
the source text and the options, which then cover the header too.

Compile options: ``-std=c++17``, the launch policy (``LaunchPolicy.defines()``), the counter
layout (``Counter``), the fused kernel's scratch length, ``UNREACHED`` and the vertex width, all
as ``-D``; NVRTC through CuPy, which also picks the target architecture from the current device
(``sm_XX`` of its compute capability) and puts its bundled CUB and the CUDA headers
on the include path. The kernels of ``COOPERATIVE_STAGES`` are launched with
cuLaunchCooperativeKernel (``CooperativeKernel``); their grid barrier is common.cuh's
``grid_sync``, so those modules are plain ones too (CuPy's ``enable_cooperative_groups`` builds
relocatable code linked against cudadevrt, and ``<cooperative_groups.h>`` alone takes NVRTC about
a second: time a first run with an empty kernel cache waits for).

``python -m distbfs.backends.cuda.kernels`` compiles every stage with nvcc instead, for a machine
without a GPU (syntax and type check), for the default policy and a small one, and checks from
ptxas's resource report that the cooperative kernel's blocks fit ``fused_blocks_per_sm`` to a
multiprocessor (registers, shared memory).
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from enum import IntEnum
from pathlib import Path
from typing import Any

from ...constants import UNREACHED
from ...errors import DeviceError
from ..base import FUSED_LOG_COLUMNS
from .launch_policy import DEFAULT_POLICY, LaunchPolicy

STAGES = (
    "start",
    "expand",
    "filter_partition",
    "contract",
    "contract_expand",
    "bottom_up",
    "inbound",
    "link",
    "lanes",
    "relax",
    "decode",
)
"""Kernel source files (``kernels/<stage>.cu``), one stage each."""

COOPERATIVE_STAGES = frozenset({"contract_expand", "relax"})
"""Stages whose kernels synchronize their whole grid (common.cuh's ``grid_sync``): launched with
cuLaunchCooperativeKernel, which guarantees every block is resident at once (and refuses a grid
larger than that)."""

FIRST_SEARCH_STAGES = ("contract_expand", "start")
"""The stages a BFS of a road network runs (every level fused; its start, whose kernel a search
does without until it is built): what a command compiles ahead while it reads its graph
(``compile_ahead``)."""

FUSED_STAGE = "contract_expand"
"""The stage of the fused BFS grid, whose blocks ``cooperative_fit`` checks against the policy."""

COOPERATIVE_GRID_KERNELS = frozenset(
    {"contract_expand_kernel", "level_pairs_kernel", "contract_expand_peers_kernel"}
)
"""The kernels of ``FUSED_STAGE`` launched as a grid of ``fused_blocks_per_sm`` blocks a
multiprocessor, all resident."""

FUSED_SCRATCH_SLOTS = 21
"""int64 words of the fused kernels' scratch array: their ring of counts, three slots (levels, or
pairs of levels) of seven: vertices, edges and heavy vertices, and a pair's first level and
stale claims (``kernels/contract_expand.cu``)."""

FUSED_LOG_FIELDS = len(FUSED_LOG_COLUMNS)
"""int64 words of a row of the fused kernels' per-level log (``log_level`` in
``kernels/contract_expand.cu``)."""

PEER_HEADER_WORDS = 8
"""int64 words per rank in the header of a peer mailbox (flags, counts; the fused peer kernel in
``kernels/contract_expand.cu``); the (vertex, parent) segments follow the header."""

HEADER = "common.cuh"
_INCLUDE_LINE = f'#include "{HEADER}"'


class Counter(IntEnum):
    """Slots of the per-level counter array (int64) every stage kernel updates on the device.

    ``BINS + b`` counts the items of owner bin b and ``CURSORS + b`` the items placed in it so
    far; both ranges are ``LaunchPolicy.max_bins`` long.
    """

    EDGES = 0  # items expand appended to the edge queue (more than its capacity: overflow)
    FILTERED = 1  # items filter_partition kept, all bins together
    FRONTIER = 2  # vertices labeled by contract (or the fused kernel): next frontier length
    FUSED_LEVELS = 3  # levels the fused small-frontier kernel ran
    FRONTIER_EDGES = 4  # out-edges of the next frontier (contract when asked, bottom_up, fused)
    INSPECTED = 5  # in-neighbour slots a bottom-up level tested
    FUSED_LABELED = 6  # vertices the fused kernel labeled (all its levels)
    FUSED_LABELED_EDGES = 7  # their out-edges
    HEAVY = 8  # frontier vertices of more than heavy_degree neighbours that expand queued
    PEER_FAILURE = 9  # fused peer levels: 1 a peer rank never arrived, 2 a segment overflowed
    BINS = 10


def counter_slots(policy: LaunchPolicy) -> int:
    """Length of the counter array for ``policy``: fixed slots, bin totals, bin cursors."""
    return int(Counter.BINS) + 2 * policy.max_bins


def counter_cursors(policy: LaunchPolicy) -> int:
    """Index of the first bin cursor in the counter array."""
    return int(Counter.BINS) + policy.max_bins


def kernel_dir() -> Path:
    """Folder holding the ``.cu`` sources: the wheel's package data, else the checkout's."""
    package = Path(__file__).resolve().parents[2]  # distbfs/ (this file: distbfs/backends/cuda/)
    for candidate in (package / "_kernels", package.parent / "kernels"):
        if (candidate / HEADER).is_file():
            return candidate
    raise DeviceError(
        f"CUDA kernel sources not found: looked for {HEADER} in {package / '_kernels'} "
        f"(installed wheel) and {package.parent / 'kernels'} (checkout)"
    )


@functools.cache
def compile_options(policy: LaunchPolicy, vertex_bits: int) -> tuple[str, ...]:
    """The options every stage is compiled with (NVRTC or nvcc alike), architecture aside
    (memoized: every prepared graph looks its kernels up)."""
    if vertex_bits not in (32, 64):
        raise ValueError(f"vertex_bits={vertex_bits}: column ids are int32 or int64")
    layout = tuple(f"-DDISTBFS_COUNTER_{slot.name}={int(slot)}" for slot in Counter)
    return (
        "-std=c++17",
        *policy.defines(),
        *layout,
        f"-DDISTBFS_COUNTER_CURSORS={counter_cursors(policy)}",
        f"-DDISTBFS_FUSED_SCRATCH_SLOTS={FUSED_SCRATCH_SLOTS}",
        f"-DDISTBFS_FUSED_LOG_FIELDS={FUSED_LOG_FIELDS}",
        f"-DDISTBFS_PEER_HEADER_WORDS={PEER_HEADER_WORDS}",
        f"-DDISTBFS_UNREACHED={UNREACHED}",
        f"-DDISTBFS_VERTEX_BITS={vertex_bits}",
    )


def stage_source(stage: str, directory: Path | None = None) -> str:
    """Source of ``kernels/<stage>.cu`` with ``common.cuh`` pasted in place of its include."""
    if stage not in STAGES:
        raise ValueError(f"unknown kernel stage {stage!r} (one of {', '.join(STAGES)})")
    directory = kernel_dir() if directory is None else directory
    source = (directory / f"{stage}.cu").read_text()
    header = (directory / HEADER).read_text()
    if _INCLUDE_LINE not in source:
        raise DeviceError(f"{directory / stage}.cu does not include {HEADER}")
    before, after = source.split(_INCLUDE_LINE, 1)
    resume = before.count("\n") + 2  # line after the include in the stage file
    return f'{before}#line 1 "{HEADER}"\n{header}\n#line {resume} "{stage}.cu"{after}'


ModuleKey = tuple[int, str, tuple[str, ...]]
"""A module: (device id, stage, compile options)."""
_MODULE_LOCKS: dict[ModuleKey, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()
_BUILT: set[ModuleKey] = set()


def _module(device_id: int, stage: str, options: tuple[str, ...]) -> Any:
    """A stage's module, built once: a caller that asks for one another thread is building
    (``compile_ahead``) waits for it rather than compiling it again."""
    key = (device_id, stage, options)
    with _LOCKS_GUARD:
        lock = _MODULE_LOCKS.setdefault(key, threading.Lock())
    with lock:
        module = _built_module(device_id, stage, options)
    _BUILT.add(key)
    return module


@functools.cache
def _built_module(device_id: int, stage: str, options: tuple[str, ...]) -> Any:
    import cupy

    with cupy.cuda.Device(device_id):
        module = cupy.RawModule(code=stage_source(stage), options=options)
        module.compile()  # compile here, on this device, so errors surface here
    return module


COMPILE_THREADS = 4
"""Modules ``warm_up`` compiles at once (NVRTC runs outside the GIL, though its calls in one
process overlap poorly: four at once finish about 1.2x sooner than one after another)."""


def build_modules(
    stages: tuple[str, ...] | list[str],
    policy: LaunchPolicy = DEFAULT_POLICY,
    widths: tuple[int, ...] = (32,),
    threads: int = COMPILE_THREADS,
) -> list[tuple[str, int, float]]:
    """Compile (or load from CuPy's on-disk cache, ``CUPY_CACHE_DIR``) the modules of
    ``stages`` for each vertex width on the current device, ``threads`` at a time. Returns
    (stage, width, seconds) per module, in the order asked."""
    import cupy

    device = cupy.cuda.Device().id

    def build(job: tuple[str, int]) -> tuple[str, int, float]:
        stage, bits = job
        start = time.perf_counter()
        _module(device, stage, compile_options(policy, bits))
        return stage, bits, time.perf_counter() - start

    jobs = [(stage, bits) for stage in stages for bits in widths]
    with ThreadPoolExecutor(max_workers=max(1, min(threads, len(jobs)))) as pool:
        return list(pool.map(build, jobs))


def compile_ahead(
    stages: tuple[str, ...], policy: LaunchPolicy = DEFAULT_POLICY, vertex_bits: int = 32
) -> threading.Thread:
    """Build the modules of ``stages`` on the current device in a background thread, one after
    another: a command starts it before it reads its graph, so that what a first run with an
    empty kernel cache compiles overlaps the read (NVRTC runs outside the GIL). The thread is a
    daemon (an error exit does not wait for it); a failure there is left for the stage's first
    use to report."""
    import cupy

    return _build_behind(cupy.cuda.Device().id, stages, compile_options(policy, vertex_bits))


def _build_behind(
    device: int, stages: tuple[str, ...], options: tuple[str, ...]
) -> threading.Thread:
    """``compile_ahead``'s thread, started."""

    def build() -> None:
        try:
            for stage in stages:
                _module(device, stage, options)
        except Exception:  # the stage's first use reports it
            return

    thread = threading.Thread(target=build, name="distbfs compile ahead", daemon=True)
    thread.start()
    return thread


def warm_up(
    policy: LaunchPolicy = DEFAULT_POLICY,
    widths: tuple[int, ...] = (32, 64),
    threads: int = COMPILE_THREADS,
) -> list[tuple[str, int, float]]:
    """Compile every stage for each vertex width on the current device, ``threads`` modules at
    a time, into CuPy's on-disk cache (``CUPY_CACHE_DIR``), so that later processes (batch jobs
    sharing the cache) load them instead of compiling. Returns (stage, width, seconds) per
    module, in ``STAGES`` order."""
    return build_modules(STAGES, policy, widths, threads)


def get_module(stage: str, policy: LaunchPolicy = DEFAULT_POLICY, vertex_bits: int = 32) -> Any:
    """The compiled ``cupy.RawModule`` of ``stage`` on the current device (built once)."""
    import cupy

    return _module(cupy.cuda.Device().id, stage, compile_options(policy, vertex_bits))


def get_kernel(
    stage: str, name: str, policy: LaunchPolicy = DEFAULT_POLICY, vertex_bits: int = 32
) -> Any:
    """Kernel ``name`` (an ``extern "C"`` function) of ``stage``, on the current device (looked
    up once per device, options and name: ``CudaBackend.prepare`` takes a dozen of them per
    graph)."""
    import cupy

    return _kernel(cupy.cuda.Device().id, stage, name, compile_options(policy, vertex_bits))


@functools.cache
def _kernel(device_id: int, stage: str, name: str, options: tuple[str, ...]) -> Any:
    kernel = _module(device_id, stage, options).get_function(name)
    return CooperativeKernel(kernel) if stage in COOPERATIVE_STAGES else kernel


class CooperativeKernel:
    """A kernel of a ``COOPERATIVE_STAGES`` module, called as a ``cupy.RawKernel`` is but
    launched with cuLaunchCooperativeKernel (CuPy's ``Function`` launches so when asked: its
    module is compiled as a plain one, see the top of this file)."""

    def __init__(self, kernel: Any) -> None:
        self._raw = kernel
        self.kernel = kernel.kernel  # the loaded function: its ``ptr`` for the occupancy queries

    def __call__(
        self, grid: tuple[int, ...], block: tuple[int, ...], args: tuple, shared_mem: int = 0
    ) -> None:
        self.kernel(grid, block, args, shared_mem=shared_mem, enable_cooperative_groups=True)

    def __getattr__(self, name: str) -> Any:  # the RawKernel's attributes (shared sizes, ...)
        if name == "_raw":  # not set yet (a copy being made): no recursion
            raise AttributeError(name)
        return getattr(self._raw, name)

    @property
    def max_dynamic_shared_size_bytes(self) -> int:
        return self._raw.max_dynamic_shared_size_bytes

    @max_dynamic_shared_size_bytes.setter
    def max_dynamic_shared_size_bytes(self, nbytes: int) -> None:
        self._raw.max_dynamic_shared_size_bytes = nbytes


class StageKernels(Mapping[str, Any]):
    """Kernel handles by role (``roles``: role -> (stage, ``extern "C"`` name)) on the current
    device, for one launch policy and vertex width. A stage's module is compiled (or loaded
    from CuPy's on-disk cache) at the first use of one of its kernels, so a first search
    compiles only the stages it runs: a road network, whose levels all run fused, needs
    ``contract_expand`` alone (its start's kernel is used once built, ``built``). (NVRTC calls
    of one process overlap poorly: compiling every stage at once takes about as long as
    compiling them one after another.)"""

    def __init__(
        self, roles: Mapping[str, tuple[str, str]], policy: LaunchPolicy, vertex_bits: int
    ) -> None:
        import cupy

        self._roles = dict(roles)
        self._device = cupy.cuda.Device().id
        self._options = compile_options(policy, vertex_bits)
        self._resolved: dict[str, Any] = {}
        self._behind: set[str] = set()  # stages built in the background (``built``)

    def __getitem__(self, role: str) -> Any:
        kernel = self._resolved.get(role)
        if kernel is None:
            stage, name = self._roles[role]
            kernel = self._resolved[role] = _kernel(self._device, stage, name, self._options)
        return kernel

    def built(self, role: str) -> Any | None:
        """The kernel of ``role`` if its module is built (or loaded) already; else None, its
        build started in the background (once): for a caller with a way around the kernel (a
        search's start: fills and marks from the host), so that a first run does not wait
        for a module it can do without."""
        kernel = self._resolved.get(role)
        stage = self._roles[role][0]
        if kernel is None and (self._device, stage, self._options) in _BUILT:
            kernel = self[role]
        elif kernel is None and stage not in self._behind:
            self._behind.add(stage)
            _build_behind(self._device, (stage,), self._options)
        return kernel

    def load_all(self) -> None:
        """Compile (or load) the module of every role now: what a benchmark's warm-up does, so
        that no timed search is the first to run a stage."""
        for role in self._roles:
            self[role]

    def __iter__(self) -> Iterator[str]:
        return iter(self._roles)

    def __len__(self) -> int:
        return len(self._roles)


SM90_LIMITS = {
    "registers": 65536,
    "shared_bytes": 233472,
    "block_reserved_bytes": 1024,
    "threads": 2048,
    "blocks": 32,
}
"""Per-multiprocessor resources of sm_90 (H100/H200) that bound how many blocks are resident:
the register file, shared memory (228 KB) and what the system reserves of it per block, threads
and blocks."""

CHECK_POLICIES = (
    DEFAULT_POLICY,
    LaunchPolicy(
        block_threads=64,
        items_per_thread=1,
        warp_hash_slots=32,
        history_hash_slots=64,
        max_bins=64,
        fused_threads=64,
        fused_blocks_per_sm=1,
        heavy_degree=8,
        decode_point_edges=4,
        fused_max_edges=1000,
        fused_max_frontier=100,
        path_threads=64,
        path_piece_edges=40,
    ),
)
"""Policies ``python -m distbfs.backends.cuda.kernels`` compiles: the default and a small one (the
smallest blocks the tests use), so that no size is only ever compiled on the device."""


def nvcc_check(
    policy: LaunchPolicy = DEFAULT_POLICY, arch: str = "sm_90", nvcc: str | None = None
) -> list[tuple[str, int, str]]:
    """Compile every stage with nvcc for ``arch`` (no GPU needed), both vertex widths.

    Cooperative stages are compiled with ptxas's resource report and checked with
    ``cooperative_fit`` (a failure there is reported as return code 1).

    Returns ``(stage/width, return code, compiler output)`` per compilation.
    """
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        raise DeviceError("nvcc not found on PATH")
    directory = kernel_dir()
    results = []
    for vertex_bits in (32, 64):
        for stage in STAGES:
            cooperative = stage in COOPERATIVE_STAGES
            command = [
                nvcc,
                *compile_options(policy, vertex_bits),
                f"-arch={arch}",
                "--cubin",
                *(("-Xptxas=-v",) if cooperative else ()),
                "-o",
                "/dev/null",
                "-I",
                str(directory),
                str(directory / f"{stage}.cu"),
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            output = done.stdout + done.stderr
            code = done.returncode
            if code == 0 and stage == FUSED_STAGE:
                problem, summary = cooperative_fit(output, policy)
                output = summary if problem is None else f"{problem}\n{output}"
                code = 0 if problem is None else 1
            results.append((f"{stage}/int{vertex_bits}", code, output))
    return results


def cooperative_fit(ptxas_report: str, policy: LaunchPolicy) -> tuple[str | None, str]:
    """Whether ``policy.fused_blocks_per_sm`` blocks of the fused kernel fit one sm_90 SM.

    ``ptxas_report`` is ptxas's ``-v`` output for the kernel ("Used R registers, ... S bytes
    smem", spill counts). Returns ``(problem or None, one-line summary)``. A cooperative launch
    refuses a grid larger than what is resident at once, and the backend sizes the grid with the
    occupancy calculator, so this is the static view of what the device will say.
    """
    # ptxas reports each entry as "Function properties for NAME" then its resources; only the
    # cooperative grids count (block_levels_kernel runs as one block of its own).
    entries = re.split(r"Function properties for (\w+)", ptxas_report)
    report = "".join(
        text
        for name, text in zip(entries[1::2], entries[2::2], strict=True)
        if name in COOPERATIVE_GRID_KERNELS
    )
    registers = re.findall(r"Used (\d+) registers", report)
    shared = re.findall(r"(\d+) bytes smem", report)
    spills = re.findall(r"(\d+) bytes spill stores", report)
    if not registers or not shared:
        return "no ptxas resource report for the cooperative kernel", ptxas_report
    # the larger grid kernel decides (the one-rank and the peer kernel share the policy)
    regs, smem = max(map(int, registers)), max(map(int, shared))
    warps = policy.fused_threads // 32
    per_warp = -(-regs * 32 // 256) * 256  # registers are allocated 256 to a warp
    by_registers = SM90_LIMITS["registers"] // (per_warp * warps)
    by_shared = SM90_LIMITS["shared_bytes"] // (smem + SM90_LIMITS["block_reserved_bytes"])
    by_threads = SM90_LIMITS["threads"] // policy.fused_threads
    fit = min(by_registers, by_shared, by_threads, SM90_LIMITS["blocks"])
    spilled = max(map(int, spills), default=0)
    summary = (
        f"{regs} registers, {smem} B shared, {spilled} B spilled: {fit} blocks of "
        f"{policy.fused_threads} fit an SM (policy asks {policy.fused_blocks_per_sm})"
    )
    if fit < policy.fused_blocks_per_sm:
        return f"the fused kernel does not fit: {summary}", summary
    return None, summary


def _main() -> int:
    failed = 0
    for policy in CHECK_POLICIES:
        print(
            f"policy: block_threads={policy.block_threads} fused_threads={policy.fused_threads} "
            f"x {policy.fused_blocks_per_sm} per SM, heavy_degree="
            f"{policy.heavy_degree}"
        )
        for name, code, output in nvcc_check(policy):
            print(f"{'ok  ' if code == 0 else 'FAIL'} {name}")
            if output.strip():
                print("\n".join("     " + line for line in output.rstrip().splitlines()[:40]))
            failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main())
