"""A Lagrangian lower bound on the optimum (the LP relaxation's dual, by subgradient ascent) and the nodes its
reduced costs rule out.

What this module owns
    :func:`lagrangian_bound`.  The model: ``x_n`` in {0, 1}, at most one node per class, exactly one per
    *forced* class (``shrink.py``: every valid selection reaches it), and for every class c and each class d
    that is a child of some node of c (other than c) the *pair constraint*
    ``sum(x_n for n in d) >= sum(x_m for m in c having child d)`` (at most one node of c is chosen, so it
    says "d is used when c's choice has child d"); acyclicity is left out.  Every valid selection is a
    solution (its reached chosen nodes, with 0 for the rest), so a bound on this model bounds every valid
    selection.  Each pair constraint gets a multiplier ``z_(c,d) >= 0`` and moves into the objective
    (Lagrangian relaxation): with

        inflow(c) = sum of z_(b,c) over the pairs whose child class is c
        rc(n)     = weight(n) + sum of z_(c,d) over n's distinct child classes d - inflow(c), c = n's class

    every solution x weighs ``sum(rc(n) x_n) + sum(z_(c,d) * slack_(c,d))`` >= ``sum(rc(n) x_n)`` >= ``L(z)``
    = the sum over forced classes of their least ``rc`` plus the sum over the other classes of
    ``min(0, least rc)``: each class contributes its best choice on its own.  That holds for *any* z >= 0;
    the ascent only looks for a z making ``L(z)`` large (its maximum is the LP relaxation's optimum, the
    subproblem having integral solutions).  Reduced-cost pruning: a solution choosing node n of class c weighs
    at least ``L(z) - contribution(c) + rc(n)``; when that exceeds the weight of a selection the caller holds,
    no selection as good as the caller's uses n, and n can go (the caller's own nodes never do: its selection
    weighs no more than itself).

Inputs and outputs
    A (shrunk) :class:`ExtractionProblem`, integer node weights (``problem.integer_costs``), the forced
    classes, the weight of a selection the caller holds and a work budget (one unit per node and per pair
    constraint: an iteration costs ``len(nodes) + len(pairs)``) -> :class:`LagrangianResult`:
    the bound (an integer: the optimum is an integer weight, so the exact bound is rounded up) and the
    prunable nodes.

Invariants
    * Integer arithmetic only: the weights are scaled by a power of two ``K`` so that steps can be fine, the
      multipliers are integers, ``L(z)`` is computed exactly and the bound is ``ceil(L / K)``: the bound is
      proved, never a floating-point estimate.
    * No clock: iterations, steps and the result are functions of the arguments (ties go to the first node
      in the problem's order).
"""
from __future__ import annotations

from dataclasses import dataclass
from itertools import compress
from typing import AbstractSet, Mapping

from .problem import ClassId, ExtractionProblem, NodeId
from .shrink import path_bounds

__all__ = ["LagrangianResult", "lagrangian_bound"]

#: weights are scaled so that the largest has about this many bits: integer multipliers then take steps
#: far finer than one unit of weight
_SCALE_BITS = 24
#: Polyak step factor: start, and halve it after this many iterations without a better bound
_STEP_START = 1.0
#: the step aims at the best bound so far plus this share of its gap to the caller's selection (the Polyak
#: step with the selection itself as target overshoots when the relaxation's gap is large)
_TARGET_SHARE = 0.2
_PATIENCE = 12
#: stop when the step factor falls below this (the ascent has stalled)
_STEP_MIN = 1e-2


@dataclass(frozen=True)
class LagrangianResult:
    #: a lower bound on the weight of every valid selection (None when the budget allowed no iteration)
    bound: int | None
    #: nodes in no selection weighing at most ``upper`` (never a node of a selection weighing ``upper``)
    prunable: frozenset[NodeId]
    #: work units spent
    work: int
    iterations: int


