/*
 * contract_expand.cu: the fused small-frontier strategy (Merrill et al. 2012, sections 5.2 and
 * 5.4; b40c's enactor_hybrid) as ONE persistent cooperative grid that runs BFS levels back to
 * back, with cooperative_groups' grid.sync() as the level barrier. A level of the two-phase path
 * costs several launches and a host round trip (~90 us); here it costs one grid barrier (~1 us)
 * besides its work. Launched with cuLaunchCooperativeKernel (the loader builds this module with
 * enable_cooperative_groups), at most as many blocks as can be resident at once: the host sizes
 * the grid as fused_blocks_per_sm x multiprocessors, capped by the occupancy calculator.
 *
 * One rank only: then the visited bitmask is exact (every labeled vertex has its bit set), so
 * the atomicOr that claims a vertex's bit also decides who labels it, and local ids are global.
 *
 * Per level (frontier F of size S, in one of two ping-pong queues):
 *   light lists: block b takes the vertices [S*b/G, S*(b+1)/G) of F (G blocks), fused_threads at
 *     a time; an inclusive scan of their degrees lays their lists end to end and every thread
 *     takes edges of that concatenation, finding the list of an edge by binary search over the
 *     scan (balanced inside the block whatever the degrees). Lists longer than
 *     heavy_degree count as empty here:
 *   heavy lists: F's vertices with more than heavy_degree neighbours are also kept in a
 *     small heavy queue; every block scans it fused_threads at a time and the edges of the
 *     concatenation are dealt over every thread of the grid (grid gathering), so a hub never
 *     serialises a level on one multiprocessor.
 *   For each edge (u, v): a cached, possibly stale test of v's bit, then an atomicOr claim; the
 *   one thread that sets the bit labels v, sets preds[v] = u, and appends v to the next frontier
 *   (block scan, ONE atomicAdd per block per round of fused_threads edges) and, if v is heavy,
 *   to the next heavy queue. Each thread sums the degrees of the vertices it discovered; a block
 *   reduce and one atomicAdd per block per level give the next frontier's edge count, so the stop
 *   test of the next level needs no pass of its own.
 *
 * Counts of the frontier of level L (vertices, edges, heavy vertices) live in slot L % 3 of a
 * three-slot ring in `scratch`. During level L every block reads slot L % 3, adds to slot
 * (L + 1) % 3, and block 0 zeroes slot (L + 2) % 3, which held level L - 1's counts: those were
 * last read before the barrier that ended level L - 1. Three slots make ONE grid.sync() per level
 * enough (plus two before the first level: the ring is zeroed, then the entry frontier's edges
 * are counted). The ping-pong queues need no more: during level L the queue of level L + 1 held
 * level L - 1's frontier, last read before the same barrier.
 *
 * Stop rule, tested at the top of every level by every thread on the same ring slot, read after a
 * grid.sync() and written only before it (so the decision is the same in every block and every
 * thread leaves the loop at the same level, and every thread of every block reaches every
 * grid.sync()): stop before a level whose frontier is empty, holds more than max_frontier
 * vertices or more than the queue capacity (overflow: the host raises), has more than
 * fused_max_edges edges, or more heavy vertices than the heavy queue holds (cannot happen when a
 * vertex is labeled once: the capacity is the count of heavy vertices; the two-phase path would
 * take over). Block 0 then writes counters[fused_levels] = levels run and counters[frontier] =
 * the final frontier's length; the frontier is in `frontier` after an even number of levels, in
 * `spare_frontier` after an odd number.
 *
 * Memory visibility: queues and counts written by other blocks are read with __ldcg (L2, never a
 * stale L1 line nor the read-only path) after the barrier that follows the writes; the CSR is
 * immutable; the bitmask's plain read may be stale, which only sends a visited vertex to the
 * claim, where the atomicOr rejects it.
 *
 * Invariant: on return, labels, predecessors, bitmask and the returned frontier are exactly what
 * the same number of two-phase levels would leave (up to the order of the frontier and the choice
 * among valid predecessors).
 */
