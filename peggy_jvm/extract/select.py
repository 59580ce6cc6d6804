"""PEG selection for one method: saturate, extract the cheapest valid PEG, or keep the original.

What this module owns
    :func:`extract_peg` (PEG -> PEG and :class:`ExtractReport`), :func:`safe_rules` (the rule groups the
    ``full`` stage saturates with, and why each is sound), :func:`optimizer_rules` (those plus the user's
    :class:`RuleOptions`: ``optimize --axioms/--no-default-axioms/--rules``) and :func:`make_checker` (the
    validity checker handed to the MaxSAT driver).

User rules
    The user's axiom files join the safe groups: every group they define (unless its ``group`` line says
    ``off``) is on, then ``--rules`` switches apply in order. The self-check (pipeline.py) proves every rewrite
    with :func:`proof_rules`: the default safe rules (whatever ``--rules`` switched) plus only those active
    user rules that the soundness checker (rules/check.py) evaluates and finds sound, the same evidence the
    default value rules rest on. The proof's trust comes from these verdicts, not from the command line having
    refused anything: a user rule found unsound, or one the checker cannot evaluate (exempt: loops, heap,
    effects), only steers the search and never vouches for its own rewrite (docs/axioms.md, "Your own
    axioms"). Loading and the verdicts are cached per options value (:func:`load_rule_options`), so each
    process parses, compiles and fuzzes once.

How (DESIGN section 4)
    1. The PEG goes into a fresh :class:`EPeg`; the :class:`Runner` saturates it within :class:`Limits`.
    2. :func:`.peg_problem.build_problem` makes the extraction problem of what the root reaches, priced by
       :mod:`.cost`.
    3. :func:`.maxsat.solve` extracts within its work budget (work units per solver configuration), with a
       checker that turns each candidate selection into a PEG and runs :func:`peggy_jvm.peg.check.peg_problems`
       (well-formed, CFG-like) and the phi-profile checker (:mod:`.phi_profile`); a rejection comes back as a
       blocking clause (the violation's explanation for phi-profiles, the whole reached selection for malformed
       PEGs, or ones the caller's ``accept`` refuses) and RC2 is called again. Greedy is the fallback when the
       solver fails.
    4. The extracted PEG is checked again and priced with :func:`.cost.peg_cost` (for the caller's goal: speed,
       or size with ``--goal size``); unless it is strictly cheaper than the original PEG, the ORIGINAL PEG is
       returned (no churn for nothing).

Inputs: a sealed, well-formed PEG (from :func:`peggy_jvm.peg.build.build_peg`), rules, limits, a work budget.
No clock decides anything here when the limits set none: the same PEG and options give the same result.
Outputs: a sealed PEG that passed ``check_peg`` and the phi-profile checker (or the input PEG itself) and a report.
Invariants: the returned PEG is either the input or an extraction that passed every check; ``cost_after <=
cost_before`` always, and ``<`` whenever the PEG changed.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from ..codecost import Goal
from ..egraph.runner import Limits, Rewrite, RunReport, Runner
from ..epeg import EPeg
from ..peg.check import _kinds, peg_problems
from ..peg.ops import OPS, Role, T
from ..peg.graph import PEG
from ..revert.revert import pure_loops
from ..rules import check as rule_check
from ..rules.check import CheckResult
from ..rules.compile import compile_rule
from ..rules.inline import CalleeSource, choose_bodies, inline_calls
from ..rules.library import RuleSet, axiom_files, default_axiom_dir, default_rules, load_rules, parse_axiom_files
from ..rules.syntax import RuleAST
from . import maxsat
from .cost import peg_cost
from .greedy import greedy_extract
from .peg_problem import PegProblem, build_problem, class_number, selection_to_peg
from .phi_profile import Effort, Profiles, effect_profiles, find_violation
from .problem import ExtractionProblem, Selection, evaluate_selection

__all__ = ["Acceptance", "ExtractReport", "Saturation", "saturate", "extract_peg", "safe_rules", "SAFE_GROUPS",
           "EXCLUDED_RULES", "make_checker", "RuleOptions", "UserRule", "load_rule_options", "optimizer_rules", "proof_rules"]

#: a later stage's test of a checked candidate PEG: why it cannot take it, or None
Acceptance = Callable[[PEG], "str | None"]

# The rule groups the full stage saturates with, while the validator (issue 7) cannot check its output.
# Fuzzer-checked (tests/test_axioms_sound.py instantiates every rule on Java edge values, bit-exact):
#   arith.int, arith.long, arith.float, arith.double, bits.int, bits.long, logic, compare.int, compare.cmp,
#   convert, peg.phi, peg.distrib.phi: pure operators (total functions of their inputs; phi is pointwise).
#   peg.phi.cond (conditional constant folding: in the arm of phi(x == k, ..) x is k) and peg.phi.factor (an
#   operand both arms share taken out of the phi) are fuzzer-checked the same way, every %f instance included.
# Built-in rules (code): fold (folds with OPS[op].fn, the same semantics the JVM is tested against, never a
#   division by zero); arith.shift (x * 2^k == x << k is exact in two's complement; a constant shift count c
#   equals c & 31 / c & 63 by the JVM's definition of shifts).
# Exempt from the fuzzer, argued here:
#   peg.distrib.eval: eval_l picks one iteration of a sequence; a pure operator applied pointwise commutes with
#     picking (eval(f(a, b), i) = f(eval(a, i), eval(b, i))), and so does phi. Pure operators never throw
#     (div.i/rem.i only ever see a divisor checked by check.zero, an effect that stays on the sigma chain), so
#     computing them outside the loop changes nothing observable.
#   peg.loop: Tate's loop axioms by the definitions of theta/eval/pass (eval(theta(a,b),0) = a for invariant a,
#     eval(theta(a,b),succ i) = eval(b,i), pass(true) = 0, theta(a, itself) = a); eval of an invariant VALUE
#     keeps the loop itself on the sigma chain (every loop threads sigma; the method's result depends on it), so
#     non-termination and exceptions of the loop are kept; eval of an invariant SIGMA (dead-loop deletion)
#     requires terminates(i), which only accepts zero/succ and pass of a condition that is true at some
#     iteration (constant true, or a +-1 counter reaching an invariant bound, which int wrap-around guarantees);
#     an invariant sigma means the loop has no effect and no inner loop (inner loops thread the sigma too).
#     theta-bisimulation merges thetas with equal initial values whose next values are equal by induction
#     (through loop nests: a cycle of the comparison must make the loop indexes decrease lexicographically).
#   peg.loop.strength: t*k for t = theta(a, t + c) with invariant k, c is theta(a*k, t*k + c*k) by
#     distributivity, which holds in Z/2^32 and Z/2^64 (wrap-around); likewise << k (multiplication by 2^(k&31)).
#   peg.loop.closed: the exit value of a +-1 counter against an invariant bound (it cannot overflow before
#     reaching the bound); the guarded form may exit earlier on an exception, but then the method ends with it
#     (handlers are not reverted, see revert.py) and the value is never read. theta-linear (builtin):
#     s = theta(a, s + c), c invariant, is a + i * c for the counter i = theta(0, i + 1), by induction and
#     distributivity in Z/2^32; with the exit value of the counter it gives accumulators in closed form.
#   peg.loop.peel (under the peg.loop prefix): loop peeling, eval(X, pass(C)) = phi(C@0, X@0, eval(X+, pass(C+)))
#     by the definition of pass (0 when C holds at 0, else one more than in the shifted loop); the first test's
#     guard is dropped because the loop's heap is selected by the same phi (see rules/peel.py).
# Excluded: effects, heap.array, heap.field, java.lang (docs/axioms.md lists doubts about the exception model,
#   e.g. read-over-write through a putfield that may throw NullPointerException, and calls as pure operators);
#   compare.ref (distinct/nonnull reason about allocation and the receiver); the groups that are off by default
#   (sound but they blow up within a per-method budget).
SAFE_GROUPS: tuple[str, ...] = (
    "arith.int", "arith.long", "arith.float", "arith.double", "arith.shift", "bits.int", "bits.long", "logic",
    "compare.int", "compare.cmp", "convert", "fold", "peg.phi", "peg.phi.cond", "peg.phi.factor",
    "peg.distrib.phi", "peg.distrib.eval",
    "peg.loop", "peg.loop.strength", "peg.loop.closed",
)
#: sub-groups under the prefixes above that stay off (blow-up, see axioms/*.ax)
EXCLUDED_SUBGROUPS: tuple[str, ...] = ("arith.int.ac", "arith.long.ac", "peg.distrib.phi.more",
                                       "peg.distrib.phi.one")
#: Rules of the safe groups kept off. Dead-loop deletion (eval-invariant-heap: eval of an invariant sigma, given a
#: terminating index) is on: it takes an effect-free loop off the sigma chain, and the reverter computes such a
#: loop where its values are wanted (revert.pure_loops re-checks on the extracted PEG itself that the loop has no
#: effect and ends; :func:`loops_on_sigma` refuses any other loop off the chain).
EXCLUDED_RULES: tuple[str, ...] = ()

_CACHED_RULES: list[Rewrite] | None = None


def _select_safe(rs: RuleSet, extra_groups: Sequence[str] = (), safe: bool = True) -> RuleSet:
    """``rs`` with exactly the safe groups present in it (none unless ``safe``) and ``extra_groups`` (by exact
    name, not as prefixes) on, the excluded sub-groups and rules of the safe groups off."""
    groups = [g for g in SAFE_GROUPS if safe and any(x == g or x.startswith(g + ".") for x in rs.groups)]
    rs.only(*groups)
    present = [g for g in EXCLUDED_SUBGROUPS if g in rs.groups]
    if present:
        rs.disable(*present)
    for r in EXCLUDED_RULES:
        rs.disable(r)
    for g in extra_groups:  # the user asked for these: on whatever their names
        rs.groups[g] = True
    return rs


def safe_rules(rules: RuleSet | None = None) -> list[Rewrite]:
    """The active rewrites of :data:`SAFE_GROUPS` (the default rule set when ``rules`` is None; cached)."""
    global _CACHED_RULES
    if rules is None and _CACHED_RULES is not None:
        return _CACHED_RULES
    out = _select_safe(rules if rules is not None else default_rules()).active()
    if rules is None:
        _CACHED_RULES = out
    return out


@dataclass(frozen=True)
class RuleOptions:
    """The user's say in the full stage's rules. Paths and switches rather than rules, so that it pickles
    cheaply to the worker processes and keys their cache."""
    axioms: tuple[Path, ...] = ()  # files or directories of ``*.ax`` files, added to the defaults
    defaults: bool = True  # False: the bundled axioms are left out and the built-in rules off
    switches: tuple[str, ...] = ()  # ``+group,-group,...`` strings, applied in order (RuleSet.switch)

    def user_files(self) -> list[Path]:
        return [f for p in self.axioms for f in axiom_files(p)]


@dataclass(frozen=True)
class UserRule:
    """One of the user's rules that will run, with the soundness checker's verdict on it."""
    ast: RuleAST
    rewrites: tuple[str, ...]  # the names of its rewrites (``NAME``, and ``NAME-rev`` for ``<=>``)
    check: CheckResult


_LOADED: dict[RuleOptions, tuple[RuleSet, list[UserRule]]] = {}


def load_rule_options(options: RuleOptions) -> tuple[RuleSet, list[UserRule]]:
    """The rule set the full stage saturates with under ``options`` (its active rewrites), and each active user
    rule with the soundness checker's verdict; cached per value. Raises
    :class:`~peggy_jvm.rules.syntax.AxiomError` (parse, type, duplicate name, non-UTF-8 text: ``file:line:col``),
    :class:`ValueError` (an unknown name in a switch) and :class:`OSError`."""
    if options in _LOADED:
        return _LOADED[options]
    user_files = options.user_files()
    parsed = parse_axiom_files(user_files)
    user_groups = [g for f in parsed for g, on in f.groups.items() if on]
    files = (axiom_files(default_axiom_dir()) if options.defaults else []) + user_files
    # the built-in rules are always loaded: without the defaults they are off, for --rules to switch on by name
    rs = _select_safe(load_rules(files), user_groups, safe=options.defaults)
    for spec in options.switches:
        rs.switch(spec)
    active = {r.name for r in rs.active()}
    user = []
    for ast in (a for f in parsed for a in f.rules):
        names = tuple(rw.name for rw in compile_rule(ast) if rw.name in active)
        if names:
            user.append(UserRule(ast, names, rule_check.check_rule(ast)))
    _LOADED[options] = rs, user
    return rs, user


def optimizer_rules(options: RuleOptions | None = None) -> list[Rewrite]:
    """:func:`safe_rules`, or the active rules of ``options`` (:func:`load_rule_options`)."""
    if options is None or options == RuleOptions():
        return safe_rules()
    return load_rule_options(options)[0].active()


def proof_rules(options: RuleOptions | None = None) -> list[Rewrite]:
    """What the self-check proves with: :func:`safe_rules`, plus the user's active rules (``options``) that the
    soundness checker evaluates and finds sound (see the module docstring for why)."""
    if options is None or not options.axioms:
        return safe_rules()
    rs, user = load_rule_options(options)
    vouched = {n for u in user if u.check.status == "sound" for n in u.rewrites}
    return safe_rules() + [r for r in rs.active() if r.name in vouched]


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

    @property
    def changed(self) -> bool:
        return self.status != "original"

    def describe(self) -> str:
        """``status, cost before -> after; notes`` (``show --epeg --extracted``, ``--html``)."""
        return (f"{self.status}, cost {self.cost_before:g} -> {self.cost_after:g}"
                + "".join(f"; {n}" for n in self.notes))


def loops_on_sigma(peg: PEG) -> list[str]:
    """Every loop (``pass`` node) the root reaches must be read by an ``eval`` of a sigma, as in every PEG the
    builder makes (each loop threads the heap), or be a pure loop (:func:`peggy_jvm.revert.revert.pure_loops`:
    no effect, and its break condition provably becomes true), which the reverter computes where its values are
    wanted. Dead-loop deletion makes the latter; any other loop off the sigma chain could hide a
    non-termination the method must keep, so such a PEG is refused (problems as strings)."""
    reached = peg.reachable()
    kinds = _kinds(peg)
    passes = {n for n in reached if peg.nodes[n].op == "pass"}
    on_sigma = {peg.nodes[n].children[1] for n in reached
                if peg.nodes[n].op == "eval" and kinds[peg.nodes[n].children[0]] is T.SIGMA}
    off = passes - on_sigma
    if off:
        off -= pure_loops(peg)
    return [f"n{p}: pass[{peg.nodes[p].attr}] is not on the sigma chain" for p in sorted(off)]


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
            off = by_class.get(c)
            if off is None and c in copies:
                off = by_class.get(copies[c])
            if off is not None:
                new.origins[n] = off
    # a theta equal to an original one (same e-class, not a copy: a peeled loop's thetas are shifted) carries
    # the same local: its loop runs the same iterations with the same values
    local_of: dict[str, tuple[int, int]] = {}
    for n, local in sorted(peg.locals.items()):
        if n in class_of:
            local_of.setdefault(class_of[n], local)
    for n, ids in back.items():
        if ids and new.nodes[n].op == "theta" and nodes[ids[0]].eclass in local_of:
            new.locals[n] = local_of[nodes[ids[0]].eclass]


def _problems(pp: PegProblem, sel: Selection, baseline: Profiles | None, accept: Acceptance | None = None,
              effort: Effort | None = None) -> tuple[PEG | None, dict, str | None, frozenset[int]]:
    """(the PEG, PEG node -> problem nodes, why rejected or None, PEG nodes explaining the rejection)."""
    try:
        peg, back = selection_to_peg(pp, sel)
    except ValueError as e:
        return None, {}, str(e), frozenset()
    bad = peg_problems(peg) or loops_on_sigma(peg)
    if bad:
        return peg, back, "; ".join(bad[:2]), frozenset(range(len(peg.nodes)))
    nodes = pp.problem.nodes
    v = find_violation(peg, key=lambda n: class_number(nodes[back[n][0]].eclass), baseline=baseline,
                       effort=effort)
    if v is not None:
        return peg, back, v.reason, v.explanation
    why = accept(peg) if accept is not None else None
    if why is not None:
        return peg, back, why, frozenset(range(len(peg.nodes)))
    return peg, back, None, frozenset()


#: the checker's work budget for one extraction: phi-profile route-step comparisons
#: (:class:`.phi_profile.Effort`) over all its calls, and calls (each also builds a PEG and asks the caller's
#: ``accept``, the reverter)
CHECK_WORK = 4_000_000
MAX_CHECKS = 40


def make_checker(pp: PegProblem, baseline: Profiles | None = None, accept: Acceptance | None = None,
                 work: int = CHECK_WORK, max_checks: int = MAX_CHECKS) -> maxsat.Checker:
    """A checker for :func:`maxsat.solve`: () for an acceptable selection, else one blocking clause. A pure
    function of the selections it is asked about, in order: after ``max_checks`` calls, or once the
    phi-profiles have used ``work`` step comparisons, it raises :class:`maxsat.OutOfWork` (the solver stops
    with what it accepted so far). Work, not time, so the blocking loop gives the same answers on every run."""
    effort = Effort(work)
    calls = 0

    def checker(problem: ExtractionProblem, sel: Selection) -> list[maxsat.NodeClause]:
        nonlocal calls
        calls += 1
        if calls > max_checks or effort.spent_out:
            raise maxsat.OutOfWork(f"checker: {max_checks} checks or {work} comparisons")
        report = evaluate_selection(problem, sel)
        reached = set(report.reached_nodes(sel))
        _, back, why, explain = _problems(pp, sel, baseline, accept, effort)
        if effort.spent_out:  # "too large to decide" because the allowance ran out: no verdict on this one
            raise maxsat.OutOfWork(f"checker: {work} comparisons")
        if why is None:
            return []
        blocked = sorted({nid for p in explain for nid in back.get(p, ()) if nid in reached}) or sorted(reached)
        return [tuple((nid, False) for nid in blocked)]

    return checker


@dataclass
class Saturation:
    """A PEG saturated in a fresh e-graph: what ``show --epeg`` draws and extraction starts from."""
    egraph: EPeg
    #: PEG node -> its e-class as added (not canonical: use ``egraph.find``)
    mapping: dict[int, int]
    root: int  # the root's canonical class after saturation
    run: RunReport
    inlined: int = 0  # calls merged with their callee's body (rules/inline.py) before the rules ran


def saturate(peg: PEG, rewrites: Sequence[Rewrite], limits: Limits, callees: CalleeSource | None = None
             ) -> Saturation:
    """The optimizer's saturation of ``peg``: the one place :func:`extract_peg` (hence the full stage) and
    ``show --epeg`` make an E-PEG, so the two cannot drift apart (same rules, same limits, same e-graph).
    ``callees``: the methods whose calls may be inlined (:mod:`peggy_jvm.rules.inline`), before the rules run,
    so the inlined bodies are saturated with the rest."""
    eg = EPeg()
    mapping = eg.add_peg(peg)
    inlined = 0
    if callees is not None:
        inlined = inline_calls(eg, peg, mapping, choose_bodies(peg, [peg.root], [(peg, callees)]))
    run = Runner(rewrites, limits).run(eg)
    return Saturation(eg, mapping, eg.find(mapping[peg.root]), run, inlined)


#: the saturation limits when the caller gives none (the full stage passes ``WorkBudget.saturation()``)
DEFAULT_LIMITS = Limits(max_nodes=5_000, max_iterations=12, time_limit_s=None)


def extract_peg(peg: PEG, rules: Sequence[Rewrite] | RuleSet | None = None, limits: Limits | None = None,
                work: int | None = maxsat.DEFAULT_WORK, configs: Sequence[maxsat.SolverConfig] | None = None,
                accept: Acceptance | None = None, goal: Goal = Goal.SPEED,
                on_saturated: Callable[[Saturation], None] | None = None, callees: CalleeSource | None = None
                ) -> tuple[PEG, ExtractReport]:
    """Saturate ``peg`` with ``rules`` (default: :func:`safe_rules`) within ``limits`` and extract with ``work``
    units per solver configuration; returns the cheaper checked PEG, or ``peg`` itself, and the report.
    ``accept``: the caller's own test of a candidate that passed the checks (the reverter's limits, for the
    pipeline), a rejection blocking that selection like a malformed one. ``on_saturated`` sees the saturated
    E-PEG before extraction (``show --epeg --extracted``). ``callees``: the methods whose calls may be inlined
    (:func:`saturate`). With limits that set no time limit
    (the default), the result is a function of the arguments only."""
    times: dict[str, float] = {}
    clock = time.perf_counter  # for the report only
    t0 = clock()
    before = peg_cost(peg, goal)
    # the checker's profiles can take far longer than saturation (pairwise pruning of routes): bounded by
    # work limits, running out meaning "too large to check", which keeps the original
    own = effect_profiles(peg)
    if any(v is None for v in own.values()):  # the checker could not accept any extraction: do not try
        times["saturate"] = (clock() - t0) * 1000
        return peg, ExtractReport("original", before, before, times, "",
                                  notes=["phi-profiles of the original PEG too large to check extractions"])
    if rules is None:
        rewrites = safe_rules()
    elif isinstance(rules, RuleSet):
        rewrites = rules.active()
    else:
        rewrites = list(rules)
    sat = saturate(peg, rewrites, limits or DEFAULT_LIMITS, callees)
    eg, mapping, root, run = sat.egraph, sat.mapping, sat.root, sat.run
    size = {"epeg_nodes": eg.node_count, "epeg_classes": eg.class_count}
    times["saturate"] = (clock() - t0) * 1000
    if on_saturated is not None:
        on_saturated(sat)
    if not run.fired() and not sat.inlined:  # nothing was proved equal: the only selection is the original PEG
        return peg, ExtractReport("original", before, before, times, str(run), notes=["no rule fired"], **size)
    t1 = clock()
    pp = build_problem(eg, root, peg, goal)
    times["problem"] = (clock() - t1) * 1000
    t2 = clock()
    baseline = effect_profiles(peg, key=lambda n: eg.find(mapping[n]))
    checker = make_checker(pp, baseline, accept)
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
    report = ExtractReport("original", before, before, times, str(run), blocks, notes, **size)
    if sel is None:
        report.notes.append("no selection passed the checks")
        return peg, report
    # checked again here, whatever the solver said
    new, back, why, _ = _problems(pp, sel, baseline, accept)
    if new is None or why is not None:
        report.notes.append(f"extracted PEG rejected: {why}")
        return peg, report
    class_of = {n: f"c{eg.find(c)}" for n, c in mapping.items()}
    copies = {f"c{eg.find(c)}": f"c{eg.find(o)}" for c, o in eg.info.copied_from.items()}
    _carry_origins(peg, class_of, copies, new, back, pp)
    after = peg_cost(new, goal)
    if after >= before:
        report.notes.append(f"no gain ({status}: {after:g} >= {before:g})")
        return peg, report
    report.status, report.cost_after = status, after
    report.selected = evaluate_selection(pp.problem, sel).reached_nodes(sel)
    return new, report
