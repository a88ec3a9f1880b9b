"""Connected components: Afforest (Sutton, Ben-Nun & Barak, "Optimizing Parallel Graph
Connectivity Computation via Subgraph Sampling", IPDPS 2018; gapbs ``cc.cc``) on the striped
graph, with the engine's stages and exchange.

A min-label union-find forest over the vertices, every label on its vertex's owner (the state:
``distbfs.backends.arrays.components``). Afforest links a sparse sampled subgraph first (the
r-th neighbour of every vertex, for r < ``sample_rounds``), finds the largest intermediate
component by reading the labels of a fixed set of hashed vertices, and then links the remaining
edges of the vertices outside it only: an edge inside that component joins a tree with itself,
and any other edge lies in the row of an endpoint outside it (directed graphs: out- and
in-neighbours). On a dense undirected graph (``ComponentPlan.search``) a direction-optimizing
BFS from the highest-degree vertex finds the giant component instead (``search_giant``): its
reached vertices form one tree before any link, and a search that ran to its end has found a
whole component, so the sampling is skipped; the same finish follows.

On one rank a backend that links in place (``ComponentPlan.in_place``) joins each set in one
lock-free union-find pass and a compress. Otherwise linking a set runs in rounds, until every
edge joins equal labels (one all-reduce per round: the termination test): the labels of the
edges' far ends are asked of their owners (one request and one reply), the edges joining
different labels are kept, each becomes a hook request (the larger label, a root, to point at
the smaller) reduced by minimum and binned by the root's owner, exchanged and applied there
(``distbfs.backends.arrays.hook``), and a compress (pointer jumping, one request/reply per
jump and an all-reduce of the vertices still jumping) makes every tree a star again. This
module imports neither cupy nor mpi4py.

Invariants: every label is the id of a vertex of the same component, no larger than its vertex;
a hook only lowers a root's label, so the forest has no cycle and each tree's root is its
smallest vertex; after the last round every edge joins equal labels and every tree is a star,
so every vertex's label is the smallest vertex id of its component (canonical: the same labels
on any backend and rank count, and the rounds are the same too, being decided from all-reduced
numbers and hashed samples only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..engine.components import ComponentPlan, RoundLog, RoundStats
from .bfs import release_queues, run_levels


@dataclass
class ComponentSearch:
    """This rank's part of one connected-components run: the label of each owned vertex (local
    order), the largest intermediate component's label (whose vertices skipped their remaining
    edges; -1: none), the rounds' statistics, and the state."""

    labels: Any
    giant: int
    rounds: list[RoundStats]
    state: Any


@dataclass
class RoundRun:
    """A run whose rounds are done (``run_rounds``), before its round table (``round_table``):
    the plan, this rank's labels, the largest intermediate component's label (an int, or a 0-d
    device array not read yet), the round log and the state."""

    plan: ComponentPlan
    labels: Any
    giant: Any
    log: RoundLog
    state: Any


def afforest(plan: ComponentPlan, *, timer: Any = None) -> ComponentSearch:
    """Connected components (weakly connected on a directed graph) (collective): each owned
    vertex's label becomes the smallest vertex id of its component; with the round table."""
    timer = plan.backend.make_timer(False) if timer is None else timer
    return round_table(run_rounds(plan, timer=timer), timer)


def round_table(run: RoundRun, timer: Any) -> ComponentSearch:
    """The ``ComponentSearch`` of ``run`` (collective): its counters summed over the ranks and
    its phases' slowest times (statistics, made after a caller has taken the run's time)."""
    plan = run.plan
    rounds = run.log.stats(plan.comm, timer, plan.backend.to_host)
    return ComponentSearch(run.labels, int(run.giant), rounds, run.state)


def run_rounds(plan: ComponentPlan, *, timer: Any = None) -> RoundRun:
    """The rounds of one connected-components run (collective): the run itself, whose time a
    caller takes before the round table is made."""
    timer = plan.backend.make_timer(False) if timer is None else timer
    log = RoundLog()
    rows = None  # where the search was whole: this rank's rows left to link
    reached = None  # where it stopped at its tail: this rank's reached bits
    if plan.search is not None:  # the giant component by a BFS from the hub
        state, giant, whole, rows, pairs, reached = search_giant(plan, log, timer)
    else:
        state, giant, whole = plan.start(), -1, False
    if not whole:
        for r in range(plan.sample_rounds):  # the sampled subgraph: neighbour r of every vertex
            link_edges(plan, state, f"sample {r}", log, timer, neighbour=r)
        if plan.replicated and plan.sample_rounds:  # into compressed replicas: label reads
            merge(plan, state, "merge samples", log, timer)
        with timer.phase("largest"):
            giant = plan.largest_label(state)
    direct = plan.in_place and plan.comm.size == 1  # one rank links in its labels in place
    if rows is not None and not direct:  # the owned labels seeded; the remainder's own run
        link_remainder(plan, state, rows, pairs, log, timer, reached)
    else:
        replica = plan.replicated
        link_edges(plan, state, "finish", log, timer, skip=giant, rows=rows, compress=not replica)
        if replica:  # few hooks: the merge's compress serves both
            merge(plan, state, "merge", log, timer)
            state = plan.owned(state)
    return RoundRun(plan, state.labels, giant, log, state)


