/*
 * contract_expand.cu: the fused small-frontier strategy (Merrill et al. 2012, sections 5.2 and
 * 5.4; b40c's one-block kernel of enactor_hybrid): ONE block runs many BFS levels back to back,
 * with __syncthreads() as the level barrier, while the frontier stays small. A level of the
 * two-phase path costs several launches and a host round trip; here it costs a few barriers.
 *
 * One rank only: then the visited bitmask is exact (every labeled vertex has its bit set), so
 * the atomicOr that claims a vertex's bit also decides who labels it.
 *
 * Per level: the frontier is taken fused_threads vertices at a time; an inclusive scan of
 * their degrees lays their adjacency lists end to end, and every thread takes edges of that
 * concatenation, finding the list an edge belongs to by binary search over the scan (perfect
 * balance whatever the degrees). A neighbour whose bit this thread sets is labeled, gets its
 * predecessor, and is appended to the other ping-pong queue (a shared-memory counter).
 *
 * The kernel stops before a level whose frontier is empty, holds more than max_frontier
 * vertices, or has more than fused_max_edges edges; the two-phase path takes over from there.
 * Invariant: on return, labels, predecessors, bitmask and the returned frontier are exactly
 * what the same number of two-phase levels would leave (up to the order of the frontier and
 * the choice among valid predecessors).
 */
#include "common.cuh"

namespace {

using distbfs::kFusedMaxEdges;
using distbfs::kFusedThreads;

typedef cub::BlockScan<size_type, kFusedThreads> FusedScan;

struct FusedStorage {
    typename FusedScan::TempStorage scan;
    size_type list_begin[kFusedThreads];  // first column index of each chunk vertex's list
    size_type list_end[kFusedThreads];    // inclusive scan of the chunk's degrees
    vertex_t list_vertex[kFusedThreads];  // the chunk's vertices (parents of their neighbours)
    unsigned long long next_size;         // vertices discovered at this level
    unsigned long long next_edges;        // sum of their degrees
};

}  // namespace

extern "C" __global__ void __launch_bounds__(kFusedThreads) contract_expand_kernel(
    vertex_t* __restrict__ frontier,           // in/out: current frontier on entry; queue A
    vertex_t* __restrict__ spare_frontier,     // out: queue B of the ping-pong pair
    size_type frontier_size,                   // in: vertices in `frontier` on entry
    size_type frontier_capacity,               // in: capacity of each queue (vertices owned)
    size_type max_frontier,                    // in: stop before a level with a larger frontier
    const size_type* __restrict__ row_offsets,  // in: CSR row-offsets array (n + 1)
    const vertex_t* __restrict__ column_indices,  // in: CSR column-indices array
    label_t level,                             // in: label of the vertices in `frontier`
    label_t* __restrict__ labels,              // in/out: label of every vertex
    pred_t* __restrict__ preds,                // out: parent of each discovered vertex, or null
    mask_word_t* __restrict__ visited_mask,    // in/out: visited bitmask (exact: one rank)
    size_type* __restrict__ counters)          // out: [fused_levels] = levels run; [frontier] =
                                               //     length of the final frontier, which is in
                                               //     `frontier` after an even number of levels,
                                               //     in `spare_frontier` after an odd number
{
    __shared__ FusedStorage smem;
    const int tid = threadIdx.x;

    // Edges of the entry frontier: the budget applies to it as to every later level.
    size_type edges = 0;
    for (size_type chunk = 0; chunk < frontier_size; chunk += kFusedThreads) {
        const size_type index = chunk + tid;
        size_type length = 0;
        if (index < frontier_size) {
            const vertex_t u = frontier[index];
            length = row_offsets[u + 1] - row_offsets[u];
        }
        size_type end = 0;
        size_type chunk_edges = 0;
        FusedScan(smem.scan).InclusiveSum(length, end, chunk_edges);
        edges += chunk_edges;
        __syncthreads();
    }

    vertex_t* current = frontier;
    vertex_t* next = spare_frontier;
    size_type size = frontier_size;
    int levels = 0;
    // Every condition below is the same in every thread (shared or scan-aggregate values).
    while (size > 0 && size <= max_frontier && edges <= kFusedMaxEdges) {
        if (tid == 0) {
            smem.next_size = 0;
            smem.next_edges = 0;
        }
        __syncthreads();
        for (size_type chunk = 0; chunk < size; chunk += kFusedThreads) {
            const size_type index = chunk + tid;
            vertex_t u = 0;
            size_type begin = 0;
            size_type length = 0;
            if (index < size) {
                u = current[index];
                begin = row_offsets[u];
                length = row_offsets[u + 1] - begin;
            }
            size_type end = 0;
            size_type chunk_edges = 0;
            FusedScan(smem.scan).InclusiveSum(length, end, chunk_edges);
            smem.list_begin[tid] = begin;
            smem.list_end[tid] = end;
            smem.list_vertex[tid] = u;
            __syncthreads();
            for (size_type edge = tid; edge < chunk_edges; edge += kFusedThreads) {
                // The list holding `edge`: the first one whose inclusive end exceeds it.
                int low = 0;
                int high = kFusedThreads - 1;
                while (low < high) {
                    const int middle = (low + high) / 2;
                    if (smem.list_end[middle] > edge) {
                        high = middle;
                    } else {
                        low = middle + 1;
                    }
                }
                const size_type list_start = low == 0 ? 0 : smem.list_end[low - 1];
                const vertex_t v = column_indices[smem.list_begin[low] + (edge - list_start)];
                if (distbfs::mask_test(visited_mask, v) || !distbfs::mask_claim(visited_mask, v)) {
                    continue;
                }
                labels[v] = level + 1;
                if (preds != nullptr) preds[v] = static_cast<pred_t>(smem.list_vertex[low]);
                const unsigned long long slot = atomicAdd(&smem.next_size, 1ull);
                if (static_cast<size_type>(slot) < frontier_capacity) next[slot] = v;
                atomicAdd(&smem.next_edges,
                          static_cast<unsigned long long>(row_offsets[v + 1] - row_offsets[v]));
            }
            __syncthreads();  // the lists are rewritten by the next chunk
        }
        size = static_cast<size_type>(smem.next_size);
        edges = static_cast<size_type>(smem.next_edges);
        vertex_t* swap = current;
        current = next;
        next = swap;
        ++level;
        ++levels;
        __syncthreads();  // every thread has read next_size before thread 0 clears it
    }

    if (tid == 0) {
        counters[distbfs::kCounterFusedLevels] = levels;
        counters[distbfs::kCounterFrontier] = size;
    }
}
