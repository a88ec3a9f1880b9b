/*
 * relax.cu: delta-stepping shortest paths (Meyer & Sanders, J. Algorithms 2003) on one GPU that
 * holds the whole graph, in ONE persistent cooperative grid: buckets, their relaxation steps and
 * the search for the next bucket all run on the device, with grid barriers between them and no
 * host round trip (a road network has thousands of buckets; a host read costs ~19 us).
 *
 * A vertex's word (dist_t) orders as its distance, so a relaxation is one 64-bit atomicMin;
 * "no path yet" orders above every distance. Two forms (ExactWord, TiedWord below): the bits
 * of a float64 distance, for any weights; or, for positive integer weights, the integer
 * distance tied to the vertex that gave it, which records the shortest-path tree during the
 * search (the *_tied kernels). The schedule is near-far (Davidson et al., IPDPS 2014) over
 * delta-stepping's buckets:
 *   - step: every vertex of the near queue relaxes its out-edges; a target that improves below
 *     the bucket's end joins the next near queue (once per step: `queued` holds the step it
 *     was queued for), one that improves beyond it the far pile (once per bucket: `far_mark`
 *     holds the bucket). Steps repeat until the near queue is empty: the bucket is settled
 *     (every vertex below its end has its final distance).
 *   - settle (dense graphs, `settle` set): the steps relax only the edges that land inside the
 *     bucket, and the vertices that joined it (its members: a vertex settles in the bucket it
 *     first joins, so `members` holds each vertex at most once over the search) relax the
 *     others once it is settled, from their final distances (Meyer & Sanders' heavy edges,
 *     split by where they land rather than by weight, since a bucket spans several deltas). A
 *     hub whose distance falls several times within its bucket thus relaxes its long row once.
 *     Where each row ascends by weight (weight kind 3, Csr::rows_by_weight: a copy the host
 *     makes for these searches), a step reads only the edges that land inside and the settle
 *     pass only the others, each found by a binary search on the row's weights (narrow_row).
 *   - advance: the far pile's live entries (distance at or beyond the old end) are counted in
 *     a histogram of delta-wide bins past the old end; the new end is the first bin boundary
 *     with at least max(threads of the grid, live / split_divisor) vertices below it (a
 *     bucket holds at least the grid's width of work, and a long pile shrinks by a fixed
 *     fraction per bucket), at most max_bins bins past the old end (buckets stay narrow enough
 *     to relax few edges twice), and past the least live distance when that lies beyond;
 *     entries below the new end become the near queue (and members), the rest the next far
 *     pile, dead entries drop out. Far entries carry their distance (see advance), so an
 *     entry waiting through many buckets is not read from `dist` in each.
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
 * by bucket (3), then two histograms and two least live distances by bucket parity, the
 * members' count and the settle pass's piece count (reset in each advance). ctl[] carries the
 * search across launches, which end only at a bucket's end: step, bucket, the current
 * bucket's end (bits), done flag, overflow flag (TiedWord), the far entries that carry their
 * distance.
 *
 * Kernels:
 *   delta_stepping  the search, until it is done or `log_rows` buckets were logged
 *   delta_stepping_tied  the same on TiedWord words (32-bit ids only); `tied_unpack` then
 *                   writes the distances and the predecessors
 *   delta_stepping_steps, delta_stepping_steps_tied  the same search without settle passes
 *                   (every step relaxes every edge: meshes, road networks too large for one
 *                   block), compiled apart so that no step carries the passes' tests (3% on
 *                   the 4096^2 grid)
 *   delta_stepping_block, delta_stepping_block_tied  the same search in ONE block whose near
 *                   queues live in shared memory (delta_stepping_one_block: small graphs
 *                   without settle passes, i.e. road networks and meshes)
 *   tight_parents   shortest-path tree, pass 0: the smallest strictly closer tight in-neighbour
 *   plateau_parents pass k >= 1: in zero-distance plateaus, the smallest tight in-neighbour
 *                   resolved in pass k - 1 (`plateau_commit` ends the pass)
 *   relax_pieces    the pieces the two tree passes queued
 *   bucket_census   reached vertices by bucket (the statistics)
 *   relax_requests, relax_requests_tied  the striped steps of several ranks (or one rank kept
 *                   off the persistent kernel): the requests (target, word) along the
 *                   out-edges of some owned vertices that land inside the bucket (a step) or
 *                   beyond it (the heavy step), culled against `sent`, this rank's
 *                   least word requested so far for every vertex (one atomicMin, which makes
 *                   a target's requests strictly fall); the host bins, exchanges and contracts
 *                   them (filter_partition.cu, contract.cu). Long rows are queued as pieces,
 *                   visited by a second launch (`pieces_pass`); rows ascending by weight are
 *                   read only as far as, or from, the first edge that lands beyond the bucket
 *   pull_requests, pull_requests_tied  a striped bucket's heavy step pulled (an undirected
 *                   graph): each unsettled owned vertex's least word over the neighbours the
 *                   bucket settled, read from every rank's words (all-gathered), as a request
 *   bucket_scan, bucket_scan_tied  a striped bucket's members (owned, unsettled, below its
 *                   end; count[1] += their out-edges); with `settle` they are marked settled
 *                   and the least distance of the other reached vertices is kept
 * each (but tied_unpack and plateau_commit) also as <name>_varint, which reads compressed
 * columns (the four VarintColumns arrays in place of `columns`).
 */
#include "common.cuh"

typedef unsigned long long dist_t;

namespace {

using distbfs::kEmptySlot;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;

constexpr int kRelaxThreads = distbfs::kPathThreads;  // threads per block of every kernel here
// Blocks an SM is promised (__launch_bounds__): without it ptxas trades the delta-stepping
// grid's registers for occupancy it does not need, and spills.
constexpr int kRelaxBlocksPerSM = 2;
constexpr int kSplitBins = 256;  // histogram bins of the advance (PATH_HISTOGRAM_BINS)
constexpr dist_t kNoPath = 0x7ff0000000000000ull;  // +inf
constexpr pred_t kNoParent = 0x7fffffffffffffffll;  // tree passes: not resolved yet

// counts[] layout
constexpr int kNearSlot = 0;   // + step % 3
constexpr int kPieceSlot = 3;  // + step % 3
constexpr int kFarSlot = 6;    // + bucket % 3
constexpr int kHistSlot = 9;   // + (bucket & 1) * kSplitBins
constexpr int kMinSlot = kHistSlot + 2 * kSplitBins;  // + (bucket & 1): least live distance
constexpr int kMemberSlot = kMinSlot + 2;        // members so far
constexpr int kSettlePieceSlot = kMemberSlot + 1;  // pieces of a settle pass
constexpr int kQueueLeastSlot = kSettlePieceSlot + 1;  // + step % 3: see GridNear::least
// 9 + 2 * 256 + 7 slots in all (PATH_COUNT_SLOTS in distbfs/backends/cuda/relax.py)

// ctl[] layout (CTL_* in distbfs/backends/cuda/relax.py)
enum {
  kCtlStep = 0,
  kCtlBucket = 1,
  kCtlEnd = 2,
  kCtlDone = 3,
  kCtlOverflow = 4,
  kCtlFresh = 5,
};

// log rows: bucket, lower bound (bits), end (bits), steps, relaxations, improved, queued
constexpr int kLogWords = 7;

__device__ __forceinline__ double as_double(dist_t bits) { return __longlong_as_double(bits); }
__device__ __forceinline__ dist_t as_bits(double d) {
  return static_cast<dist_t>(__double_as_longlong(d));
}

// A vertex's search word, in one of two forms (the kernels take the form as a template
// argument):
//   ExactWord  the bits of its float64 distance (any weights); the tree is built afterwards.
//   TiedWord   its integer distance in the high 32 bits and the vertex that gave it in the low
//              32 (positive integer weights, 32-bit ids). One 64-bit atomicMin keeps the least
//              distance and, among the relaxations that reach it, the smallest tail: with
//              positive weights exactly the tree's rule (the smallest strictly closer tight
//              in-neighbour), so the search records the tree as it goes. A distance past
//              kTiedLast raises `overflow` (the host searches again with ExactWord).
struct ExactWord {
  __device__ static __forceinline__ double value(dist_t word) { return as_double(word); }
  __device__ static __forceinline__ dist_t key(dist_t word) { return word; }
  __device__ static __forceinline__ dist_t make(double d, vertex_t, int*) { return as_bits(d); }
};

struct TiedWord {
  static constexpr dist_t kNone = ~0ull;
  static constexpr double kTiedLast = 4294967294.0;  // 2^32 - 2: 2^32 - 1 means no path
  __device__ static __forceinline__ double value(dist_t word) {
    return word == kNone ? as_double(kNoPath) : static_cast<double>(word >> 32);
  }
  __device__ static __forceinline__ dist_t key(dist_t word) { return word >> 32; }
  __device__ static __forceinline__ dist_t make(double d, vertex_t tail, int* overflow) {
    if (d > kTiedLast) {
      *overflow = 1;
      d = kTiedLast;
    }
    return (static_cast<dist_t>(d) << 32) | static_cast<unsigned>(tail);
  }
};

struct Csr {
  const size_type* offsets;
  const vertex_t* columns;       // plain columns (the plain kernels)
  distbfs::VarintColumns coded;  // compressed columns (the *_varint kernels)
  const void* weights;           // float or double, or none (every edge weighs 1)
  int weight_kind;               // 0 none, 1 float, 2 double, 3 float with rows ascending
  long long rank;                // the rows are rank `rank`'s of `size` (local row u is
  long long size;                //   global vertex u * size + rank)