def search_giant(
    plan: ComponentPlan, log: RoundLog, timer: Any
) -> tuple[Any, int, bool, Any, int, Any]:
    """A BFS from ``plan.hub`` of at most ``plan.search_levels`` levels, stopped at its tail
    (collective): every vertex it reaches joins one tree, a star under the smallest of them, in
    a new run's state (a replica's from every rank's reached bits, one all-gather, where the
    search counts as partial and the plan is ``replicated``; else this rank's). Returns the
    state, that label, whether the search counts as whole and, where it does, this rank's
    vertices it did not reach that have edges (global ids; else None): the only rows left to
    link, since no edge leaves a whole component and a tail's vertices reach the rest through
    their own edges (``distbfs.engine.components``); where the plan is ``replicated``, the most
    out-edges any rank's rows left have (a bound on their pairs: ``link_remainder``; else 0);
    and where a whole search stopped at its tail, this rank's reached bits (else None)."""
    backend, comm, graph = plan.backend, plan.comm, plan.graph
    with timer.phase("search"):
        run = run_levels(plan.search, plan.hub, depth_limit=plan.search_levels, tail=True)
    with timer.phase("seed"):
        tail = run.tail
        whole = not run.at_limit or tail  # then its rows left are the only ones to link
        listing = plan.resources.backend_resources if whole else None
        bits, count, smallest, rows, edges = backend.reached_bits(graph, run.distances, listing)
        release_queues(run.plan, run.state)
        del run  # its labels, before the run's state is made
        label, pairs = plan.seed_bounds(smallest, edges, whole)
        if tail and not tail_links(plan, label, pairs):
            whole, tail, rows = False, False, None  # a partial search after all
        replica = plan.replicated and not whole
        state = plan.start(seeded=True, replica=replica)
        backend.seed_labels(graph, state, comm.allgather_equal(bits) if replica else bits, label)
    joined = count - int(label % comm.size == comm.rank)  # all but the root
    log.round("search", 0, 0, [0, 0, 0, 0, joined, 0])
    timer.next_level()
    return state, label, whole, rows, pairs, bits if tail else None


def tail_links(plan: ComponentPlan, label: int, pairs: int) -> bool:
    """Whether a search stopped at its tail counts as whole: its label is the smallest vertex
    with an edge (no row left can take the component below it) and, on replicas, every rank's
    rows left have at most n / size edges (their all-gathered pairs fit the replica's room)."""
    graph = plan.graph
    fits_replica = not plan.replicated or pairs * graph.size <= graph.n
    return label == plan.first_row and fits_replica


def link_remainder(
    plan: ComponentPlan,
    state: Any,
    rows: Any,
    pairs: int,
    log: RoundLog,
    timer: Any,
    reached: Any = None,
) -> None:
    """The finish of a whole search on replicas or in rounds (collective): the rows left (a few per
    thousand vertices on a Kronecker graph, whose edges join rows left only) are linked in a
    run of their own, and their labels go into ``state``, whose other labels the seed wrote.
    On replicas the edges of every rank's rows go to every rank (one all-gather of ``pairs``
    pairs a rank, the most out-edges any rank's rows have: padded, so that no rank reads a
    count from its device or sends one), and each rank links them all into a replica of their
    ends' labels alone: every rank holds the same labels after one pass, with no merge (the
    remainder's edges are few: a few per thousand vertices), and no host waits between the
    seed and the run's end. In the striped rounds the remainder's run starts with every owned
    vertex its own label, so its compress moves only the trees its hooks made, not the
    search's star. Either way no pass over every vertex's labels follows the seed.

    After a search stopped at its tail (``reached``: this rank's reached bits) the rows left
    also have edges into the reached vertices: on replicas each row lists every edge, each
    rank flags the listed ends it owns and reached, the flags are OR-reduced (one all-reduce of
    a byte a listed vertex, where every rank's bits would be n / 8 bytes) and the flagged ends
    start at the search's label; the striped rounds link in ``state`` itself, whose reached
    vertices carry it."""
    backend, comm, graph = plan.backend, plan.comm, plan.graph
    tail = reached is not None
    if plan.replicated:
        with timer.phase("links"):
            listed = backend.listed_pairs(graph, rows, pairs, every=tail)
        with timer.phase("exchange"):
            remainder_edges = comm.allgather_equal(listed).reshape(-1)
            if tail:
                flags = backend.reached_ends(graph, remainder_edges, reached)
                reached = comm.allreduce(flags, op="max")
        with timer.phase("seed"):
            remainder = plan.remainder(remainder_edges, reached, plan.first_row)
        with timer.phase("link"):
            counts = backend.link_pairs(graph, remainder, [remainder_edges], rows)
            log.in_place("finish", counts, everywhere=True)
        timer.next_level()
    elif tail:
        link_edges(plan, state, "finish", log, timer, rows=rows)
        return
    else:
        remainder = plan.start()
        link_edges(plan, remainder, "finish", log, timer, rows=rows)
    backend.take_labels(graph, state, remainder, rows, plan.replicated)


