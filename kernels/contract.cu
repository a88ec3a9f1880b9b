/*
 * contract.cu: the contraction stage (Merrill et al. 2012, section 4.2 status lookup, 5.3 and
 * 6.1 step 4): vertices received from every rank -> labels and the next vertex frontier.
 *
 * Per received vertex v (a global id this rank owns, local row v / size): status lookup against
 * its label; an unlabeled vertex is labeled with atomicCAS, so of several copies (sent by
 * different ranks) exactly one wins. The winner writes the predecessor, sets the vertex's bit
 * in this rank's visited bitmask (when asked: with one rank filter_partition already set it),
 * and enters the next frontier, compacted by a block scan and one atomicAdd per block.
 *
 * Several ranks: an item from another rank (outside [own_begin, own_end)) is looked up in the
 * visited bitmask instead, which answers from L2 where the label array would cost a DRAM
 * access: an owned vertex's bit is set exactly when it is labeled or this rank's own bin holds
 * it (filter_partition claimed it before this kernel runs; contract, bottom-up levels and
 * shared frontiers set the bits of what they label), so a set bit drops the copy, and an
 * atomicOr claim picks the one copy that labels the vertex. When
 * given the out-edge row offsets, it also sums the out-degrees of the vertices it labeled (m_f,
 * the direction-optimizing heuristic's input) into counters[frontier_edges], one atomic a warp.
 *
 * The own bin may be one of filter_partition's two meeting bins, contracted before the host
 * reads their lengths (meeting_bin 0 or 1): its length is its half of their packed counter,
 * and bin 0 grew down, so its items run down from received_vertices[-1].
 *
 * contract_min_kernel, the min-reduction form (delta-stepping's striped steps): per received
 * (v, word) request, the owner keeps the least word of v (one 64-bit atomicMin after a plain
 * read culls the requests that cannot win); a word orders as its distance (the bits of a
 * non-negative float64, or an integer distance tied to the parent that gave it, the low 32
 * bits: `tied`). A vertex whose DISTANCE fell is counted as improved; below the bucket's end it
 * joins the next frontier once per step (its stamp `queued` holds the last step it joined;
 * the frontier's out-edges are summed, a bound on the next step's requests), past it the least
 * such distance is kept for the next bucket's search.
 *
 * contract_row_kernel, level 0 of a search from one vertex whose row every rank holds (its owner
 * broadcast it: a hub's row, which the owner alone would otherwise expand, filter and send):
 * each rank labels the row's vertices it owns, the source their parent, and marks every vertex
 * of the row in its visited mask, since all of them are labeled at this level by their owners
 * (the next level's filter culls them). A row holds each vertex once, so the label's status
 * lookup and atomicCAS decide only against the source itself.
 *
 * Invariant: a vertex is labeled at most once per search, with the level it was discovered at,
 * and appears in the next frontier exactly when this kernel labeled it.
 */
#include "common.cuh"

