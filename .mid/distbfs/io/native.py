"""The native binary graph format: the finished global CSR in a directory, read without exchange.

Layout of ``PATH/``: ``header.json`` ({"format": "distbfs-csr", "version", "n", "num_edges",
"directed", "index_dtype"}, and "weight_dtype" for a weighted graph), ``row_offsets.npy`` (int64,
n + 1), ``column_indices.npy`` (``index_dtype``, num_edges) and, for a weighted graph only,
``weights.npy`` (``weight_dtype``, float32 or float64, num_edges, aligned with the columns): the
CSR as ``build_graph`` leaves it (rows sorted, no duplicates, no self-loops, both directions of
undirected edges). A graph relabeled by ``distbfs reorder`` also holds ``original_ids.npy``
(int64, n: the original id of each vertex) and the header's "reordered" (the order's name).
An unweighted graph is version 1, a weighted one version 2 (a reader that knows only version 1
refuses it rather than drop its weights). A compressed graph (``--compress`` on generate and
convert) is version 3, with "columns": "varint": ``column_bytes.npy`` (uint8) and
``column_byte_offsets.npy`` (int64, n + 1) hold every row's neighbours as ``distbfs.compressed``
codes them, in place of ``column_indices.npy``; its weights are optional as the header says.
Such rows are read compressed, on every backend (the CUDA backend takes the host-held codes to
the device as they are: ``CudaBackend.compress_graph``). Reading: every rank memory-maps the
files and copies only its striped rows ``r, r + p, r + 2p, ...`` with one vectorized multi-range
gather (the weights with the same gather). Writing (collective, no rank gathers the graph): rank
0 creates the files at full size in a temporary sibling directory; each rank writes its degrees
at its striped positions of ``row_offsets``; each rank turns one contiguous block of degrees
into offsets (a local cumsum plus an exscan of block totals); each rank then writes its rows'
column (and weight) segments; rank 0 writes ``header.json`` last and renames the directory into
place. The directory and its files are created with the permissions the umask gives (as any
other output), not private ones. The ranks share the files through memory maps, which needs a
file system coherent between them (one host, or a POSIX-coherent parallel file system; not NFS).
"""

from __future__ import annotations

import json
import os
import shutil
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import as_host
from ..comm.base import Communicator
from ..compressed import CompressedColumns, byte_offset_dtype
from ..constants import ROW_OFFSET_DTYPE, WEIGHT_DTYPES, vertex_dtype
from ..errors import GraphFormatError, InputError, agree_on_errors
from ..graph import DistGraph, build_graph
from ..output import temp_name
from ..partition import global_id, num_local
from .text import agreed_directed

FORMAT_NAME = "distbfs-csr"
VERSION = 1
"""Version of an unweighted graph's directory."""
WEIGHTED_VERSION = 2
"""Version of a weighted graph's directory (it has ``weights.npy``)."""
COMPRESSED_VERSION = 3
"""Version of a directory with compressed columns (``weights.npy`` when weighted)."""
HEADER = "header.json"
ROW_OFFSETS = "row_offsets.npy"
COLUMN_INDICES = "column_indices.npy"
COLUMN_BYTES = "column_bytes.npy"
COLUMN_BYTE_OFFSETS = "column_byte_offsets.npy"
WEIGHTS = "weights.npy"
ORIGINAL_IDS = "original_ids.npy"


@dataclass(frozen=True)
class Relabeling:
    """A reordered graph's ids: ``original_ids[v]`` is the id vertex ``v`` had before
    ``order`` relabeled it (``distbfs.reorder``)."""

    order: str
    original_ids: np.ndarray

    def new_ids(self, original: np.ndarray) -> np.ndarray:
        """The ids now carried by the ``original`` ones."""
        inverse = np.empty_like(self.original_ids)
        inverse[self.original_ids] = np.arange(self.original_ids.shape[0])
        return inverse[original]


def is_native(path: str) -> bool:
    """True when ``path`` is a directory holding a native header."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, HEADER))


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenation of ``arange(s, s + l)`` for every (start, length), vectorized."""
    total = int(lengths.sum())
    before = np.cumsum(lengths) - lengths
    return np.arange(total, dtype=np.int64) - np.repeat(before - starts, lengths)


@contextmanager
def _os_errors(path: str, doing: str) -> Iterator[None]:
    """Turn operating-system errors into (rank-local) input errors naming the path."""
    try:
        yield
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot {doing}: {exc}", all_ranks=False) from None


