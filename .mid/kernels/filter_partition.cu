/*
 * filter_partition.cu: the fused filter+partition stage of Merrill et al. 2012, section 6.1
 * (culling as in section 4.2): edge frontier -> owner bins of vertices to send.
 *
 * filter_kernel, per item of the edge queue, in this order:
 *   1. bitmask test: a plain (possibly stale) read of the visited bitmask culls most items;
 *   2. history culling: a per-block hash of recently seen ids culls repeats across tiles;
 *   3. warp culling: a per-warp hash culls repeats among the items a warp holds at once;
 *   4. claim: atomicOr sets the vertex's bit; only the item whose atomicOr set it survives.
 * Steps 1-3 are cheap heuristics that never cull every copy of a vertex; step 4 makes the result
 * exact: every vertex unvisited before the kernel survives exactly once, every other is culled.
 * Each step runs over all of a thread's items before the next (their bitmask reads, then their
 * claims, are in flight together). Survivors are compacted (block scan, one atomicAdd per
 * block) into the kept queue, and, when there are several bins, counted per owner bin
 * (v % nbins) per block, then once per bin.
 *
 * Two meeting bins (two ranks, `meeting`) are written in place instead, with no partition
 * pass: the kept queue is 2 * kept_capacity long and the bins meet at its middle, bin 0 growing
 * down from kept_capacity and bin 1 up from it. One block scan ranks a tile's survivors in
 * both bins (two 16-bit counts packed in an int) and ONE 64-bit atomic on counters[bins]
 * reserves their slots in both (bin 0's count in its low 32 bits, bin 1's in its high ones; the
 * host unpacks them, and [filtered] is left to it): as many atomics as one bin takes, on one
 * address (three per tile, contended by every block, made level 3's filter 16% slower:
 * kron25 as two ranks on one H100, benchmarks/simulated_ranks.py). After the kernel the bins
 * are [kept_capacity - total(0), kept_capacity + total(1)): contiguous, in rank order, each
 * with room for every survivor. The host asks for it only when no bin can count 2^32
 * survivors (n < 2^33 - 1).
 *
 * partition_kernel (several bins, not meeting ones): the scatter of a counting sort by owner.
 * Each block derives the bin starts from the bin totals (an exclusive scan of nbins numbers),
 * ranks its tile's items within their bins with warp-aggregated shared-memory atomics,
 * reserves a range of each bin with one global atomic per bin, and scatters. With nbins == 1
 * the kept queue IS the single bin.
 *
 * bin_totals_kernel: the bin totals of a queue that no filter counted (delta-stepping's
 * relaxation requests, already culled as they were made): per tile, warp-aggregated shared
 * counts, then one global atomic per bin per block; partition_words_kernel (partition_kernel
 * with a 64-bit payload, the requests' words) then scatters it.
 *
 * Order inside a bin is arbitrary. Invariant: bin b holds exactly the survivors v with
 * v % nbins == b, at [start(b), start(b) + total(b)), the bins back to back in order of b
 * (start = exclusive scan of the totals, offset by kept_capacity - total(0) when meeting).
 */
#include "common.cuh"

#include <cub/block/block_scan.cuh>

