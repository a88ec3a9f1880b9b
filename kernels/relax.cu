/*
 * relax.cu: delta-stepping shortest paths (Meyer & Sanders, J. Algorithms 2003) on one GPU that
 * holds the whole graph, in ONE persistent cooperative grid: buckets, their relaxation steps and
 * the search for the next bucket all run on the device, with grid barriers between them and no
 * host round trip (a road network has thousands of buckets; a host read costs ~19 us).
 *
 * Distances (dist_t) are the bits of non-negative doubles, which order as unsigned integers,
 * so a relaxation is one 64-bit atomicMin; inf (no path yet) orders above every finite value.
 * The schedule is near-far (Davidson et al., IPDPS 2014) over delta-stepping's buckets:
 *   - step: every vertex of the near queue relaxes ALL its out-edges (no light/heavy split:
 *     the GPU has the width to relax heavy edges early); a target that improves below the
 *     bucket's end joins the next near queue (once per step: `queued` holds the step it was
 *     queued for), one that improves beyond it joins the far pile (once per bucket:
 *     `far_mark` holds the bucket). Steps repeat until the near queue is empty: the bucket is
 *     settled (every vertex below its end has its final distance).
 *   - advance: the far pile's live entries (distance at or beyond the old end) are counted in
 *     a histogram of delta-wide bins past the old end; the new end is the first bin boundary
 *     with at least max(threads of the grid, live / split_divisor) vertices below it (a
 *     bucket holds at least the grid's width of work, and a long pile shrinks by a fixed
 *     fraction per bucket), at most max_bins bins past the old end (buckets stay narrow enough
 *     to relax few edges twice), and past the least live distance when that lies beyond;
 *     entries below the new end become the near queue, the rest the next far pile, dead
 *     entries drop out.
 *     A far pile that overflowed its capacity is replaced by a scan of every vertex.
 * Distances are exact in any order of relaxation (the minimum over paths of each path's sum,
 * added left to right), so the result does not depend on the grid, delta or timing.
 *
 * Rows: a thread relaxes its vertex's row when it has at most a warp's width of edges; longer
 * rows up to `piece_edges` are relaxed by the whole warp (Merrill's warp gathering); longer
 * ones are cut into pieces of `piece_edges` edges that the grid's warps share after a barrier.
 * Each thread takes its edges four at a time (kBatch). A grid of one block (small graphs)
 * synchronizes with block barriers instead of grid barriers.
 * Compressed rows (the *_varint kernels; VarintColumns in common.cuh) are decoded in order by
 * one thread: a row of at most kDecodePointEdges edges by its vertex's thread, a longer one cut
 * at its decode points into pieces (`piece_edges` is not used) that the grid's threads share.
 *
 * Counter slots (size_type counts[]) rotate so that one barrier separates a slot's last read
 * from its reset: near queue lengths by step (3), piece counts by step (3), far pile lengths
 * by bucket (3), then two histograms and two least live distances by bucket parity. ctl[]
 * carries the search across launches: step, bucket, the current bucket's end (bits), done
 * flag.
 *
 * Kernels:
 *   delta_stepping  the search, until it is done or `log_rows` buckets were logged
 *   tight_parents   shortest-path tree, pass 0: the smallest strictly closer tight in-neighbour
 *   plateau_parents pass k >= 1: in zero-distance plateaus, the smallest tight in-neighbour
 *                   resolved in pass k - 1 (`plateau_commit` ends the pass)
 *   relax_pieces    the pieces the two tree passes queued
 * each also as <name>_varint, which reads compressed columns (the four VarintColumns arrays in
 * place of `columns`).
 */
#include "common.cuh"

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

typedef unsigned long long dist_t;

