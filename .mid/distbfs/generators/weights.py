"""Weights of generated edges: ``uniform:LO:HI`` gives every edge an integer weight uniform in
``[LO, HI]``, a pure function of the seed and the undirected edge.

Parameter: one spec string, parsed and checked in one place (``parse_weight_spec``): integers
``0 <= LO <= HI <= MAX_WEIGHT`` (every such integer is exact in float64). Weight of edge
``(u, v)``: ``LO + h % (HI - LO + 1)`` with ``h = hashing.mix_pair(min(u, v), max(u, v))`` under
keys of ``(seed, TAG_WEIGHT)``: both directions of an undirected edge, and every duplicate
tuple of it, get the same weight, and a graph is bit-identical at any rank count and in either
array module (uint64 xor, multiply, add and modulo). The weights are made as float32 when
``HI <= 2**24`` (exact there), float64 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InvalidArgumentType, InvalidArgumentValue
from ..hashing import TAG_WEIGHT, derive_keys, mix_pair
from .chunks import EdgeChunk

WEIGHT_KINDS = ("uniform",)
MAX_WEIGHT = 2**53
"""Largest generated weight (integers up to it are exact in float64)."""
FLOAT32_EXACT = 2**24
"""Integers up to it are exact in float32."""


@dataclass(frozen=True)
class WeightSpec:
    """Integer edge weights uniform in ``[lo, hi]``."""

    lo: int
    hi: int

    def __str__(self) -> str:
        return f"uniform:{self.lo}:{self.hi}"

    @property
    def dtype(self) -> np.dtype:
        """dtype the weights are made in: float32 when every value is exact there."""
        return np.dtype(np.float32 if self.hi <= FLOAT32_EXACT else np.float64)


def parse_weight_spec(spec: Any, name: str = "weights") -> WeightSpec | None:
    """``spec`` (``"uniform:LO:HI"``, a WeightSpec or None: unweighted) checked; a bad one is an
    ``InvalidArgumentType``/``InvalidArgumentValue`` (``InputError``s) of one line naming
    ``name`` and the value."""
    if spec is None or isinstance(spec, WeightSpec):
        return spec
    if not isinstance(spec, str):
        raise InvalidArgumentType(
            f"{name}: expected a str 'uniform:LO:HI' or None, got {type(spec).__name__} {spec!r}"
        )
    kind, _, bounds = spec.partition(":")
    parts = bounds.split(":")
    wanted = "uniform:LO:HI with integers 0 <= LO <= HI <= 2**53"
    if kind not in WEIGHT_KINDS or len(parts) != 2:
        raise InvalidArgumentValue(f"{name}: expected {wanted}, got {spec!r}")
    try:
        lo, hi = (int(p) for p in parts)
    except ValueError:
        raise InvalidArgumentValue(f"{name}: expected {wanted}, got {spec!r}") from None
    if not 0 <= lo <= hi <= MAX_WEIGHT:
        raise InvalidArgumentValue(f"{name}: expected {wanted}, got {spec!r}")
    return WeightSpec(lo, hi)


def edge_weights(xp: Any, src: Any, dst: Any, spec: WeightSpec, seed: int) -> Any:
    """The weights (``spec.dtype``) of the edges ``src -> dst`` (int64 arrays in ``xp``)."""
    keys = derive_keys(seed, TAG_WEIGHT, 2)
    h = mix_pair(xp, xp.minimum(src, dst), xp.maximum(src, dst), keys)
    h %= np.uint64(spec.hi - spec.lo + 1)
    h += np.uint64(spec.lo)
    return h.astype(spec.dtype)


def weighted_chunk(xp: Any, chunk: EdgeChunk, spec: WeightSpec, seed: int) -> EdgeChunk:
    """``chunk`` with the weights of its edges as a third array."""

    def made(lo: int, hi: int) -> tuple[Any, Any, Any]:
        src, dst = chunk(lo, hi)
        return src, dst, edge_weights(xp, src, dst, spec, seed)

    return made
