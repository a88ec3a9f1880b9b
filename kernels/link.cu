/*
 * link.cu: Afforest's Link and Compress on one GPU (Sutton, Ben-Nun & Barak, "Optimizing
 * Parallel Graph Connectivity Computation via Subgraph Sampling", IPDPS 2018; gapbs cc.cc),
 * a lock-free union-find over the label array of a graph held whole by one rank.
 *
 * Labels (comp_t, int64): comp[v] is the parent of vertex v in a forest of min-label trees; a
 * root points at itself and every pointer goes down (comp[v] <= v). link(u, v) hooks the larger
 * of the two trees' roots under the smaller with one atomicCAS that succeeds only while that
 * root is still a root, and otherwise climbs and retries: one pass over a set of edges joins
 * every pair of trees they connect (no rounds). compress() then points every vertex at its
 * root, so the labels are the smallest vertex id of each component found so far.
 *
 * Labels written by other blocks are read with __ldcg (through L2, never a stale L1 line):
 * a stale read would only cost a failed CAS and a retry, but a retry that kept reading the same
 * stale line would never end.
 *
 * Kernels, each a grid-stride loop over the vertices that counts what it did into counts[0]
 * (links read), counts[1] (links whose ends had different labels when read) and counts[2]
 * (roots hooked), one atomicAdd per block and count:
 *   link_neighbour  neighbour r of every vertex, in the row of its out-neighbours followed
 *                   (directed graphs) by its in-neighbours: Afforest's sampled subgraph
 *   link_rows       every neighbour (out, and in on a directed graph) of the vertices whose
 *                   label is not *skip (the largest intermediate component; -1: none); rows
 *                   longer than a warp are strided by the whole warp (Merrill's warp gathering)
 *   compress        every label to its tree's root (pointer jumping)
 * and, one block:
 *   most_frequent_label  the label most of the sampled vertices carry (the smallest among
 *                   equals; -1 without samples) into *out, for link_rows to read: the largest
 *                   intermediate component is found without a round trip to the host
 */
#include "common.cuh"

#include <cub/block/block_reduce.cuh>

typedef long long comp_t;

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;

__device__ __forceinline__ comp_t read_label(const comp_t* comp, comp_t v) {
  return __ldcg(comp + v);
}

enum LinkOutcome { kSameTree = 0, kJoinedMeanwhile = 1, kHooked = 2 };

// Join the trees of u and v.
__device__ __forceinline__ LinkOutcome link(comp_t u, comp_t v, comp_t* comp) {
  comp_t p1 = read_label(comp, u);
  comp_t p2 = read_label(comp, v);
  if (p1 == p2) return kSameTree;
  while (p1 != p2) {
    const comp_t high = p1 > p2 ? p1 : p2;
    const comp_t low = p1 > p2 ? p2 : p1;
    const comp_t above = read_label(comp, high);
    if (above == low) break;
    if (above == high) {
      const unsigned long long seen =
          atomicCAS(reinterpret_cast<unsigned long long*>(comp + high),
                    static_cast<unsigned long long>(high), static_cast<unsigned long long>(low));
      if (seen == static_cast<unsigned long long>(high)) return kHooked;
    }
    p1 = read_label(comp, read_label(comp, high));
    p2 = read_label(comp, low);
  }
  return kJoinedMeanwhile;
}

struct Tally {
  unsigned long long links = 0;
  unsigned long long crossing = 0;
  unsigned long long hooked = 0;

  __device__ __forceinline__ void add(comp_t u, comp_t v, comp_t* comp) {
    const LinkOutcome outcome = link(u, v, comp);
    ++links;
    crossing += outcome != kSameTree;
    hooked += outcome == kHooked;
  }

  // The block's sums into counts[0..2] (every thread of the block calls it).
  __device__ void flush(unsigned long long* counts) {
    typedef cub::BlockReduce<unsigned long long, kBlockThreads> Reduce;
    __shared__ typename Reduce::TempStorage storage;
    const unsigned long long sums[3] = {links, crossing, hooked};
    for (int k = 0; k < 3; ++k) {
      const unsigned long long total = Reduce(storage).Sum(sums[k]);
      if (threadIdx.x == 0 && total) atomicAdd(counts + k, total);
      __syncthreads();  // storage is reused
    }
  }
};

