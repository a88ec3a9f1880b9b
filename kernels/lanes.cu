/*
 * lanes.cu: batched BFS from up to 64 sources as bit lanes (Then et al., VLDB 2015, "The More
 * the Merrier"; Liu & Huang, SIGMOD 2016, "iBFS"): one 64-bit word per owned vertex (bit i: the
 * search from source i) in visited, found, and in each level's frontier, held in a ring of
 * levels (distbfs/backends/cuda/lanes.py describes the state). A level's frontier word of a
 * vertex is exactly the lanes that reached it at that level, so the ring is also the record
 * the distances are written from, once, by flush_lanes.
 *
 *   push_lanes      push level on one rank (no exchange): every frontier vertex (the queue)
 *                   ORs its word into found of each out-neighbour, skipping the atomic where
 *                   found and visited already hold those lanes; a thread per edge of the
 *                   frontier's rows (its row found by a binary search of the rows' running
 *                   edge counts), so a hub's million edges take the whole grid, not one warp
 *   contract_lanes  push level, after the exchange: found[local(v)] |= word per received item
 *   settle_lanes    after a push level, every owned vertex: its new lanes (found & ~visited)
 *                   become visited and its word of the next level; found is cleared
 *   pull_lanes      pull level: every owned vertex not visited in all lanes ORs the gathered
 *                   frontier words of its in-neighbours, stopping once every lane is seen, and
 *                   settles itself as settle_lanes does; rows longer than a warp are read by
 *                   the whole warp, four in-neighbours a thread at a time
 *   flush_lanes     distances (lanes, n) int32 from a run of levels of the ring: a block takes
 *                   32 vertices, one level's words a warp into shared memory, then writes each
 *                   lane's 32 distances as one coalesced store
 *
 * Settling writes every vertex's next-level word (no clearing pass) and appends the vertices
 * with new lanes to the next frontier's queue, one atomic per block (BlockCompact). Both
 * settling kernels walk the vertices in order: the found lanes of a level are too many for
 * a queue of their own to pay (its random order costs more than a scan of every vertex).
 *
 * Counts (uint64, per level): [0] (vertex, lane) pairs settled, [1] out-edges of the vertices
 * settled (the next push level's edges), [2] the next frontier queue's length.
 *
 * push_lanes_varint and pull_lanes_varint read compressed rows (VarintColumns, common.cuh): a
 * push thread takes one stretch of a frontier row between two decode points instead of one
 * edge; a pull row of at most kDecodePointEdges in-neighbours is decoded by its thread, a longer
 * one by the whole warp, a lane to each stretch.
 *
 * Gathered frontier words: row r (rank r's words, `row_words` of them) holds its local vertex
 * k at r * row_words + k; global vertex u is local u / size of rank u % size.
 */
#include "common.cuh"

#include <cub/block/block_reduce.cuh>

typedef unsigned long long word_t;

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;
using distbfs::kWarpsPerBlock;

constexpr int kCountPairs = 0;
constexpr int kCountEdges = 1;
constexpr int kCountQueue = 2;

constexpr int kWordsInFlight = 4;  // in-neighbours' words a pull thread loads before testing
constexpr int kRowStep = kWordsInFlight * kWarpThreads;

__device__ __forceinline__ long long grid_start() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long grid_stride() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}

// The frontier word of global vertex u in the gathered words (one rank: u itself).
__device__ __forceinline__ word_t gathered(const word_t* frontier, long long u, int size,
                                           long long row_words) {
  return size == 1 ? frontier[u] : frontier[(u % size) * row_words + u / size];
}

// The OR of x over the warp, in every lane.
__device__ __forceinline__ word_t warp_or(word_t x) {
  for (int offset = kWarpThreads / 2; offset; offset /= 2) {
    x |= __shfl_xor_sync(kFullWarp, x, offset);
  }
  return x;
}

// OR `word` into found[u] unless found or visited already hold every one of its lanes.
__device__ __forceinline__ void offer(word_t word, long long u, const word_t* visited,
                                      word_t* found) {
  if (word & ~(__ldcg(found + u) | visited[u])) atomicOr(found + u, word);
}

