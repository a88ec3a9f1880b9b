/*
 * common.cuh: types, launch policy, counter layout and small device helpers shared by the
 * distbfs kernels (Merrill, Garland & Grimshaw 2012, sections 4-6.1).
 *
 * Every number below arrives as a -D compile option from distbfs/backends/kernels.py (the launch
 * policy of distbfs/backends/launch_policy.py and the counter layout of the loader); this header
 * holds none of its own and refuses to compile without them.
 *
 * Encodings (as in distbfs/constants.py):
 *   vertex_t     global or local vertex id: int, or long long when DISTBFS_VERTEX_BITS == 64
 *   size_type    queue lengths and CSR row offsets: long long (int64)
 *   label_t      BFS level of an owned vertex: int (int32), DISTBFS_UNREACHED when unlabeled
 *   pred_t       predecessor global id: long long (int64)
 *   mask_word_t  32 bits of the visited bitmask: bit (v & 31) of word (v >> 5) is vertex v
 *
 * Queue protocol: a kernel that appends to a queue reserves space with ONE atomicAdd per block
 * on the queue's counter, and stores only items whose slot is below the queue's capacity. The
 * counter still counts every item, so after the kernel "counter > capacity" means overflow and
 * the counter is the capacity that was needed. A kernel reading a queue reads
 * min(counter, capacity) items (queue_length below), so it never reads past the end either.
 *
 * No header is included: NVRTC (through CuPy) has no C++ standard library, and the stages that
 * use CUB's block primitives include them themselves (CUB's headers take about 1.5 s of NVRTC's
 * time per module, which a first run with an empty kernel cache waits for: the fused stage, the
 * one a road network's search compiles, uses BlockSum below instead; the cooperative stages use
 * grid_sync below, not <cooperative_groups.h>).
 */
#pragma once

#if !defined(DISTBFS_BLOCK_THREADS) || !defined(DISTBFS_ITEMS_PER_THREAD) ||          \
    !defined(DISTBFS_WARP_HASH_SLOTS) || !defined(DISTBFS_HISTORY_HASH_SLOTS) ||        \
    !defined(DISTBFS_MAX_BINS) || !defined(DISTBFS_FUSED_THREADS) ||                    \
    !defined(DISTBFS_FUSED_MAX_EDGES) || !defined(DISTBFS_VERTEX_BITS) ||               \
    !defined(DISTBFS_FUSED_BLOCKS_PER_SM) || !defined(DISTBFS_HEAVY_DEGREE) ||    \
    !defined(DISTBFS_FUSED_SCRATCH_SLOTS) || !defined(DISTBFS_PATH_THREADS) ||         \
    !defined(DISTBFS_FUSED_LOG_FIELDS) || !defined(DISTBFS_FUSED_PAIR_DEGREE) ||          \
    !defined(DISTBFS_FUSED_PREFETCH_EDGES) ||                                            \
    !defined(DISTBFS_UNREACHED) || !defined(DISTBFS_COUNTER_EDGES) ||                   \
    !defined(DISTBFS_COUNTER_FILTERED) || !defined(DISTBFS_COUNTER_FRONTIER) ||         \
    !defined(DISTBFS_COUNTER_FUSED_LEVELS) || !defined(DISTBFS_COUNTER_BINS) ||         \
    !defined(DISTBFS_COUNTER_FRONTIER_EDGES) || !defined(DISTBFS_COUNTER_INSPECTED) ||  \
    !defined(DISTBFS_COUNTER_FUSED_LABELED) ||                                          \
    !defined(DISTBFS_COUNTER_FUSED_LABELED_EDGES) || !defined(DISTBFS_COUNTER_CURSORS) ||  \
    !defined(DISTBFS_COUNTER_HEAVY) || !defined(DISTBFS_COUNTER_PEER_FAILURE) ||        \
    !defined(DISTBFS_PEER_HEADER_WORDS) || !defined(DISTBFS_DECODE_POINT_EDGES)
#error "compile the distbfs kernels through distbfs.backends.kernels (it passes the -D options)"
#endif