namespace {

using distbfs::kBlockThreads;
using distbfs::kEmptySlot;
using distbfs::kFullWarp;
using distbfs::kHistoryHashSlots;
using distbfs::kItemsPerThread;
using distbfs::kMaxBins;
using distbfs::kTileItems;
using distbfs::kWarpHashSlots;
using distbfs::kWarpsPerBlock;
using distbfs::kWarpThreads;

typedef distbfs::BlockCompact<kBlockThreads, kItemsPerThread> Compact;
typedef cub::BlockScan<size_type, kBlockThreads> OffsetScan;
typedef cub::BlockScan<int, kBlockThreads> PairScan;

// Two meeting bins: a survivor adds one to its bin's half of the tile's packed pair of counts
// (16 bits each in the block scan, kMeetingHalfBits each in the level's counter).
using distbfs::kMeetingHalf;
using distbfs::kMeetingHalfBits;
constexpr int kTileHalfBits = 16;
static_assert(kTileItems < (1 << kTileHalfBits), "meeting bins count a tile in 16 bits");

struct MeetingStorage {
    typename PairScan::TempStorage scan;
    unsigned long long base;  // this tile's first slots in bin 0 (low half) and bin 1 (high)
};

struct FilterStorage {
    union {
        typename Compact::TempStorage compact;
        MeetingStorage meeting;
    };
    vertex_t warp_hash[kWarpsPerBlock][kWarpHashSlots];  // warp culling, one table per warp
    vertex_t history[kHistoryHashSlots];                 // history culling, whole block
    int bin_items[kMaxBins];                             // survivors per bin in this block
};

struct PartitionStorage {
    typename OffsetScan::TempStorage offset_scan;
    size_type bin_start[kMaxBins];  // first slot of each bin (exclusive scan of the totals)
    size_type bin_base[kMaxBins];   // slot of this tile's first item in each bin
    int bin_items[kMaxBins];        // this tile's items per bin
};

// Warp culling (section 4.2): every lane holding an item hashes it into its warp's table; lanes
// that read their own id back then write their lane number, and all but the lane whose number
// survives drop the item. Lanes reading another id back keep theirs: nothing is known. Every
// lane of the warp must call this (it synchronizes the warp).
__device__ __forceinline__ bool warp_cull(vertex_t* table, vertex_t v, bool keep) {
    const int lane = threadIdx.x & (kWarpThreads - 1);
    const int slot = static_cast<int>(v & (kWarpHashSlots - 1));
    if (keep) table[slot] = v;
    __syncwarp();
    const bool contender = keep && table[slot] == v;
    __syncwarp();
    if (contender) table[slot] = static_cast<vertex_t>(lane);
    __syncwarp();
    if (contender && table[slot] != static_cast<vertex_t>(lane)) keep = false;
    __syncwarp();  // the table is rewritten by the next call
    return keep;
}

// Warp-aggregated shared-memory count: every lane whose bin >= 0 adds one to counts[bin], with
// one atomicAdd per distinct bin among the warp's lanes (with few bins, a plain atomicAdd per
// item serializes up to 32 lanes on one address); returns this lane's rank among the items the
// warp added to its bin before it (its place in the range that atomicAdd returned). Every lane
// of the warp must call this.
__device__ __forceinline__ int warp_bin_add(int* counts, int bin) {
    const int lane = threadIdx.x & (kWarpThreads - 1);
    const unsigned int peers = __match_any_sync(kFullWarp, bin);
    const int leader = __ffs(peers) - 1;
    int base = 0;
    if (bin >= 0 && lane == leader) base = atomicAdd(&counts[bin], __popc(peers));
    base = __shfl_sync(kFullWarp, base, leader);
    return base + __popc(peers & ((1u << lane) - 1u));
}

// Two meeting bins (see the header): the slots of a tile's survivors, bin 0's counted down from
// kept_capacity - 1 and bin 1's up from kept_capacity (-1: none); the packed counters[bins]
// counts them. Every thread of the block must call this; it ends with a barrier.
__device__ __forceinline__ void reserve_meeting(const int (&keep)[kItemsPerThread],
                                                const vertex_t (&vertex)[kItemsPerThread],
                                                size_type kept_capacity, size_type* counters,
                                                MeetingStorage& storage,
                                                size_type (&slot)[kItemsPerThread]) {
    constexpr int kTileHalf = (1 << kTileHalfBits) - 1;
    int pair[kItemsPerThread];
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i) {
        pair[i] = !keep[i] ? 0 : (vertex[i] & 1) ? (1 << kTileHalfBits) : 1;
    }
    int total = 0;
    PairScan(storage.scan).ExclusiveSum(pair, pair, total);
    if (threadIdx.x == 0) {
        const unsigned long long packed =
            static_cast<unsigned long long>(total & kTileHalf) |
            (static_cast<unsigned long long>(total >> kTileHalfBits) << kMeetingHalfBits);
        storage.base = packed == 0 ? 0 : atomicAdd(reinterpret_cast<unsigned long long*>(
                                                       counters + distbfs::kCounterBins),
                                                   packed);
    }
    __syncthreads();
    const unsigned long long base = storage.base;
#pragma unroll
    for (int i = 0; i < kItemsPerThread; ++i) {
        const bool one = vertex[i] & 1;
        const size_type placed =
            static_cast<size_type>(one ? (base >> kMeetingHalfBits) : (base & kMeetingHalf)) +
            (one ? (pair[i] >> kTileHalfBits) : (pair[i] & kTileHalf));
        // Past its half, a bin overflows: its counter says so, nothing is stored (kept_capacity
        // bounds the level's survivors, so an overflow is the queue protocol's, never silent).
        slot[i] = !keep[i] || placed >= kept_capacity ? -1
                  : one                               ? kept_capacity + placed
                                                      : kept_capacity - 1 - placed;
    }
    __syncthreads();
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) filter_kernel(
    const vertex_t* __restrict__ edge_vertices,  // in: edge frontier: neighbour global ids
    const vertex_t* __restrict__ edge_parents,   // in: expanding vertex per item, or null
    const size_type* __restrict__ edge_count,    // in: length of the edge frontier, or null
    size_type edge_limit,                        // in: capacity of the edge queue (or the length
                                                 //     itself when edge_count is null)
    mask_word_t* __restrict__ visited_mask,      // in/out: visited bitmask over all n vertices;
                                                 //     the bit of every survivor gets set
    vertex_t* __restrict__ kept_vertices,        // out: survivors (the one bin if nbins == 1,
                                                 //     both bins if meeting)
    vertex_t* __restrict__ kept_parents,         // out: their parents, or null
    size_type kept_capacity,                     // in: capacity of kept_vertices / kept_parents
                                                 //     (half their length if meeting)
    size_type* __restrict__ counters,            // in/out: level counters; [filtered] += kept,
                                                 //     [bins + b] += kept in bin b (nbins > 1;
                                                 //     meeting: [bins] += both, packed)
    int nbins,                                   // in: number of owner bins (ranks), >= 1
    int meeting)                                 // in: 1: two bins meeting in the middle
{
    __shared__ FilterStorage smem;
    const int tid = threadIdx.x;
    vertex_t* warp_table = smem.warp_hash[tid / kWarpThreads];

    // Shared memory starts with whatever the last kernel left: clear the tables first.
    for (int i = tid; i < kWarpsPerBlock * kWarpHashSlots; i += kBlockThreads) {
        (&smem.warp_hash[0][0])[i] = kEmptySlot;
    }
    for (int i = tid; i < kHistoryHashSlots; i += kBlockThreads) smem.history[i] = kEmptySlot;
    for (int b = tid; b < nbins; b += kBlockThreads) smem.bin_items[b] = 0;
    __syncthreads();

    const size_type items = distbfs::queue_length(edge_count, edge_limit);
    for (size_type tile = static_cast<size_type>(blockIdx.x) * kTileItems; tile < items;
         tile += static_cast<size_type>(gridDim.x) * kTileItems) {
        vertex_t vertex[kItemsPerThread];
        int keep[kItemsPerThread];
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            const size_type index = tile + i * kBlockThreads + tid;
            keep[i] = index < items;
            vertex[i] = keep[i] ? edge_vertices[index] : kEmptySlot;
        }
        // Each step over all of the thread's items before the next, so their global memory
        // operations are in flight together: warp culling's __syncwarp orders memory, and a
        // bitmask read or claim per item between two of them waited out its whole latency.
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {  // 1. bitmask test (loads in flight together)
            keep[i] = keep[i] && !distbfs::mask_test(visited_mask, vertex[i]);
        }
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {  // 2-3. history and warp culling
            const vertex_t v = vertex[i];
            bool alive = keep[i];
            if (alive) {
                const int slot = static_cast<int>(v & (kHistoryHashSlots - 1));
                if (smem.history[slot] == v) {
                    alive = false;
                } else {
                    smem.history[slot] = v;
                }
            }
            keep[i] = warp_cull(warp_table, v, alive);
        }
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {  // 4. claims (atomics in flight together)
            if (keep[i]) keep[i] = distbfs::mask_claim(visited_mask, vertex[i]);
        }
        size_type slot[kItemsPerThread];
        if (meeting) {
            reserve_meeting(keep, vertex, kept_capacity, counters, smem.meeting, slot);
        } else {
            if (nbins > 1) {
#pragma unroll
                for (int i = 0; i < kItemsPerThread; ++i) {
                    if (keep[i]) atomicAdd(&smem.bin_items[vertex[i] % nbins], 1);
                }
            }
            Compact(smem.compact).reserve(keep, slot, counters + distbfs::kCounterFiltered);
#pragma unroll
            for (int i = 0; i < kItemsPerThread; ++i) {
                if (!keep[i] || slot[i] >= kept_capacity) slot[i] = -1;
            }
        }
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (slot[i] < 0) continue;
            kept_vertices[slot[i]] = vertex[i];
            if (kept_parents != nullptr) {
                kept_parents[slot[i]] = edge_parents[tile + i * kBlockThreads + tid];
            }
        }
    }

    // One global atomic per bin per block for the bin totals (meeting bins counted per tile).
    if (nbins > 1 && !meeting) {
        __syncthreads();
        for (int b = tid; b < nbins; b += kBlockThreads) {
            const int count = smem.bin_items[b];
            if (count > 0) distbfs::reserve_slots(counters + distbfs::kCounterBins + b, count);
        }
    }
}

