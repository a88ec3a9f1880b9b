/*
 * start.cu: the two ends of a BFS over the labels (Merrill, Garland & Grimshaw 2012, section 6.1:
 * every rank holds the labels of its owned vertices and a visited bitmask over all n).
 *
 *   search_start       the start in ONE launch, in place of two or three fills and four small
 *                      copies from the host (each a driver call of several microseconds, which
 *                      a road network's two-millisecond search notices):
 *                        - every owned vertex's label (and parent, where the search keeps
 *                          them) UNREACHED;
 *                        - the visited bitmask cleared, but for the source's bit (every rank);
 *                        - the level counters cleared;
 *                        - on the source's owner (row >= 0): its label 0, its parent itself,
 *                          the frontier's first slot its row.
 *                      A search from several sources passes source = row = -1 and marks them
 *                      afterwards. Each element is written once, with its final value, so no
 *                      ordering is needed within the grid.
 *   unexplored_kernel  the owned vertices still unlabeled and their out-edges (n_u, m_u),
 *                      summed into two counters: the direction heuristic's inputs where the
 *                      counts carried from level to level are lost (after the replicated
 *                      levels of several ranks), and at a search's end what Graph500's
 *                      statistics take (the reached vertices and their edges: the rest), in
 *                      one pass and one read. In this module, which every search builds
 *                      first, so that a first run's statistics compile nothing more.
 */
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(DISTBFS_BLOCK_THREADS)
    search_start(label_t* labels, pred_t* preds, long long nlocal, mask_word_t* mask,
                 long long mask_words, long long* counters, long long counter_slots,
                 vertex_t* frontier, long long source, long long row) {
  const long long threads = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const long long source_word = source >= 0 ? source / 32 : -1;
  for (long long i = first; i < nlocal; i += threads) {
    labels[i] = i == row ? 0 : distbfs::kUnreached;
    if (preds != nullptr) preds[i] = i == row ? source : static_cast<pred_t>(-1);
  }
  for (long long i = first; i < mask_words; i += threads) {
    mask[i] = i == source_word ? 1u << (source & 31) : 0u;
  }
  for (long long i = first; i < counter_slots; i += threads) counters[i] = 0;
  if (first == 0 && row >= 0) frontier[0] = static_cast<vertex_t>(row);
}

// Vertices a thread of unexplored_kernel takes a trip: its labels loaded together, then their
// rows' offsets, so that a thread keeps several loads in flight (with one, the pass reaches
// half an H100's memory bandwidth: benchmarks/RESULTS.md, "a search's statistics").
constexpr int kCountedPerTrip = 4;

extern "C" __global__ void __launch_bounds__(DISTBFS_BLOCK_THREADS) unexplored_kernel(
    const label_t* __restrict__ labels,         // in: label of each owned vertex
    const size_type* __restrict__ row_offsets,  // in: CSR row offsets (out-edges)
    size_type nlocal,                           // in: owned vertices
    size_type* __restrict__ totals)             // in/out: [0] += unlabeled vertices,
                                                //     [1] += their out-edges
{
  const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
  size_type unlabeled = 0;
  size_type degrees = 0;
  // A trip covers vertices first + k * stride (k < kCountedPerTrip): each of its loads is
  // coalesced across the warp.
  for (size_type first = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
       first < nlocal; first += kCountedPerTrip * stride) {
    label_t level[kCountedPerTrip];
#pragma unroll
    for (int k = 0; k < kCountedPerTrip; ++k) {
      const size_type v = first + k * stride;
      level[k] = v < nlocal ? labels[v] : 0;
    }
#pragma unroll
    for (int k = 0; k < kCountedPerTrip; ++k) {
      const size_type v = first + k * stride;
      if (v < nlocal && level[k] == distbfs::kUnreached) {
        ++unlabeled;
        degrees += row_offsets[v + 1] - row_offsets[v];
      }
    }
  }
  unlabeled = distbfs::warp_sum(unlabeled);
  degrees = distbfs::warp_sum(degrees);
  if ((threadIdx.x & (distbfs::kWarpThreads - 1)) == 0) {
    if (unlabeled > 0) distbfs::reserve_slots(totals, unlabeled);
    if (degrees > 0) distbfs::reserve_slots(totals + 1, degrees);
  }
}
