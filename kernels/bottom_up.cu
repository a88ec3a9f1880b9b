/*
 * bottom_up.cu: the bottom-up level of direction-optimizing BFS (Beamer, Asanovic & Patterson,
 * SC 2012) with the frontier in bitmaps, beside Merrill et al.'s top-down stages.
 *
 * Frontier bitmap of a rank (distbfs/backends/base.py): 32-bit words, bit k = local vertex k
 * (global id k * size + rank). The all-gather stacks the ranks' bitmaps into rows of `words`
 * words: global vertex u is bit (u / size) of row (u % size).
 *
 *   frontier_bitmap_kernel   vertex queue -> this rank's frontier bitmap (zeroed beforehand):
 *                            one atomicOr per frontier vertex.
 *   row_frontier_kernel      a row every rank holds (a broadcast level's) -> the gathered
 *                            frontier bitmaps of all ranks (zeroed beforehand), built on every
 *                            rank in place of each rank's bitmap and their all-gather.
 *   mark_visited_kernel      the gathered frontier bitmaps -> the visited bitmask (global
 *                            ids): a top-down level on several ranks then culls what the other
 *                            ranks labeled before it is sent (distbfs.bfs, SHARE_FRONTIER).
 *                            With a power-of-two rank count a mask word interleaves one bit
 *                            field of each row (spread_bits).
 *   frontier_degrees_kernel  out-edges of the frontier's vertices (m_f of the direction
 *                            heuristic), summed into one counter.
 *   bottom_up_kernel         a warp per 32 bitmap words, a thread per vertex: an unlabeled
 *                            vertex scans its in-neighbours and stops at the first one in the
 *                            global frontier, which becomes its parent. The warp's ballot of
 *                            found vertices IS the word of the next frontier bitmap (written
 *                            whole, so that bitmap needs no zeroing); a warp reserves the queue
 *                            slots of all its chunks' found vertices with one atomicAdd at its
 *                            end (warp-aggregated, Moschou 2026, sections 3.1-3.2) and lists
 *                            them from the bitmap words it wrote: the next frontier comes out
 *                            as a queue and a bitmap, with no pass over all vertices to rebuild
 *                            either. Each level also leaves the bits of the vertices still
 *                            unlabeled (with in-neighbours), so the next bottom-up level skips
 *                            whole words of labeled ones without reading a label: lane j
 *                            loads word j of the warp's 32, and the warp steps only through
 *                            the words with candidates (a late level's few), not one dependent
 *                            load a word. bottom_up_varint_kernel: the same over compressed
 *                            rows, each decoded from its head (VarintColumns, common.cuh).
 *
 * Invariants: only the thread of vertex v writes its label and predecessor (no atomics needed);
 * each found vertex enters the queue exactly once; every word of the next bitmap is written.
 * counters[inspected] counts the in-neighbour slots tested (up to and including the first hit),
 * counters[frontier_edges] the out-edges of the vertices found.
 */
#include "common.cuh"

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;
using distbfs::warp_sum;

// Whether the rank count is a power of two: rows and bits of a stripe by mask and shift.
__device__ __forceinline__ bool power_of_two(int size) { return (size & (size - 1)) == 0; }

// Whether global vertex u is in the gathered frontier (rows of `words` words, one per rank).
// kShift: size is 1 << shift, so u's row and bit come by mask and shift; else by division, a
// sequence of some twenty instructions at every neighbour tested (with it, the bottom-up kernel
// of two ranks executed 1.7x one rank's instructions a bitmap word: benchmarks/RESULTS.md, "the
// bottom-up kernel at power-of-two rank counts").
template <bool kShift>
__device__ __forceinline__ bool in_frontier(const mask_word_t* __restrict__ frontier,
                                            size_type words, int size, int shift, vertex_t u) {
    // One rank: its row is the bitmap by global id. The mask-and-shift lines below give the same
    // bit; this one skips the row's start (a 64-bit multiply-add) at every neighbour tested.
    if (size == 1) return (frontier[u >> 5] >> (u & 31)) & 1u;
    const vertex_t row = kShift ? u & (size - 1) : u % size;
    const vertex_t bit = kShift ? u >> shift : u / size;
    return (frontier[row * words + (bit >> 5)] >> (bit & 31)) & 1u;
}

