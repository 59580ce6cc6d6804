"""Greedy DAG extraction: the floor every other extractor must match, and the fallback when they cannot.

What this module owns
    :func:`greedy_extract`: per class, the node of least *tree cost* (the node's cost plus the tree costs of
    its distinct strict child classes), computed bottom-up; the result is scored as a DAG cost.
    :func:`chain_extract`: the same settling order, but a class is priced by its dearest chain (the node's
    integer weight plus the largest price of a strict child class, ties broken by the tree cost), the
    quantity ``shrink.path_bounds`` bounds the optimum with.  A second incumbent: when one chain dominates a
    DAG (many branches of an e-graph sharing one spine), its selection's DAG cost can equal that bound,
    which proves it optimal without a solver (tensat/vgg).
    :func:`dag_greedy_extract`: the bottom-up DAG greedy (extraction-gym's baseline, "faster-greedy-dag"):
    a node is priced by the DAG cost of the set of classes it would pull in (its own class plus the union of
    its strict child classes' selected sets), each class keeps its cheapest node, iterated to a fixpoint.  It
    sees sharing below a node, which the tree greedy counts twice; it runs within a work budget (words of
    the bit sets it combines, classes it adds to a set) and gives up (returns None) when that is spent.

Inputs and outputs
    An :class:`ExtractionProblem` -> :class:`GreedyResult` (a valid selection covering every class that has a
    usable node, and its DAG cost).  Raises :class:`InfeasibleProblemError` when a root class has no usable
    node, i.e. when no valid selection exists.

Invariants
    * The selection is valid (see ``problem.py``), whatever the costs' signs.  Classes are *settled* one at a
      time, in the manner of Knuth's generalisation of Dijkstra's algorithm: a node is a candidate only once
      all its strict child classes are settled, and the cheapest candidate settles its class.  So every
      strict edge among chosen nodes points from a later-settled class to an earlier one, and no forbidden
      cycle can be chosen.  Edges that may close a cycle are ignored while computing (they add nothing to a
      node's tree cost and never make it wait); only nodes of :func:`usable_nodes` take part, so each such
      edge's class does get settled.
    * With non-negative costs the settled cost of each class is its least tree cost (the fixpoint of
      ``cost(c) = min over n in c of cost(n) + sum of cost(children)``); with negative costs it is a heuristic.
    * Deterministic: ties go to the node met first in the problem's node order.
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from typing import Iterator, Mapping

from .problem import (ClassId, ExtractionProblem, InfeasibleProblemError, NodeId, Selection,
                      evaluate_selection, integer_costs, usable_nodes)

__all__ = ["GreedyResult", "greedy_extract", "tree_costs", "chain_extract", "dag_greedy_extract", "DagGreedyRun"]


@dataclass(frozen=True)
class GreedyResult:
    selection: Selection
    #: DAG cost of ``selection`` (each reached chosen node once)
    cost: float
    #: tree cost of each settled class (what the greedy minimised)
    tree_cost: dict[ClassId, float]


def _settling(problem: ExtractionProblem, usable: set[NodeId] | None
              ) -> tuple[dict[NodeId, int], dict[NodeId, tuple[ClassId, ...]], dict[NodeId, int],
                         dict[ClassId, list[NodeId]]]:
    """What a bottom-up settling needs: each usable node's position, strict child classes, how many of them are
    not settled yet, and per class the usable nodes waiting for it (in ``problem.nodes`` order)."""
    if usable is None:
        usable = usable_nodes(problem)
    order = {nid: i for i, nid in enumerate(problem.nodes)}
    kids: dict[NodeId, tuple[ClassId, ...]] = {}
    waiting: dict[NodeId, int] = {}
    watchers: dict[ClassId, list[NodeId]] = {}
    for nid in problem.nodes:
        if nid not in usable:
            continue
        ks = problem.strict_kids[nid]
        kids[nid] = ks
        waiting[nid] = len(ks)
        for c in ks:
            watchers.setdefault(c, []).append(nid)
    return order, kids, waiting, watchers


def tree_costs(problem: ExtractionProblem, usable: set[NodeId] | None = None
               ) -> tuple[dict[ClassId, NodeId], dict[ClassId, float]]:
    """Settle classes in order of tree cost; returns (class -> chosen node, class -> tree cost).

    Only nodes in ``usable`` (default: :func:`usable_nodes`) are considered; classes with none stay out.
    """
    order, kids, waiting, watchers = _settling(problem, usable)
    heap: list[tuple[float, int, NodeId]] = [(problem.nodes[nid].cost, order[nid], nid)
                                             for nid, ks in kids.items() if not ks]
    heapq.heapify(heap)
    chosen: dict[ClassId, NodeId] = {}
    cost: dict[ClassId, float] = {}
    while heap:
        c_cost, _, nid = heapq.heappop(heap)
        cls = problem.nodes[nid].eclass
        if cls in chosen:
            continue
        chosen[cls] = nid
        cost[cls] = c_cost
        for parent in watchers.get(cls, ()):
            waiting[parent] -= 1
            if waiting[parent] == 0 and problem.nodes[parent].eclass not in chosen:
                total = _tree_sum(problem.nodes[parent].cost, [cost[k] for k in kids[parent]])
                heapq.heappush(heap, (total, order[parent], parent))
    return chosen, cost


def _tree_sum(own: float, parts: list[float]) -> float:
    """``own`` plus the children's tree costs (their sum correctly rounded); +inf once it leaves the float range.

    Tree costs grow exponentially with the depth of shared sub-terms (each level can count the level below
    twice), so a deep DAG's tree costs overflow: ``fsum`` raises there (``OverflowError``, and ``ValueError``
    once an infinite part meets a negative infinite one) instead of answering.  An overflowing tree cost is
    dearer than every finite one, which is all the settling order needs; such a class is still settled,
    after the finite ones, in node order."""
    try:
        return own + math.fsum(parts)
    except (OverflowError, ValueError):
        return math.inf


def greedy_extract(problem: ExtractionProblem, usable: set[NodeId] | None = None) -> GreedyResult:
    """The greedy selection of ``problem`` and its DAG cost (see the module docstring)."""
    chosen, cost = tree_costs(problem, usable)
    return _result(problem, chosen, cost, "greedy")


def _result(problem: ExtractionProblem, chosen: dict[ClassId, NodeId], prices: dict[ClassId, float],
            what: str) -> GreedyResult:
    """The settled choice as a checked result: every root settled, and valid (or an error, never returned)."""
    missing = [r for r in problem.roots if r not in chosen]
    if missing:
        raise InfeasibleProblemError(f"{problem.name or 'problem'}: root class {missing[0]!r} has no node that "
                                     f"can be part of a valid selection")
    selection = Selection(chosen)
    report = evaluate_selection(problem, selection)
    if not report.valid:  # would be a bug in the settling order: fail loudly, never return it
        raise AssertionError(f"{what} produced an invalid selection: {report.errors}")
    return GreedyResult(selection, report.cost, prices)


def chain_extract(problem: ExtractionProblem, weight: Mapping[NodeId, int], usable: set[NodeId] | None = None
                  ) -> GreedyResult:
    """The selection settling classes by (dearest chain, tree weight), see the module docstring.

    ``weight`` is ``problem.integer_costs`` (exact integers, so the chain prices are exact).  Valid for the
    same reason as :func:`greedy_extract` (a node waits for all its strict child classes); ``tree_cost`` of
    the result holds the chain prices, converted to floats.  Raises :class:`InfeasibleProblemError` like
    :func:`greedy_extract`.
    """
    order, kids, waiting, watchers = _settling(problem, usable)
    heap: list[tuple[int, int, int, NodeId]] = [(weight[nid], weight[nid], order[nid], nid)
                                                for nid, ks in kids.items() if not ks]
    heapq.heapify(heap)
    chosen: dict[ClassId, NodeId] = {}
    chain: dict[ClassId, int] = {}
    tree: dict[ClassId, int] = {}
    while heap:
        c_chain, c_tree, _, nid = heapq.heappop(heap)
        cls = problem.nodes[nid].eclass
        if cls in chosen:
            continue
        chosen[cls], chain[cls], tree[cls] = nid, c_chain, c_tree
        for parent in watchers.get(cls, ()):
            waiting[parent] -= 1
            if waiting[parent] == 0 and problem.nodes[parent].eclass not in chosen:
                ks = kids[parent]
                heapq.heappush(heap, (weight[parent] + max(chain[k] for k in ks),
                                      weight[parent] + sum(tree[k] for k in ks), order[parent], parent))
    return _result(problem, chosen, {c: float(v) for c, v in chain.items()}, "chain greedy")


@dataclass(frozen=True)
class DagGreedyRun:
    """What :func:`dag_greedy_extract` did: its result (None when its budget ran out or its choice closed a
    forbidden cycle) and the work units it spent (candidates priced, class-set operations, classes added)."""

    result: GreedyResult | None
    work: int


def dag_greedy_extract(problem: ExtractionProblem, usable: set[NodeId] | None = None,
                       work: int | None = None, weights: tuple[Mapping[NodeId, int], Fraction] | None = None
                       ) -> DagGreedyRun:
    """The bottom-up DAG greedy (see the module docstring), within ``work`` units (None: unbounded).

    A node becomes a candidate once each of its strict child classes has a selected set; its price is the
    summed weight of its own class united with those sets, and it replaces its class's node when strictly
    cheaper and its own class is not in its children's sets (that would be a forbidden cycle).  A class whose
    price drops re-queues its parents, in a FIFO worklist seeded in node order, until nothing changes.
    Because a class's node may change after a parent was priced, the final choice is re-checked with
    ``evaluate_selection``; an invalid one gives None (the caller keeps its other incumbents).

    The sets are bit sets over the classes, and a union is priced from its largest child's price plus what the
    other children add to that set (each added class at the weight of its node at that moment): in a DAG with
    much sharing a child's set is mostly inside its sibling's, so a node costs a few word operations instead of
    a copy of every set below it (a chain of 2500 classes each using the two below: 3.1 M units and 0.47 s with
    copied sets, 86 k units and 0.10 s here).  Prices are sums of ``integer_costs``, exact (no rounding decides
    a comparison).
    Work: per candidate, ``_CANDIDATE_UNITS`` plus each set operation's (``_BITS_PER_UNIT``) plus one per class
    added.
    ``weights`` is ``integer_costs(problem)`` when the caller has it already.
    """
    order, kids, _, watchers = _settling(problem, usable)
    weight, unit = integer_costs(problem) if weights is None else weights
    # a class's bit is given when it first gets a node: a set holds classes settled before its own, so the sets
    # low in the e-graph are short integers
    classes: list[ClassId] = []
    bit: dict[ClassId, int] = {}
    spent = 0
    # class -> (price, node, set of classes its node pulls in, itself included)
    best: dict[ClassId, tuple[int, NodeId, int]] = {}
    queue: deque[NodeId] = deque(nid for nid in kids if not kids[nid])
    queued = set(queue)
    while queue:
        nid = queue.popleft()
        queued.discard(nid)
        ks = kids[nid]
        if any(k not in best for k in ks):
            continue
        cls = problem.nodes[nid].eclass
        price, members, added = _union_price([best[k] for k in ks], best, weight, classes)
        spent += _CANDIDATE_UNITS + (len(ks) + 1) * (1 + members.bit_length() // _BITS_PER_UNIT) + added
        if work is not None and spent > work:
            return DagGreedyRun(None, spent)
        if cls in bit and members & bit[cls]:
            continue
        price += weight[nid]
        old = best.get(cls)
        if old is not None and (price > old[0] or (price == old[0] and order[nid] >= order[old[1]])):
            continue
        if cls not in bit:
            bit[cls] = 1 << len(classes)
            classes.append(cls)
        best[cls] = (price, nid, members | bit[cls])
        for parent in watchers.get(cls, ()):
            if parent not in queued:
                queued.add(parent)
                queue.append(parent)
    if any(r not in best for r in problem.roots):
        return DagGreedyRun(None, spent)
    selection = Selection({c: v[1] for c, v in best.items()})
    report = evaluate_selection(problem, selection)
    spent += len(report.reached)
    if not report.valid:  # a later change below a priced parent closed a cycle: not an incumbent
        return DagGreedyRun(None, spent)
    return DagGreedyRun(GreedyResult(selection, report.cost, {c: float(v[0] * unit) for c, v in best.items()}),
                        spent)


#: bits of a class set that one work unit pays for in a bitwise operation: it runs in C, 64 bits in about a
#: nanosecond, where a unit elsewhere is one Python-level step (calibrated: the DAG greedy's CPU time per unit
#: stays below that of the copied-set version it replaced on ../shared/extraction; see the commit)
_BITS_PER_UNIT = 1024
#: units per candidate priced (its Python-level steps: the children's entries, the largest set, the checks)
_CANDIDATE_UNITS = 8


def _union_price(sets: list[tuple[int, NodeId, int]], best: Mapping[ClassId, tuple[int, NodeId, int]],
                 weight: Mapping[NodeId, int], classes: list[ClassId]) -> tuple[int, int, int]:
    """(price, bit set, classes added) of the union of ``sets`` (``best``'s entries of a node's children):
    the largest set's price plus the weight of each class the others add to it, at its node in ``best``."""
    if not sets:
        return 0, 0, 0
    largest = max(sets, key=lambda e: e[2].bit_count())
    price, members = largest[0], largest[2]
    added = 0
    for entry in sets:
        extra = entry[2] & ~members
        if not extra:
            continue
        members |= extra
        for i in _bits(extra):
            price += weight[best[classes[i]][1]]
            added += 1
    return price, members, added


def _bits(x: int) -> Iterator[int]:
    """The positions of ``x``'s one bits (``x`` > 0), lowest first."""
    s = bin(x)
    top = len(s) - 1
    i = s.rfind("1")
    while i > 1:
        yield top - i
        i = s.rfind("1", 2, i)
