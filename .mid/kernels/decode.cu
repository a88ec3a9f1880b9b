/*
 * decode.cu: plain column ids out of compressed columns (distbfs::VarintColumns in common.cuh;
 * distbfs/backends/cuda/compressed.py), for what reads edges outside the traversal stages:
 * validation, the in-neighbour CSR of a directed graph, a graph's way back to plain columns.
 * The stages decode their rows themselves (expand.cu, bottom_up.cu).
 *
 *   decode_range_kernel  edge slots [first, last) in order: a thread per stretch between two
 *                        decode points, decoded in one pass across the rows it meets.
 *   decode_slots_kernel  any edge slots (a gather): a thread per slot, its row found by a
 *                        binary search of the row offsets, decoded from the point before it.
 *   decode_points_kernel the decode points of codes that arrive without them (a compressed
 *                        file): a thread per row decodes it from its head and writes the
 *                        points its slots hold, the encoder's (distbfs/compressed.py) exactly.
 */
#include "common.cuh"

namespace {

// The local row holding edge slot `slot` (< row_offsets[rows]): the last row starting at or
// before it (rows without edges start where the next row does, so they are passed over).
__device__ __forceinline__ size_type row_of(const size_type* __restrict__ row_offsets,
                                            size_type rows, size_type slot) {
    size_type low = 0;
    size_type high = rows;  // row_offsets[high] > slot
    while (high - low > 1) {
        const size_type middle = low + (high - low) / 2;
        if (row_offsets[middle] <= slot) {
            low = middle;
        } else {
            high = middle;
        }
    }
    return low;
}

}  // namespace

extern "C" __global__ void decode_range_kernel(
    const size_type* __restrict__ row_offsets,  // in: CSR row offsets (rows + 1)
    size_type rows,                             // in: local rows
    const unsigned char* __restrict__ bytes,    // in: compressed columns (VarintColumns)
    const size_type* __restrict__ byte_offsets,
    const size_type* __restrict__ point_bytes,
    const vertex_t* __restrict__ point_values,
    int rank,                                   // in: row r is global vertex r * size + rank
    int size,
    size_type first,                            // in: the slots decoded: [first, last)
    size_type last,
    vertex_t* __restrict__ out)                 // out: out[s - first] = the column at slot s
{
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    const distbfs::VarintColumns columns{bytes, byte_offsets, point_bytes, point_values};
    const size_type stretches = last > first ? (last - 1) / kPoint - first / kPoint + 1 : 0;
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < stretches; i += stride) {
        const size_type point = first / kPoint + i;
        const size_type from = i == 0 ? first : point * kPoint;
        const size_type to = (point + 1) * kPoint < last ? (point + 1) * kPoint : last;
        size_type row = row_of(row_offsets, rows, from);
        size_type row_end = row_offsets[row + 1];
        distbfs::VarintCursor cursor = distbfs::open_at(
            columns, row, row_offsets[row], static_cast<long long>(row) * size + rank, from);
        for (size_type slot = from; slot < to; ++slot) {
            if (slot == row_end) {  // the next row with edges, from its head
                while (row_offsets[row + 1] <= slot) ++row;
                row_end = row_offsets[row + 1];
                cursor = distbfs::open_row(columns, row, static_cast<long long>(row) * size + rank);
            }
            out[slot - first] = cursor.next();
        }
    }
}

extern "C" __global__ void decode_slots_kernel(
    const size_type* __restrict__ row_offsets,  // in: CSR row offsets (rows + 1)
    size_type rows,                             // in: local rows
    const unsigned char* __restrict__ bytes,    // in: compressed columns (VarintColumns)
    const size_type* __restrict__ byte_offsets,
    const size_type* __restrict__ point_bytes,
    const vertex_t* __restrict__ point_values,
    int rank,                                   // in: row r is global vertex r * size + rank
    int size,
    const long long* __restrict__ slots,        // in: edge slots, each below the edge count
    size_type count,                            // in: their number
    vertex_t* __restrict__ out)                 // out: out[i] = the column at slots[i]
{
    const distbfs::VarintColumns columns{bytes, byte_offsets, point_bytes, point_values};
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += stride) {
        const size_type slot = slots[i];
        const size_type row = row_of(row_offsets, rows, slot);
        out[i] = distbfs::open_at(columns, row, row_offsets[row],
                                  static_cast<long long>(row) * size + rank, slot)
                     .next();
    }
}

extern "C" __global__ void decode_points_kernel(
    const size_type* __restrict__ row_offsets,  // in: CSR row offsets (rows + 1)
    size_type rows,                             // in: local rows
    const unsigned char* __restrict__ bytes,    // in: compressed columns
    const size_type* __restrict__ byte_offsets,
    int rank,                                   // in: row r is global vertex r * size + rank
    int size,
    size_type* __restrict__ point_bytes,        // out: the byte where slot k * kPoint's code
                                                //      starts
    vertex_t* __restrict__ point_values)        // out: the column at slot max(k * kPoint - 1, 0)
{
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    const size_type edges = row_offsets[rows];
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type row = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         row < rows; row += stride) {
        const size_type begin = row_offsets[row];
        const size_type end = row_offsets[row + 1];
        size_type pos = byte_offsets[row];
        long long value = 0;
        for (size_type slot = begin; slot < end; ++slot) {
            if (slot % kPoint == 0) {
                point_bytes[slot / kPoint] = pos;
                if (slot > begin) point_values[slot / kPoint] = static_cast<vertex_t>(value);
            }
            const unsigned long long code = distbfs::read_varint(bytes, pos);
            if (slot == begin) {  // zigzag(c0 - v)
                value = static_cast<long long>(row) * size + rank +
                        (static_cast<long long>(code >> 1) ^ -static_cast<long long>(code & 1));
            } else {
                value += static_cast<long long>(code) + 1;
            }
            if (slot == 0) point_values[0] = static_cast<vertex_t>(value);
        }
        // A point on the next row's head holds this row's last column.
        if (end > begin && end % kPoint == 0 && end < edges) {
            point_values[end / kPoint] = static_cast<vertex_t>(value);
        }
    }
}
