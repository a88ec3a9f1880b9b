/*
 * expand.cu: the expansion stage (Merrill et al. 2012, section 4.1 and 5.3): vertex frontier ->
 * edge frontier, by scan+warp+CTA gathering.
 *
 * Each thread takes one vertex of the frontier and loads its adjacency range from the CSR. A
 * block-wide prefix sum of the range lengths gives every thread its slots in the edge queue,
 * and one atomicAdd per block reserves the block's slots. Then the block gathers:
 *   grid: lists of more than heavy_degree neighbours (hubs) are cut into pieces of
 *         heavy_degree edges that go to a heavy queue, and expand_heavy_kernel, launched next,
 *         hands the pieces to the blocks of the grid: a hub never serialises a level on one
 *         block (a Kronecker frontier of 200 vertices can hold 2 M edges). A frontier of few
 *         tiles (fewer than the grid's blocks) sends its shorter lists there too, one piece
 *         each (piece_above): else its few blocks strip-mine hundreds of thousands of edges
 *         while the rest of the device idles;
 *   CTA:  lists of >= block_threads neighbours: threads vie for the block and strip-mine them;
 *   warp: lists of >= 32 neighbours: threads vie for their warp and strip-mine them;
 *   scan: the rest (< 32 each) are packed into a shared gather buffer by a second prefix sum
 *         and read by all threads, so no lane idles on short lists.
 *
 * Strips (a frontier with more out-edges than the edge queue holds): frontier_lengths_kernel
 * writes each frontier vertex's list length, a CUB scan (cupy.cumsum) makes them the end of each
 * list in the frontier's edge sequence, and expand_kernel is launched once per window
 * [window_begin, window_end) of that sequence: each thread clips its list to the window, and its
 * slots are its list's position in the window (no reservation). Every edge of the frontier is in
 * exactly one window; a hub's list may be cut between two.
 *
 * Compressed rows (expand_varint_kernel, expand_heavy_varint_kernel; VarintColumns in
 * common.cuh): the same tiles, slots, windows and hub pieces, but a list is gathered in pieces
 * cut at the decode points (at most kDecodePointEdges neighbours each), one thread decoding a
 * piece from the row's head or the point before it; a hub piece's pieces go to every thread of
 * the grid.
 *
 * Output order inside the edge queue is arbitrary (the level loop never depends on it).
 * Invariant: the block writes exactly the slots it reserved (a window: its edges' positions in
 * the window), and none at or past the capacity.
 */
#include "common.cuh"

#include <cub/block/block_scan.cuh>

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kHeavyDegree;
using distbfs::kWarpThreads;

typedef cub::BlockScan<size_type, kBlockThreads> OffsetScan;
typedef cub::BlockScan<int, kBlockThreads> FineScan;

struct ExpandStorage {
    typename OffsetScan::TempStorage offset_scan;
    typename FineScan::TempStorage fine_scan;
    size_type base;  // first edge-queue slot of the block's tile
    // Command of the thread that won the block (CTA gathering).
    int cta_owner;
    size_type cta_begin;   // first column index of its adjacency list
    size_type cta_end;     // one past its last column index
    size_type cta_slot;    // edge-queue slot of its first neighbour
    vertex_t cta_parent;   // its global id
    // Scan-based gathering buffer: one entry per neighbour of a short list (compressed rows:
    // one per piece of a list, pieces ending at decode points).
    size_type gather_column[kBlockThreads];  // column-indices position of the neighbour
    size_type gather_slot[kBlockThreads];    // its edge-queue slot
    vertex_t gather_parent[kBlockThreads];   // global id of the vertex whose list it is in
};

// Compressed rows: what piece gathering adds to each gather entry (nothing for plain rows).
template <bool kVarint>
struct PieceBuffers {
    size_type gather_end[kBlockThreads];  // one past the piece's last column position
    vertex_t gather_row[kBlockThreads];   // local id of the vertex whose list it is
};
template <>
struct PieceBuffers<false> {};

// Copy neighbour `column` of `parent` into edge-queue slot `slot` (if the queue has room).
__device__ __forceinline__ void emit(const vertex_t* __restrict__ column_indices, size_type column,
                                     size_type slot, vertex_t parent,
                                     vertex_t* __restrict__ edge_vertices,
                                     vertex_t* __restrict__ edge_parents, size_type edge_capacity) {
    if (slot >= edge_capacity) return;
    edge_vertices[slot] = column_indices[column];
    if (edge_parents != nullptr) edge_parents[slot] = parent;
}

