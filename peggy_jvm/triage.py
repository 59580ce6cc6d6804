"""Per-method triage of the full stage: work that cannot pay is skipped before it is done.

What this module owns
    :func:`cannot_pay`: whether every PEG extraction could take from a saturated E-PEG costs at least as much as
    the original PEG, so that extraction (the MaxSAT solver and its checker, most of the full stage's time on
    a method no rewrite improves) would certainly return the original; and :func:`cost_lower_bound`, the bound
    it compares.

Why it keeps the output: extraction returns a new PEG only when ``peg_cost(new) < peg_cost(original)``
(``pegextract.select.extract_peg``); the triage answers only when a lower bound proves that comparison fails
for every selection, and then returns what extraction would have returned, the original PEG, so every later
step (under ``--goal size`` the round trip of the original is still judged) and the class's bytes are those of
the full run. Only the report's reason differs.

The bound (sound for every valid selection of the extraction problem, ``pegextract.peg_problem``):
    * the *mandatory* classes: the root's, and every child class common to all nodes of a mandatory class;
      every selection reaches each of them (its chosen node has that child whatever it is), and distinct
      classes become distinct PEG nodes (the e-graph is rebuilt: no two classes hold the same node; thetas
      are never hash-consed);
    * each priced at its cheapest node, for ``--goal size`` its byte size, for ``speed`` its base cost times
      ``BASE_LOOP_MULTIPLIER`` per loop depth the class *must* vary in: the least fixpoint of the variance rules
      of ``PEG.variance`` with the intersection over a class's nodes (every node the selection may pick
      varies in at least those depths, so the extracted PEG's own variance contains them). The e-graph's
      variance analysis cannot serve: it says where a class *may* vary, an upper bound.

Inputs: the original PEG, its :class:`~peggy_jvm.saturate.Saturation` and the goal. Outputs: a reason (text)
or None. No clock: a function of its inputs.
"""
from __future__ import annotations

from .codecost import Goal
from .pegextract.cost import MAX_DEPTH, peg_cost
from .pegextract.select import ExtractReport
from .peg.graph import PEG
from .peg.ops import BASE_LOOP_MULTIPLIER, OPS
from .saturate import Saturation

__all__ = ["cannot_pay", "cost_lower_bound"]


def _must_vary(sat: Saturation, classes: list[int]) -> dict[int, frozenset[int]]:
    """Per class of ``classes`` (canonical, closed under children), the loop depths every node of it varies in
    within any extracted PEG: ``PEG.variance``'s rules, least fixpoint, intersected over the class's nodes."""
    eg = sat.egraph
    find = eg.find
    var: dict[int, frozenset[int]] = {c: frozenset() for c in classes}
    users: dict[int, set[int]] = {c: set() for c in classes}
    for c in classes:
        for _op, _attr, kids in eg.nodes(c):
            for k in kids:
                users[find(k)].add(c)
    work = list(classes)
    queued = set(work)
    while work:
        c = work.pop()
        queued.discard(c)
        common: frozenset[int] | None = None
        for op, attr, kids in eg.nodes(c):
            kv = [var[find(k)] for k in kids]
            if op == "theta":
                v = kv[0] | kv[1] | {attr}
            elif op == "eval":
                v = (kv[0] - {attr}) | kv[1]
            elif op == "pass":
                v = kv[0] - {attr}
            else:
                v = frozenset().union(*kv)
            common = v if common is None else common & v
            if not common:
                break
        new = common or frozenset()
        if new != var[c]:
            var[c] = new
            for u in sorted(users[c]):
                if u not in queued:
                    queued.add(u)
                    work.append(u)
    return var


def _reached(sat: Saturation) -> dict[int, set[int]]:
    """The canonical classes the root reaches through any node (those of the extraction problem), each with the
    classes that have a node using it."""
    eg = sat.egraph
    find = eg.find
    root = find(sat.root)
    parents: dict[int, set[int]] = {root: set()}
    stack = [root]
    while stack:
        c = stack.pop()
        for _op, _attr, kids in eg.nodes(c):
            for k in kids:
                k = find(k)
                if k not in parents:
                    parents[k] = set()
                    stack.append(k)
                parents[k].add(c)
    return parents


def _mandatory(sat: Saturation) -> set[int]:
    """The root's class and every child class common to all nodes of a mandatory class."""
    eg = sat.egraph
    find = eg.find
    root = find(sat.root)
    mandatory, stack = {root}, [root]
    while stack:
        common: set[int] | None = None
        for _op, _attr, kids in eg.nodes(stack.pop()):
            ks = {find(k) for k in kids}
            common = ks if common is None else common & ks
        for k in sorted(common or ()):
            if k not in mandatory:
                mandatory.add(k)
                stack.append(k)
    return mandatory