namespace {

using distbfs::kBlockThreads;
using distbfs::kItemsPerThread;
using distbfs::kTileItems;
using distbfs::kUnreached;

typedef distbfs::BlockCompact<kBlockThreads, kItemsPerThread> Compact;

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) contract_kernel(
    const vertex_t* __restrict__ received_vertices,  // in: received global ids (owned here)
    const vertex_t* __restrict__ received_parents,   // in: parent of each, or null
    const size_type* __restrict__ received_count,    // in: number received, or null
    size_type received_limit,                        // in: capacity of the received queue (or
                                                     //     the number itself if count is null)
    int size,                                        // in: ranks: local row of v is v / size
    label_t level,                                   // in: label of vertices discovered now
    label_t* __restrict__ labels,                    // in/out: label of each owned vertex
    pred_t* __restrict__ preds,                      // out: parent of each discovered vertex,
                                                     //     or null (predecessors not kept)
    mask_word_t* __restrict__ visited_mask,          // in/out: bit of each discovered vertex
                                                     //     set, or null to leave the mask alone
    vertex_t* __restrict__ next_frontier,            // out: local ids of discovered vertices
    size_type frontier_capacity,                     // in: capacity of next_frontier
    size_type* __restrict__ counters,                // in/out: level counters; [frontier] +=
                                                     //     discovered
    const size_type* __restrict__ out_offsets,       // in: out-edge row offsets, or null not
                                                     //     to sum [frontier_edges]
    size_type own_begin,                             // in: the items of this rank's own bin;
    size_type own_end,                               //     the others are claimed in the mask
    int meeting_bin)                                 // in: -1, or the meeting bin (0, 1) the
                                                     //     items are (see the header)
{
    __shared__ typename Compact::TempStorage compact;
    const int tid = threadIdx.x;
    size_type degrees = 0;

    const size_type items =
        meeting_bin < 0 ? distbfs::queue_length(received_count, received_limit)
                        : distbfs::meeting_length(received_count, meeting_bin, received_limit);
    const size_type step = meeting_bin == 0 ? -1 : 1;  // item i at received_*[step * i + shift]
    const size_type shift = meeting_bin == 0 ? -1 : 0;
    // Only other ranks' items (the own bin was contracted before): each step over all of a
    // thread's items before the next, so their bitmask reads, then their claims, are in flight
    // together (most of these items are copies of vertices labeled already, culled by the
    // read alone). A launch with own items keeps one item at a time: stepping their label
    // lookups and CAS measured slower (benchmarks/RESULTS.md, "contraction in steps").
    const bool remote_only = visited_mask != nullptr && own_begin >= own_end;
    for (size_type tile = static_cast<size_type>(blockIdx.x) * kTileItems; tile < items;
         tile += static_cast<size_type>(gridDim.x) * kTileItems) {
        vertex_t local[kItemsPerThread];
        int discovered[kItemsPerThread];
        if (remote_only) {
            vertex_t vertex[kItemsPerThread];
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {
                const size_type index = tile + i * kBlockThreads + tid;
                discovered[i] = index < items;
                vertex[i] = discovered[i] ? received_vertices[step * index + shift] : 0;
                local[i] = 0;
            }
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {  // bitmask reads
                discovered[i] = discovered[i] && !distbfs::mask_test(visited_mask, vertex[i]);
            }
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {  // claims: one copy of a vertex wins
                if (discovered[i]) discovered[i] = distbfs::mask_claim(visited_mask, vertex[i]);
            }
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {
                if (!discovered[i]) continue;
                local[i] = vertex[i] / static_cast<vertex_t>(size);
                labels[local[i]] = level;
                const size_type index = tile + i * kBlockThreads + tid;
                if (preds != nullptr) {
                    preds[local[i]] = static_cast<pred_t>(received_parents[step * index + shift]);
                }
                if (out_offsets != nullptr) {
                    degrees += out_offsets[local[i] + 1] - out_offsets[local[i]];
                }
            }
        } else {
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {
                const size_type index = tile + i * kBlockThreads + tid;
                discovered[i] = 0;
                local[i] = 0;
                if (index >= items) continue;
                const vertex_t v = received_vertices[step * index + shift];
                local[i] = v / static_cast<vertex_t>(size);
                const bool remote =
                    visited_mask != nullptr && (index < own_begin || index >= own_end);
                if (remote) {  // the mask's bit, then the one atomic that picks the labeling copy
                    if (distbfs::mask_test(visited_mask, v)) continue;
                    if (!distbfs::mask_claim(visited_mask, v)) continue;
                    labels[local[i]] = level;
                } else {  // status lookup, then the one atomic that decides between discoverers
                    if (labels[local[i]] != kUnreached) continue;
                    if (atomicCAS(&labels[local[i]], kUnreached, level) != kUnreached) continue;
                    // The own bin's bits were set by this rank's filter: read before the atomic.
                    if (visited_mask != nullptr && !distbfs::mask_test(visited_mask, v)) {
                        distbfs::mask_claim(visited_mask, v);
                    }
                }
                discovered[i] = 1;
                if (preds != nullptr) {
                    preds[local[i]] = static_cast<pred_t>(received_parents[step * index + shift]);
                }
                if (out_offsets != nullptr) {
                    degrees += out_offsets[local[i] + 1] - out_offsets[local[i]];
                }
            }
        }

        size_type slot[kItemsPerThread];
        Compact(compact).reserve(discovered, slot, counters + distbfs::kCounterFrontier);
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (discovered[i] && slot[i] < frontier_capacity) next_frontier[slot[i]] = local[i];
        }
    }
    if (out_offsets == nullptr) return;
    degrees = distbfs::warp_sum(degrees);
    if ((tid & (distbfs::kWarpThreads - 1)) == 0 && degrees > 0) {
        distbfs::reserve_slots(counters + distbfs::kCounterFrontierEdges, degrees);
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) contract_row_kernel(
    const vertex_t* __restrict__ row,           // in: the source's out-neighbours (global ids)
    size_type length,                           // in: their number
    pred_t parent,                              // in: the source
    int rank,                                   // in: this rank: it labels v % size == rank
    int size,                                   // in: ranks: local row of v is v / size
    label_t level,                              // in: label of the vertices discovered
    label_t* __restrict__ labels,               // in/out: label of each owned vertex
    pred_t* __restrict__ preds,                 // out: parent of each discovered vertex, or null
    mask_word_t* __restrict__ visited_mask,     // in/out: every vertex of the row set
    vertex_t* __restrict__ next_frontier,       // out: local ids of discovered vertices
    size_type frontier_capacity,                // in: capacity of next_frontier
    size_type* __restrict__ counters,           // in/out: [frontier] += discovered,
                                                //     [frontier_edges] += their out-edges
    const size_type* __restrict__ out_offsets)  // in: out-edge row offsets
{
    __shared__ typename Compact::TempStorage compact;
    const int tid = threadIdx.x;
    size_type degrees = 0;
    for (size_type tile = static_cast<size_type>(blockIdx.x) * kTileItems; tile < length;
         tile += static_cast<size_type>(gridDim.x) * kTileItems) {
        vertex_t local[kItemsPerThread];
        int discovered[kItemsPerThread];
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            const size_type index = tile + i * kBlockThreads + tid;
            discovered[i] = 0;
            local[i] = 0;
            if (index >= length) continue;
            const vertex_t v = row[index];
            if (!distbfs::mask_test(visited_mask, v)) distbfs::mask_set(visited_mask, v);
            if (v % static_cast<vertex_t>(size) != rank) continue;
            local[i] = v / static_cast<vertex_t>(size);
            if (labels[local[i]] != kUnreached) continue;
            if (atomicCAS(&labels[local[i]], kUnreached, level) != kUnreached) continue;
            discovered[i] = 1;
            if (preds != nullptr) preds[local[i]] = parent;
            degrees += out_offsets[local[i] + 1] - out_offsets[local[i]];
        }
        size_type slot[kItemsPerThread];
        Compact(compact).reserve(discovered, slot, counters + distbfs::kCounterFrontier);
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (discovered[i] && slot[i] < frontier_capacity) next_frontier[slot[i]] = local[i];
        }
    }
    degrees = distbfs::warp_sum(degrees);
    if ((tid & (distbfs::kWarpThreads - 1)) == 0 && degrees > 0) {
        distbfs::reserve_slots(counters + distbfs::kCounterFrontierEdges, degrees);
    }
}

