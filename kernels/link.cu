/*
 * link.cu: Afforest's Link and Compress (Sutton, Ben-Nun & Barak, "Optimizing Parallel Graph
 * Connectivity Computation via Subgraph Sampling", IPDPS 2018; gapbs cc.cc), a lock-free
 * union-find over a label array of every vertex of the graph: held whole by one rank, or
 * replicated on every rank, which links the rows it owns into its own copy.
 *
 * Labels (comp_t, int64): comp[v] is the parent of vertex v in a forest of min-label trees; a
 * root points at itself and every pointer goes down (comp[v] <= v). link(u, v) hooks the larger
 * of the two trees' roots under the smaller with one atomicCAS that succeeds only while that
 * root is still a root, and otherwise climbs and retries: one pass over a set of edges joins
 * every pair of trees they connect (no rounds). compress() then points every vertex at its
 * root, so the labels are the smallest vertex id of each component found so far.
 *
 * Replicated labels (several ranks): a rank's rows are the striped ones (local row i is global
 * vertex i * size + rank). A link kernel given `hooked` marks every root it hooks there;
 * hooked_pairs's (vertex, parent) of those, from every rank, are what the others link
 * (link_pairs) to hold the same forest: a copy changes from the last common one only by hooks.
 *
 * Labels written by other blocks are read with __ldcg (through L2, never a stale L1 line):
 * a stale read would only cost a failed CAS and a retry, but a retry that kept reading the same
 * stale line would never end.
 *
 * Kernels, each a grid-stride loop that counts what it did into counts[0] (links read),
 * counts[1] (links whose ends had different labels when read) and counts[2] (roots hooked), one
 * atomicAdd per block and count:
 *   link_neighbour  neighbour r of every owned vertex, in the row of its out-neighbours
 *                   followed (directed graphs) by its in-neighbours: Afforest's sampled subgraph
 *   link_rows       every neighbour (out, and in on a directed graph) of the owned vertices
 *                   whose label is not *skip (the largest intermediate component; -1: none);
 *                   rows longer than a warp are strided by the whole warp (Merrill's warp
 *                   gathering)
 *   link_pairs      the pairs (pairs[2i], pairs[2i + 1]) another rank hooked, or listed_pairs's
 *   link_listed     every neighbour of the owned vertices listed (reached_bits's rows)
 *   hooked_pairs    the pairs (vertex, label) of the roots this rank hooked (not counted)
 *   listed_pairs    the edges (u, v), v >= u (every v: a search stopped at its tail), of the
 *                   owned vertices listed, as pairs: every rank's, all-gathered, are a whole
 *                   search's remainder (not counted)
 * (link_neighbour_varint and link_rows_varint: the same over compressed rows, VarintColumns in
 * common.cuh; a row of at most kDecodePointEdges edges is decoded by its lane, a longer one
 * by the whole warp, a lane to each stretch between its decode points),
 * and:
 *   compress        every label to its tree's root (pointer jumping)
 *   compress_listed the same for the vertices listed
 *   own_labels      every vertex listed its own label (repeats allowed), or where flagged the
 *                   search's label: a whole search's remainder, whose other labels are never
 *                   read
 *   reached_ends    a flag for each vertex listed that this rank owns and a search reached
 *                   (reached_bits's bits): OR-reduced over the ranks, own_labels' flags
 *   reached_bits    the vertices a BFS reached (levels not kUnreached) as packed bits (bit i of
 *                   32-bit word i / 32: the frontier bitmap layout), with how many and the first,
 *                   and where asked the owned vertices it did not reach that have edges: after
 *                   a search that found a whole component, the only rows left to link
 *   seed_labels     every label from such bits: a reached vertex takes the given label (the
 *                   smallest reached vertex: the search's tree is a star), any other itself;
 *                   the bits of this rank's owned vertices, or every rank's for a replica
 *   take_labels     the labels of the rows listed from another run's (owned, or a replica):
 *                   the remainder's labels into the run the seed wrote
 *   most_frequent_label (one block)  the label most of the sampled vertices carry (the
 *                   smallest among equals; -1 without samples) into *out, for link_rows to
 *                   read: the largest intermediate component is found without a round trip to
 *                   the host
 */
#include "common.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>

typedef long long comp_t;