  // The global id of local row u: a compressed row's first gap counts from it.
  __device__ __forceinline__ long long vertex(vertex_t u) const { return u * size + rank; }

  __device__ __forceinline__ double weight(size_type e) const {
    if (weight_kind == 1 || weight_kind == kRowsByWeight) {
      return static_cast<double>(static_cast<const float*>(weights)[e]);
    }
    if (weight_kind == 2) return static_cast<const double*>(weights)[e];
    return 1.0;
  }
  // Whether each row's edges ascend by weight (the plain kernels' searches with settle passes:
  // a step reads only the edges that land inside the bucket, a settle pass the others).
  __device__ __forceinline__ bool rows_by_weight() const { return weight_kind == kRowsByWeight; }
  static constexpr int kRowsByWeight = 3;
};

// The first of `count` slots from a queue's counter.
__device__ __forceinline__ size_type reserve_at(size_type* counter, size_type count) {
  return distbfs::reserve_slots(counter, count);
}
__device__ __forceinline__ size_type reserve_at(unsigned* counter, size_type count) {
  return atomicAdd(counter, static_cast<unsigned>(count));
}

// Reserve `count` (>= 0) consecutive slots of a queue from divergent code: one atomic per
// group of active lanes, each lane's slots after those of the lanes below it. Returns the
// first. The prefix over the group is summed a bit of the counts at a time (a ballot and a
// population count each; counts here are small), which costs a few instructions where a scan
// through a coalesced group's shuffles finds every source lane in software. Counter: 64 bits
// in global memory, or 32 in shared memory (a 64-bit shared atomicAdd is a compare-and-swap
// loop).
template <class Counter>
__device__ __forceinline__ size_type append_slots(Counter* counter, int count) {
  const unsigned active = __activemask();
  const int lane = threadIdx.x & (kWarpThreads - 1);
  const unsigned below = active & ((1u << lane) - 1);
  unsigned long long prefix = 0, total = 0;
  for (int bit = 0;; ++bit) {
    const unsigned set = __ballot_sync(active, (count >> bit) & 1);
    prefix += static_cast<unsigned long long>(__popc(set & below)) << bit;
    total += static_cast<unsigned long long>(__popc(set)) << bit;
    if (!__any_sync(active, count >> (bit + 1))) break;
  }
  const int leader = __ffs(active) - 1;
  size_type base = 0;
  if (lane == leader) base = reserve_at(counter, static_cast<size_type>(total));
  return __shfl_sync(active, base, leader) + static_cast<size_type>(prefix);
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

// The weights of edges e + j * stride of a batch where `in[j]` (elsewhere 0, or 1 on an
// unweighted graph: visitors read the first k), every load issued before any weight is
// converted: a conversion next to its load makes the next load wait for it, one memory round
// trip per edge instead of one per batch.
__device__ __forceinline__ void load_weights(const Csr& g, size_type e, size_type stride,
                                             const bool (&in)[kBatch], double (&w)[kBatch]) {
  if (g.weight_kind == 0) {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) w[j] = 1.0;
  } else if (g.weight_kind == 2) {
    const double* weights = static_cast<const double*>(g.weights);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) w[j] = in[j] ? weights[e + j * stride] : 0.0;
  } else {
    const float* weights = static_cast<const float*>(g.weights);
    float raw[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) raw[j] = in[j] ? weights[e + j * stride] : 0.0f;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) w[j] = static_cast<double>(raw[j]);
  }
}

// Whether a visitor is done with a row after a batch of weights w (where `in`), found by ADL:
// a pulled heavy step on rows ascending by weight stops early (PullBest); others read every edge.
template <class Visit>
__device__ __forceinline__ bool row_finished(const Visit&, const double (&)[kBatch],
                                             const bool (&)[kBatch]) {
  return false;
}

// Visit edges e, e + stride, ... below stop of vertex u (distance du), kBatch at a time, the
// batch's columns and weights loaded at once. A visitor whose `weights_first()` holds reads the
// weights, then only the columns of the edges it `wants(du, w)` (a step, which takes the few
// edges that land inside its bucket).
template <class Visit>
__device__ __forceinline__ void visit_edges(const Csr& g, vertex_t u, double du, size_type e,
                                            size_type stop, size_type stride, Visit& visit) {
  const bool weights_first = visit.weights_first();
  for (; e < stop; e += kBatch * stride) {
    vertex_t v[kBatch];
    double w[kBatch];
    bool in[kBatch];
    int k = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      in[j] = e + j * stride < stop;
      k = in[j] ? j + 1 : k;
      v[j] = in[j] && !weights_first ? g.columns[e + j * stride] : 0;
    }
    load_weights(g, e, stride, in, w);
    if (weights_first) {
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (in[j] && visit.wants(du, w[j])) v[j] = g.columns[e + j * stride];
      }
    }
    visit(u, du, v, w, k);
    if (row_finished(visit, w, in)) break;
  }
}

