"""Argument checks of the public API, made once at the entry points (cuGraph's habit): each
error is a ``TypeError`` or ``ValueError`` subclass (``InvalidArgumentType``,
``InvalidArgumentValue``, also ``InputError``s, so the command line prints them as one line)
that names the argument and the bad value, raised identically on every rank.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

import numpy as np

from ..comm.base import Communicator
from ..errors import InputError, InvalidArgumentType, InvalidArgumentValue

_ERROR_KINDS: dict[str, type[InputError]] = {
    "type": InvalidArgumentType,
    "value": InvalidArgumentValue,
}


def raise_agreed(comm: Communicator, error: tuple[str, str] | None) -> None:
    """Raise the first rank's argument error on every rank (collective; one all-gather).

    ``error`` is ``(kind, message)`` with kind "type" or "value", or None on a rank without one.
    """
    raise_first(comm.allgather_object(error))


def raise_first(errors: list[tuple[str, str] | None]) -> None:
    """Raise the first of the ranks' argument errors, if any."""
    for item in errors:
        if item is not None:
            raise _ERROR_KINDS[item[0]](item[1])


def is_int(value: Any) -> bool:
    return isinstance(value, Integral) and not isinstance(value, bool | np.bool_)


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    if not is_int(value):
        raise InvalidArgumentType(
            f"{name}: expected an integer, got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if minimum is not None and value < minimum:
        raise InvalidArgumentValue(f"{name}: expected an integer >= {minimum}, got {value}")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool | np.bool_):
        raise InvalidArgumentType(
            f"{name}: expected True or False, got {type(value).__name__} {value!r}"
        )
    return bool(value)


def check_vertex(value: Any, n: int, name: str = "source") -> int:
    """``value`` as a vertex id of a graph of ``n`` vertices.

    Raises
    ------
    TypeError
        ``value`` is not an integer.
    ValueError
        ``value`` is outside ``[0, n)``: "<name>: vertex 99 is out of range for a graph of 10
        vertices".
    """
    if not is_int(value):
        raise InvalidArgumentType(
            f"{name}: expected an integer vertex id, got {type(value).__name__} {value!r}"
        )
    value = int(value)
    if not 0 <= value < n:
        raise InvalidArgumentValue(
            f"{name}: vertex {value} is out of range for a graph of {n} vertices"
        )
    return value


def host_ids(name: str, value: Any) -> tuple[np.ndarray | None, tuple[str, str] | None]:
    """``value`` as a host int64 1-d array, or the (kind, message) of what is wrong with it."""
    if hasattr(value, "get") and not isinstance(value, np.ndarray):  # cupy array
        value = value.get()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        return None, ("type", f"{name}: expected an array of integer vertex ids ({exc})")
    if array.ndim != 1:
        return None, ("value", f"{name}: expected a 1-d array, got shape {array.shape}")
    if array.size and (array.dtype.kind not in "iu"):
        return None, (
            "type",
            f"{name}: expected integer vertex ids, got dtype {array.dtype}",
        )
    if array.dtype.kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        return None, ("value", f"{name}: vertex id {int(array.max())} is too large")
    return array.astype(np.int64, copy=False), None


def local_share(comm: Communicator, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """This rank's share (entries rank::size) of arrays every rank holds in full."""
    return tuple(np.ascontiguousarray(a[comm.rank :: comm.size]) for a in arrays)


def check_generator(
    kind: Any, scale: Any, edgefactor: Any, shape: Any
) -> tuple[int | None, int, tuple[int, ...] | None]:
    """(scale, edgefactor, shape) checked against the generator ``kind``: the random ones take
    a scale (and an edge factor), the grids a shape of 2 or 3 dimensions."""
    from .. import generators

    if not isinstance(kind, str):
        raise InvalidArgumentType(f"kind: expected a str, got {type(kind).__name__}")
    if kind not in generators.GENERATORS:
        raise InvalidArgumentValue(
            f"kind: unknown generator {kind!r} (choose from {', '.join(generators.GENERATORS)})"
        )
    if kind in ("kronecker", "uniform"):
        if scale is None:
            raise InvalidArgumentValue(f"scale: required for the {kind} generator")
        if shape is not None:
            raise InvalidArgumentValue(f"shape: not used by the {kind} generator")
        return (
            check_int("scale", scale, minimum=1),
            check_int("edgefactor", edgefactor, minimum=1),
            None,
        )
    dims = 2 if kind == "grid2d" else 3
    if shape is None:
        raise InvalidArgumentValue(f"shape: required for the {kind} generator")
    if not isinstance(shape, tuple | list) or len(shape) != dims:
        raise InvalidArgumentValue(f"shape: {kind} needs {dims} dimensions, got {shape!r}")
    if scale is not None:
        raise InvalidArgumentValue(f"scale: not used by the {kind} generator")
    return None, edgefactor, tuple(check_int("shape", d, minimum=1) for d in shape)


def check_thresholds(alpha: Any, beta: Any) -> dict[str, float]:
    """The direction heuristic's thresholds a caller gave (None: the default), as plan
    keywords: alpha >= 0, beta > 0."""
    options: dict[str, float] = {}
    for name, value, bound in (("alpha", alpha, ">= 0"), ("beta", beta, "> 0")):
        if value is None:
            continue
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not (value > 0 if name == "beta" else value >= 0):
            raise InvalidArgumentValue(f"{name}: expected a number {bound}, got {value!r}")
        options[name] = float(value)
    return options


def agreed_vertex(comm: Communicator, value: Any, n: int, name: str = "source") -> int:
    """``value`` checked as a vertex of a graph of ``n`` vertices, and the same on every rank
    (collective: one all-gather); the first rank's error is raised on every rank."""
    error: tuple[str, str] | None = None
    try:
        value = check_vertex(value, n, name)
    except InputError as exc:
        error = ("type" if isinstance(exc, TypeError) else "value", str(exc))
    agreed = comm.allgather_object((error, None if error else value))
    raise_first([item[0] for item in agreed])
    values = [item[1] for item in agreed]
    if len(set(values)) > 1:
        raise InvalidArgumentValue(f"{name}: ranks passed different sources {values}")
    return int(value)
