"""Backends: the array module and the stages of a traversal's levels, one module per stage.

``numpy`` runs them on the host (CPU ranks, and the reference every other backend is compared
with); ``cuda`` runs the CUDA kernels of ``kernels/`` on the rank's GPU. ``base`` holds the
interface. Which backend a job runs is decided in one place, ``distbfs.runtime.get_backend``.
"""

from __future__ import annotations

from .base import Backend, EdgeFrontier, SearchState

__all__ = ["Backend", "EdgeFrontier", "SearchState"]