// The low 32 / size bits of `bits` spread to stride `size` (bit i to bit i * size), for a
// power-of-two size <= 32: the shift-and-mask steps of a Morton code's bit interleave.
__device__ __forceinline__ mask_word_t spread_bits(mask_word_t bits, int size) {
    switch (size) {
        case 1:
            return bits;
        case 2:
            bits = (bits | (bits << 8)) & 0x00FF00FFu;
            bits = (bits | (bits << 4)) & 0x0F0F0F0Fu;
            bits = (bits | (bits << 2)) & 0x33333333u;
            return (bits | (bits << 1)) & 0x55555555u;
        case 4:
            bits = (bits | (bits << 12)) & 0x000F000Fu;
            bits = (bits | (bits << 6)) & 0x03030303u;
            return (bits | (bits << 3)) & 0x11111111u;
        case 8:
            bits = (bits | (bits << 14)) & 0x00030003u;
            return (bits | (bits << 7)) & 0x01010101u;
        case 16:
            return (bits | (bits << 15)) & 0x00010001u;
        default:
            return bits & 1u;
    }
}

// Position of the k-th (from 0) set bit of `bits`, which has more than k set: halves by popcount.
__device__ __forceinline__ int nth_set_bit(mask_word_t bits, int k) {
    int position = 0;
#pragma unroll
    for (int width = 16; width > 0; width /= 2) {
        const int low = __popc(bits & ((1u << width) - 1u));
        if (k >= low) {
            k -= low;
            bits >>= width;
            position += width;
        }
    }
    return position;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) frontier_bitmap_kernel(
    const vertex_t* __restrict__ vertex_frontier,  // in: local ids of the frontier
    size_type frontier_size,                       // in: its length
    mask_word_t* __restrict__ bitmap)              // in/out: this rank's bitmap, zeroed before
{
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < frontier_size; i += stride) {
        const vertex_t v = vertex_frontier[i];
        atomicOr(&bitmap[v >> 5], 1u << (v & 31));
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) row_frontier_kernel(
    const vertex_t* __restrict__ row,     // in: global ids, each once (one vertex's row)
    size_type length,                     // in: their number
    pred_t source,                        // in: the row's vertex, labeled before: not a member
    int size,                             // in: number of ranks
    size_type words,                      // in: words per rank's row of the gathered bitmaps
    mask_word_t* __restrict__ gathered)   // in/out: the gathered bitmaps, zeroed before
{
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type i = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < length; i += stride) {
        const vertex_t v = row[i];
        if (static_cast<pred_t>(v) == source) continue;
        const vertex_t local = v / size;  // row v % size of the gathered bitmaps, bit v / size
        atomicOr(&gathered[static_cast<size_type>(v % size) * words + (local >> 5)],
                 1u << (local & 31));
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) mark_visited_kernel(
    const mask_word_t* __restrict__ frontier,  // in: the gathered frontier bitmaps (rows)
    size_type words,                           // in: words per rank's row
    int size,                                  // in: number of ranks
    size_type n,                               // in: number of vertices
    mask_word_t* __restrict__ visited_mask,    // in/out: visited bitmask over all n vertices
    size_type mask_words)                      // in: its length in words
{
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    if (power_of_two(size) && size <= 32) {
        // Mask word w holds global ids 32w + j, j < 32: rank j % size's local ids from
        // w * (32 / size) on, one bit field of one word of each row, spread to stride size.
        const int field = 32 / size;
        const mask_word_t low = field == 32 ? ~0u : (1u << field) - 1u;
        for (size_type w = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
             w < mask_words && w * 32 < n; w += stride) {
            const size_type local = w * field;
            const int offset = static_cast<int>(local & 31);
            mask_word_t bits = 0;
            for (int r = 0; r < size; ++r) {
                const mask_word_t word = frontier[static_cast<size_type>(r) * words + (local >> 5)];
                bits |= spread_bits((word >> offset) & low, size) << r;
            }
            const size_type left = n - w * 32;  // ids past n: none in a row, masked anyway
            if (left < 32) bits &= (1u << left) - 1u;
            if (bits != 0) visited_mask[w] |= bits;  // this kernel is the mask's only writer
        }
        return;
    }
    for (size_type w = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         w < mask_words; w += stride) {
        // Global ids [first, last) of this word: rank r owns u = l * size + r, so each row
        // gives the consecutive local ids l from the first u >= first on, one division a row
        // (not a division and a load per bit), and at most two of its words.
        const size_type first = w * 32;
        const size_type last = first + 32 < n ? first + 32 : n;
        mask_word_t bits = 0;
        for (int r = 0; r < size; ++r) {
            const mask_word_t* row = frontier + static_cast<size_type>(r) * words;
            size_type l = (first + size - 1 - r) / size;
            size_type loaded = ~static_cast<size_type>(0);
            mask_word_t word = 0;
            for (size_type u = l * size + r; u < last; u += size, ++l) {
                if ((l >> 5) != loaded) {
                    loaded = l >> 5;
                    word = row[loaded];
                }
                bits |= ((word >> (l & 31)) & 1u) << (u - first);
            }
        }
        if (bits != 0) visited_mask[w] |= bits;  // this kernel is the mask's only writer
    }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) frontier_degrees_kernel(
    const vertex_t* __restrict__ vertex_frontier,  // in: local ids of the frontier
    size_type frontier_size,                       // in: its length
    const size_type* __restrict__ row_offsets,     // in: CSR row offsets (out-edges)
    size_type* __restrict__ total)                 // in/out: += sum of the frontier's degrees
{
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    size_type degrees = 0;
    // Every lane runs the same number of rounds, so the warp sum below sees all 32 lanes.
    for (size_type base = static_cast<size_type>(blockIdx.x) * blockDim.x;
         base < frontier_size; base += stride) {
        const size_type i = base + threadIdx.x;
        if (i < frontier_size) {
            const vertex_t v = vertex_frontier[i];
            degrees += row_offsets[v + 1] - row_offsets[v];
        }
    }
    degrees = warp_sum(degrees);
    if ((threadIdx.x & (kWarpThreads - 1)) == 0 && degrees > 0) {
        distbfs::reserve_slots(total, degrees);
    }
}