namespace {

using distbfs::kFullWarp;
using distbfs::kWarpThreads;

constexpr int kRelaxThreads = distbfs::kPathThreads;  // threads per block of every kernel here
constexpr int kSplitBins = 256;  // histogram bins of the advance (PATH_HISTOGRAM_BINS)
constexpr dist_t kNoPath = 0x7ff0000000000000ull;  // +inf
constexpr pred_t kNoParent = 0x7fffffffffffffffll;  // tree passes: not resolved yet

// counts[] layout
constexpr int kNearSlot = 0;   // + step % 3
constexpr int kPieceSlot = 3;  // + step % 3
constexpr int kFarSlot = 6;    // + bucket % 3
constexpr int kHistSlot = 9;   // + (bucket & 1) * kSplitBins
constexpr int kMinSlot = kHistSlot + 2 * kSplitBins;  // + (bucket & 1): least live distance
// 9 + 2 * 256 + 2 slots in all (PATH_COUNT_SLOTS in distbfs/backends/cuda/relax.py)

// ctl[] layout
enum { kCtlStep = 0, kCtlBucket = 1, kCtlEnd = 2, kCtlDone = 3, kCtlSlots = 4 };

// log rows: bucket, lower bound (bits), end (bits), steps, relaxations, improved, queued
constexpr int kLogWords = 7;

__device__ __forceinline__ double as_double(dist_t bits) { return __longlong_as_double(bits); }
__device__ __forceinline__ dist_t as_bits(double d) {
  return static_cast<dist_t>(__double_as_longlong(d));
}

struct Csr {
  const size_type* offsets;
  const vertex_t* columns;       // plain columns (the plain kernels)
  distbfs::VarintColumns coded;  // compressed columns (the *_varint kernels)
  const void* weights;           // float or double, or none (every edge weighs 1)
  int weight_kind;               // 0 none, 1 float, 2 double

  __device__ __forceinline__ double weight(size_type e) const {
    if (weight_kind == 1) return static_cast<double>(static_cast<const float*>(weights)[e]);
    if (weight_kind == 2) return static_cast<const double*>(weights)[e];
    return 1.0;
  }
};

// Reserve `count` consecutive slots of a queue from divergent code: one atomic per group of
// active lanes, each lane's slots after those of the lanes below it. Returns the first.
__device__ __forceinline__ size_type append_slots(size_type* counter, int count) {
  cg::coalesced_group active = cg::coalesced_threads();
  int below = count;  // inclusive scan of the counts over the group
  for (unsigned offset = 1; offset < active.size(); offset *= 2) {
    const int up = active.shfl_up(below, offset);
    if (active.thread_rank() >= offset) below += up;
  }
  const unsigned last = active.size() - 1;
  size_type base = 0;
  if (active.thread_rank() == last) base = distbfs::reserve_slots(counter, below);
  return active.shfl(base, last) + below - count;
}

struct Pieces {
  vertex_t* vertex;
  size_type* start;
  size_type capacity;
};

// Edges are visited kBatch at a time per thread: the batch's loads, then its atomics, are
// issued back to back, so a thread waits for one memory round trip per batch rather than one
// per edge (a step on a road network or mesh is a chain of such round trips).
constexpr int kBatch = 4;

// Visit edges e, e + stride, ... below stop of vertex u (distance du), kBatch at a time.
template <class Visit>
__device__ __forceinline__ void visit_edges(const Csr& g, vertex_t u, double du, size_type e,
                                            size_type stop, size_type stride, Visit& visit) {
  for (; e < stop; e += kBatch * stride) {
    vertex_t v[kBatch];
    double w[kBatch];
    int k = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const size_type f = e + j * stride;
      v[j] = 0;
      w[j] = 0.0;
      if (f < stop) {
        v[j] = g.columns[f];
        w[j] = g.weight(f);
        k = j + 1;
      }
    }
    visit(u, du, v, w, k);
  }
}

// Visit edges [from, to) of vertex u's compressed row (its first edge slot row_begin) in
// order, kBatch at a time, decoded by this thread from the decode point at or before `from`.
template <class Visit>
__device__ __forceinline__ void visit_coded(const Csr& g, vertex_t u, double du,
                                            size_type row_begin, size_type from, size_type to,
                                            Visit& visit) {
  if (from >= to) return;
  distbfs::VarintCursor cursor = distbfs::open_at(g.coded, u, row_begin, u, from);
  for (size_type e = from; e < to; e += kBatch) {
    vertex_t v[kBatch];
    double w[kBatch];
    int k = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      v[j] = 0;
      w[j] = 0.0;
      if (e + j < to) {
        v[j] = cursor.next();
        w[j] = g.weight(e + j);
        k = j + 1;
      }
    }
    visit(u, du, v, w, k);
  }
}