def _read_header(path: str) -> dict[str, Any]:
    try:
        with open(os.path.join(path, HEADER)) as f:
            header = json.load(f)
    except (OSError, ValueError) as exc:
        raise GraphFormatError(os.path.join(path, HEADER), f"cannot read: {exc}") from None
    where = os.path.join(path, HEADER)
    if not isinstance(header, dict) or header.get("format") != FORMAT_NAME:
        raise GraphFormatError(where, f"not a {FORMAT_NAME} header")
    version = header.get("version")
    if version not in (VERSION, WEIGHTED_VERSION, COMPRESSED_VERSION):
        raise GraphFormatError(
            where,
            f"unsupported version {version!r} (this reader knows versions {VERSION} to "
            f"{COMPRESSED_VERSION})",
        )
    if (version == COMPRESSED_VERSION) != (header.get("columns") == "varint"):
        raise GraphFormatError(
            where, f"bad columns {header.get('columns')!r} for version {version}"
        )
    for key, kind in (("n", int), ("num_edges", int), ("directed", bool), ("index_dtype", str)):
        if not isinstance(header.get(key), kind) or (kind is int and header[key] < 0):
            raise GraphFormatError(where, f"missing or bad field {key!r}")
    if header["index_dtype"] not in ("int32", "int64"):
        raise GraphFormatError(where, f"bad index_dtype {header['index_dtype']!r}")
    weights = header.get("weight_dtype")
    required = {VERSION: False, WEIGHTED_VERSION: True}.get(version)  # version 3: either
    if (required is not None and required != (weights is not None)) or (
        weights is not None and weights not in [d.name for d in WEIGHT_DTYPES]
    ):
        raise GraphFormatError(where, f"bad weight_dtype {weights!r} for version {version}")
    return header


def _load(path: str, name: str, dtype: Any, length: int, mode: str = "r") -> np.ndarray:
    file = os.path.join(path, name)
    try:
        array = np.load(file, mmap_mode=mode)
    except (OSError, ValueError) as exc:
        raise GraphFormatError(file, f"cannot read: {exc}") from None
    if array.dtype != np.dtype(dtype) or array.shape != (length,):
        raise GraphFormatError(
            file,
            f"expected {np.dtype(dtype)} of shape ({length},), found "
            f"{array.dtype} of shape {array.shape}",
        )
    return array


def read_native(
    path: str, comm: Communicator, *, directed: bool | None = None, xp: Any = np
) -> DistGraph:
    """Read this rank's striped rows (and their weights) of a native graph directory
    (collective). ``directed``: None as recorded; False symmetrizes a directed graph (rebuilt
    through ``build_graph``); True on a graph recorded undirected is an error naming it."""
    rank, p = comm.rank, comm.size
    with agree_on_errors(comm):
        header = _read_header(path)
        n, num_edges = header["n"], header["num_edges"]
        offsets = _load(path, ROW_OFFSETS, ROW_OFFSET_DTYPE, n + 1)
        nlocal = num_local(n, p, rank)
        starts = np.array(offsets[rank:n:p][:nlocal])
        lengths = np.array(offsets[rank + 1 :: p][:nlocal]) - starts
        if offsets[0] != 0 or offsets[n] != num_edges or (lengths < 0).any():
            raise GraphFormatError(
                os.path.join(path, ROW_OFFSETS), "row offsets are not a CSR of num_edges entries"
            )
        row_offsets = np.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)
        np.cumsum(lengths, out=row_offsets[1:])
        if header["version"] == COMPRESSED_VERSION:
            local = _local_compressed(path, header, row_offsets, rank, p)
        else:
            local = _local_columns(path, header, starts, lengths, row_offsets, p)
        del offsets
        weights = _local_weights(path, header, starts, lengths, p)
    stored = header["directed"]
    directed = agreed_directed(path, stored, "a native graph recorded as undirected", directed)
    if stored and not directed:
        src = np.repeat(global_id(np.arange(nlocal, dtype=np.int64), rank, p), lengths)
        dst = np.asarray(local).astype(np.int64)
        return build_graph(comm, src, dst, n, directed=False, xp=xp, weights=weights)
    if xp is not np:  # compressed columns stay on the host: the backend adopts them
        weights = None if weights is None else xp.asarray(weights)
        row_offsets = xp.asarray(row_offsets)
        if not isinstance(local, CompressedColumns):
            local = xp.asarray(local)
    return DistGraph(n, num_edges, directed, rank, p, row_offsets, local, weights)