// Store neighbour `value` of `parent` in edge-queue slot `slot` (if the queue has room).
__device__ __forceinline__ void emit_value(vertex_t value, size_type slot, vertex_t parent,
                                           vertex_t* __restrict__ edge_vertices,
                                           vertex_t* __restrict__ edge_parents,
                                           size_type edge_capacity) {
    if (slot >= edge_capacity) return;
    edge_vertices[slot] = value;
    if (edge_parents != nullptr) edge_parents[slot] = parent;
}

// Decode compressed columns [from, to) of local row `row` (global id `parent`) into the
// edge-queue slots from `slot` on: one thread, fewer than kDecodePointEdges codes skipped.
__device__ __forceinline__ void emit_piece(const distbfs::VarintColumns& columns,
                                           const size_type* __restrict__ row_offsets,
                                           vertex_t row, vertex_t parent, size_type from,
                                           size_type to, size_type slot,
                                           vertex_t* __restrict__ edge_vertices,
                                           vertex_t* __restrict__ edge_parents,
                                           size_type edge_capacity) {
    distbfs::VarintCursor cursor = distbfs::open_at(columns, row, row_offsets[row], parent, from);
    size_type column = from;
    if (edge_parents == nullptr && slot + (to - from) <= edge_capacity) {
        // One thread's slots are consecutive: 16 bytes a store once they are aligned (a warp's
        // lanes write 32 pieces at once, so single stores cost a transaction per value).
        vertex_t* out = edge_vertices + slot;
        for (; column < to && reinterpret_cast<unsigned long long>(out) % 16 != 0; ++column) {
            *out++ = cursor.next();
        }
        if constexpr (sizeof(vertex_t) == 4) {
            for (; column + 4 <= to; column += 4, out += 4) {
                int4 four;
                four.x = cursor.next();
                four.y = cursor.next();
                four.z = cursor.next();
                four.w = cursor.next();
                *reinterpret_cast<int4*>(out) = four;
            }
        } else {
            for (; column + 2 <= to; column += 2, out += 2) {
                longlong2 two;
                two.x = cursor.next();
                two.y = cursor.next();
                *reinterpret_cast<longlong2*>(out) = two;
            }
        }
        for (; column < to; ++column) *out++ = cursor.next();
        return;
    }
    for (; column < to; ++column) {
        emit_value(cursor.next(), slot + (column - from), parent, edge_vertices, edge_parents,
                   edge_capacity);
    }
}

// First index i of the sorted ends[0, size) with ends[i] > value (size if none).
__device__ __forceinline__ size_type first_above(const size_type* __restrict__ ends, size_type size,
                                                 size_type value) {
    size_type low = 0;
    size_type high = size;
    while (low < high) {
        const size_type middle = low + (high - low) / 2;
        if (ends[middle] > value) {
            high = middle;
        } else {
            low = middle + 1;
        }
    }
    return low;
}

}  // namespace

// Strips: the list length of every frontier vertex (cupy.cumsum then makes them list ends).
extern "C" __global__ void __launch_bounds__(kBlockThreads) frontier_lengths_kernel(
    const vertex_t* __restrict__ vertex_frontier,  // in: local ids of the frontier's vertices
    size_type frontier_size,                       // in: number of vertices in vertex_frontier
    const size_type* __restrict__ row_offsets,     // in: CSR row-offsets array (nlocal + 1)
    size_type* __restrict__ lengths)               // out: list length per frontier vertex
{
    for (size_type i = static_cast<size_type>(blockIdx.x) * kBlockThreads + threadIdx.x;
         i < frontier_size; i += static_cast<size_type>(gridDim.x) * kBlockThreads) {
        const vertex_t local = vertex_frontier[i];
        lengths[i] = row_offsets[local + 1] - row_offsets[local];
    }
}