namespace {

// partition_kernel's body for items whose payload is a Payload each (or none).
template <class Payload>
__device__ __forceinline__ void partition_items(const vertex_t* __restrict__ kept_vertices,
                                                const Payload* __restrict__ kept_parents,
                                                size_type kept_capacity,
                                                vertex_t* __restrict__ bin_vertices,
                                                Payload* __restrict__ bin_parents,
                                                size_type* __restrict__ counters, int nbins) {
    __shared__ PartitionStorage smem;
    const int tid = threadIdx.x;

    // Bin starts: exclusive scan of the bin totals, block_threads bins at a time.
    size_type running = 0;
    for (int chunk = 0; chunk < nbins; chunk += kBlockThreads) {
        const int b = chunk + tid;
        const size_type total = b < nbins ? counters[distbfs::kCounterBins + b] : 0;
        size_type start = 0;
        size_type chunk_total = 0;
        OffsetScan(smem.offset_scan).ExclusiveSum(total, start, chunk_total);
        if (b < nbins) {
            smem.bin_start[b] = running + start;
            smem.bin_items[b] = 0;
        }
        running += chunk_total;
        __syncthreads();
    }

    const size_type items =
        distbfs::queue_length(counters + distbfs::kCounterFiltered, kept_capacity);
    for (size_type tile = static_cast<size_type>(blockIdx.x) * kTileItems; tile < items;
         tile += static_cast<size_type>(gridDim.x) * kTileItems) {
        vertex_t vertex[kItemsPerThread];
        int bin[kItemsPerThread];
        int rank[kItemsPerThread];
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            const size_type index = tile + i * kBlockThreads + tid;
            vertex[i] = kEmptySlot;
            bin[i] = -1;
            if (index < items) {
                vertex[i] = kept_vertices[index];
                bin[i] = static_cast<int>(vertex[i] % nbins);
            }
            rank[i] = warp_bin_add(smem.bin_items, bin[i]);  // the whole warp, converged
        }
        __syncthreads();
        for (int b = tid; b < nbins; b += kBlockThreads) {
            const int count = smem.bin_items[b];
            if (count > 0) {
                smem.bin_base[b] = smem.bin_start[b] +
                    distbfs::reserve_slots(counters + distbfs::kCounterCursors + b, count);
            }
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < kItemsPerThread; ++i) {
            if (bin[i] < 0) continue;
            const size_type slot = smem.bin_base[bin[i]] + rank[i];
            if (slot >= kept_capacity) continue;
            bin_vertices[slot] = vertex[i];
            if (bin_parents != nullptr) {
                bin_parents[slot] = kept_parents[tile + i * kBlockThreads + tid];
            }
        }
        __syncthreads();
        for (int b = tid; b < nbins; b += kBlockThreads) smem.bin_items[b] = 0;
        __syncthreads();
    }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) partition_kernel(
    const vertex_t* __restrict__ kept_vertices,  // in: survivors of filter_kernel
    const vertex_t* __restrict__ kept_parents,   // in: their parents, or null
    size_type kept_capacity,                     // in: capacity of the kept queue (its length
                                                 //     is counters[filtered])
    vertex_t* __restrict__ bin_vertices,         // out: survivors grouped by owner (v % nbins)
    vertex_t* __restrict__ bin_parents,          // out: their parents, or null
    size_type* __restrict__ counters,            // in/out: level counters; [bins + b]: total of
                                                 //     bin b (in), [cursors + b]: placed (in/out)
    int nbins)                                   // in: number of owner bins (ranks), 1 < nbins
{
    partition_items(kept_vertices, kept_parents, kept_capacity, bin_vertices, bin_parents,
                    counters, nbins);
}

