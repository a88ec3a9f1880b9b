/*
 * inbound.cu: an inbound level (distbfs.traversals.bfs.inbound_level): a top-down level of
 * several ranks that expands the all-gathered frontier through this rank's inbound rows (every
 * vertex's edges into the vertices this rank owns) and labels what it reaches, with no edge
 * queue, no bins and no exchange: every vertex reached is this rank's own.
 *
 *   inbound_frontier_kernel  the gathered frontier bitmaps -> the frontier's rows to expand: a
 *                            thread per gathered word (row r's word j: local ids 32j .. 32j +
 *                            31 of rank r, global ids (32j + b) * size + r) keeps its word's
 *                            vertices whose inbound rows are not empty; the warp's popcounts
 *                            reserve its lanes' slots with one atomicAdd (warp-aggregated);
 *                            each lane writes its kept ids and their row lengths.
 *   inbound_visit_kernel     the rows' edges, balanced over the grid: a block takes a tile of
 *                            kTileItems consecutive edges of the rows' edge sequence (the
 *                            inclusive scan of their lengths, `ends`), loads the rows the tile
 *                            meets into shared memory, and each thread takes every
 *                            block_threads-th edge of it (coalesced column reads), finds its
 *                            row by binary search there, and visits the head: the visited
 *                            bitmask first (an L2 read), then atomicCAS on its label; the
 *                            winner sets its parent and bit, and enters the next frontier (one
 *                            atomicAdd a warp) with its out-edges (m_f) summed. A hub's row
 *                            spreads over many tiles like any other.
 *
 * Invariants: every frontier vertex with inbound edges becomes exactly one row (tally[0]
 * counts them, tally[1] their edges); every edge of those rows is visited once; a vertex is
 * labeled at most once (its CAS) and enters the next frontier once.
 */
#include "common.cuh"

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kItemsPerThread;
using distbfs::kTileItems;
using distbfs::kUnreached;
using distbfs::kWarpThreads;
using distbfs::warp_sum;

struct VisitStorage {
    size_type first_row;                 // the tile's first row (index into the frontier)
    size_type rows;                      // rows the tile meets (at most kTileItems: none empty)
    size_type ends[kTileItems];        // their ends in the edge sequence
    size_type shift[kTileItems];       // column position of edge e of the row: e + shift
    vertex_t parent[kTileItems];       // their global ids
};