@dataclass
class _Model:
    """The problem as flat integer arrays: node i of class ``cls[i]``; constraint e says that class
    ``head[e]`` is used when the chosen node of class ``owner[e]`` has it as a child (``out[i]``: the
    constraints of node i, one per distinct child class)."""

    nodes: list[NodeId]
    weight: list[int]
    cls: list[int]
    forced: list[bool]
    members: list[list[int]]
    owner: list[int]
    head: list[int]
    out: list[list[int]]
    #: classes in an order where children mostly come before their parents (the order the chain bound
    #: settles them in): the start point is built in it
    order: list[int]

    @staticmethod
    def of(problem: ExtractionProblem, weight: Mapping[NodeId, int], forced: AbstractSet[ClassId],
           scale: int) -> _Model:
        classes = {c: i for i, c in enumerate(problem.classes)}
        nodes = list(problem.nodes)
        index = {nid: i for i, nid in enumerate(nodes)}
        members = [[index[nid] for nid in problem.classes[c]] for c in problem.classes]
        pair: dict[tuple[int, int], int] = {}
        out: list[list[int]] = [[] for _ in nodes]
        for i, nid in enumerate(nodes):
            n = problem.nodes[nid]
            c = classes[n.eclass]
            for d in dict.fromkeys(n.children):
                if d != n.eclass:
                    out[i].append(pair.setdefault((c, classes[d]), len(pair)))
        owner = [c for c, _ in pair]
        head = [d for _, d in pair]
        settled = [classes[c] for c in _settle_order(problem, weight)]
        seen = set(settled)
        order = settled + [i for i in range(len(members)) if i not in seen]
        return _Model(nodes, [weight[nid] * scale for nid in nodes],
                      [classes[problem.nodes[nid].eclass] for nid in nodes],
                      [c in forced for c in problem.classes], members, owner, head, out, order)

    def evaluate(self, z: list[int]) -> tuple[int, list[int], list[int], list[int]]:
        """(L(z), rc per node, the chosen node per class or -1, each class's contribution)."""
        inflow = [0] * len(self.members)
        for d, ze in zip(self.head, z):
            inflow[d] += ze
        at = z.__getitem__
        rc = [w - inflow[c] + sum(map(at, es)) if es else w - inflow[c]
              for w, c, es in zip(self.weight, self.cls, self.out)]
        total = 0
        chosen = [-1] * len(self.members)
        contrib = [0] * len(self.members)
        forced = self.forced
        for c, ms in enumerate(self.members):
            # min keeps the first of equal values: the node order; a class of one node has no choice to make
            best = ms[0] if len(ms) == 1 else min(ms, key=rc.__getitem__)
            r = rc[best]
            if r < 0 or forced[c]:
                chosen[c] = best
                contrib[c] = r
                total += r
        return total, rc, chosen, contrib

    def users(self) -> list[list[int]]:
        """Per constraint, the nodes whose reduced cost it enters (all of its owner class)."""
        out: list[list[int]] = [[] for _ in self.head]
        for i, es in enumerate(self.out):
            for e in es:
                out[e].append(i)
        return out

    def shift(self, moved: list[tuple[int, int]], users: list[list[int]], rc: list[int], chosen: list[int],
              contrib: list[int], total: int) -> int:
        """:meth:`evaluate` after the multipliers ``moved`` (constraint, change) changed, from its results at
        the multipliers before (``rc``, ``chosen``, ``contrib``, updated in place; returns ``L``): a constraint
        (c, d) enters the reduced cost of c's nodes having child d, and with a minus that of d's nodes, so only
        those change, and only classes c and d choose again (the same ``min`` as :meth:`evaluate`, the same
        integers: the ascent takes the same steps). Most multipliers stay put in a step (at zero, pushed
        below): on guava's 100-class sample about one in eight moves."""
        members, head, owner, forced = self.members, self.head, self.owner, self.forced
        dirty: set[int] = set()
        for e, dz in moved:
            d = head[e]
            for i in members[d]:
                rc[i] -= dz
            for i in users[e]:
                rc[i] += dz
            dirty.add(d)
            dirty.add(owner[e])
        for c in dirty:  # each class's choice is its own: any order gives the same lists and sum
            ms = members[c]
            best = ms[0] if len(ms) == 1 else min(ms, key=rc.__getitem__)
            r = rc[best]
            if r < 0 or forced[c]:
                chosen[c] = best
            else:
                chosen[c], r = -1, 0
            total += r - contrib[c]
            contrib[c] = r
        return total

    def start(self) -> list[int]:
        """Multipliers to start the ascent from: in the children-first order, each class that is not forced
        passes its least price (a node's weight plus what it passes on to its own children) on to its parent
        classes in equal shares, so that it contributes nothing itself and its parents see its cost.  On a
        tree this is the tree cost; where classes are shared, each parent carries a share.  Forced classes
        pass nothing: they are counted where they are."""
        z = [0] * len(self.head)
        into: list[list[int]] = [[] for _ in self.members]
        for e, d in enumerate(self.head):
            into[d].append(e)
        for d in self.order:
            if self.forced[d] or not into[d]:
                continue
            price = min(self.weight[i] + sum(z[e] for e in self.out[i]) for i in self.members[d])
            if price <= 0:
                continue
            share = price // len(into[d])
            for e in into[d]:
                z[e] = share
        return z


