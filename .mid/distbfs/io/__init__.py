"""Graph input and output: Matrix Market, SNAP edge lists, METIS (each optionally gzipped), and
the native binary CSR directory. Every reader is collective and distributed: each rank reads
only its share of the file (a byte range of a text file, its striped rows of a native graph)
and ``build_graph`` assembles the striped CSR. Weights come from the formats that carry them
(Matrix Market ``integer``/``real`` values, a third edge-list column, METIS edge weights, the
native ``weights.npy``); a file without them gives an unweighted graph. Errors reach every rank
as the same ``InputError``/``GraphFormatError`` ("PATH:LINE: message"), found before the graph
is built.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..comm.base import Communicator
from ..errors import InputError, agree_on_errors
from ..graph import DistGraph, build_graph
from .edgelist import EdgeListFormat
from .metis import MetisFormat
from .mtx import MatrixMarketFormat
from .native import (
    COLUMN_INDICES,
    ROW_OFFSETS,
    WEIGHTS,
    Relabeling,
    is_native,
    read_native,
    read_relabeling,
    write_native,
)
from .text import TextFormat, read_text

FORMATS = ("mtx", "edgelist", "metis", "native")
SUFFIXES = {
    ".mtx": "mtx",
    ".txt": "edgelist",
    ".el": "edgelist",
    ".edges": "edgelist",
    ".graph": "metis",
}
TEXT_FORMATS: dict[str, TextFormat] = {
    "mtx": MatrixMarketFormat(),
    "edgelist": EdgeListFormat(),
    "metis": MetisFormat(),
}


@dataclass
class LoadInfo:
    """How a graph was loaded: its format, the bytes of its files on disk (compressed size for
    ``.gz``), the seconds from opening to the finished distributed CSR (slowest rank), and a
    reordered native graph's original ids (``relabeling``; None otherwise)."""

    format: str
    bytes: int
    seconds: float
    relabeling: Relabeling | None = None

    @property
    def mb_per_s(self) -> float:
        """Megabytes (10**6 bytes) of input per second."""
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else float("inf")


def detect_format(path: str) -> str:
    """The format of ``path`` from its suffix (``.gz`` aside) or, for a directory, its header.

    Raises ``InputError`` naming the file when it does not exist or its suffix is unknown.
    """
    path = os.fspath(path)
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file or directory")
    if os.path.isdir(path):
        if is_native(path):
            return "native"
        raise InputError(f"{path}: a directory without header.json (not a native graph)")
    base = path[:-3] if path.lower().endswith(".gz") else path
    fmt = SUFFIXES.get(os.path.splitext(base)[1].lower())
    if fmt is None:
        known = ", ".join(sorted(SUFFIXES))
        raise InputError(
            f"{path}: unknown graph format (known suffixes: {known}, each optionally "
            "+ .gz, or a native directory); name the format explicitly"
        )
    return fmt


def _input_bytes(path: str, fmt: str) -> int:
    if fmt == "native":
        files = [os.path.join(path, f) for f in (ROW_OFFSETS, COLUMN_INDICES, WEIGHTS)]
        return sum(os.path.getsize(f) for f in files if os.path.exists(f))
    return os.path.getsize(path)


def read_graph(
    path: str,
    comm: Communicator,
    *,
    fmt: str | None = None,
    directed: bool | None = None,
    xp: Any = np,
    progress: Callable[[float, float], None] | None = None,
) -> tuple[DistGraph, LoadInfo]:
    """Read a graph file collectively into this rank's share of the striped CSR.

    Parameters
    ----------
    path : str
        A ``.mtx``, ``.txt``/``.el``/``.edges`` or ``.graph`` file (each optionally ``.gz``), or a
        native graph directory.
    comm : Communicator
        The job's ranks; every rank calls this with the same arguments.
    fmt : str, optional
        One of ``FORMATS``; detected from the path when omitted.
    directed : bool, optional
        None: as the file says; False: store every edge in both directions whatever the file
        says; True: directed, which a file undirected by definition (symmetric Matrix Market,
        METIS, a native graph recorded undirected) refuses with an ``InvalidArgumentValue``
        naming the argument and what the file is.
    xp : module
        Array module of the built graph (numpy or cupy).
    progress : callable, optional
        ``progress(done, total)``, called on each rank as it parses its share of a text file
        (bytes of its range); never inside a collective.

    Returns
    -------
    (DistGraph, LoadInfo)
        The graph weighted when the file carries weights.

    Raises
    ------
    InputError, GraphFormatError
        The same error on every rank, naming the file (and line) at fault.
    """
    start = time.perf_counter()
    path = os.fspath(path)
    with agree_on_errors(comm):
        if fmt is not None and fmt not in FORMATS:
            raise InputError(f"unknown graph format {fmt!r} (choose from {', '.join(FORMATS)})")
        if not os.path.exists(path):
            raise InputError(f"{path}: no such file or directory")
        fmt = fmt or detect_format(path)
        if fmt != "native" and os.path.isdir(path):
            raise InputError(f"{path}: is a directory, not a {fmt} file")
        if fmt == "native" and not is_native(path):
            raise InputError(f"{path}: not a native graph directory (no header.json)")
        size = _input_bytes(path, fmt)
    relabeling = None
    if fmt == "native":
        graph = read_native(path, comm, directed=directed, xp=xp)
        relabeling = read_relabeling(path, comm)
    else:
        share = read_text(TEXT_FORMATS[fmt], path, comm, progress, directed=directed)
        graph = build_graph(
            comm,
            share.src,
            share.dst,
            share.n,
            directed=share.directed,
            xp=xp,
            weights=share.weights,
        )
    seconds = comm.allreduce(time.perf_counter() - start, op="max")
    return graph, LoadInfo(fmt, size, seconds, relabeling)


__all__ = ["FORMATS", "LoadInfo", "Relabeling", "detect_format", "read_graph", "write_native"]
