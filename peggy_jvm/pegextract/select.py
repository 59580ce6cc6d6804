"""PEG selection for one method: extract the cheapest valid PEG from its saturated E-PEG, or keep the original.

What this module owns
    :func:`extract_peg` (saturated E-PEG -> PEG and :class:`ExtractReport`), :func:`checkable` (whether the
    checker can judge any extraction of a PEG at all: the pipeline saturates only then), :func:`make_checker`
    (the validity checker handed to the MaxSAT driver), :func:`loops_on_sigma`, :func:`effects_on_sigma`,
    :func:`negations`, :func:`original_nodes` (the builder's nodes and their copies) and :func:`prefer_original`.

How (DESIGN section 4)
    1. :func:`.peg_problem.build_problem` makes the extraction problem of what the saturated root reaches,
       priced by :mod:`.cost`.
    2. :func:`peggy_jvm.extract.maxsat.solve` extracts within its work budget (work units per solver
       configuration), with a checker that turns each candidate selection (with the builder's forms preferred
       among equals, :func:`prefer_original`) into a PEG and runs :func:`peggy_jvm.peg.check.peg_problems`
       (well-formed, CFG-like), :func:`loops_on_sigma`, :func:`effects_on_sigma` and the phi-profile checker
       (:mod:`.phi_profile`, with the tests the e-graph proved each other's negation named as one condition:
       :func:`negations`); a rejection comes back as a blocking clause (the violation's
       explanation for phi-profiles, the whole reached selection for malformed PEGs, or ones the caller's
       ``accept`` refuses) and RC2 is called again. The checker has work budgets of its own (phi-profile
       comparisons, checks, and ``accept``'s node pairs: the reverter's cost grows with the square of a
       candidate's size), so that no sub-stage's work goes uncounted; a selection the solver asks about again
       (a model met inside RC2's search, then as its optimum) is answered as the first time and charged the
       same, and one that breaks a clause given already (a model met inside RC2's search before that clause
       reached its oracle) is refused with that clause, unchecked. Once the checker accepts nothing more, the
       solver's search ends (a final ``OutOfWork``).
       Greedy is the fallback when the solver fails.
    3. Among selections as cheap as the solver's, :func:`.tiebreak.break_ties` looks for smaller code (for
       ``--goal size``: faster); what it finds is checked like any candidate, and the solver's selection is
       kept when the checks refuse it.
    4. The extracted PEG is checked again and priced with :func:`.cost.peg_cost` (for the caller's goal: speed,
       or size with ``--goal size``); unless it is strictly cheaper than the original PEG, the ORIGINAL PEG is
       returned (no churn for nothing).

Inputs: a sealed, well-formed PEG (from :func:`peggy_jvm.peg.build.build_peg`), its saturation
(:func:`peggy_jvm.saturate.saturate`, or None when :func:`checkable` said no), a work budget, the goal.
No clock decides anything here: the same PEG, saturation and options give the same result.
Outputs: a sealed PEG that passed ``check_peg`` and the phi-profile checker (or the input PEG itself) and a report.
Invariants: the returned PEG is either the input or an extraction that passed every check; ``cost_after <=
cost_before`` always, and ``<`` whenever the PEG changed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from ..codecost import Goal
from ..epeg import EPeg
from ..extract import maxsat
from ..extract.greedy import greedy_extract
from ..extract.problem import ExtractionProblem, Selection, evaluate_selection
from ..peg.check import _kinds, peg_problems
from ..peg.graph import PEG
from ..peg.loops import pure_loops
from ..peg.ops import OPS, Role, T
from ..saturate import Saturation
from .cost import peg_cost
from .peg_problem import PegProblem, build_problem, class_number, selection_to_peg
from .phi_profile import MAX_PROFILE_WORK, Effort, Polarity, Profiles, effect_profiles, find_violation
from .tiebreak import break_ties

__all__ = ["ACCEPT_WORK", "NO_CHEAPER", "Accepted", "Acceptance", "ExtractReport", "accept_cost", "checkable",
           "effects_on_sigma", "extract_peg", "loops_on_sigma", "make_checker", "negations", "original_nodes",
           "prefer_original"]

#: a later stage's test of a checked candidate PEG: why it cannot take it, or None
Acceptance = Callable[[PEG], "str | None"]
#: the candidates :func:`make_checker`'s checker accepted, by the problem nodes their (preferred) selection
#: reaches -> (the PEG, PEG node -> problem nodes), as :func:`_problems` made them: :func:`extract_peg` checks its
#: final selection again with the same checks (the PEG is a function of those nodes, every check a function of
#: the PEG), so for one of these it takes the answer instead of building and checking the PEG a second time
Accepted = dict[frozenset[str], "tuple[PEG, dict[int, list[str]]]"]

#: :attr:`ExtractReport.search` of a method the triage's bound settled (``peggy_jvm.triage.cannot_pay``)
NO_CHEAPER = "no cheaper (bound)"


@dataclass
class ExtractReport:
    #: "optimal (proved)" | "best found" | "greedy" | "original" (nothing cheaper passed the checks)
    status: str
    cost_before: float
    cost_after: float
    time_ms: dict[str, float] = field(default_factory=dict)
    saturation: str = ""
    blocks: int = 0
    notes: list[str] = field(default_factory=list)
    #: the E-PEG's size after saturation (the whole e-graph); None when the method was not saturated
    epeg_nodes: int | None = None
    epeg_classes: int | None = None
    #: the e-nodes the returned extraction chose (problem node ids ``c<class>.<k>``: the k-th node of the class);
    #: empty when the original PEG is returned
    selected: tuple[str, ...] = ()
    #: how the search for the cheapest checked selection ended, whatever the method then keeps (``status`` is
    #: "original" when that selection is no cheaper than the original PEG): "optimal (proved)", "best found" or
    #: "greedy" (the solver's status of the selection it returned), "none" (no selection passed the checks), or
    #: :data:`NO_CHEAPER` (the triage's bound proves that no selection is cheaper than the original, which is
    #: kept: that outcome is optimal without a search); None when there was nothing to search (no rule fired,
    #: not saturated)
    search: str | None = None

    @property
    def changed(self) -> bool:
        return self.status != "original"

    @property
    def proved(self) -> bool:
        """Whether what extraction returned is proved the cheapest it could have returned."""
        return self.search in ("optimal (proved)", NO_CHEAPER)

    def describe(self) -> str:
        """``status, cost before -> after; notes`` (``show --epeg --extracted``, ``--html``)."""
        return (f"{self.status}, cost {self.cost_before:g} -> {self.cost_after:g}"
                + "".join(f"; {n}" for n in self.notes))


def loops_on_sigma(peg: PEG) -> list[str]:
    """Every loop (``pass`` node) the root reaches must be read by an ``eval`` of a sigma or of a method result,
    as in every PEG the builder makes (each loop threads the heap; a loop that never exits is read only by the
    ``eval`` of the ``return`` its virtual exit builds inside it, whose heap is the iteration's: see
    :mod:`peggy_jvm.peg.build`), or be a pure loop (:func:`peggy_jvm.peg.loops.pure_loops`: no effect, and its
    break condition provably becomes true), which the reverter computes where its values are wanted. Dead-loop
    deletion makes the latter; any other loop off the sigma chain could hide a non-termination the method must
    keep, so such a PEG is refused (problems as strings)."""
    reached = peg.reachable()
    kinds = _kinds(peg)
    passes = {n for n in reached if peg.nodes[n].op == "pass"}
    on_sigma = {peg.nodes[n].children[1] for n in reached
                if peg.nodes[n].op == "eval" and kinds[peg.nodes[n].children[0]] in (T.SIGMA, T.RESULT)}
    off = passes - on_sigma
    if off:
        off -= pure_loops(peg)
    return [f"n{p}: pass[{peg.nodes[p].attr}] is not on the sigma chain" for p in sorted(off)]


def effects_on_sigma(peg: PEG) -> list[str]:
    """Every effect the root reaches must be on the sigma chain (its heap read by a ``rho_sigma``, or a
    ``rho_esigma`` in a handler). Heap rules take a read that cannot throw off the chain (``aload-read-heap``;
    with user rules or ``--rules +heap.array`` also ``aload-accessed-heap``), and the reverter emits an effect
    where its value is first wanted: after a later write of the same element that would read the new value
    (tests/test_heapreads.py, ``offChain``). Such a read can only be extracted when its value is shared with a
    read on the chain (problems as strings)."""
    return [f"n{n}: {peg.nodes[n].op} is not on the sigma chain" for n in _off_chain(peg)]


_LINEAR = ("rho_sigma", "rho_esigma")


def _off_chain(peg: PEG) -> list[int]:
    """The effects the root reaches whose heap no projection the root reaches reads."""
    reached = peg.reachable()
    linear = {peg.nodes[n].children[0] for n in reached if peg.nodes[n].op in _LINEAR}
    return [n for n in sorted(reached) if OPS[peg.nodes[n].op].role is Role.EFFECT and n not in linear]


def _carry_origins(peg: PEG, class_of: dict[int, str], copies: dict[str, str], new: PEG, back: dict[int, list],
                   pp: PegProblem) -> None:
    """Give each effect of the extracted PEG the bytecode offset of an original effect in its e-class (the
    first, by node id), or in the class it was copied from (``copies``: loop peeling): the rewritten code's line
    numbers; and each theta the local of an original theta in its e-class (``PEG.locals``). Debug information
    only."""
    by_class: dict[str, int] = {}
    for n, off in sorted(peg.origins.items()):
        if n in class_of:
            by_class.setdefault(class_of[n], off)
    nodes = pp.problem.nodes
    for n, ids in back.items():
        if ids and OPS[new.nodes[n].op].role is Role.EFFECT:
            c = nodes[ids[0]].eclass
            origin = by_class.get(c)
            if origin is None and c in copies:
                origin = by_class.get(copies[c])
            if origin is not None:
                new.origins[n] = origin
    # a theta equal to an original one (same e-class, not a copy: a peeled loop's thetas are shifted) carries
    # the same local: its loop runs the same iterations with the same values
    local_of: dict[str, tuple[int, int]] = {}
    for n, local in sorted(peg.locals.items()):
        if n in class_of:
            local_of.setdefault(class_of[n], local)
    for n, ids in back.items():
        if ids and new.nodes[n].op == "theta" and nodes[ids[0]].eclass in local_of:
            new.locals[n] = local_of[nodes[ids[0]].eclass]


def original_nodes(pp: PegProblem, peg: PEG, eg: EPeg, mapping: dict[int, int]) -> frozenset[str]:
    """The problem nodes that are nodes of the builder's PEG ``peg`` (same operator, attribute and child
    classes), or copies of them: a class a rule copied (``PegInfo.copied_from``: a peeled or hoisted loop's
    body) and its copied children taken back to the classes they were copied from. A hoist copies the whole
    loop body, so without the copies its sums and products would have no builder's form to prefer."""
    find = eg.find
    source: dict[int, int] = {}
    for c, o in eg.info.copied_from.items():
        source.setdefault(find(c), find(o))

    def origin(c: int) -> int:
        seen = {c}
        while (o := source.get(c)) is not None and o not in seen:  # a copy of a copy: back to the first
            seen.add(o)
            c = o
        return c

    wanted = {(find(mapping[n]), node.op, node.attr, tuple(find(mapping[c]) for c in node.children))
              for n, node in enumerate(peg.nodes) if n in mapping}
    return frozenset(nid for nid, (op, attr, kids) in pp.enodes.items()
                     if (origin(class_number(pp.problem.nodes[nid].eclass)), op, attr,
                         tuple(origin(k) for k in kids)) in wanted)


