"""The one loader of the CUDA kernels in ``kernels/``: each stage's ``cupy.RawModule`` is built
once per device, launch policy and vertex width, and memoized.

Sources: ``kernels/`` at the root of a checkout (next to ``distbfs/``), or ``distbfs/_kernels``
inside an installed wheel (package data); ``kernel_dir()`` looks in both. Each stage file is
compiled with ``kernels/common.cuh`` pasted in place of its ``#include "common.cuh"`` (with
``#line`` marks, so errors still name the right file and line): CuPy's on-disk cache keys on
the source text and the options, which then cover the header too.

Compile options: ``-std=c++17``, the launch policy (``LaunchPolicy.defines()``), the counter
layout (``Counter``), ``UNREACHED`` and the vertex width, all as ``-D``; NVRTC through CuPy,
which also picks the target architecture from the current device (``sm_XX`` of its compute
capability) and puts its bundled CUB on the include path. ``python -m distbfs.backends.kernels``
compiles every stage with nvcc instead, for a machine without a GPU (syntax and type check).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from enum import IntEnum
from pathlib import Path
from typing import Any

from ..constants import UNREACHED
from ..errors import DeviceError
from .launch_policy import DEFAULT_POLICY, LaunchPolicy

STAGES = ("expand", "filter_partition", "contract", "contract_expand")
"""Kernel source files (``kernels/<stage>.cu``), one stage each."""

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
    BINS = 4


def counter_slots(policy: LaunchPolicy) -> int:
    """Length of the counter array for ``policy``: fixed slots, bin totals, bin cursors."""
    return int(Counter.BINS) + 2 * policy.max_bins


def counter_cursors(policy: LaunchPolicy) -> int:
    """Index of the first bin cursor in the counter array."""
    return int(Counter.BINS) + policy.max_bins


def kernel_dir() -> Path:
    """Folder holding the ``.cu`` sources: the wheel's package data, else the checkout's."""
    package = Path(__file__).resolve().parents[1]
    for candidate in (package / "_kernels", package.parent / "kernels"):
        if (candidate / HEADER).is_file():
            return candidate
    raise DeviceError(
        f"CUDA kernel sources not found: looked for {HEADER} in {package / '_kernels'} "
        f"(installed wheel) and {package.parent / 'kernels'} (checkout)"
    )


def compile_options(policy: LaunchPolicy, vertex_bits: int) -> tuple[str, ...]:
    """The options every stage is compiled with (NVRTC or nvcc alike), architecture aside."""
    if vertex_bits not in (32, 64):
        raise ValueError(f"vertex_bits={vertex_bits}: column ids are int32 or int64")
    layout = tuple(f"-DDISTBFS_COUNTER_{slot.name}={int(slot)}" for slot in Counter)
    return (
        "-std=c++17",
        *policy.defines(),
        *layout,
        f"-DDISTBFS_COUNTER_CURSORS={counter_cursors(policy)}",
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


@functools.cache
def _module(device_id: int, stage: str, options: tuple[str, ...]) -> Any:
    import cupy

    with cupy.cuda.Device(device_id):
        module = cupy.RawModule(code=stage_source(stage), options=options)
        module.compile()  # compile now, on this device, so errors surface here
    return module


def get_module(stage: str, policy: LaunchPolicy = DEFAULT_POLICY, vertex_bits: int = 32) -> Any:
    """The compiled ``cupy.RawModule`` of ``stage`` on the current device (built once)."""
    import cupy

    return _module(cupy.cuda.Device().id, stage, compile_options(policy, vertex_bits))


def get_kernel(
    stage: str, name: str, policy: LaunchPolicy = DEFAULT_POLICY, vertex_bits: int = 32
) -> Any:
    """Kernel ``name`` (an ``extern "C"`` function) of ``stage``, on the current device."""
    return get_module(stage, policy, vertex_bits).get_function(name)


def nvcc_check(
    policy: LaunchPolicy = DEFAULT_POLICY, arch: str = "sm_90", nvcc: str | None = None
) -> list[tuple[str, int, str]]:
    """Compile every stage with nvcc for ``arch`` (no GPU needed), both vertex widths.

    Returns ``(stage/width, return code, compiler output)`` per compilation.
    """
    nvcc = nvcc or shutil.which("nvcc")
    if nvcc is None:
        raise DeviceError("nvcc not found on PATH")
    directory = kernel_dir()
    results = []
    for vertex_bits in (32, 64):
        for stage in STAGES:
            command = [
                nvcc,
                *compile_options(policy, vertex_bits),
                f"-arch={arch}",
                "--cubin",
                "-o",
                "/dev/null",
                "-I",
                str(directory),
                str(directory / f"{stage}.cu"),
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=False)
            output = done.stdout + done.stderr
            results.append((f"{stage}/int{vertex_bits}", done.returncode, output))
    return results


def _main() -> int:
    failed = 0
    for name, code, output in nvcc_check():
        print(f"{'ok  ' if code == 0 else 'FAIL'} {name}")
        if output.strip():
            print("\n".join(output.rstrip().splitlines()[:40]))
        failed += code != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(_main())