def _local_columns(
    path: str,
    header: dict[str, Any],
    starts: np.ndarray,
    lengths: np.ndarray,
    row_offsets: np.ndarray,
    p: int,
) -> np.ndarray:
    """This rank's columns of a plain graph (rows at ``starts`` of ``lengths``), checked."""
    n = header["n"]
    columns = _load(path, COLUMN_INDICES, header["index_dtype"], header["num_edges"])
    local = np.array(columns) if p == 1 else columns[ranges(starts, lengths)]
    local = local.astype(vertex_dtype(n), copy=False)
    rising = np.diff(local.astype(np.int64)) > 0
    row_starts = row_offsets[1:-1]
    rising[row_starts[(row_starts > 0) & (row_starts < local.size)] - 1] = True  # new row
    if local.size and (local.min() < 0 or local.max() >= n or not rising.all()):
        raise GraphFormatError(
            os.path.join(path, COLUMN_INDICES),
            "column indices out of range or rows not sorted and unique",
        )
    return local


def _local_compressed(
    path: str, header: dict[str, Any], row_offsets: np.ndarray, rank: int, p: int
) -> CompressedColumns:
    """This rank's rows of a compressed graph, their bytes gathered and checked."""
    n = header["n"]
    byte_offsets = _load(path, COLUMN_BYTE_OFFSETS, ROW_OFFSET_DTYPE, n + 1)
    total = int(byte_offsets[n])
    data = _load(path, COLUMN_BYTES, np.uint8, total)
    nlocal = row_offsets.shape[0] - 1
    starts = np.array(byte_offsets[rank:n:p][:nlocal])
    lengths = np.array(byte_offsets[rank + 1 :: p][:nlocal]) - starts
    if byte_offsets[0] != 0 or (lengths < 0).any():
        raise GraphFormatError(
            os.path.join(path, COLUMN_BYTE_OFFSETS), "byte offsets are not a partition"
        )
    local_offsets = np.zeros(nlocal + 1, dtype=ROW_OFFSET_DTYPE)
    np.cumsum(lengths, out=local_offsets[1:])
    local_offsets = local_offsets.astype(byte_offset_dtype(int(local_offsets[-1])), copy=False)
    local = np.array(data) if p == 1 else data[ranges(starts, lengths)]
    columns = CompressedColumns(local, local_offsets, row_offsets, rank, p, vertex_dtype(n))
    problem = columns.problem(n)
    if problem is not None:
        raise GraphFormatError(os.path.join(path, COLUMN_BYTES), problem)
    return columns


def _local_weights(
    path: str, header: dict[str, Any], starts: np.ndarray, lengths: np.ndarray, p: int
) -> np.ndarray | None:
    """This rank's weights (rows at ``starts`` of ``lengths``), checked to be non-negative and
    finite; None for an unweighted graph."""
    if header.get("weight_dtype") is None:
        return None
    file = os.path.join(path, WEIGHTS)
    weights = _load(path, WEIGHTS, header["weight_dtype"], header["num_edges"])
    local = np.array(weights) if p == 1 else weights[ranges(starts, lengths)]
    del weights
    if not bool(np.isfinite(local).all()) or bool((local < 0).any()):
        raise GraphFormatError(file, "negative, NaN or infinite weights")
    return local


def read_relabeling(path: str, comm: Communicator) -> Relabeling | None:
    """The original ids of a reordered native graph (every rank), or None (collective)."""
    with agree_on_errors(comm):
        header = _read_header(path)
        order = header.get("reordered")
        if order is None:
            return None
        where = os.path.join(path, ORIGINAL_IDS)
        ids = _load(path, ORIGINAL_IDS, np.int64, header["n"])
        ids = np.array(ids)
        if not isinstance(order, str) or not np.array_equal(np.sort(ids), np.arange(ids.size)):
            raise GraphFormatError(where, "not a permutation of the vertex ids")
        return Relabeling(order, ids)