namespace {

using distbfs::kBlockThreads;
using distbfs::kFullWarp;
using distbfs::kWarpThreads;

__device__ __forceinline__ comp_t read_label(const comp_t* comp, comp_t v) {
  return __ldcg(comp + v);
}

enum LinkOutcome { kSameTree = 0, kJoinedMeanwhile = 1, kHooked = 2 };

// Join the trees of u and v; a root hooked is marked in `hooked` (unless null).
__device__ __forceinline__ LinkOutcome link(comp_t u, comp_t v, comp_t* comp,
                                            unsigned char* hooked) {
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
      if (seen == static_cast<unsigned long long>(high)) {
        if (hooked != nullptr) hooked[high] = 1;
        return kHooked;
      }
    }
    p1 = read_label(comp, read_label(comp, high));
    p2 = read_label(comp, low);
  }
  return kJoinedMeanwhile;
}

// What a thread's links did, and where they mark the roots they hook (null: nowhere).
struct Tally {
  unsigned char* marks;
  unsigned long long links = 0;
  unsigned long long crossing = 0;
  unsigned long long hooked = 0;

  __device__ __forceinline__ void add(comp_t u, comp_t v, comp_t* comp) {
    const LinkOutcome outcome = link(u, v, comp, marks);
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

// One side of the graph a link kernel reads (out-rows, or a directed graph's in-rows): plain
// columns, or compressed ones (kVarint).
struct Rows {
  const size_type* offsets;
  const vertex_t* cols;          // plain
  distbfs::VarintColumns coded;  // compressed
};

// The rows a link kernel reads: local row i is global vertex i * size + rank (striped; one
// rank holding the whole graph: size 1, rank 0).
struct Stripe {
  long long rows;
  int size;
  int rank;

  __device__ __forceinline__ comp_t vertex(long long row) const {
    return row * size + rank;
  }
};

// The neighbour at edge slot `slot` of local row `row` (global vertex v).
template <bool kVarint>
__device__ __forceinline__ comp_t neighbour_at(const Rows& rows, long long row, comp_t v,
                                               size_type slot) {
  if constexpr (kVarint) {
    return distbfs::open_at(rows.coded, row, rows.offsets[row], v, slot).next();
  } else {
    return rows.cols[slot];
  }
}

// Link global vertex u (local row `row`, first slot row_begin) to the neighbours at slots
// [from, to) of its row, in order.
template <bool kVarint>
__device__ __forceinline__ void link_slots(long long row, comp_t u, size_type row_begin,
                                           size_type from, size_type to, const Rows& rows,
                                           comp_t* comp, Tally& tally) {
  if (from >= to) return;
  if constexpr (kVarint) {
    distbfs::VarintCursor cursor = distbfs::open_at(rows.coded, row, row_begin, u, from);
    for (size_type i = from; i < to; ++i) tally.add(u, cursor.next(), comp);
  } else {
    for (size_type i = from; i < to; ++i) tally.add(u, rows.cols[i], comp);
  }
}

// Link global vertex v (local row `row`) to the slots [begin, end) of its row. Every lane of
// the warp calls it together: rows longer than a warp (compressed: than the stretch between
// two decode points) are taken one at a time by the whole warp, the others by their lane.
template <bool kVarint>
__device__ __forceinline__ void link_row(long long row, comp_t v, size_type begin, size_type end,
                                         const Rows& rows, comp_t* comp, Tally& tally) {
  constexpr size_type kLane = kVarint ? distbfs::kDecodePointEdges : 1;  // slots a lane's turn
  const int lane = threadIdx.x % kWarpThreads;
  const bool long_row = end - begin > (kVarint ? kLane : kWarpThreads);
  unsigned int pending = __ballot_sync(kFullWarp, long_row);
  while (pending) {
    const int leader = __ffs(pending) - 1;
    pending &= pending - 1;
    const long long at = __shfl_sync(kFullWarp, row, leader);
    const comp_t u = __shfl_sync(kFullWarp, v, leader);
    const size_type first = __shfl_sync(kFullWarp, begin, leader);
    const size_type last = __shfl_sync(kFullWarp, end, leader);
    // stretch k: slots [k * kLane, (k + 1) * kLane) of the edge array, cut to the row
    for (size_type k = first / kLane + lane; k * kLane < last; k += kWarpThreads) {
      const size_type from = k * kLane > first ? k * kLane : first;
      const size_type to = (k + 1) * kLane < last ? (k + 1) * kLane : last;
      link_slots<kVarint>(at, u, first, from, to, rows, comp, tally);
    }
  }
  if (!long_row) link_slots<kVarint>(row, v, begin, begin, end, rows, comp, tally);
}

template <bool kVarint>
__device__ __forceinline__ void link_sampled(const Rows& out, const Rows& in, int directed,
                                             Stripe stripe, long long r, comp_t* comp,
                                             unsigned char* hooked,
                                             unsigned long long* counts) {
  Tally tally{hooked};
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < stripe.rows; i += stride) {
    const comp_t v = stripe.vertex(i);
    const size_type degree = out.offsets[i + 1] - out.offsets[i];
    if (r < degree) {
      tally.add(v, neighbour_at<kVarint>(out, i, v, out.offsets[i] + r), comp);
    } else if (directed && r - degree < in.offsets[i + 1] - in.offsets[i]) {
      tally.add(v, neighbour_at<kVarint>(in, i, v, in.offsets[i] + (r - degree)), comp);
    }
  }
  tally.flush(counts);
}

// Link global vertex v (local row i) to its out-neighbours and, on a directed graph, its
// in-neighbours, where `take` (every lane of the warp calls it together, as link_row).
template <bool kVarint>
__device__ __forceinline__ void link_rows_of(long long i, comp_t v, bool take, const Rows& out,
                                             const Rows& in, int directed, comp_t* comp,
                                             Tally& tally) {
  link_row<kVarint>(i, v, take ? out.offsets[i] : 0, take ? out.offsets[i + 1] : 0, out, comp,
                    tally);
  if (directed) {
    link_row<kVarint>(i, v, take ? in.offsets[i] : 0, take ? in.offsets[i + 1] : 0, in, comp,
                      tally);
  }
}

// Every neighbour (out, and in on a directed graph) of the owned vertices list[0, count)
// (global ids): the rows left to link after a search that found a whole component
// (reached_bits's rows).
template <bool kVarint>
__device__ __forceinline__ void link_list(const Rows& out, const Rows& in, int directed,
                                          Stripe stripe, const vertex_t* list, long long count,
                                          comp_t* comp, unsigned char* hooked,
                                          unsigned long long* counts) {
  Tally tally{hooked};
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  // Warp-uniform trip count: every lane reaches link_row's ballots together.
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < count;
       base += stride) {
    const long long j = base + threadIdx.x;
    const bool take = j < count;
    const comp_t v = take ? static_cast<comp_t>(list[j]) : stripe.rank;
    const long long i = (v - stripe.rank) / stripe.size;
    link_rows_of<kVarint>(i, v, take, out, in, directed, comp, tally);
  }
  tally.flush(counts);
}