template <bool kVarint>
__device__ __forceinline__ void expand_tiles(
    const vertex_t* __restrict__ vertex_frontier,  // in: local ids of the frontier's vertices
    size_type frontier_size,                       // in: number of vertices in vertex_frontier
    const size_type* __restrict__ frontier_ends,   // in: strips: end of each vertex's list in the
                                                   //     frontier's edge sequence; else null
    size_type window_begin,                        // in: strips: the window of that sequence
    size_type window_end,                          //     this launch expands (else unused)
    const size_type* __restrict__ row_offsets,     // in: CSR row-offsets array (nlocal + 1)
    const vertex_t* __restrict__ column_indices,   // in: CSR column-indices array (global ids)
    int rank,                                      // in: this rank: global id = local * size + rank
    int size,                                      // in: number of ranks the graph is striped over
    vertex_t* __restrict__ edge_vertices,          // out: edge frontier: neighbour global ids
    vertex_t* __restrict__ edge_parents,           // out: expanding vertex per item, or null
    size_type edge_capacity,                       // in: capacity of edge_vertices / edge_parents
    vertex_t* __restrict__ heavy_vertices,         // out: per hub piece: the hub's local id,
    size_type* __restrict__ heavy_columns,         //   its first column-indices position,
    size_type* __restrict__ heavy_slots,           //   and its first edge-queue slot
    size_type heavy_capacity,                      // in: capacity of the heavy queue (pieces)
    size_type piece_above,                         // in: lists longer than this go to it
    size_type* __restrict__ counters,              // in/out: level counters; [edges] += items,
                                                   // [heavy] += hub pieces
    const distbfs::VarintColumns& varint)          // in: compressed columns (kVarint)
{
    __shared__ ExpandStorage smem;
    __shared__ PieceBuffers<kVarint> piece;
    const int tid = threadIdx.x;
    const int lane = tid & (kWarpThreads - 1);
    size_type* edge_count = counters + distbfs::kCounterEdges;
    const bool windowed = frontier_ends != nullptr;  // the same for the whole grid

    // The frontier vertices whose lists meet the window: from the first list ending past its
    // begin to the first list ending at or past its end.
    size_type first = 0;
    size_type last = frontier_size;
    if (windowed) {
        first = first_above(frontier_ends, frontier_size, window_begin);
        last = first_above(frontier_ends, frontier_size, window_end - 1) + 1;
        if (last > frontier_size) last = frontier_size;
    }

    // Grid-stride over tiles of block_threads vertices: the trip count is the same for every
    // thread of a block, so every barrier below is reached by all of them.
    for (size_type tile = first + static_cast<size_type>(blockIdx.x) * kBlockThreads; tile < last;
         tile += static_cast<size_type>(gridDim.x) * kBlockThreads) {
        const size_type index = tile + tid;
        size_type begin = 0;
        size_type length = 0;
        size_type slot = 0;
        vertex_t parent = 0;
        vertex_t local = 0;
        if (index < last) {
            local = vertex_frontier[index];
            begin = row_offsets[local];
            length = row_offsets[local + 1] - begin;
            parent = local * static_cast<vertex_t>(size) + static_cast<vertex_t>(rank);
            if (windowed) {  // clip the list to the window; its slots are its place there
                const size_type end = frontier_ends[index];
                const size_type from = max(end - length, window_begin);
                const size_type to = min(end, window_end);
                begin += from - (end - length);
                length = to > from ? to - from : 0;
                slot = from - window_begin;
            }
        }

        if (!windowed) {  // edge-queue slots of the tile's neighbours: a scan, a block atomic
            size_type tile_edges = 0;
            OffsetScan(smem.offset_scan).ExclusiveSum(length, slot, tile_edges);
            if (tid == 0) {
                smem.base = tile_edges > 0 ? distbfs::reserve_slots(edge_count, tile_edges) : 0;
            }
            __syncthreads();
            slot += smem.base;
        }

        // Grid gathering, deferred: a list longer than piece_above (heavy_degree, or less for
        // a frontier of few tiles) goes to expand_heavy_kernel in pieces of at most
        // heavy_degree edges (one atomic per list). A heavy queue too short for them leaves the
        // list to the gathering below, and its pieces that did fit are written empty
        // (expand_heavy_kernel reads every piece below the capacity).
        if (length > piece_above) {
            const size_type pieces = (length + kHeavyDegree - 1) / kHeavyDegree;
            const size_type entry =
                distbfs::reserve_slots(counters + distbfs::kCounterHeavy, pieces);
            const bool fits = entry + pieces <= heavy_capacity;
            for (size_type piece = 0; piece < pieces && entry + piece < heavy_capacity; ++piece) {
                heavy_vertices[entry + piece] = local;
                heavy_columns[entry + piece] = fits ? begin + piece * kHeavyDegree : begin + length;
                heavy_slots[entry + piece] = slot + piece * kHeavyDegree;
            }
            if (fits) length = 0;
        }

        if constexpr (kVarint) {
            // Piece gathering: each list cut at the decode points (pieces of at most
            // kDecodePointEdges neighbours), pieces ranked by a scan and packed into the shared
            // buffer block_threads at a time; each thread decodes one piece.
            constexpr size_type kPoint = distbfs::kDecodePointEdges;
            const size_type list_end = begin + length;
            const int pieces =
                length > 0 ? static_cast<int>((list_end - 1) / kPoint - begin / kPoint + 1) : 0;
            int piece_rank = 0;
            int piece_total = 0;
            FineScan(smem.fine_scan).ExclusiveSum(pieces, piece_rank, piece_total);
            int packed = 0;  // pieces of this thread's list already put in the buffer
            for (int window = 0; window < piece_total; window += kBlockThreads) {
                while (packed < pieces && piece_rank + packed - window < kBlockThreads) {
                    const int entry = piece_rank + packed - window;
                    const size_type from = packed == 0 ? begin : (begin / kPoint + packed) * kPoint;
                    const size_type to = (begin / kPoint + packed + 1) * kPoint;
                    smem.gather_column[entry] = from;
                    piece.gather_end[entry] = to < list_end ? to : list_end;
                    smem.gather_slot[entry] = slot + (from - begin);
                    smem.gather_parent[entry] = parent;
                    piece.gather_row[entry] = local;
                    ++packed;
                }
                __syncthreads();
                if (window + tid < piece_total) {
                    emit_piece(varint, row_offsets, piece.gather_row[tid], smem.gather_parent[tid],
                               smem.gather_column[tid], piece.gather_end[tid],
                               smem.gather_slot[tid], edge_vertices, edge_parents, edge_capacity);
                }
                __syncthreads();
            }
        } else {
            // CTA gathering: one list at a time, strip-mined by the whole block.
            while (__syncthreads_or(length >= kBlockThreads)) {
                if (length >= kBlockThreads) smem.cta_owner = tid;  // vie: one write survives
                __syncthreads();
                if (smem.cta_owner == tid) {
                    smem.cta_begin = begin;
                    smem.cta_end = begin + length;
                    smem.cta_slot = slot;
                    smem.cta_parent = parent;
                    length = 0;
                }
                __syncthreads();
                const size_type cta_begin = smem.cta_begin;
                const size_type cta_end = smem.cta_end;
                const size_type cta_slot = smem.cta_slot;
                const vertex_t cta_parent = smem.cta_parent;
                for (size_type column = cta_begin + tid; column < cta_end; column += kBlockThreads) {
                    emit(column_indices, column, cta_slot + (column - cta_begin), cta_parent,
                         edge_vertices, edge_parents, edge_capacity);
                }
                // The next __syncthreads_or orders these reads before the next command is written.
            }

            // Warp gathering: lists of at least a warp's width, one at a time per warp.
            unsigned int contenders;
            while ((contenders = __ballot_sync(kFullWarp, length >= kWarpThreads)) != 0) {
                const int leader = __ffs(contenders) - 1;
                const size_type warp_begin = __shfl_sync(kFullWarp, begin, leader);
                const size_type warp_length = __shfl_sync(kFullWarp, length, leader);
                const size_type warp_slot = __shfl_sync(kFullWarp, slot, leader);
                const vertex_t warp_parent = __shfl_sync(kFullWarp, parent, leader);
                if (lane == leader) length = 0;
                for (size_type i = lane; i < warp_length; i += kWarpThreads) {
                    emit(column_indices, warp_begin + i, warp_slot + i, warp_parent, edge_vertices,
                         edge_parents, edge_capacity);
                }
            }

            // Scan-based gathering of the short lists that remain (fewer than 32 neighbours each):
            // rank their neighbours with a second scan, then pack them into the shared buffer
            // block_threads at a time and gather with every thread.
            const int fine_length = static_cast<int>(length);
            int fine_rank = 0;
            int fine_total = 0;
            FineScan(smem.fine_scan).ExclusiveSum(fine_length, fine_rank, fine_total);
            int packed = 0;  // neighbours of this thread's list already put in the buffer
            for (int window = 0; window < fine_total; window += kBlockThreads) {
                // Every neighbour ranked below `window` was packed in an earlier window.
                while (packed < fine_length && fine_rank + packed - window < kBlockThreads) {
                    const int entry = fine_rank + packed - window;
                    smem.gather_column[entry] = begin + packed;
                    smem.gather_slot[entry] = slot + packed;
                    smem.gather_parent[entry] = parent;
                    ++packed;
                }
                __syncthreads();
                if (window + tid < fine_total) {
                    emit(column_indices, smem.gather_column[tid], smem.gather_slot[tid],
                         smem.gather_parent[tid], edge_vertices, edge_parents, edge_capacity);
                }
                __syncthreads();
            }
        }
    }
}