// Pieces a row [start, stop) is queued as, and where piece `part` starts: plain rows in
// pieces of piece_edges edges, compressed ones cut at their decode points.
template <bool kVarint>
__device__ __forceinline__ int piece_parts(size_type start, size_type stop,
                                           size_type piece_edges) {
  if constexpr (kVarint) {
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    return static_cast<int>((stop - 1) / kPoint - start / kPoint + 1);
  } else {
    return static_cast<int>((stop - start + piece_edges - 1) / piece_edges);
  }
}

template <bool kVarint>
__device__ __forceinline__ size_type piece_begin(size_type start, int part,
                                                 size_type piece_edges) {
  if constexpr (kVarint) {
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    return part == 0 ? start : (start / kPoint + part) * kPoint;
  } else {
    return start + part * piece_edges;
  }
}

// Visit the out-edges of the vertices items[0..count) (items == nullptr: 0..count-1) with
// visit(u, du, v[], w[], k): rows up to a warp by their thread, up to piece_edges by the warp,
// longer ones queued as pieces (visit_pieces visits those); compressed rows up to
// kDecodePointEdges by their thread, longer ones queued as pieces. `accept(u, du)` filters the
// vertices.
template <bool kVarint, class Visit, class Accept>
__device__ void visit_rows(const vertex_t* items, size_type count, const dist_t* dist,
                           const Csr& g, Pieces pieces, size_type* piece_count,
                           size_type piece_edges, size_type first_thread, size_type threads,
                           Accept accept, Visit& visit) {
  if constexpr (kVarint) piece_edges = distbfs::kDecodePointEdges;
  const int lane = threadIdx.x & (kWarpThreads - 1);
  for (size_type base = first_thread - lane; base < count; base += threads) {
    const size_type i = base + lane;
    vertex_t u = 0;
    double du = 0.0;
    size_type start = 0, stop = 0;
    if (i < count) {
      u = items == nullptr ? static_cast<vertex_t>(i) : __ldcg(items + i);
      du = as_double(__ldcg(dist + u));
      if (accept(u, du)) {
        start = g.offsets[u];
        stop = g.offsets[u + 1];
      }
      if (stop - start > piece_edges) {
        const int parts = piece_parts<kVarint>(start, stop, piece_edges);
        const size_type first = append_slots(piece_count, parts);
        for (int part = 0; part < parts; ++part) {
          if (first + part < pieces.capacity) {
            pieces.vertex[first + part] = u;
            pieces.start[first + part] = piece_begin<kVarint>(start, part, piece_edges);
          }
        }
        stop = start;
      }
    }
    if constexpr (kVarint) {
      visit_coded(g, u, du, start, start, stop, visit);
    } else {
      unsigned wide;
      while ((wide = __ballot_sync(kFullWarp, stop - start > kWarpThreads)) != 0) {
        const int leader = __ffs(wide) - 1;
        const vertex_t wu = __shfl_sync(kFullWarp, u, leader);
        const double wdu = __shfl_sync(kFullWarp, du, leader);
        const size_type wstart = __shfl_sync(kFullWarp, start, leader);
        const size_type wstop = __shfl_sync(kFullWarp, stop, leader);
        visit_edges(g, wu, wdu, wstart + lane, wstop, kWarpThreads, visit);
        if (lane == leader) stop = start;
      }
      visit_edges(g, u, du, start, stop, 1, visit);
    }
  }
}

