/*
 * inbound.cu: the frontier of an inbound level (distbfs.traversals.bfs.inbound_level): the
 * all-gathered frontier bitmaps -> a queue of the global ids of every rank's frontier
 * vertices, the rows of this rank's inbound CSR (every vertex's edges into the vertices this
 * rank owns) that the level's expansion reads, with their inbound out-edges summed (the
 * expansion's m_f, which sizes its edge queue).
 *
 *   inbound_frontier_kernel  a thread per gathered word (row r's word j: local ids 32j ..
 *                            32j + 31 of rank r, global ids (32j + b) * size + r): the warp's
 *                            popcounts reserve its lanes' slots with one atomicAdd
 *                            (warp-aggregated), and each lane writes its word's ids in bit
 *                            order and sums their inbound row lengths.
 *
 * Invariant: every set bit becomes exactly one queue entry; tally[0] counts them, tally[1]
 * their inbound out-edges.
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
        mask_word_t bits = w < total ? frontier[w] : 0u;
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
        if (bits == 0u) continue;
        const size_type row = w / words;
        const size_type local = (w - row * words) * 32;
        while (bits != 0u) {
            const int b = __ffs(bits) - 1;
            bits &= bits - 1u;
            const vertex_t v = static_cast<vertex_t>((local + b) * size + row);
            vertices[slot++] = v;
            edges += row_offsets[v + 1] - row_offsets[v];
        }
    }
    edges = distbfs::warp_sum(edges);
    if (lane == 0 && edges > 0) distbfs::reserve_slots(tally + 1, edges);
}
