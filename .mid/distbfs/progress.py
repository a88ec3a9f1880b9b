"""Progress of long steps (generation, loading, the multi-root loop), on rank 0 only.

On a terminal a bar is drawn, kept when the step ends, and refreshed every second while the step
runs, so time spent after the counted work (building the graph once its edges are made) still
shows. When stderr is not a terminal (a batch job's log), a step that runs for more than
``LINE_SECONDS`` prints one line per ``LINE_SECONDS`` (``generating kronecker: 45%, 12 s``) and
one when it ends; shorter steps print nothing, so short runs' output stays clean. Never with
``--quiet``; every other rank, and every disabled step, gets a ``Progress`` whose methods do
nothing, so callers never branch on the rank.
"""

from __future__ import annotations

import inspect
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

LINE_SECONDS = 10.0
"""A non-terminal stderr gets a progress line this often while a step runs."""


def accepts_progress(function: Callable[..., Any]) -> bool:
    """Whether ``function`` takes a ``progress`` keyword (a ``progress(done, total)`` callable)."""
    try:
        return "progress" in inspect.signature(function).parameters
    except (TypeError, ValueError):
        return False


def bars_enabled(rank: int, quiet: bool = False) -> bool:
    """Whether this process may draw progress bars: rank 0, not quiet, stderr a terminal."""
    return rank == 0 and not quiet and _terminal()


def _terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):  # replaced or closed stderr
        return False


class Progress:
    """One step's progress: a tqdm bar (``bar``), periodic lines (``lines``), or nothing.

    Use as a context manager; ``update`` advances it, ``callback(done, total)`` is the form that
    ``distbfs.generators.generate`` accepts, ``iterate`` wraps a loop. A heartbeat thread
    refreshes the bar every second, or prints a line every ``LINE_SECONDS``.
    """

    def __init__(
        self,
        desc: str,
        *,
        total: float | None = None,
        enabled: bool = False,
        unit: str = "it",
        unit_scale: bool = False,
        lines: bool = False,
    ) -> None:
        self._bar: Any = None
        self._desc, self._total, self._done = desc, total, 0.0
        self._lines = lines and not enabled
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._beat: threading.Thread | None = None
        if enabled:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                desc=desc,
                unit=unit,
                unit_scale=unit_scale,
                file=sys.stderr,
                dynamic_ncols=True,
            )
        if self._bar is not None or self._lines:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()

    @property
    def active(self) -> bool:
        """True when progress is reported (a bar, or lines)."""
        return self._beat is not None

    def update(self, n: float = 1) -> None:
        """Advance by ``n``."""
        with self._lock:
            self._done += n
            if self._bar is not None:
                self._bar.update(n)

    def callback(self, done: float, total: float) -> None:
        """Set the progress to ``done`` out of ``total`` (a ``progress(done, total)`` callable)."""
        with self._lock:
            self._done, self._total = done, total
            if self._bar is not None:
                if self._bar.total != total:
                    self._bar.total = total
                self._bar.n = done
                self._bar.refresh()

    def iterate(self, iterable: Iterable[T]) -> Iterator[T]:
        """Yield the items of ``iterable``, advancing after each."""
        for item in iterable:
            yield item
            self.update(1)

    def _heartbeat(self) -> None:
        period = 1.0 if self._bar is not None else LINE_SECONDS
        while not self._stop.wait(period):
            with self._lock:
                if self._bar is not None:
                    self._bar.refresh()
                else:
                    print(self._line(), file=sys.stderr, flush=True)

    def _line(self) -> str:
        elapsed = time.monotonic() - self._started
        if self._total:
            return f"{self._desc}: {100 * self._done / self._total:.0f}%, {elapsed:.0f} s"
        return f"{self._desc}: {self._done:,.0f}, {elapsed:.0f} s"

    def close(self) -> None:
        if self._beat is None:
            return
        self._stop.set()
        self._beat.join()
        self._beat = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif time.monotonic() - self._started > LINE_SECONDS:
            print(f"{self._line()} (done)", file=sys.stderr, flush=True)

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
    """A ``Progress``: a bar where ``enabled and bars_enabled(rank, quiet)`` holds, periodic
    lines on rank 0 when stderr is not a terminal (not quiet), nothing elsewhere."""
    report = enabled and rank == 0 and not quiet
    return Progress(
        desc,
        total=total,
        enabled=report and _terminal(),
        unit=unit,
        unit_scale=unit_scale,
        lines=report and not _terminal(),
    )