// Sum this thread's pairs and edges over the block into counts (every thread must call).
__device__ __forceinline__ void count_settled(word_t pairs, word_t edges, word_t* counts) {
  typedef cub::BlockReduce<word_t, kBlockThreads> Reduce;
  __shared__ typename Reduce::TempStorage storage;
  const word_t block_pairs = Reduce(storage).Sum(pairs);
  __syncthreads();
  const word_t block_edges = Reduce(storage).Sum(edges);
  if (threadIdx.x == 0) {
    if (block_pairs) atomicAdd(counts + kCountPairs, block_pairs);
    if (block_edges) atomicAdd(counts + kCountEdges, block_edges);
  }
}

typedef distbfs::BlockCompact<kBlockThreads, 1> Compact;

// Settle vertex v (v >= n: past the end, every thread of the block calls): `reached` lanes,
// `seen` visited before; queued when new lanes reached it.
__device__ __forceinline__ void settle(long long v, long long n, word_t seen, word_t reached,
                                       word_t* visited, word_t* next,
                                       const size_type* out_offsets, long long* queue,
                                       word_t* counts, Compact::TempStorage& storage,
                                       word_t& pairs, word_t& edges) {
  const word_t fresh = reached & ~seen;
  int keep[1] = {v < n && fresh != 0};
  if (v < n) next[v] = fresh;
  if (keep[0]) {
    visited[v] = seen | fresh;
    pairs += __popcll(fresh);
    edges += out_offsets[v + 1] - out_offsets[v];
  }
  size_type slot[1];
  Compact(storage).reserve(keep, slot, reinterpret_cast<size_type*>(counts + kCountQueue));
  if (keep[0]) queue[slot[0]] = v;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    push_lanes(const long long* rows, const long long* ends, long long count, long long total,
               const size_type* offsets, const vertex_t* cols, const word_t* frontier,
               const word_t* visited, word_t* found) {
  for (long long e = grid_start(); e < total; e += grid_stride()) {
    long long low = 0, high = count - 1;  // the first row whose edges end after e
    while (low < high) {
      const long long mid = (low + high) / 2;
      if (ends[mid] > e) high = mid; else low = mid + 1;
    }
    const long long v = rows[low];
    const size_type slot = offsets[v + 1] - (ends[low] - e);
    offer(frontier[v], cols[slot], visited, found);
  }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    contract_lanes(const long long* vertices, const word_t* words, long long count, int size,
                   word_t* found) {
  for (long long i = grid_start(); i < count; i += grid_stride()) {
    atomicOr(found + vertices[i] / size, words[i]);
  }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    settle_lanes(word_t* found, word_t* visited, word_t* next, const size_type* offsets,
                 long long* queue, word_t* counts, long long n) {
  __shared__ Compact::TempStorage storage;
  word_t pairs = 0, edges = 0;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += grid_stride()) {
    const long long v = base + threadIdx.x;
    word_t reached = 0, seen = 0;
    if (v < n) {
      reached = found[v];
      if (reached) {
        found[v] = 0;
        seen = visited[v];
      }
    }
    settle(v, n, seen, reached, visited, next, offsets, queue, counts, storage, pairs, edges);
  }
  count_settled(pairs, edges, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    pull_lanes(const size_type* offsets, const vertex_t* cols, const word_t* frontier,
               long long row_words, int size, word_t* visited, word_t* next,
               const size_type* out_offsets, long long* queue, word_t* counts, long long n,
               word_t all_lanes) {
  __shared__ Compact::TempStorage storage;
  const int lane = threadIdx.x % kWarpThreads;
  word_t pairs = 0, edges = 0;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += grid_stride()) {
    const long long v = base + threadIdx.x;
    const word_t seen = v < n ? visited[v] : all_lanes;
    const size_type begin = seen != all_lanes ? offsets[v] : 0;
    const size_type end = seen != all_lanes ? offsets[v + 1] : 0;
    const bool long_row = end - begin > kWarpThreads;
    word_t reached = 0;
    // Long rows: the whole warp reads 4 x 32 in-neighbours at a time and stops together once
    // the lanes seen so far and the vertex's visited lanes cover every lane.
    unsigned int pending = __ballot_sync(kFullWarp, long_row);
    while (pending) {
      const int leader = __ffs(pending) - 1;
      pending &= pending - 1;
      const word_t had = __shfl_sync(kFullWarp, seen, leader);
      const size_type first = __shfl_sync(kFullWarp, begin, leader);
      const size_type last = __shfl_sync(kFullWarp, end, leader);
      word_t row = 0;
      for (size_type i = first + lane; i - lane < last; i += kRowStep) {
        vertex_t u[kWordsInFlight];
#pragma unroll
        for (int k = 0; k < kWordsInFlight; ++k) {
          const size_type at = i + k * kWarpThreads;
          u[k] = at < last ? cols[at] : -1;
        }
#pragma unroll
        for (int k = 0; k < kWordsInFlight; ++k) {
          if (u[k] >= 0) row |= gathered(frontier, u[k], size, row_words);
        }
        row = warp_or(row);
        if ((row | had) == all_lanes) break;
      }
      if (lane == leader) reached = row;
    }
    // Short rows: four in-neighbours' words in flight at a time.
    if (!long_row) {
      size_type i = begin;
      for (; i + kWordsInFlight <= end; i += kWordsInFlight) {
        vertex_t u[kWordsInFlight];
#pragma unroll
        for (int k = 0; k < kWordsInFlight; ++k) u[k] = cols[i + k];
#pragma unroll
        for (int k = 0; k < kWordsInFlight; ++k) reached |= gathered(frontier, u[k], size, row_words);
        if ((reached | seen) == all_lanes) break;
      }
      if ((reached | seen) != all_lanes) {
        for (; i < end; ++i) reached |= gathered(frontier, cols[i], size, row_words);
      }
    }
    settle(v, n, seen, reached, visited, next, out_offsets, queue, counts, storage, pairs, edges);
  }
  count_settled(pairs, edges, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    flush_lanes(const word_t* ring, int slots, int first, int levels, int* distances,
                long long n, int lanes, int fill) {
  __shared__ word_t words[kWarpsPerBlock][kWarpThreads];
  const int warp = threadIdx.x / kWarpThreads, lane = threadIdx.x % kWarpThreads;
  for (long long base = static_cast<long long>(blockIdx.x) * kWarpThreads; base < n;
       base += static_cast<long long>(gridDim.x) * kWarpThreads) {
    const long long v = base + lane;
    if (warp < levels) {
      words[warp][lane] = v < n ? ring[((first + warp) % slots) * n + v] : 0;
    }
    __syncthreads();
    word_t held[kWarpsPerBlock];  // vertex v's words of the levels, in registers
#pragma unroll
    for (int level = 0; level < kWarpsPerBlock; ++level) {
      held[level] = level < levels ? words[level][lane] : 0;
    }
    __syncthreads();
    if (v >= n) continue;
    for (int bit = warp; bit < lanes; bit += kWarpsPerBlock) {
      int distance = distbfs::kUnreached;
      bool reached = false;  // at most one level holds the bit
#pragma unroll
      for (int level = 0; level < kWarpsPerBlock; ++level) {
        if ((held[level] >> bit) & 1) distance = first + level, reached = true;
      }
      if (reached || fill) distances[bit * n + v] = distance;
    }
  }
}

namespace {

constexpr size_type kPoint = distbfs::kDecodePointEdges;

// OR `reached` with the gathered frontier words of the in-neighbours at slots [from, to) of
// local row v (global id `vertex`, first slot `begin`) until it and `had` cover every lane.
__device__ __forceinline__ word_t pull_slots(const distbfs::VarintColumns& coded, long long v,
                                             long long vertex, size_type begin, size_type from,
                                             size_type to, const word_t* frontier, int size,
                                             long long row_words, word_t had, word_t all_lanes,
                                             word_t reached) {
  if (from >= to) return reached;
  distbfs::VarintCursor cursor = distbfs::open_at(coded, v, begin, vertex, from);
  for (size_type i = from; i < to; ++i) {
    reached |= gathered(frontier, cursor.next(), size, row_words);
    if ((reached | had) == all_lanes) break;
  }
  return reached;
}

}  // namespace

// push_lanes over compressed rows (one rank: local ids are global): thread e takes stretch e
// of the frontier rows (ends: the running stretch counts of `rows`).
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    push_lanes_varint(const long long* rows, const long long* ends, long long count,
                      long long total, const size_type* offsets, const unsigned char* bytes,
                      const size_type* byte_offsets, const size_type* point_bytes,
                      const vertex_t* point_values, const word_t* frontier,
                      const word_t* visited, word_t* found) {
  const distbfs::VarintColumns coded{bytes, byte_offsets, point_bytes, point_values};
  for (long long e = grid_start(); e < total; e += grid_stride()) {
    long long low = 0, high = count - 1;  // the first row whose stretches end after e
    while (low < high) {
      const long long mid = (low + high) / 2;
      if (ends[mid] > e) high = mid; else low = mid + 1;
    }
    const long long v = rows[low];
    const size_type begin = offsets[v], end = offsets[v + 1];
    const long long k = e - (ends[low] - ((end - 1) / kPoint - begin / kPoint + 1));
    const size_type from = k == 0 ? begin : (begin / kPoint + k) * kPoint;
    const size_type stop = (begin / kPoint + k + 1) * kPoint;
    const size_type to = stop < end ? stop : end;
    const word_t word = frontier[v];
    distbfs::VarintCursor cursor = distbfs::open_at(coded, v, begin, v, from);
    for (size_type i = from; i < to; ++i) offer(word, cursor.next(), visited, found);
  }
}

// pull_lanes over compressed rows of rank `rank` of `size`.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    pull_lanes_varint(const size_type* offsets, const unsigned char* bytes,
                      const size_type* byte_offsets, const size_type* point_bytes,
                      const vertex_t* point_values, const word_t* frontier,
                      long long row_words, int size, int rank, word_t* visited, word_t* next,
                      const size_type* out_offsets, long long* queue, word_t* counts,
                      long long n, word_t all_lanes) {
  const distbfs::VarintColumns coded{bytes, byte_offsets, point_bytes, point_values};
  __shared__ Compact::TempStorage storage;
  const int lane = threadIdx.x % kWarpThreads;
  word_t pairs = 0, edges = 0;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += grid_stride()) {
    const long long v = base + threadIdx.x;
    const word_t seen = v < n ? visited[v] : all_lanes;
    const size_type begin = seen != all_lanes ? offsets[v] : 0;
    const size_type end = seen != all_lanes ? offsets[v + 1] : 0;
    const bool long_row = end - begin > kPoint;
    word_t reached = 0;
    // Long rows: each lane decodes one stretch between decode points at a time; the warp
    // stops together once the lanes seen so far cover every lane.
    unsigned int pending = __ballot_sync(kFullWarp, long_row);
    while (pending) {
      const int leader = __ffs(pending) - 1;
      pending &= pending - 1;
      const long long row_id = __shfl_sync(kFullWarp, v, leader);
      const word_t had = __shfl_sync(kFullWarp, seen, leader);
      const size_type first = __shfl_sync(kFullWarp, begin, leader);
      const size_type last = __shfl_sync(kFullWarp, end, leader);
      word_t row = 0;
      for (size_type k = first / kPoint + lane; (k - lane) * kPoint < last; k += kWarpThreads) {
        const size_type from = k * kPoint > first ? k * kPoint : first;
        const size_type to = (k + 1) * kPoint < last ? (k + 1) * kPoint : last;
        row = pull_slots(coded, row_id, row_id * size + rank, first, from, to, frontier, size,
                         row_words, had, all_lanes, row);
        row = warp_or(row);
        if ((row | had) == all_lanes) break;
      }
      if (lane == leader) reached = row;
    }
    if (!long_row && end > begin) {
      reached = pull_slots(coded, v, v * size + rank, begin, begin, end, frontier, size,
                           row_words, seen, all_lanes, 0);
    }
    settle(v, n, seen, reached, visited, next, out_offsets, queue, counts, storage, pairs, edges);
  }
  count_settled(pairs, edges, counts);
}
