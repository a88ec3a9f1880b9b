/*
 * lanes.cu: batched BFS from up to 64 sources as bit lanes (Then et al., VLDB 2015, "The More
 * the Merrier"; Liu & Huang, SIGMOD 2016, "iBFS"): one 64-bit word per owned vertex in each of
 * visited, frontier and found (bit i: the search from source i). distbfs/backends/arrays/lanes.py
 * describes the state; these are the stages that need atomics or a loop per vertex.
 *
 *   push_lanes      push level on one rank (no exchange): every frontier vertex ORs its word
 *                   into found of each out-neighbour, skipping the atomic where found and
 *                   visited already hold those lanes; a thread per edge of the frontier's rows
 *                   (its row found by a binary search of the rows' running edge counts), so a
 *                   hub's million edges take the whole grid, not one warp
 *   contract_lanes  push level, after the exchange: found[local(v)] |= word per received item
 *   pull_lanes      pull level: every owned vertex not visited in all lanes ORs the gathered
 *                   frontier words of its in-neighbours, stopping once every lane is seen;
 *                   rows longer than a warp are read by the whole warp, 32 slots a step
 *   settle_lanes    a level's end: the new lanes of each vertex (found & ~visited) become
 *                   visited and its next frontier word, their distances are written (a warp
 *                   writes one lane's row for its 32 vertices at a time), and the
 *                   (vertex, lane) pairs found and the new frontier's out-edges are counted into
 *                   counts[0] and counts[1] (one atomicAdd per block each)
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
    pull_lanes(const size_type* offsets, const vertex_t* cols, const word_t* frontier,
               long long row_words, int size, const word_t* visited, word_t* found, long long n,
               word_t all_lanes) {
  const int lane = threadIdx.x % kWarpThreads;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += grid_stride()) {
    const long long v = base + threadIdx.x;
    const word_t seen = v < n ? visited[v] : all_lanes;
    const size_type begin = seen != all_lanes ? offsets[v] : 0;
    const size_type end = seen != all_lanes ? offsets[v + 1] : 0;
    const bool long_row = end - begin > kWarpThreads;
    // Long rows: the whole warp reads 32 in-neighbours at a time and stops together once the
    // lanes seen so far and the vertex's visited lanes cover every lane.
    unsigned int pending = __ballot_sync(kFullWarp, long_row);
    while (pending) {
      const int leader = __ffs(pending) - 1;
      pending &= pending - 1;
      const long long row = __shfl_sync(kFullWarp, v, leader);
      const word_t had = __shfl_sync(kFullWarp, seen, leader);
      const size_type first = __shfl_sync(kFullWarp, begin, leader);
      const size_type last = __shfl_sync(kFullWarp, end, leader);
      word_t reached = 0;
      for (size_type i = first; i < last; i += kWarpThreads) {
        if (i + lane < last) reached |= gathered(frontier, cols[i + lane], size, row_words);
        reached = warp_or(reached);
        if ((reached | had) == all_lanes) break;
      }
      if (lane == 0 && reached) found[row] |= reached;
    }
    if (!long_row && end > begin) {
      word_t reached = 0;
      for (size_type i = begin; i < end; ++i) {
        reached |= gathered(frontier, cols[i], size, row_words);
        if ((reached | seen) == all_lanes) break;
      }
      if (reached) found[v] |= reached;
    }
  }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    settle_lanes(word_t* found, word_t* visited, word_t* frontier, int* distances, long long n,
                 int level, const size_type* offsets, unsigned long long* counts) {
  unsigned long long pairs = 0, edges = 0;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += grid_stride()) {
    const long long v = base + threadIdx.x;
    word_t fresh = 0;
    if (v < n) {
      fresh = found[v] & ~visited[v];
      found[v] = 0;
      frontier[v] = fresh;
      if (fresh) {
        visited[v] |= fresh;
        pairs += __popcll(fresh);
        edges += offsets[v + 1] - offsets[v];
      }
    }
    // Distances lane by lane over the warp's 32 vertices: each store is one row's 32
    // consecutive entries (coalesced), for the lanes any of them found.
    for (word_t rest = warp_or(fresh); rest; rest &= rest - 1) {
      const int bit = __ffsll(static_cast<long long>(rest)) - 1;
      if ((fresh >> bit) & 1) distances[bit * n + v] = level;
    }
  }
  typedef cub::BlockReduce<unsigned long long, kBlockThreads> Reduce;
  __shared__ typename Reduce::TempStorage storage;
  const unsigned long long block_pairs = Reduce(storage).Sum(pairs);
  __syncthreads();
  const unsigned long long block_edges = Reduce(storage).Sum(edges);
  if (threadIdx.x == 0) {
    if (block_pairs) atomicAdd(counts, block_pairs);
    if (block_edges) atomicAdd(counts + 1, block_edges);
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
                      long long row_words, int size, int rank, const word_t* visited,
                      word_t* found, long long n, word_t all_lanes) {
  const distbfs::VarintColumns coded{bytes, byte_offsets, point_bytes, point_values};
  const int lane = threadIdx.x % kWarpThreads;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += grid_stride()) {
    const long long v = base + threadIdx.x;
    const word_t seen = v < n ? visited[v] : all_lanes;
    const size_type begin = seen != all_lanes ? offsets[v] : 0;
    const size_type end = seen != all_lanes ? offsets[v + 1] : 0;
    const bool long_row = end - begin > kPoint;
    // Long rows: each lane decodes one stretch between decode points at a time; the warp
    // stops together once the lanes seen so far cover every lane.
    unsigned int pending = __ballot_sync(kFullWarp, long_row);
    while (pending) {
      const int leader = __ffs(pending) - 1;
      pending &= pending - 1;
      const long long row = __shfl_sync(kFullWarp, v, leader);
      const word_t had = __shfl_sync(kFullWarp, seen, leader);
      const size_type first = __shfl_sync(kFullWarp, begin, leader);
      const size_type last = __shfl_sync(kFullWarp, end, leader);
      word_t reached = 0;
      for (size_type k = first / kPoint + lane; (k - lane) * kPoint < last; k += kWarpThreads) {
        const size_type from = k * kPoint > first ? k * kPoint : first;
        const size_type to = (k + 1) * kPoint < last ? (k + 1) * kPoint : last;
        reached = pull_slots(coded, row, row * size + rank, first, from, to, frontier, size,
                             row_words, had, all_lanes, reached);
        reached = warp_or(reached);
        if ((reached | had) == all_lanes) break;
      }
      if (lane == 0 && reached) found[row] |= reached;
    }
    if (!long_row && end > begin) {
      const word_t reached = pull_slots(coded, v, v * size + rank, begin, begin, end, frontier,
                                        size, row_words, seen, all_lanes, 0);
      if (reached) found[v] |= reached;
    }
  }
}
