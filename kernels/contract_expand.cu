/*
 * contract_expand.cu: the fused small-frontier strategy (Merrill et al. 2012, sections 5.2 and
 * 5.4; b40c's enactor_hybrid) as ONE persistent cooperative grid that runs BFS levels back to
 * back, with a grid barrier (common.cuh's grid_sync, cooperative_groups' grid.sync() scheme) as
 * the level barrier. A level of the two-phase path costs several launches and a host round trip;
 * here it costs one grid barrier besides its work (benchmarks/RESULTS.md, "fused limits").
 * Launched with cuLaunchCooperativeKernel (the loader launches this stage's kernels so), at most
 * as many blocks as can be resident at once: the host sizes the grid as fused_blocks_per_sm x
 * multiprocessors, capped by the occupancy calculator.
 *
 * block_levels_kernel (below) runs the same levels in ONE block, with block barriers and its
 * frontiers in shared memory, while a sparse graph's frontier has at most
 * LaunchPolicy.fused_block_edges edges; beyond that this kernel runs them, launched as a small
 * grid (fused_small_grid_blocks blocks) up to fused_small_grid_edges edges, as the full grid
 * past that: the host hands over between the three (fused.py, _tiers). On a graph whose every
 * out-degree is at most kFusedPairDegree, level_pairs_kernel (below) runs the grids' levels,
 * two between grid barriers.
 *
 * contract_expand_kernel runs on one rank (contract_expand_peers_kernel, below, on several
 * ranks of one node). One rank: the visited bitmask is exact (every labeled vertex has its bit
 * set), so the atomicOr that claims a vertex's bit also decides who labels it, and local ids are
 * global.
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
 * last read before the barrier that ended level L - 1. Three slots make ONE grid barrier per level
 * enough (plus two before the first level: the ring is zeroed, then the entry frontier's edges
 * are counted). The ping-pong queues need no more: during level L the queue of level L + 1 held
 * level L - 1's frontier, last read before the same barrier.
 *
 * Stop rule, tested at the top of every level by every thread on the same ring slot, read after a
 * grid barrier and written only before it (so the decision is the same in every block and every
 * thread leaves the loop at the same level, and every thread of every block reaches every
 * grid barrier): stop before a level whose frontier is empty, holds more than max_frontier
 * vertices or more than the queue capacity (overflow: the host raises), has more than
 * max_edges edges (at most fused_max_edges; a grid of one block takes fewer) or, after the
 * first level, fewer than min_edges (the host hands a shrunken frontier back to a grid of one
 * block), or more heavy vertices than the heavy queue holds (cannot happen when a
 * vertex is labeled once: the capacity is the count of heavy vertices; the two-phase path would
 * take over), or once max_levels levels ran (a search's depth limit: the last level labels
 * level + max_levels; the count `levels` is the same in every thread). Block 0 then writes
 * counters[fused_levels] = levels run and counters[frontier] = the final frontier's length; the
 * frontier is in `frontier` after an even number of levels, in `spare_frontier` after an odd
 * number. At the top of every level, the one it stops before included, thread 0 of block 0
 * writes the level's row of `level_log` (log_level: its frontier's vertices and edges).
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
static_assert(kRingSlots * kRingFields <= distbfs::kFusedScratchSlots,
              "the fused scratch array holds the ring of per-level counts");
static_assert(distbfs::kFusedScratchSlots <= kFusedThreads, "block 0 zeroes the ring in one step");

typedef distbfs::BlockSum<size_type, kFusedThreads> DegreeScan;
typedef distbfs::BlockSum<size_type, kFusedThreads> EdgeReduce;
typedef distbfs::BlockCompact<kFusedThreads, 1> Compact;
typedef distbfs::BlockCompact<kFusedThreads, distbfs::kFusedPairDegree> PairCompact;

struct FusedStorage {
    typename DegreeScan::TempStorage scan;
    typename EdgeReduce::TempStorage reduce;
    typename Compact::TempStorage compact;
    typename PairCompact::TempStorage pair_compact;  // level_pairs_kernel's appends
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

// A row of the per-level log (level_log, when not null) of a fused run: for the frontier of
// its level `levels`, the vertices over all ranks, this rank's vertices and their out-edges.
// Written at the top of every level, the one the run stops before included: the host leaves
// room for max_levels + 1 rows.
constexpr int kLogFields = DISTBFS_FUSED_LOG_FIELDS;
static_assert(kLogFields == 3, "a log row: all vertices, this rank's vertices, its edges");

__device__ __forceinline__ void log_level(size_type* level_log, int levels, size_type vertices,
                                          size_type own_vertices, size_type own_edges) {
    if (level_log == nullptr) return;
    size_type* row = level_log + static_cast<size_type>(kLogFields) * levels;
    row[0] = vertices;
    row[1] = own_vertices;
    row[2] = own_edges;
}

// What every fused kernel leaves in counters[] when it stops (one thread writes).
__device__ __forceinline__ void write_fused_counters(size_type* counters, int levels,
                                                     size_type size, size_type edges,
                                                     size_type labeled,
                                                     size_type labeled_edges) {
    counters[distbfs::kCounterFusedLevels] = levels;
    counters[distbfs::kCounterFrontier] = size;
    counters[distbfs::kCounterFrontierEdges] = edges;
    counters[distbfs::kCounterFusedLabeled] = labeled;
    counters[distbfs::kCounterFusedLabeledEdges] = labeled_edges;
}

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
    end = DegreeScan(smem.scan).inclusive(length, total);
    smem.list_begin[threadIdx.x] = begin;
    smem.list_end[threadIdx.x] = end;
    smem.list_vertex[threadIdx.x] = u;
    __syncthreads();
    return total;
}

// A vertex v this rank owns (local id `local`, global parent `parent`) was just claimed in the
// visited bitmask: label it, record its predecessor, count its out-edges and queue it if heavy.
// Returns true (the caller appends it to the next frontier).
__device__ __forceinline__ bool discover(vertex_t local, pred_t parent,
                                         const size_type* __restrict__ row_offsets,
                                         label_t* __restrict__ labels, pred_t* __restrict__ preds,
                                         const LevelOutput& out, size_type& discovered_edges) {
    labels[local] = out.label;
    if (preds != nullptr) preds[local] = parent;
    const size_type degree = out_degree(row_offsets, local);
    discovered_edges += degree;
    if (degree > kHeavyDegree) {  // rare: one atomic per heavy vertex
        const size_type slot = distbfs::reserve_slots(out.next_counts + kRingHeavy, 1);
        if (slot < out.heavy_capacity) out.next_heavy[slot] = local;
    }
    return true;
}

// Visit the edges first + threadIdx.x, first + stride + threadIdx.x, ... below `edges` of the
// lists in the gather tables: `visit(u, v, keep, next)` handles the edge (u, v) (u: the list's
// vertex, v: its neighbour) and sets bit i of `keep` for each next[i] to append to the next
// frontier (Visit::kItems of them at most). `first`, `stride` and `edges` are the same in every
// thread of the block, so is the trip count, and every thread reaches the reserve's barriers.
template <class Visit>
__device__ __forceinline__ void gather_lists(FusedStorage& smem, size_type first,
                                             size_type stride, size_type edges,
                                             const vertex_t* __restrict__ column_indices,
                                             const LevelOutput& out, Visit& visit) {
    constexpr int kItems = Visit::kItems;
    for (size_type round = first; round < edges; round += stride) {
        const size_type edge = round + threadIdx.x;
        unsigned int keep = 0;
        vertex_t next[kItems];
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
            const vertex_t v = column_indices[smem.list_begin[low] + (edge - list_start)];
            visit(smem.list_vertex[low], v, keep, next);
        }
        size_type slot = distbfs::BlockCompact<kFusedThreads, kItems>(visit.compact(smem))
                             .reserve_run(__popc(keep), out.next_counts + kRingVertices);
#pragma unroll
        for (int i = 0; i < kItems; ++i) {
            if (!(keep >> i & 1u)) continue;
            if (slot < out.capacity) out.next[slot] = next[i];
            ++slot;
        }
    }
}

// What gather_lists and expand_frontier ask of a visit that appends at most one vertex an edge
// and takes every frontier vertex's list as it is.
struct OneItemVisit {
    static constexpr int kItems = 1;
    __device__ __forceinline__ Compact::TempStorage& compact(FusedStorage& smem) {
        return smem.compact;
    }
    __device__ __forceinline__ bool live(vertex_t) { return true; }  // every frontier vertex
};

// One rank: the claim decides who labels v (local ids are global).
struct OneRankVisit : OneItemVisit {
    const size_type* row_offsets;
    label_t* labels;
    pred_t* preds;
    mask_word_t* visited_mask;
    const LevelOutput* out;
    size_type* discovered_edges;

    __device__ __forceinline__ void operator()(vertex_t u, vertex_t v, unsigned int& keep,
                                               vertex_t (&next)[1]) {
        if (distbfs::mask_test(visited_mask, v) || !distbfs::mask_claim(visited_mask, v)) {
            return;
        }
        next[0] = v;
        keep = discover(v, static_cast<pred_t>(u), row_offsets, labels, preds, *out,
                        *discovered_edges);
    }
};

// Level 0's ring slot: the entry frontier's vertices, out-edges and heavy vertices (those go to
// heavy queue A), every other count zero; the stop rule then applies to the entry frontier as to
// every later level. Every thread of the grid calls this; it ends with a grid barrier.
__device__ __forceinline__ void start_ring(FusedStorage& smem,
                                           const vertex_t* frontier, size_type frontier_size,
                                           size_type frontier_capacity,
                                           const size_type* __restrict__ row_offsets,
                                           vertex_t* heavy, size_type heavy_capacity,
                                           size_type* scratch) {
    const int tid = threadIdx.x;
    if (blockIdx.x == 0 && tid < distbfs::kFusedScratchSlots) {
        scratch[tid] = tid == kRingVertices ? frontier_size : 0;
    }
    distbfs::grid_sync();
    size_type edges = 0;
    const size_type entry_size = frontier_size < frontier_capacity ? frontier_size
                                                                   : frontier_capacity;
    const size_type grid_threads = static_cast<size_type>(gridDim.x) * kFusedThreads;
    for (size_type index = static_cast<size_type>(blockIdx.x) * kFusedThreads + tid;
         index < entry_size; index += grid_threads) {
        const vertex_t u = __ldcg(frontier + index);
        const size_type degree = out_degree(row_offsets, u);
        edges += degree;
        if (degree > kHeavyDegree) {
            const size_type slot = distbfs::reserve_slots(scratch + kRingHeavy, 1);
            if (slot < heavy_capacity) heavy[slot] = u;
        }
    }
    const size_type block_edges = EdgeReduce(smem.reduce).sum(edges);
    if (tid == 0 && block_edges > 0) count_add(scratch + kRingEdges, block_edges);
    distbfs::grid_sync();
}

// Expand one level's frontier (`current`, `size` vertices, `heavy_size` of them also in
// `current_heavy`): light lists by the block owning the vertex, heavy lists over the grid.
// Every thread of the grid calls this with the same arguments.
template <class Visit>
__device__ __forceinline__ void expand_frontier(FusedStorage& smem, const vertex_t* current,
                                                size_type size, const vertex_t* current_heavy,
                                                size_type heavy_size,
                                                const size_type* __restrict__ row_offsets,
                                                const vertex_t* __restrict__ column_indices,
                                                const LevelOutput& out, Visit& visit) {
    const int tid = threadIdx.x;
    const size_type blocks = gridDim.x;
    const size_type grid_threads = blocks * kFusedThreads;

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
            const bool live = visit.live(u);
            begin = row_offsets[u];
            const size_type degree = row_offsets[u + 1] - begin;
            if (live && degree <= kHeavyDegree) length = degree;  // heavy: the grid gathers it
        }
        const size_type chunk_edges = load_lists(smem, u, begin, length);
        gather_lists(smem, 0, kFusedThreads, chunk_edges, column_indices, out, visit);
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
                     chunk_edges, column_indices, out, visit);
        __syncthreads();
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
        int max_levels,                     // in: stop after this many levels (depth limit)
        size_type max_edges,                // in: stop before a level with more edges
        size_type min_edges,                // in: stop before a later level with fewer
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
        size_type* __restrict__ level_log,  // out: a row per level (log_level), or null
        size_type* __restrict__ counters)   // out: [fused_levels] = levels run; [frontier] =
                                            //     length of the final frontier
{
    __shared__ FusedStorage smem;
    __shared__ size_type ring[kRingFields];  // the current level's counts
    const int tid = threadIdx.x;

    start_ring(smem, frontier, frontier_size, frontier_capacity, row_offsets, heavy,
               heavy_capacity, scratch);
    size_type discovered_edges = 0;
    size_type block_edges = 0;

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
        // The level's counts: read once a block and shared (every thread reading the one L2
        // line would queue thousands of requests on it).
        if (tid < kRingFields) {
            ring[tid] = __ldcg(scratch + kRingFields * (levels % kRingSlots) + tid);
        }
        __syncthreads();
        size = ring[kRingVertices];
        edges = ring[kRingEdges];
        const size_type heavy_size = ring[kRingHeavy];
        if (blockIdx.x == 0 && tid == 0) log_level(level_log, levels, size, size, edges);
        if (levels > 0) {
            labeled += size;
            labeled_edges += edges;
        }
        if (levels >= max_levels || size == 0 || size > max_frontier ||
            size > frontier_capacity || edges > max_edges || (levels > 0 && edges < min_edges) ||
            heavy_size > heavy_capacity) {
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
        OneRankVisit visit = {{}, row_offsets, labels, preds, visited_mask, &out,
                              &discovered_edges};
        expand_frontier(smem, current, size, current_heavy, heavy_size, row_offsets,
                        column_indices, out, visit);

        // The next frontier's edge count: one atomic per block.
        block_edges = EdgeReduce(smem.reduce).sum(discovered_edges);
        if (tid == 0 && block_edges > 0) count_add(out.next_counts + kRingEdges, block_edges);
        distbfs::grid_sync();  // the level barrier: this level's appends and counts visible

        vertex_t* swap = current;
        current = next;
        next = swap;
        swap = current_heavy;
        current_heavy = next_heavy;
        next_heavy = swap;
    }

    if (blockIdx.x == 0 && tid == 0) {
        write_fused_counters(counters, levels, size, edges, labeled, labeled_edges);
    }
}

/*
 * level_pairs_kernel: contract_expand_kernel's levels (one rank), TWO between grid barriers, for
 * graphs whose every out-degree is at most kFusedPairDegree (meshes, road networks: the host
 * picks it, fused.py, _tiers). Such a level waits for a chain of dependent accesses and a grid
 * barrier; here the second level of a pair follows the first in the thread that claimed its
 * vertex, so a pair pays one barrier, one count and one append, and the second level's chain is
 * short (a row of a few columns, read at once).
 *
 * A pair from frontier F at label D:
 *   level D + 1: every edge (u, v) of F as in contract_expand_kernel, but the claim is an
 *     atomicMin of labels[v] to D + 1 (labels read as unsigned: kUnreached is the largest),
 *     with no test of v's bit first (one round trip less on the chain a level waits for). The
 *     thread that lowers it past D + 1 owns v at D + 1, final: it sets v's bit and preds[v] = u,
 *     and at once runs
 *   level D + 2: v's columns y claimed the same way at D + 2, the ones it took appended to the
 *     next frontier. Such a claim is TENTATIVE: a thread still in level D + 1 may reach y
 *     through F and take it at D + 1 (and expand it itself). So it sets no bit (a set bit means
 *     a final label: the bitmask the other kernels read stays exact), and its predecessor is
 *     an atomicMin of kTentative | v, which the plain write at D + 1 beats in either order.
 *   After the barrier the next pair opens its frontier (PairVisit::live): a vertex whose label
 *     is still D + 2 is kept, gets its bit and loses its predecessor's tag; one taken at D + 1
 *     is dropped. The thread that takes a vertex from a tentative claim counts it (stale
 *     vertices and edges), so the counts of every level stay exact.
 * Labels come out exact: a vertex at distance D + 1 is lowered to D + 1 by whichever thread
 * reaches it through F first, which expands it; one at distance D + 2 is then reached by its
 * neighbour's owner; no label goes below a distance.
 *
 * The ring holds per pair (kPairFields): the queue's length (vertices appended), their out-edges,
 * the heavy count (0: no list is heavy), the pair's first level (vertices, out-edges) and the
 * stale vertices and edges. The top of a pair starting at level L logs rows L - 1 (the previous
 * pair's first level) and L; a pair whose first level found nothing counts as that level alone
 * (the run then stops, as contract_expand_kernel's after the level that found nothing). When
 * one level is left before max_levels, it runs alone (its claims final and appended). On exit,
 * the frontier's vertices are opened once more and the kept ones compacted into the queue the
 * host reads after `levels` levels (spare_frontier after an odd number): the host sees what
 * contract_expand_kernel leaves.
 */
