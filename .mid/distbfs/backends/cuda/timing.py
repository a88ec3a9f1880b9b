"""Phase timer of the CUDA backend (instrumentation of the level loop, no stage of the paper):
CUDA events around each phase, resolved after the search.

Same interface as ``distbfs.timing.HostTimer`` (``phase(name)``, ``next_level()``,
``per_level()``). ``phase`` only records an event on the current stream before and after the
phase, so timing adds no synchronization to a level; ``per_level`` waits for the last event once
and converts every pair to seconds. A phase's time is the stream's time between its two events:
for phases of host work (an MPI exchange, a host reduction) the stream is idle, and the pair
measures the host time the stream waited.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import cupy

_MS_PER_S = 1000.0


class CudaEventTimer:
    """Seconds per phase per level, from CUDA event pairs read once after the search."""

    enabled = True

    def __init__(self) -> None:
        self._levels: list[list[tuple[str, cupy.cuda.Event, cupy.cuda.Event]]] = [[]]

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = cupy.cuda.Event()
        start.record()
        try:
            yield
        finally:
            end = cupy.cuda.Event()
            end.record()
            self._levels[-1].append((name, start, end))

    def next_level(self) -> None:
        self._levels.append([])

    def per_level(self) -> list[dict[str, float]]:
        levels = [level for level in self._levels if level]
        if not levels:
            return []
        levels[-1][-1][2].synchronize()  # events complete in stream order: the last one last
        result = []
        for level in levels:
            seconds: dict[str, float] = {}
            for name, start, end in level:
                elapsed = cupy.cuda.get_elapsed_time(start, end) / _MS_PER_S
                seconds[name] = seconds.get(name, 0.0) + elapsed
            result.append(seconds)
        return result