// Visit edges [from, to) of vertex u's compressed row (its first edge slot row_begin) in
// order, kBatch at a time, decoded by this thread from the decode point at or before `from`.
template <class Visit>
__device__ __forceinline__ void visit_coded(const Csr& g, vertex_t u, double du,
                                            size_type row_begin, size_type from, size_type to,
                                            Visit& visit) {
  if (from >= to) return;
  distbfs::VarintCursor cursor = distbfs::open_at(g.coded, u, row_begin, g.vertex(u), from);
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

// Visit the edges [start, stop) of vertex u's row (every lane of the warp calls it together;
// an empty range takes part without edges): a compressed row by its thread, decoded in order; a
// plain row longer than a warp by the whole warp (one such row at a time), a shorter one by its
// thread.
template <bool kVarint, class Visit>
__device__ __forceinline__ void visit_row(const Csr& g, vertex_t u, double du, size_type start,
                                          size_type stop, Visit& visit) {
  if constexpr (kVarint) {
    visit_coded(g, u, du, start, start, stop, visit);
  } else {
    const int lane = threadIdx.x & (kWarpThreads - 1);
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

// Which out-edges a relaxation pass takes: every one (a step of a search without settle
// passes), those whose target lands inside the bucket (a step of one with them), or the others
// (the settle pass at the bucket's end: once, from the final distances, Meyer & Sanders'
// heavy edges, split by where they land rather than by weight, since a bucket spans several
// deltas).
enum RelaxEdges { kEveryEdge, kInsideEdges, kLeavingEdges };

// Visitors other than Relax read whole rows.
template <class Visit>
__device__ __forceinline__ void narrow_for(const Visit&, const Csr&, double, size_type&,
                                           size_type&) {}

// The part of u's row [start, stop) a pass that takes `edges` reads where the row ascends by
// weight: the edges landing below `end` are its first ones (a step takes those, the settle
// pass the rest), found by a binary search on the weights. Elsewhere the whole row.
__device__ __forceinline__ void narrow_row(const Csr& g, RelaxEdges edges, double end, double du,
                                           size_type& start, size_type& stop) {
  if (!g.rows_by_weight() || edges == kEveryEdge) return;
  size_type lo = start, hi = stop;  // the first edge with du + w >= end
  while (lo < hi) {
    const size_type mid = lo + (hi - lo) / 2;
    if (du + g.weight(mid) < end) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (edges == kInsideEdges) {
    stop = lo;
  } else {
    start = lo;
  }
}

// A thread's first item of a step's near queue (its slot `me`), read beside the queue's length
// after the barrier that ends the step before: one round trip before the step's rows, not two.
struct Head {
  vertex_t item = 0;
  bool valid = false;
};

// Visit the out-edges of the vertices items[0..count) (items == nullptr: 0..count-1; `head`,
// where valid, holds items[first_thread], read ahead; a hole, kEmptySlot, is skipped) with
// visit(u, du, v[], w[], k): rows up to a warp by their thread, up to piece_edges by the warp,
// longer ones queued as pieces (visit_pieces visits those); compressed rows up to
// kDecodePointEdges by their thread, longer ones queued as pieces. `accept(u, du)` filters the
// vertices.
template <bool kVarint, class W, class Visit, class Accept>
__device__ __forceinline__ void visit_rows(const vertex_t* items, size_type count,
                                           const dist_t* dist, const Csr& g, Pieces pieces,
                                           size_type* piece_count, size_type piece_edges,
                                           size_type first_thread, size_type threads,
                                           Accept accept, Visit& visit, Head head = {}) {
  if constexpr (kVarint) piece_edges = distbfs::kDecodePointEdges;
  const int lane = threadIdx.x & (kWarpThreads - 1);
  for (size_type base = first_thread - lane; base < count; base += threads) {
    const size_type i = base + lane;
    vertex_t u = 0;
    double du = 0.0;
    size_type start = 0, stop = 0;
    if (i < count) {
      u = items == nullptr ? static_cast<vertex_t>(i)
                           : (head.valid && i == first_thread ? head.item : __ldcg(items + i));
    }
    if (i < count && u != kEmptySlot) {  // a hole: a step's slot whose claim failed (GridNear)
      du = W::value(__ldcg(dist + u));
      if (accept(u, du)) {
        start = g.offsets[u];
        stop = g.offsets[u + 1];
        if constexpr (!kVarint) narrow_for(visit, g, du, start, stop);
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
    visit_row<kVarint>(g, u, du, start, stop, visit);
  }
}

// The queued pieces [0, count): a warp each, or a thread each for compressed rows (the
// caller's thread `me` of `threads`).
template <bool kVarint, class W, class Visit>
__device__ __forceinline__ void visit_pieces(Pieces pieces, size_type count,
                                             const dist_t* dist, const Csr& g,
                                             size_type piece_edges, size_type me,
                                             size_type threads, Visit& visit) {
  if (count > pieces.capacity) count = pieces.capacity;
  if constexpr (kVarint) {
    constexpr size_type kPoint = distbfs::kDecodePointEdges;
    for (size_type p = me; p < count; p += threads) {
      const vertex_t u = __ldcg(pieces.vertex + p);
      const size_type start = __ldcg(pieces.start + p);
      const size_type row_end = g.offsets[u + 1];
      const size_type edge = (start / kPoint + 1) * kPoint;  // the next decode point
      const double du = W::value(__ldcg(dist + u));
      visit_coded(g, u, du, g.offsets[u], start, edge < row_end ? edge : row_end, visit);
    }
  } else {
    const int lane = threadIdx.x & (kWarpThreads - 1);
    for (size_type p = me / kWarpThreads; p < count; p += threads / kWarpThreads) {
      const vertex_t u = __ldcg(pieces.vertex + p);
      const size_type start = __ldcg(pieces.start + p);
      const size_type row_end = g.offsets[u + 1];
      const size_type stop = start + piece_edges < row_end ? start + piece_edges : row_end;
      const double du = W::value(__ldcg(dist + u));
      visit_edges(g, u, du, start + lane, stop, kWarpThreads, visit);
    }
  }
}


// The near queue of a step, as Relax and advance fill it. claim(v, fresh): whether v joins
// now (false: queued for this step already), `fresh` whether it is new to the bucket; in two
// halves, so that a batch's claims go out together: mark(v), the atomic (its old value), and
// claimed(v, old, fresh). put(slot, v) stores v in a slot reserved from `count`.
//
// GridNear: the grid's queue, in global memory; v joins once per step through its stamp
// `queued[v]` (the last step it was queued for), which below the bucket's first step also says
// that v is new to the bucket. Relax reserves the slots of a batch's improved targets while
// their claims are in flight (kSlotsWithClaims: one memory round trip a step fewer than
// reserving after the claims return) and writes a hole (kEmptySlot) where a claim fails. So a
// step may reserve more than n slots (a vertex can improve several times in a step); past
// `capacity` nothing is stored, and the next step takes the vertices stamped with its number
// from a scan of every vertex instead (delta_stepping_grid).
//
// `least` (the search without settle passes, else nullptr): the least distance queued, as the
// bits of a float rounded down (a lower bound), one atomicMin per warp; its step window's base.
struct GridNear {
  static constexpr bool kSlotsWithClaims = true;
  int* queued;
  vertex_t* items;
  size_type* count;
  size_type capacity;
  int step;
  int first_step;
  unsigned long long* least;

  // The least of the active lanes' distances `d` where `have`, into *least.
  __device__ __forceinline__ void note_least(bool have, double d) const {
    const unsigned active = __activemask();
    const unsigned key = __reduce_min_sync(
        active, have ? __float_as_uint(__double2float_rd(d)) : kNoLeast);
    if ((threadIdx.x & (kWarpThreads - 1)) == __ffs(active) - 1 && key != kNoLeast) {
      atomicMin(least, static_cast<unsigned long long>(key));
    }
  }
  static constexpr unsigned kNoLeast = 0xffffffffu;

  __device__ __forceinline__ unsigned mark(vertex_t v) const {
    return static_cast<unsigned>(atomicExch(queued + v, step));
  }
  __device__ __forceinline__ bool claimed(vertex_t, unsigned old, bool& fresh) const {
    const int stamp = static_cast<int>(old);
    fresh = stamp < first_step;
    return stamp != step;
  }
  __device__ __forceinline__ bool claim(vertex_t v, bool& fresh) const {
    return claimed(v, mark(v), fresh);
  }
  __device__ __forceinline__ void put(size_type slot, vertex_t v) const {
    if (slot < capacity) items[slot] = v;
  }
};

// BlockNear: a one-block search's queue (delta_stepping_block): its first `capacity` slots in
// shared memory, the rest in the global queue of the same step parity; v joins once per step
// through its bit in a shared bitmask of the vertices queued for that step (one by step
// parity, each bit cleared when its step takes the vertex: `release`).
struct BlockNear {
  static constexpr bool kSlotsWithClaims = false;  // a shared atomic: no round trip to save
  unsigned* marks;
  vertex_t* shared_items;
  vertex_t* global_items;
  size_type capacity;
  unsigned* count;  // in shared memory

  __device__ __forceinline__ unsigned mark(vertex_t v) const {
    return atomicOr(marks + (v >> 5), 1u << (v & 31));
  }
  __device__ __forceinline__ bool claimed(vertex_t v, unsigned old, bool& fresh) const {
    fresh = false;  // one-block searches have no settle passes, so no members
    return (old & (1u << (v & 31))) == 0;
  }
  __device__ __forceinline__ bool claim(vertex_t v, bool& fresh) const {
    return claimed(v, mark(v), fresh);
  }
  __device__ __forceinline__ void put(size_type slot, vertex_t v) const {
    if (slot < capacity) {
      shared_items[slot] = v;
    } else {
      global_items[slot] = v;
    }
  }
  __device__ __forceinline__ vertex_t get(size_type slot) const {
    return slot < capacity ? shared_items[slot] : __ldcg(global_items + slot);
  }
  __device__ __forceinline__ void release(vertex_t v) const {
    atomicAnd(marks + (v >> 5), ~(1u << (v & 31)));
  }
};

// Relaxations of the search: d(u) + w against each target's word; an improved target below
// the bucket's end joins `next` (the next step's near queue), one beyond it the far pile.
// kSettle: the search may have settle passes (`edges` and `members` then say at run time which
// edges a step takes and whether new vertices join the members); false: every step takes every
// edge, fixed at compile time so that a step's chain carries no test of the passes (the grid
// kernel of meshes and road networks; the one-block kernel keeps the run-time test, which
// compiled away took it from 96 to 102 registers).
template <class W, class Near, bool kSettle = true>
struct Relax {
  dist_t* dist;
  int* far_mark;
  Near next;
  vertex_t* members;  // the bucket's vertices, each once (nullptr: no settle passes)
  size_type* member_count;
  vertex_t* far;
  size_type* far_count;
  size_type far_capacity;
  double end;
  int bucket;
  RelaxEdges edges;
  int* overflow;
  unsigned long long relaxations = 0;
  unsigned long long improved = 0;
  unsigned long long queued_items = 0;

  __device__ __forceinline__ bool weights_first() const {
    return kSettle && edges == kInsideEdges;
  }
  __device__ __forceinline__ bool wants(double du, double w) const {
    if constexpr (!kSettle) return true;
    return edges == kEveryEdge || (du + w < end) == (edges == kInsideEdges);
  }

  __device__ __forceinline__ void operator()(vertex_t u, double du, const vertex_t* v,
                                             const double* w, int k) {
    dist_t bits[kBatch], seen[kBatch];
    bool near[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const double d = du + w[j];
      const bool take = j < k && wants(du, w[j]);
      relaxations += take;
      near[j] = d < end;
      bits[j] = take ? W::make(d, u, overflow) : 0;
      seen[j] = take ? __ldcg(dist + v[j]) : 0;
    }
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      if (bits[j] < seen[j]) seen[j] = atomicMin(dist + v[j], bits[j]);
    }
    // Each improved target claims its place in the next near queue or the far pile; the
    // batch's claims go out before any result is read (one round trip, not one per edge).
    bool push[kBatch], member[kBatch], improved_near[kBatch];
    unsigned old[kBatch];
    int candidates = 0;
    double nearest = end;  // the least improved distance inside the bucket
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      push[j] = W::key(bits[j]) < W::key(seen[j]);
      improved_near[j] = push[j] && near[j];
      candidates += improved_near[j];
      if (!kSettle && improved_near[j] && du + w[j] < nearest) nearest = du + w[j];
      old[j] = 0;
      if (push[j]) {
        old[j] = near[j] ? next.mark(v[j])
                         : static_cast<unsigned>(atomicExch(far_mark + v[j], bucket));
      }
    }
    size_type near_slot = 0;
    if constexpr (Near::kSlotsWithClaims) {
      if (candidates) near_slot = append_slots(next.count, candidates);
    }
    if constexpr (!kSettle) next.note_least(candidates > 0, nearest);  // (GridNear)
    int pushed_near = 0, joined = 0, pushed_far = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      member[j] = false;
      if (push[j]) {
        ++improved;
        if (near[j]) {
          bool fresh;
          push[j] = next.claimed(v[j], old[j], fresh);
          member[j] = kSettle && members != nullptr && fresh;
        } else {
          push[j] = static_cast<int>(old[j]) != bucket;
        }
        pushed_near += push[j] && near[j];
        joined += member[j];
        pushed_far += push[j] && !near[j];
      }
    }
    queued_items += pushed_near + pushed_far;
    if constexpr (Near::kSlotsWithClaims) {
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (improved_near[j]) next.put(near_slot++, push[j] ? v[j] : kEmptySlot);
      }
    } else if (pushed_near) {  // at most n per step: the next queue never overflows
      size_type slot = append_slots(next.count, pushed_near);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (push[j] && near[j]) next.put(slot++, v[j]);
      }
    }
    if (kSettle && joined) {  // at most n over the search
      size_type slot = append_slots(member_count, joined);
#pragma unroll
      for (int j = 0; j < kBatch; ++j) {
        if (member[j]) members[slot++] = v[j];
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

// A relaxation pass reads the part of a row it takes (found by ADL from visit_rows).
template <class W, class Near, bool kSettle>
__device__ __forceinline__ void narrow_for(const Relax<W, Near, kSettle>& relax, const Csr& g,
                                           double du, size_type& start, size_type& stop) {
  if constexpr (kSettle) narrow_row(g, relax.edges, relax.end, du, start, stop);
}

struct AcceptAll {
  __device__ __forceinline__ bool operator()(vertex_t, double) const { return true; }
};

// The vertices stamped for step `step` (a step whose queue's slots overflowed: GridNear).
struct StampedFor {
  const int* queued;
  int step;
  __device__ __forceinline__ bool operator()(vertex_t u, double) const {
    return __ldcg(queued + u) == step;
  }
};

// A step's window (delta_stepping_grid): its queued vertices below `limit` relax their edges;
// the others wait in the next step's queue, since a distance far above the queue's least is
// likely to fall again before it is final (a mesh's wide buckets otherwise relax each edge
// about seven times).
struct WindowFor {
  GridNear next;
  double limit;
  __device__ __forceinline__ bool operator()(vertex_t u, double du) const {
    const bool wait = du >= limit;
    next.note_least(wait, du);
    if (wait) {
      bool fresh;
      if (next.claim(u, fresh)) next.put(append_slots(next.count, 1), u);
    }
    return !wait;
  }
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

__device__ __forceinline__ void barrier() {
  if (gridDim.x == 1) {
    __syncthreads();
  } else {
    distbfs::grid_sync();
  }
}

// The search's device state (see the header).
struct PathBuffers {
  dist_t* dist;
  int* queued;
  int* far_mark;
  vertex_t* near0;  // near queues, by step parity
  vertex_t* near1;
  size_type near_capacity;  // the grid's slots a queue (the one-block search's: n)
  vertex_t* far0;  // far piles, by bucket parity
  vertex_t* far1;
  float* far0_at;  // each far entry's distance, rounded down (a lower bound; see advance)
  float* far1_at;
  size_type far_capacity;
  vertex_t* members;  // every bucket's vertices, bucket after bucket (nullptr: no settle
                      // passes, steps relax every edge)
  Pieces pieces;
  size_type piece_edges;
  size_type* counts;
  long long* ctl;
  size_type block_queue;  // one-block searches: near-queue slots in shared memory

  __device__ __forceinline__ vertex_t* near(int step) const { return (step & 1) ? near1 : near0; }
  __device__ __forceinline__ vertex_t* far(int bucket) const { return (bucket & 1) ? far1 : far0; }
  __device__ __forceinline__ float* far_at(int bucket) const {
    return (bucket & 1) ? far1_at : far0_at;
  }
};

// The advance (header): cut the next bucket from the far pile of bucket `bucket`, queue its
// vertices for step `step` (each also joins the members) and carry the rest to the next pile.
// Far entries carry their distance (far_at) so that an entry is read from `dist` once, when it
// is pushed, and once more when its bucket comes, rather than in every advance it waits
// through: the entries from `fresh` on (pushed in this bucket) read theirs here; the older
// ones carry one that is at most the vertex's distance (the entry pushed when the vertex last
// improved holds it exactly; older entries of the same vertex hold more and drop out when
// their turn comes). The bucket's vertices join `near`, the queue of step `step`. Returns
// false when the pile holds no live vertex (the search is done); else sets `end`, moves
// `bucket` on and sets `fresh` to the carried count.
template <class W, class Near>
__device__ __forceinline__ bool advance(const PathBuffers& b, long long n, const Near& near,
                                        int& bucket, double& end, size_type& fresh, double delta,
                                        int max_bins, int split_divisor) {
  __shared__ size_type bins[kSplitBins];
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  size_type* counts = b.counts;
  size_type* hist = counts + kHistSlot + (bucket & 1) * kSplitBins;
  const vertex_t* far = b.far(bucket);
  float* far_at = b.far_at(bucket);
  const size_type held = __ldcg(counts + kFarSlot + bucket % 3);
  const bool scan = held > b.far_capacity;  // overflowed: every vertex instead
  const size_type items = scan ? static_cast<size_type>(n) : held;
  if (me == 0) {
    counts[kFarSlot + (bucket + 2) % 3] = 0;
    counts[kMinSlot + ((bucket + 1) & 1)] = static_cast<size_type>(kNoPath);
    counts[kSettlePieceSlot] = 0;
  }
  for (size_type i = me; i < kSplitBins; i += threads) {
    counts[kHistSlot + ((bucket + 1) & 1) * kSplitBins + i] = 0;
  }
  dist_t* least = reinterpret_cast<dist_t*>(counts + kMinSlot + (bucket & 1));
  for (size_type i = threadIdx.x; i < kSplitBins; i += blockDim.x) bins[i] = 0;
  __syncthreads();
  dist_t my_least = kNoPath;
  for (size_type i = me; i < items; i += threads) {
    double d;
    if (scan) {
      d = W::value(__ldcg(b.dist + i));
    } else if (i >= fresh) {
      d = W::value(__ldcg(b.dist + __ldcg(far + i)));
      far_at[i] = __double2float_rd(d);
    } else {
      d = __ldcg(far_at + i);
    }
    if (d < end || as_bits(d) == kNoPath) continue;
    my_least = as_bits(d) < my_least ? as_bits(d) : my_least;
    const double bin = floor((d - end) / delta);
    const int k = bin < kSplitBins - 1 ? static_cast<int>(bin) : kSplitBins - 1;
    atomicAdd(reinterpret_cast<unsigned long long*>(&bins[k]), 1ull);
  }
  __syncthreads();
  for (int i = threadIdx.x; i < kSplitBins; i += blockDim.x) {
    if (bins[i]) {
      atomicAdd(reinterpret_cast<unsigned long long*>(hist + i),
                static_cast<unsigned long long>(bins[i]));
    }
  }
  if (my_least != kNoPath) atomicMin(least, my_least);
  barrier();
  // Every block reads the same histogram and cuts at the same bin.
  const int cut = cut_bin(hist, bins, threads, split_divisor, max_bins);
  if (cut < 0) return false;
  const double old_end = end;
  end = old_end + (cut + 1) * delta;
  const double lowest = as_double(__ldcg(least));
  if (lowest >= end) end = (floor(lowest / delta) + 1) * delta;  // a gap of empty bins
  const int next_bucket = bucket + 1;
  vertex_t* next_far = b.far(next_bucket);
  float* next_at = b.far_at(next_bucket);
  size_type* next_held = counts + kFarSlot + next_bucket % 3;
  for (size_type i = me; i < items; i += threads) {
    const vertex_t v = scan ? static_cast<vertex_t>(i) : __ldcg(far + i);
    float at;
    if (scan) {
      const double d = W::value(__ldcg(b.dist + v));
      if (d < old_end || as_bits(d) == kNoPath) continue;  // settled, or never reached
      at = __double2float_rd(d);
    } else {
      at = __ldcg(far_at + i);
    }
    if (at < end) {  // its distance is below the end too: read it
      const double d = W::value(__ldcg(b.dist + v));
      if (d < old_end) continue;  // settled in an earlier bucket
      if (d < end) {
        bool fresh_member;
        if (near.claim(v, fresh_member)) {
          near.put(append_slots(near.count, 1), v);
          if (b.members != nullptr) b.members[append_slots(counts + kMemberSlot, 1)] = v;
        }
        continue;
      }
      at = __double2float_rd(d);
    }
    const size_type slot = append_slots(next_held, 1);
    if (slot < b.far_capacity) {
      next_far[slot] = v;
      next_at[slot] = at;
    }
  }
  barrier();
  fresh = __ldcg(next_held);  // the settle pass of the next bucket pushes after these
  bucket = next_bucket;
  return true;
}

// The rows of items[0..count) through `relax`, then the pieces of the long ones (queued in
// counts[piece_slot]), with a barrier after each. Returns *after as read after the last barrier
// (the next queue's length: read beside the piece count, so that a step without pieces waits
// for one round trip after its barrier, not two). `head`: this thread's first item if valid,
// and, where `next_items` (a queue of `next_capacity` slots) is given, its slot of that queue
// read with the length; where `least_at` is given, *least is set to the float it holds (the
// next queue's least distance, GridNear::least), read with the length too.
template <bool kVarint, class W, class Visit, class Accept = AcceptAll>
__device__ __forceinline__ size_type relax_rows(const Csr& g, const PathBuffers& b,
                                                const vertex_t* items, size_type count,
                                                int piece_slot, Visit& relax,
                                                const size_type* after, Accept accept = {},
                                                Head* head = nullptr,
                                                const vertex_t* next_items = nullptr,
                                                size_type next_capacity = 0,
                                                const size_type* least_at = nullptr,
                                                double* least = nullptr) {
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  size_type* piece_count = b.counts + piece_slot;
  // The counts every thread reads after a barrier are loaded once a block and shared: a load
  // from every thread of the grid queues hundreds of thousands of requests on their L2 line.
  __shared__ size_type words[3];
  visit_rows<kVarint, W>(items, count, b.dist, g, b.pieces, piece_count, b.piece_edges, me,
                         threads, accept, relax, head != nullptr ? *head : Head{});
  auto read_ahead = [&] {
    if (head == nullptr) return;
    head->valid = next_items != nullptr;
    if (head->valid && me < next_capacity) head->item = __ldcg(next_items + me);
  };
  barrier();
  read_ahead();
  auto read_counts = [&] {  // thread 0, after a barrier
    words[1] = __ldcg(after);
    if (least_at != nullptr) words[2] = __ldcg(least_at);
  };
  auto take_least = [&] {
    if (least_at != nullptr) *least = __uint_as_float(static_cast<unsigned>(words[2]));
  };
  if (threadIdx.x == 0) {
    words[0] = __ldcg(piece_count);
    read_counts();
  }
  __syncthreads();
  const size_type piece_total = words[0];
  size_type value = words[1];
  take_least();
  if (piece_total) {
    visit_pieces<kVarint, W>(b.pieces, piece_total, b.dist, g, b.piece_edges, me, threads,
                             relax);
    barrier();  // the next reads of dist and the queues
    read_ahead();
    if (threadIdx.x == 0) read_counts();
    __syncthreads();
    value = words[1];
    take_least();
  }
  return value;
}

// A launch's place in the search, which ctl[] carries from one launch to the next (a launch
// ends only at a bucket's end), and the current bucket's counts so far.
struct Cursor {
  int step;
  int bucket;
  int first_bucket;            // this launch's first: its log rows count from it
  int first_step;              // the current bucket's (a launch starts the search or ends a
  size_type member_begin = 0;  // bucket, so these are set before they are read)
  double end;
  size_type fresh;  // far entries before it carry their distance
  bool done = false;
  unsigned long long steps = 0, relaxations = 0, improved = 0, queued_items = 0;

  __device__ explicit Cursor(const long long* ctl)
      : step(static_cast<int>(ctl[kCtlStep])),
        bucket(static_cast<int>(ctl[kCtlBucket])),
        first_bucket(bucket),
        first_step(step),
        end(__longlong_as_double(ctl[kCtlEnd])),
        fresh(ctl[kCtlFresh]) {}

  // The current bucket's log row (thread 0 of the launch).
  __device__ void log_first(unsigned long long* log, int log_rows, double delta) const {
    if (log_rows > 0) {
      log[0] = static_cast<unsigned long long>(bucket);
      log[1] = as_bits(end - delta);
      log[2] = as_bits(end);
    }
  }

  template <class Visit>
  __device__ __forceinline__ void add(const Visit& relax) {
    relaxations += relax.relaxations;
    improved += relax.improved;
    queued_items += relax.queued_items;
  }

  __device__ void save(long long* ctl) const {  // thread 0 of the launch
    ctl[kCtlStep] = step;
    ctl[kCtlBucket] = bucket;
    ctl[kCtlEnd] = __double_as_longlong(end);
    ctl[kCtlDone] = done ? 1 : 0;
    ctl[kCtlFresh] = fresh;
  }
};

// A bucket's end (its near queue is empty): its counts go to its log row; then the launch
// ends (false: `log_rows` buckets are logged, or the search is done, `c.done`) or the next
// bucket is cut and its vertices join `near`, the queue of step c.step (true).
template <class W, class Near>
__device__ __forceinline__ bool next_bucket(const PathBuffers& b, long long n, Cursor& c,
                                            const Near& near, unsigned long long* log,
                                            int log_rows, double delta, double limit,
                                            int max_bins, int split_divisor) {
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (log_rows > 0) {
    unsigned long long* row = log + (c.bucket - c.first_bucket) * kLogWords;
    if (me == 0) row[3] += c.steps;
    add_counts(c.relaxations, c.improved, c.queued_items, row + 4);
  }
  c.steps = c.relaxations = c.improved = c.queued_items = 0;
  if (c.bucket - c.first_bucket + 1 >= log_rows || c.end > limit) {
    c.done = c.end > limit;
    return false;
  }
  c.member_begin = __ldcg(b.counts + kMemberSlot);
  if (!advance<W>(b, n, near, c.bucket, c.end, c.fresh, delta, max_bins, split_divisor)) {
    c.done = true;
    return false;
  }
  c.first_step = c.step;
  if (log_rows > 0 && me == 0) {
    unsigned long long* row = log + (c.bucket - c.first_bucket) * kLogWords;
    row[0] = static_cast<unsigned long long>(c.bucket);
    row[1] = __ldcg(b.counts + kMinSlot + ((c.bucket - 1) & 1));
    row[2] = as_bits(c.end);
  }
  return true;
}

// The search from the state in ctl/counts (see the header), until it is done (ctl[kCtlDone]
// = 1) or `log_rows` buckets were logged in this launch (the host relaunches, at a bucket's
// end). Vertices no farther than `limit` get their final distance; the search stops before a
// bucket that starts beyond it. `window` > 0 (searches without settle passes): a step relaxes
// the rows of its queued vertices less than `window` above the queue's least distance, and the
// others wait a step (WindowFor): the steps a bucket takes follow its paths' hops, whatever
// its width, so wide buckets with a window take fewer steps without relaxing each edge again
// and again.
template <bool kVarint, class W, bool kSettle>
__device__ __forceinline__ void delta_stepping_grid(const Csr& g, long long n, PathBuffers b,
                                                    unsigned long long* log, int log_rows,
                                                    double delta, double limit, int max_bins,
                                                    int split_divisor, double window) {
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  size_type* counts = b.counts;
  Cursor c(b.ctl);
  if (me == 0) c.log_first(log, log_rows, delta);
  auto least_at = [&](int step) { return counts + kQueueLeastSlot + step % 3; };
  auto near = [&](int step) {
    return GridNear{b.queued, b.near(step), counts + kNearSlot + step % 3, b.near_capacity,
                    step, c.first_step,
                    kSettle ? nullptr : reinterpret_cast<unsigned long long*>(least_at(step))};
  };
  size_type count = __ldcg(counts + kNearSlot + c.step % 3);  // the near queue's length
  // A lower bound of the queue's distances: the far pile's least live one at a bucket's
  // start, then what the steps note (the slots start at 0, a bound for the first steps).
  double low = 0.0;
  Head head;
  while (true) {
    if (count == 0) {  // the bucket is settled: find the next one
      head.valid = false;
      if (!next_bucket<W>(b, n, c, near(c.step), log, log_rows, delta, limit, max_bins,
                          split_divisor)) {
        break;
      }
      count = __ldcg(counts + kNearSlot + c.step % 3);  // the bucket's first step
      low = as_double(__ldcg(counts + kMinSlot + ((c.bucket - 1) & 1)));
      continue;
    }
    // One step: the near queue relaxes its edges (with settle passes: those that land inside).
    if (me == 0) {
      counts[kNearSlot + (c.step + 2) % 3] = 0;
      counts[kPieceSlot + (c.step + 1) % 3] = 0;
      if (!kSettle) *least_at(c.step + 2) = GridNear::kNoLeast;
    }
    Relax<W, GridNear, kSettle> relax{b.dist,
                                      b.far_mark,
                                      near(c.step + 1),
                                      b.members,
                                      counts + kMemberSlot,
                                      b.far(c.bucket),
                                      counts + kFarSlot + c.bucket % 3,
                                      b.far_capacity,
                                      c.end,
                                      c.bucket,
                                      b.members != nullptr ? kInsideEdges : kEveryEdge,
                                      reinterpret_cast<int*>(b.ctl + kCtlOverflow)};
    const size_type* next_count = counts + kNearSlot + (c.step + 1) % 3;
    if (kSettle && count <= b.near_capacity) {
      count = relax_rows<kVarint, W>(g, b, b.near(c.step), count, kPieceSlot + c.step % 3,
                                     relax, next_count, AcceptAll{}, &head,
                                     b.near(c.step + 1), b.near_capacity);
    } else if (count <= b.near_capacity) {
      const double upto = window > 0 ? low + window : as_double(kNoPath);
      count = relax_rows<kVarint, W>(g, b, b.near(c.step), count, kPieceSlot + c.step % 3,
                                     relax, next_count, WindowFor{relax.next, upto}, &head,
                                     b.near(c.step + 1), b.near_capacity,
                                     least_at(c.step + 1), &low);
    } else {  // more slots than the queue holds: the stamps say which vertices it has
      count = relax_rows<kVarint, W>(g, b, nullptr, n, kPieceSlot + c.step % 3, relax,
                                     next_count, StampedFor{b.queued, c.step}, &head,
                                     b.near(c.step + 1), b.near_capacity);
    }
    ++c.step;
    ++c.steps;
    if (kSettle && count == 0) {  // (run_buckets gives such a search its members)
      // Settled: its members relax the edges that leave it, once.
      relax.edges = kLeavingEdges;
      const size_type members = __ldcg(counts + kMemberSlot) - c.member_begin;
      relax_rows<kVarint, W>(g, b, b.members + c.member_begin, members, kSettlePieceSlot,
                             relax, counts + kMemberSlot);
    }
    c.add(relax);
  }
  if (me == 0) c.save(b.ctl);
}

// The grid search with settle passes (delta_stepping*) and without (delta_stepping_steps*:
// every step relaxes every edge, in a window), each a kernel of its own.
template <bool kVarint, class W>
__device__ __forceinline__ void settled_grid(const Csr& g, long long n, PathBuffers b,
                                             unsigned long long* log, int log_rows,
                                             double delta, double limit, int max_bins,
                                             int split_divisor, double) {
  delta_stepping_grid<kVarint, W, true>(g, n, b, log, log_rows, delta, limit, max_bins,
                                        split_divisor, 0.0);
}
template <bool kVarint, class W>
__device__ __forceinline__ void steps_grid(const Csr& g, long long n, PathBuffers b,
                                           unsigned long long* log, int log_rows, double delta,
                                           double limit, int max_bins, int split_divisor,
                                           double window) {
  delta_stepping_grid<kVarint, W, false>(g, n, b, log, log_rows, delta, limit, max_bins,
                                         split_divisor, window);
}

// The same search in ONE block (graphs of at most path_one_block_vertices vertices, without
// settle passes: road networks, meshes, whose buckets take thousands of steps of a few hundred
// vertices each): the near queues (BlockNear) and their lengths live in shared memory, so a
// step's chain of dependent memory operations is the queued vertex's distance and row, its
// edges, and the target's distance and atomicMin; a vertex claims its place in the next queue
// in shared memory. Rows longer than a warp are taken by the whole warp (no pieces). Dynamic
// shared memory: 4 queue lengths (by step % 3; 32 bits, native shared atomics), two queues of
// b.block_queue vertices, two bitmasks of n bits (the `queued` stamps are not used). The
// queue lengths go back to counts[] when the launch ends, at a bucket's end, when both
// bitmasks are clear.
template <bool kVarint, class W>
__device__ __forceinline__ void delta_stepping_one_block(const Csr& g, long long n,
                                                         PathBuffers b, unsigned long long* log,
                                                         int log_rows, double delta,
                                                         double limit, int max_bins,
                                                         int split_divisor, double) {
  extern __shared__ __align__(16) unsigned char block_shared[];
  const int lane = threadIdx.x & (kWarpThreads - 1);
  const size_type capacity = b.block_queue;
  const size_type words = (static_cast<size_type>(n) + 31) / 32;
  unsigned* lengths = reinterpret_cast<unsigned*>(block_shared);
  vertex_t* items = reinterpret_cast<vertex_t*>(lengths + 4);
  unsigned* marks = reinterpret_cast<unsigned*>(items + 2 * capacity);
  auto near = [&](int step) {
    return BlockNear{marks + (step & 1) * words, items + (step & 1) * capacity, b.near(step),
                     capacity, lengths + step % 3};
  };
  Cursor c(b.ctl);
  if (threadIdx.x == 0) c.log_first(log, log_rows, delta);
  for (size_type i = threadIdx.x; i < 2 * words; i += blockDim.x) marks[i] = 0;
  if (threadIdx.x < 3) {
    lengths[threadIdx.x] = static_cast<unsigned>(__ldcg(b.counts + kNearSlot + threadIdx.x));
  }
  __syncthreads();
  size_type count = lengths[c.step % 3];
  const BlockNear entry = near(c.step);  // the source, when the launch starts the search
  for (size_type i = threadIdx.x; i < count; i += blockDim.x) {
    const vertex_t v = __ldcg(entry.global_items + i);
    bool fresh;
    entry.claim(v, fresh);
    if (i < capacity) entry.shared_items[i] = v;
  }
  __syncthreads();
  while (true) {
    if (count == 0) {
      if (!next_bucket<W>(b, n, c, near(c.step), log, log_rows, delta, limit, max_bins,
                          split_divisor)) {
        break;
      }
      count = lengths[c.step % 3];
      continue;
    }
    if (threadIdx.x == 0) lengths[(c.step + 2) % 3] = 0;
    const BlockNear current = near(c.step);
    Relax<W, BlockNear> relax{b.dist,
                              b.far_mark,
                              near(c.step + 1),
                              nullptr,
                              nullptr,
                              b.far(c.bucket),
                              b.counts + kFarSlot + c.bucket % 3,
                              b.far_capacity,
                              c.end,
                              c.bucket,
                              kEveryEdge,
                              reinterpret_cast<int*>(b.ctl + kCtlOverflow)};
    // Warp-uniform trip count: every lane reaches visit_row's ballots together.
    for (size_type base = threadIdx.x - lane; base < count; base += blockDim.x) {
      const size_type i = base + lane;
      vertex_t u = 0;
      double du = 0.0;
      size_type start = 0, stop = 0;
      if (i < count) {
        u = current.get(i);
        du = W::value(__ldcg(b.dist + u));
        start = g.offsets[u];
        stop = g.offsets[u + 1];
      }
      visit_row<kVarint>(g, u, du, start, stop, relax);
      if (i < count) current.release(u);
    }
    __syncthreads();
    count = lengths[(c.step + 1) % 3];
    ++c.step;
    ++c.steps;
    c.add(relax);
  }
  if (threadIdx.x < 3) b.counts[kNearSlot + threadIdx.x] = lengths[threadIdx.x];
  if (threadIdx.x == 0) c.save(b.ctl);
}

}  // namespace

// The plain and the compressed entry point of a kernel whose body takes the graph as a Csr:
// name(offsets, columns, weights, weight_kind, params...) and name_varint(offsets, bytes,
// byte_offsets, point_bytes, point_values, weights, weight_kind, params...), each with the
// rank and rank count whose rows it reads after weight_kind (graph_args in relax.py).
#define DISTBFS_UNPAREN(...) __VA_ARGS__
#define DISTBFS_RELAX_ENTRIES(name, body, word, params, args)                               \
  DISTBFS_RELAX_ENTRIES_BOUND(name, body, word, kRelaxThreads, kRelaxBlocksPerSM, params, args)
#define DISTBFS_RELAX_ENTRIES_BOUND(name, body, word, threads, blocks, params, args)          \
  extern "C" __global__ void __launch_bounds__(threads, blocks)                             \
      name(const size_type* offsets, const vertex_t* columns, const void* weights,          \
           int weight_kind, long long rows_rank, long long rows_size,                       \
           DISTBFS_UNPAREN params) {                                                        \
    const Csr g{offsets,     columns,   {nullptr, nullptr, nullptr, nullptr},               \
                weights,     weight_kind, rows_rank,                                        \
                rows_size};                                                                 \
    body<false, word>(g, DISTBFS_UNPAREN args);                                             \
  }                                                                                         \
  extern "C" __global__ void __launch_bounds__(threads, blocks)                             \
      name##_varint(                                                                        \
      const size_type* offsets, const unsigned char* bytes, const size_type* byte_offsets,  \
      const size_type* point_bytes, const vertex_t* point_values, const void* weights,      \
      int weight_kind, long long rows_rank, long long rows_size, DISTBFS_UNPAREN params) {  \
    const Csr g{offsets,     nullptr,   {bytes, byte_offsets, point_bytes, point_values},   \
                weights,     weight_kind, rows_rank,                                        \
                rows_size};                                                                 \
    body<true, word>(g, DISTBFS_UNPAREN args);                                              \
  }

#define DISTBFS_DELTA_STEPPING(name, body, word, threads, blocks)                          \
  DISTBFS_RELAX_ENTRIES_BOUND(                                                             \
      name, body, word, threads, blocks,                                                   \
      (long long n, dist_t* dist, int* queued, int* far_mark, vertex_t* near0,             \
       vertex_t* near1, long long near_capacity, vertex_t* far0, vertex_t* far1,           \
       float* far0_at, float* far1_at,                                                     \
       long long far_capacity, vertex_t* members, int settle, vertex_t* piece_vertex,      \
       size_type* piece_start, long long piece_capacity, long long piece_edges,            \
       size_type* counts, long long* ctl, long long block_queue, unsigned long long* log,  \
       int log_rows, double delta, double limit, int max_bins, int split_divisor,          \
       double window),                                                                     \
      (n,                                                                                  \
       PathBuffers{dist,    queued,  far_mark, near0,        near1,  near_capacity,        \
                   far0,    far1,    far0_at,  far1_at,      far_capacity,                 \
                   settle ? members : nullptr,                                             \
                   Pieces{piece_vertex, piece_start, piece_capacity},                      \
                   piece_edges, counts, ctl, block_queue},                                 \
       log, log_rows, delta, limit, max_bins, split_divisor, window))

DISTBFS_DELTA_STEPPING(delta_stepping, settled_grid, ExactWord, kRelaxThreads,
                       kRelaxBlocksPerSM)
DISTBFS_DELTA_STEPPING(delta_stepping_tied, settled_grid, TiedWord, kRelaxThreads,
                       kRelaxBlocksPerSM)
DISTBFS_DELTA_STEPPING(delta_stepping_steps, steps_grid, ExactWord, kRelaxThreads,
                       kRelaxBlocksPerSM)
DISTBFS_DELTA_STEPPING(delta_stepping_steps_tied, steps_grid, TiedWord, kRelaxThreads,
                       kRelaxBlocksPerSM)
// the one-block kernel: its one block has the SM to itself
DISTBFS_DELTA_STEPPING(delta_stepping_block, delta_stepping_one_block, ExactWord,
                       distbfs::kPathBlockThreads, 1)
DISTBFS_DELTA_STEPPING(delta_stepping_block_tied, delta_stepping_one_block, TiedWord,
                       distbfs::kPathBlockThreads, 1)

namespace {

// Tree pass 0: v's parent is its smallest in-neighbour u with d(u) + w = d(v) > d(u).
struct TightParent {
  const dist_t* dist;
  pred_t* parent;
  __device__ __forceinline__ bool weights_first() const { return false; }
  __device__ __forceinline__ bool wants(double, double) const { return true; }
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
  __device__ __forceinline__ bool weights_first() const { return false; }
  __device__ __forceinline__ bool wants(double, double) const { return true; }
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

template <bool kVarint, class W>
__device__ __forceinline__ void tight_parents_rows(
    const Csr& g, long long n, const dist_t* dist, pred_t* parent, vertex_t* piece_vertex,
    size_type* piece_start, long long piece_capacity, long long piece_edges,
    size_type* piece_count) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  TightParent visit{dist, parent};
  visit_rows<kVarint, W>(static_cast<const vertex_t*>(nullptr), n, dist, g, pieces, piece_count,
                      piece_edges, me, threads, Reached{}, visit);
}

template <bool kVarint, class W>
__device__ __forceinline__ void plateau_parents_rows(
    const Csr& g, long long n, const dist_t* dist, pred_t* parent, const int* pass, int round,
    vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
    long long piece_edges, size_type* piece_count) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  PlateauParent visit{dist, parent, pass};
  visit_rows<kVarint, W>(static_cast<const vertex_t*>(nullptr), n, dist, g, pieces, piece_count,
                      piece_edges, me, threads, ResolvedIn{pass, round - 1}, visit);
}

// The pieces queued by tight_parents (round < 0) or plateau_parents (round >= 1).
template <bool kVarint, class W>
__device__ __forceinline__ void relax_pieces_queued(
    const Csr& g, const dist_t* dist, pred_t* parent, const int* pass, int round,
    vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
    long long piece_edges, const size_type* piece_count) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (round < 0) {
    TightParent visit{dist, parent};
    visit_pieces<kVarint, W>(pieces, *piece_count, dist, g, piece_edges, me, threads, visit);
  } else {
    PlateauParent visit{dist, parent, pass};
    visit_pieces<kVarint, W>(pieces, *piece_count, dist, g, piece_edges, me, threads, visit);
  }
}

}  // namespace

DISTBFS_RELAX_ENTRIES(tight_parents, tight_parents_rows, ExactWord,
                      (long long n, const dist_t* dist, pred_t* parent, vertex_t* piece_vertex,
                       size_type* piece_start, long long piece_capacity, long long piece_edges,
                       size_type* piece_count),
                      (n, dist, parent, piece_vertex, piece_start, piece_capacity, piece_edges,
                       piece_count))

DISTBFS_RELAX_ENTRIES(plateau_parents, plateau_parents_rows, ExactWord,
                      (long long n, const dist_t* dist, pred_t* parent, const int* pass,
                       int round, vertex_t* piece_vertex, size_type* piece_start,
                       long long piece_capacity, long long piece_edges, size_type* piece_count),
                      (n, dist, parent, pass, round, piece_vertex, piece_start, piece_capacity,
                       piece_edges, piece_count))

DISTBFS_RELAX_ENTRIES(relax_pieces, relax_pieces_queued, ExactWord,
                      (const dist_t* dist, pred_t* parent, const int* pass, int round,
                       vertex_t* piece_vertex, size_type* piece_start, long long piece_capacity,
                       long long piece_edges, const size_type* piece_count),
                      (dist, parent, pass, round, piece_vertex, piece_start, piece_capacity,
                       piece_edges, piece_count))

namespace {

// Striped steps: a request (target v, word) per taken edge whose word is below what this rank
// sent v so far; `sent` keeps the least (so a request the owner would drop is never made). A
// step takes the edges that land inside the bucket (below `end`), the heavy step (`leaving`)
// the others, as the one-GPU search splits them. A tied word names the tail by its global id
// (local row u of rank `rank` of `size`).
template <class W>
struct SentRelax {
  dist_t* sent;
  vertex_t* out_vertex;
  dist_t* out_word;
  size_type* out_count;
  size_type capacity;
  double end;
  int leaving;
  long long rank;
  long long size;
  int* overflow;
  unsigned long long relaxations = 0;

  __device__ __forceinline__ bool weights_first() const { return false; }
  __device__ __forceinline__ bool wants(double du, double w) const {
    return leaving ? du + w >= end : du + w < end;
  }
  __device__ __forceinline__ void operator()(vertex_t u, double du, const vertex_t* v,
                                             const double* w, int k) {
    const vertex_t tail = static_cast<vertex_t>(u * size + rank);
    dist_t bits[kBatch], seen[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const bool take = j < k && wants(du, w[j]);
      relaxations += take;
      bits[j] = take ? W::make(du + w[j], tail, overflow) : 0;
      seen[j] = take ? __ldcg(sent + v[j]) : 0;
    }
    int made = 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      if (bits[j] < seen[j]) seen[j] = atomicMin(sent + v[j], bits[j]);
      made += bits[j] < seen[j];
    }
    if (!made) return;
    size_type slot = append_slots(out_count, made);
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      if (bits[j] < seen[j]) {
        if (slot < capacity) {
          out_vertex[slot] = v[j];
          out_word[slot] = bits[j];
        }
        ++slot;
      }
    }
  }
};

// A striped step reads the part of a row it takes where the row ascends by weight (found by ADL
// from visit_rows).
template <class W>
__device__ __forceinline__ void narrow_for(const SentRelax<W>& relax, const Csr& g, double du,
                                           size_type& start, size_type& stop) {
  narrow_row(g, relax.leaving ? kLeavingEdges : kInsideEdges, relax.end, du, start, stop);
}

template <bool kVarint, class W>
__device__ __forceinline__ void relax_requests_rows(
    const Csr& g, const vertex_t* items, long long count, const dist_t* dist, dist_t* sent,
    vertex_t* out_vertex, dist_t* out_word, size_type* out_count, long long capacity,
    double end, int leaving, long long rank, long long size, int* overflow,
    unsigned long long* relaxations, vertex_t* piece_vertex, size_type* piece_start,
    long long piece_capacity, long long piece_edges, size_type* piece_count, int pieces_pass) {
  const Pieces pieces{piece_vertex, piece_start, piece_capacity};
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  const size_type me = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
  SentRelax<W> visit{sent,    out_vertex, out_word, out_count, capacity, end,
                     leaving, rank,       size,     overflow};
  if (pieces_pass) {
    visit_pieces<kVarint, W>(pieces, *piece_count, dist, g, piece_edges, me, threads, visit);
  } else {
    visit_rows<kVarint, W>(items, count, dist, g, pieces, piece_count, piece_edges, me, threads,
                           AcceptAll{}, visit);
  }
  const unsigned long long taken = distbfs::warp_sum(visit.relaxations);
  if ((threadIdx.x & (kWarpThreads - 1)) == 0 && taken) atomicAdd(relaxations, taken);
}

template <class W>
__device__ __forceinline__ void bucket_scan_rows(long long n, const dist_t* words,
                                                 unsigned char* settled, double end, int settle,
                                                 const size_type* offsets, vertex_t* out,
                                                 size_type* count, dist_t* least) {
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  dist_t mine = ~0ull;
  size_type degrees = 0;
  for (size_type v = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += threads) {
    if (settled[v]) continue;
    const double d = W::value(words[v]);
    if (d < end) {
      if (settle) settled[v] = 1;
      out[append_slots(count, 1)] = static_cast<vertex_t>(v);
      degrees += offsets[v + 1] - offsets[v];
    } else if (settle && as_bits(d) < mine) {
      mine = as_bits(d);  // +inf where unreached
    }
  }
  __syncwarp();
  degrees = distbfs::warp_sum(degrees);
#pragma unroll
  for (int offset = kWarpThreads / 2; offset > 0; offset /= 2) {
    const dist_t other = __shfl_xor_sync(kFullWarp, mine, offset);
    mine = other < mine ? other : mine;
  }
  if ((threadIdx.x & (kWarpThreads - 1)) == 0) {
    if (degrees) distbfs::reserve_slots(count + 1, degrees);
    if (settle) atomicMin(least, mine);
  }
}

}  // namespace