def prefer_original(pp: PegProblem, sel: Selection, original: frozenset[str]) -> Selection:
    """``sel`` with each chosen node that is not the builder's replaced by a builder's node of its class with the
    same cost and the same child classes in another order (``x * y`` for ``y * x``, ``i >= n`` for ``n <= i``):
    the same classes are reached through the same edges, so validity and cost are unchanged, but ties between
    equal-cost forms go to the order javac wrote (effects' values used in the order they were loaded stay on
    the operand stack). A pure function of the selection."""
    nodes = pp.problem.nodes
    out = dict(sel.choices)
    for c, nid in sel.choices.items():
        n = nodes.get(nid)
        if n is None or nid in original or n.may_close:
            continue
        key = sorted(n.children)
        for alt in pp.problem.classes.get(c, ()):
            a = nodes[alt]
            if alt in original and not a.may_close and a.cost == n.cost and sorted(a.children) == key:
                out[c] = alt
                break
    return Selection(out)


def negations(pp: PegProblem) -> Polarity:
    """The e-classes of ``pp`` proved to be each other's negation (a ``not`` node of one class over the other),
    as a :data:`.phi_profile.Polarity` over class numbers: each class named by the least class number of its
    group (classes linked by ``not`` nodes, a parity union-find), with whether it is that class's negation.
    A pure function of the problem. Each parity follows from ``not`` nodes, facts the e-graph proved; a
    ``not`` that would contradict its group's parities (a class its own negation: only in an e-graph that merged
    what it should not) is not used."""
    parent: dict[int, tuple[int, bool]] = {}

    def find(c: int) -> tuple[int, bool]:
        root, neg = c, False
        while root in parent:
            root, flip = parent[root]
            neg ^= flip
        return root, neg

    nodes = pp.problem.nodes
    for nid, (op, _attr, kids) in sorted(pp.enodes.items()):
        if op != "not":
            continue
        (a, na), (b, nb) = find(class_number(nodes[nid].eclass)), find(kids[0])
        if a != b:  # the smaller root names the group: the same choice whatever order the pairs come in
            lo, hi = (a, b) if a < b else (b, a)
            parent[hi] = (lo, not (na ^ nb))
    return lambda k: find(k) if isinstance(k, int) else (k, False)