template <bool kVarint>
__device__ __forceinline__ void link_unskipped(const Rows& out, const Rows& in, int directed,
                                               Stripe stripe, const comp_t* skip_label,
                                               comp_t* comp, unsigned char* hooked,
                                               unsigned long long* counts) {
  Tally tally{hooked};
  const comp_t skip = *skip_label;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  // Warp-uniform trip count: every lane reaches link_row's ballots together.
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x; base < stripe.rows;
       base += stride) {
    const long long i = base + threadIdx.x;
    const comp_t v = stripe.vertex(i);
    const bool take = i < stripe.rows && read_label(comp, v) != skip;
    link_rows_of<kVarint>(i, v, take, out, in, directed, comp, tally);
  }
  tally.flush(counts);
}

// The edges (u, v), v >= u, of the owned vertices list[0, count) (global ids), interleaved
// into pairs[0, 2 * capacity) at slots taken from *taken (one atomic a row that has any; those
// past capacity only counted). A row of self loops alone gives (u, u), so every listed vertex is
// in some pair once every rank's rows are taken: each edge between two listed vertices is in
// the row of its smaller end.
template <bool kVarint>
__device__ __forceinline__ void list_pairs(const Rows& out, Stripe stripe, const vertex_t* list,
                                           long long count, int every, vertex_t* pairs,
                                           unsigned long long capacity,
                                           unsigned long long* taken) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; j < count;
       j += stride) {
    const comp_t u = static_cast<comp_t>(list[j]);
    const long long i = (u - stripe.rank) / stripe.size;
    const size_type begin = out.offsets[i];
    const size_type end = out.offsets[i + 1];
    unsigned long long kept = 0;
    for (size_type s = begin; s < end; ++s) {
      kept += every || neighbour_at<kVarint>(out, i, u, s) >= u;
    }
    if (kept == 0) continue;
    unsigned long long slot = atomicAdd(taken, kept);
    for (size_type s = begin; s < end; ++s) {
      const comp_t v = neighbour_at<kVarint>(out, i, u, s);
      if (!every && v < u) continue;
      if (slot < capacity) {
        pairs[2 * slot] = static_cast<vertex_t>(u);
        pairs[2 * slot + 1] = static_cast<vertex_t>(v);
      }
      ++slot;
    }
  }
}

}  // namespace