namespace {

typedef unsigned long long word_t;

__device__ __forceinline__ word_t distance_key(word_t word, int tied) {
    return tied ? word >> 32 : word;
}

// The distance of a word as float64 bits (a tied word's integer distance; none: +inf).
__device__ __forceinline__ word_t distance_bits(word_t word, int tied) {
    if (!tied) return word;
    if (word == ~0ull) return 0x7ff0000000000000ull;
    return static_cast<word_t>(__double_as_longlong(static_cast<double>(word >> 32)));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) contract_min_kernel(
    const vertex_t* __restrict__ received_vertices,  // in: received global ids (owned here)
    const word_t* __restrict__ received_words,       // in: the word each request offers
    size_type items,                                 // in: number received
    int size,                                        // in: ranks: local row of v is v / size
    int tied,                                        // in: words are tied (see the header)
    word_t* __restrict__ words,                      // in/out: word of each owned vertex
    double end,                                      // in: the current bucket's end
    int* __restrict__ queued,                        // in/out: step each vertex last joined
    int step,                                        // in: this step's stamp
    vertex_t* __restrict__ next_frontier,            // out: local ids of improved vertices
    size_type frontier_capacity,                     // in: its capacity (owned vertices)
    size_type* __restrict__ counters,                // in/out: [0] frontier length, [1] +=
                                                     //     improved, [2] += the frontier's
                                                     //     out-edges, [3] least distance past
                                                     //     the end (float64 bits, atomicMin)
    const size_type* __restrict__ out_offsets)       // in: out-edge row offsets
{
    __shared__ typename Compact::TempStorage compact;
    const int tid = threadIdx.x;
    const word_t end_bits = static_cast<word_t>(__double_as_longlong(end));
    size_type improved = 0;
    size_type degrees = 0;
    word_t least = ~0ull;
    for (size_type tile = static_cast<size_type>(blockIdx.x) * kTileItems; tile < items;
         tile += static_cast<size_type>(gridDim.x) * kTileItems) {
        vertex_t local[kItemsPerThread];
        word_t offer[kItemsPerThread];
        word_t seen[kItemsPerThread];
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {  // the reads, then the atomics
            const size_type index = tile + i * kBlockThreads + tid;
            local[i] = 0;
            offer[i] = seen[i] = 0;
            if (index >= items) continue;
            local[i] = received_vertices[index] / static_cast<vertex_t>(size);
            offer[i] = received_words[index];
            seen[i] = __ldcg(words + local[i]);
        }
        int joined[kItemsPerThread];
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (offer[i] < seen[i]) seen[i] = atomicMin(words + local[i], offer[i]);
            joined[i] = 0;
            if (distance_key(offer[i], tied) >= distance_key(seen[i], tied)) continue;
            ++improved;
            const word_t bits = distance_bits(offer[i], tied);
            if (bits >= end_bits) {
                least = bits < least ? bits : least;
            } else {
                joined[i] = atomicExch(queued + local[i], step) != step;
            }
        }
        size_type slot[kItemsPerThread];
        Compact(compact).reserve(joined, slot, counters);
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (!joined[i]) continue;
            if (slot[i] < frontier_capacity) next_frontier[slot[i]] = local[i];
            degrees += out_offsets[local[i] + 1] - out_offsets[local[i]];
        }
    }
    improved = distbfs::warp_sum(improved);
    degrees = distbfs::warp_sum(degrees);
#pragma unroll
    for (int offset = distbfs::kWarpThreads / 2; offset > 0; offset /= 2) {
        const word_t other = __shfl_xor_sync(distbfs::kFullWarp, least, offset);
        least = other < least ? other : least;
    }
    if ((tid & (distbfs::kWarpThreads - 1)) == 0) {
        if (improved > 0) distbfs::reserve_slots(counters + 1, improved);
        if (degrees > 0) distbfs::reserve_slots(counters + 2, degrees);
        if (least != ~0ull) atomicMin(reinterpret_cast<word_t*>(counters + 3), least);
    }
}
