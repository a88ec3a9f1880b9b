/*
 * inbound.cu: the frontier of an inbound level (distbfs.traversals.bfs.inbound_level): the
 * all-gathered frontier bitmaps -> a queue of the global ids of every rank's frontier
 * vertices, the rows of this rank's inbound CSR (every vertex's edges into the vertices this
 * rank owns) that the level's expansion reads, with their inbound out-edges summed (the
 * expansion's m_f, which sizes its edge queue).
 *
 *   inbound_frontier_kernel  a thread per gathered word (row r's word j: local ids 32j ..
 *                            32j + 31 of rank r, global ids (32j + b) * size + r): each lane
 *                            keeps its word's vertices whose inbound rows are not empty (on
 *                            P ranks a row holds about 1 / P of a vertex's edges: many of a
 *                            sparse graph's rows are empty), the warp's popcounts reserve its
 *                            lanes' slots with one atomicAdd (warp-aggregated), and each lane
 *                            writes its kept ids in bit order.
 *
 * Invariant: every set bit of a vertex with inbound edges becomes exactly one queue entry;
 * tally[0] counts them, tally[1] their inbound out-edges.
 */
#include "common.cuh"

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) inbound_frontier_kernel(
    const mask_word_t* __restrict__ frontier,   // in: the gathered frontier bitmaps (size rows)
    size_type words,                            // in: words per rank's row
    int size,                                   // in: number of ranks
    const size_type* __restrict__ row_offsets,  // in: the inbound rows' offsets (n + 1)
    vertex_t* __restrict__ vertices,            // out: global ids of the frontier's vertices
    size_type* __restrict__ tally)              // in/out: [0] += vertices, [1] += their edges
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
        // The word's frontier vertices with inbound edges here (an empty row costs the
        // expansion a thread and adds nothing), and their edges.
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
            vertices[slot++] = static_cast<vertex_t>((local + b) * size + row);
        }
    }
    edges = distbfs::warp_sum(edges);
    if (lane == 0 && edges > 0) distbfs::reserve_slots(tally + 1, edges);
}