// The rows of one side as a kernel takes them: plain, or compressed (VarintColumns).
#define DISTBFS_PLAIN_ROWS(side) const size_type *side##offsets, const vertex_t *side##cols
#define DISTBFS_CODED_ROWS(side)                                                          \
  const size_type *side##offsets, const unsigned char *side##bytes,                       \
      const size_type *side##byte_offsets, const size_type *side##point_bytes,            \
      const vertex_t *side##point_values
#define DISTBFS_PLAIN(side) Rows{side##offsets, side##cols, {nullptr, nullptr, nullptr, nullptr}}
#define DISTBFS_CODED(side)                                                                   \
  Rows{side##offsets, nullptr,                                                                \
       {side##bytes, side##byte_offsets, side##point_bytes, side##point_values}}
// After the rows, every link kernel takes the stripe and then, after its own argument, the
// labels, where it marks hooked roots (null: nowhere) and its counts.
#define DISTBFS_STRIPE long long rows, int size, int rank
#define DISTBFS_LABELS comp_t *comp, unsigned char *hooked, unsigned long long *counts

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_neighbour(DISTBFS_PLAIN_ROWS(), DISTBFS_PLAIN_ROWS(in_), int directed, DISTBFS_STRIPE,
                   long long r, DISTBFS_LABELS) {
  link_sampled<false>(DISTBFS_PLAIN(), DISTBFS_PLAIN(in_), directed, Stripe{rows, size, rank}, r,
                      comp, hooked, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_neighbour_varint(DISTBFS_CODED_ROWS(), DISTBFS_CODED_ROWS(in_), int directed,
                          DISTBFS_STRIPE, long long r, DISTBFS_LABELS) {
  link_sampled<true>(DISTBFS_CODED(), DISTBFS_CODED(in_), directed, Stripe{rows, size, rank}, r,
                     comp, hooked, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_rows(DISTBFS_PLAIN_ROWS(), DISTBFS_PLAIN_ROWS(in_), int directed, DISTBFS_STRIPE,
              const comp_t* skip_label, DISTBFS_LABELS) {
  link_unskipped<false>(DISTBFS_PLAIN(), DISTBFS_PLAIN(in_), directed, Stripe{rows, size, rank},
                        skip_label, comp, hooked, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_rows_varint(DISTBFS_CODED_ROWS(), DISTBFS_CODED_ROWS(in_), int directed, DISTBFS_STRIPE,
                     const comp_t* skip_label, DISTBFS_LABELS) {
  link_unskipped<true>(DISTBFS_CODED(), DISTBFS_CODED(in_), directed, Stripe{rows, size, rank},
                       skip_label, comp, hooked, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_listed(DISTBFS_PLAIN_ROWS(), DISTBFS_PLAIN_ROWS(in_), int directed, DISTBFS_STRIPE,
                const vertex_t* list, long long count, DISTBFS_LABELS) {
  link_list<false>(DISTBFS_PLAIN(), DISTBFS_PLAIN(in_), directed, Stripe{rows, size, rank}, list,
                   count, comp, hooked, counts);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_listed_varint(DISTBFS_CODED_ROWS(), DISTBFS_CODED_ROWS(in_), int directed,
                       DISTBFS_STRIPE, const vertex_t* list, long long count, DISTBFS_LABELS) {
  link_list<true>(DISTBFS_CODED(), DISTBFS_CODED(in_), directed, Stripe{rows, size, rank}, list,
                  count, comp, hooked, counts);
}

// The edges of a whole search's rows left (list_pairs): every rank's, all-gathered, are the
// search's remainder, which each rank links whole (link_pairs), so no merge follows. Each edge
// between two rows left is listed once (v >= u), or where `every` (a search stopped at its tail,
// whose rows left also have edges into the reached vertices) every edge of a row.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    listed_pairs(DISTBFS_PLAIN_ROWS(), DISTBFS_STRIPE, const vertex_t* list, long long count,
                 int every, vertex_t* pairs, unsigned long long capacity,
                 unsigned long long* taken) {
  list_pairs<false>(DISTBFS_PLAIN(), Stripe{rows, size, rank}, list, count, every, pairs,
                    capacity, taken);
}

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    listed_pairs_varint(DISTBFS_CODED_ROWS(), DISTBFS_STRIPE, const vertex_t* list,
                        long long count, int every, vertex_t* pairs,
                        unsigned long long capacity, unsigned long long* taken) {
  list_pairs<true>(DISTBFS_CODED(), Stripe{rows, size, rank}, list, count, every, pairs,
                   capacity, taken);
}

// Marks a thread of hooked_pairs reads in a row: a block takes one slot range (one atomicAdd)
// for kBlockThreads * kMarksPerThread vertices, so that the slots of a sampled merge, whose
// hooks are half the vertices, do not queue on one counter.
constexpr int kMarksPerThread = 16;

// The pairs (vertex, label) of the roots marked in `marks` (cleared), interleaved, into pairs at
// slots taken from *count: the hooks this replica sends.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    hooked_pairs(long long n, unsigned char* marks, const comp_t* comp, vertex_t* pairs,
                 unsigned long long* count) {
  typedef cub::BlockScan<unsigned int, kBlockThreads> Scan;
  __shared__ typename Scan::TempStorage storage;
  __shared__ unsigned long long block_first;
  const long long span = static_cast<long long>(kBlockThreads) * kMarksPerThread;
  for (long long base = blockIdx.x * span; base < n; base += gridDim.x * span) {
    const long long first = base + static_cast<long long>(threadIdx.x) * kMarksPerThread;
    const long long last = first + kMarksPerThread < n ? first + kMarksPerThread : n;
    unsigned int mine = 0;
    for (long long v = first; v < last; ++v) mine += marks[v] != 0;
    unsigned int offset, total;
    Scan(storage).ExclusiveSum(mine, offset, total);
    if (threadIdx.x == 0) block_first = total ? atomicAdd(count, total) : 0;
    __syncthreads();
    unsigned long long slot = block_first + offset;
    for (long long v = first; mine != 0 && v < last; ++v) {
      if (marks[v] == 0) continue;
      marks[v] = 0;
      pairs[2 * slot] = static_cast<vertex_t>(v);
      pairs[2 * slot + 1] = static_cast<vertex_t>(comp[v]);
      ++slot;
    }
    __syncthreads();  // storage and block_first are reused
  }
}

// count pairs (vertex, parent), interleaved, that other ranks hooked, or a whole search's
// remainder (listed_pairs'); nothing is marked: every rank links them. A pair (u, u) links
// nothing and is not counted: a vertex listed alone, or the zeros padding listed_pairs' output.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    link_pairs(const vertex_t* pairs, long long count, comp_t* comp, unsigned long long* counts) {
  Tally tally{nullptr};
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const comp_t u = pairs[2 * i];
    const comp_t v = pairs[2 * i + 1];
    if (u != v) tally.add(u, v, comp);  // (u, u): a vertex listed alone, or listed_pairs' padding
  }
  tally.flush(counts);
}

namespace {

// Pointer jumping that writes every step, so vertices of the same path shorten it for each
// other (gapbs's Compress). A root (every isolated vertex, every component's smallest) reads its
// label once.
__device__ __forceinline__ void compress_vertex(comp_t v, comp_t* comp) {
  comp_t up = comp[v];
  if (up == v) return;
  for (comp_t top = read_label(comp, up); up != top; up = top, top = read_label(comp, up)) {
    comp[v] = top;
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kBlockThreads) compress(long long n, comp_t* comp) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long v = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; v < n;
       v += stride) {
    compress_vertex(v, comp);
  }
}

// The vertices list[0, count) (global ids) to their roots: after a search that found a whole
// component, every other vertex is a root or under one.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    compress_listed(const vertex_t* list, long long count, comp_t* comp) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; j < count;
       j += stride) {
    compress_vertex(static_cast<comp_t>(list[j]), comp);
  }
}

// comp[list[j]] = list[j] for j < count: the vertices of a whole search's remainder (listed_pairs'
// pairs, all-gathered: repeats and the (0, 0) padding alike) their own labels, in place of a
// pass over every vertex (link_pairs reads no other label). Where `reached` is given (a flag
// for each list[j]: reached_ends', OR-reduced over the ranks), a flagged vertex takes `label`
// instead, and comp[label] = label: a search stopped at its tail, whose rows left have edges
// into the reached vertices, all under `label`.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    own_labels(const vertex_t* list, long long count, const unsigned char* reached,
               comp_t label, comp_t* comp) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (reached != nullptr && first == 0) comp[label] = label;
  for (long long j = first; j < count; j += stride) {
    const comp_t v = static_cast<comp_t>(list[j]);
    comp[v] = reached != nullptr && reached[j] ? label : v;
  }
}

// reached[j] = 1 where list[j] is a vertex this rank owns whose bit in `bits` (reached_bits':
// bit i for local vertex i) is set, else 0, for j < count.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    reached_ends(const vertex_t* list, long long count, const unsigned int* bits, int size,
                 int rank, unsigned char* reached) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long j = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; j < count;
       j += stride) {
    const long long v = static_cast<long long>(list[j]);
    const long long i = v / size;
    const bool mine = v % size == rank;
    reached[j] = mine && ((bits[i / kWarpThreads] >> (i % kWarpThreads)) & 1u);
  }
}

