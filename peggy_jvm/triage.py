"""Per-method triage of the full stage: work that cannot pay is skipped before it is done.

What this module owns
    :func:`cannot_pay`: whether every PEG extraction could take from a saturated E-PEG costs at least as much as
    the original PEG, so that extraction (the MaxSAT solver's blocking loop and its checker, most of the full
    stage's time on a method no rewrite improves) would certainly return the original; and
    :func:`cost_lower_bound`, the bound it compares.

Why it keeps the output: extraction returns a new PEG only when ``peg_cost(new) < peg_cost(original)``
(``pegextract.select.extract_peg``); the triage answers only when a lower bound proves that comparison fails
for every selection, and then returns what extraction would have returned, the original PEG, so every later
step (under ``--goal size`` the round trip of the original is still judged) and the class's bytes are those of
the full run. Only the report's reason differs.

The bound: the optimum of the extraction problem (``pegextract.peg_problem.build_problem``) without the checker,
as ``extract.maxsat.solve`` proves it (its ``lower_bound``, within a share of the extraction's solver work), with
every node priced *from below*: its base cost times ``BASE_LOOP_MULTIPLIER`` per loop depth its class *must*
vary in (:func:`_must_vary`: the least fixpoint of ``PEG.variance``'s rule with the intersection over a class's
nodes; every node a selection may pick varies in at least those depths, so the extracted PEG's own variance
contains them), for ``--goal size`` its byte size. The problem's own prices cannot serve: they use the e-graph's
variance analysis, where a class *may* vary, an upper bound. Without loops both prices are the same. Every
selection extraction could return is a valid selection of that problem, and distinct classes become distinct
PEG nodes (the e-graph is rebuilt: no two classes hold the same node; thetas are never hash-consed), so its
``peg_cost`` is at least the bound.

Inputs: the original PEG, its :class:`~peggy_jvm.saturate.Saturation`, the goal and the solver work. Outputs:
an extraction report or None. No clock: a function of its inputs (work units bound the solve).
"""
from __future__ import annotations

from dataclasses import replace

from .codecost import Goal
from .extract import maxsat
from .extract.greedy import greedy_extract
from .extract.problem import ExtractionProblem, InfeasibleProblemError, evaluate_selection
from .pegextract.cost import MAX_DEPTH, node_cost, peg_cost
from .pegextract.peg_problem import build_problem, class_number
from .pegextract.select import ExtractReport
from .peg.graph import PEG, variance_rule
from .saturate import Saturation

__all__ = ["SOLVE_SHARE", "cannot_pay", "cost_lower_bound"]

#: the triage's share of the extraction's solver work (``WorkBudget.solver_work``): with no checker to call
#: a proof comes far sooner than the extraction's own; without one the triage says nothing
SOLVE_SHARE = 4


def _must_vary(sat: Saturation, classes: list[int]) -> dict[int, frozenset[int]]:
    """Per class of ``classes`` (canonical, closed under children), the loop depths every node of it varies in
    within any extracted PEG: ``peg.graph.variance_rule``, least fixpoint, intersected over the class's nodes
    (a lower bound of the least fixpoint over any one choice of nodes, which is the extracted PEG's)."""
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
            v = variance_rule(op, attr, [var[find(k)] for k in kids])
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


def _priced_from_below(sat: Saturation, peg: PEG, goal: Goal) -> ExtractionProblem:
    """The extraction problem of ``sat`` with every node at the least cost it can have in an extracted PEG."""
    problem = build_problem(sat.egraph, sat.root, peg, goal).problem
    var = _must_vary(sat, sorted({class_number(c) for c in problem.classes}))

    def depths(cid: str) -> int:
        return sum(1 for lvl in var[class_number(cid)] if 1 <= lvl <= MAX_DEPTH)  # as loop_depths counts
    return ExtractionProblem.build([replace(n, cost=node_cost(n.op, depths(n.eclass), goal))
                                    for n in problem.nodes.values()], problem.roots, name=problem.name)


def cost_lower_bound(sat: Saturation, peg: PEG, goal: Goal = Goal.SPEED, work: int = maxsat.DEFAULT_WORK
                     ) -> float | None:
    """A cost no extraction of ``sat`` (the saturation of ``peg``) can go below, in ``peg_cost``'s measure for
    ``goal`` (module docstring); None when ``work`` solver units prove none."""
    return _optimum_from_below(_priced_from_below(sat, peg, goal), work)


def _optimum_from_below(problem: ExtractionProblem, work: int) -> float | None:
    """The optimum of ``problem`` (priced from below) as ``extract.maxsat.solve`` proves it within ``work``."""
    try:
        return maxsat.solve(problem, work=max(1, work)).lower_bound
    except InfeasibleProblemError:  # cannot be (the original is a selection): no verdict then
        return None


def cannot_pay(peg: PEG, sat: Saturation, goal: Goal = Goal.SPEED, solver_work: int = maxsat.DEFAULT_WORK
               ) -> ExtractReport | None:
    """The report extraction would end with when no extraction of ``sat`` (the saturation of ``peg``) can be
    strictly cheaper than ``peg`` for ``goal`` (status "original", the bound as its note); None when one might
    be, or when nothing fired (``extract_peg`` says so itself, without solving). ``solver_work``: the
    extraction's solver work, of which the bound gets ``1 / SOLVE_SHARE``; no solve at all when the greedy
    selection of the problem priced from below is already cheaper than ``peg`` (most methods a rule improves).
    """
    if not sat.run.fired() and not sat.inlined:
        return None
    before = peg_cost(peg, goal)
    problem = _priced_from_below(sat, peg, goal)
    try:
        greedy = greedy_extract(problem)
    except InfeasibleProblemError:  # cannot be (the original is a selection): no verdict then
        return None
    if greedy.cost < before and evaluate_selection(problem, greedy.selection).valid:
        return None  # a selection below the original's price: no bound can say it cannot pay
    bound = _optimum_from_below(problem, solver_work // SOLVE_SHARE)
    if bound is None or bound < before:
        return None
    return ExtractReport("original", before, before, {}, str(sat.run),
                         notes=[f"cannot pay: every extraction costs at least {bound:g} >= {before:g}"],
                         epeg_nodes=sat.egraph.node_count, epeg_classes=sat.egraph.class_count)
