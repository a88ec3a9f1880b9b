"""The parameters of the generators, checked once: the limits, the default seed, and one check
per parameter, each an ``InputError`` naming the parameter and the value (raised on every rank:
parameters are replicated).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

from ..errors import InputError
from ..hashing import MASK64

DEFAULT_SEED = 20120225
"""Seed of every generator when none is given (PPoPP 2012, where the paper appeared)."""

MAX_SCALE = 40
MAX_VERTICES = 2**MAX_SCALE
MAX_TUPLES = 2**62
"""Largest edge-tuple list (its index, scrambled, must stay a non-negative int64)."""


def integer(name: str, value: Any) -> int:
    """``value`` as an int (not a bool), or an InputError naming ``name``."""
    if isinstance(value, bool):
        raise InputError(f"{name} must be an integer, got {value!r}")
    try:
        return operator.index(value)
    except TypeError:
        raise InputError(f"{name} must be an integer, got {value!r}") from None


def check_scale(scale: Any, kind: str) -> int:
    """The scale of a random generator: an integer in 1..MAX_SCALE."""
    if scale is None:
        raise InputError(f"scale: the {kind} generator needs a scale (log2 of the vertex count)")
    value = integer("scale", scale)
    if not 1 <= value <= MAX_SCALE:
        raise InputError(f"scale must be in 1..{MAX_SCALE}, got {value}")
    return value


def check_edgefactor(edgefactor: Any, scale: int) -> int:
    """Tuples per vertex: at least 1, and at most MAX_TUPLES tuples in all."""
    value = integer("edgefactor", edgefactor)
    if value < 1:
        raise InputError(f"edgefactor must be at least 1, got {value}")
    if value << scale > MAX_TUPLES:
        raise InputError(f"edgefactor {value} at scale {scale} gives more than 2**62 edge tuples")
    return value


def check_seed(seed: Any) -> int:
    """A seed in [0, 2**64)."""
    value = integer("seed", seed)
    if not 0 <= value <= MASK64:
        raise InputError(f"seed must be in [0, 2**64), got {value}")
    return value


def check_shape(shape: Any, kind: str, dims: int) -> tuple[int, ...]:
    """A grid's extent: ``dims`` positive integers, at most MAX_VERTICES vertices."""
    example = ", ".join(("nx", "ny", "nz")[:dims])
    if shape is None:
        raise InputError(f"shape: the {kind} generator needs shape=({example})")
    try:
        values = tuple(shape)
    except TypeError:
        raise InputError(f"shape must be ({example}) for {kind}, got {shape!r}") from None
    if len(values) != dims:
        raise InputError(f"shape must have {dims} dimensions ({example}) for {kind}, got {shape!r}")
    out = tuple(integer("shape", s) for s in values)
    if min(out) < 1:
        raise InputError(f"shape must be positive in every dimension, got {shape!r}")
    if math.prod(out) > MAX_VERTICES:
        raise InputError(f"shape {shape!r} has more than 2**{MAX_SCALE} vertices")
    return out


def check_initiator(initiator: Sequence[float]) -> tuple[int, int, int]:
    """Integer thresholds (out of 2**31) for the cumulative sums A, A+B, A+B+C."""
    try:
        probs = [float(p) for p in initiator]
    except (TypeError, ValueError):
        raise InputError(f"initiator must be four probabilities, got {initiator!r}") from None
    total = sum(probs)
    if (
        len(probs) != 4
        or not all(math.isfinite(p) and p >= 0 for p in probs)
        or not (abs(total - 1.0) < 1e-6)
    ):
        raise InputError(f"initiator must be four probabilities summing to 1, got {initiator!r}")
    cum = (probs[0], probs[0] + probs[1], probs[0] + probs[1] + probs[2])
    return tuple(min(2**31, max(0, round(c / total * 2**31))) for c in cum)  # type: ignore[return-value]


def check_share(rank: int, size: int) -> tuple[int, int]:
    """(rank, size) of a rank's share of a tuple list."""
    rank, size = operator.index(rank), operator.index(size)
    if size < 1 or not 0 <= rank < size:
        raise ValueError(f"rank {rank} is not in a job of {size} ranks")
    return rank, size
