"""Compressed columns on the device (``distbfs.compressed``'s varint rows): encoded by the GPU
from the plain columns a chunk of rows at a time, decoded by the stages' kernels as they read
their rows (expansion in pieces between decode points, one thread a piece; a bottom-up scan from
each row's head until its first hit; ``kernels/common.cuh``, ``VarintColumns``), and by
``kernels/decode.cu`` for whatever reads edges outside the stages (validation, the in-neighbour
CSR of a directed graph, the way back to plain columns).

Decode points: every ``LaunchPolicy.decode_point_edges``-th edge slot s keeps the byte where
its code starts and the neighbour before it (int64 and the columns' dtype), so any slot is
reached from the row's head or from the point before it in fewer than that many steps, and a
hub is decoded by many threads at once. On the device the byte offsets are int64, the kernels'
``size_type``.
"""

from __future__ import annotations

from typing import Any

import cupy
import numpy as np

from ...compressed import CompressedColumns, encode_rows
from ..arrays.ops import gather_ranges
from .kernels import get_kernel
from .launch_policy import LaunchPolicy

DECODE_THREADS = 256
"""Threads per block of the decode kernels (grid-stride loops)."""

DECODE_BLOCKS = 1 << 14
"""Most blocks a decode launch takes (enough to fill any device; grid-stride beyond)."""


