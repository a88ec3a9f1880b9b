/*
 * predecessors.cu: the BFS tree from the final labels (one rank, undirected graph).
 *
 * Instead of carrying a parent with every expanded edge (an edge-length queue), a one-rank search
 * keeps labels only and this kernel then gives every reached vertex v other than the source a
 * parent: the first neighbour u in v's row with label(u) == label(v) - 1. Such a u exists for
 * every reached v (it discovered v), is joined to v by an edge, and is one level closer to the
 * source, so the parents form a BFS tree (Graph500 rules 1, 2 and 5).
 *
 * One warp per vertex: the warp reads the row 32 neighbours at a time and stops at the first
 * window holding a hit (ballot), the lowest lane's hit wins.
 */
#include "common.cuh"

namespace {

using distbfs::kUnreached;

constexpr int kWarp = 32;

}  // namespace

extern "C" __global__ void derive_predecessors_kernel(
    const size_type* __restrict__ row_offsets,     // in: CSR row-offsets array (n + 1)
    const vertex_t* __restrict__ column_indices,   // in: CSR column-indices array
    const label_t* __restrict__ labels,            // in: final label of every vertex
    size_type n,                                   // in: number of vertices
    vertex_t source,                               // in: the search's root
    pred_t* __restrict__ preds)                    // out: parent of every vertex (UNREACHED
                                                   //      where not reached, source at source)
{
    const int lane = threadIdx.x % kWarp;
    const size_type warps = static_cast<size_type>(gridDim.x) * (blockDim.x / kWarp);
    for (size_type v = (static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp;
         v < n; v += warps) {
        const label_t level = labels[v];
        if (level == kUnreached || static_cast<vertex_t>(v) == source) {
            if (lane == 0) preds[v] = level == kUnreached ? kUnreached : source;
            continue;
        }
        const size_type end = row_offsets[v + 1];
        pred_t parent = kUnreached;
        for (size_type first = row_offsets[v]; first < end; first += kWarp) {
            const size_type e = first + lane;
            const vertex_t u = e < end ? column_indices[e] : 0;
            const bool hit = e < end && labels[u] == level - 1;
            const unsigned hits = __ballot_sync(0xffffffffu, hit);
            if (hits) {
                parent = __shfl_sync(0xffffffffu, static_cast<pred_t>(u), __ffs(hits) - 1);
                break;
            }
        }
        if (lane == 0) preds[v] = parent;
    }
}