def check_target(path: str, comm: Communicator, flag: str | None = None) -> None:
    """Refuse, before any work (collective), a target ``path`` that ``write_native`` would
    refuse: an existing file or non-empty directory that is not a native graph, or a parent
    directory that does not exist or is not writable. ``flag``: the argument that named it."""
    final = os.path.abspath(os.fspath(path))
    where = f"{flag} {path}: " if flag else ""
    with agree_on_errors(comm):
        if comm.rank == 0:
            if os.path.lexists(final) and not (
                is_native(final) or (os.path.isdir(final) and not os.listdir(final))
            ):
                raise InputError(
                    f"{where}{final}: exists and is not a {FORMAT_NAME} directory; refusing to "
                    "replace it",
                    all_ranks=False,
                )
            parent = os.path.dirname(final)
            if not os.path.isdir(parent) or not os.access(parent, os.W_OK | os.X_OK):
                raise InputError(f"{where}cannot write in {parent}", all_ranks=False)


def write_native(
    graph: DistGraph,
    path: str,
    comm: Communicator,
    relabeling: Relabeling | None = None,
    compress: bool = False,
) -> None:
    """Write ``graph`` (its weights too, and the original ids of a reordered graph) as a
    native directory at ``path`` (collective, atomic replace); ``compress``: its columns
    varint-coded (version 3), else plain.

    An existing native directory at ``path`` is replaced only once the new one is complete;
    any other existing file or non-empty directory is refused. No partial directory survives
    a failure.
    """
    final = os.path.abspath(os.fspath(path))
    parent, name = os.path.split(final)
    tmp = None
    check_target(path, comm)
    coded = None
    with agree_on_errors(comm):
        if compress:
            coded = (
                graph.column_indices
                if graph.compressed
                else CompressedColumns.encode(
                    as_host(graph.row_offsets),
                    as_host(graph.column_indices),
                    graph.rank,
                    graph.size,
                )
            )
    total_bytes = None if coded is None else comm.allreduce(int(coded.data.shape[0]))
    with agree_on_errors(comm), _os_errors(final, "write the graph"):
        if comm.rank == 0:
            tmp = temp_name(final)
            os.mkdir(tmp)  # permissions from the umask, as every output
    tmp = comm.bcast_object(tmp)
    try:
        with agree_on_errors(comm), _os_errors(final, "write the graph"):
            if comm.rank == 0:
                _create_files(graph, tmp, total_bytes)
                if relabeling is not None:
                    np.save(os.path.join(tmp, ORIGINAL_IDS), relabeling.original_ids)
        _write_rows(graph, tmp, comm, coded)
        with agree_on_errors(comm), _os_errors(final, "write the graph"):
            if comm.rank == 0:
                order = None if relabeling is None else relabeling.order
                _write_header(graph, tmp, order, coded is not None)
                if os.path.lexists(final):
                    old = os.path.join(parent, f".{name}.old-{uuid.uuid4().hex}")
                    os.rename(final, old)
                    os.rename(tmp, final)
                    shutil.rmtree(old, ignore_errors=True)
                else:
                    os.rename(tmp, final)
    except BaseException:
        if comm.rank == 0 and os.path.isdir(tmp):
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    comm.barrier()


def _create_files(graph: DistGraph, tmp: str, total_bytes: int | None) -> None:
    """Create the arrays' files of ``graph`` in ``tmp`` at full size (rank 0);
    ``total_bytes``: the compressed columns' bytes (None: plain columns)."""
    files = [(ROW_OFFSETS, ROW_OFFSET_DTYPE, graph.n + 1)]
    if total_bytes is None:
        files.append((COLUMN_INDICES, vertex_dtype(graph.n), graph.num_edges))
    else:
        files.append((COLUMN_BYTE_OFFSETS, ROW_OFFSET_DTYPE, graph.n + 1))
        files.append((COLUMN_BYTES, np.uint8, total_bytes))
    if graph.weighted:
        files.append((WEIGHTS, graph.weights.dtype, graph.num_edges))
    for name, dtype, length in files:
        np.lib.format.open_memmap(
            os.path.join(tmp, name), mode="w+", dtype=dtype, shape=(length,)
        ).flush()


def _write_header(graph: DistGraph, tmp: str, order: str | None, compressed: bool) -> None:
    """Write ``header.json`` of ``graph`` (reordered by ``order``, or None; its columns
    ``compressed`` or plain) into ``tmp``, synced (rank 0, the last file)."""
    version = WEIGHTED_VERSION if graph.weighted else VERSION
    header = {
        "format": FORMAT_NAME,
        "version": COMPRESSED_VERSION if compressed else version,
        "n": graph.n,
        "num_edges": graph.num_edges,
        "directed": graph.directed,
        "index_dtype": vertex_dtype(graph.n).name,
    }
    if compressed:
        header["columns"] = "varint"
    if graph.weighted:
        header["weight_dtype"] = np.dtype(graph.weights.dtype).name
    if order is not None:
        header["reordered"] = order
    with open(os.path.join(tmp, HEADER), "w") as f:
        json.dump(header, f)
        f.flush()
        os.fsync(f.fileno())