// The queued pieces [0, count): a warp each, or a thread each for compressed rows (the
// caller's thread `me` of `threads`).
template <bool kVarint, class Visit>
__device__ void visit_pieces(Pieces pieces, size_type count, const dist_t* dist, const Csr& g,
                             size_type piece_edges, size_type me, size_type threads,
                             Visit& visit) {
  if (count > pieces.capacity) count = pieces.capacity;
  if constexpr (kVarint) {
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    for (size_type p = me; p < count; p += threads) {
      const vertex_t u = __ldcg(pieces.vertex + p);
      const size_type start = __ldcg(pieces.start + p);
      const size_type row_end = g.offsets[u + 1];
      const size_type edge = (start / kPoint + 1) * kPoint;  // the next decode point
      const double du = as_double(__ldcg(dist + u));
      visit_coded(g, u, du, g.offsets[u], start, edge < row_end ? edge : row_end, visit);
    }
  } else {
    const int lane = threadIdx.x & (kWarpThreads - 1);
    for (size_type p = me / kWarpThreads; p < count; p += threads / kWarpThreads) {
      const vertex_t u = __ldcg(pieces.vertex + p);
      const size_type start = __ldcg(pieces.start + p);
      const size_type row_end = g.offsets[u + 1];
      const size_type stop = start + piece_edges < row_end ? start + piece_edges : row_end;
      const double du = as_double(__ldcg(dist + u));
      visit_edges(g, u, du, start + lane, stop, kWarpThreads, visit);
    }
  }
}

// Relaxations of the search: d(u) + w against each target's distance.
struct Relax {
  dist_t* dist;
  int* queued;
  int* far_mark;
  vertex_t* next;
  size_type* next_count;
  vertex_t* far;
  size_type* far_count;
  size_type far_capacity;
  double end;
  int step;  // the step the next queue is for
  int bucket;
  unsigned long long relaxations = 0;
  unsigned long long improved = 0;
  unsigned long long queued_items = 0;

  __device__ __forceinline__ void operator()(vertex_t, double du, const vertex_t* v,
                                             const double* w, int k) {
    relaxations += k;
    dist_t bits[kBatch], seen[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      bits[j] = as_bits(du + w[j]);
      seen[j] = j < k ? __ldcg(dist + v[j]) : 0;
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      if (bits[j] < seen[j]) seen[j] = atomicMin(dist + v[j], bits[j]);
    }
    bool near[kBatch], push[kBatch];
    int pushed_near = 0, pushed_far = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      push[j] = bits[j] < seen[j];
      near[j] = as_double(bits[j]) < end;
      if (push[j]) {
        ++improved;
        push[j] = near[j] ? atomicExch(queued + v[j], step) != step
                          : atomicExch(far_mark + v[j], bucket) != bucket;
        pushed_near += push[j] && near[j];
        pushed_far += push[j] && !near[j];
      }
    }
    queued_items += pushed_near + pushed_far;
    if (pushed_near) {  // at most n per step: the next queue never overflows
      size_type slot = append_slots(next_count, pushed_near);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (push[j] && near[j]) next[slot++] = v[j];
      }
    }
    if (pushed_far) {
      size_type slot = append_slots(far_count, pushed_far);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (push[j] && !near[j]) {
          if (slot < far_capacity) far[slot] = v[j];
          ++slot;
        }
      }
    }
  }
};

struct AcceptAll {
  __device__ __forceinline__ bool operator()(vertex_t, double) const { return true; }
};

// Block-wide sum of three counters, added to row[0..2] by thread 0.
__device__ void add_counts(unsigned long long a, unsigned long long b, unsigned long long c,
                           unsigned long long* row) {
  __shared__ unsigned long long sums[3];
  if (threadIdx.x == 0) sums[0] = sums[1] = sums[2] = 0;
  __syncthreads();
  a = distbfs::warp_sum(a);
  b = distbfs::warp_sum(b);
  c = distbfs::warp_sum(c);
  if ((threadIdx.x & (kWarpThreads - 1)) == 0) {
    atomicAdd(&sums[0], a);
    atomicAdd(&sums[1], b);
    atomicAdd(&sums[2], c);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(row, sums[0]);
    atomicAdd(row + 1, sums[1]);
    atomicAdd(row + 2, sums[2]);
  }
}