// Link vertex v to columns [begin, end) of `cols`. Every lane of the warp calls it together:
// rows longer than a warp are taken one at a time by the whole warp, the others by their lane.
__device__ __forceinline__ void link_row(comp_t v, size_type begin, size_type end,
                                         const vertex_t* cols, comp_t* comp, Tally& tally) {
  const int lane = threadIdx.x % kWarpThreads;
  const bool long_row = end - begin > kWarpThreads;
  unsigned int pending = __ballot_sync(kFullWarp, long_row);
  while (pending) {
    const int leader = __ffs(pending) - 1;
    pending &= pending - 1;
    const comp_t u = __shfl_sync(kFullWarp, v, leader);
    const size_type first = __shfl_sync(kFullWarp, begin, leader);
    const size_type last = __shfl_sync(kFullWarp, end, leader);
    for (size_type i = first + lane; i < last; i += kWarpThreads) tally.add(u, cols[i], comp);
  }
  if (!long_row) {
    for (size_type i = begin; i < end; ++i) tally.add(v, cols[i], comp);
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_neighbour(const size_type* offsets, const vertex_t* cols, const size_type* in_offsets,
                   const vertex_t* in_cols, int directed, long long n, long long r, comp_t* comp,
                   unsigned long long* counts) {
  Tally tally;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += stride) {
    const size_type degree = offsets[v + 1] - offsets[v];
    if (r < degree) {
      tally.add(v, cols[offsets[v] + r], comp);
    } else if (directed && r - degree < in_offsets[v + 1] - in_offsets[v]) {
      tally.add(v, in_cols[in_offsets[v] + (r - degree)], comp);
    }
  }
  tally.flush(counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_rows(const size_type* offsets, const vertex_t* cols, const size_type* in_offsets,
              const vertex_t* in_cols, int directed, long long n, const comp_t* skip_label,
              comp_t* comp, unsigned long long* counts) {
  Tally tally;
  const comp_t skip = *skip_label;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  // Warp-uniform trip count: every lane reaches link_row's ballots together.
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < n;
       base += stride) {
    const long long v = base + threadIdx.x;
    const bool take = v < n && read_label(comp, v) != skip;
    link_row(v, take ? offsets[v] : 0, take ? offsets[v + 1] : 0, cols, comp, tally);
    if (directed) {
      link_row(v, take ? in_offsets[v] : 0, take ? in_offsets[v + 1] : 0, in_cols, comp, tally);
    }
  }
  tally.flush(counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads) compress(long long n, comp_t* comp) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += stride) {
    // Pointer jumping that writes every step, so vertices of the same path shorten it for
    // each other (gapbs's Compress). A root (every isolated vertex, every component's
    // smallest) reads its label once.
    comp_t up = comp[v];
    if (up == v) continue;
    for (comp_t top = read_label(comp, up); up != top; up = top, top = read_label(comp, up)) {
      comp[v] = top;
    }
  }
}

namespace {

// A sampled label and how many samples carry it; the better of two is the more frequent, the
// smaller label among equals (distbfs.engine.components.most_frequent's rule).
struct LabelCount {
  comp_t label;
  int count;
};

struct MoreFrequent {
  __device__ __forceinline__ LabelCount operator()(const LabelCount& a,
                                                   const LabelCount& b) const {
    if (a.count != b.count) return a.count > b.count ? a : b;
    return a.label <= b.label ? a : b;
  }
};

}  // namespace

// The samples' labels a block holds (LARGEST_ON_DEVICE in distbfs/backends/cuda/link.py).
constexpr int kSampleSlots = 4096;

// One block: the sampled labels are read once into shared memory, then each thread counts
// its samples' labels against all of them (count^2 / kBlockThreads comparisons a thread: 4,096
// for the default 1,024 samples) and the block reduces to the most frequent.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    most_frequent_label(const long long* samples, int count, const comp_t* comp, comp_t* out) {
  __shared__ comp_t labels[kSampleSlots];
  for (int i = threadIdx.x; i < count; i += kBlockThreads) labels[i] = comp[samples[i]];
  __syncthreads();
  LabelCount best = {-1, 0};
  for (int i = threadIdx.x; i < count; i += kBlockThreads) {
    const comp_t label = labels[i];
    int matches = 0;
    for (int k = 0; k < count; ++k) matches += labels[k] == label;
    best = MoreFrequent()(best, LabelCount{label, matches});
  }
  typedef cub::BlockReduce<LabelCount, kBlockThreads> Reduce;
  __shared__ typename Reduce::TempStorage storage;
  const LabelCount winner = Reduce(storage).Reduce(best, MoreFrequent());
  if (threadIdx.x == 0) *out = winner.count ? winner.label : -1;
}
