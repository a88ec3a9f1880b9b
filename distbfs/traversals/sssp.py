"""Single-source shortest paths: delta-stepping (Meyer & Sanders, J. Algorithms 2003) on the
striped graph, with the engine's stages and exchange.

Tentative distances fall into buckets of width delta (``distbfs.engine.buckets``). Each bucket,
every rank: takes its unsettled vertices below the bucket's end; relaxes their light edges
(weight <= delta) into requests (target, distance, and with predecessors hops and parent);
culls and reduces them to one per target and bins them by owner (``partition_min``: the
min-reduction form of filter+partition); exchanges the bins; and contracts what it received by
keeping, per vertex, the lexicographic minimum (``contract_min``). Vertices that improved below
the bucket's end are relaxed again, until no rank has any (one all-reduce per step: the
termination test). The bucket's vertices are then settled and their heavy edges relaxed once;
one all-reduce of the smallest unsettled distance picks the next bucket, and the search ends
when there is none. The stages come from a backend, the exchanges from a communicator: this
module imports neither cupy nor mpi4py.

A distance limit X stops the search before the first bucket whose lower bound (the smallest
unsettled distance) exceeds X: every vertex within X is settled by then, and the vertices left
farther than X are marked unreached (``NO_PATH``, predecessor ``UNREACHED``).

Invariants: a vertex's (distance, hops, parent) only decreases, lexicographically, and is final
once settled; so the distances are exact, and the predecessors (fewest hops among the shortest
paths, then the smallest parent) are the same on any backend and rank count and acyclic even
over zero-weight edges. Every rank runs the same buckets and steps (decided from all-reduced
numbers only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..constants import NO_PATH, UNREACHED
from ..engine.buckets import BucketLog, BucketStats, bucket_end
from ..engine.plan import PathPlan


@dataclass
class PathSearch:
    """This rank's part of one shortest-path search: distances and predecessors of its owned
    vertices (local order), the buckets' statistics, and the state."""

    source: int
    distances: Any
    predecessors: Any | None
    buckets: list[BucketStats]
    delta: float
    state: Any


def delta_stepping(
    plan: PathPlan,
    source: int,
    *,
    predecessors: bool = False,
    timer: Any = None,
    max_distance: float | None = None,
) -> PathSearch:
    """Shortest distances (and a shortest-path tree) from global vertex ``source``, up to
    ``max_distance`` (None: no limit) (collective)."""
    backend, comm = plan.backend, plan.comm
    timer = backend.make_timer(False) if timer is None else timer
    limit = NO_PATH if max_distance is None else max_distance
    state = plan.start(source, predecessors)
    log = BucketLog()
    lower = comm.allreduce(backend.next_bucket(state), op="min")
    while lower < NO_PATH and lower <= limit:
        end = bucket_end(lower, plan.delta)
        members = [backend.bucket_members(state, end)]
        counters = [0] * 5  # relaxations, sent, sent remote, improved, settled
        phases = 0
        while True:  # light edges, until nothing in the bucket improves
            relax_step(plan, state, members[-1], end, counters, timer, heavy=False)
            phases += 1
            with timer.phase("termination"):
                if not comm.allreduce(state.frontier_size, op="max"):
                    break
            members.append(state.frontier)
        with timer.phase("settle"):
            settled = backend.settle(state, members)
        counters[4] = int(settled.shape[0])
        if plan.heavy:  # heavy edges, once, from the settled bucket
            relax_step(plan, state, settled, end, counters, timer, heavy=True)
        with timer.phase("termination"):
            next_lower = comm.allreduce(backend.next_bucket(state), op="min")
        log.bucket(int(lower // plan.delta), lower, [phases, *counters])
        timer.next_level()
        lower = next_lower
    state.scratch.clear()
    if limit < NO_PATH:
        cut_beyond(state, limit)
    preds = state.preds
    return PathSearch(source, state.distances, preds, log.stats(comm, timer), plan.delta, state)


def cut_beyond(state: Any, limit: float) -> None:
    """Mark the owned vertices farther than ``limit`` unreached (distance ``NO_PATH``, hops 0,
    predecessor ``UNREACHED``), as a search that never reached them leaves them."""
    far = state.distances > limit
    state.distances[far] = NO_PATH
    if state.preds is not None:
        state.preds[far] = UNREACHED
        state.hops[far] = 0


def relax_step(
    plan: PathPlan,
    state: Any,
    vertices: Any,
    end: float,
    counters: list[int],
    timer: Any,
    *,
    heavy: bool,
) -> None:
    """Relax the light or heavy edges of ``vertices``, reduce and bin the requests by owner,
    exchange the bins, contract them (section 6.1's stages with a min-reduction); adds to
    ``counters`` (relaxations, sent, sent remote, improved)."""
    backend, comm = plan.backend, plan.comm
    with timer.phase("relax"):
        requests = backend.relax(plan.graph, state, vertices, plan.delta, heavy)
    with timer.phase("partition_min"):
        bins = backend.partition_min(state, requests, comm.size)
    with timer.phase("exchange"):
        received = comm.exchange_bins(bins)
    with timer.phase("contract_min"):
        improved = backend.contract_min(plan.graph, state, received, end)
    sent = bins.counts
    counters[0] += requests.size
    counters[1] += int(sent.sum())
    counters[2] += int(sent.sum() - sent[comm.rank])
    counters[3] += improved