def _problems(pp: PegProblem, sel: Selection, baseline: Profiles | None, accept: Acceptance | None = None,
              effort: Effort | None = None, polarity: Polarity | None = None,
              carry: Callable[[PEG, dict], None] | None = None
              ) -> tuple[PEG | None, dict, str | None, frozenset[int], list[int]]:
    """(the PEG, PEG node -> problem nodes, why rejected or None, PEG nodes explaining the rejection, the
    effects off the sigma chain when that is why). ``carry``: gives the PEG its debug information before
    ``accept`` sees it (the reverter's code for it is then the code reverted later, ``revert.Generated``)."""
    try:
        peg, back = selection_to_peg(pp, sel)
    except ValueError as e:
        return None, {}, str(e), frozenset(), []
    bad = peg_problems(peg) or loops_on_sigma(peg)
    off = [] if bad else _off_chain(peg)
    if bad or off:
        bad = bad or effects_on_sigma(peg)
        return peg, back, "; ".join(bad[:2]), frozenset(range(len(peg.nodes))), off
    nodes = pp.problem.nodes
    v = find_violation(peg, key=lambda n: class_number(nodes[back[n][0]].eclass), baseline=baseline,
                       effort=effort, polarity=polarity)
    if v is not None:
        return peg, back, v.reason, v.explanation, []
    if accept is not None and carry is not None:
        carry(peg, back)
    why = accept(peg) if accept is not None else None
    if why is not None:
        return peg, back, why, frozenset(range(len(peg.nodes))), []
    return peg, back, None, frozenset(), []


