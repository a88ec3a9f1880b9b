"""Phase timers wrapped around stage calls by the level loop (never inside stages or kernels).

A timer records, per level, the seconds spent in each named phase. ``NullTimer`` costs nothing
(its phase is one shared do-nothing context, not a generator made per call);
``HostTimer`` reads the host clock (right for the numpy backend); the CUDA backend supplies an
event-based timer that resolves times after the search, with no synchronization per level.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext

_NO_PHASE = nullcontext()


class NullTimer:
    """Records nothing."""

    enabled = False

    def phase(self, name: str) -> AbstractContextManager[None]:
        return _NO_PHASE

    def next_level(self) -> None:
        pass

    def per_level(self) -> list[dict[str, float]]:
        return []


class HostTimer(NullTimer):
    """Host wall-clock seconds per phase per level."""

    enabled = True

    def __init__(self) -> None:
        self._levels: list[dict[str, float]] = [{}]

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            current = self._levels[-1]
            current[name] = current.get(name, 0.0) + time.perf_counter() - start

    def next_level(self) -> None:
        self._levels.append({})

    def per_level(self) -> list[dict[str, float]]:
        return [level for level in self._levels if level]
