"""Shrinking an extraction problem before it is encoded, without changing its optimum.

What this module owns
    :func:`shrink`, which removes, in order:

    1. classes and nodes the roots cannot reach (through any node's children);
    2. nodes that can never be part of a valid selection (``problem.usable_nodes``: one-node strict cycles,
       strict children that cannot be built bottom-up, may-close children without a usable node, strict
       children below which every choice leads back to the node's own class);
    3. nodes *dominated* by another node ``d`` of the same class (when ``dominance`` is on): ``d`` costs no
       more, its child classes are a subset of the dominated node's, its strict (cycle-forbidden) child
       classes are a subset of the dominated node's strict ones (so no cycle freedom is lost), and no node of
       negative cost is reachable from the child classes ``d`` does without (so dropping them cannot make the
       rest dearer).  Equivalent nodes keep the first in node order;
    4. given the weight of a selection the caller already holds, nodes that only occur in dearer selections
       (:func:`bound_prunable`, from chain lower bounds :func:`path_bounds`), then 1-3 again, repeatedly;

    then reports the classes that every valid selection uses (*forced*: the roots, what every derivation of
    a forced class reaches (:func:`must_reach`), and the children of a forced class with a single node) and
    the single nodes of forced classes (*fixed*).  :func:`path_lower_bound` is the
    solver-free lower bound that comes with step 4; :func:`disjoint_sum_bound` a stronger one on the
    optimum where child classes can share nothing dear.

Inputs and outputs
    An :class:`ExtractionProblem` -> :class:`ShrinkResult` with the smaller problem (same ids, same node
    objects) plus the forced classes and fixed nodes.  Raises :class:`InfeasibleProblemError` when a root
    has no usable node.

Invariants
    * Every valid selection of the shrunk problem is a valid selection of the original with the same DAG
      cost (it is a sub-problem).  Every valid selection of the original can be turned into a valid one of the
      shrunk problem costing no more (replace each dominated choice by its dominator), except, with step 4,
      selections dearer than the caller's: so the optima agree, or the caller's selection is optimal.
    * Dominance is only about the cost objective.  A caller that adds constraints over nodes (extra clauses,
      a checker's blocking clauses) must list their nodes in ``protected`` (never removed by dominance, never
      a dominator) or turn ``dominance`` off when the constraints are not known in advance.  Step 4 needs no
      such care: a constraint only removes selections, and the caller's selection satisfies its constraints.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import AbstractSet, Callable, Iterable, Mapping

import networkx as nx

from .problem import ClassId, ExtractionProblem, InfeasibleProblemError, NodeId, must_reach, usable_nodes

__all__ = ["ShrinkStats", "ShrinkResult", "shrink", "reachable_classes", "path_bounds", "path_lower_bound",
           "bound_prunable", "must_reach", "disjoint_sum_bound", "group_sum", "settle"]


@dataclass(frozen=True)
class ShrinkStats:
    classes_before: int
    nodes_before: int
    classes_after: int
    nodes_after: int
    unreachable: int
    unusable: int
    dominated: int
    #: dropped by bound_prunable
    bounded: int
    fixed: int


@dataclass(frozen=True)
class ShrinkResult:
    problem: ExtractionProblem
    #: classes every valid selection reaches
    forced: frozenset[ClassId]
    #: the only node of a forced class: chosen in every valid selection
    fixed: frozenset[NodeId]
    stats: ShrinkStats


def reachable_classes(problem: ExtractionProblem, nodes: AbstractSet[NodeId] | None = None) -> set[ClassId]:
    """Classes reachable from the roots through the children of ``nodes`` (default: all nodes)."""
    seen: set[ClassId] = set(problem.roots)
    todo = deque(problem.roots)
    while todo:
        c = todo.popleft()
        for nid in problem.classes[c]:
            if nodes is not None and nid not in nodes:
                continue
            for k in problem.nodes[nid].children:
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
    return seen


def shrink(problem: ExtractionProblem, *, dominance: bool = True, protected: Iterable[NodeId] = (),
           weight: Mapping[NodeId, int] | None = None, upper: int | None = None,
           usable: AbstractSet[NodeId] | None = None) -> ShrinkResult:
    """Shrink ``problem`` (see the module docstring).

    With ``weight`` (integer node weights, see ``problem.integer_costs``) and ``upper`` (the weight of a
    valid selection the caller holds), nodes found only in selections weighing more than ``upper`` are
    dropped as well (:func:`bound_prunable`), repeatedly, since each round tightens the next one's bounds.
    ``usable`` is ``usable_nodes(problem)`` when the caller has it already: whether a node is usable depends
    only on the classes below it, which the reachable part keeps, so the first round needs no recomputation.
    """
    protected = frozenset(protected)
    n_classes, n_nodes = problem.size()
    current = problem
    unreachable = unusable = dominated = bounded = 0
    while True:
        reach = reachable_classes(current)
        step1 = current.restrict((nid for c in reach for nid in current.classes[c]), reach)
        if usable is None:
            usable = usable_nodes(step1)
        else:
            usable = {nid for nid in step1.nodes if nid in usable}
        for r in problem.roots:
            if not any(nid in usable for nid in step1.classes[r]):
                raise InfeasibleProblemError(f"{problem.name or 'problem'}: root class {r!r} has no node "
                                             f"that can be part of a valid selection")
        drop: set[NodeId] = _dominated(step1, usable, protected) if dominance else set()
        keep = usable - drop
        reach2 = reachable_classes(step1, keep)
        result = step1.restrict((nid for c in reach2 for nid in step1.classes[c] if nid in keep), reach2)
        unreachable += len(current.nodes) - len(step1.nodes)
        unusable += len(step1.nodes) - len(usable)
        dominated += len(drop)
        unreachable += len(keep) - len(result.nodes)
        if weight is None or upper is None:
            break
        pruned = bound_prunable(result, weight, upper)
        if not pruned:
            break
        bounded += len(pruned)
        kept = [nid for nid in result.nodes if nid not in pruned]
        current = result.restrict(kept, result.classes)
        usable = None  # pruning can leave other nodes without a derivation: recompute
    forced, fixed = _forced(result)
    stats = ShrinkStats(n_classes, n_nodes, len(result.classes), len(result.nodes), unreachable=unreachable,
                        unusable=unusable, dominated=dominated, bounded=bounded, fixed=len(fixed))
    return ShrinkResult(result, frozenset(forced), frozenset(fixed), stats)


def _negative_reach(problem: ExtractionProblem, usable: AbstractSet[NodeId]) -> set[ClassId]:
    """Classes from which some usable node of negative cost can be reached (the class itself included)."""
    neg = {problem.nodes[nid].eclass for nid in usable if problem.nodes[nid].cost < 0}
    todo = deque(neg)
    while todo:
        c = todo.popleft()
        for parent in problem.parents[c]:
            if parent in usable:
                pc = problem.nodes[parent].eclass
                if pc not in neg:
                    neg.add(pc)
                    todo.append(pc)
    return neg


def _dominated(problem: ExtractionProblem, usable: AbstractSet[NodeId], protected: AbstractSet[NodeId]
               ) -> set[NodeId]:
    neg = _negative_reach(problem, usable) if problem.has_negative_cost else set()
    order = {nid: i for i, nid in enumerate(problem.nodes)}
    out: set[NodeId] = set()
    for members in problem.classes.values():
        cands = [nid for nid in members if nid in usable and nid not in protected]
        if len(cands) < 2:
            continue
        info = {nid: (frozenset(problem.nodes[nid].children), frozenset(problem.strict_kids[nid]))
                for nid in cands}
        # A dominator sorts no later than what it dominates (cost <=, subsets are no larger), and exact ties
        # are broken by node order: so comparing each node with the kept ones before it is enough, and
        # dominance being transitive, a node dominated by a dropped node is dominated by a kept one too.
        cands.sort(key=lambda nid: (problem.nodes[nid].cost, len(info[nid][0]), len(info[nid][1]), order[nid]))
        kept: list[NodeId] = []
        for m in cands:
            m_all, m_strict = info[m]
            m_cost = problem.nodes[m].cost
            for d in kept:
                d_all, d_strict = info[d]
                if (problem.nodes[d].cost <= m_cost and d_all <= m_all and d_strict <= m_strict
                        and not (neg and any(c in neg for c in m_all - d_all))):
                    out.add(m)
                    break
            else:
                kept.append(m)
    return out


def _forced(problem: ExtractionProblem) -> tuple[set[ClassId], set[NodeId]]:
    """Classes every valid selection reaches, and the single nodes of those that have one.

    Closure from the roots of two rules: a forced class forces every class in its :func:`must_reach` set
    (what every derivation of it reaches through strict edges), and a forced class with a single node forces
    all of that node's children (the may-close ones too: a reached node's children are reached).
    """
    must = must_reach(problem)
    index = list(problem.classes)
    position = {c: i for i, c in enumerate(index)}
    forced: set[ClassId] = set(problem.roots)
    known = 0  # the forced classes as a bit mask: only the new bits of a must_reach set are walked
    for r in problem.roots:
        known |= 1 << position[r]
    todo = deque(problem.roots)
    while todo:
        c = todo.popleft()
        below = list(_bits(must.get(c, 0) & ~known, index))
        members = problem.classes[c]
        if len(members) == 1:
            below.extend(problem.nodes[members[0]].children)
        for k in below:
            if k not in forced:
                forced.add(k)
                known |= 1 << position[k]
                todo.append(k)
    fixed = {problem.classes[c][0] for c in forced if len(problem.classes[c]) == 1}
    return forced, fixed


def _bits(mask: int, index: list[ClassId]) -> Iterable[ClassId]:
    while mask:
        low = mask & -mask
        yield index[low.bit_length() - 1]
        mask ^= low


# ============================================================================================ bounds

def path_bounds(problem: ExtractionProblem, weight: Mapping[NodeId, int]) -> dict[ClassId, int]:
    """Per class, the least over its nodes of (weight + the largest bound of a strict child class).

    With non-negative weights this is a lower bound on the DAG cost below any class: the nodes of one chain
    of strict edges are distinct in a valid selection, and the chain below each node can be the dearest one.
    Computed like the greedy (Knuth's generalisation of Dijkstra), exactly, since ``w + max`` is monotone.
    Classes without a derivation are absent.
    """
    return settle(problem, weight, lambda kids, bound: max(bound[k] for k in kids))


def settle(problem: ExtractionProblem, weight: Mapping[NodeId, int],
           combine: Callable[[tuple[ClassId, ...], Mapping[ClassId, int]], int]) -> dict[ClassId, int]:
    """The least fixpoint of ``value(c) = min over c's nodes n of weight[n] + combine(n's strict child
    classes, values)`` by Knuth's generalisation of Dijkstra's algorithm: exact when ``combine`` is monotone
    and, with the weights, never below its largest argument (true for max and sums of maxima over
    non-negative values).  Leaves have ``combine == 0``; classes without a derivation are absent."""
    kids = problem.strict_kids
    waiting = {nid: len(k) for nid, k in kids.items()}
    watchers: dict[ClassId, list[NodeId]] = {}
    for nid, ks in kids.items():
        for c in ks:
            watchers.setdefault(c, []).append(nid)
    heap = [(weight[nid], nid) for nid, ks in kids.items() if not ks]
    heapq.heapify(heap)
    bound: dict[ClassId, int] = {}
    while heap:
        value, nid = heapq.heappop(heap)
        c = problem.nodes[nid].eclass
        if c in bound:
            continue
        bound[c] = value
        for parent in watchers.get(c, ()):
            waiting[parent] -= 1
            if waiting[parent] == 0:
                heapq.heappush(heap, (weight[parent] + combine(kids[parent], bound), parent))
    return bound


def disjoint_sum_bound(problem: ExtractionProblem, weight: Mapping[NodeId, int]) -> int | None:
    """A lower bound on the optimum that adds up the bounds of child classes that can share nothing dear.

    Only for non-negative weights and no may-close edges (else None).  *Free* classes are those with a
    derivation of zero-weight nodes (``path_bounds == 0``); ``reach(k)`` is the set of non-free classes
    reachable from k through non-free classes.  Per class, ``B(c)`` = least over c's nodes n of
    ``weight[n] +`` the sum, over groups of n's non-free strict child classes (children whose ``reach``
    sets overlap, transitively, form one group), of the group's largest ``B``; the result groups the roots
    the same way.  It equals the chain bound when everything overlaps, and the tree cost when nothing does
    (math_associate_adds: 13 where chains give 4).

    Why it is sound (a bound on the optimum, not on every selection).  (1) Some optimal selection chooses,
    in every free class it reaches, the zero-weight node that settled it in ``path_bounds``: switching
    every free class to that node reaches no new non-free class (such a node's children are free), closes
    no cycle (the switched nodes only point to classes settled earlier) and costs nothing more.  (2) In
    that selection, by induction on the height of the chosen DAG, the classes reached from a class k cost at
    least ``B(k)``: below k's chosen node n, the classes reached from different groups share no non-free
    class (each lies in its group's ``reach`` sets, since free classes lead only to free ones), free classes
    cost 0, n's own class is not below its children (acyclic, every edge strict), and each group costs at
    least the cost below any one of its children.  The Knuth fixpoint is exact since the combination is
    monotone and never below its largest argument.
    """
    if problem.has_may_close or any(weight[nid] < 0 for nid in problem.nodes):
        return None
    chain = path_bounds(problem, weight)
    free = {c for c, v in chain.items() if v == 0}
    index = {c: i for i, c in enumerate(problem.classes)}
    graph = nx.DiGraph()
    graph.add_nodes_from(c for c in problem.classes if c not in free)
    for nid, n in problem.nodes.items():
        if n.eclass not in free:
            graph.add_edges_from((n.eclass, d) for d in problem.strict_kids[nid] if d not in free)
    dag = nx.condensation(graph)
    masks: dict[int, int] = {}
    for comp in reversed(list(nx.topological_sort(dag))):
        m = 0
        for c in dag.nodes[comp]["members"]:
            m |= 1 << index[c]
        for nxt in dag.successors(comp):
            m |= masks[nxt]
        masks[comp] = m
    mapping = dag.graph["mapping"]
    reach = {c: masks[mapping[c]] for c in graph.nodes}

    def combine(kids: Iterable[ClassId], bound: Mapping[ClassId, int]) -> int:
        # free: 0 in the selection of (1); unsettled only for the roots' own call below
        return group_sum((reach[k], bound[k]) for k in kids if k not in free and k in bound)

    bound = settle(problem, weight, combine)
    if any(r not in bound for r in problem.roots):
        return None
    return combine(problem.roots, bound)


def group_sum(items: Iterable[tuple[int, int]]) -> int:
    """``items`` (a set of classes as a bit mask, a bound on what they cost) grouped by overlapping masks,
    transitively: the sum of each group's largest bound (what classes in disjoint sets cost at least)."""
    groups: list[tuple[int, int]] = []  # (union of the masks, largest bound)
    for mask, value in items:
        rest: list[tuple[int, int]] = []
        for g_mask, g_value in groups:
            if g_mask & mask:
                mask, value = mask | g_mask, max(value, g_value)
            else:
                rest.append((g_mask, g_value))
        groups = rest + [(mask, value)]
    return sum(v for _, v in groups)


def path_lower_bound(problem: ExtractionProblem, weight: Mapping[NodeId, int]) -> int | None:
    """A lower bound on every valid selection's weight (None when some weight is negative)."""
    if any(weight[nid] < 0 for nid in problem.nodes):
        return None
    bound = path_bounds(problem, weight)
    return max(bound.get(r, 0) for r in problem.roots)


def bound_prunable(problem: ExtractionProblem, weight: Mapping[NodeId, int], upper: int) -> set[NodeId]:
    """Nodes every valid selection containing which weighs more than ``upper``.

    For node n of class c: a cheapest chain of nodes from a root down to c, then n, then the dearest chain
    below n (:func:`path_bounds`) are distinct nodes of any valid selection reaching n, provided the weights
    are non-negative and no edge may close a cycle (otherwise nothing is pruned).  A caller holding a
    selection of weight ``upper`` loses nothing by dropping them: every selection at least as good avoids
    them, and that selection's own nodes are never dropped.
    """
    if problem.has_may_close or any(weight[nid] < 0 for nid in problem.nodes):
        return set()
    below = path_bounds(problem, weight)
    above: dict[ClassId, int] = {r: 0 for r in problem.roots}
    heap = [(0, r) for r in problem.roots]
    done: set[ClassId] = set()
    while heap:  # Dijkstra from the roots: the cheapest chain of nodes above each class
        d, c = heapq.heappop(heap)
        if c in done:
            continue
        done.add(c)
        for nid in problem.classes[c]:
            nd = d + weight[nid]
            for k in problem.nodes[nid].children:
                if nd < above.get(k, nd + 1):
                    above[k] = nd
                    heapq.heappush(heap, (nd, k))
    out: set[NodeId] = set()
    for nid, n in problem.nodes.items():
        ks = problem.strict_kids[nid]
        if any(k not in below for k in ks) or n.eclass not in above:
            continue  # never in a valid selection anyway; leave it to usable_nodes
        least = above[n.eclass] + weight[nid] + max((below[k] for k in ks), default=0)
        if least > upper:
            out.add(nid)
    return out