// The advance's cut (every thread of the block calls it, with the same result in every
// block): the first bin of `hist` (live vertices by delta-wide bins past the old end) at which
// at least max(min_bucket, live / divisor) of them are counted, at most max_bins - 1; -1 when
// the histogram is empty. The histogram goes through shared memory and one warp scans it.
__device__ int cut_bin(const size_type* hist, size_type* bins, size_type min_bucket,
                       int divisor, int max_bins) {
  __shared__ int cut;
  __syncthreads();  // bins may still be read by this block's histogram flush
  for (int i = threadIdx.x; i < kSplitBins; i += blockDim.x) bins[i] = __ldcg(hist + i);
  __syncthreads();
  if (threadIdx.x < kWarpThreads) {
    constexpr int kPerLane = kSplitBins / kWarpThreads;
    const int lane = threadIdx.x;
    size_type mine = 0;
    for (int i = 0; i < kPerLane; ++i) mine += bins[lane * kPerLane + i];
    size_type below = mine;  // inclusive scan over the lanes
    for (int offset = 1; offset < kWarpThreads; offset *= 2) {
      const size_type up = __shfl_up_sync(kFullWarp, below, offset);
      if (lane >= offset) below += up;
    }
    const size_type live = __shfl_sync(kFullWarp, below, kWarpThreads - 1);
    size_type want = live / divisor;
    if (want < min_bucket) want = min_bucket;
    const unsigned reached = __ballot_sync(kFullWarp, below >= want);
    int found = kSplitBins - 1;
    if (reached) {
      const int first = __ffs(reached) - 1;
      if (lane == first) {
        size_type count = below - mine;
        int bin = lane * kPerLane;
        for (; bin < lane * kPerLane + kPerLane - 1; ++bin) {
          count += bins[bin];
          if (count >= want) break;
        }
        found = bin;
      }
      found = __shfl_sync(kFullWarp, found, first);
    }
    if (lane == 0) cut = live == 0 ? -1 : (found < max_bins - 1 ? found : max_bins - 1);
  }
  __syncthreads();
  return cut;
}

__device__ __forceinline__ void barrier(cg::grid_group& grid) {
  if (gridDim.x == 1) {
    __syncthreads();
  } else {
    grid.sync();
  }
}

