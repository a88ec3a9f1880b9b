"""How the levels of a search run (Merrill et al. 2012, section 5; Beamer et al. 2012), and the
direction heuristic's thresholds: checked once, when a ``SearchPlan`` is built.

- ``two_phase``: every level as separate stages (expand, filter_partition, exchange, contract).
- ``contract_expand``: every level the backend's fused path takes (CUDA: one cooperative grid
  running many levels, one grid barrier a level).
- ``hybrid``: the fused path for small frontiers (``backend.small_frontier_limit``), two phases
  for the others.
- ``direction_optimizing``: each level top-down (as ``hybrid`` runs it) or bottom-up, as
  ``distbfs.engine.direction.choose_direction`` decides; needs a backend with bottom-up stages.
"""

from __future__ import annotations

import numbers
from enum import Enum
from typing import Any

from ..errors import InvalidArgumentValue


class NamedChoice(str, Enum):
    """An enum of named choices that compares equal to, prints and formats as its name."""

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class Strategy(NamedChoice):
    """A level strategy (``Strategy.HYBRID == "hybrid"``)."""

    TWO_PHASE = "two_phase"
    CONTRACT_EXPAND = "contract_expand"
    HYBRID = "hybrid"
    DIRECTION_OPTIMIZING = "direction_optimizing"


STRATEGIES = tuple(s.value for s in Strategy)
"""The strategy names, for argument parsers and messages."""

DEFAULT_ALPHA = 15.0
"""Top-down -> bottom-up when the frontier's edges exceed the unexplored edges / alpha (GAP;
larger: earlier bottom-up)."""
DEFAULT_BETA = 18.0
"""Bottom-up -> top-down when the shrinking frontier holds fewer than n / beta vertices (GAP)."""

BOTTOM_UP_METHODS = ("frontier_edges", "frontier_bitmap", "bottom_up", "unexplored")


def supports_bottom_up(backend: Any) -> bool:
    """Whether ``backend`` has the stages of bottom-up levels (``BOTTOM_UP_METHODS``)."""
    return all(callable(getattr(backend, name, None)) for name in BOTTOM_UP_METHODS)


def default_strategy(backend: Any) -> Strategy:
    """``direction_optimizing`` where the backend has bottom-up stages, else ``hybrid``."""
    if supports_bottom_up(backend):
        return Strategy.DIRECTION_OPTIMIZING
    return Strategy.HYBRID


def check_strategy(strategy: Any, backend: Any) -> Strategy:
    """``strategy`` (a name, a ``Strategy`` or None for the backend's default) as a ``Strategy``
    the backend can run; ``ValueError`` naming the argument otherwise."""
    if strategy is None:
        return default_strategy(backend)
    try:
        chosen = Strategy(strategy)
    except ValueError:
        raise InvalidArgumentValue(
            f"strategy: unknown strategy {strategy!r} (choose from {', '.join(STRATEGIES)})"
        ) from None
    if chosen is Strategy.DIRECTION_OPTIMIZING and not supports_bottom_up(backend):
        raise InvalidArgumentValue(
            f"strategy: direction_optimizing is not available on the {backend.name} backend "
            "(it has no bottom-up stages); use hybrid"
        )
    return chosen


def check_thresholds(alpha: Any, beta: Any) -> tuple[float, float]:
    """(alpha, beta) as floats: alpha >= 0 (0: never bottom-up), beta > 0 (inf allowed for
    both); ``ValueError`` naming the argument and the value otherwise."""
    for name, value, bound in (("alpha", alpha, ">= 0"), ("beta", beta, "> 0")):
        number = isinstance(value, numbers.Real) and not isinstance(value, bool)
        if not number or not (value > 0 if name == "beta" else value >= 0):
            raise InvalidArgumentValue(f"{name}: expected a number {bound}, got {value!r}")
    return float(alpha), float(beta)
