"""CUDA backend: the level stages of Merrill, Garland & Grimshaw 2012 as CUDA kernels, one module
per stage (``CudaBackend`` in ``backend``; this package imports nothing, so CPU-only machines can
import ``launch_policy`` and run ``python -m distbfs.backends.cuda.kernels``).

The two-phase strategy (section 5.3) with the multi-GPU fused filter+partition (section 6.1):

- ``expand`` (``kernels/expand.cu``): scan+warp+CTA gathering (4.1) of the frontier's adjacency
  lists into the edge queue, with the expanding vertex per item when predecessors are kept.
- ``filter_partition`` (``kernels/filter_partition.cu``): visited-bitmask test, history and warp
  culling (4.2), then an atomicOr claim of the vertex's bit, which makes the culling exact
  (each unvisited vertex is sent once); binning by owner (``v % nbins``).
- ``contract`` (``kernels/contract.cu``): status lookup against the owned labels, labeling with
  atomicCAS (each vertex enters the next frontier once), predecessors, next vertex frontier;
  several ranks contract the own bin before the exchange (``contract_local``).
- ``fused`` (``kernels/contract_expand.cu``, sections 5.2/5.4): one persistent cooperative grid
  runs levels back to back while the frontier is small, on one rank, on a replica of the whole
  graph, or on every GPU of a node at once through peer memory.
- ``bottom_up`` (``kernels/bottom_up.cu``, Beamer et al. 2012): the direction-optimizing levels.

Supporting modules: ``launch_policy`` (all tuning), ``kernels`` (the one kernel loader),
``counters`` (the per-level counters and their read), ``buffers`` (device queues, per-graph
resources), ``search`` (a search's start), ``timing`` (the event timer).

Host protocol. ``prepare`` builds, once per graph, what its searches reuse: the edge queue, the
degree bounds and the kernels (each stage compiled at its first use). ``start`` allocates the
search's per-vertex arrays and small queues. The edge queue grows to the exact length of the
largest expansion so far (m_f is known before every expansion), never past ``queue_sizing`` x the
local edges; a level with more edges is strip-mined (``expansion_strips``). Otherwise no level
allocates (but the first with several bins, the first striped level, the first fused run or the
first bottom-up level allocates its extra queues once). Kernels append to queues with one atomicAdd
per block on a small per-level counter array and store nothing past a queue's capacity; the host
reads the counters through pinned memory and raises ``DeviceError`` on overflow, naming the queue,
the size needed and the setting to raise. Launch grids come from host-known bounds; kernels
grid-stride over the lengths they read on the device, so no launch waits for a length, and no
Python work is proportional to a frontier.

Reads per level: one rank: ONE small read, in ``contract`` (the bin's and the edge frontier's
lengths stay on the device until then: ``PendingBins``, ``DeviceEdgeFrontier``). Several
ranks: two, the bin counts before the exchange and the frontier length after contract; two
ranks read the bin counts on a side stream as the exchange resolves their ``MeetingBins``,
after ``contract_local`` launched the own bin's contraction. A bottom-up level: one.
"""

__all__: list[str] = []