// The found vertices of a bottom-up warp's chunks (its first chunk `first`, then every
// `stride` words) into the next frontier queue: the warp's slots in one reservation, then its
// chunks again in the same order, a chunk's vertices filling consecutive slots 32 at a time,
// lane i writing the chunk's i-th (its word by binary search in the words' exclusive prefix
// counts, its bit the k-th set one of that word): coalesced stores, where a lane listing its own
// word's vertices wrote 32 scattered runs a step. `found_count`: this lane's words' found
// vertices, all chunks; each lane reads back the next-bitmap words it wrote (this kernel writes
// them: not __restrict__, so never through the read-only cache).
__device__ __forceinline__ void list_found(const mask_word_t* next_bitmap,
                                           size_type words, size_type first, size_type stride,
                                           size_type found_count, size_type* __restrict__ counters,
                                           vertex_t* __restrict__ next_frontier,
                                           size_type frontier_capacity) {
    const int lane = threadIdx.x & (kWarpThreads - 1);
    const size_type warp_found = warp_sum(found_count);
    size_type base = 0;
    if (lane == 0 && warp_found > 0) {
        base = distbfs::reserve_slots(counters + distbfs::kCounterFrontier, warp_found);
    }
    base = __shfl_sync(kFullWarp, base, 0);
    for (size_type chunk = first; warp_found > 0 && chunk < words; chunk += stride) {
        const size_type own = chunk + lane;
        const mask_word_t mine = own < words ? next_bitmap[own] : 0u;
        const int count = __popc(mine);
        int below = count;
#pragma unroll
        for (int offset = 1; offset < kWarpThreads; offset *= 2) {
            const int other = __shfl_up_sync(kFullWarp, below, offset);
            if (lane >= offset) below += other;
        }
        const int before = below - count;  // the chunk's found vertices in words below this one
        const int chunk_found = __shfl_sync(kFullWarp, below, kWarpThreads - 1);
        for (int start = 0; start < chunk_found; start += kWarpThreads) {
            const int i = start + lane;
            int j = 0;  // the word of the chunk's i-th found vertex: the last with before <= i
#pragma unroll
            for (int step = kWarpThreads / 2; step > 0; step /= 2) {
                if (__shfl_sync(kFullWarp, before, j + step) <= i) j += step;
            }
            const mask_word_t bits = __shfl_sync(kFullWarp, mine, j);
            const int k = i - __shfl_sync(kFullWarp, before, j);
            const size_type slot = base + i;
            if (i < chunk_found && slot < frontier_capacity) {
                next_frontier[slot] =
                    static_cast<vertex_t>((chunk + j) * kWarpThreads) + nth_set_bit(bits, k);
            }
        }
        base += chunk_found;
    }
}

