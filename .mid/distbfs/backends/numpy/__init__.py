"""The host backend: the stages of a traversal's levels as vectorized numpy, one module per
stage (``expand``, ``filter_partition``, ``contract``, ``bottom_up``; ``search``: the per-graph
resources and a search's start). It runs CPU ranks and is the reference every other backend is
compared with."""

from __future__ import annotations

from .backend import NumpyBackend

__all__ = ["NumpyBackend"]
