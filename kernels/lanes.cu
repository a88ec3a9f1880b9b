/*
 * lanes.cu: batched BFS from up to 64 sources as bit lanes (Then et al., VLDB 2015, "The More
 * the Merrier"; Liu & Huang, SIGMOD 2016, "iBFS"): one 64-bit word per owned vertex in each of
 * visited, frontier and found (bit i: the search from source i). distbfs/backends/arrays/lanes.py
 * describes the state; these are the stages that need atomics or a loop per vertex.
 *
 *   contract_lanes  push level, after the exchange: found[local(v)] |= word per received item
 *   pull_lanes      pull level: every owned vertex not visited in all lanes ORs the gathered
 *                   frontier words of its in-neighbours, stopping once every lane is seen
 *   settle_lanes    a level's end: the new lanes of each vertex (found & ~visited) become
 *                   visited and its next frontier word, their distances are written, and the
 *                   (vertex, lane) pairs found and the new frontier's out-edges are counted into
 *                   counts[0] and counts[1] (one atomicAdd per block each)
 *
 * Gathered frontier words: row r (rank r's words, `row_words` of them) holds its local vertex
 * k at r * row_words + k; global vertex u is local u / size of rank u % size.
 */
#include "common.cuh"

#include <cub/block/block_reduce.cuh>

typedef unsigned long long word_t;

namespace {

using distbfs::kBlockThreads;

__device__ __forceinline__ long long grid_start() {
  return static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ __forceinline__ long long grid_stride() {
  return static_cast<long long>(gridDim.x) * blockDim.x;
}

}  // namespace

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
  for (long long v = grid_start(); v < n; v += grid_stride()) {
    const word_t seen = visited[v];
    if (seen == all_lanes) continue;
    word_t reached = 0;
    const size_type end = offsets[v + 1];
    for (size_type i = offsets[v]; i < end; ++i) {
      const long long u = cols[i];
      reached |= frontier[(u % size) * row_words + u / size];
      if ((reached | seen) == all_lanes) break;
    }
    if (reached) found[v] |= reached;
  }
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    settle_lanes(word_t* found, word_t* visited, word_t* frontier, int* distances, long long n,
                 int level, const size_type* offsets, unsigned long long* counts) {
  unsigned long long pairs = 0, edges = 0;
  for (long long v = grid_start(); v < n; v += grid_stride()) {
    const word_t fresh = found[v] & ~visited[v];
    found[v] = 0;
    frontier[v] = fresh;
    if (fresh) {
      visited[v] |= fresh;
      pairs += __popcll(fresh);
      edges += offsets[v + 1] - offsets[v];
      for (word_t rest = fresh; rest; rest &= rest - 1) {
        const long long lane = __ffsll(static_cast<long long>(rest)) - 1;
        distances[lane * n + v] = level;
      }
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