// The expansion of plain CSR rows: CTA, warp and scan gathering of single neighbours.
extern "C" __global__ void __launch_bounds__(kBlockThreads) expand_kernel(
    const vertex_t* __restrict__ vertex_frontier, size_type frontier_size,
    const size_type* __restrict__ frontier_ends, size_type window_begin, size_type window_end,
    const size_type* __restrict__ row_offsets, const vertex_t* __restrict__ column_indices,
    int rank, int size, vertex_t* __restrict__ edge_vertices,
    vertex_t* __restrict__ edge_parents, size_type edge_capacity,
    vertex_t* __restrict__ heavy_vertices, size_type* __restrict__ heavy_columns,
    size_type* __restrict__ heavy_slots, size_type heavy_capacity, size_type piece_above,
    size_type* __restrict__ counters) {
    const distbfs::VarintColumns none{nullptr, nullptr, nullptr, nullptr};
    expand_tiles<false>(vertex_frontier, frontier_size, frontier_ends, window_begin, window_end,
                        row_offsets, column_indices, rank, size, edge_vertices, edge_parents,
                        edge_capacity, heavy_vertices, heavy_columns, heavy_slots, heavy_capacity,
                        piece_above, counters, none);
}

// The expansion of compressed rows (distbfs::VarintColumns): piece gathering.
extern "C" __global__ void __launch_bounds__(kBlockThreads) expand_varint_kernel(
    const vertex_t* __restrict__ vertex_frontier, size_type frontier_size,
    const size_type* __restrict__ frontier_ends, size_type window_begin, size_type window_end,
    const size_type* __restrict__ row_offsets, const unsigned char* __restrict__ bytes,
    const size_type* __restrict__ byte_offsets, const size_type* __restrict__ point_bytes,
    const vertex_t* __restrict__ point_values, int rank, int size,
    vertex_t* __restrict__ edge_vertices, vertex_t* __restrict__ edge_parents,
    size_type edge_capacity, vertex_t* __restrict__ heavy_vertices,
    size_type* __restrict__ heavy_columns, size_type* __restrict__ heavy_slots,
    size_type heavy_capacity, size_type piece_above, size_type* __restrict__ counters) {
    const distbfs::VarintColumns varint{bytes, byte_offsets, point_bytes, point_values};
    expand_tiles<true>(vertex_frontier, frontier_size, frontier_ends, window_begin, window_end,
                       row_offsets, nullptr, rank, size, edge_vertices, edge_parents,
                       edge_capacity, heavy_vertices, heavy_columns, heavy_slots, heavy_capacity,
                       piece_above, counters, varint);
}

