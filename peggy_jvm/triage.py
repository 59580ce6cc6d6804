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
as ``extract.maxsat.solve`` proves it (its ``lower_bound``, within a share of the extraction's solver work).
Every selection extraction could return is a valid selection of that problem, and distinct classes become
distinct PEG nodes (the e-graph is rebuilt: no two classes hold the same node; thetas are never hash-consed),
so its ``peg_cost`` is the selection's problem cost, hence at least the optimum, *when the problem's prices are
``peg_cost``'s*: for ``--goal size`` (bytes, no loop factor) and for an e-graph without loop operators (every
node at depth 0). With loops the problem prices a node by where its e-class *may* vary (the e-graph's analysis,
an upper bound), which an extracted node may not: no verdict then. (Pricing loops from below, by the depths a
class must vary in, was tried: on JAMA it proved nothing for any of 62 methods with loops and cost 11% of the
run's CPU.)

Inputs: the original PEG, its :class:`~peggy_jvm.saturate.Saturation`, the goal and the solver work. Outputs:
an extraction report or None. No clock: a function of its inputs (work units bound the solve).
"""
from __future__ import annotations

from .codecost import Goal
from .extract import maxsat
from .extract.greedy import greedy_extract
from .extract.problem import ExtractionProblem, InfeasibleProblemError, evaluate_selection
from .pegextract.cost import peg_cost
from .pegextract.peg_problem import build_problem
from .pegextract.select import ExtractReport
from .peg.graph import PEG
from .saturate import Saturation

__all__ = ["SOLVE_SHARE", "cannot_pay", "cost_lower_bound", "exactly_priced"]

#: the triage's share of the extraction's solver work (``WorkBudget.solver_work``): with no checker to call
#: a proof comes far sooner than the extraction's own; without one the triage says nothing
SOLVE_SHARE = 4


def exactly_priced(sat: Saturation, goal: Goal) -> bool:
    """Whether the extraction problem of ``sat`` prices every selection exactly as ``peg_cost`` prices the PEG
    it makes (module docstring): ``--goal size``, or no loop operator anywhere in the e-graph."""
    return goal is Goal.SIZE or not any(sat.egraph.classes_with_op(op) for op in ("theta", "eval", "pass"))


def cost_lower_bound(sat: Saturation, peg: PEG, goal: Goal = Goal.SPEED, work: int = maxsat.DEFAULT_WORK
                     ) -> float | None:
    """A cost no extraction of ``sat`` (the saturation of ``peg``) can go below, in ``peg_cost``'s measure for
    ``goal``; None when the problem is not :func:`exactly_priced` or ``work`` solver units prove none."""
    if not exactly_priced(sat, goal):
        return None
    return _optimum(build_problem(sat.egraph, sat.root, peg, goal).problem, work)


def _optimum(problem: ExtractionProblem, work: int) -> float | None:
    """The optimum of ``problem`` as ``extract.maxsat.solve`` proves it within ``work`` (a lower bound)."""
    try:
        return maxsat.solve(problem, work=max(1, work)).lower_bound
    except InfeasibleProblemError:  # cannot be (the original is a selection): no verdict then
        return None


def cannot_pay(peg: PEG, sat: Saturation, goal: Goal = Goal.SPEED, solver_work: int = maxsat.DEFAULT_WORK
               ) -> ExtractReport | None:
    """The report extraction would end with when no extraction of ``sat`` (the saturation of ``peg``) can be
    strictly cheaper than ``peg`` for ``goal`` (status "original", the bound as its note); None when one might
    be, when the problem is not :func:`exactly_priced`, or when nothing fired (``extract_peg`` says so itself,
    without solving). ``solver_work``: the extraction's solver work, of which the bound gets ``1 /
    SOLVE_SHARE``; no solve at all when the problem's greedy selection is already cheaper than ``peg`` (most
    methods a rule improves)."""
    if not sat.run.fired() and not sat.inlined or not exactly_priced(sat, goal):
        return None
    before = peg_cost(peg, goal)
    problem = build_problem(sat.egraph, sat.root, peg, goal).problem
    try:
        greedy = greedy_extract(problem)
    except InfeasibleProblemError:  # cannot be (the original is a selection): no verdict then
        return None
    if greedy.cost < before and evaluate_selection(problem, greedy.selection).valid:
        return None  # a selection below the original's price: no bound can say it cannot pay
    bound = _optimum(problem, solver_work // SOLVE_SHARE)
    if bound is None or bound < before:
        return None
    return ExtractReport("original", before, before, {}, str(sat.run),
                         notes=[f"cannot pay: every extraction costs at least {bound:g} >= {before:g}"],
                         epeg_nodes=sat.egraph.node_count, epeg_classes=sat.egraph.class_count)