// The search from the state in ctl/counts (see the header), until it is done (ctl[kCtlDone]
// = 1) or `log_rows` buckets were logged in this launch (the host relaunches). Vertices no
// farther than `limit` get their final distance; the search stops before a bucket that starts
// beyond it.
template <bool kVarint>
__device__ __forceinline__ void delta_stepping_grid(
    const Csr& g, long long n, dist_t* dist, int* queued, int* far_mark, vertex_t* near0,
    vertex_t* near1, vertex_t* far0, vertex_t* far1, long long far_capacity,
    vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
    long long piece_edges, size_type* counts, long long* ctl, unsigned long long* log,
    int log_rows, double delta, double limit, int max_bins, int split_divisor) {
  cg::grid_group grid = cg::this_grid();
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  int step = static_cast<int>(ctl[kCtlStep]);
  int bucket = static_cast<int>(ctl[kCtlBucket]);
  double end = __longlong_as_double(ctl[kCtlEnd]);
  const int first_bucket = bucket;
  const size_type min_bucket = threads;  // a bucket should hold the grid's width of work
  __shared__ size_type cut_shared[kSplitBins];
  bool done = false;
  unsigned long long relaxations = 0, improved = 0, queued_items = 0;  // this bucket's, so far
  if (me == 0 && log_rows > 0) {  // the current bucket's row (it may go on from a launch before)
    unsigned long long* row = log;
    row[0] = static_cast<unsigned long long>(bucket);
    row[1] = as_bits(end - delta);
    row[2] = as_bits(end);
  }
  unsigned long long steps = 0;                                       // this bucket's
  size_type count = __ldcg(counts + kNearSlot + step % 3);  // the near queue's length
  while (true) {
    size_type* near_count = counts + kNearSlot + step % 3;
    vertex_t* near = (step & 1) ? near1 : near0;
    if (count == 0) {  // the bucket is settled: find the next one
      if (log_rows > 0) {
        unsigned long long* row = log + (bucket - first_bucket) * kLogWords;
        if (me == 0) row[3] += steps;
        add_counts(relaxations, improved, queued_items, row + 4);
      }
      steps = relaxations = improved = queued_items = 0;
      if (bucket - first_bucket + 1 >= log_rows || end > limit) {
        done = end > limit;
        break;
      }
      size_type* far_count = counts + kFarSlot + bucket % 3;
      size_type* hist = counts + kHistSlot + (bucket & 1) * kSplitBins;
      const vertex_t* far = (bucket & 1) ? far1 : far0;
      const size_type held = __ldcg(far_count);
      const bool scan = held > far_capacity;  // overflowed: every vertex instead
      const size_type items = scan ? static_cast<size_type>(n) : held;
      if (me == 0) counts[kFarSlot + (bucket + 2) % 3] = 0;
      for (size_type i = me; i < kSplitBins; i += threads) {
        counts[kHistSlot + ((bucket + 1) & 1) * kSplitBins + i] = 0;
      }
      dist_t* least = reinterpret_cast<dist_t*>(counts + kMinSlot + (bucket & 1));
      if (me == 0) counts[kMinSlot + ((bucket + 1) & 1)] = static_cast<size_type>(kNoPath);
      for (size_type i = threadIdx.x; i < kSplitBins; i += blockDim.x) cut_shared[i] = 0;
      __syncthreads();
      dist_t my_least = kNoPath;
      for (size_type i = me; i < items; i += threads) {
        const vertex_t v = scan ? static_cast<vertex_t>(i) : __ldcg(far + i);
        const dist_t bits = __ldcg(dist + v);
        const double d = as_double(bits);
        if (d < end || bits == kNoPath) continue;
        my_least = bits < my_least ? bits : my_least;
        const double bin = floor((d - end) / delta);
        const int b = bin < kSplitBins - 1 ? static_cast<int>(bin) : kSplitBins - 1;
        atomicAdd(reinterpret_cast<unsigned long long*>(&cut_shared[b]), 1ull);
      }
      __syncthreads();
      for (int i = threadIdx.x; i < kSplitBins; i += blockDim.x) {
        if (cut_shared[i]) {
          atomicAdd(reinterpret_cast<unsigned long long*>(hist + i),
                    static_cast<unsigned long long>(cut_shared[i]));
        }
      }
      if (my_least != kNoPath) atomicMin(least, my_least);
      barrier(grid);
      // Every block reads the same histogram and cuts at the same bin.
      const int cut = cut_bin(hist, cut_shared, min_bucket, split_divisor, max_bins);
      if (cut < 0) {
        done = true;
        break;
      }
      const double old_end = end;
      end = old_end + (cut + 1) * delta;
      const double lowest = as_double(__ldcg(least));
      if (lowest >= end) end = (floor(lowest / delta) + 1) * delta;  // a gap of empty bins
      const int next_bucket = bucket + 1;
      vertex_t* next_far = (next_bucket & 1) ? far1 : far0;
      size_type* next_far_count = counts + kFarSlot + next_bucket % 3;
      for (size_type i = me; i < items; i += threads) {
        const vertex_t v = scan ? static_cast<vertex_t>(i) : __ldcg(far + i);
        const dist_t bits = __ldcg(dist + v);
        const double d = as_double(bits);
        if (d < old_end || bits == kNoPath) continue;
        if (d < end) {
          if (atomicExch(queued + v, step) != step) near[append_slots(near_count, 1)] = v;
        } else if (atomicExch(far_mark + v, next_bucket) != next_bucket) {
          const size_type slot = append_slots(next_far_count, 1);
          if (slot < far_capacity) next_far[slot] = v;
        }
      }
      bucket = next_bucket;
      if (log_rows > 0 && me == 0) {
        unsigned long long* row = log + (bucket - first_bucket) * kLogWords;
        row[0] = static_cast<unsigned long long>(bucket);
        row[1] = __ldcg(least);
        row[2] = as_bits(end);
      }
      barrier(grid);
      count = __ldcg(near_count);  // the bucket's first step: the near queue just filled
      continue;
    }
    // One step: the near queue relaxes its rows; then the pieces of its long rows.
    size_type* next_count = counts + kNearSlot + (step + 1) % 3;
    Relax relax{dist,          queued, far_mark, (step & 1) ? near0 : near1,
                next_count,
                (bucket & 1) ? far1 : far0,
                counts + kFarSlot + bucket % 3,
                far_capacity, end, step + 1, bucket};
    size_type* piece_count = counts + kPieceSlot + step % 3;
    if (me == 0) {
      counts[kNearSlot + (step + 2) % 3] = 0;
      counts[kPieceSlot + (step + 1) % 3] = 0;
    }
    visit_rows<kVarint>(near, count, dist, g, pieces, piece_count, piece_edges, me, threads,
                        AcceptAll{}, relax);
    barrier(grid);
    const size_type piece_total = __ldcg(piece_count);
    count = __ldcg(next_count);
    if (piece_total) {
      visit_pieces<kVarint>(pieces, piece_total, dist, g, piece_edges, me, threads, relax);
      barrier(grid);  // the next step's reads of dist and the queue
      count = __ldcg(next_count);
    }
    ++steps;
    relaxations += relax.relaxations;
    improved += relax.improved;
    queued_items += relax.queued_items;
    ++step;
  }
  if (me == 0) {
    ctl[kCtlStep] = step;
    ctl[kCtlBucket] = bucket;
    ctl[kCtlEnd] = __double_as_longlong(end);
    ctl[kCtlDone] = done ? 1 : 0;
  }
}

}  // namespace