namespace {

constexpr int kPairFields = 7;
constexpr int kPairLevelVertices = 3;  // the pair's first level: its vertices
constexpr int kPairLevelEdges = 4;     //   and their out-edges
constexpr int kPairStaleVertices = 5;  // vertices appended, then taken a level nearer
constexpr int kPairStaleEdges = 6;     //   and their out-edges
constexpr int kPairTallies = 5;        // per thread: appended edges, then fields 3 to 6
static_assert(kRingSlots * kPairFields <= distbfs::kFusedScratchSlots,
              "the fused scratch array holds the ring of level pairs");
static_assert(kRingVertices == 0 && kRingEdges == 1 && kRingHeavy == 2,
              "a pair's ring slot starts as contract_expand_kernel's (start_ring)");
static_assert(distbfs::kFusedPairDegree <= kHeavyDegree, "no list of a paired graph is heavy");
constexpr unsigned long long kTentative = 1ull << 62;  // tag of a tentative predecessor
constexpr size_type kLine = 128;                       // bytes of an L2 line

struct PairVisit {
    static constexpr int kItems = distbfs::kFusedPairDegree;
    const size_type* __restrict__ row_offsets;
    const vertex_t* __restrict__ column_indices;
    unsigned int* labels;  // as unsigned: kUnreached is the largest
    pred_t* preds;
    mask_word_t* visited_mask;
    unsigned int label;  // D: the frontier's label
    bool tentative;      // the frontier came from a pair: live() checks each vertex
    bool pair;           // both levels (else D + 1 alone, its claims appended)
    bool prefetch;       // a small frontier: prefetch_after the claims
    unsigned int tally[kPairTallies];  // this thread's counts of the pair (add_tallies)