#: the checker's work budget for one extraction: phi-profile route-step comparisons
#: (:class:`.phi_profile.Effort`) over all its calls, and calls (each also builds a PEG and asks the caller's
#: ``accept``, the reverter)
CHECK_WORK = 4_000_000
MAX_CHECKS = 40
#: the caller's ``accept`` (the reverter, for the pipeline) per extraction, in node pairs: a candidate of n PEG
#: nodes costs n * n. Squared because the reverter's cost grows about so (its copy coalescing compares pairs of
#: values): measured, 693 nodes take 0.045 s and 2 241 nodes 0.65 s, so a count of candidates alone let a wide
#: method spend seconds per check (WideLocals.manyInts: tens of seconds under load). 10 M pairs: about 1.3 s.
ACCEPT_WORK = 10_000_000


def accept_cost(peg: PEG) -> int:
    """What asking ``accept`` about ``peg`` costs of :data:`ACCEPT_WORK`."""
    return len(peg.nodes) ** 2


def make_checker(pp: PegProblem, baseline: Profiles | None = None, accept: Acceptance | None = None,
                 work: int = CHECK_WORK, max_checks: int = MAX_CHECKS,
                 original: frozenset[str] = frozenset(), accept_work: int = ACCEPT_WORK,
                 polarity: Polarity | None = None, accepted: Accepted | None = None,
                 carry: Callable[[PEG, dict], None] | None = None) -> maxsat.Checker:
    """A checker for :func:`maxsat.solve`: () for an acceptable selection, else one blocking clause. A pure
    function of the selections it is asked about, in order: after ``max_checks`` calls, once the
    phi-profiles have used ``work`` step comparisons, or when asking ``accept`` about a candidate would take
    the ``accept_work`` node pairs (:func:`accept_cost`) over, it raises a final :class:`maxsat.OutOfWork` (the
    solver stops with what it accepted so far: its budgets are for the whole search). Work, not time, so the
    blocking loop gives the same answers on every run. A selection that breaks a clause it gave before is
    refused with that clause, unchecked (and without charge to the comparisons or node pairs). ``accepted``, when
    given, receives each accepted candidate that a fresh check would accept too (:data:`Accepted`); ``carry``:
    as for :func:`_problems`."""
    effort = Effort(work)
    accepting = Effort(accept_work)
    calls = 0
    # the answers already given, by the reached nodes they are a function of; the solver asks again about
    # selections it met before (a model RC2's oracle finds inside its search, then as its optimum: half the
    # checks on commons-math3's largest methods), which then cost what they cost the first time
    answers: dict[frozenset[str], _Answer] = {}
    asked: list[int] = []  # the node pairs ``accept`` was asked about by the current check
    # every clause given so far. The models RC2 meets inside one search (``maxsat``'s ``on_model``) come before
    # the clauses given about them can reach its oracle, and most break a clause given already (commons-math3's
    # LevenbergMarquardtOptimizer.qrDecomposition: 39 of its 40 checks; 632 of the 1 334 checks of math3's
    # 100-class sample, 1.7 of the checker's 5.3 CPU-s): such a selection is refused with the first clause it
    # breaks, valid for every selection, without building its PEG; it still counts as a check
    given: list[maxsat.NodeClause] = []
    # the rejections found so far, by the reached nodes of the selection checked (``prefer_original``'s): two
    # selections the solver tells apart may differ only in forms ``prefer_original`` maps to one, and then build
    # the same PEG with the same verdict (guava's 100-class sample: 33 of its 366 checks, 1.1 of 14 CPU-s, most
    # in Files.simplifyPath, whose reverter refuses each). Only rejections: an accepted PEG is the reverter's to
    # keep (``carry``, ``Revertible``), asked again as before
    refused: dict[frozenset[str], _Refusal] = {}

    def counted(peg: PEG) -> str | None:
        assert accept is not None
        if not accepting.spend(accept_cost(peg)):
            raise maxsat.OutOfWork(f"checker: {accept_work} node pairs to revert (next: {accept_cost(peg)})",
                                   final=True)
        asked.append(accept_cost(peg))
        return accept(peg)

    # per effect class, the problem nodes that read its heap: an effect off the chain is blocked by "not this
    # effect, or one of these", which every selection putting it on the chain satisfies (a selection at a time
    # would spend the checker's calls on each read the heap rules took off the chain)
    linear_of: dict[str, list[str]] = {}
    for nid, (op, _attr, kids) in pp.enodes.items():
        if op in _LINEAR:
            linear_of.setdefault(f"c{kids[0]}", []).append(nid)

    def checker(problem: ExtractionProblem, sel: Selection) -> list[maxsat.NodeClause]:
        nonlocal calls
        calls += 1
        if calls > max_checks or effort.spent_out or accepting.spent_out:
            raise maxsat.OutOfWork(f"checker: {max_checks} checks, {work} comparisons or {accept_work} node pairs",
                                   final=True)
        report = evaluate_selection(problem, sel)
        reached = set(report.reached_nodes(sel))
        key = frozenset(reached)
        known = answers.get(key)
        if known is not None:
            return known.again(effort, accepting, work, accept_work)
        broken = next((cl for cl in given if not maxsat.clause_holds(cl, key)), None)
        if broken is not None:
            return [broken]
        # what is checked is the selection with the builder's forms preferred (the one extraction returns); it
        # is a function of each class's node, so blaming the solver's node of the same class blocks the cause
        left = effort.left
        asked.clear()
        preferred = prefer_original(pp, sel, original)
        checked = frozenset(report.reached_nodes(preferred))  # the same classes as ``sel`` reaches
        known_refusal = refused.get(checked)
        peg: PEG | None
        why: str | None
        if known_refusal is not None:
            # the same PEG as that check's: its charges again, in its order (as ``_Answer.again``), then the
            # clauses blaming this selection's own nodes
            _Answer([], known_refusal.comparisons, known_refusal.pairs).again(effort, accepting, work, accept_work)
            peg, back, why, explain, off = None, known_refusal.back, known_refusal.why, known_refusal.explain, \
                known_refusal.off
            asked.extend(known_refusal.pairs)
        else:
            peg, back, why, explain, off = _problems(pp, preferred, baseline,
                                                     counted if accept is not None else None, effort, polarity, carry)
        if effort.spent_out:  # "too large to decide" because the allowance ran out: no verdict on this one
            raise maxsat.OutOfWork(f"checker: {work} comparisons", final=True)
        if why is not None and known_refusal is None:
            refused[checked] = _Refusal(back, why, explain, off, left - effort.left, tuple(asked))
        if why is None and accepted is not None and peg is not None and left - effort.left <= MAX_PROFILE_WORK:
            # the final check's profiles get a fresh MAX_PROFILE_WORK (find_violation without an effort), this
            # check's a share of ``work``: only a PEG whose profiles took no more is sure to pass that one too
            accepted[frozenset(report.reached_nodes(preferred))] = (peg, back)
        clauses = blocking(problem, sel, reached, back, why, explain, off)
        answers[key] = _Answer(clauses, left - effort.left, tuple(asked))
        given.extend(clauses)
        return clauses

    def blocking(problem: ExtractionProblem, sel: Selection, reached: set[str], back: dict, why: str | None,
                 explain: frozenset[int], off: list[int]) -> list[maxsat.NodeClause]:
        if why is None:
            return []
        nodes = problem.nodes
        off_classes = sorted({nodes[back[n][0]].eclass for n in off if back.get(n)})
        if off_classes:
            return [((sel.choices[c], False), *((r, True) for r in sorted(linear_of.get(c, ()))))
                    for c in off_classes]
        blamed = {sel.choices[nodes[nid].eclass] for p in explain for nid in back.get(p, ())}
        blocked = sorted(blamed & reached) or sorted(reached)
        return [tuple((nid, False) for nid in blocked)]

    return checker


