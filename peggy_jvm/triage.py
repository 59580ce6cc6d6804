"""Per-method triage of the full stage: work that cannot pay is skipped before it is done.

What this module owns
    :func:`never_revertible`: before saturation, whether the reverter refuses the method's PEG for a reason
    every extraction shares (exception handling with a monitor), so that saturation and extraction (whose
    checker would ask the reverter about each candidate until its budget runs out) are not run;
    :func:`cannot_pay`: whether every PEG extraction could take from a saturated E-PEG costs at least as much as
    the original PEG, so that extraction (the MaxSAT solver's blocking loop and its checker, most of the full
    stage's time on a method no rewrite improves) would certainly return the original;
    :func:`cost_lower_bound`, the solver's bound it compares, and :func:`structural_bound`, a bound without a
    solver tried first.

Why it keeps the output: extraction returns a new PEG only when ``peg_cost(new) < peg_cost(original)``
(``pegextract.select.extract_peg``); the triage answers only when a lower bound proves that comparison fails
for every selection, and then returns what extraction would have returned, the original PEG, so every later
step (under ``--goal size`` the round trip of the original is still judged) and the class's bytes are those of
the full run. Only the report's reason differs.

The bound: first :func:`structural_bound` (the classes every selection reaches, plus disjoint regions of the
others: no solver, most verdicts on guava and math3); when it falls short, the optimum of the extraction problem
(``pegextract.peg_problem.build_problem``) without the checker, as ``extract.maxsat.solve`` proves it (its
``lower_bound``, within a share of the extraction's solver work; the solve stops at the first selection it finds
below the original's price, ``stop_below``: no verdict then, as the full solve's bound would be below it too).
Every selection extraction could return is a valid selection of that problem, and distinct classes become
distinct PEG nodes (the e-graph is rebuilt: no two classes hold the same node; thetas are never hash-consed),
so its ``peg_cost`` is the selection's problem cost, hence at least the optimum, *when the problem's prices are
``peg_cost``'s*: for ``--goal size`` (bytes, no loop factor) and for an e-graph without loop operators (every
node at depth 0). With loops the problem prices a node by where its e-class *may* vary (the e-graph's analysis,
an upper bound), which an extracted node may not: no verdict then. (Pricing loops from below, by the depths a
class must vary in, was tried: on JAMA it proved nothing for any of 62 methods with loops and cost 11% of the
run's CPU.)

Inputs: the original PEG, its :class:`~peggy_jvm.saturate.Saturation` (:func:`never_revertible`: the lifted
method instead), the goal and the solver work. Outputs: an extraction report or None. No clock: a function of
its inputs (work units bound the solve).
"""
from __future__ import annotations

from typing import Iterable, Mapping

from .codecost import Goal
from .extract import maxsat
from .extract.greedy import dag_greedy_extract, greedy_extract
from .extract.problem import (ClassId, ExtractionProblem, InfeasibleProblemError, evaluate_selection, integer_costs,
                              must_reach, usable_nodes)
from .extract.shrink import group_sum, settle
from .pegextract.cost import THROWS, peg_cost
from .pegextract.peg_problem import build_problem, cold_priced_exactly
from .pegextract.select import NO_CHEAPER, ExtractReport
from .peg.build import PegUnsupported
from .peg.graph import PEG
from .revert.revert import HANDLERS_NOT_REVERTED, WITH_MONITORS, check_revertible
from .revert.schedule import RevertUnsupported
from .saturate import Saturation

__all__ = ["SOLVE_SHARE", "cannot_pay", "cost_lower_bound", "exactly_priced", "never_revertible",
           "structural_bound"]

#: the triage's share of the extraction's solver work (``WorkBudget.solver_work``): with no checker to call
#: a proof comes far sooner than the extraction's own; without one the triage says nothing
SOLVE_SHARE = 4


#: the reverter's refusal that every extraction of a method's E-PEG shares (:func:`never_revertible`)
MONITORS_REFUSED = f"{HANDLERS_NOT_REVERTED}: {WITH_MONITORS}"
_MONITOR_OPS = frozenset({"monitorenter", "monitorexit"})