#define DISTBFS_RELAX_REQUESTS(name, word)                                                  \
  DISTBFS_RELAX_ENTRIES(                                                                   \
      name, relax_requests_rows, word,                                                     \
      (const vertex_t* items, long long count, const dist_t* dist, dist_t* sent,           \
       vertex_t* out_vertex, dist_t* out_word, size_type* out_count, long long capacity,   \
       double end, int leaving, long long rank, long long size, int* overflow,             \
       unsigned long long* relaxations, vertex_t* piece_vertex, size_type* piece_start,    \
       long long piece_capacity, long long piece_edges, size_type* piece_count,            \
       int pieces_pass),                                                                   \
      (items, count, dist, sent, out_vertex, out_word, out_count, capacity, end, leaving,  \
       rank, size, overflow, relaxations, piece_vertex, piece_start, piece_capacity,       \
       piece_edges, piece_count, pieces_pass))

DISTBFS_RELAX_REQUESTS(relax_requests, ExactWord)
DISTBFS_RELAX_REQUESTS(relax_requests_tied, TiedWord)

namespace {

// A pulled heavy step (striped steps, an undirected graph: a row lists the in-edges too): for
// each unsettled owned vertex, the least word over its neighbours u that the bucket just
// settled (distance in [lower, end)), d(u) + w tied to u, against its own word; a row is read
// by its thread, four edges a batch, and where rows ascend by weight no further than an edge
// that cannot improve on the best so far (lower + w > it). `everywhere`: every rank's words in
// rank order (`rank_major` in distbfs/partition.py), for n vertices.
template <class W>
struct PullBest {
  const dist_t* everywhere;
  long long n;
  long long size;
  double lower;
  double end;
  bool sorted;  // the rows ascend by weight
  int* overflow;
  dist_t best;
  unsigned long long relaxations = 0;