// Vertices a thread of seed_labels' pass over every owned vertex takes a trip, its loads
// issued together: one load in flight a thread leaves such a pass waiting on
// memory latency, not bandwidth, on a resident grid.
constexpr int kPassUnroll = 4;

namespace {

struct Larger {
  __device__ __forceinline__ unsigned long long operator()(unsigned long long a,
                                                           unsigned long long b) const {
    return a > b ? a : b;
  }
};

}  // namespace

// summary[0] += the vertices of levels[0, count) reached, summary[1] = max(itself, ~(the first
// one's index)): zeroed counts mean none yet; bits (zeroed beyond count by the caller) get a bit
// per vertex. A warp takes 32 consecutive words (1,024 vertices) a trip: its step j packs word j
// by a ballot over 32 consecutive levels (coalesced loads, kReachedLoads in flight a thread), and
// lane j keeps that word, so the words are stored, and the rows with edges read, coalesced. A
// block adds its sums by one atomic each (a resident grid: a few thousand). Where `edges` (the
// rows with out-edges, the same layout) is given, the same pass appends the owned vertices whose
// bit stays clear and that have edges to rows (global ids: local row * size + rank), and their
// out-edges (`offsets`: the rows' offsets) to summary[3]: after a search that found a whole
// component, the only rows left to link, and a bound on listed_pairs' pairs of them: the warp's
// lanes rank their rows by a shuffle scan, and one atomic on summary[2] a trip reserves them
// all. (Lane 0 alone storing each word and reserving its rows, the other 31 idle, takes 2.2x as
// long at Kronecker scale 27: benchmarks/RESULTS.md.)
constexpr int kReachedLoads = 8;