// The plain and the compressed entry point of a kernel whose body takes the graph as a Csr:
// name(offsets, columns, weights, weight_kind, params...) and name_varint(offsets, bytes,
// byte_offsets, point_bytes, point_values, weights, weight_kind, params...).
#define DISTBFS_UNPAREN(...) __VA_ARGS__
#define DISTBFS_RELAX_ENTRIES(name, body, params, args)                                     \
  extern "C" __global__ void __launch_bounds__(kRelaxThreads)                              \
      name(const size_type* offsets, const vertex_t* columns, const void* weights,          \
           int weight_kind, DISTBFS_UNPAREN params) {                                       \
    const Csr g{offsets, columns, {nullptr, nullptr, nullptr, nullptr}, weights,            \
                weight_kind};                                                               \
    body<false>(g, DISTBFS_UNPAREN args);                                                   \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(kRelaxThreads) name##_varint(               \
      const size_type* offsets, const unsigned char* bytes, const size_type* byte_offsets,  \
      const size_type* point_bytes, const vertex_t* point_values, const void* weights,      \
      int weight_kind, DISTBFS_UNPAREN params) {                                            \
    const Csr g{offsets, nullptr, {bytes, byte_offsets, point_bytes, point_values}, weights, \
                weight_kind};                                                               \
    body<true>(g, DISTBFS_UNPAREN args);                                                    \
  }

DISTBFS_RELAX_ENTRIES(
    delta_stepping, delta_stepping_grid,
    (long long n, dist_t* dist, int* queued, int* far_mark, vertex_t* near0, vertex_t* near1,
     vertex_t* far0, vertex_t* far1, long long far_capacity, vertex_t* piece_vertex,
     size_type* piece_start, long long piece_capacity, long long piece_edges,
     size_type* counts, long long* ctl, unsigned long long* log, int log_rows, double delta,
     double limit, int max_bins, int split_divisor),
    (n, dist, queued, far_mark, near0, near1, far0, far1, far_capacity, piece_vertex,
     piece_start, piece_capacity, piece_edges, counts, ctl, log, log_rows, delta, limit,
     max_bins, split_divisor))

namespace {

// Tree pass 0: v's parent is its smallest in-neighbour u with d(u) + w = d(v) > d(u).
struct TightParent {
  const dist_t* dist;
  pred_t* parent;
  __device__ __forceinline__ void operator()(vertex_t u, double du, const vertex_t* v,
                                             const double* w, int k) {
    dist_t seen[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) seen[j] = j < k ? __ldcg(dist + v[j]) : 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const double cand = du + w[j];
      if (j < k && cand > du && as_bits(cand) == seen[j]) {
        atomicMin(reinterpret_cast<long long*>(parent + v[j]), static_cast<long long>(u));
      }
    }
  }
};

// Tree pass k >= 1: plateau edges (d(u) + w = d(u) = d(v)) from the vertices resolved in pass
// k - 1 to unresolved ones.
struct PlateauParent {
  const dist_t* dist;
  pred_t* parent;
  const int* pass;
  __device__ __forceinline__ void operator()(vertex_t u, double du, const vertex_t* v,
                                             const double* w, int k) {
    dist_t seen[kBatch];
    int resolved[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      seen[j] = j < k ? __ldcg(dist + v[j]) : 0;
      resolved[j] = j < k ? __ldcg(pass + v[j]) : 0;
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const double cand = du + w[j];
      if (j < k && cand == du && as_bits(cand) == seen[j] && resolved[j] < 0) {
        atomicMin(reinterpret_cast<long long*>(parent + v[j]), static_cast<long long>(u));
      }
    }
  }
};

