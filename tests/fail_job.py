"""A distbfs command-line job in which one rank fails inside the level loop (failure tests).

Usage: ``mpirun -n P python tests/fail_job.py [distbfs arguments]``. On rank
``DISTBFS_TEST_FAIL_RANK`` (default 1), the first search's level ``DISTBFS_TEST_FAIL_LEVEL``
(default 1) raises in stage ``DISTBFS_TEST_FAIL_STAGE`` (``filter_partition``, default: the other
ranks are then inside the bin exchange, waiting for this one; or ``contract``: they are in the
termination all-reduce). ``DISTBFS_TEST_FAIL_KIND`` says what is raised: ``bug`` (a RuntimeError,
like a kernel error) or ``device`` (a DeviceError, like running out of GPU memory). The job must
then end promptly with a non-zero status and the message, through the command line's error
policy (``distbfs.cli.main``). Only this script plants the failure; the library has no hook.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import distbfs.api.search
from distbfs import cli
from distbfs.engine import SearchPlan
from distbfs.errors import DeviceError

RANK = int(os.environ.get("DISTBFS_TEST_FAIL_RANK", "1"))
LEVEL = int(os.environ.get("DISTBFS_TEST_FAIL_LEVEL", "1"))
STAGE = os.environ.get("DISTBFS_TEST_FAIL_STAGE", "filter_partition")
KIND = os.environ.get("DISTBFS_TEST_FAIL_KIND", "bug")


class FailingBackend:
    """The job's backend, except that one stage raises once on one rank."""

    def __init__(self, inner: Any, rank: int) -> None:
        self.inner = inner
        self.rank = rank
        self.level = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _maybe_fail(self, stage: str) -> None:
        if self.rank == RANK and stage == STAGE and self.level == LEVEL:
            message = f"planted failure on rank {self.rank} at level {self.level} in {stage}"
            raise DeviceError(message) if KIND == "device" else RuntimeError(message)

    def expand(self, graph: Any, state: Any, strip: int = 0) -> Any:
        return self.inner.expand(graph, state, strip)

    def filter_partition(self, state: Any, edges: Any, nbins: int) -> Any:
        self._maybe_fail("filter_partition")
        return self.inner.filter_partition(state, edges, nbins)

    def contract(self, graph: Any, state: Any, received: Any, level: int) -> None:
        self._maybe_fail("contract")
        self.inner.contract(graph, state, received, level)
        self.level = level


_run_levels = distbfs.api.search.run_levels


def failing_run_levels(plan: SearchPlan, source: int, **options: Any) -> Any:
    """The search on a plan of the failing backend, every level through the stages (and the
    exchange)."""
    backend = FailingBackend(plan.backend, plan.comm.rank)
    failing = SearchPlan.build(plan.graph, backend, plan.comm, strategy="two_phase")
    return _run_levels(failing, source, **options)


if __name__ == "__main__":
    distbfs.api.search.run_levels = failing_run_levels
    sys.exit(cli.main(sys.argv[1:]))
