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
 *   push_lanes_striped  push level on several ranks: as push_lanes, but a neighbour another
 *                   rank owns is queued as (global id, word) for it (one atomic per block), to
 *                   be binned by owner and exchanged
 *   contract_lanes  push level, after the exchange: found[local(v)] |= word per received item
 *   settle_lanes    after a push level, every owned vertex: its new lanes (found & ~visited)
 *                   become visited and its word of the next level; found is cleared
 *   pull_lanes      pull level: every owned vertex not visited in all lanes ORs the gathered
 *                   frontier words of its in-neighbours, stopping once every lane is seen, and
 *                   settles itself as settle_lanes does; rows longer than a warp are read by
 *                   the whole warp, four in-neighbours a thread at a time
 *   flush_lanes     distances (lanes, n) int32 from a run of up to 16 levels of the ring: a
 *                   thread per 4 vertices ORs each one's words of the levels whose offset in
 *                   the run has bit k set into mask k, reads each lane's offset off the masks
 *                   and writes the 4 distances as one 16-byte store
 *
 * Settling writes every vertex's next-level word (no clearing pass). settle_lanes also queues
 * the vertices with new lanes, the rows of the next push level, one atomic per block
 * (BlockCompact); both walk the vertices in order (a queue of the found vertices in the order
 * they were found costs more to settle than a scan of every vertex). pull_lanes queues nothing:
 * its block would wait at every step for its slowest warp; a push level after a pull level
 * (once a search) takes the frontier's vertices from the words.
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
 * k at r * row_words + k; global vertex u is local u / size of rank u % size. The host may
 * instead pass in-neighbour columns relabeled by a vertex order and every rank's words laid out
 * in that order, as one row (GatherOrder in lanes.py): the kernels read them alike.
 */
#include "common.cuh"

#include <cub/block/block_reduce.cuh>

typedef unsigned long long word_t;

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;

constexpr int kCountPairs = 0;
constexpr int kCountEdges = 1;
constexpr int kCountQueue = 2;

constexpr int kWordsInFlight = 4;  // in-neighbours' words a pull thread loads before testing
constexpr int kRowStep = kWordsInFlight * kWarpThreads;

constexpr int kFlushLevelBits = 4;  // flush_lanes: up to 1 << 4 levels at a time
constexpr int kMaxLanes = 64;       // the bits of a word
constexpr int kFlushVertices = 4;   // a flush thread's vertices: one int4 store a lane

__device__ __forceinline__ long long grid_start() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long grid_stride() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}

// The gathered frontier words (the module comment's layout): word(u) of global vertex u.
struct Gathered {
  const word_t* words;
  int size;
  long long row_words;

  __device__ __forceinline__ word_t operator()(long long u) const {
    return words[size == 1 ? u : (u % size) * row_words + u / size];
  }
};

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

// The new lanes of vertex v (< n): `reached` this level, `seen` visited before; they become
// visited and its word of the next level (every vertex's word is written). Returns them.
__device__ __forceinline__ word_t settle(long long v, word_t seen, word_t reached,
                                         word_t* visited, word_t* next,
                                         const size_type* out_offsets, word_t& pairs,
                                         word_t& edges) {
  const word_t fresh = reached & ~seen;
  next[v] = fresh;
  if (fresh) {
    visited[v] = seen | fresh;
    pairs += __popcll(fresh);
    edges += out_offsets[v + 1] - out_offsets[v];
  }
  return fresh;
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
    push_lanes_striped(const long long* rows, const long long* ends, long long count,
                       long long total, const size_type* offsets, const vertex_t* cols,
                       const word_t* frontier, const word_t* visited, word_t* found, int rank,
                       int size, long long* remote_vertices, word_t* remote_words,
                       size_type* queued) {
  __shared__ Compact::TempStorage storage;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < total;
       base += grid_stride()) {
    const long long e = base + threadIdx.x;
    int keep[1] = {0};
    long long u = 0;
    word_t word = 0;
    if (e < total) {
      long long low = 0, high = count - 1;  // the first row whose edges end after e
      while (low < high) {
        const long long mid = (low + high) / 2;
        if (ends[mid] > e) high = mid; else low = mid + 1;
      }
      const long long v = rows[low];
      u = cols[offsets[v + 1] - (ends[low] - e)];
      word = frontier[v];
      if (u % size == rank) {
        offer(word, u / size, visited, found);
      } else {
        keep[0] = 1;
      }
    }
    size_type slot[1];
    Compact(storage).reserve(keep, slot, queued);  // every thread: it ends with a barrier
    if (keep[0]) {
      remote_vertices[slot[0]] = u;
      remote_words[slot[0]] = word;
    }
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
    int keep[1] = {0};
    if (v < n) {
      const word_t reached = found[v];
      if (reached) found[v] = 0;
      const word_t seen = reached ? visited[v] : 0;
      keep[0] = settle(v, seen, reached, visited, next, offsets, pairs, edges) != 0;
    }
    size_type slot[1];
    Compact(storage).reserve(keep, slot, reinterpret_cast<size_type*>(counts + kCountQueue));
    if (keep[0]) queue[slot[0]] = v;
  }
  count_settled(pairs, edges, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    pull_lanes(const size_type* offsets, const vertex_t* cols, const word_t* frontier,
               long long row_words, int size, word_t* visited, word_t* next,
               const size_type* out_offsets, word_t* counts, long long n, word_t all_lanes) {
  const int lane = threadIdx.x % kWarpThreads;
  const Gathered gathered{frontier, size, row_words};
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
          if (u[k] >= 0) row |= gathered(u[k]);
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
        for (int k = 0; k < kWordsInFlight; ++k) reached |= gathered(u[k]);
        if ((reached | seen) == all_lanes) break;
      }
      if ((reached | seen) != all_lanes) {
        for (; i < end; ++i) reached |= gathered(cols[i]);
      }
    }
    if (v < n) settle(v, seen, reached, visited, next, out_offsets, pairs, edges);
  }
  count_settled(pairs, edges, counts);
}