extern "C" __global__ void __launch_bounds__(kBlockThreads)
    reached_bits(const label_t* levels, long long count, unsigned int* bits,
                 const unsigned int* edges, const size_type* offsets, int size, int rank,
                 vertex_t* rows, unsigned long long* summary) {
  const int lane = threadIdx.x % kWarpThreads;
  const long long words = (count + kWarpThreads - 1) / kWarpThreads;
  const long long warps = static_cast<long long>(gridDim.x) * (blockDim.x / kWarpThreads);
  const long long stride = warps * kWarpThreads;  // words a trip of the whole grid
  unsigned long long reached = 0, first = ~0ull, listed_edges = 0;
  // Warp-uniform trip count: every lane reaches the ballots and shuffles together.
  for (long long base = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x -
                         lane);  // this warp's first word: warp index * 32
       base < words; base += stride) {
    const long long w = base + lane;  // the word this lane keeps
    const unsigned int with_edges = edges != nullptr && w < words ? edges[w] : 0u;
    unsigned int word = 0;
#pragma unroll
    for (int j0 = 0; j0 < kWarpThreads; j0 += kReachedLoads) {
      bool set[kReachedLoads];
#pragma unroll
      for (int j = 0; j < kReachedLoads; ++j) {  // the loads first, all in flight at once
        const long long i = (base + j0 + j) * kWarpThreads + lane;
        set[j] = i < count && levels[i] != distbfs::kUnreached;
      }
#pragma unroll
      for (int j = 0; j < kReachedLoads; ++j) {
        const unsigned int ballot = __ballot_sync(kFullWarp, set[j]);
        word = lane == j0 + j ? ballot : word;
      }
    }
    if (w < words) bits[w] = word;
    if (word) {
      reached += __popc(word);
      const unsigned long long at = static_cast<unsigned long long>(w) * kWarpThreads +
                                    __ffs(word) - 1;
      first = at < first ? at : first;
    }
    unsigned int left = with_edges & ~word;
    if (__ballot_sync(kFullWarp, left != 0) == 0) continue;
    const unsigned int mine = __popc(left);
    unsigned int before = mine;  // inclusive scan of the lanes' row counts
#pragma unroll
    for (int d = 1; d < kWarpThreads; d *= 2) {
      const unsigned int up = __shfl_up_sync(kFullWarp, before, d);
      before += lane >= d ? up : 0u;
    }
    unsigned long long slot = 0;
    if (lane == kWarpThreads - 1) {
      slot = atomicAdd(summary + 2, static_cast<unsigned long long>(before));
    }
    slot = __shfl_sync(kFullWarp, slot, kWarpThreads - 1) + before - mine;
    for (; left; left &= left - 1) {
      const long long row = w * kWarpThreads + __ffs(left) - 1;
      rows[slot++] = static_cast<vertex_t>(row * size + rank);
      listed_edges += static_cast<unsigned long long>(offsets[row + 1] - offsets[row]);
    }
  }
  typedef cub::BlockReduce<unsigned long long, kBlockThreads> Reduce;
  __shared__ typename Reduce::TempStorage storage;
  const unsigned long long total = Reduce(storage).Sum(reached);
  __syncthreads();  // storage is reused
  const unsigned long long latest = Reduce(storage).Reduce(~first, Larger());
  __syncthreads();
  const unsigned long long out_edges = Reduce(storage).Sum(listed_edges);
  if (threadIdx.x == 0 && total) {
    atomicAdd(summary, total);
    atomicMax(summary + 1, latest);
  }
  if (threadIdx.x == 0 && out_edges) atomicAdd(summary + 3, out_edges);
}