#include "common.cuh"

#include <cooperative_groups.h>

#include <cub/block/block_reduce.cuh>

namespace {

using distbfs::kFusedBlocksPerSm;
using distbfs::kHeavyDegree;
using distbfs::kFusedMaxEdges;
using distbfs::kFusedThreads;

// The ring of per-level counts in `scratch`: slot L % kRingSlots holds level L's frontier.
constexpr int kRingSlots = 3;
constexpr int kRingFields = 3;
constexpr int kRingVertices = 0;  // vertices in the frontier
constexpr int kRingEdges = 1;     // the sum of their out-degrees
constexpr int kRingHeavy = 2;     // those of them with more than heavy_degree neighbours
static_assert(kRingSlots * kRingFields == distbfs::kFusedScratchSlots,
              "the fused scratch array is the ring of per-level counts");
static_assert(distbfs::kFusedScratchSlots <= kFusedThreads, "block 0 zeroes the ring in one step");

typedef cub::BlockScan<size_type, kFusedThreads> DegreeScan;
typedef cub::BlockReduce<size_type, kFusedThreads> EdgeReduce;
typedef distbfs::BlockCompact<kFusedThreads, 1> Compact;

struct FusedStorage {
    typename DegreeScan::TempStorage scan;
    typename EdgeReduce::TempStorage reduce;
    typename Compact::TempStorage compact;
    size_type list_begin[kFusedThreads];  // first column index of each chunk vertex's list
    size_type list_end[kFusedThreads];    // inclusive scan of the chunk's list lengths
    vertex_t list_vertex[kFusedThreads];  // the chunk's vertices (parents of their neighbours)
};

// Where one level writes: the next frontier, its heavy queue and its ring slot.
struct LevelOutput {
    label_t label;                // label of the vertices this level discovers
    vertex_t* next;               // next frontier queue
    size_type capacity;           // its capacity
    vertex_t* next_heavy;         // next heavy queue
    size_type heavy_capacity;     // its capacity
    size_type* next_counts;       // ring slot of the next frontier (vertices, edges, heavy)
};

// Add `value` to a ring count (the old value is not needed: a fire-and-forget reduction).
__device__ __forceinline__ void count_add(size_type* count, size_type value) {
    atomicAdd(reinterpret_cast<unsigned long long*>(count), static_cast<unsigned long long>(value));
}

__device__ __forceinline__ size_type out_degree(const size_type* __restrict__ row_offsets,
                                                vertex_t v) {
    return row_offsets[v + 1] - row_offsets[v];
}

// Put the lists of up to fused_threads vertices in the gather tables (thread i: the i-th list,
// `length` 0 for none) and return their total length, the same in every thread. Every thread of
// the block calls this; it ends with a barrier, so the tables may be read right after.
__device__ __forceinline__ size_type load_lists(FusedStorage& smem, vertex_t u, size_type begin,
                                                size_type length) {
    size_type end = 0;
    size_type total = 0;
    DegreeScan(smem.scan).InclusiveSum(length, end, total);
    smem.list_begin[threadIdx.x] = begin;
    smem.list_end[threadIdx.x] = end;
    smem.list_vertex[threadIdx.x] = u;
    __syncthreads();
    return total;
}

// Visit the edges first + threadIdx.x, first + stride + threadIdx.x, ... below `edges` of the
// lists in the gather tables: claim, label, record the predecessor, append to the next queues.
// `first`, `stride` and `edges` are the same in every thread of the block, so is the trip
// count, and every thread reaches the barriers inside Compact::reserve.
__device__ __forceinline__ void gather_lists(
    FusedStorage& smem, size_type first, size_type stride, size_type edges,
    const size_type* __restrict__ row_offsets, const vertex_t* __restrict__ column_indices,
    label_t* __restrict__ labels, pred_t* __restrict__ preds, mask_word_t* visited_mask,
    const LevelOutput& out, size_type& discovered_edges) {
    for (size_type round = first; round < edges; round += stride) {
        const size_type edge = round + threadIdx.x;
        int keep[1] = {0};
        vertex_t v = 0;
        if (edge < edges) {
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
            v = column_indices[smem.list_begin[low] + (edge - list_start)];
            if (!distbfs::mask_test(visited_mask, v) && distbfs::mask_claim(visited_mask, v)) {
                keep[0] = 1;
                labels[v] = out.label;
                if (preds != nullptr) preds[v] = static_cast<pred_t>(smem.list_vertex[low]);
                const size_type degree = out_degree(row_offsets, v);
                discovered_edges += degree;
                if (degree > kHeavyDegree) {  // rare: one atomic per heavy vertex
                    const size_type slot =
                        distbfs::reserve_slots(out.next_counts + kRingHeavy, 1);
                    if (slot < out.heavy_capacity) out.next_heavy[slot] = v;
                }
            }
        }
        size_type slot[1];
        Compact(smem.compact).reserve(keep, slot, out.next_counts + kRingVertices);
        if (keep[0] && slot[0] < out.capacity) out.next[slot[0]] = v;
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kFusedThreads, kFusedBlocksPerSm)
    contract_expand_kernel(
        vertex_t* frontier,                 // in/out: current frontier on entry; queue A
        vertex_t* spare_frontier,           // out: queue B of the ping-pong pair
        size_type frontier_size,            // in: vertices in `frontier` on entry
        size_type frontier_capacity,        // in: capacity of each queue (vertices owned)
        size_type max_frontier,             // in: stop before a level with a larger frontier
        const size_type* __restrict__ row_offsets,    // in: CSR row-offsets array (n + 1)
        const vertex_t* __restrict__ column_indices,  // in: CSR column-indices array
        label_t level,                      // in: label of the vertices in `frontier`
        label_t* __restrict__ labels,       // in/out: label of every vertex
        pred_t* __restrict__ preds,         // out: parent of each discovered vertex, or null
        mask_word_t* visited_mask,          // in/out: visited bitmask (exact: one rank)
        vertex_t* heavy,                    // scratch: heavy queue A (lists > heavy degree)
        vertex_t* spare_heavy,              // scratch: heavy queue B
        size_type heavy_capacity,           // in: capacity of each heavy queue
        size_type* scratch,                 // scratch: the ring of per-level counts
        size_type* __restrict__ counters)   // out: [fused_levels] = levels run; [frontier] =
                                            //     length of the final frontier
{
    __shared__ FusedStorage smem;
    cooperative_groups::grid_group grid = cooperative_groups::this_grid();
    const int tid = threadIdx.x;
    const size_type blocks = gridDim.x;
    const size_type grid_threads = blocks * kFusedThreads;

    // The ring: level 0's slot holds the entry frontier's length, every other count is zero.
    if (blockIdx.x == 0 && tid < distbfs::kFusedScratchSlots) {
        scratch[tid] = tid == kRingVertices ? frontier_size : 0;
    }
    grid.sync();

    // Edges and heavy vertices of the entry frontier: the stop rule applies to it as to every
    // later level, and the heavy ones go to heavy queue A.
    size_type discovered_edges = 0;
    const size_type entry_size = frontier_size < frontier_capacity ? frontier_size
                                                                   : frontier_capacity;
    for (size_type index = static_cast<size_type>(blockIdx.x) * kFusedThreads + tid;
         index < entry_size; index += grid_threads) {
        const vertex_t u = __ldcg(frontier + index);
        const size_type degree = out_degree(row_offsets, u);
        discovered_edges += degree;
        if (degree > kHeavyDegree) {
            const size_type slot = distbfs::reserve_slots(scratch + kRingHeavy, 1);
            if (slot < heavy_capacity) heavy[slot] = u;
        }
    }
    size_type block_edges = EdgeReduce(smem.reduce).Sum(discovered_edges);
    if (tid == 0 && block_edges > 0) count_add(scratch + kRingEdges, block_edges);
    grid.sync();

    vertex_t* current = frontier;
    vertex_t* next = spare_frontier;
    vertex_t* current_heavy = heavy;
    vertex_t* next_heavy = spare_heavy;
    int levels = 0;
    size_type size = 0;
    size_type edges = 0;
    size_type labeled = 0;        // vertices this run labeled (every frontier after the entry)
    size_type labeled_edges = 0;  // and their out-edges
    for (;; ++levels) {
        const size_type* counts = scratch + kRingFields * (levels % kRingSlots);
        size = __ldcg(counts + kRingVertices);
        edges = __ldcg(counts + kRingEdges);
        const size_type heavy_size = __ldcg(counts + kRingHeavy);
        if (levels > 0) {
            labeled += size;
            labeled_edges += edges;
        }
        if (size == 0 || size > max_frontier || size > frontier_capacity ||
            edges > kFusedMaxEdges || heavy_size > heavy_capacity) {
            break;  // the same decision in every thread of the grid
        }
        if (blockIdx.x == 0 && tid < kRingFields) {
            scratch[kRingFields * ((levels + 2) % kRingSlots) + tid] = 0;  // level + 2's slot
        }
        const LevelOutput out = {
            static_cast<label_t>(level + levels + 1),
            next,
            frontier_capacity,
            next_heavy,
            heavy_capacity,
            scratch + kRingFields * ((levels + 1) % kRingSlots),
        };
        discovered_edges = 0;

        // Light lists: this block's even share of the frontier, fused_threads vertices a time.
        const size_type share_begin = size * blockIdx.x / blocks;
        const size_type share_end = size * (blockIdx.x + 1) / blocks;
        for (size_type chunk = share_begin; chunk < share_end; chunk += kFusedThreads) {
            const size_type index = chunk + tid;
            vertex_t u = 0;
            size_type begin = 0;
            size_type length = 0;
            if (index < share_end) {
                u = __ldcg(current + index);
                begin = row_offsets[u];
                const size_type degree = row_offsets[u + 1] - begin;
                if (degree <= kHeavyDegree) length = degree;  // else: the grid gathers it
            }
            const size_type chunk_edges = load_lists(smem, u, begin, length);
            gather_lists(smem, 0, kFusedThreads, chunk_edges, row_offsets, column_indices, labels,
                         preds, visited_mask, out, discovered_edges);
            __syncthreads();  // the tables and the scan's storage are rewritten by the next chunk
        }

        // Heavy lists: every block reads all of them, their edges are dealt over the grid.
        for (size_type chunk = 0; chunk < heavy_size; chunk += kFusedThreads) {
            const size_type index = chunk + tid;
            vertex_t u = 0;
            size_type begin = 0;
            size_type length = 0;
            if (index < heavy_size) {
                u = __ldcg(current_heavy + index);
                begin = row_offsets[u];
                length = row_offsets[u + 1] - begin;
            }
            const size_type chunk_edges = load_lists(smem, u, begin, length);
            gather_lists(smem, static_cast<size_type>(blockIdx.x) * kFusedThreads, grid_threads,
                         chunk_edges, row_offsets, column_indices, labels, preds, visited_mask,
                         out, discovered_edges);
            __syncthreads();
        }

        // The next frontier's edge count: one atomic per block.
        block_edges = EdgeReduce(smem.reduce).Sum(discovered_edges);
        if (tid == 0 && block_edges > 0) count_add(out.next_counts + kRingEdges, block_edges);
        grid.sync();  // the level barrier: every append and count of this level is visible

        vertex_t* swap = current;
        current = next;
        next = swap;
        swap = current_heavy;
        current_heavy = next_heavy;
        next_heavy = swap;
    }

    if (blockIdx.x == 0 && tid == 0) {
        counters[distbfs::kCounterFusedLevels] = levels;
        counters[distbfs::kCounterFrontier] = size;
        counters[distbfs::kCounterFrontierEdges] = edges;
        counters[distbfs::kCounterFusedLabeled] = labeled;
        counters[distbfs::kCounterFusedLabeledEdges] = labeled_edges;
    }
}