namespace {

// The offset in its run of levels at which lane `bit` reached the vertex (bit k of it: mask k).
__device__ __forceinline__ int lane_offset(const word_t (&offsets)[kFlushLevelBits], int bit) {
  int offset = 0;
#pragma unroll
  for (int k = 0; k < kFlushLevelBits; ++k) {
    offset |= static_cast<int>((offsets[k] >> bit) & 1) << k;
  }
  return offset;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    flush_lanes(const word_t* ring, int slots, int first, int levels, int* distances,
                long long n, int lanes, int fill) {
  // kFlushVertices consecutive vertices a thread: 16-byte loads and stores where every lane's
  // row starts 16-byte aligned (n a multiple of 4), else one entry at a time.
  const bool vectors = n % kFlushVertices == 0;
  for (long long v = grid_start() * kFlushVertices; v < n; v += grid_stride() * kFlushVertices) {
    const int here = n - v < kFlushVertices ? static_cast<int>(n - v) : kFlushVertices;
    word_t offsets[kFlushVertices][kFlushLevelBits] = {}, any[kFlushVertices] = {};
    for (int level = 0; level < levels; ++level) {
      const word_t* row = ring + static_cast<long long>((first + level) % slots) * n + v;
      word_t word[kFlushVertices];
      if (vectors) {
        const ulonglong2 low = *reinterpret_cast<const ulonglong2*>(row);
        const ulonglong2 high = *reinterpret_cast<const ulonglong2*>(row + 2);
        word[0] = low.x, word[1] = low.y, word[2] = high.x, word[3] = high.y;
      } else {
#pragma unroll
        for (int j = 0; j < kFlushVertices; ++j) word[j] = j < here ? row[j] : 0;
      }
#pragma unroll
      for (int j = 0; j < kFlushVertices; ++j) {
        any[j] |= word[j];
#pragma unroll
        for (int k = 0; k < kFlushLevelBits; ++k) {
          if ((level >> k) & 1) offsets[j][k] |= word[j];
        }
      }
    }
    word_t held = 0;
#pragma unroll
    for (int j = 0; j < kFlushVertices; ++j) held |= any[j];
    if (!fill && !held) continue;
    // Every lane in the same order on every thread (a warp's stores: one row's 128
    // consecutive entries), unrolled so each bit's shifts are constants; without fill, only
    // the lanes these levels hold.
#pragma unroll
    for (int bit = 0; bit < kMaxLanes; ++bit) {
      if (bit >= lanes) break;
      int distance[kFlushVertices];
      bool reached[kFlushVertices];
#pragma unroll
      for (int j = 0; j < kFlushVertices; ++j) {
        reached[j] = (any[j] >> bit) & 1;
        distance[j] = reached[j] ? first + lane_offset(offsets[j], bit) : distbfs::kUnreached;
      }
      int* out = distances + bit * n + v;
      if (fill && vectors) {
        *reinterpret_cast<int4*>(out) =
            make_int4(distance[0], distance[1], distance[2], distance[3]);
      } else {
#pragma unroll
        for (int j = 0; j < kFlushVertices; ++j) {
          if (j < here && (reached[j] || fill)) out[j] = distance[j];
        }
      }
    }
  }
}

namespace {

constexpr size_type kPoint = distbfs::kDecodePointEdges;

// OR `reached` with the gathered frontier words of the in-neighbours at slots [from, to) of
// local row v (global id `vertex`, first slot `begin`) until it and `had` cover every lane.
__device__ __forceinline__ word_t pull_slots(const distbfs::VarintColumns& coded, long long v,
                                             long long vertex, size_type begin, size_type from,
                                             size_type to, const Gathered& gathered,
                                             word_t had, word_t all_lanes,
                                             word_t reached) {
  if (from >= to) return reached;
  distbfs::VarintCursor cursor = distbfs::open_at(coded, v, begin, vertex, from);
  for (size_type i = from; i < to; ++i) {
    reached |= gathered(cursor.next());
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
                      const size_type* out_offsets, word_t* counts, long long n,
                      word_t all_lanes) {
  const distbfs::VarintColumns coded{bytes, byte_offsets, point_bytes, point_values};
  const int lane = threadIdx.x % kWarpThreads;
  const Gathered gathered{frontier, size, row_words};
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
        row = pull_slots(coded, row_id, row_id * size + rank, first, from, to, gathered, had,
                         all_lanes, row);
        row = warp_or(row);
        if ((row | had) == all_lanes) break;
      }
      if (lane == leader) reached = row;
    }
    if (!long_row && end > begin) {
      reached = pull_slots(coded, v, v * size + rank, begin, begin, end, gathered, seen,
                           all_lanes, 0);
    }
    if (v < n) settle(v, seen, reached, visited, next, out_offsets, pairs, edges);
  }
  count_settled(pairs, edges, counts);
}