def never_revertible(peg: PEG, ir, goal: Goal = Goal.SPEED) -> ExtractReport | None:
    """The report extraction would end with (status "original", the reverter's refusal as its note) when the
    reverter refuses ``peg`` (the PEG of the lifted method ``ir``) with :data:`MONITORS_REFUSED`, a refusal
    every extraction shares; None otherwise, and without reverting anything for a PEG with no monitor.

    Why every extraction: the reverter refuses any PEG that has both a handler and a monitor effect. No rule
    removes or replaces a monitor effect (inlining leaves ``synchronized`` callees and monitors alone; effects
    are never dropped, ``pegextract.select.effects_on_sigma``), and the handler of a ``synchronized`` block
    stays: its region ends with a ``monitorexit``, which may throw, and no rule folds that ``threw`` to false.
    So the extraction's acceptance test (``pipeline.revertible``) refuses every candidate, and extraction ran
    its whole blocking loop to return the original (guava's ``Synchronized$SynchronizedMap``: 40 checks per
    method, 25 methods, 16% of the CPU of a 100-class sample). The reverter itself decides (its constructor
    refuses before it emits anything), so the skip ends when the reverter learns monitors."""
    if not any(n.op in _MONITOR_OPS for n in peg.nodes):
        return None
    try:
        check_revertible(peg, ir)
    except (PegUnsupported, RevertUnsupported) as e:
        if str(e) != MONITORS_REFUSED:
            return None
    else:
        return None
    before = peg_cost(peg, goal)
    return ExtractReport("original", before, before,
                         notes=[f"the reverter refuses every extraction: {MONITORS_REFUSED}"])


def exactly_priced(sat: Saturation, goal: Goal) -> bool:
    """Whether the extraction problem of ``sat`` prices every selection exactly as ``peg_cost`` prices the PEG
    it makes (module docstring): ``--goal size``, or no loop operator anywhere in the e-graph, and no class
    priced hot in the problem that a selection may reach only through a throw (the problem prices a class cold
    only when no node of the e-graph uses it on a path that does not throw, ``peg_cost`` when no node of the
    PEG does: ``pegextract.peg_problem.cold_priced_exactly``)."""
    if goal is Goal.SIZE:
        return True
    eg = sat.egraph
    if any(eg.classes_with_op(op) for op in ("theta", "eval", "pass")):
        return False
    return not any(eg.classes_with_op(op) for op in THROWS) or cold_priced_exactly(eg, sat.root)


def cost_lower_bound(sat: Saturation, peg: PEG, goal: Goal = Goal.SPEED, work: int = maxsat.DEFAULT_WORK
                     ) -> float | None:
    """A cost no extraction of ``sat`` (the saturation of ``peg``) can go below, in ``peg_cost``'s measure for
    ``goal``; None when the problem is not :func:`exactly_priced` or ``work`` solver units prove none."""
    if not exactly_priced(sat, goal):
        return None
    return _optimum(build_problem(sat.egraph, sat.root, peg, goal).problem, work)


def _optimum(problem: ExtractionProblem, work: int, stop_below: float | None = None) -> float | None:
    """The optimum of ``problem`` as ``extract.maxsat.solve`` proves it within ``work`` (a lower bound); with
    ``stop_below``, None as soon as a selection below it is found (the solve's ``stop_below``: the bound it
    would have proved is then below it too, so the caller's ``bound < stop_below`` answer is the same)."""
    try:
        return maxsat.solve(problem, work=max(1, work), stop_below=stop_below).lower_bound
    except InfeasibleProblemError:  # cannot be (the original is a selection): no verdict then
        return None