def link_edges(
    plan: ComponentPlan,
    state: Any,
    phase: str,
    log: RoundLog,
    timer: Any,
    *,
    neighbour: int | None = None,
    skip: Any = -1,
    rows: Any = None,
    compress: bool = True,
) -> None:
    """Link neighbour ``neighbour`` of every vertex, or (None) every neighbour of the vertices
    whose label is not ``skip`` (as ``largest_label`` gives it; or of the owned vertices
    ``rows``, global ids, where given: ``search_giant``'s): in one pass where the plan links in
    place (then compressed unless ``compress`` is False: a merge follows), else in rounds over
    the exchange (``link``)."""
    backend, graph, in_graph = plan.backend, plan.graph, plan.in_graph
    if plan.in_place:
        with timer.phase("link"):
            counts = backend.link_in_place(graph, in_graph, state, neighbour, skip, compress, rows)
            log.in_place(phase, counts)
        timer.next_level()
        return
    with timer.phase("links"):
        if neighbour is None:
            links = backend.remaining_links(graph, in_graph, state, skip, rows)
        else:
            links = backend.sample_links(graph, in_graph, neighbour)
    link(plan, state, links, phase, log, timer)


def merge(plan: ComponentPlan, state: Any, phase: str, log: RoundLog, timer: Any) -> None:
    """Make the replicas equal (collective): every rank's roots hooked since the last merge,
    with their labels, go to every rank (one all-gather), which links the other ranks' into
    its replica and compresses."""
    backend, comm = plan.backend, plan.comm
    with timer.phase("hooked"):
        pairs = backend.hooked_pairs(plan.graph, state)
    with timer.phase("exchange"):
        sizes = comm.allgather_object(int(pairs.shape[0]))
        gathered = comm.allgather_array(pairs)
    begin = sum(sizes[: comm.rank])
    end = begin + sizes[comm.rank]
    with timer.phase("link"):
        others = [gathered[:begin], gathered[end:]]
        counts = backend.link_pairs(plan.graph, state, others)
        log.in_place(phase, counts, sent=(comm.size - 1) * (sizes[comm.rank] // 2))
    timer.next_level()


def link(
    plan: ComponentPlan, state: Any, links: Any, phase: str, log: RoundLog, timer: Any
) -> None:
    """Afforest's Link over ``links``, in rounds until every link joins equal labels: ask the
    far ends' labels, keep the crossing links, hook, compress. One ``log`` row per round."""
    backend, comm = plan.backend, plan.comm
    index = 0
    while True:
        counters = [links.size, 0, 0, 0, 0, 0]  # links, crossing, sent, remote, hooked, asked
        with timer.phase("ask"):
            heads = ask(plan, state, links.heads, counters)
        with timer.phase("cross"):
            counters[1] = backend.cross(state, links, heads)
        with timer.phase("termination"):
            done = not comm.allreduce(counters[1], op="max")
        jumps = 0 if done else hook_and_compress(plan, state, links, counters, timer)
        log.round(phase, index, jumps, counters)
        timer.next_level()
        if done:
            return
        index += 1


def hook_and_compress(
    plan: ComponentPlan, state: Any, links: Any, counters: list[int], timer: Any
) -> int:
    """Hook the roots of the crossing ``links`` (requests reduced by minimum, binned by owner,
    exchanged, applied at the owner), then compress by pointer jumping until every tree is a
    star. Adds to ``counters``; returns the jumps."""
    backend, comm = plan.backend, plan.comm
    with timer.phase("partition_hooks"):
        bins = backend.partition_hooks(state, links, comm.size)
    with timer.phase("exchange"):
        received = comm.exchange_bins(bins)
    with timer.phase("apply_hooks"):
        counters[4] += backend.apply_hooks(plan.graph, state, received)
    sent = bins.counts
    counters[2] += int(sent.sum())
    counters[3] += int(sent.sum() - sent[comm.rank])
    jumps = 0
    with timer.phase("compress"):
        parents = backend.jump_start(state)
        while comm.allreduce(int(parents.shape[0]), op="max"):
            backend.jump(state, ask(plan, state, parents, counters))
            parents = backend.jumping_labels(state)
            jumps += 1
    return jumps


def ask(plan: ComponentPlan, state: Any, ids: Any, counters: list[int]) -> Any:
    """The labels of the global vertices ``ids`` (collective): the distinct ids go to their
    owners, the labels come back (one request and one reply exchange); read in place on one
    rank. Adds the ids sent to other ranks to ``counters[5]``."""
    backend, comm = plan.backend, plan.comm
    if comm.size == 1:
        return backend.owned_labels(plan.graph, state, ids)
    queries = backend.label_queries(state, ids, comm.size)
    sent = queries.counts
    counters[5] += int(sent.sum() - sent[comm.rank])
    received = comm.exchange_bins(queries)
    answered = comm.exchange_bins(backend.answer_labels(plan.graph, state, received))
    return backend.take_answers(state, answered, ids)