@dataclass(frozen=True)
class _Refusal:
    """A PEG :func:`make_checker`'s checker refused (:func:`_problems`' verdict on it, without the PEG) and the
    work that verdict cost, as :class:`_Answer` counts it."""

    back: dict
    why: str
    explain: frozenset[int]
    off: list[int]
    comparisons: int
    pairs: tuple[int, ...]


@dataclass(frozen=True)
class _Answer:
    """One answer of :func:`make_checker`'s checker and the work it cost: asked again, the checker gives the same
    answer at the same price, so that its budgets run out exactly where computing it again would make them."""

    clauses: list[maxsat.NodeClause]
    #: phi-profile route-step comparisons spent (:class:`.phi_profile.Effort`)
    comparisons: int
    #: the node pairs of each question put to ``accept`` (none or one)
    pairs: tuple[int, ...]

    def again(self, effort: Effort, accepting: Effort, work: int, accept_work: int) -> list[maxsat.NodeClause]:
        # the same order as the first time: the profiles, then ``accept``; a budget that would run out on the
        # way runs out here the same (the comparisons are a fixed sequence of charges, all before ``accept``)
        effort.spend(self.comparisons)
        if effort.spent_out:
            raise maxsat.OutOfWork(f"checker: {work} comparisons", final=True)
        for pairs in self.pairs:
            if not accepting.spend(pairs):
                raise maxsat.OutOfWork(f"checker: {accept_work} node pairs to revert (next: {pairs})", final=True)
        return list(self.clauses)