// First index i of the sorted ends[0, size) with ends[i] > value (size if none).
__device__ __forceinline__ size_type first_above(const size_type* ends, size_type size,
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

extern "C" __global__ void __launch_bounds__(kBlockThreads) inbound_frontier_kernel(
    const mask_word_t* __restrict__ frontier,   // in: the gathered frontier bitmaps (size rows)
    size_type words,                            // in: words per rank's row
    int size,                                   // in: number of ranks
    const size_type* __restrict__ row_offsets,  // in: the inbound rows' offsets (n + 1)
    vertex_t* __restrict__ vertices,            // out: global ids of the rows to expand
    size_type* __restrict__ lengths,            // out: their lengths
    size_type* __restrict__ tally)              // in/out: [0] += rows, [1] += their edges
{
    const size_type total = words * size;
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    const int lane = threadIdx.x & (kWarpThreads - 1);
    size_type edges = 0;
    // Every lane runs the same number of rounds, so the warp's shuffles see all 32 lanes.
    for (size_type base = static_cast<size_type>(blockIdx.x) * blockDim.x; base < total;
         base += stride) {
        const size_type w = base + threadIdx.x;
        const size_type row = w / words;
        const size_type local = (w - row * words) * 32;
        // The word's frontier vertices with inbound edges here (an empty row adds nothing).
        mask_word_t bits = 0u;
        for (mask_word_t left = w < total ? frontier[w] : 0u; left != 0u; left &= left - 1u) {
            const int b = __ffs(left) - 1;
            const vertex_t v = static_cast<vertex_t>((local + b) * size + row);
            const size_type length = row_offsets[v + 1] - row_offsets[v];
            if (length > 0) {
                bits |= 1u << b;
                edges += length;
            }
        }
        const int count = __popc(bits);
        int through = count;  // inclusive scan of the warp's counts
#pragma unroll
        for (int offset = 1; offset < kWarpThreads; offset *= 2) {
            const int up = __shfl_up_sync(kFullWarp, through, offset);
            if (lane >= offset) through += up;
        }
        const int warp_total = __shfl_sync(kFullWarp, through, kWarpThreads - 1);
        if (warp_total == 0) continue;  // the same for every lane
        size_type first = 0;
        if (lane == 0) first = distbfs::reserve_slots(tally, warp_total);
        size_type slot = __shfl_sync(kFullWarp, first, 0) + (through - count);
        for (; bits != 0u; bits &= bits - 1u) {
            const int b = __ffs(bits) - 1;
            const vertex_t v = static_cast<vertex_t>((local + b) * size + row);
            vertices[slot] = v;
            lengths[slot] = row_offsets[v + 1] - row_offsets[v];
            ++slot;
        }
    }
    edges = warp_sum(edges);
    if (lane == 0 && edges > 0) distbfs::reserve_slots(tally + 1, edges);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) inbound_visit_kernel(
    const vertex_t* __restrict__ vertices,       // in: the rows to expand (global ids)
    const size_type* __restrict__ ends,          // in: inclusive scan of their lengths
    size_type rows,                              // in: their number
    size_type edges,                             // in: their edges (ends[rows - 1])
    const size_type* __restrict__ in_offsets,    // in: the inbound rows' offsets (n + 1)
    const vertex_t* __restrict__ in_columns,     // in: their heads (global ids, owned here)
    int size,                                    // in: number of ranks (local id = v / size)
    label_t level,                               // in: label of the vertices reached
    label_t* __restrict__ labels,                // in/out: label of each owned vertex
    pred_t* __restrict__ preds,                  // out: parent of each reached vertex, or null
    mask_word_t* __restrict__ visited_mask,      // in/out: visited bits by global id
    const size_type* __restrict__ out_offsets,   // in: this rank's rows (out-degrees: m_f)
    vertex_t* __restrict__ next_frontier,        // out: local ids of the vertices reached
    size_type frontier_capacity,                 // in: its capacity
    size_type* __restrict__ counters)            // in/out: [frontier], [frontier_edges]
{
    __shared__ VisitStorage smem;
    const int tid = threadIdx.x;
    const int lane = tid & (kWarpThreads - 1);
    size_type degrees = 0;
    const size_type tiles = (edges + kTileItems - 1) / kTileItems;
    for (size_type tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        const size_type begin = tile * kTileItems;
        const size_type end = begin + kTileItems < edges ? begin + kTileItems : edges;
        if (tid == 0) {
            const size_type first = first_above(ends, rows, begin);
            smem.first_row = first;
            smem.rows = first_above(ends, rows, end - 1) + 1 - first;
        }
        __syncthreads();
        const size_type first = smem.first_row;
        const size_type count = smem.rows;
        for (size_type i = tid; i < count; i += kBlockThreads) {
            const size_type r = first + i;
            const vertex_t u = vertices[r];
            const size_type start = r > 0 ? ends[r - 1] : 0;
            smem.ends[i] = ends[r];
            smem.shift[i] = in_offsets[u] - start;
            smem.parent[i] = u;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < kItemsPerThread; ++k) {
            const size_type e = begin + static_cast<size_type>(k) * kBlockThreads + tid;
            bool won = false;
            vertex_t local = 0;
            if (e < end) {
                const size_type i = first_above(smem.ends, count, e);
                const vertex_t v = in_columns[e + smem.shift[i]];
                local = v / static_cast<vertex_t>(size);
                if (!distbfs::mask_test(visited_mask, v) &&
                    atomicCAS(&labels[local], kUnreached, level) == kUnreached) {
                    won = true;
                    if (preds != nullptr) preds[local] = smem.parent[i];
                    distbfs::mask_set(visited_mask, v);
                    degrees += out_offsets[local + 1] - out_offsets[local];
                }
            }
            const unsigned int winners = __ballot_sync(kFullWarp, won);
            if (winners != 0u) {
                size_type base = 0;
                if (lane == 0) {
                    base = distbfs::reserve_slots(counters + distbfs::kCounterFrontier,
                                                  __popc(winners));
                }
                base = __shfl_sync(kFullWarp, base, 0);
                const size_type slot = base + __popc(winners & ((1u << lane) - 1u));
                if (won && slot < frontier_capacity) next_frontier[slot] = local;
            }
        }
        __syncthreads();  // the tile's rows are read before the next tile's are written
    }
    degrees = warp_sum(degrees);
    if (lane == 0 && degrees > 0) {
        distbfs::reserve_slots(counters + distbfs::kCounterFrontierEdges, degrees);
    }
}
