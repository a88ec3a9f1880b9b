/*
 * share.cu: a small graph's search on several GPUs of one node, run by ONE rank (the searcher)
 * on its copy of the whole graph, each other rank's part delivered into that rank's memory
 * through CUDA IPC (distbfs.traversals.bfs, "delivered shares"). Every rank searching its copy
 * whole costs the slowest GPU's search; one searcher costs its search and one copy kernel.
 *
 * Every rank holds a share buffer, mapped on every other rank: a header of kShareHeaderWords
 * int64 words, then `capacity` labels (label_t), then `capacity` parents (pred_t, 8-aligned);
 * the vertices of rank r are v % size == r, at row v / size. Header words:
 *   [kSharePosted]  written by the searcher: the epoch of the last delivery;
 *   [kShareTaken]   written by the rank itself: the epoch it last copied out (the searcher
 *                   delivers epoch e only once every peer took e - 1: a buffer is never
 *                   overwritten while read);
 *   [kShareBlocks]  the kernel's own blocks done, for the last block's post (reset by it).
 *
 *   deliver_shares_kernel  the searcher, right after its search: waits for every peer's taken
 *                          epoch; copies each peer's labels (and parents) from its copy
 *                          (global order) into the peer's buffer (local order); every block
 *                          fences at system scope, and the last one posts the epoch.
 *   take_share_kernel      every other rank, once the searcher said its delivery is queued
 *                          (a host message: a kernel spinning on one GPU while the other
 *                          searches slowed that search by 45-90 us on luxembourg_osm): waits
 *                          the last microseconds for the epoch in its own header; copies its
 *                          labels (and parents) out into the search's own arrays; the last
 *                          block records the taken epoch.
 * A wait longer than timeout_ns (a rank that never came) sets status[0] = 1 (mapped host
 * memory: the host reads it after the launch with no copy) and leaves the kernel.
 */
#include "common.cuh"

namespace {

constexpr int kSharePosted = 0;
constexpr int kShareTaken = 1;
constexpr int kShareBlocks = 2;
constexpr int kStatusFailed = 0;

__device__ __forceinline__ label_t* share_labels(size_type* header) {
    return reinterpret_cast<label_t*>(header + DISTBFS_SHARE_HEADER_WORDS);
}

__device__ __forceinline__ pred_t* share_preds(size_type* header, size_type capacity) {
    const size_type label_words = (capacity * sizeof(label_t) + sizeof(pred_t) - 1) / sizeof(pred_t);
    return reinterpret_cast<pred_t*>(header + DISTBFS_SHARE_HEADER_WORDS) + label_words;
}

// Thread 0 of each block waits until `*word` >= `at_least`; false (the whole block) after
// timeout_ns without it.
__device__ bool block_wait(const size_type* word, size_type at_least, size_type timeout_ns) {
    __shared__ int arrived;
    if (threadIdx.x == 0) {
        const unsigned long long deadline = distbfs::global_time_ns() + timeout_ns;
        arrived = 1;
        while (distbfs::load_acquire_system(word) < at_least) {
            if (distbfs::global_time_ns() > deadline) {
                arrived = 0;
                break;
            }
        }
    }
    __syncthreads();
    return arrived != 0;
}

// True in the last block of the grid to call it (after this block's writes are visible at
// system scope); the count in `*blocks` goes back to 0 there.
__device__ bool last_block(size_type* blocks) {
    __shared__ int last;
    __threadfence_system();
    __syncthreads();
    if (threadIdx.x == 0) {
        last = atomicAdd(reinterpret_cast<unsigned long long*>(blocks), 1ull) == gridDim.x - 1;
        if (last) *blocks = 0;
    }
    __syncthreads();
    return last != 0;
}

}  // namespace

extern "C" __global__ void __launch_bounds__(DISTBFS_BLOCK_THREADS) deliver_shares_kernel(
    const label_t* __restrict__ labels,  // in: every vertex's label (global order)
    const pred_t* __restrict__ preds,    // in: every vertex's parent, or null
    size_type n,                         // in: vertices
    const size_type* buffers,            // in: address of rank o's share buffer at [o]
    int rank,                            // in: this rank (the searcher)
    int size,                            // in: ranks
    size_type capacity,                  // in: labels (and parents) a share buffer holds
    size_type epoch,                     // in: this delivery's epoch (1, 2, ...)
    size_type timeout_ns,                // in: how long to wait for a peer
    size_type* status)                   // out: [0] = 1 when a peer never took the last one
{
    size_type* own = reinterpret_cast<size_type*>(buffers[rank]);
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        size_type* header = reinterpret_cast<size_type*>(buffers[peer]);
        if (!block_wait(header + kShareTaken, epoch - 1, timeout_ns)) {
            if (threadIdx.x == 0) status[kStatusFailed] = 1;
            return;
        }
    }
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    const size_type first = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        size_type* header = reinterpret_cast<size_type*>(buffers[peer]);
        label_t* to_labels = share_labels(header);
        pred_t* to_preds = share_preds(header, capacity);
        const size_type rows = (n - peer + size - 1) / size;
        for (size_type row = first; row < rows; row += stride) {
            const size_type v = row * size + peer;
            to_labels[row] = labels[v];
            if (preds != nullptr) to_preds[row] = preds[v];
        }
    }
    if (!last_block(own + kShareBlocks) || threadIdx.x != 0) return;
    for (int peer = 0; peer < size; ++peer) {
        if (peer == rank) continue;
        size_type* header = reinterpret_cast<size_type*>(buffers[peer]);
        distbfs::store_release_system(header + kSharePosted, epoch);
    }
}

extern "C" __global__ void __launch_bounds__(DISTBFS_BLOCK_THREADS) take_share_kernel(
    size_type* header,            // in/out: this rank's share buffer (header first)
    size_type capacity,           // in: labels (and parents) it holds
    size_type rows,               // in: this rank's vertices
    label_t* __restrict__ labels,  // out: their labels (local order)
    pred_t* __restrict__ preds,    // out: their parents, or null
    size_type epoch,              // in: the delivery to take
    size_type timeout_ns,         // in: how long to wait for the searcher
    size_type* status)            // out: [0] = 1 when it never came
{
    if (!block_wait(header + kSharePosted, epoch, timeout_ns)) {
        if (threadIdx.x == 0) status[kStatusFailed] = 1;
        return;
    }
    const label_t* from_labels = share_labels(header);
    const pred_t* from_preds = share_preds(header, capacity);
    const size_type stride = static_cast<size_type>(gridDim.x) * blockDim.x;
    for (size_type row = static_cast<size_type>(blockIdx.x) * blockDim.x + threadIdx.x;
         row < rows; row += stride) {
        labels[row] = __ldcg(from_labels + row);
        if (preds != nullptr) preds[row] = __ldcg(from_preds + row);
    }
    if (!last_block(header + kShareBlocks) || threadIdx.x != 0) return;
    distbfs::store_release_system(header + kShareTaken, epoch);
}