template <bool kVarint, bool kShift>  // kShift: a power-of-two rank count (in_frontier)
__device__ __forceinline__ void bottom_up_rows(
    const size_type* __restrict__ in_offsets,   // in: row offsets of the in-neighbour CSR
    const vertex_t* __restrict__ in_columns,    // in: in-neighbours (global ids)
    const size_type* __restrict__ out_offsets,  // in: row offsets of the out-edge CSR
    size_type nlocal,                           // in: vertices owned by this rank
    int rank,                                   // in: this rank (global id = v * size + rank)
    int size,                                   // in: ranks
    const mask_word_t* __restrict__ frontier,   // in: gathered frontier, size rows of `words`
    size_type words,                            // in: words of one rank's bitmap (>= nlocal/32)
    label_t level,                              // in: label of vertices found now
    label_t* __restrict__ labels,               // in/out: label of each owned vertex
    pred_t* __restrict__ preds,                 // out: parent of each found vertex, or null
    mask_word_t* __restrict__ visited_mask,     // in/out: visited bits by global id
    mask_word_t* __restrict__ candidates,       // in/out: bit k: local vertex k is unlabeled
                                                //     and has in-neighbours (this rank's words)
    int candidates_valid,                       // in: 1 if `candidates` is current (the last
                                                //     level was bottom-up), 0: rebuild it
    mask_word_t* __restrict__ next_bitmap,      // out: this rank's next frontier bitmap
    vertex_t* __restrict__ next_frontier,       // out: local ids of the found vertices
    size_type frontier_capacity,                // in: capacity of next_frontier
    size_type* __restrict__ counters,           // in/out: [frontier], [inspected],
                                                //     [frontier_edges] +=
    const distbfs::VarintColumns& varint)       // in: compressed in-neighbours (kVarint)
{
    // A warp takes a chunk of 32 bitmap words (1024 vertices), one word at a time; lane j
    // keeps the ballots of word j and at the chunk's end writes that word of the next bitmap,
    // of the candidates (and on one rank of the visited mask): 32 words in one coalesced store
    // each, where a store a word wrote a sector apiece (benchmarks/RESULTS.md, "a bottom-up
    // warp's words"). The warp's found vertices get their queue slots with ONE atomicAdd after
    // its last chunk, and a second pass over its chunks lists them from the next-bitmap words:
    // a chunk's atomic on the one queue counter, waited for before its vertices were listed,
    // cost 0.1-0.15 ms of a rank's 0.9 ms level (benchmarks/RESULTS.md, "a bottom-up warp's
    // queue slots").
    const int lane = threadIdx.x & (kWarpThreads - 1);
    const int shift = kShift ? __ffs(size) - 1 : 0;
    const size_type warps = static_cast<size_type>(gridDim.x) * (blockDim.x / kWarpThreads);
    const size_type first_warp = static_cast<size_type>(blockIdx.x) * (blockDim.x / kWarpThreads) +
                                 threadIdx.x / kWarpThreads;
    size_type inspected = 0;
    size_type found_count = 0;  // found vertices of this lane's words, all chunks
    size_type degrees = 0;
    for (size_type chunk = first_warp * kWarpThreads; chunk < words;
         chunk += warps * kWarpThreads) {
        mask_word_t mine = 0;  // ballot of word chunk + lane
        const size_type in_chunk = words - chunk;  // the chunk's words: lanes below this
        unsigned int busy = in_chunk >= kWarpThreads ? kFullWarp : (1u << in_chunk) - 1u;
        mask_word_t lane_open = 0;  // candidates of word chunk + lane
        if (candidates_valid) {  // the chunk's candidate words in one load; empty ones end here
            const size_type own = chunk + lane;
            lane_open = own < words ? candidates[own] : 0u;
            if (own < words && lane_open == 0) next_bitmap[own] = 0;
            busy = __ballot_sync(kFullWarp, lane_open != 0);
        }
        const unsigned int worked = busy;
        mask_word_t still = 0;  // candidates of word chunk + lane left for the next level
        for (; busy != 0; busy &= busy - 1) {  // the words with work, in order
            const int j = __ffs(busy) - 1;
            const size_type word = chunk + j;
            const vertex_t v = static_cast<vertex_t>(word * kWarpThreads + lane);
            bool candidate;
            size_type begin = 0;
            size_type end = 0;
            if (candidates_valid) {  // word j's candidates: which lanes have work
                const mask_word_t open = __shfl_sync(kFullWarp, lane_open, j);
                candidate = (open >> lane) & 1u;
            } else {
                candidate = v < nlocal && labels[v] == distbfs::kUnreached;
            }
            if (candidate) {  // the row's range: edge slots, or bytes of compressed rows
                const size_type* offsets = kVarint ? varint.byte_offsets : in_offsets;
                begin = offsets[v];
                end = offsets[v + 1];
                candidate = begin < end;
            }
            bool found = false;
            vertex_t parent = 0;
            if constexpr (kVarint) {  // decode until the first hit or the row's last byte
                if (candidate) {
                    distbfs::VarintCursor cursor = distbfs::open_head(
                        varint.bytes, begin, static_cast<long long>(v) * size + rank);
                    do {
                        const vertex_t u = cursor.next();
                        ++inspected;
                        if (in_frontier<kShift>(frontier, words, size, shift, u)) {
                            found = true;
                            parent = u;
                            break;
                        }
                    } while (cursor.pos < end);
                }
            } else {
                for (size_type e = begin; candidate && e < end; ++e) {
                    const vertex_t u = in_columns[e];
                    ++inspected;
                    if (in_frontier<kShift>(frontier, words, size, shift, u)) {
                        found = true;
                        parent = u;
                        break;
                    }
                }
            }
            const mask_word_t ballot = __ballot_sync(kFullWarp, found);
            const mask_word_t open = __ballot_sync(kFullWarp, candidate && !found);
            if (lane == j) {
                mine = ballot;
                still = open;
            }
            if (!found) continue;
            labels[v] = level;
            if (preds != nullptr) preds[v] = static_cast<pred_t>(parent);
            if (size > 1) {
                distbfs::mask_claim(visited_mask,
                                    static_cast<vertex_t>(v) * static_cast<vertex_t>(size) + rank);
            }
            degrees += out_offsets[v + 1] - out_offsets[v];
        }
        if ((worked >> lane) & 1u) {  // the words stepped through, lane j word j: coalesced
            const size_type own = chunk + lane;
            next_bitmap[own] = mine;
            candidates[own] = still;
            if (size == 1 && mine != 0) visited_mask[own] |= mine;  // local == global
        }
        found_count += __popc(mine);
    }
    inspected = warp_sum(inspected);
    degrees = warp_sum(degrees);
    if (lane == 0) {
        if (inspected > 0) distbfs::reserve_slots(counters + distbfs::kCounterInspected, inspected);
        if (degrees > 0) distbfs::reserve_slots(counters + distbfs::kCounterFrontierEdges, degrees);
    }
    list_found(next_bitmap, words, first_warp * kWarpThreads, warps * kWarpThreads, found_count,
               counters, next_frontier, frontier_capacity);
}

