"""The framework engine every traversal runs on: the per-graph ``GraphResources`` (backend
resources, in-neighbours, replica, peer mailbox) and ``SearchPlan`` (strategy checks, fused
path), the direction heuristic and termination test, the fused small-frontier paths and
per-level statistics. Nothing here imports cupy or mpi4py:
stages come from a backend (``distbfs.backends``), exchanges from a communicator
(``distbfs.comm``)."""

from .direction import BOTTOM_UP, TOP_DOWN, Direction, FrontierCounts, choose_direction
from .levels import COUNTERS, LevelStats
from .plan import SHARE_FRONTIER, GraphResources, SearchPlan
from .strategy import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    STRATEGIES,
    Strategy,
    check_strategy,
    default_strategy,
    supports_bottom_up,
)

__all__ = [
    "BOTTOM_UP",
    "COUNTERS",
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "SHARE_FRONTIER",
    "STRATEGIES",
    "TOP_DOWN",
    "Direction",
    "FrontierCounts",
    "GraphResources",
    "LevelStats",
    "SearchPlan",
    "Strategy",
    "check_strategy",
    "choose_direction",
    "default_strategy",
    "supports_bottom_up",
]