class DeviceColumns(CompressedColumns):
    """``CompressedColumns`` whose bytes live on the device (or in host memory the device maps:
    ``map``), with decode points; indexed like the plain column array it replaces: a slice
    decodes a range of slots in one pass, an array of slots gathers, ``decode`` gives them all.

    Attributes (beside ``CompressedColumns``')
    ------------------------------------------
    point_bytes : cupy int64 array
        The byte where the code of slot ``k * policy.decode_point_edges`` starts.
    point_values : cupy array of the columns' dtype
        The column at that slot minus one (at slot 0, the column there).
    policy : LaunchPolicy
        The policy whose ``decode_point_edges`` the points were built for (the kernels' too).
    """

    def __init__(
        self,
        data: Any,
        byte_offsets: Any,
        row_offsets: Any,
        rank: int,
        size: int,
        dtype: Any,
        point_bytes: Any,
        point_values: Any,
        policy: LaunchPolicy,
    ) -> None:
        super().__init__(data, byte_offsets, row_offsets, rank, size, dtype)
        self.point_bytes, self.point_values, self.policy = point_bytes, point_values, policy

    @classmethod
    def encode_on_device(
        cls, row_offsets: Any, columns: Any, rank: int, size: int, policy: LaunchPolicy
    ) -> DeviceColumns:
        """The compressed form of a device CSR's plain ``columns`` (which stay as they are)."""
        data, byte_offsets, point_bytes, point_values = encode_rows(
            row_offsets, columns, rank, size, point_edges=policy.decode_point_edges
        )
        return cls(
            data,
            byte_offsets.astype(np.int64, copy=False),
            row_offsets,
            rank,
            size,
            columns.dtype,
            point_bytes,
            point_values,
            policy,
        )

    @classmethod
    def from_host(cls, columns: CompressedColumns, policy: LaunchPolicy) -> DeviceColumns:
        """Host-held compressed ``columns`` (a compressed file, ``distbfs.io``) on the device:
        their codes copied as they are, the decode points found by the device
        (``decode_points_kernel``: a thread per row, the encoder's points exactly), no value
        decoded on the host."""
        row_offsets = cupy.asarray(columns.row_offsets)
        byte_offsets = cupy.asarray(columns.byte_offsets).astype(np.int64, copy=False)
        rows = row_offsets.shape[0] - 1
        count = -(-columns.size // policy.decode_point_edges)
        point_bytes = cupy.zeros(count, dtype=np.int64)
        point_values = cupy.zeros(count, dtype=columns.dtype)
        data = cupy.asarray(columns.data)
        if rows and count:
            kernel = get_kernel(
                "decode", "decode_points_kernel", policy, 8 * np.dtype(columns.dtype).itemsize
            )
            blocks = min(DECODE_BLOCKS, -(-rows // DECODE_THREADS))
            where = (np.int32(columns.rank), np.int32(columns.ranks))
            kernel(
                (blocks,),
                (DECODE_THREADS,),
                (
                    row_offsets,
                    np.int64(rows),
                    data,
                    byte_offsets,
                    *where,
                    point_bytes,
                    point_values,
                ),
            )
        return cls(
            data,
            byte_offsets,
            row_offsets,
            columns.rank,
            columns.ranks,
            columns.dtype,
            point_bytes,
            point_values,
            policy,
        )

    def kernel_args(self) -> tuple[Any, ...]:
        """What the kernels take for ``VarintColumns``: bytes, byte offsets, decode points."""
        return (self.data, self.byte_offsets, self.point_bytes, self.point_values)

    def map(self, place: Any) -> DeviceColumns:
        """These columns with ``place`` applied to their codes; the offsets and decode points
        stay where they are (as a plain graph's row offsets: read once a row, on the device,
        their bytes never cross the link)."""
        return type(self)(
            place(self.data),
            self.byte_offsets,
            self.row_offsets,
            self.rank,
            self.ranks,
            self.dtype,
            self.point_bytes,
            self.point_values,
            self.policy,
        )

    @property
    def nbytes(self) -> int:
        """Bytes held: the codes, the byte offsets and the decode points."""
        points = self.point_bytes.nbytes + self.point_values.nbytes
        return int(self.data.nbytes + self.byte_offsets.nbytes + points)

    def _kernel(self, name: str) -> Any:
        return get_kernel("decode", name, self.policy, 8 * self.dtype.itemsize)

    def _head(self) -> tuple[Any, ...]:
        rows = self.row_offsets.shape[0] - 1
        return (self.row_offsets, np.int64(rows), *self.kernel_args())

    def decode_range(self, first: int, last: int) -> Any:
        """The columns of edge slots ``[first, last)``, plain, on the device."""
        out = cupy.empty(max(0, last - first), dtype=self.dtype)
        if out.shape[0]:
            point = self.policy.decode_point_edges
            stretches = (last - 1) // point - first // point + 1
            blocks = min(DECODE_BLOCKS, -(-stretches // DECODE_THREADS))
            where = (np.int32(self.rank), np.int32(self.ranks))
            self._kernel("decode_range_kernel")(
                (blocks,),
                (DECODE_THREADS,),
                (*self._head(), *where, np.int64(first), np.int64(last), out),
            )
        return out

    def decode_slots(self, slots: Any) -> Any:
        """The columns of the edge slots ``slots`` (a device array of any shape, each in
        ``[0, size)``), plain, shaped like it."""
        flat = cupy.ascontiguousarray(slots, dtype=cupy.int64).reshape(-1)
        out = cupy.empty(flat.shape[0], dtype=self.dtype)
        if flat.shape[0]:
            blocks = min(DECODE_BLOCKS, -(-flat.shape[0] // DECODE_THREADS))
            where = (np.int32(self.rank), np.int32(self.ranks))
            self._kernel("decode_slots_kernel")(
                (blocks,),
                (DECODE_THREADS,),
                (*self._head(), *where, flat, np.int64(flat.shape[0]), out),
            )
        return out.reshape(cupy.asarray(slots).shape)

    def rows(self, rows: Any, dtype: Any = None, counts: Any = None) -> Any:
        """The neighbours of local rows ``rows`` concatenated (``counts``: only the first
        ``counts[i]`` of row i), as ``dtype``, on the device."""
        rows = cupy.asarray(rows, dtype=cupy.int64)
        starts = self.row_offsets[rows]
        lengths = self.row_offsets[rows + 1] - starts if counts is None else cupy.asarray(counts)
        slots, _ = gather_ranges(cupy, starts, lengths)
        out = self.decode_slots(slots)
        return out if dtype is None else out.astype(dtype, copy=False)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            first, last, step = index.indices(self.size)
            if step == 1:
                return self.decode_range(first, max(first, last))
            index = cupy.arange(first, last, step, dtype=cupy.int64)
        slots = cupy.asarray(index)
        if slots.dtype == bool:
            return self.decode()[slots]
        slots = cupy.where(slots < 0, slots + self.size, slots)
        if slots.size and (int(slots.min()) < 0 or int(slots.max()) >= self.size):
            raise IndexError(f"edge slot out of range [0, {self.size})")
        return self.decode_slots(slots)

    def decode(self) -> Any:
        """Every column, plain, on the device."""
        return self.decode_range(0, self.size)

    def astype(self, dtype: Any, copy: bool = True) -> Any:
        """The plain columns as ``dtype``, on the device."""
        return self.decode().astype(dtype, copy=False)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        plain = cupy.asnumpy(self.decode())
        return plain if dtype is None else plain.astype(dtype)


def column_args(graph: Any) -> tuple[Any, ...]:
    """What a stage kernel takes for ``graph``'s columns: the plain array, or the compressed
    columns' ``kernel_args``."""
    columns = graph.column_indices
    return columns.kernel_args() if isinstance(columns, DeviceColumns) else (columns,)


def kernel_name(name: str, graph: Any) -> str:
    """Kernel ``name``, or its ``_varint`` form (the same stage over ``VarintColumns``) when
    ``graph``'s columns are compressed."""
    return f"{name}_varint" if graph.compressed else name


__all__ = ["DeviceColumns", "column_args", "kernel_name"]