// Grid gathering of the hubs expand_kernel queued: each block takes one piece of heavy_degree
// edges at a time (grid-stride over the pieces) and strip-mines it with all its threads, into
// the slots expand_kernel reserved for them. The piece count stays on the device.
extern "C" __global__ void __launch_bounds__(kBlockThreads) expand_heavy_kernel(
    const vertex_t* __restrict__ heavy_vertices,  // in: per hub piece: the hub's local id,
    const size_type* __restrict__ heavy_columns,  //   its first column-indices position,
    const size_type* __restrict__ heavy_slots,    //   and its first edge-queue slot
    size_type heavy_capacity,                     // in: capacity of the heavy queue (pieces)
    const size_type* __restrict__ row_offsets,    // in: CSR row-offsets array (nlocal + 1)
    const vertex_t* __restrict__ column_indices,  // in: CSR column-indices array (global ids)
    int rank,                                     // in: this rank: global id = local * size + rank
    int size,                                     // in: number of ranks the graph is striped over
    vertex_t* __restrict__ edge_vertices,         // out: edge frontier: neighbour global ids
    vertex_t* __restrict__ edge_parents,          // out: expanding vertex per item, or null
    size_type edge_capacity,                      // in: capacity of edge_vertices / edge_parents
    const size_type* __restrict__ counters)       // in: level counters ([heavy]: pieces queued)
{
    const size_type pieces = distbfs::queue_length(counters + distbfs::kCounterHeavy, heavy_capacity);
    for (size_type piece = blockIdx.x; piece < pieces; piece += gridDim.x) {
        const vertex_t local = heavy_vertices[piece];
        const size_type begin = heavy_columns[piece];
        const size_type list_end = row_offsets[local + 1];
        const size_type end = list_end - begin < kHeavyDegree ? list_end : begin + kHeavyDegree;
        const size_type slot = heavy_slots[piece];
        const vertex_t parent = local * static_cast<vertex_t>(size) + static_cast<vertex_t>(rank);
        for (size_type column = begin + threadIdx.x; column < end; column += kBlockThreads) {
            emit(column_indices, column, slot + (column - begin), parent, edge_vertices,
                 edge_parents, edge_capacity);
        }
    }
}