  __device__ __forceinline__ bool weights_first() const { return false; }
  __device__ __forceinline__ bool wants(double, double) const { return true; }

  __device__ __forceinline__ dist_t word_of(vertex_t u) const {
    const long long rank = u % size, base = n / size, extra = n % size;
    return __ldcg(everywhere + rank * base + (rank < extra ? rank : extra) + u / size);
  }
  __device__ __forceinline__ void operator()(vertex_t, double, const vertex_t* v,
                                             const double* w, int k) {
    dist_t there[kBatch];
#pragma unroll
    for (int j = 0; j < kBatch; ++j) there[j] = j < k ? word_of(v[j]) : 0;
#pragma unroll
    for (int j = 0; j < kBatch; ++j) {
      const double du = W::value(there[j]);
      relaxations += j < k;
      if (j < k && du >= lower && du < end) {
        const dist_t word = W::make(du + w[j], v[j], overflow);
        best = word < best ? word : best;
      }
    }
  }
};

// A sorted row's later edges weigh at least the batch's last: none improves on the best once
// lower + that weight exceeds it.
template <class W>
__device__ __forceinline__ bool row_finished(const PullBest<W>& pull, const double (&w)[kBatch],
                                             const bool (&in)[kBatch]) {
  double heaviest = w[0];
#pragma unroll
  for (int j = 1; j < kBatch; ++j) heaviest = in[j] ? w[j] : heaviest;
  return pull.sorted && pull.lower + heaviest > W::value(pull.best);
}

template <bool kVarint, class W>
__device__ __forceinline__ void pull_requests_rows(
    const Csr& g, long long nlocal, const dist_t* words, const unsigned char* settled,
    const dist_t* everywhere, long long n, double lower, double end, vertex_t* out_vertex,
    dist_t* out_word, size_type* out_count, int* overflow, unsigned long long* relaxations) {
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  PullBest<W> pull{everywhere, n, g.size, lower, end, g.rows_by_weight(), overflow, 0};
  for (size_type u = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; u < nlocal;
       u += threads) {
    if (settled[u]) continue;
    const dist_t own = __ldcg(words + u);
    pull.best = own;
    const size_type start = g.offsets[u], stop = g.offsets[u + 1];
    if constexpr (kVarint) {
      visit_coded(g, static_cast<vertex_t>(u), 0.0, start, start, stop, pull);
    } else {
      visit_edges(g, static_cast<vertex_t>(u), 0.0, start, stop, 1, pull);
    }
    if (pull.best < own) {
      const size_type slot = append_slots(out_count, 1);
      out_vertex[slot] = static_cast<vertex_t>(g.vertex(static_cast<vertex_t>(u)));
      out_word[slot] = pull.best;
    }
  }
  __syncwarp();
  const size_type read = distbfs::warp_sum(static_cast<size_type>(pull.relaxations));
  if ((threadIdx.x & (kWarpThreads - 1)) == 0 && read) {
    atomicAdd(relaxations, static_cast<unsigned long long>(read));
  }
}

}  // namespace