def _write_offsets(tmp: str, name: str, lengths: np.ndarray, n: int, comm: Communicator) -> Any:
    """Fill the offsets file ``name`` (n + 1 int64) from every rank's striped row ``lengths``
    (collective): each rank writes its lengths at its striped positions, turns one contiguous
    block into a prefix sum (a local cumsum plus an exscan of block totals), and reads back
    where its rows start."""
    rank, p = comm.rank, comm.size
    with agree_on_errors(comm), _os_errors(tmp, f"write {name}"):
        offsets = np.load(os.path.join(tmp, name), mmap_mode="r+")
        offsets[rank + 1 :: p] = lengths  # offsets[v + 1] = length(v) for owned v
        offsets.flush()
        del offsets
    comm.barrier()
    lo, hi = 1 + n * rank // p, 1 + n * (rank + 1) // p  # this rank's block of the prefix sum
    block = np.zeros(0, dtype=np.int64)
    with agree_on_errors(comm), _os_errors(tmp, f"write {name}"):
        offsets = np.load(os.path.join(tmp, name), mmap_mode="r+")
        block = np.cumsum(offsets[lo:hi])
    base = comm.exscan(int(block[-1]) if block.size else 0)
    with agree_on_errors(comm), _os_errors(tmp, f"write {name}"):
        offsets[lo:hi] = block + base
        offsets.flush()
        del offsets
    comm.barrier()
    starts = np.zeros(0, dtype=np.int64)
    with agree_on_errors(comm), _os_errors(tmp, f"read {name}"):
        offsets = np.load(os.path.join(tmp, name), mmap_mode="r")
        starts = np.array(offsets[rank:n:p][: lengths.shape[0]])
        del offsets
    return starts


def _write_rows(
    graph: DistGraph, tmp: str, comm: Communicator, coded: CompressedColumns | None
) -> None:
    """Fill the arrays' files of ``tmp`` (collective); ``coded``: this rank's compressed
    columns (None: plain)."""
    degrees = as_host(graph.local_degrees()).astype(np.int64)
    starts = _write_offsets(tmp, ROW_OFFSETS, degrees, graph.n, comm)
    arrays = []  # (file, this rank's array, where its rows start in the file, their lengths)
    if coded is None:
        arrays.append((COLUMN_INDICES, graph.column_indices, starts, degrees))
    else:
        byte_lengths = np.diff(coded.byte_offsets.astype(np.int64))
        byte_starts = _write_offsets(tmp, COLUMN_BYTE_OFFSETS, byte_lengths, graph.n, comm)
        arrays.append((COLUMN_BYTES, coded.data, byte_starts, byte_lengths))
    if graph.weighted:
        arrays.append((WEIGHTS, graph.weights, starts, degrees))
    with agree_on_errors(comm), _os_errors(tmp, "write the rows"):
        for name, local, at, lengths in arrays:
            target = np.load(os.path.join(tmp, name), mmap_mode="r+")
            _scatter_rows(target, as_host(local), at, lengths, comm.size == 1)
            target.flush()
            del target
    comm.barrier()


WRITE_CHUNK = 1 << 24
"""Elements a rank writes into a file at a time (bounds the int64 positions built for them)."""


def _scatter_rows(
    target: np.ndarray, local: np.ndarray, starts: np.ndarray, lengths: np.ndarray, whole: bool
) -> None:
    """``local`` (rows of ``lengths`` back to back) into ``target`` at ``starts``, a chunk of
    rows at a time; ``whole``: one rank holds every row, in file order."""
    if whole:
        target[: local.shape[0]] = local
        return
    ends = np.cumsum(lengths)
    first = done = 0
    while first < lengths.shape[0]:
        last = int(np.searchsorted(ends, done + WRITE_CHUNK, side="right"))
        last = min(lengths.shape[0], max(first + 1, last))
        count = int(ends[last - 1]) - done
        target[ranges(starts[first:last], lengths[first:last])] = local[done : done + count]
        done += count
        first = last
