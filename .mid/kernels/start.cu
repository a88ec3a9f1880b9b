/*
 * start.cu: the start of a BFS (Merrill, Garland & Grimshaw 2012, section 6.1: every rank holds
 * the labels of its owned vertices and a visited bitmask over all n) in ONE launch, in place of
 * two or three fills and four small copies from the host (each a driver call of several
 * microseconds, which a road network's two-millisecond search notices):
 *   - every owned vertex's label (and parent, where the search keeps them) UNREACHED;
 *   - the visited bitmask cleared, but for the source's bit (every rank);
 *   - the level counters cleared;
 *   - on the source's owner (row >= 0): its label 0, its parent itself, the frontier's first
 *     slot its row.
 * A search from several sources passes source = row = -1 and marks them afterwards.
 *
 * Each element is written once, with its final value, so no ordering is needed within the grid.
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