def _settle_order(problem: ExtractionProblem, weight: Mapping[NodeId, int]) -> list[ClassId]:
    """The classes in the order the chain bound settles them (children before parents along strict edges)."""
    return list(path_bounds(problem, {nid: max(0, w) for nid, w in weight.items()}))


def lagrangian_bound(problem: ExtractionProblem, weight: Mapping[NodeId, int], forced: AbstractSet[ClassId],
                     upper: int, work: int) -> LagrangianResult:
    """The best Lagrangian bound subgradient ascent finds within ``work`` units, and the nodes its reduced
    costs rule out given a selection weighing ``upper`` (see the module docstring)."""
    largest = max((abs(weight[nid]) for nid in problem.nodes), default=0)
    scale = 1 << max(0, _SCALE_BITS - largest.bit_length())
    model = _Model.of(problem, weight, forced, scale)
    per_iteration = len(model.nodes) + len(model.head)
    target = upper * scale
    z = model.start()
    spent = per_iteration
    best: tuple[int, list[int], list[int]] | None = None  # (L, rc, contributions) at the best z
    iterations = 0
    step, stale = _STEP_START, 0
    users = model.users()
    moved: list[tuple[int, int]] | None = None  # the multipliers the last step changed (None: evaluate afresh)
    while spent + per_iteration <= work:
        spent += per_iteration
        iterations += 1
        if moved is None:
            total, rc, chosen, contrib = model.evaluate(z)
        else:
            total = model.shift(moved, users, rc, chosen, contrib, total)
        if best is None or total > best[0]:
            best, stale = (total, rc[:], contrib[:]), 0  # copies: the lists change in place from here on
        else:
            stale += 1
            if stale >= _PATIENCE:
                step, stale = step / 2, 0
        if total >= target or step < _STEP_MIN:
            break
        # a supergradient of L at z, per constraint (c, d): whether c's choice has child d, less whether d has one
        grad = [0] * len(z)
        for c, i in enumerate(chosen):
            if i >= 0:
                for e in model.out[i]:
                    grad[e] = 1
        # projected: a multiplier at zero that the step would push below zero stays put, and must not count
        # in the step's length (on e-graphs most constraints are such, and the step would shrink to nothing)
        # (with a used head class: g - 1, or 0 where that would be -1 at a zero multiplier; else g)
        grad = [(g - 1 if g or ze else 0) if chosen[d] >= 0 else g for g, d, ze in zip(grad, model.head, z)]
        norm = len(grad) - grad.count(0)  # every entry is -1, 0 or 1: its square is its being nonzero
        if norm == 0:
            break  # no ascent direction left
        goal = best[0] + (target - best[0]) * _TARGET_SHARE if best[0] < target else target
        t = step * (goal - total) / norm
        # t * g is exactly t or -t (g is 1 or -1): the same steps as round(t * g) per entry
        up, down = round(t), round(-t)
        moved = []
        for e in compress(range(len(grad)), grad):  # the nonzero entries
            ze = z[e]
            nz = max(0, ze + up) if grad[e] > 0 else max(0, ze + down)
            if nz != ze:
                z[e] = nz
                moved.append((e, nz - ze))
    if best is None:
        return LagrangianResult(None, frozenset(), spent, iterations)
    total, rc, contrib = best
    prunable = frozenset(model.nodes[i] for i in range(len(model.nodes))
                         if total - contrib[model.cls[i]] + rc[i] > target)
    return LagrangianResult(-(-total // scale), prunable, spent, iterations)

