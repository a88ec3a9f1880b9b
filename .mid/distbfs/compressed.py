"""Compressed CSR columns: each row's sorted neighbour list stored as gaps in a byte-aligned
variable-length code (LEB128 varint: 7 bits a byte, the high bit set on every byte but a value's
last), with per-row byte offsets beside the edge offsets (moschou-2026-bfs-billion-scale: a
delta-varint CSR; WebGraph's gaps).

Row r of rank ``rank`` out of ``size`` is global vertex ``v = r * size + rank``; its neighbours
``c0 < c1 < ...`` are stored as ``zigzag(c0 - v)`` (the first neighbour relative to the row's
own vertex: small where a vertex order keeps neighbours close, ``distbfs reorder``), then
``c[i] - c[i-1] - 1`` (rows hold no duplicates, so every gap is at least 1). The weights of a
weighted graph stay a plain array aligned with the edges: edge slot ``row_offsets[r] + k`` is
still neighbour k of row r, so every stage addresses edges as before and only the columns are
decoded.

``CompressedColumns`` stands in for a ``column_indices`` array on the host: indexing it with
edge slots decodes, for each run of slots in one row, that row's values up to the last slot
asked for (a bottom-up scan that stops early, or a sampled neighbour, reads a short prefix);
``rows`` decodes whole rows; ``np.asarray`` decodes every row. Decoding is vectorized numpy: the
rows' bytes are gathered, the values' boundaries found from the high bits, each value read as
one unaligned 64-bit word and its 7-bit groups shifted together, and the gaps prefix-summed
within each row.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .arrays import array_module
from .constants import ROW_OFFSET_DTYPE

CHUNK_EDGES = 1 << 22
"""Edges encoded or decoded at a time: temporaries of a few int64 per edge stay bounded."""

CONTINUE = 0x80
"""The high bit of a varint byte: more bytes of the same value follow."""

MAX_VARINT_BYTES = 10
"""Bytes of the longest varint of a 64-bit value."""


def byte_offset_dtype(total: int) -> np.dtype:
    """The dtype of byte offsets into ``total`` bytes: uint32 while they fit (half the bytes of
    a row's offset; on a road network, with two neighbours a row, the offsets are most of the
    compressed CSR), int64 beyond."""
    return np.dtype(np.uint32 if total < 2**32 else np.int64)


def zigzag(x: np.ndarray) -> np.ndarray:
    """Signed to unsigned, small magnitudes to small codes: 0, -1, 1, -2 -> 0, 1, 2, 3."""
    x = x.astype(np.int64)
    return ((x << 1) ^ (x >> 63)).astype(np.uint64)


def unzigzag(u: np.ndarray) -> np.ndarray:
    """The inverse of ``zigzag``."""
    u = u.astype(np.uint64)
    return ((u >> np.uint64(1)).astype(np.int64)) ^ -((u & np.uint64(1)).astype(np.int64))


def varint_lengths(values: Any) -> Any:
    """Bytes of each value's varint (uint64 values, numpy or cupy), 1 to MAX_VARINT_BYTES."""
    lengths = array_module(values).ones(values.shape[0], dtype=np.int64)
    for k in range(1, MAX_VARINT_BYTES):
        lengths += values >= np.uint64(1 << (7 * k))
    return lengths