#if DISTBFS_VERTEX_BITS == 64
typedef long long vertex_t;
#elif DISTBFS_VERTEX_BITS == 32
typedef int vertex_t;
#else
#error "DISTBFS_VERTEX_BITS must be 32 or 64"
#endif

typedef long long size_type;
typedef int label_t;
typedef long long pred_t;
typedef unsigned int mask_word_t;

namespace distbfs {

// Launch policy (LaunchPolicy in distbfs/backends/launch_policy.py).
constexpr int kBlockThreads = DISTBFS_BLOCK_THREADS;
constexpr int kItemsPerThread = DISTBFS_ITEMS_PER_THREAD;
constexpr int kTileItems = kBlockThreads * kItemsPerThread;
constexpr int kWarpThreads = 32;
constexpr int kWarpsPerBlock = kBlockThreads / kWarpThreads;
constexpr int kWarpHashSlots = DISTBFS_WARP_HASH_SLOTS;
constexpr int kHistoryHashSlots = DISTBFS_HISTORY_HASH_SLOTS;
constexpr int kMaxBins = DISTBFS_MAX_BINS;
constexpr int kFusedThreads = DISTBFS_FUSED_THREADS;
constexpr int kFusedBlocksPerSm = DISTBFS_FUSED_BLOCKS_PER_SM;
constexpr int kPathThreads = DISTBFS_PATH_THREADS;
constexpr int kPathBlockThreads = DISTBFS_PATH_BLOCK_THREADS;
constexpr size_type kHeavyDegree = DISTBFS_HEAVY_DEGREE;
constexpr size_type kFusedMaxEdges = DISTBFS_FUSED_MAX_EDGES;
constexpr int kFusedPairDegree = DISTBFS_FUSED_PAIR_DEGREE;
constexpr size_type kFusedPrefetchEdges = DISTBFS_FUSED_PREFETCH_EDGES;
constexpr size_type kDecodePointEdges = DISTBFS_DECODE_POINT_EDGES;
constexpr unsigned int kFullWarp = 0xffffffffu;

static_assert(kBlockThreads % kWarpThreads == 0, "block_threads must be a multiple of 32");
static_assert(kFusedThreads % kWarpThreads == 0, "fused_threads must be a multiple of 32");
static_assert(kPathThreads % kWarpThreads == 0, "path_threads must be a multiple of 32");
static_assert((kWarpHashSlots & (kWarpHashSlots - 1)) == 0, "warp hash: power of two");
static_assert((kHistoryHashSlots & (kHistoryHashSlots - 1)) == 0, "history hash: power of two");
static_assert(kDecodePointEdges > 0, "decode_point_edges must be positive");

// Label of a vertex the search has not reached (UNREACHED in distbfs/constants.py).
constexpr label_t kUnreached = DISTBFS_UNREACHED;

// A slot that holds no vertex: an empty hash slot, a hole in a queue (vertex ids are never
// negative).
constexpr vertex_t kEmptySlot = static_cast<vertex_t>(-1);

// Slots of the per-level counter array (the Counter enum of distbfs/backends/kernels.py).
constexpr int kCounterEdges = DISTBFS_COUNTER_EDGES;              // items expand appended
constexpr int kCounterFiltered = DISTBFS_COUNTER_FILTERED;        // items filter_partition kept
constexpr int kCounterFrontier = DISTBFS_COUNTER_FRONTIER;        // vertices contract labeled
constexpr int kCounterFusedLevels = DISTBFS_COUNTER_FUSED_LEVELS;  // levels the fused kernel ran
constexpr int kCounterFrontierEdges = DISTBFS_COUNTER_FRONTIER_EDGES;  // out-edges of the next
                                                                      // frontier (when asked)
constexpr int kCounterInspected = DISTBFS_COUNTER_INSPECTED;  // slots a bottom-up level tested
constexpr int kCounterFusedLabeled = DISTBFS_COUNTER_FUSED_LABELED;  // vertices a fused run labeled
constexpr int kCounterFusedLabeledEdges = DISTBFS_COUNTER_FUSED_LABELED_EDGES;  // their out-edges
constexpr int kCounterHeavy = DISTBFS_COUNTER_HEAVY;              // hubs expand queued
constexpr int kCounterPeerFailure = DISTBFS_COUNTER_PEER_FAILURE;  // fused peer levels failed
constexpr int kCounterBins = DISTBFS_COUNTER_BINS;                // + b: items of owner bin b
constexpr int kCounterCursors = DISTBFS_COUNTER_CURSORS;          // + b: items placed in bin b

// Length (int64 words) of the scratch array the fused kernel keeps its level counts in.
constexpr int kFusedScratchSlots = DISTBFS_FUSED_SCRATCH_SLOTS;

// Number of items a kernel may read from a queue: its device counter clamped to the capacity,
// or `limit` itself when the length is known on the host (count == nullptr).
__device__ __forceinline__ size_type queue_length(const size_type* count, size_type limit) {
    if (count == nullptr) return limit;
    const size_type counted = *count;
    return counted < limit ? counted : limit;
}

// Reserve `items` consecutive slots of a queue: one global atomic, returns the first slot.
__device__ __forceinline__ size_type reserve_slots(size_type* counter, size_type items) {
    return static_cast<size_type>(atomicAdd(reinterpret_cast<unsigned long long*>(counter),
                                            static_cast<unsigned long long>(items)));
}

// Sum `value` over the warp (every lane must call); every lane gets the total.
__device__ __forceinline__ size_type warp_sum(size_type value) {
#pragma unroll
    for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) {
        value += __shfl_xor_sync(kFullWarp, value, offset);
    }
    return value;
}

