/*
 * predecessors.cu: the BFS tree from the final labels (one rank, undirected graph).
 *
 * Instead of carrying a parent with every expanded edge (an edge-length queue), a one-rank search
 * keeps labels only and this kernel then gives every reached vertex v other than the source a
 * parent: the first neighbour u in v's row with label(u) == label(v) - 1. Such a u exists for
 * every reached v (it discovered v), is joined to v by an edge, and is one level closer to the
 * source, so the parents form a BFS tree (Graph500 rules 1, 2 and 5).
 *
 * One thread per vertex, scanning its row until the first hit: most vertices find a parent in
 * their first few neighbours, so this costs about one random label read per vertex (a warp per
 * vertex spent 22 ms at Kronecker scale 26 against about 2 ms expected here).
 */
#include "common.cuh"

namespace {

using distbfs::kUnreached;

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
    const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type v = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
         v += threads) {
        const label_t level = labels[v];
        pred_t parent = kUnreached;
        if (static_cast<vertex_t>(v) == source) {
            parent = source;
        } else if (level != kUnreached) {
            const size_type end = row_offsets[v + 1];
            for (size_type e = row_offsets[v]; e < end; ++e) {
                const vertex_t u = column_indices[e];
                if (__ldg(labels + u) == level - 1) {
                    parent = u;
                    break;
                }
            }
        }
        preds[v] = parent;
    }
}