def encode_varints(values: Any, lengths: Any = None) -> Any:
    """The varints of ``values`` (uint64, numpy or cupy), concatenated as uint8 (``lengths``:
    their ``varint_lengths``, when known)."""
    xp = array_module(values)
    lengths = varint_lengths(values) if lengths is None else lengths
    ends = xp.cumsum(lengths)
    out = xp.empty(int(ends[-1]) if ends.shape[0] else 0, dtype=np.uint8)
    starts = ends - lengths
    for k in range(int(lengths.max()) if lengths.shape[0] else 0):
        has = lengths > k
        group = (values[has] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (lengths[has] > k + 1).astype(np.uint64) * np.uint64(CONTINUE)
        out[starts[has] + k] = (group | more).astype(np.uint8)
    return out


_WORD_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
"""The low k bytes of a 64-bit word, for k = 0..8."""


def decode_varints(data: np.ndarray) -> np.ndarray:
    """The values (uint64) of concatenated whole varints ``data`` (uint8). Each value's bytes
    are read as one little-endian word from where it starts (an unaligned strided view, one
    gather), cut to its length, and its 7-bit groups shifted together; codes longer than a
    word (values of 2^56 and more) are read group by group."""
    ends = np.flatnonzero((data & CONTINUE) == 0)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    lengths = ends - starts + 1
    if ends.shape[0] == 0 or int(lengths.max()) > 8:
        return _decode_by_groups(data, starts, ends)
    padded = np.zeros(data.shape[0] + 8, dtype=np.uint8)
    padded[: data.shape[0]] = data
    words = np.ndarray((data.shape[0],), dtype="<u8", buffer=padded, strides=(1,))
    word = words[starts] & _WORD_MASKS[lengths]
    values = word & np.uint64(0x7F)
    for k in range(1, int(lengths.max())):
        values |= (word >> np.uint64(k)) & np.uint64(0x7F << (7 * k))
    return values


def _decode_by_groups(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """``decode_varints`` one 7-bit group at a time: every value's first, then the second of
    the values that have one, and so on."""
    values = (data[starts] & 0x7F).astype(np.uint64)
    longer = np.flatnonzero(ends > starts)
    k = 1
    while longer.shape[0]:
        at = starts[longer] + k
        values[longer] |= (data[at] & 0x7F).astype(np.uint64) << np.uint64(7 * k)
        longer = longer[ends[longer] > at]
        k += 1
    return values


def row_codes(row_offsets: Any, columns: Any, row_vertices: Any) -> Any:
    """The values stored for the rows whose edges are ``columns`` (each row's sorted ids;
    ``row_offsets`` from 0; numpy or cupy): zigzag(first - row vertex), then gap - 1."""
    xp = array_module(columns)
    degrees = xp.diff(row_offsets)
    columns = columns.astype(np.int64)
    gaps = xp.empty(columns.shape[0], dtype=np.int64)
    gaps[1:] = columns[1:] - columns[:-1] - 1
    heads = row_offsets[:-1][degrees > 0]
    codes = gaps.astype(np.uint64)
    codes[heads] = zigzag(columns[heads] - row_vertices[degrees > 0])
    return codes


def row_chunks(row_offsets: Any) -> Iterator[tuple[int, int]]:
    """(first, last) row ranges of about CHUNK_EDGES edges each (at least one row)."""
    xp, rows, first = array_module(row_offsets), row_offsets.shape[0] - 1, 0
    while first < rows:
        bound = row_offsets[first] + CHUNK_EDGES
        last = int(xp.searchsorted(row_offsets, bound, side="right")) - 1
        last = min(rows, max(first + 1, last))
        yield first, last
        first = last


def code_bytes(row_offsets: Any, columns: Any, rank: int = 0, size: int = 1) -> int:
    """Bytes of these rows' codes alone, counted where the arrays are (numpy or cupy: a GPU
    counts a Kronecker scale 28 share in seconds) without writing a code."""
    xp, total = array_module(columns), 0
    for first, last in row_chunks(row_offsets):
        offsets = row_offsets[first : last + 1] - row_offsets[first]
        vertices = xp.arange(first, last, dtype=np.int64) * size + rank
        part = columns[int(row_offsets[first]) : int(row_offsets[last])]
        total += int(varint_lengths(row_codes(offsets, part, vertices)).sum())
    return total


def coded_bytes(row_offsets: Any, columns: Any, rank: int = 0, size: int = 1) -> int:
    """Bytes ``CompressedColumns.encode`` would take for these rows (their codes and byte
    offsets; ``code_bytes``)."""
    total = code_bytes(row_offsets, columns, rank, size)
    return total + row_offsets.shape[0] * byte_offset_dtype(total).itemsize


def encode_rows(
    row_offsets: Any, columns: Any, rank: int = 0, size: int = 1, point_edges: int = 0
) -> tuple[Any, ...]:
    """(bytes, byte offsets per row) of a CSR's columns (rows of rank ``rank`` of ``size``;
    numpy or cupy, the result where they are), encoded a chunk of rows at a time: one pass
    sizes every row, the second writes the codes in place (the coded bytes are allocated once,
    beside the plain columns). With ``point_edges``, also the decode points of every
    ``point_edges``-th edge slot s: (byte where slot s's code starts, the column at s - 1; at
    s = 0 the column there), int64 and the columns' dtype."""
    xp = array_module(columns)
    row_offsets = xp.asarray(row_offsets, dtype=ROW_OFFSET_DTYPE)
    rows, edges = row_offsets.shape[0] - 1, int(row_offsets[-1])
    byte_offsets = xp.zeros(rows + 1, dtype=np.int64)
    chunks = list(row_chunks(row_offsets))

    def codes_of(first: int, last: int) -> tuple[Any, Any]:
        offsets = row_offsets[first : last + 1] - row_offsets[first]
        vertices = xp.arange(first, last, dtype=np.int64) * size + rank
        part = columns[int(row_offsets[first]) : int(row_offsets[last])]
        return offsets, row_codes(offsets, part, vertices)

    for first, last in chunks:
        offsets, codes = codes_of(first, last)
        edge_bytes = xp.zeros(codes.shape[0] + 1, dtype=np.int64)
        xp.cumsum(varint_lengths(codes), out=edge_bytes[1:])
        byte_offsets[first + 1 : last + 1] = byte_offsets[first] + edge_bytes[offsets[1:]]
    data = xp.empty(int(byte_offsets[-1]), dtype=np.uint8)
    count = -(-edges // point_edges) if point_edges else 0
    point_bytes = xp.zeros(count, dtype=np.int64)
    point_values = xp.zeros(count, dtype=columns.dtype)
    for first, last in chunks:
        _, codes = codes_of(first, last)
        lengths = varint_lengths(codes)
        start, begin = int(byte_offsets[first]), int(row_offsets[first])
        data[start : int(byte_offsets[last])] = encode_varints(codes, lengths)
        if count:  # the points whose slot lies in this chunk
            first_point = -(-begin // point_edges)
            slots = xp.arange(first_point * point_edges, int(row_offsets[last]), point_edges)
            within = xp.cumsum(lengths) - lengths
            points = slice(first_point, first_point + slots.shape[0])
            point_bytes[points] = start + within[slots - begin]
            point_values[points] = columns[xp.maximum(slots - 1, 0)]
    byte_offsets = byte_offsets.astype(byte_offset_dtype(data.shape[0]), copy=False)
    return (data, byte_offsets, point_bytes, point_values) if point_edges else (data, byte_offsets)


class CompressedColumns:
    """The columns of one rank's CSR rows, varint-coded (module docstring); read like the
    ``column_indices`` array it replaces: ``columns[slots]`` (edge slots, any order) and
    ``np.asarray(columns)``.

    Attributes
    ----------
    data : numpy uint8 array
    byte_offsets : numpy uint32 or int64 array (``byte_offset_dtype``)
        Row r's bytes are ``data[byte_offsets[r]:byte_offsets[r + 1]]``.
    row_offsets : numpy int64 array
        The CSR's edge offsets (row r's edge slots).
    rank, ranks : int
        Row r is global vertex ``r * ranks + rank``.
    dtype : numpy dtype
        The dtype decoded ids take (the plain CSR's).
    """

    def __init__(
        self,
        data: np.ndarray,
        byte_offsets: np.ndarray,
        row_offsets: np.ndarray,
        rank: int,
        size: int,
        dtype: Any,
    ) -> None:
        self.data = data
        self.byte_offsets = byte_offsets
        self.row_offsets = row_offsets
        self.rank, self.ranks = int(rank), int(size)
        self.dtype = np.dtype(dtype)
        self._widest: int | None = None

    @classmethod
    def encode(
        cls, row_offsets: np.ndarray, columns: np.ndarray, rank: int = 0, size: int = 1
    ) -> CompressedColumns:
        """The compressed form of a plain CSR's ``columns``."""
        columns = np.asarray(columns)
        data, byte_offsets = encode_rows(np.asarray(row_offsets), columns, rank, size)
        return cls(data, byte_offsets, np.asarray(row_offsets), rank, size, columns.dtype)

    @property
    def shape(self) -> tuple[int]:
        return (self.size,)

    @property
    def size(self) -> int:
        """The number of columns (edges), as an array's ``size``."""
        return int(self.row_offsets[-1])

    @property
    def ndim(self) -> int:
        return 1

    @property
    def nbytes(self) -> int:
        """Bytes held: the coded columns and the byte offsets."""
        return int(self.data.nbytes + self.byte_offsets.nbytes)

    @property
    def plain_nbytes(self) -> int:
        """Bytes of the plain columns this replaces."""
        return self.size * self.dtype.itemsize

    def __len__(self) -> int:
        return self.size

    def rows(self, rows: np.ndarray, dtype: Any = None, counts: Any = None) -> np.ndarray:
        """The neighbours of local rows ``rows`` (any order, repeats allowed), concatenated, as
        ``dtype`` (default: the plain columns'); ``counts``: only the first ``counts[i]``
        neighbours of row i (at most its degree), whose bytes alone are decoded."""
        rows = np.asarray(rows, dtype=np.int64)
        dtype = self.dtype if dtype is None else np.dtype(dtype)
        degrees = self.row_offsets[rows + 1] - self.row_offsets[rows]
        counts = degrees if counts is None else np.asarray(counts, dtype=np.int64)
        ends = np.cumsum(counts)
        out = np.empty(int(ends[-1]) if ends.shape[0] else 0, dtype)
        done, begin = 0, 0
        while begin < rows.shape[0]:
            end = int(np.searchsorted(ends, done + CHUNK_EDGES, side="right"))
            end = min(rows.shape[0], max(begin + 1, end))
            some = counts[begin:end] if counts is not degrees else None
            decoded = self._decode(rows[begin:end], dtype, some)
            out[done : done + decoded.shape[0]] = decoded
            done += decoded.shape[0]
            begin = end
        return out

    @property
    def widest(self) -> int:
        """Bytes of the longest code held (at most MAX_VARINT_BYTES), found once."""
        if self._widest is None:
            xp = array_module(self.data)
            ends = xp.flatnonzero((self.data & CONTINUE) == 0)
            self._widest = int(xp.diff(ends, prepend=-1).max()) if ends.shape[0] else 1
        return self._widest

    def _decode(self, rows: np.ndarray, dtype: np.dtype, counts: Any) -> np.ndarray:
        """Rows' neighbours (``counts``: their first ``counts[i]``; None: all)."""
        starts = self.byte_offsets[rows].astype(np.int64)
        lengths = self.byte_offsets[rows + 1] - starts
        degrees = self.row_offsets[rows + 1] - self.row_offsets[rows]
        counts = degrees if counts is None else counts
        partial = bool((counts < degrees).any())
        if partial:  # the bytes that may hold the first counts[i] values
            lengths = np.minimum(lengths, counts * self.widest)
        data = self.data[ranges(starts, lengths)]
        if partial and data.shape[0]:  # then exactly those
            last = ((data & CONTINUE) == 0).astype(np.int64)
            before = np.cumsum(last) - last  # values ended before each byte
            row_first = np.minimum(np.cumsum(lengths) - lengths, data.shape[0] - 1)
            index = before - np.repeat(before[row_first], lengths)  # value within its row
            data = data[index < np.repeat(counts, lengths)]
        codes = decode_varints(data)
        if codes.shape[0] == 0:
            return codes.astype(dtype)
        steps = codes.astype(np.int64) + 1  # gap - 1 -> gap
        value_ends = np.cumsum(counts)
        heads = (value_ends - counts)[counts > 0]
        vertices = rows[counts > 0] * self.ranks + self.rank
        firsts = vertices + unzigzag(codes[heads])
        # One running sum over all rows: each row's first step goes from the previous row's
        # last neighbour to its own first, so the sum never leaves the id range.
        steps[heads] = 0
        lasts = firsts + np.add.reduceat(steps, heads)
        steps[heads] = firsts
        steps[heads[1:]] -= lasts[:-1]
        return np.cumsum(steps).astype(dtype, copy=False)

    def problem(self, n: int) -> str | None:
        """What is wrong with these columns as rows of a graph of ``n`` vertices (a file's):
        byte offsets that are not a partition of the bytes, a row whose bytes do not hold
        exactly its degree of whole varints, or ids out of range, unsorted or repeated; None
        when nothing is. Decodes a chunk of rows at a time."""
        offsets, rows = self.byte_offsets, self.row_offsets.shape[0] - 1
        if offsets.shape[0] != rows + 1 or offsets[0] != 0 or offsets[-1] != self.data.shape[0]:
            return "byte offsets do not cover the column bytes"
        if bool((np.diff(offsets.astype(np.int64)) < 0).any()):
            return "byte offsets decrease"
        lengths = np.diff(offsets.astype(np.int64))
        values = np.zeros(rows, dtype=np.int64)  # whole codes in each row's bytes
        held = np.flatnonzero(lengths)
        if held.shape[0]:
            ended = (self.data & CONTINUE) == 0
            values[held] = np.add.reduceat(ended, offsets[held].astype(np.int64), dtype=np.int64)
        if not np.array_equal(values, np.diff(self.row_offsets)):
            return "a row's bytes do not hold as many values as its degree"
        first = 0
        while first < rows:
            last = int(np.searchsorted(self.row_offsets, self.row_offsets[first] + CHUNK_EDGES))
            last = min(rows, max(first + 1, last))
            ids = self.rows(np.arange(first, last, dtype=np.int64), np.int64)
            within = self.row_offsets[first : last + 1] - self.row_offsets[first]
            rising = np.diff(ids) > 0
            heads = within[1:-1]
            rising[heads[(heads > 0) & (heads < ids.shape[0])] - 1] = True  # a new row
            if ids.shape[0] and (ids.min() < 0 or ids.max() >= n or not rising.all()):
                return "column ids out of range or rows not sorted and unique"
            first = last
        return None

    def __getitem__(self, index: Any) -> np.ndarray:
        if isinstance(index, slice):
            index = np.arange(*index.indices(self.size), dtype=np.int64)
        slots = np.asarray(index)
        if slots.dtype == bool:
            return self.decode()[slots]
        flat = slots.reshape(-1).astype(np.int64)
        if flat.shape[0] == 0:
            return np.zeros(slots.shape, dtype=self.dtype)
        flat = np.where(flat < 0, flat + self.size, flat)
        if flat.min() < 0 or flat.max() >= self.size:
            raise IndexError(f"edge slot out of range [0, {self.size})")
        owners = np.searchsorted(self.row_offsets, flat, side="right") - 1
        # One decoded row per run of slots in the same row (the stages gather whole rows, so
        # a row is rarely decoded twice; no sort needed).
        change = np.empty(flat.shape[0], dtype=bool)
        change[0] = True
        np.not_equal(owners[1:], owners[:-1], out=change[1:])
        run_rows = owners[change]
        within = flat - self.row_offsets[owners]
        counts = np.maximum.reduceat(within, np.flatnonzero(change)) + 1  # a run's prefix
        run_starts = np.cumsum(counts) - counts
        run_of = np.cumsum(change) - 1
        decoded = self.rows(run_rows, counts=counts)
        return decoded[run_starts[run_of] + within].reshape(slots.shape)

    def decode(self) -> np.ndarray:
        """Every column, plain."""
        return self.rows(np.arange(self.row_offsets.shape[0] - 1, dtype=np.int64))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        plain = self.decode()
        return plain if dtype is None else plain.astype(dtype)

    def astype(self, dtype: Any, copy: bool = True) -> np.ndarray:
        """The plain columns as ``dtype``."""
        return self.decode().astype(dtype, copy=False)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.size:,} edges in {self.data.nbytes:,} bytes, "
            f"{self.plain_nbytes / max(1, self.nbytes):.2f}x)"
        )


def ranges(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Indices ``starts[i] .. starts[i] + lengths[i] - 1`` for every i, concatenated."""
    ends = np.cumsum(lengths)
    total = int(ends[-1]) if ends.shape[0] else 0
    return np.repeat(starts - (ends - lengths), lengths) + np.arange(total, dtype=np.int64)


__all__ = [
    "CompressedColumns",
    "byte_offset_dtype",
    "coded_bytes",
    "decode_varints",
    "encode_rows",
    "encode_varints",
    "unzigzag",
    "zigzag",
]