// The same scatter for items with a 64-bit payload (delta-stepping's words).
extern "C" __global__ void __launch_bounds__(kBlockThreads) partition_words_kernel(
    const vertex_t* __restrict__ kept_vertices, const unsigned long long* __restrict__ kept_words,
    size_type kept_capacity, vertex_t* __restrict__ bin_vertices,
    unsigned long long* __restrict__ bin_words, size_type* __restrict__ counters, int nbins) {
    partition_items(kept_vertices, kept_words, kept_capacity, bin_vertices, bin_words, counters,
                    nbins);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) bin_totals_kernel(
    const vertex_t* __restrict__ vertices,  // in: the queue's global ids
    size_type count,                        // in: its length
    size_type* __restrict__ counters,       // in/out: [bins + b] += items of bin b; out:
                                            //     [filtered] = count (partition_kernel's input)
    int nbins)                              // in: number of owner bins (ranks), 1 < nbins
{
    __shared__ int bin_items[kMaxBins];
    const int tid = threadIdx.x;
    if (blockIdx.x == 0 && tid == 0) counters[distbfs::kCounterFiltered] = count;
    for (int b = tid; b < nbins; b += kBlockThreads) bin_items[b] = 0;
    __syncthreads();
    // Warp-uniform trip count: warp_bin_add needs every lane.
    for (size_type base = static_cast<size_type>(blockIdx.x) * kBlockThreads + tid -
                          (tid & (kWarpThreads - 1));
         base < count; base += static_cast<size_type>(gridDim.x) * kBlockThreads) {
        const size_type index = base + (tid & (kWarpThreads - 1));
        const int bin = index < count ? static_cast<int>(vertices[index] % nbins) : -1;
        warp_bin_add(bin_items, bin);
    }
    __syncthreads();
    for (int b = tid; b < nbins; b += kBlockThreads) {
        if (bin_items[b] > 0) distbfs::reserve_slots(counters + distbfs::kCounterBins + b,
                                                     bin_items[b]);
    }
}