// comp[i] for i < count: `label` where bit i is set, else i's own id. One row of bits (rows
// 1): this rank's owned vertices, local i being global i * size + rank; every rank's (rows
// size, words_per_row each): a replica, global vertex i being bit i / size of row i % size.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    seed_labels(const unsigned int* bits, long long words_per_row, int rows, int size, int rank,
                long long count, comp_t label, comp_t* comp) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x * kPassUnroll;
  for (long long base = static_cast<long long>(blockIdx.x) * blockDim.x * kPassUnroll;
       base < count; base += stride) {
    unsigned int words[kPassUnroll];
#pragma unroll
    for (int k = 0; k < kPassUnroll; ++k) {  // the loads first, all in flight at once
      const long long i = base + k * blockDim.x + threadIdx.x;
      const long long b = rows == 1 ? i : i / size;
      const unsigned int* row = rows == 1 ? bits : bits + (i % size) * words_per_row;
      words[k] = i < count ? row[b / kWarpThreads] >> (b % kWarpThreads) : 0u;
    }
#pragma unroll
    for (int k = 0; k < kPassUnroll; ++k) {
      const long long i = base + k * blockDim.x + threadIdx.x;
      if (i < count) comp[i] = (words[k] & 1u) ? label : (rows == 1 ? i * size + rank : i);
    }
  }
}

// labels[rows[i] / size] = source[rows[i]] (a replica, by global id) or source[rows[i] / size]
// (owned labels, local order) for i < count: the owned rows listed (global ids) take their
// labels from another run's.
extern "C" __global__ void __launch_bounds__(kBlockThreads)
    take_labels(const vertex_t* rows, long long count, int size, int replica,
                const comp_t* source, comp_t* labels) {
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    const comp_t v = static_cast<comp_t>(rows[i]);
    const comp_t local = v / size;
    labels[local] = __ldcg(source + (replica ? v : local));
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