// Grid gathering of a compressed graph's hubs: every thread of the grid takes one piece of a
// hub piece at a time, the hub piece cut at the decode points, and decodes it.
extern "C" __global__ void __launch_bounds__(kBlockThreads) expand_heavy_varint_kernel(
    const vertex_t* __restrict__ heavy_vertices,  // in: per hub piece: the hub's local id,
    const size_type* __restrict__ heavy_columns,  //   its first column position,
    const size_type* __restrict__ heavy_slots,    //   and its first edge-queue slot
    size_type heavy_capacity,                     // in: capacity of the heavy queue (pieces)
    const size_type* __restrict__ row_offsets,    // in: CSR row-offsets array (nlocal + 1)
    const unsigned char* __restrict__ bytes,      // in: compressed columns (VarintColumns)
    const size_type* __restrict__ byte_offsets,
    const size_type* __restrict__ point_bytes,
    const vertex_t* __restrict__ point_values,
    int rank,                                     // in: this rank: global id = local * size + rank
    int size,                                     // in: number of ranks the graph is striped over
    vertex_t* __restrict__ edge_vertices,         // out: edge frontier: neighbour global ids
    vertex_t* __restrict__ edge_parents,          // out: expanding vertex per item, or null
    size_type edge_capacity,                      // in: capacity of edge_vertices / edge_parents
    const size_type* __restrict__ counters)       // in: level counters ([heavy]: pieces queued)
{
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    constexpr size_type kParts = kHeavyDegree / kPoint + 2;  // pieces a hub piece may cut into
    const distbfs::VarintColumns varint{bytes, byte_offsets, point_bytes, point_values};
    const size_type pieces = distbfs::queue_length(counters + distbfs::kCounterHeavy, heavy_capacity);
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < pieces * kParts; i += stride) {
        const size_type hub_piece = i / kParts;
        const size_type part = i % kParts;
        const vertex_t local = heavy_vertices[hub_piece];
        const size_type begin = heavy_columns[hub_piece];
        const size_type list_end = row_offsets[local + 1];
        const size_type end = list_end - begin < kHeavyDegree ? list_end : begin + kHeavyDegree;
        const size_type from = part == 0 ? begin : (begin / kPoint + part) * kPoint;
        size_type to = (begin / kPoint + part + 1) * kPoint;
        if (to > end) to = end;
        if (from >= to) continue;
        const vertex_t parent = local * static_cast<vertex_t>(size) + static_cast<vertex_t>(rank);
        emit_piece(varint, row_offsets, local, parent, from, to,
                   heavy_slots[hub_piece] + (from - begin), edge_vertices, edge_parents,
                   edge_capacity);
    }
}
