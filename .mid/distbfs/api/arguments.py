"""Argument checks of the public API, made once at the entry points (cuGraph's habit): each
error is a ``TypeError`` or ``ValueError`` subclass (``InvalidArgumentType``,
``InvalidArgumentValue``, also ``InputError``s, so the command line prints them as one line)
that names the argument and the bad value, raised identically on every rank.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from numbers import Integral, Real
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


def check_directed(value: Any) -> bool | None:
    """``directed`` of a constructor: True, False or None (as the input says)."""
    if value is not None and not isinstance(value, bool | np.bool_):
        raise InvalidArgumentType(
            f"directed: expected True, False or None, got {type(value).__name__} {value!r}"
        )
    return None if value is None else bool(value)


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


def host_weights(
    name: str, value: Any, where: Callable[[int], str] = lambda i: f"weight {i}"
) -> tuple[np.ndarray | None, tuple[str, str] | None]:
    """``value`` as host edge weights (float32 when given as float32, else float64), or the
    (kind, message) of what is wrong with it: not 1-d, not numbers, or an entry that is
    negative, NaN or infinite (``where(i)`` names entry ``i`` in the message)."""
    if hasattr(value, "get") and not isinstance(value, np.ndarray):  # cupy array
        value = value.get()
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:
        return None, ("type", f"{name}: expected an array of numbers as weights ({exc})")
    if array.ndim != 1:
        return None, ("value", f"{name}: expected a 1-d array of weights, got shape {array.shape}")
    if array.dtype.kind not in "biuf":  # objects (attributes of networkx edges), strings
        if not isinstance(value, np.ndarray):  # the items as given, not as numpy coerced them
            array = np.array(value, dtype=object)
        for i, item in enumerate(array.tolist()):
            if not isinstance(item, Real):
                return None, ("type", f"{name}: {where(i)} is {item!r}, not a number")
    weights = array.astype(np.float32 if array.dtype == np.float32 else np.float64)
    bad = ~np.isfinite(weights) | (weights < 0)
    if bad.any():
        i = int(np.argmax(bad))
        item = array[i : i + 1].tolist()[0]
        return None, (
            "value",
            f"{name}: {where(i)} is {item!r}: weights must be non-negative and finite",
        )
    weights += 0.0  # one zero: -0.0 + 0.0 is 0.0
    return weights, None


def edge_arrays(
    src: Any, dst: Any, weights: Any, num_vertices: Any
) -> tuple[Any, Any, Any, tuple[str, str] | None]:
    """(src, dst, weights, error) of ``from_edges``'s arguments on this rank: host int64 ids,
    host weights (None when not given) and the (kind, message) of the first thing wrong."""
    error: tuple[str, str] | None = None
    if num_vertices is not None:
        if not is_int(num_vertices):
            error = (
                "type",
                f"num_vertices: expected an integer, got "
                f"{type(num_vertices).__name__} {num_vertices!r}",
            )
        elif num_vertices < 0:
            error = ("value", f"num_vertices: expected an integer >= 0, got {num_vertices}")
    src_ids, src_error = host_ids("src", src)
    dst_ids, dst_error = host_ids("dst", dst)
    error = error or src_error or dst_error
    if error is None and src_ids.shape[0] != dst_ids.shape[0]:
        error = ("value", f"src, dst: lengths differ ({src_ids.shape[0]} != {dst_ids.shape[0]})")
    values = None
    if weights is not None:
        values, weights_error = host_weights("weights", weights, lambda i: f"weights[{i}]")
        error = error or weights_error
        if error is None and values.shape[0] != src_ids.shape[0]:
            error = (
                "value",
                f"weights: {values.shape[0]} weights for {src_ids.shape[0]} edges",
            )
    return src_ids, dst_ids, values, error


def scipy_matrix(matrix: Any) -> Any:
    """``matrix`` checked to be a square sparse matrix or array, as a scipy.sparse one: a
    cupyx.scipy.sparse matrix is copied to the host (cupyx imported only for its objects)."""
    if type(matrix).__module__.partition(".")[0] == "cupyx":
        import cupyx.scipy.sparse as device_sparse

        if device_sparse.issparse(matrix):
            matrix = matrix.get()
    import scipy.sparse as sp

    if not sp.issparse(matrix):
        raise InvalidArgumentType(
            f"matrix: expected a scipy.sparse or cupyx.scipy.sparse matrix or array, got "
            f"{type(matrix).__name__}"
        )
    if len(matrix.shape) != 2 or matrix.shape[0] != matrix.shape[1]:
        raise InvalidArgumentValue(f"matrix: expected a square matrix, got shape {matrix.shape}")
    return matrix


def is_symmetric(rows: np.ndarray, cols: np.ndarray, n: int, values: Any = None) -> bool:
    """True when the n x n matrix of the entries (rows, cols) is symmetric: its pattern, and
    with ``values`` its values too (of duplicate entries the smallest, as the graph keeps)."""
    import scipy.sparse as sp

    if values is not None and rows.shape[0]:
        order = np.lexsort((values, cols, rows))
        rows, cols, values = rows[order], cols[order], values[order]
        first = np.ones(rows.shape[0], dtype=bool)
        first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
        rows, cols, values = rows[first], cols[first], values[first]
    pattern = sp.csr_matrix((np.ones(rows.shape[0], dtype=np.int8), (rows, cols)), shape=(n, n))
    pattern.sum_duplicates()
    pattern.data[:] = 1
    if (pattern != pattern.T).nnz != 0:
        return False
    if values is None:
        return True
    matrix = sp.csr_matrix((values, (rows, cols)), shape=(n, n))
    return (matrix != matrix.T).nnz == 0


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


def check_sources(value: Any, n: int, name: str = "source", *, distinct: bool = True) -> np.ndarray:
    """``value`` (a vertex id, or a non-empty sequence or array of them) as the distinct vertex
    ids of a graph of ``n`` vertices, sorted (host int64): duplicates are one source. With
    ``distinct=False``: every id in the order given, duplicates kept.

    Raises
    ------
    TypeError
        ``value`` or one of its entries is not an integer.
    ValueError
        An entry is outside ``[0, n)`` ("<name>: vertex 99 is out of range for a graph of 10
        vertices"; the first such entry), or there are none.
    """
    if is_int(value) or (not isinstance(value, list | tuple | range) and np.ndim(value) == 0):
        return np.array([check_vertex(value, n, name)], dtype=np.int64)
    ids, error = host_ids(name, value)
    if error is not None:
        raise_first([error])
    if ids.shape[0] == 0:
        raise InvalidArgumentValue(f"{name}: expected at least one vertex id, got none")
    outside = np.flatnonzero((ids < 0) | (ids >= n))
    if outside.shape[0]:
        check_vertex(int(ids[outside[0]]), n, name)
    return np.unique(ids) if distinct else ids.astype(np.int64, copy=False)


def agreed_sources(
    comm: Communicator, value: Any, n: int, name: str = "source", *, distinct: bool = True
) -> np.ndarray:
    """``check_sources`` on every rank, the same sources on every rank (collective: one
    all-gather of a digest); the first rank's error is raised on every rank."""
    error: tuple[str, str] | None = None
    ids = np.zeros(0, dtype=np.int64)
    try:
        ids = check_sources(value, n, name, distinct=distinct)
    except InputError as exc:
        error = ("type" if isinstance(exc, TypeError) else "value", str(exc))
    digest = (ids.shape[0], zlib.crc32(ids.tobytes()), ids[:8].tolist())
    agreed = comm.allgather_object((error, None if error else digest))
    raise_first([item[0] for item in agreed])
    if len({(size, crc) for size, crc, _ in (item[1] for item in agreed)}) > 1:
        given = [
            first[0] if size == 1 else f"{size} vertices"
            for size, _, first in (item[1] for item in agreed)
        ]
        raise InvalidArgumentValue(f"{name}: ranks passed different sources {given}")
    return ids


def check_depth_limit(value: Any) -> int | None:
    """``depth_limit``: None (no limit) or an integer >= 0."""
    return None if value is None else check_int("depth_limit", value, minimum=0)


def check_max_distance(value: Any) -> float | None:
    """``max_distance``: None (no limit) or a number >= 0 (inf: no limit)."""
    if value is None:
        return None
    number = isinstance(value, Real) and not isinstance(value, bool | np.bool_)
    if not number or not float(value) >= 0:
        raise InvalidArgumentValue(f"max_distance: expected a number >= 0, got {value!r}")
    return float(value)


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
