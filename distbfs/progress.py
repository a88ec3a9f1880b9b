"""Progress bars for long steps (generation, loading, the multi-root loop), on rank 0 only.

A bar is shown only on rank 0, only when stderr is a terminal, and never with ``--quiet``: output
that goes to a file or a pipe (tests, batch jobs) stays free of bars. Every other rank, and every
disabled bar, gets a ``Progress`` whose methods do nothing, so callers never branch on the rank.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


def accepts_progress(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes a ``progress`` keyword (a ``progress(done, total)`` callable)."""
    try:
        return "progress" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def bars_enabled(rank: int, quiet: bool = False) -> bool:
    """Whether this process may draw progress bars: rank 0, not quiet, stderr a terminal."""
    if rank != 0 or quiet:
        return False
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class Progress:
    """One progress bar (a tqdm bar on rank 0 with a terminal, nothing otherwise).

    Use as a context manager; ``update`` advances it, ``callback(done, total)`` is the form that
    ``distbfs.generators.generate`` accepts, ``iterate`` wraps a loop.
    """

    def __init__(
        self,
        desc: str,
        *,
        total: float | None = None,
        enabled: bool = False,
        unit: str = "it",
        unit_scale: bool = False,
    ) -> None:
        self._bar: Any = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=desc,
                unit=unit,
                unit_scale=unit_scale,
                file=sys.stderr,
                leave=False,
                dynamic_ncols=True,
            )

    @property
    def active(self) -> bool:
        """True when a bar is actually drawn."""
        return self._bar is not None

    def update(self, n: float = 1) -> None:
        """Advance the bar by ``n``."""
        if self._bar is not None:
            self._bar.update(n)

    def callback(self, done: float, total: float) -> None:
        """Set the bar to ``done`` out of ``total`` (a ``progress(done, total)`` callable)."""
        if self._bar is not None:
            if self._bar.total != total:
                self._bar.total = total
            self._bar.n = done
            self._bar.refresh()

    def iterate(self, iterable: Iterable[T]) -> Iterator[T]:
        """Yield the items of ``iterable``, advancing the bar after each."""
        for item in iterable:
            yield item
            self.update(1)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def progress(
    rank: int,
    desc: str,
    *,
    total: float | None = None,
    quiet: bool = False,
    unit: str = "it",
    unit_scale: bool = False,
    enabled: bool = True,
) -> Progress:
    """A ``Progress`` bar, drawn only where ``enabled and bars_enabled(rank, quiet)`` holds."""
    return Progress(
        desc,
        total=total,
        enabled=enabled and bars_enabled(rank, quiet),
        unit=unit,
        unit_scale=unit_scale,
    )