// Two meeting bins (filter_partition.cu) share one 64-bit counter: bin 0's count in its low
// 32 bits, bin 1's in its high ones.
constexpr int kMeetingHalfBits = 32;
constexpr unsigned long long kMeetingHalf = (1ull << kMeetingHalfBits) - 1;

// Length of meeting bin `bin` (0 or 1) given their packed counter, clamped to `limit`.
__device__ __forceinline__ size_type meeting_length(const size_type* packed, int bin,
                                                    size_type limit) {
    const unsigned long long both = *reinterpret_cast<const unsigned long long*>(packed);
    const size_type counted =
        static_cast<size_type>(bin ? both >> kMeetingHalfBits : both & kMeetingHalf);
    return counted < limit ? counted : limit;
}

// Visited bitmask (section 4.2): a cached, possibly stale read, used to cull early.
__device__ __forceinline__ bool mask_test(const mask_word_t* mask, vertex_t v) {
    return (mask[v >> 5] >> (v & 31)) & 1u;
}

// Set the bit of v atomically; true when this call set it (exactly one caller per vertex).
__device__ __forceinline__ bool mask_claim(mask_word_t* mask, vertex_t v) {
    const mask_word_t bit = 1u << (v & 31);
    return (atomicOr(&mask[v >> 5], bit) & bit) == 0;
}

// Ask L2 for the line holding `address` (no register, no wait).
__device__ __forceinline__ void prefetch_l2(const void* address) {
    asm volatile("prefetch.global.L2 [%0];" ::"l"(address));
}

// Set the bit of v (fire-and-forget: the caller already owns v).
__device__ __forceinline__ void mask_set(mask_word_t* mask, vertex_t v) {
    atomicOr(&mask[v >> 5], 1u << (v & 31));
}

// Block-wide prefix sum of one value per thread, in thread order (section 2.3): a shuffle scan
// in each warp, then the warps' totals through shared memory. What CUB's BlockScan and
// BlockReduce compute for these sizes, without their headers (see the top of this file).
template <typename T, int THREADS>
struct BlockSum {
    static_assert(THREADS % kWarpThreads == 0, "BlockSum: whole warps");
    static constexpr int kWarps = THREADS / kWarpThreads;

    struct TempStorage {
        T warp_totals[kWarps];
    };

    TempStorage& temp;

    __device__ __forceinline__ explicit BlockSum(TempStorage& storage) : temp(storage) {}