    __device__ __forceinline__ PairCompact::TempStorage& compact(FusedStorage& smem) {
        return smem.pair_compact;
    }

    // A level waits for its slowest thread, and on a mesh some thread of every level is the
    // first to touch a line of row offsets, labels or columns, which then comes from DRAM.
    // The frontier moves along the vertex order, so the claimer of v asks L2 for the lines
    // that follow v's (no wait: prefetch), which later levels then find there.
    __device__ __forceinline__ void prefetch_after(vertex_t v, size_type begin) const {
        if (!prefetch) return;
        distbfs::prefetch_l2(row_offsets + v + kLine / sizeof(size_type));
        distbfs::prefetch_l2(labels + v + kLine / sizeof(unsigned int));
        distbfs::prefetch_l2(column_indices + begin + kLine / sizeof(vertex_t));
    }

    // Whether frontier vertex u is expanded: not when a tentative claim lost it a level nearer;
    // a kept one gets its bit and loses its predecessor's tag.
    __device__ __forceinline__ bool live(vertex_t u) {
        if (!tentative) return true;
        if (__ldcg(labels + u) != label) return false;
        distbfs::mask_set(visited_mask, u);
        if (preds != nullptr) {
            atomicAnd(reinterpret_cast<unsigned long long*>(preds + u), ~kTentative);
        }
        return true;
    }

    __device__ __forceinline__ void operator()(vertex_t u, vertex_t v, unsigned int& keep,
                                               vertex_t (&next)[kItems]) {
        const size_type begin = row_offsets[v];  // read with the claim: the row, if v is taken
        const size_type end = row_offsets[v + 1];
        const unsigned int near = label + 1;
        const unsigned int old = atomicMin(labels + v, near);  // no bit test first: one trip less
        if (old <= near) return;
        distbfs::mask_set(visited_mask, v);
        if (preds != nullptr) preds[v] = static_cast<pred_t>(u);
        prefetch_after(v, begin);
        const size_type degree = end - begin;
        if (old == near + 1) {  // taken from a tentative claim of this pair
            tally[3] += 1;
            tally[4] += static_cast<unsigned int>(degree);
        }
        if (!pair) {
            keep = 1;
            next[0] = v;
            tally[0] += static_cast<unsigned int>(degree);
            return;
        }
        tally[1] += 1;
        tally[2] += static_cast<unsigned int>(degree);
        claim_row(v, begin, end, keep, next);
    }

    // Level D + 2 from v: its columns, claimed tentatively; the columns, then their claims and
    // rows at once, so a row costs two round trips.
    __device__ __forceinline__ void claim_row(vertex_t v, size_type begin, size_type end,
                                              unsigned int& keep, vertex_t (&next)[kItems]) {
        const unsigned int far = label + 2;
        size_type first[kItems];  // the columns' rows: first position and out-degree
        int degree[kItems];
        unsigned int old[kItems];
#pragma unroll
        for (int j = 0; j < kItems; ++j) next[j] = begin + j < end ? column_indices[begin + j] : -1;
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            old[j] = next[j] >= 0 ? atomicMin(labels + next[j], far) : 0u;
        }
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            const bool open = next[j] >= 0;
            first[j] = open ? row_offsets[next[j]] : 0;
            degree[j] = open ? static_cast<int>(row_offsets[next[j] + 1] - first[j]) : 0;
        }
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            if (!prefetch || next[j] < 0) continue;
            distbfs::prefetch_l2(column_indices + first[j]);  // the next pair reads it first
            prefetch_after(next[j], first[j]);
        }
#pragma unroll
        for (int j = 0; j < kItems; ++j) {
            if (old[j] <= far) continue;
            keep |= 1u << j;
            tally[0] += degree[j];
            if (preds != nullptr) {
                atomicMin(reinterpret_cast<unsigned long long*>(preds + next[j]),
                          kTentative | static_cast<unsigned long long>(v));
            }
        }
    }
};