#define DISTBFS_PULL_REQUESTS(name, word)                                                   \
  DISTBFS_RELAX_ENTRIES(                                                                   \
      name, pull_requests_rows, word,                                                      \
      (long long nlocal, const dist_t* words, const unsigned char* settled,                \
       const dist_t* everywhere, long long n, double lower, double end,                    \
       vertex_t* out_vertex, dist_t* out_word, size_type* out_count, int* overflow,        \
       unsigned long long* relaxations),                                                   \
      (nlocal, words, settled, everywhere, n, lower, end, out_vertex, out_word, out_count, \
       overflow, relaxations))

DISTBFS_PULL_REQUESTS(pull_requests, ExactWord)
DISTBFS_PULL_REQUESTS(pull_requests_tied, TiedWord)

extern "C" __global__ void __launch_bounds__(kRelaxThreads)
    bucket_scan(long long n, const dist_t* words, unsigned char* settled, double end,
                int settle, const size_type* offsets, vertex_t* out, size_type* count,
                dist_t* least) {
  bucket_scan_rows<ExactWord>(n, words, settled, end, settle, offsets, out, count, least);
}

extern "C" __global__ void __launch_bounds__(kRelaxThreads)
    bucket_scan_tied(long long n, const dist_t* words, unsigned char* settled, double end,
                     int settle, const size_type* offsets, vertex_t* out, size_type* count,
                     dist_t* least) {
  bucket_scan_rows<TiedWord>(n, words, settled, end, settle, offsets, out, count, least);
}

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