    // The sum of `value` over threads 0 .. threadIdx.x, and in `total` the block's sum (every
    // thread). Every thread of the block must call this; it ends with a barrier, so `temp` may
    // be reused right after.
    __device__ __forceinline__ T inclusive(T value, T& total) {
        const int lane = threadIdx.x % kWarpThreads;
        const int warp = threadIdx.x / kWarpThreads;
#pragma unroll
        for (int offset = 1; offset < kWarpThreads; offset *= 2) {
            const T below = __shfl_up_sync(kFullWarp, value, offset);
            if (lane >= offset) value += below;
        }
        if (lane == kWarpThreads - 1) temp.warp_totals[warp] = value;
        __syncthreads();
        T before = 0;
        T sum = 0;
#pragma unroll
        for (int w = 0; w < kWarps; ++w) {
            const T t = temp.warp_totals[w];
            before += w < warp ? t : T(0);
            sum += t;
        }
        __syncthreads();
        total = sum;
        return before + value;
    }

    // The block's sum of `value`, in every thread (same rules as `inclusive`).
    __device__ __forceinline__ T sum(T value) {
        T total;
        inclusive(value, total);
        return total;
    }
};

// Block-wide compaction (section 2.3): each thread holds ITEMS keep-flags; the block's kept
// items get consecutive slots of a global queue with one atomicAdd for the whole block.
template <int THREADS, int ITEMS>
struct BlockCompact {
    typedef BlockSum<int, THREADS> Scan;

    struct TempStorage {
        typename Scan::TempStorage scan;
        size_type base;  // first queue slot of this block's kept items
    };

    TempStorage& temp;

    __device__ __forceinline__ explicit BlockCompact(TempStorage& storage) : temp(storage) {}

    // slot[i] = queue slot of item i when keep[i] (undefined otherwise); items are ranked in
    // thread order, a thread's in index order. Every thread of the block must call this; it
    // ends with a barrier, so `temp` may be reused right after.
    __device__ __forceinline__ void reserve(int (&keep)[ITEMS], size_type (&slot)[ITEMS],
                                            size_type* counter) {
        int mine = 0;
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) mine += keep[i];
        size_type first = reserve_run(mine, counter);
#pragma unroll
        for (int i = 0; i < ITEMS; ++i) {
            slot[i] = first;
            first += keep[i];
        }
    }

    // The first of `mine` consecutive queue slots for this thread's kept items (threads ranked
    // in thread order). Every thread of the block must call this; it ends with a barrier.
    __device__ __forceinline__ size_type reserve_run(int mine, size_type* counter) {
        int kept = 0;
        const int rank = Scan(temp.scan).inclusive(mine, kept) - mine;  // kept before this one
        if (threadIdx.x == 0) temp.base = kept > 0 ? reserve_slots(counter, kept) : 0;
        __syncthreads();
        const size_type first = temp.base + rank;
        __syncthreads();
        return first;
    }
};

// The arrival word of grid_sync: one per module and device (zero when the module loads).
__device__ unsigned int grid_arrivals;

// A barrier across every block of a grid launched cooperatively (cuLaunchCooperativeKernel: all
// blocks resident at once; a one-dimensional grid), as cooperative_groups' grid.sync() does it on
// sm_70 and later: each block's thread 0 adds 1 to one word (block 0 adds 2^31 - (blocks - 1)) with
// a release at device scope, which publishes what its block wrote before the block barrier, then
// polls the word with acquiring loads until its top bit flips, which happens exactly when the last
// block arrives; the low 31 bits are then zero again for the next barrier. Written here so that
// the cooperative stages include no header and need no relocatable device code
// (<cooperative_groups.h> and the link against cudadevrt cost a first run about a second of
// compiling). One word per module: a process runs at most one grid of a module on a device at a
// time (its kernels go to the current stream, one after another).
__device__ __forceinline__ void grid_sync() {
    __syncthreads();
    if (threadIdx.x == 0) {
        const unsigned int add = blockIdx.x == 0 ? 0x80000000u - (gridDim.x - 1) : 1u;
        unsigned int arrived;
        unsigned int now;
        asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                     : "=r"(arrived) : "l"(&grid_arrivals), "r"(add) : "memory");
        do {
            asm volatile("ld.acquire.gpu.u32 %0, [%1];"
                         : "=r"(now) : "l"(&grid_arrivals) : "memory");
        } while (((arrived ^ now) & 0x80000000u) == 0);
    }
    __syncthreads();
}