// Add every thread's tallies into the ring slot `counts` (appended edges to kRingEdges, the rest
// to fields 3 to 6): a warp sum each, one atomic per field and block. Every thread of the block
// calls this; the block's barrier comes before the sums are read.
__device__ __forceinline__ void add_tallies(size_type (*warp_tally)[kPairTallies],
                                            const unsigned int (&tally)[kPairTallies],
                                            size_type* counts) {
    const int lane = threadIdx.x % distbfs::kWarpThreads;
    const int warp = threadIdx.x / distbfs::kWarpThreads;
#pragma unroll
    for (int f = 0; f < kPairTallies; ++f) {
        const size_type sum = __reduce_add_sync(distbfs::kFullWarp, tally[f]);
        if (lane == 0) warp_tally[warp][f] = sum;
    }
    __syncthreads();
    if (threadIdx.x < kPairTallies) {
        size_type sum = 0;
        for (int w = 0; w < kFusedThreads / distbfs::kWarpThreads; ++w) {
            sum += warp_tally[w][threadIdx.x];
        }
        const int field = threadIdx.x == 0 ? kRingEdges : kPairLevelVertices + threadIdx.x - 1;
        if (sum != 0) count_add(counts + field, sum);
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kFusedThreads, kFusedBlocksPerSm)
    level_pairs_kernel(
        vertex_t* frontier,                 // as contract_expand_kernel's
        vertex_t* spare_frontier,
        size_type frontier_size,
        size_type frontier_capacity,
        size_type max_frontier,
        int max_levels,
        size_type max_edges,
        size_type min_edges,
        const size_type* __restrict__ row_offsets,    // every out-degree <= kFusedPairDegree
        const vertex_t* __restrict__ column_indices,
        label_t level,
        label_t* __restrict__ labels,
        pred_t* __restrict__ preds,
        mask_word_t* visited_mask,
        vertex_t* heavy,                    // scratch: start_ring counts the (absent) hubs
        vertex_t* spare_heavy,              // unused: the same arguments as contract_expand's
        size_type heavy_capacity,
        size_type* scratch,                 // scratch: the ring of per-pair counts
        size_type* __restrict__ level_log,
        size_type* __restrict__ counters)
{
    __shared__ FusedStorage smem;
    __shared__ size_type warp_tally[kFusedThreads / distbfs::kWarpThreads][kPairTallies];
    __shared__ size_type ring[kPairFields];  // the current pair's counts
    const int tid = threadIdx.x;
    const bool leader = blockIdx.x == 0 && tid == 0;
    const size_type grid_threads = static_cast<size_type>(gridDim.x) * kFusedThreads;
    unsigned int* label_words = reinterpret_cast<unsigned int*>(labels);

    start_ring(smem, frontier, frontier_size, frontier_capacity, row_offsets, heavy,
               heavy_capacity, scratch);
    (void)spare_heavy;

    vertex_t* current = frontier;
    vertex_t* next = spare_frontier;
    int levels = 0;
    int pair = 0;
    bool paired = false;  // the frontier came from a pair (tentative claims)
    size_type queued = 0;
    size_type size = 0;
    size_type edges = 0;
    size_type labeled = 0;
    size_type labeled_edges = 0;
    for (;; ++pair) {
        // The pair's counts: read once a block and shared (every thread reading the one L2 line
        // would queue thousands of requests on it).
        if (tid < kPairFields) {
            ring[tid] = __ldcg(scratch + kPairFields * (pair % kRingSlots) + tid);
        }
        __syncthreads();
        queued = ring[kRingVertices];
        size = queued - ring[kPairStaleVertices];
        edges = ring[kRingEdges] - ring[kPairStaleEdges];
        if (paired) {
            const size_type first = ring[kPairLevelVertices];
            const size_type first_edges = ring[kPairLevelEdges];
            if (first == 0) {
                --levels;  // the pair's first level found nothing: the run ends after it
            } else {
                if (leader) log_level(level_log, levels - 1, first, first, first_edges);
                labeled += first;
                labeled_edges += first_edges;
            }
        }
        if (leader) log_level(level_log, levels, size, size, edges);
        if (levels > 0) {
            labeled += size;
            labeled_edges += edges;
        }
        if (levels >= max_levels || size == 0 || size > max_frontier ||
            queued > frontier_capacity || edges > max_edges || (levels > 0 && edges < min_edges)) {
            break;  // the same decision in every thread of the grid
        }
        if (blockIdx.x == 0 && tid < kPairFields) {
            scratch[kPairFields * ((pair + 2) % kRingSlots) + tid] = 0;
        }
        const LevelOutput out = {
            static_cast<label_t>(level + levels + 1),
            next,
            frontier_capacity,
            nullptr,
            0,
            scratch + kPairFields * ((pair + 1) % kRingSlots),
        };
        PairVisit visit = {row_offsets, column_indices, label_words, preds, visited_mask,
                           static_cast<unsigned int>(level + levels), paired,
                           levels + 2 <= max_levels, edges <= distbfs::kFusedPrefetchEdges, {}};
        expand_frontier(smem, current, queued, heavy, 0, row_offsets, column_indices, out, visit);
        add_tallies(warp_tally, visit.tally, out.next_counts);
        distbfs::grid_sync();  // the pair's barrier: every claim, append and count is visible

        vertex_t* swap = current;
        current = next;
        next = swap;
        levels += visit.pair ? 2 : 1;
        paired = visit.pair;
    }

    // Leave the frontier's kept vertices in the queue the host reads after `levels` levels.
    vertex_t* target = levels % 2 == 0 ? frontier : spare_frontier;
    if (queued <= frontier_capacity && (paired || current != target)) {
        vertex_t* staging = current == target ? next : target;
        size_type* kept = scratch + kPairFields * ((pair + 1) % kRingSlots);  // zeroed
        PairVisit opener = {row_offsets, column_indices, label_words, preds, visited_mask,
                            static_cast<unsigned int>(level + levels), paired, false, false, {}};
        for (size_type base = static_cast<size_type>(blockIdx.x) * kFusedThreads; base < queued;
             base += grid_threads) {
            const size_type index = base + tid;
            bool keep = false;
            vertex_t u = 0;
            if (index < queued) {
                u = __ldcg(current + index);
                keep = opener.live(u);
            }
            const size_type slot = Compact(smem.compact).reserve_run(keep, kept + kRingVertices);
            if (keep) staging[slot] = u;
        }
        distbfs::grid_sync();
        size = __ldcg(kept + kRingVertices);
        if (staging != target) {
            for (size_type index = static_cast<size_type>(blockIdx.x) * kFusedThreads + tid;
                 index < size; index += grid_threads) {
                target[index] = __ldcg(staging + index);
            }
        }
    }

    if (leader) write_fused_counters(counters, levels, size, edges, labeled, labeled_edges);
}

namespace {

constexpr int kBlockBatch = 4;  // columns of a row block_levels_kernel loads before claiming
constexpr int kBlockWarps = kFusedThreads / distbfs::kWarpThreads;  // warps of its block

// block_levels_kernel's frontier queues, in dynamic shared memory: two of `capacity` vertices,
// each with its row (first and one-past-last column position, read when it was claimed).
struct BlockQueues {
    size_type* begin;   // [2][capacity]
    size_type* end;     // [2][capacity]
    vertex_t* vertex;   // [2][capacity]
    size_type capacity;
};

// What every thread of block_levels_kernel needs to visit edges in one level.
struct BlockLevel {
    const size_type* __restrict__ row_offsets;
    const vertex_t* __restrict__ column_indices;
    label_t* __restrict__ labels;
    pred_t* __restrict__ preds;
    mask_word_t* shared_mask;  // the visited bitmask in shared memory, when
    bool in_shared;            //   it is there (then the claims go to it)
    mask_word_t* global_mask;  // the global visited bitmask
    BlockQueues queues;
    int next;                  // shared queue of the next frontier (0 or 1)
    label_t label;             // label of the vertices this level discovers
    unsigned int* appended;    // the next frontier's count (shared)
    vertex_t* global_next;     // the global queue of the next frontier
};

// Claim v: true for the one thread that sets its bit. A bitmask in shared memory is copied
// from the global one at entry; the global bit follows through a fire-and-forget atomic.
__device__ __forceinline__ bool block_claim(const BlockLevel& lv, vertex_t v) {
    if (!lv.in_shared) {
        return !distbfs::mask_test(lv.global_mask, v) && distbfs::mask_claim(lv.global_mask, v);
    }
    if (distbfs::mask_test(lv.shared_mask, v) || !distbfs::mask_claim(lv.shared_mask, v)) {
        return false;
    }
    distbfs::mask_set(lv.global_mask, v);
    return true;
}

// The claimer of v (reached from u; its row [begin, end)), given its slot in the next frontier,
// labels it and stores it with its row in the next shared queue and in the global one; its
// degree is added to `edges`, the thread's count.
__device__ __forceinline__ void block_store(const BlockLevel& lv, vertex_t u, vertex_t v,
                                            size_type begin, size_type end, unsigned int slot,
                                            size_type& edges) {
    lv.labels[v] = lv.label;
    if (lv.preds != nullptr) lv.preds[v] = static_cast<pred_t>(u);
    edges += end - begin;
    const size_type at = lv.next * lv.queues.capacity + slot;
    lv.queues.vertex[at] = v;
    lv.queues.begin[at] = begin;
    lv.queues.end[at] = end;
    lv.global_next[slot] = v;
}

// block_store with the slot reserved here: one shared atomic per warp for the lanes appending
// together (any subset of the warp).
__device__ __forceinline__ void block_append(const BlockLevel& lv, vertex_t u, vertex_t v,
                                             size_type begin, size_type end, size_type& edges) {
    const unsigned int lanes = __activemask();
    const int leader = __ffs(lanes) - 1;
    const unsigned int rank = __popc(lanes & ((1u << (threadIdx.x & 31)) - 1));
    unsigned int slot = 0;
    if (rank == 0) slot = atomicAdd(lv.appended, static_cast<unsigned int>(__popc(lanes)));
    slot = __shfl_sync(lanes, slot, leader) + rank;
    block_store(lv, u, v, begin, end, slot, edges);
}

// Up to kBlockBatch columns of a row, claimed together (block_claim_batch).
struct BlockBatch {
    vertex_t v[kBlockBatch];      // the columns
    bool won[kBlockBatch];        // whether this thread claimed each
    size_type begin[kBlockBatch];  // the rows of the claimed ones
    size_type end[kBlockBatch];
};

// The columns e, e + step, ... below `last` (at most kBlockBatch): their loads, then their
// claims, then the rows of the claimed ones are each issued together, so a level waits for
// about one memory round trip per stage, not one per edge. Returns how many this thread claimed.
__device__ __forceinline__ int block_claim_batch(const BlockLevel& lv, size_type e,
                                                 size_type last, size_type step,
                                                 BlockBatch& batch) {
#pragma unroll
    for (int k = 0; k < kBlockBatch; ++k) {
        batch.won[k] = e + k * step < last;
        batch.v[k] = batch.won[k] ? lv.column_indices[e + k * step] : 0;
    }
    int claimed = 0;
#pragma unroll
    for (int k = 0; k < kBlockBatch; ++k) {
        batch.won[k] = batch.won[k] && block_claim(lv, batch.v[k]);
        claimed += batch.won[k];
    }
#pragma unroll
    for (int k = 0; k < kBlockBatch; ++k) {
        batch.begin[k] = batch.won[k] ? lv.row_offsets[batch.v[k]] : 0;
        batch.end[k] = batch.won[k] ? lv.row_offsets[batch.v[k] + 1] : 0;
    }
    return claimed;
}

// Visit the columns first, first + step, ... below `last` of u's row, kBlockBatch at a time
// (block_claim_batch), each claimed one appended with its own slot reservation (any subset of
// the warp may call this).
__device__ __forceinline__ void block_visit_row(const BlockLevel& lv, vertex_t u,
                                                size_type first, size_type last,
                                                size_type step, size_type& edges) {
    for (size_type e = first; e < last; e += kBlockBatch * step) {
        BlockBatch batch;
        block_claim_batch(lv, e, last, step, batch);
#pragma unroll
        for (int k = 0; k < kBlockBatch; ++k) {
            if (batch.won[k]) {
                block_append(lv, u, batch.v[k], batch.begin[k], batch.end[k], edges);
            }
        }
    }
}

// The first kBlockBatch columns of u's row [first, last) (none: first == last), visited by
// EVERY lane of the warp together (block_claim_batch), then the slots of all the lanes' claims
// reserved by one shared atomic, each lane's offset among them from three ballots of its count
// (at most kBlockBatch < 8). Most rows of a road network or a mesh end here; the rest of a
// longer one goes to block_visit_row.
__device__ __forceinline__ void block_visit_head(const BlockLevel& lv, vertex_t u,
                                                 size_type first, size_type last, int lane,
                                                 size_type& edges) {
    static_assert(kBlockBatch < 8, "a lane's claims are counted in three ballots");
    BlockBatch batch;
    const int claimed = block_claim_batch(lv, first, last, 1, batch);
    const unsigned int below = (1u << lane) - 1u;
    unsigned int offset = 0;
    unsigned int total = 0;
#pragma unroll
    for (int bit = 0; bit < 3; ++bit) {
        const unsigned int lanes = __ballot_sync(distbfs::kFullWarp, (claimed >> bit) & 1);
        offset += __popc(lanes & below) << bit;
        total += __popc(lanes) << bit;
    }
    unsigned int slot = 0;
    if (lane == 0 && total > 0) slot = atomicAdd(lv.appended, total);
    slot = __shfl_sync(distbfs::kFullWarp, slot, 0) + offset;
#pragma unroll
    for (int k = 0; k < kBlockBatch; ++k) {
        if (batch.won[k]) {
            block_store(lv, u, batch.v[k], batch.begin[k], batch.end[k], slot++, edges);
        }
    }
}

// The sum of `value` over the warp (every lane calls): one redux instruction while the sum
// fits 32 bits (each lane below 2^26), else warp_sum's shuffles.
__device__ __forceinline__ size_type block_warp_sum(size_type value) {
    constexpr size_type kSmall = size_type{1} << 26;
    if (__any_sync(distbfs::kFullWarp, value >= kSmall)) return distbfs::warp_sum(value);
    return __reduce_add_sync(distbfs::kFullWarp, static_cast<unsigned int>(value));
}

}  // namespace

/*
 * block_levels_kernel: the fused levels of one rank in ONE block, for the tiny frontiers of road
 * networks and meshes, where a level is a chain of dependent memory reads that a grid barrier
 * and the ring's global counts would double. Everything a level reads lives in shared memory
 * (dynamic: the host sizes it, _block_layout in fused.py):
 *   two frontier queues of queue_capacity vertices, each with its row, read by the thread that
 *   claimed the vertex, so a level starts on its edges at once;
 *   the visited bitmask, copied from the global one at entry when it fits (mask_words > 0;
 *   else the claims go to the global one); a claim then costs a shared atomic, and the global
 *   bit follows through a fire-and-forget atomicOr.
 * Per level L (frontier F of S <= queue_capacity vertices in shared queue L % 2), a vertex a
 * thread: the first kBlockBatch columns of every row up to a warp's width, by all lanes of the
 * warp in step, with one slot reservation for the warp's claims (block_visit_head: a level of
 * a road network or a mesh is a chain of dependent steps, and this keeps it short); rows of
 * more than a warp's width by the whole warp, the rest of a shorter row by its thread,
 * kBlockBatch columns at a time. Each edge's head v is tested and claimed, and its one claimer
 * labels v, records its predecessor, reads its row and appends v to the next shared queue and
 * to the global queue of level L (the grid kernel's ping-pong pair, so the host finds the
 * final frontier where it would); each warp adds its appended vertices' degrees to the next
 * level's edge count; one block barrier.
 * A level appends at most its edge count of vertices, and the stop rule (as the grid kernel's,
 * on max_frontier and max_edges, both at most queue_capacity) keeps that within a queue.
 * Counts of level L's frontier are in slot L % 3 of shared rings: its vertices (the appends'
 * counter: level L appends to slot (L + 1) % 3 and thread 0 zeroes slot (L + 2) % 3, last read
 * at the top of level L - 1, before that level's barrier) and its edges, one sum a warp (each
 * warp writes its sum into slot (L + 1) % 3, and every thread adds the warps' sums at the top
 * of level L + 1: no 64-bit shared atomic, which is a compare-and-swap loop): one barrier a
 * level, as the grid kernel's ring.
 * level_log and counters[] as the grid kernel writes them.
 */
extern "C" __global__ void __launch_bounds__(kFusedThreads, 1)
    block_levels_kernel(
        vertex_t* frontier,                 // in/out: current frontier on entry; queue A
        vertex_t* spare_frontier,           // out: queue B of the ping-pong pair
        size_type frontier_size,            // in: vertices in `frontier` on entry
        size_type queue_capacity,           // in: vertices a shared queue holds
        size_type mask_words,               // in: words of the bitmask copied to shared
                                            //     memory (0: claims go to the global one)
        size_type max_frontier,             // in: stop before a level with a larger frontier
        int max_levels,                     // in: stop after this many levels (depth limit)
        size_type max_edges,                // in: stop before a level with more edges
        const size_type* __restrict__ row_offsets,    // in: CSR row-offsets array (n + 1)
        const vertex_t* __restrict__ column_indices,  // in: CSR column-indices array
        label_t level,                      // in: label of the vertices in `frontier`
        label_t* __restrict__ labels,       // in/out: label of every vertex
        pred_t* __restrict__ preds,         // out: parent of each discovered vertex, or null
        mask_word_t* visited_mask,          // in/out: visited bitmask (exact: one rank)
        size_type* __restrict__ level_log,  // out: a row per level (log_level), or null
        size_type* __restrict__ counters)   // out: as contract_expand_kernel's
{
    extern __shared__ __align__(16) unsigned char block_shared[];
    __shared__ unsigned int appended[kRingSlots];
    __shared__ unsigned long long warp_edges[kRingSlots][kBlockWarps];
    const int tid = threadIdx.x;
    const int lane = tid % distbfs::kWarpThreads;
    const size_type capacity = queue_capacity;
    BlockQueues queues;
    queues.begin = reinterpret_cast<size_type*>(block_shared);
    queues.end = queues.begin + 2 * capacity;
    queues.vertex = reinterpret_cast<vertex_t*>(queues.end + 2 * capacity);
    queues.capacity = capacity;
    mask_word_t* shared_mask = reinterpret_cast<mask_word_t*>(queues.vertex + 2 * capacity);
    if (max_frontier > capacity) max_frontier = capacity;
    if (max_edges > capacity) max_edges = capacity;

    for (size_type i = tid; i < mask_words; i += kFusedThreads) shared_mask[i] = visited_mask[i];
    if (tid < kRingSlots) appended[tid] = 0;
    __syncthreads();
    // The entry frontier with its rows into shared queue 0 (as far as it fits) and its edges
    // counted, all of them: the host reads the count of a frontier the block does not take.
    unsigned long long entry_edges = 0;
    for (size_type i = tid; i < frontier_size; i += kFusedThreads) {
        const vertex_t u = frontier[i];
        const size_type begin = row_offsets[u];
        const size_type end = row_offsets[u + 1];
        entry_edges += end - begin;
        if (i < capacity) {
            queues.vertex[i] = u;
            queues.begin[i] = begin;
            queues.end[i] = end;
        }
    }
    entry_edges = distbfs::warp_sum(entry_edges);
    if (lane == 0) warp_edges[0][tid / distbfs::kWarpThreads] = entry_edges;
    __syncthreads();

    BlockLevel lv = {row_offsets, column_indices, labels, preds,
                     shared_mask, mask_words > 0, visited_mask, queues};
    size_type size = frontier_size;
    size_type edges = 0;
    size_type labeled = 0;
    size_type labeled_edges = 0;
    int levels = 0;
    for (;; ++levels) {
        const int slot = levels % kRingSlots;
        if (levels > 0) size = appended[slot];
        edges = 0;
#pragma unroll
        for (int warp = 0; warp < kBlockWarps; ++warp) edges += warp_edges[slot][warp];
        if (tid == 0) log_level(level_log, levels, size, size, edges);
        if (levels > 0) {
            labeled += size;
            labeled_edges += edges;
        }
        if (levels >= max_levels || size == 0 || size > max_frontier || edges > max_edges) {
            break;  // the same decision in every thread
        }
        if (tid == 0) appended[(levels + 2) % kRingSlots] = 0;
        const int current = levels & 1;
        lv.next = current ^ 1;
        lv.label = static_cast<label_t>(level + levels + 1);
        lv.appended = &appended[(levels + 1) % kRingSlots];
        lv.global_next = current ? frontier : spare_frontier;
        size_type next_edges = 0;  // out-edges of the vertices this thread appends
        // Warp-uniform trip count: every lane reaches the ballot of each round together.
        for (size_type base = tid - lane; base < size; base += kFusedThreads) {
            const size_type i = base + lane;
            const size_type at = current * capacity + i;
            const vertex_t u = i < size ? queues.vertex[at] : 0;
            const size_type begin = i < size ? queues.begin[at] : 0;
            const size_type end = i < size ? queues.end[at] : 0;
            const bool wide = end - begin > distbfs::kWarpThreads;
            block_visit_head(lv, u, begin, wide ? begin : end, lane, next_edges);
            unsigned int rows = __ballot_sync(distbfs::kFullWarp, wide);
            while (rows) {  // rows longer than a warp: the whole warp, one row at a time
                const int leader = __ffs(rows) - 1;
                rows &= rows - 1;
                const vertex_t w = __shfl_sync(distbfs::kFullWarp, u, leader);
                const size_type first = __shfl_sync(distbfs::kFullWarp, begin, leader);
                const size_type last = __shfl_sync(distbfs::kFullWarp, end, leader);
                block_visit_row(lv, w, first + lane, last, distbfs::kWarpThreads, next_edges);
            }
            if (!wide && begin + kBlockBatch < end) {  // the rest of a narrow row: its thread
                block_visit_row(lv, u, begin + kBlockBatch, end, 1, next_edges);
            }
        }
        next_edges = block_warp_sum(next_edges);  // every lane is here: the loop is uniform
        const int warp = tid / distbfs::kWarpThreads;
        if (lane == 0) warp_edges[(levels + 1) % kRingSlots][warp] = next_edges;
        __syncthreads();
    }
    if (tid == 0) write_fused_counters(counters, levels, size, edges, labeled, labeled_edges);
}

/*
 * contract_expand_peers_kernel: the same fused small-frontier levels on SEVERAL ranks of one
 * node, each a cooperative grid on its own GPU, exchanging through peer memory (CUDA IPC over
 * NVLink or PCIe) instead of the host: a striped level through the host costs two device
 * round trips, an MPI all-to-all, a grouped NCCL send/recv and an all-reduce; here it costs two
 * cross-GPU barriers besides its work (benchmarks/RESULTS.md: "small level, 2 GPUs").
 *
 * Vertices are striped (v % size == rank, local id v / size) as in the two-phase path. Every
 * rank holds a mailbox; `mailboxes[o]` is rank o's, mapped into this process. Its header has
 * kPeerWords int64 words per sender s (flags, the item count s delivered, the next-frontier
 * counts s posted); after the header, one segment per sender of `segment_capacity` (vertex,
 * parent) pairs (vertices first, then parents).
 *
 * Per level (every rank runs the same levels: each stop decision reads the same all-rank sums):
 *   expand + filter: as on one rank (light lists per block, heavy lists over the grid); an
 *     edge's head v is claimed in this rank's visited bitmask; an owned v is labeled at once
 *     (its claim is authoritative: the bit of an owned vertex is set exactly when it is
 *     labeled), any other claimed v is written, with its parent's global id, into its owner's
 *     mailbox (a remote store over the peer link);
 *   deliver: every thread fences (system scope), grid barrier; thread 0 stores each peer's
 *     item count, fences, and releases the peer's items flag with the level's epoch, then
 *     waits until every peer's flag in its own mailbox carries that epoch; grid barrier;
 *   contract: the received segments against the bitmask (test, claim), as contract_kernel
 *     does for other ranks' bins; grid barrier;
 *   counts: thread 0 posts this rank's next-frontier vertices, edges and trouble (a queue
 *     that would overflow) into every rank's mailbox and waits for every peer's; grid
 *     barrier; every thread sums the posted counts: the stop rule of the one-rank kernel on
 *     the whole frontier (empty, over max_frontier vertices, over fused_max_edges or
 *     segment_capacity edges, trouble anywhere, max_levels levels run: every rank gets the same
 *     max_levels). The entry frontier's sums come from the host (its edges as a bound).
 *
 * Epochs: level k of a launch uses epoch + 2k + 1 (items) and epoch + 2k + 2 (counts); the host
 * adds 2 x levels run after each launch, the same on every rank. Why no slot is overwritten
 * while read: a peer writes level k+1's items and counts only after every rank posted level
 * k's counts, which each posts after it contracted level k's items and read level k-1's sums.
 *
 * A wait longer than timeout_ns (a rank that never came) stops the grid with
 * counters[peer_failure] = 1; a segment that would overflow (excluded by the stop rule) with 2.
 * counters as the one-rank kernel leaves them, for this rank's part of the final frontier.
 */
namespace {

constexpr int kPeerWords = DISTBFS_PEER_HEADER_WORDS;  // int64 words per sender in a header
constexpr int kPeerItemsFlag = 0;   // epoch of the last items delivered by the sender
constexpr int kPeerCountsFlag = 1;  // epoch of the last counts posted by the sender
constexpr int kPeerItemCount = 2;   // items the sender delivered (last level)
constexpr int kPeerVertices = 3;    // the sender's next frontier: vertices,
constexpr int kPeerEdges = 4;       //   their out-edges,
constexpr int kPeerTrouble = 5;     //   and whether one of its queues would overflow
constexpr int kPeerSent = 6;        // own mailbox only: items sent to that rank this level
constexpr int kPeerAbort = 7;       // own mailbox, own entry: a wait timed out
static_assert(kPeerAbort < kPeerWords, "the peer header entry holds every field");

__device__ __forceinline__ void store_release_system(size_type* address, size_type value) {
    asm volatile("st.release.sys.global.s64 [%0], %1;" ::"l"(address), "l"(value) : "memory");
}

__device__ __forceinline__ size_type load_acquire_system(const size_type* address) {
    size_type value;
    asm volatile("ld.acquire.sys.global.s64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
    return value;
}

__device__ __forceinline__ unsigned long long global_time_ns() {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    return now;
}

// The mailboxes of every rank, as this process addresses them.
struct PeerLinks {
    const size_type* mailboxes;  // address of rank o's mailbox at [o]
    int rank;
    int size;
    size_type capacity;  // (vertex, parent) pairs per sender segment

    __device__ __forceinline__ size_type* entry(int owner, int sender) const {
        return reinterpret_cast<size_type*>(mailboxes[owner]) + sender * kPeerWords;
    }
    __device__ __forceinline__ vertex_t* segment(int owner, int sender) const {
        vertex_t* items =
            reinterpret_cast<vertex_t*>(reinterpret_cast<size_type*>(mailboxes[owner]) +
                                        static_cast<size_type>(size) * kPeerWords);
        return items + static_cast<size_type>(sender) * 2 * capacity;
    }
    // Thread 0 of the grid: wait until every peer's `flag` in this rank's mailbox reaches
    // `epoch`; false after timeout_ns without it.
    __device__ bool wait(int flag, size_type epoch, size_type timeout_ns) const {
        const unsigned long long deadline = global_time_ns() + timeout_ns;
        for (int sender = 0; sender < size; ++sender) {
            if (sender == rank) continue;
            while (load_acquire_system(entry(rank, sender) + flag) < epoch) {
                if (global_time_ns() > deadline) return false;
            }
        }
        __threadfence_system();
        return true;
    }
};

// Several ranks: an owned head is labeled now, any other claimed head goes to its owner.
struct PeerVisit : OneItemVisit {
    const size_type* row_offsets;
    label_t* labels;
    pred_t* preds;
    mask_word_t* visited_mask;
    const LevelOutput* out;
    size_type* discovered_edges;
    PeerLinks links;

    __device__ __forceinline__ void operator()(vertex_t u, vertex_t v, unsigned int& keep,
                                               vertex_t (&next)[1]) {
        if (distbfs::mask_test(visited_mask, v) || !distbfs::mask_claim(visited_mask, v)) {
            return;
        }
        const vertex_t size = static_cast<vertex_t>(links.size);
        const vertex_t parent = u * size + static_cast<vertex_t>(links.rank);
        const int owner = static_cast<int>(v % size);
        if (owner == links.rank) {
            next[0] = v / size;
            keep = discover(next[0], static_cast<pred_t>(parent), row_offsets, labels, preds,
                               *out, *discovered_edges);
            return;
        }
        size_type* sent = links.entry(links.rank, owner) + kPeerSent;
        // The lanes here that send to the same owner reserve their slots with one atomic (a
        // hub's row sends hundreds of thousands of items, all counted on one address per
        // owner), and their stores to the peer's segment land side by side.
        const unsigned int lanes = __activemask();
        const unsigned int same = __match_any_sync(lanes, owner);
        const int lane = static_cast<int>(threadIdx.x & (distbfs::kWarpThreads - 1));
        const int first = __ffs(same) - 1;
        size_type base = 0;
        if (lane == first) base = distbfs::reserve_slots(sent, __popc(same));
        const size_type slot = __shfl_sync(same, base, first) + __popc(same & ((1u << lane) - 1u));
        if (slot < links.capacity) {
            vertex_t* segment = links.segment(owner, links.rank);
            segment[slot] = v;
            segment[links.capacity + slot] = parent;
        }
    }
};

}  // namespace

extern "C" __global__ void __launch_bounds__(kFusedThreads, kFusedBlocksPerSm)
    contract_expand_peers_kernel(
        vertex_t* frontier,                 // in/out: this rank's frontier (local ids); queue A
        vertex_t* spare_frontier,           // out: queue B of the ping-pong pair
        size_type frontier_size,            // in: vertices in `frontier` on entry
        size_type frontier_capacity,        // in: capacity of each queue (vertices owned)
        size_type max_frontier,             // in: stop before a level with a larger frontier
        int max_levels,                     // in: stop after this many levels (depth limit)
        size_type entry_vertices,           // in: the entry frontier over all ranks: vertices
        size_type entry_edges,              //     and at most this many out-edges (the host's)
        const size_type* __restrict__ row_offsets,    // in: CSR of this rank's rows
        const vertex_t* __restrict__ column_indices,  // in: its columns (global ids)
        int rank,                           // in: this rank
        int size,                           // in: ranks
        label_t level,                      // in: label of the vertices in `frontier`
        label_t* __restrict__ labels,       // in/out: label of every owned vertex
        pred_t* __restrict__ preds,         // out: parent of each discovered vertex, or null
        mask_word_t* visited_mask,          // in/out: visited bitmask over all n vertices
        vertex_t* heavy,                    // scratch: heavy queue A
        vertex_t* spare_heavy,              // scratch: heavy queue B
        size_type heavy_capacity,           // in: capacity of each heavy queue
        size_type* scratch,                 // scratch: the ring of per-level counts
        const size_type* mailboxes,         // in: address of every rank's mailbox
        size_type segment_capacity,         // in: pairs per sender segment of a mailbox
        size_type epoch,                    // in: last epoch used (same on every rank)
        size_type timeout_ns,               // in: longest wait for a peer
        size_type* __restrict__ level_log,  // out: a row per level (log_level), or null
        size_type* __restrict__ counters)   // out: as contract_expand_kernel, + [peer_failure]
{
    __shared__ FusedStorage smem;
    const int tid = threadIdx.x;
    const bool leader = blockIdx.x == 0 && tid == 0;
    const size_type grid_threads = static_cast<size_type>(gridDim.x) * kFusedThreads;
    const PeerLinks links = {mailboxes, rank, size, segment_capacity};
    size_type* abort = links.entry(rank, rank) + kPeerAbort;

    if (leader) {  // made visible by start_ring's first barrier
        *abort = 0;
        for (int owner = 0; owner < size; ++owner) links.entry(rank, owner)[kPeerSent] = 0;
    }
    start_ring(smem, frontier, frontier_size, frontier_capacity, row_offsets, heavy,
               heavy_capacity, scratch);
    size_type discovered_edges = 0;
    size_type block_edges = 0;

    vertex_t* current = frontier;
    vertex_t* next = spare_frontier;
    vertex_t* current_heavy = heavy;
    vertex_t* next_heavy = spare_heavy;
    int levels = 0;
    int failure = 0;
    size_type size_here = 0;
    size_type edges_here = 0;
    size_type labeled = 0;
    size_type labeled_edges = 0;
    for (;; ++levels) {
        const size_type* counts = scratch + kRingFields * (levels % kRingSlots);
        size_here = __ldcg(counts + kRingVertices);
        edges_here = __ldcg(counts + kRingEdges);
        const size_type heavy_size = __ldcg(counts + kRingHeavy);
        if (levels > 0) {
            labeled += size_here;
            labeled_edges += edges_here;
        }
        // The whole frontier: from the host at entry, then the counts every rank posted.
        size_type all_vertices = entry_vertices;
        size_type all_edges = entry_edges;
        size_type trouble = 0;
        if (levels > 0) {
            all_vertices = all_edges = 0;
            for (int sender = 0; sender < size; ++sender) {
                const size_type* posted = links.entry(rank, sender);
                all_vertices += __ldcg(posted + kPeerVertices);
                all_edges += __ldcg(posted + kPeerEdges);
                trouble += __ldcg(posted + kPeerTrouble);
            }
        }
        if (leader) log_level(level_log, levels, all_vertices, size_here, edges_here);
        if (levels >= max_levels || all_vertices == 0 || all_vertices > max_frontier ||
            all_edges > kFusedMaxEdges || all_edges > segment_capacity || trouble > 0) {
            break;  // the same decision on every rank, in every thread
        }
        if (blockIdx.x == 0 && tid < kRingFields) {
            scratch[kRingFields * ((levels + 2) % kRingSlots) + tid] = 0;
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
        PeerVisit visit = {{}, row_offsets, labels, preds, visited_mask, &out, &discovered_edges,
                           links};
        expand_frontier(smem, current, size_here, current_heavy, heavy_size, row_offsets,
                        column_indices, out, visit);

        // Deliver: the items reach the peers before their flags.
        const size_type items_epoch = epoch + 2 * levels + 1;
        __threadfence_system();
        distbfs::grid_sync();
        if (leader) {
            for (int owner = 0; owner < size; ++owner) {
                if (owner == rank) continue;
                size_type* sent = links.entry(rank, owner) + kPeerSent;
                const size_type items = __ldcg(sent);
                if (items > segment_capacity) failure = 2;
                links.entry(owner, rank)[kPeerItemCount] = items;
                *sent = 0;
            }
            __threadfence_system();
            for (int owner = 0; owner < size; ++owner) {
                if (owner != rank) {
                    store_release_system(links.entry(owner, rank) + kPeerItemsFlag, items_epoch);
                }
            }
            if (failure != 0 || !links.wait(kPeerItemsFlag, items_epoch, timeout_ns)) *abort = 1;
        }
        distbfs::grid_sync();
        if (__ldcg(abort) != 0) break;

        // Contract what the peers delivered.
        for (int sender = 0; sender < size; ++sender) {
            if (sender == rank) continue;
            size_type items = __ldcg(links.entry(rank, sender) + kPeerItemCount);
            items = items < segment_capacity ? items : segment_capacity;
            const vertex_t* segment = links.segment(rank, sender);
            for (size_type base = static_cast<size_type>(blockIdx.x) * kFusedThreads;
                 base < items; base += grid_threads) {
                const size_type index = base + tid;
                int keep[1] = {0};
                vertex_t local = 0;
                if (index < items) {
                    const vertex_t v = __ldcg(segment + index);
                    if (!distbfs::mask_test(visited_mask, v) &&
                        distbfs::mask_claim(visited_mask, v)) {
                        local = v / static_cast<vertex_t>(size);
                        const pred_t parent =
                            static_cast<pred_t>(__ldcg(segment + segment_capacity + index));
                        keep[0] = discover(local, parent, row_offsets, labels, preds, out,
                                           discovered_edges);
                    }
                }
                size_type slot[1];
                Compact(smem.compact).reserve(keep, slot, out.next_counts + kRingVertices);
                if (keep[0] && slot[0] < out.capacity) out.next[slot[0]] = local;
            }
        }
        block_edges = EdgeReduce(smem.reduce).sum(discovered_edges);
        if (tid == 0 && block_edges > 0) count_add(out.next_counts + kRingEdges, block_edges);
        distbfs::grid_sync();

        // Post this rank's next-frontier counts to every rank; wait for every peer's.
        if (leader) {
            const size_type vertices = __ldcg(out.next_counts + kRingVertices);
            const size_type edges = __ldcg(out.next_counts + kRingEdges);
            const size_type heavy_count = __ldcg(out.next_counts + kRingHeavy);
            const size_type overflow = vertices > frontier_capacity || heavy_count > heavy_capacity;
            for (int owner = 0; owner < size; ++owner) {
                size_type* posted = links.entry(owner, rank);
                posted[kPeerVertices] = vertices;
                posted[kPeerEdges] = edges;
                posted[kPeerTrouble] = overflow;
            }
            __threadfence_system();
            const size_type counts_epoch = epoch + 2 * levels + 2;
            for (int owner = 0; owner < size; ++owner) {
                if (owner != rank) {
                    store_release_system(links.entry(owner, rank) + kPeerCountsFlag, counts_epoch);
                }
            }
            if (!links.wait(kPeerCountsFlag, counts_epoch, timeout_ns)) *abort = 1;
        }
        distbfs::grid_sync();
        if (__ldcg(abort) != 0) break;

        vertex_t* swap = current;
        current = next;
        next = swap;
        swap = current_heavy;
        current_heavy = next_heavy;
        next_heavy = swap;
    }

    if (leader) {
        write_fused_counters(counters, levels, size_here, edges_here, labeled, labeled_edges);
        counters[distbfs::kCounterPeerFailure] = failure != 0 ? failure : (*abort != 0 ? 1 : 0);
    }
}
