"""The CUDA kernel sources and their loader, checked on CPUs: every stage's source pastes
``common.cuh`` in; the cooperative stages (the fused BFS levels, delta-stepping) and a search's
start include no other header, since what a module includes is what a first run with an empty
kernel cache waits for; the cooperative kernels are launched cooperatively through CuPy's
``Function``."""

from __future__ import annotations

import copy
import re

import pytest

from distbfs.backends.cuda import kernels


@pytest.mark.parametrize("stage", kernels.STAGES)
def test_every_stage_pastes_the_common_header(stage):
    source = kernels.stage_source(stage)
    assert '#line 1 "common.cuh"' in source
    assert kernels._INCLUDE_LINE not in source


@pytest.mark.parametrize("stage", sorted(kernels.COOPERATIVE_STAGES | {"start"}))
def test_cooperative_and_start_stages_include_no_header(stage):
    """What a road network's first search compiles: its start and its fused levels."""
    source = (kernels.kernel_dir() / f"{stage}.cu").read_text()
    assert re.findall(r"^\s*#\s*include\s*(\S+)", source, re.MULTILINE) == ['"common.cuh"']


class _Function:
    ptr = 7

    def __init__(self):
        self.calls = []

    def __call__(self, grid, block, args, **options):
        self.calls.append((grid, block, args, options))


class _RawKernel:
    def __init__(self):
        self.kernel = _Function()
        self.shared_size_bytes = 96
        self.max_dynamic_shared_size_bytes = 0


def test_a_cooperative_kernel_launches_cooperatively_and_keeps_the_raw_attributes():
    raw = _RawKernel()
    kernel = kernels.CooperativeKernel(raw)
    kernel((4,), (256,), ("args",), shared_mem=8)
    kernel((1,), (64,), ())
    assert raw.kernel.calls == [
        ((4,), (256,), ("args",), {"shared_mem": 8, "enable_cooperative_groups": True}),
        ((1,), (64,), (), {"shared_mem": 0, "enable_cooperative_groups": True}),
    ]
    assert kernel.kernel.ptr == 7
    assert kernel.shared_size_bytes == 96
    kernel.max_dynamic_shared_size_bytes = 4096
    assert raw.max_dynamic_shared_size_bytes == 4096 == kernel.max_dynamic_shared_size_bytes
    assert copy.copy(kernel).shared_size_bytes == 96