// The parameters of both bottom-up kernels after the in-neighbour rows (bottom_up_rows').
#define DISTBFS_BOTTOM_UP_PARAMS                                                             \
    const size_type *__restrict__ out_offsets, size_type nlocal, int rank, int size,        \
        const mask_word_t *__restrict__ frontier, size_type words, label_t level,           \
        label_t *__restrict__ labels, pred_t *__restrict__ preds,                           \
        mask_word_t *__restrict__ visited_mask, mask_word_t *__restrict__ candidates,       \
        int candidates_valid, mask_word_t *__restrict__ next_bitmap,                        \
        vertex_t *__restrict__ next_frontier, size_type frontier_capacity,                  \
        size_type *__restrict__ counters
#define DISTBFS_BOTTOM_UP_ARGS                                                               \
    out_offsets, nlocal, rank, size, frontier, words, level, labels, preds, visited_mask,   \
        candidates, candidates_valid, next_bitmap, next_frontier, frontier_capacity, counters

// A bottom-up level over plain in-neighbour rows.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    bottom_up_kernel(const size_type* __restrict__ in_offsets,
                     const vertex_t* __restrict__ in_columns, DISTBFS_BOTTOM_UP_PARAMS) {
    const distbfs::VarintColumns none{nullptr, nullptr, nullptr, nullptr};
    if (power_of_two(size)) {
        bottom_up_rows<false, true>(in_offsets, in_columns, DISTBFS_BOTTOM_UP_ARGS, none);
    } else {
        bottom_up_rows<false, false>(in_offsets, in_columns, DISTBFS_BOTTOM_UP_ARGS, none);
    }
}

// A bottom-up level over compressed in-neighbour rows (distbfs::VarintColumns), each decoded
// from its head until the first neighbour in the frontier (the decode points go unused).
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    bottom_up_varint_kernel(const size_type* __restrict__ in_offsets,
                            const unsigned char* __restrict__ in_bytes,
                            const size_type* __restrict__ in_byte_offsets,
                            const size_type* __restrict__ in_point_bytes,
                            const vertex_t* __restrict__ in_point_values,
                            DISTBFS_BOTTOM_UP_PARAMS) {
    const distbfs::VarintColumns varint{in_bytes, in_byte_offsets, in_point_bytes,
                                        in_point_values};
    if (power_of_two(size)) {
        bottom_up_rows<true, true>(in_offsets, nullptr, DISTBFS_BOTTOM_UP_ARGS, varint);
    } else {
        bottom_up_rows<true, false>(in_offsets, nullptr, DISTBFS_BOTTOM_UP_ARGS, varint);
    }
}