struct Reached {
  __device__ __forceinline__ bool operator()(vertex_t, double du) const {
    return du < __longlong_as_double(static_cast<long long>(kNoPath));
  }
};

struct ResolvedIn {
  const int* pass;
  int round;
  __device__ __forceinline__ bool operator()(vertex_t u, double) const {
    return __ldcg(pass + u) == round;
  }
};

template <bool kVarint>
__device__ __forceinline__ void tight_parents_rows(
    const Csr& g, long long n, const dist_t* dist, pred_t* parent, vertex_t* piece_vertex,
    size_type* piece_start, long long piece_capacity, long long piece_edges,
    size_type* piece_count) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  TightParent visit{dist, parent};
  visit_rows<kVarint>(static_cast<const vertex_t*>(nullptr), n, dist, g, pieces, piece_count,
                      piece_edges, me, threads, Reached{}, visit);
}

template <bool kVarint>
__device__ __forceinline__ void plateau_parents_rows(
    const Csr& g, long long n, const dist_t* dist, pred_t* parent, const int* pass, int round,
    vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
    long long piece_edges, size_type* piece_count) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  PlateauParent visit{dist, parent, pass};
  visit_rows<kVarint>(static_cast<const vertex_t*>(nullptr), n, dist, g, pieces, piece_count,
                      piece_edges, me, threads, ResolvedIn{pass, round - 1}, visit);
}

// The pieces queued by tight_parents (round < 0) or plateau_parents (round >= 1).
template <bool kVarint>
__device__ __forceinline__ void relax_pieces_queued(
    const Csr& g, const dist_t* dist, pred_t* parent, const int* pass, int round,
    vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
    long long piece_edges, const size_type* piece_count) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (round < 0) {
    TightParent visit{dist, parent};
    visit_pieces<kVarint>(pieces, *piece_count, dist, g, piece_edges, me, threads, visit);
  } else {
    PlateauParent visit{dist, parent, pass};
    visit_pieces<kVarint>(pieces, *piece_count, dist, g, piece_edges, me, threads, visit);
  }
}

}  // namespace

DISTBFS_RELAX_ENTRIES(tight_parents, tight_parents_rows,
                      (long long n, const dist_t* dist, pred_t* parent, vertex_t* piece_vertex,
                       size_type* piece_start, long long piece_capacity, long long piece_edges,
                       size_type* piece_count),
                      (n, dist, parent, piece_vertex, piece_start, piece_capacity, piece_edges,
                       piece_count))

DISTBFS_RELAX_ENTRIES(plateau_parents, plateau_parents_rows,
                      (long long n, const dist_t* dist, pred_t* parent, const int* pass,
                       int round, vertex_t* piece_vertex, size_type* piece_start,
                       long long piece_capacity, long long piece_edges, size_type* piece_count),
                      (n, dist, parent, pass, round, piece_vertex, piece_start, piece_capacity,
                       piece_edges, piece_count))

DISTBFS_RELAX_ENTRIES(relax_pieces, relax_pieces_queued,
                      (const dist_t* dist, pred_t* parent, const int* pass, int round,
                       vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
                       long long piece_edges, const size_type* piece_count),
                      (dist, parent, pass, round, piece_vertex, piece_start, piece_capacity,
                       piece_edges, piece_count))

// End of a plateau pass: vertices that got a parent in it are resolved in pass `round`;
// counts[0] += how many.
extern "C" __global__ void __launch_bounds__(kRelaxThreads)
    plateau_commit(long long n, const dist_t* dist, const pred_t* parent, int* pass, int round,
                   unsigned long long* resolved) {
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  unsigned long long mine = 0;
  for (size_type v = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += threads) {
    if (pass[v] < 0 && parent[v] != kNoParent && dist[v] != kNoPath) {
      pass[v] = round;
      ++mine;
    }
  }
  mine = distbfs::warp_sum(mine);
  if ((threadIdx.x & (kWarpThreads - 1)) == 0 && mine) atomicAdd(resolved, mine);
}