def structural_bound(problem: ExtractionProblem) -> float | None:
    """A lower bound on the cost of every valid selection of ``problem``, from its structure alone (no solver: a
    few passes over the problem, about 1 ms a method against the solve's tens); None with a may-close edge or a
    negative cost (the argument below needs neither).

    *Mandatory* classes M: those every derivation of a root reaches (``must_reach`` over the usable nodes):
    every valid selection reaches them, each with one of its usable nodes, so M costs at least the sum of
    each class's cheapest node. The rest is bounded per region: ``reach(k)``, the classes outside M reachable
    from k through classes outside M, and ``B(k)``, the least over k's nodes n of ``cost(n) +`` the sum over
    groups of n's child classes outside M (children whose ``reach`` sets overlap, transitively, form one
    group) of the group's largest ``B``. By induction on the height of a valid selection's chosen DAG (acyclic:
    no may-close edge), the classes outside M it reaches from k through classes outside M cost at least
    ``B(k)``: the groups' reached classes are disjoint, k is below none of them, and a group costs at least
    what lies below any one of its children. Last, each class c of M adds, on top of its cheapest node, the
    least over its usable nodes of (the node's cost above the cheapest + its children's grouped ``B``), and
    the classes of M are grouped by the overlap of the ``reach`` sets of their children outside M, each group
    adding its largest such extra: distinct groups' regions are disjoint, and each class of M is counted
    once. (``extract.shrink.disjoint_sum_bound``, the same regions without M, gives 115 of the 188 verdicts
    the solver gives on guava's 100-class sample; this bound 180, and math3's 104 of 117.)"""
    if problem.has_may_close or problem.has_negative_cost:
        return None
    weight, unit = integer_costs(problem)
    usable = usable_nodes(problem)
    must = must_reach(problem, usable)
    if any(r not in must for r in problem.roots):
        return None  # a root without a derivation: no valid selection (and nothing to bound)
    classes = list(problem.classes)
    mandatory_mask = 0
    for r in problem.roots:
        mandatory_mask |= must[r]
    mandatory = {c for i, c in enumerate(classes) if mandatory_mask >> i & 1}
    kids = problem.strict_kids
    # reach sets outside M, as bit masks; children mostly come after their parents in the problem's class order
    # (built from the root down), so sweeping it backwards settles most in one pass
    reach = {c: 1 << i for i, c in enumerate(classes) if c not in mandatory}
    changed = True
    while changed:
        changed = False
        for c in reversed(classes):
            if c in mandatory:
                continue
            mask = reach[c]
            for nid in problem.classes[c]:
                for k in kids[nid]:
                    if k not in mandatory:
                        mask |= reach[k]
            if mask != reach[c]:
                reach[c], changed = mask, True

    def grouped(children: Iterable[ClassId], bound: Mapping[ClassId, int]) -> int:
        # in M: counted in M's sum; unsettled: only the children of an M class's nodes that are not usable
        return group_sum((reach[k], bound[k]) for k in children if k not in mandatory and k in bound)

    bound = settle(problem, weight, grouped)  # B: Knuth's fixpoint, exact as ``grouped`` is monotone
    total = 0
    extras: list[tuple[int, int]] = []  # per class of M: (its region, its extra)
    for c in classes:
        if c not in mandatory:
            continue
        mine = [nid for nid in problem.classes[c] if nid in usable]
        if not mine:
            return None  # cannot be (M is derived from usable nodes)
        least = min(weight[nid] for nid in mine)
        total += least
        region = 0
        for nid in mine:
            for k in kids[nid]:
                if k not in mandatory:
                    region |= reach[k]
        extra = min(weight[nid] - least + grouped(kids[nid], bound) for nid in mine)
        # an empty region overlaps none, so it is a group of its own: added here, not grouped (most classes of M
        # have one, and group_sum is quadratic in its groups: 1 973 of the 1 975 classes of M of one math3 method)
        if region:
            extras.append((region, extra))
        else:
            total += extra
    return float((total + group_sum(extras)) * unit)


def cannot_pay(peg: PEG, sat: Saturation, goal: Goal = Goal.SPEED, solver_work: int = maxsat.DEFAULT_WORK
               ) -> ExtractReport | None:
    """The report extraction would end with when no extraction of ``sat`` (the saturation of ``peg``) can be
    strictly cheaper than ``peg`` for ``goal`` (status "original", the bound as its note); None when one might
    be, when the problem is not :func:`exactly_priced`, or when nothing fired (``extract_peg`` says so itself,
    without solving). ``solver_work``: the extraction's solver work, of which the bound gets ``1 /
    SOLVE_SHARE``; no solve at all when the problem's greedy selection (tree or DAG) is already cheaper than
    ``peg`` (most methods a rule improves)."""
    if not sat.run.fired() and not sat.inlined or not exactly_priced(sat, goal):
        return None
    before = peg_cost(peg, goal)
    problem = build_problem(sat.egraph, sat.root, peg, goal).problem
    bound = structural_bound(problem)
    if bound is not None and bound >= before:  # most verdicts, without the solver
        return _original(sat, before, bound)
    try:
        greedy = greedy_extract(problem)
    except InfeasibleProblemError:  # cannot be (the original is a selection): no verdict then
        return None
    if greedy.cost < before and evaluate_selection(problem, greedy.selection).valid:
        return None  # a selection below the original's price: no bound can say it cannot pay
    # the DAG greedy sees the sharing the tree greedy counts twice: a cheaper selection it finds also ends the
    # triage (on guava's sample 7 of the 26 solves that followed proved nothing, and it costs 2% of a solve)
    dag = dag_greedy_extract(problem, work=solver_work // SOLVE_SHARE).result
    if dag is not None and dag.cost < before:
        return None
    # a selection below ``before`` ends the solve there: no verdict either way (math3's 100-class sample: 20 of
    # its 33 solves, 1.0 of their 1.3 CPU-s)
    bound = _optimum(problem, solver_work // SOLVE_SHARE, stop_below=before)
    if bound is None or bound < before:
        return None
    return _original(sat, before, bound)


def _original(sat: Saturation, before: float, bound: float) -> ExtractReport:
    """The report of an extraction that returns the original PEG (cost ``before``) since none costs below
    ``bound``."""
    return ExtractReport("original", before, before, {}, str(sat.run),
                         notes=[f"cannot pay: every extraction costs at least {bound:g} >= {before:g}"],
                         epeg_nodes=sat.egraph.node_count, epeg_classes=sat.egraph.class_count, search=NO_CHEAPER)