// Compressed columns (distbfs/compressed.py; on the device distbfs/backends/cuda/compressed.py):
// local row r's sorted neighbours c0 < c1 < ... are LEB128 varints from bytes[byte_offsets[r]]
// on: zigzag(c0 - v) (v: the row's global id), then c[i] - c[i-1] - 1. Decode points make any
// edge slot reachable in fewer than kDecodePointEdges steps: for every slot s = k *
// kDecodePointEdges, point_bytes[k] is the byte where slot s's code starts and point_values[k]
// the neighbour at slot s - 1 (meaningless where s starts a row: a row is decoded from its head).
struct VarintColumns {
    const unsigned char* __restrict__ bytes;
    const size_type* __restrict__ byte_offsets;  // per local row, + 1
    const size_type* __restrict__ point_bytes;   // per decode point
    const vertex_t* __restrict__ point_values;   // per decode point
};

// The varint at bytes[pos]; pos moves past it.
__device__ __forceinline__ unsigned long long read_varint(const unsigned char* __restrict__ bytes,
                                                          size_type& pos) {
    unsigned long long value = 0;
    int shift = 0;
    unsigned int byte;
    do {
        byte = bytes[pos++];
        value |= static_cast<unsigned long long>(byte & 0x7fu) << shift;
        shift += 7;
    } while (byte & 0x80u);
    return value;
}

// Reads one row's neighbours in order: next() is the neighbour at the slot it was opened at,
// then at each following slot of the row.
struct VarintCursor {
    const unsigned char* __restrict__ bytes;
    size_type pos;    // byte of the next code
    long long value;  // the neighbour last decoded
    bool held;        // value is the next neighbour already (opened at the row's head)

    __device__ __forceinline__ vertex_t next() {
        if (held) {
            held = false;
        } else {
            value += static_cast<long long>(read_varint(bytes, pos)) + 1;
        }
        return static_cast<vertex_t>(value);
    }
};

// A cursor at the head of the row whose codes start at bytes[begin] (global id `vertex`; the
// row must not be empty).
__device__ __forceinline__ VarintCursor open_head(const unsigned char* __restrict__ bytes,
                                                  size_type begin, long long vertex) {
    VarintCursor cursor{bytes, begin, 0, true};
    const unsigned long long code = read_varint(bytes, cursor.pos);
    cursor.value = vertex + (static_cast<long long>(code >> 1) ^ -static_cast<long long>(code & 1));
    return cursor;
}

// A cursor at the head of local row `row` (global id `vertex`; the row must not be empty).
__device__ __forceinline__ VarintCursor open_row(const VarintColumns& columns, size_type row,
                                                 long long vertex) {
    return open_head(columns.bytes, columns.byte_offsets[row], vertex);
}

// A cursor at edge slot `slot` of local row `row` (its first slot `row_begin`, global id
// `vertex`): from the row's head or the decode point at or before `slot`, whichever is later,
// fewer than kDecodePointEdges codes are skipped.
__device__ __forceinline__ VarintCursor open_at(const VarintColumns& columns, size_type row,
                                                size_type row_begin, long long vertex,
                                                size_type slot) {
    const size_type point = slot / kDecodePointEdges;
    size_type at = point * kDecodePointEdges;
    VarintCursor cursor;
    if (at <= row_begin) {  // value: the neighbour at the row's head
        cursor = open_row(columns, row, vertex);
        at = row_begin;
    } else {  // value: the neighbour at slot at - 1
        cursor = VarintCursor{columns.bytes, columns.point_bytes[point],
                              static_cast<long long>(columns.point_values[point]), true};
        --at;
    }
    for (; at < slot; ++at) {
        cursor.value += static_cast<long long>(read_varint(cursor.bytes, cursor.pos)) + 1;
    }
    return cursor;  // held: next() is the neighbour at `slot`
}

}  // namespace distbfs