def cost_lower_bound(sat: Saturation, goal: Goal = Goal.SPEED) -> float:
    """A cost no extraction of ``sat`` can go below, in ``pegextract.cost.peg_cost``'s measure for ``goal``
    (module docstring): the sum over the mandatory classes of their bounds, where a class's bound is the least,
    over its nodes, of the node's cost plus the bounds of the children that class alone uses (an *owned*
    class, not mandatory: reached only through the class's chosen node, so it is counted once)."""
    eg = sat.egraph
    find = eg.find
    parents = _reached(sat)
    mandatory = _mandatory(sat)
    var = _must_vary(sat, sorted(parents)) if goal is not Goal.SIZE else {}

    def cost(op: str, c: int) -> float:
        if goal is Goal.SIZE:
            return float(OPS[op].size)
        depths = sum(1 for lvl in var[c] if 1 <= lvl <= MAX_DEPTH)  # what loop_depths counts of them
        return float(OPS[op].cost * BASE_LOOP_MULTIPLIER ** depths)

    owner = {k: next(iter(ps)) for k, ps in parents.items() if len(ps) == 1 and k not in mandatory}
    bound: dict[int, float] = {}
    # owned classes form a forest under their owners (each has one owner, and an owned class reaches the root
    # only through it), so children are done before their owner in a post-order walk
    order: list[int] = []
    stack: list[tuple[int, bool]] = [(c, False) for c in sorted(mandatory)]
    seen: set[int] = set()
    while stack:
        c, done = stack.pop()
        if done:
            order.append(c)
            continue
        if c in seen:
            continue
        seen.add(c)
        stack.append((c, True))
        for _op, _attr, kids in eg.nodes(c):
            for k in kids:
                k = find(k)
                if owner.get(k) == c and k not in seen:
                    stack.append((k, False))
    for c in order:
        bound[c] = min(cost(op, c) + sum(bound.get(k, 0.0) for k in {find(x) for x in kids} if owner.get(k) == c)
                       for op, _attr, kids in eg.nodes(c))
    return float(sum(bound[c] for c in mandatory))


#: the unconstrained solve's share of the extraction's solver work (``WorkBudget.solver_work``): it has no
#: checker to call, so a proof comes far sooner than the extraction's own; without one the triage says nothing
SOLVE_SHARE = 4


def _loop_free(sat: Saturation) -> bool:
    """No loop operator anywhere in the e-graph: every extraction's nodes are priced at depth 0, so the
    extraction problem's costs are exactly ``peg_cost``'s."""
    return not any(sat.egraph.classes_with_op(op) for op in ("theta", "eval", "pass"))


def cannot_pay(peg: PEG, sat: Saturation, goal: Goal = Goal.SPEED, solver_work: int | None = None
               ) -> ExtractReport | None:
    """The report extraction would end with when no extraction of ``sat`` (the saturation of ``peg``) can be
    strictly cheaper than ``peg`` for ``goal`` (status "original", the bound as its note); None when one might
    be, or when nothing fired (``extract_peg`` says so itself, without solving).

    First the solver-free bound (:func:`cost_lower_bound`); then, when the problem's prices are exact
    (``--goal size``, or no loop in the e-graph) and ``solver_work`` is given, the optimum of the extraction
    problem without the checker (``extract.maxsat.solve``'s proved lower bound, within ``solver_work //
    SOLVE_SHARE`` units): every selection the checker could pass costs at least that."""
    if not sat.run.fired() and not sat.inlined:
        return None
    before = peg_cost(peg, goal)
    bound = cost_lower_bound(sat, goal)
    how = "every extraction costs at least"
    if bound < before and solver_work is not None and (goal is Goal.SIZE or _loop_free(sat)):
        from .extract import maxsat
        from .pegextract.peg_problem import build_problem
        result = maxsat.solve(build_problem(sat.egraph, sat.root, peg, goal).problem,
                              work=max(1, solver_work // SOLVE_SHARE))
        if result.lower_bound is not None:
            bound, how = result.lower_bound, "the unchecked optimum costs"
    if bound < before:
        return None
    return ExtractReport("original", before, before, {}, str(sat.run),
                         notes=[f"cannot pay: {how} {bound:g} >= {before:g}"],
                         epeg_nodes=sat.egraph.node_count, epeg_classes=sat.egraph.class_count)