def checkable(peg: PEG) -> bool:
    """Whether the phi-profile checker can judge extractions of ``peg`` at all: the original's own profiles
    stay within the checker's work limits. When they do not, no extraction could be accepted, and the pipeline
    does not saturate (the profiles can take far longer than saturation: pairwise pruning of routes)."""
    return all(v is not None for v in effect_profiles(peg).values())


def extract_peg(peg: PEG, sat: Saturation | None, work: int | None = maxsat.DEFAULT_WORK,
                configs: Sequence[maxsat.SolverConfig] | None = None, accept: Acceptance | None = None,
                goal: Goal = Goal.SPEED) -> tuple[PEG, ExtractReport]:
    """Extract from ``sat``, the saturation of ``peg``, with ``work`` units per solver configuration; returns
    the cheaper checked PEG, or ``peg`` itself, and the report. ``sat`` None: ``peg`` was not saturated because
    :func:`checkable` said no (the original is returned, that reason in the report). ``accept``: the caller's
    own test of a candidate that passed the checks (the reverter's limits, for the pipeline), a rejection
    blocking that selection like a malformed one. The result is a function of the arguments only."""
    times: dict[str, float] = {}
    clock = time.perf_counter  # for the report only
    before = peg_cost(peg, goal)
    if sat is None:
        return peg, ExtractReport("original", before, before, times, "",
                                  notes=["phi-profiles of the original PEG too large to check extractions"])
    eg, mapping, root, run = sat.egraph, sat.mapping, sat.root, sat.run
    if not run.fired() and not sat.inlined:  # nothing was proved equal: the only selection is the original PEG
        return peg, ExtractReport("original", before, before, times, str(run), notes=["no rule fired"],
                                  epeg_nodes=eg.node_count, epeg_classes=eg.class_count)
    t1 = clock()
    pp = build_problem(eg, root, peg, goal)
    times["problem"] = (clock() - t1) * 1000
    t2 = clock()
    polarity = negations(pp)
    baseline = effect_profiles(peg, key=lambda n: eg.find(mapping[n]), polarity=polarity)
    original = original_nodes(pp, peg, eg, mapping)
    accepted: Accepted = {}
    # the debug information a candidate gets (line numbers, locals' names) is given before ``accept`` sees it,
    # so that the reverter's code for the PEG returned is final (``revert.Generated``); debug information only
    class_of = {n: f"c{eg.find(c)}" for n, c in mapping.items()}
    copies = {f"c{eg.find(c)}": f"c{eg.find(o)}" for c, o in eg.info.copied_from.items()}

    def carry(new: PEG, back: dict) -> None:
        _carry_origins(peg, class_of, copies, new, back, pp)
    checker = make_checker(pp, baseline, accept, original=original, polarity=polarity, accepted=accepted,
                           carry=carry)
    notes: list[str] = []
    status, sel, blocks = "original", None, 0
    try:
        res = maxsat.solve(pp.problem, work=work, checker=checker,
                           configs=maxsat.DEFAULT_CONFIGS if configs is None else configs)
        notes.extend(res.notes)
        blocks = res.blocks
        if res.selection is not None:
            sel = res.selection
            status = {maxsat.Status.OPTIMAL: "optimal (proved)", maxsat.Status.BEST_FOUND: "best found",
                      maxsat.Status.GREEDY: "greedy"}[res.status]
    except Exception as e:  # the solver is an optimization: greedy, checked the same way, is the fallback
        notes.append(f"solver failed ({type(e).__name__}: {e}); greedy")
        try:
            g = greedy_extract(pp.problem)
            if not checker(pp.problem, g.selection):
                sel, status = g.selection, "greedy"
        except Exception as e2:
            notes.append(f"greedy failed ({type(e2).__name__}: {e2})")
    times["extract"] = (clock() - t2) * 1000
    report = ExtractReport("original", before, before, times, str(run), blocks, notes,
                           epeg_nodes=eg.node_count, epeg_classes=eg.class_count,
                           search="none" if sel is None else status)
    if sel is None:
        report.notes.append("no selection passed the checks")
        return peg, report
    # checked again here, whatever the solver said; ties among equally cheap selections go to the smaller
    # code (the faster for --goal size) when that passes the same checks, else the solver's selection stands
    def final_check(sel: Selection) -> tuple[PEG | None, dict, str | None]:
        known = accepted.get(frozenset(evaluate_selection(pp.problem, sel).reached_nodes(sel)))
        if known is not None:  # the checker accepted this very PEG (``Accepted``): the same checks, passed
            return known[0], known[1], None
        new, back, why, _, _ = _problems(pp, sel, baseline, accept, polarity=polarity, carry=carry)
        return new, back, why

    solved = prefer_original(pp, sel, original)
    sel = prefer_original(pp, break_ties(pp, solved, original), original)
    new, back, why = final_check(sel)
    if sel != solved and (new is None or why is not None):
        report.notes.append(f"tie-break refused: {why}")
        sel = solved
        new, back, why = final_check(sel)
    if new is None or why is not None:
        report.notes.append(f"extracted PEG rejected: {why}")
        return peg, report
    _carry_origins(peg, class_of, copies, new, back, pp)
    after = peg_cost(new, goal)
    if after >= before:
        report.notes.append(f"no gain ({status}: {after:g} >= {before:g})")
        return peg, report
    report.status, report.cost_after = status, after
    report.selected = evaluate_selection(pp.problem, sel).reached_nodes(sel)
    return new, report