// Reached vertices by bucket, for the statistics: counts[k] += the vertices whose distance lies
// in [bounds[k], bounds[k + 1]) (bounds ascending from 0; the last bucket is open above). A
// block counts into shared bins while there are at most kCensusBins buckets.
constexpr int kCensusBins = 2048;

extern "C" __global__ void __launch_bounds__(kRelaxThreads)
    bucket_census(long long n, const double* distances, const double* bounds, int buckets,
                  unsigned long long* counts) {
  __shared__ unsigned bins[kCensusBins];
  const bool shared = buckets <= kCensusBins;
  if (shared) {
    for (int k = threadIdx.x; k < buckets; k += blockDim.x) bins[k] = 0;
    __syncthreads();
  }
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type v = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += threads) {
    const double d = distances[v];
    if (as_bits(d) == kNoPath) continue;
    int lo = 0, hi = buckets - 1;  // the last bound at or below d
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (bounds[mid] <= d) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    if (shared) {
      atomicAdd(bins + lo, 1u);
    } else {
      atomicAdd(counts + lo, 1ull);
    }
  }
  if (shared) {
    __syncthreads();
    for (int k = threadIdx.x; k < buckets; k += blockDim.x) {
      if (bins[k]) atomicAdd(counts + k, static_cast<unsigned long long>(bins[k]));
    }
  }
}

// The end of a TiedWord search: distances (float64, +inf where unreached) and predecessors
// (kUnreached where unreached; the source's word names the source itself) from the words.
extern "C" __global__ void __launch_bounds__(kRelaxThreads)
    tied_unpack(long long n, const dist_t* words, dist_t* distances, pred_t* preds) {
  const size_type threads = static_cast<size_type>(gridDim.x) * blockDim.x;
  for (size_type v = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += threads) {
    const dist_t word = words[v];
    const bool reached = word != TiedWord::kNone;
    distances[v] = as_bits(TiedWord::value(word));
    const pred_t tail = static_cast<pred_t>(word & 0xffffffffull);
    preds[v] = reached ? tail : static_cast<pred_t>(distbfs::kUnreached);
  }
}
