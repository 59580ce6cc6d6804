"""The validate run: pair, prove, search for counterexamples, collect verdicts.

What this module owns
    :class:`ValidateOptions` (the command line's knobs as data) and :func:`validate_inputs` (ORIG, OPT ->
    :class:`~.report.ValidationReport`).

How
    Pairs are proved callees first (:func:`~.modular.proof_order`), each through a :class:`~.modular.CallView`
    that reads ORIG's PEG in OPT's names and keeps a call one operator only when its callees' pairs are proved
    (or, in a recursive component, assumed by the regression-verification rule: :meth:`_Run.prove_component`).
    Every pair goes to :func:`~.prove.prove_pair` with most of its budget (``method_timeout``; the proofs of
    a recursive component proved again share it). Pairs not
    proved that :func:`~.counterexample.eligible` accepts are screened in the IR interpreter for the rest of their
    budget; the candidates of all pairs are then confirmed in ONE JVM run (a JVM start costs more than most
    proofs). A pair with a confirmed difference (or one side still running far longer than the other took:
    :attr:`~.counterexample.JvmOutcomes.runs_on`) is ``not-equivalent``; every other unproved pair is
    ``unknown`` with the proof's reason and the search's. The rows stay in pairing order.

The optimizer's proof, found again
    Each pair is first proved the way the optimizer's self-check proves its own rewrites: the optimizer's safe
    rules within its work limits (:func:`_optimizer_proof`), in at most :data:`OPTIMIZER_SHARE` of the pair's
    proof budget; then, if that did not prove it, with the default rules (:func:`_default_rules`: the bundled
    axioms' defaults with every group of the safe set on as well) in the rest. What the optimizer proved,
    ``validate`` of its output must prove too, and the larger default set can make saturation spend its budget
    elsewhere (JAMA's ``tql2``: saturated without a proof in 5 s, proved by the safe rules in 1.3 s); the
    smaller set is also the cheaper attempt, so it goes first. Both rule sets are sound, so either proof is a
    proof. Rules given by the caller (``--axioms``, ``--rules``) are the only ones tried.

Assumptions (``--assume``, :data:`~peggy_jvm.rules.strings.ASSUMPTIONS`)
    Each named assumption adds its rules, made afresh for every pair (they are told the pair's parameter types).
    A proof in which an assumption's rule merged something is re-checked with the strict rules alone; only if
    that fails is the pair reported as relying on the assumption (``PairResult.assumptions``, a reason suffix).
    So a pair the strict rules prove is never marked, and a marked pair needed the assumption (within the
    budget). An unproved pair whose saturation ran out of budget is tried strictly too, so ``--assume`` never
    proves fewer pairs. Without ``--assume``, a pair the strict rules saturate without a proof and that differs
    in String calls is tried under each assumption, and its (still unknown) reason names those that prove it.

Inputs: two paths, options. Outputs: the report. Errors: :class:`~peggy_jvm.archive.InputError` (bad input, or
no method paired: the caller exits 2); nothing else escapes for a single method.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable

from ..archive import InputError
from ..classfile.descriptors import parse_method_descriptor
from ..classfile.hierarchy import ClassHierarchy, UnknownClassError
from ..rules.strings import ASSUMPTIONS, CLOSED_WORLD, assumption_rules
from . import counterexample as cx
from .modular import CallView, Component, Key, Program, proof_order
from .pairing import MethodPair, load_side, nothing_paired, pair_methods, split_map
from .prove import SHAPED_SHARE, ProofBudget, ProofResult, prove_pair
from .report import PairResult, ValidationReport, Verdict, assumption_note

# of the per-method budget; the rest is the interpreter screen, which a pair whose proof stops early (saturated,
# the usual case for a real difference) gets nearly all of; 0.6 left JAMA's SVD constructor, proved in ~5.5 s,
# at the mercy of machine load
PROOF_SHARE = 0.8


@dataclass(slots=True)
class ValidateOptions:
    class_map: dict[str, str] = field(default_factory=dict)
    method_timeout: float = 10.0
    explain: bool = False
    rules: list | None = None  # active rewrites; None: the default axioms
    counterexamples: bool = True
    assumptions: tuple[str, ...] = ()  # names from rules.strings.ASSUMPTIONS; () is strict JVM semantics


@dataclass(slots=True)
class _Pending:
    index: int  # into report.pairs
    pair: MethodPair
    proof: ProofResult
    screened: cx.Screening
    jvm_budget_ms: int  # what the pair's budget has left for its JVM runs after proof and screen
    shape: cx.Shape  # static, instance method or constructor


def validate_inputs(orig_path: Path, opt_path: Path, options: ValidateOptions,
                    progress=None) -> ValidationReport:
    """``progress(done, total, proved)``, when given, is called after each pair's proof (and screen)."""
    start = time.perf_counter()
    orig = load_side(orig_path)
    opt = load_side(opt_path)
    try:
        class_map, members = split_map(options.class_map, orig.classes)
    except ValueError as e:
        raise InputError(str(orig_path), str(e)) from None
    pairing = pair_methods(orig, opt, class_map, members)
    if (error := nothing_paired(pairing, orig_path, opt_path)) is not None:
        raise error
    rules = options.rules if options.rules is not None else _default_rules()
    assumptions = tuple(dict.fromkeys(options.assumptions))
    if assumptions:
        assumption_rules(assumptions)  # an unknown name is an error before any work
    report = ValidationReport(unpaired=pairing.unpaired, skipped=pairing.skipped, explain=options.explain,
                              assumptions=list(assumptions))
    pending: list[_Pending] = []
    same_bytes = {name for name, data in orig.raw.items()
                  if opt.raw.get(class_map.get(name, name)) == data and not any(c == name for c, _ in members)}
    program = Program(pairing.pairs, orig.classes, orig.hierarchy, opt.classes, opt.hierarchy, class_map,
                      pairing.members)
    run = _Run(options, orig.hierarchy, opt.hierarchy, rules, assumptions, program, same_bytes)
    rows: list[PairResult | None] = [None] * len(pairing.pairs)
    done = proved = 0
    for component in proof_order(pairing.pairs, program):
        proofs = run.prove_component(pairing.pairs, component)
        for i in component.pairs:
            pair = pairing.pairs[i]
            proof, relied, view = proofs[i]
            t0 = time.perf_counter()
            deadline = time.monotonic() + options.method_timeout - run.spent[i]
            row = PairResult(pair.key[0], pair.orig.name, pair.orig.descriptor,
                             Verdict.EQUIVALENT if proof.proved else Verdict.UNKNOWN, proof.reason,
                             axioms=proof.axioms if proof.proved else None,
                             assumptions=relied if assumptions else None)
            if relied:
                row.reason += assumption_note(relied)
            if not proof.proved and not assumptions:
                row.reason += _assumption_hint(pair, orig.hierarchy, opt.hierarchy, rules, run.budget(i),
                                               run.same(pair, view), proof, view)
            if not proof.proved and options.counterexamples and not run.worth_searching(i):
                row.reason += "; not searched: no callee it waits for behaved differently in the interpreter"
            elif not proof.proved and options.counterexamples:
                interfaces = _interface_params(pair, orig.hierarchy)
                shape = cx.shape_of(pair.orig_class, pair.orig, pair.opt)
                why_not = cx.eligible(shape, pair.orig.descriptor, interfaces)
                if pair.inherited:  # the harness calls a method its class declares
                    why_not = "not searched: one side's class inherits it"
                if why_not is not None:
                    row.reason += f"; {why_not}"
                elif proof.orig_ir is None or proof.opt_ir is None:
                    row.reason += "; no IR to search for a counterexample"
                else:
                    s = cx.screen(proof.orig_ir, proof.opt_ir, pair.orig.descriptor, orig.classes, opt.classes,
                                  deadline - cx.JVM_SHARE * options.method_timeout, interfaces, shape)
                    run.differing[pair.key] = s.differing
                    pending.append(_Pending(i, pair, proof, s, int((deadline - time.monotonic()) * 1000), shape))
            row.time_ms = (run.spent[i] + time.perf_counter() - t0) * 1000
            rows[i] = row
            done += 1
            proved += proof.proved
            if progress is not None:
                progress(done, len(pairing.pairs), proved)
    report.pairs = [r for r in rows if r is not None]
    if pending:
        _confirm(report, pending, orig.raw, opt.raw, class_map)
    report.seconds = time.perf_counter() - start
    return report


#: the reason of an unknown pair proved once its unproved callees are taken as equivalent (they follow)
GIVEN_CALLEES = "not proved: equivalent if its callees are: "
#: appended to the reason of a pair proved under the regression-verification rule (docs/validation.md)
RECURSIVE_NOTE = "; its recursive calls assumed equal: partial equivalence (equal whenever both return or throw)"


class _Run:
    """The proofs of one run, callees first: what is proved so far (``proved``: pair keys a caller may assume),
    and each pair's time spent proving (``spent``: its screen and JVM runs get the rest of its budget)."""

    def __init__(self, options: ValidateOptions, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list,
                 assumptions: tuple[str, ...], program: Program, same_bytes: set[str]) -> None:
        self.options, self.orig_h, self.opt_h, self.rules = options, orig_h, opt_h, rules
        self.assumptions, self.program, self.same_bytes = assumptions, program, same_bytes
        self.proved: set[Key] = set()
        self.spent: dict[int, float] = {}
        self.waits: dict[int, set[Key]] = {}  # a pair proved given its callees -> the unproved pairs it waits for
        self.differing: dict[Key, int] = {}  # pair -> inputs its interpreter screen saw behave differently

    def budget(self, i: int) -> ProofBudget:
        """The proof budget of pair ``i``: its share of ``--method-timeout`` less what its earlier proofs took."""
        total = self.options.method_timeout * PROOF_SHARE
        return ProofBudget(time_s=max(MIN_OPTIMIZER_PROOF_S, total - self.spent.get(i, 0.0)),
                           shaped_share=SHAPED_SHARE)

    def same(self, pair: MethodPair, view: CallView) -> bool:
        """Byte-identical classes, and every call ORIG's method makes read as OPT's."""
        return pair.orig_class.name in self.same_bytes and not pair.inherited and view.calls_assumed(pair)

    def prove_component(self, pairs: list[MethodPair],
                        component: Component) -> dict[int, tuple[ProofResult, list[str], CallView]]:
        """Proofs of a component's pairs. A recursive component is proved under the hypothesis that the calls
        among its pairs are equal (regression verification); a pair not proved under it leaves the hypothesis
        and the others are proved again without it, until every pair still in it is proved."""
        hypothesis = {pairs[i].key for i in component.pairs} if component.recursive else set()
        out: dict[int, tuple[ProofResult, list[str], CallView]] = {}
        todo = list(component.pairs)
        while todo:
            for i in todo:
                view = CallView(self.program, frozenset(self.proved | hypothesis))
                t0 = time.perf_counter()
                out[i] = (*self._prove_one(pairs[i], i, view), view)
                self.spent[i] = self.spent.get(i, 0.0) + time.perf_counter() - t0
            failed = {pairs[i].key for i in todo if not out[i][0].proved}
            if not failed & hypothesis:
                break
            hypothesis -= failed
            todo = [i for i in todo if pairs[i].key in hypothesis]
        for i in component.pairs:
            proof, _relied, view = out[i]
            if proof.proved:
                self.proved.add(pairs[i].key)
                if component.recursive:
                    proof.reason += RECURSIVE_NOTE
            elif callees := view.unassumed(pairs[i]):
                self._given_callees(pairs[i], i, proof, callees)
        return out

    def _given_callees(self, pair: MethodPair, i: int, proof: ProofResult, callees: dict[str, set[Key]]) -> None:
        """For a pair not proved while some callees are unproved: whether it is proved once they are taken as
        equivalent (the verdict stays unknown; the reason says so, and which callees it waits for)."""
        t0 = time.perf_counter()
        given, _relied = self._prove_one(pair, i, CallView(self.program, None))
        self.spent[i] = self.spent.get(i, 0.0) + time.perf_counter() - t0
        if given.proved:
            names = sorted(callees)
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            proof.reason = f"{GIVEN_CALLEES}{shown} (not proved equivalent)"
            self.waits[i] = set().union(*callees.values())

    def worth_searching(self, i: int) -> bool:
        """Whether to search pair ``i`` for a counterexample: always, unless it is proved given its callees;
        then only when the interpreter saw some callee it waits for behave differently (its difference is a
        callee's, and a search of every caller of an unproved method costs their whole budgets: jsoup's
        ProGuard output took 14 times as long)."""
        return i not in self.waits or any(self.differing.get(k, 0) for k in self.waits[i])

    def _prove_one(self, pair: MethodPair, i: int, view: CallView) -> tuple[ProofResult, list[str]]:
        """The pair's proof the optimizer's way first (its safe rules and work limits, :func:`_optimizer_proof`)
        within :data:`OPTIMIZER_SHARE` of its budget, then with the default (or given) rules in what is left.
        The optimizer's rules are a subset of the default ones, so their saturation is the cheaper, and on the
        optimizer's own output it is the proof its self-check found: commons-math3's
        ``AdamsMoultonIntegrator.integrate`` takes 1.1 s of CPU so, and the default rules 2.5 s (without
        ``peg.distrib.phi.const`` they did not prove it). With rules given (``--rules``, ``--axioms``), only
        those."""
        budget = self.budget(i)
        same = self.same(pair, view)
        if self.options.rules is None and budget.time_s is not None:
            start = time.monotonic()
            first = _optimizer_proof(pair, self.orig_h, self.opt_h, same, self.options.explain,
                                     budget.time_s * OPTIMIZER_SHARE, view)
            if first is not None and first.proved:
                return first, []
            budget = replace(budget, time_s=max(MIN_OPTIMIZER_PROOF_S,
                                                budget.time_s - (time.monotonic() - start)))
        closed = _closed_world(self.program) if CLOSED_WORLD in self.assumptions else None
        return _prove(pair, self.orig_h, self.opt_h, self.rules, budget, same, self.options.explain,
                      self.assumptions, view, closed)


#: of a pair's proof budget (``PROOF_SHARE`` of its time), the most the optimizer's proof takes before the
#: default rules get the rest (which were held to 60% when they came first: no pair they proved in that time is
#: lost)
OPTIMIZER_SHARE = 0.4
#: below this many seconds the optimizer's proof is not tried
MIN_OPTIMIZER_PROOF_S = 0.05


def _optimizer_proof(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, same_bytes: bool,
                     explain: bool, seconds: float, view: CallView) -> ProofResult | None:
    """The pair proved the way the optimizer's self-check proves a rewrite (its safe rules, its work limits),
    within ``seconds`` as well; None when there is no time for it."""
    if seconds < MIN_OPTIMIZER_PROOF_S:
        return None
    from ..budget import DEFAULT_WORK_BUDGET
    from ..rules.policy import safe_rules  # the optimizer's rule policy
    limits = DEFAULT_WORK_BUDGET.proof()
    budget = ProofBudget(time_s=seconds, max_nodes=limits.max_nodes, max_iterations=limits.max_iterations,
                         induction_steps=limits.induction_steps)
    return prove_pair(pair, orig_h, opt_h, safe_rules(), budget, same_class_bytes=same_bytes, explain=explain,
                      view=view)


def _prove(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list, budget: ProofBudget,
           same_bytes: bool, explain: bool, assumptions: tuple[str, ...],
           view: CallView, closed: tuple[Callable, Callable] | None = None) -> tuple[ProofResult, list[str]]:
    """The proof of one pair and the assumptions it relied on (see the module docstring). ``closed``: the
    closed-world predicates (:func:`_closed_world`), tried only once the pair is not proved without them, so a
    pair marked ``closed-world`` needed it."""
    start = time.perf_counter()
    proof, relied = _prove_by_rules(pair, orig_h, opt_h, rules, budget, same_bytes, explain,
                                    tuple(a for a in assumptions if a != CLOSED_WORLD), view)
    if proof.proved or closed is None or CLOSED_WORLD not in assumptions:
        return proof, relied
    left = None if budget.time_s is None else budget.time_s - (time.perf_counter() - start)
    if left is not None and left < MIN_OPTIMIZER_PROOF_S:
        return proof, relied
    world = prove_pair(pair, orig_h, opt_h, rules, replace(budget, time_s=left), same_class_bytes=same_bytes,
                       explain=explain, view=view, only_target=closed)
    return (world, [*relied, CLOSED_WORLD]) if world.proved else (proof, relied)


def _closed_world(program: Program) -> tuple[Callable, Callable]:
    """ORIG's and OPT's closed-world predicates (``CalleeSource.only_target``): a virtual call of ``ref`` (that
    side's names) whose only target in the input is the method it names (no override on that side)."""
    def only(side) -> Callable:
        return lambda ref: (side.targets(ref.owner, ref.name, ref.descriptor, True)
                            == {side.key(ref.owner, ref.name, ref.descriptor)})
    return only(program.orig), only(program.opt)


def _prove_by_rules(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list,
                    budget: ProofBudget, same_bytes: bool, explain: bool, assumptions: tuple[str, ...],
                    view: CallView) -> tuple[ProofResult, list[str]]:
    """The proof with the rules of the named assumptions (see the module docstring)."""
    if not assumptions:
        return prove_pair(pair, orig_h, opt_h, rules, budget, same_class_bytes=same_bytes, explain=explain,
                          view=view), []
    extra = assumption_rules(assumptions, pair_param_types(pair))
    proof = prove_pair(pair, orig_h, opt_h, list(rules) + extra, budget, same_class_bytes=same_bytes,
                       explain=explain, view=view)
    if not any(r.applied for r in extra):
        return proof, []
    if not proof.proved and not _stopped_early(proof.reason):
        return proof, []  # saturated with every strict rule among them: the strict rules alone prove no more
    strict = prove_pair(pair, orig_h, opt_h, rules, budget, same_class_bytes=same_bytes, explain=explain,
                        view=view)
    if strict.proved or not proof.proved:
        return strict, []
    return proof, list(assumptions)


def _assumption_hint(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list,
                     budget: ProofBudget, same_bytes: bool, strict: ProofResult, view: CallView) -> str:
    """For a pair the strict rules saturated without a proof that differs in String calls: the assumptions
    under which it IS proved, as a reason suffix (the verdict stays unknown). ProGuard's ``a + b`` ->
    ``a.concat(b)`` is strictly a change (``concat`` may return its receiver, a concatenation never does), and a
    user deciding whether to pass ``--assume`` should see which pairs it would settle."""
    if _stopped_early(strict.reason) or "java/lang/String" not in strict.reason:
        return ""
    names = []
    for name in ASSUMPTIONS:
        if name == CLOSED_WORLD:  # no rules: it widens what is inlined, which this hint does not try
            continue
        extra = assumption_rules((name,), pair_param_types(pair))
        if prove_pair(pair, orig_h, opt_h, list(rules) + extra, budget, same_class_bytes=same_bytes,
                      view=view).proved:
            names.append(name)
    return assumption_note(names, "proved under") if names else ""


def _stopped_early(reason: str) -> bool:
    """The unproved proof's saturation ran out of budget (time, nodes, iterations): the assumption's rules may
    have taken what the strict ones needed, so the strict proof is tried too (never fewer proofs with
    ``--assume``)."""
    return reason.startswith("not proved: saturation ") and not reason.startswith("not proved: saturation saturated")


def _interface_params(pair: MethodPair, hierarchy: ClassHierarchy) -> frozenset[str]:
    """The descriptors of the pair's parameter types that are interfaces (ORIG's classes, then the JDK's)."""
    params, _ret = parse_method_descriptor(pair.orig.descriptor)
    out = set()
    for d in params:
        if d.startswith("L") and d not in ("Ljava/lang/String;", "Ljava/lang/Object;"):
            try:
                if hierarchy.is_interface(d[1:-1]):
                    out.add(d)
            except UnknownClassError:  # on neither side's path nor in the JDK: no stub for it
                continue
    return frozenset(out)


def pair_param_types(pair: MethodPair) -> list[str]:
    """Field descriptors of the pair's ``param`` nodes by index: ``this`` first unless static."""
    params, _ret = parse_method_descriptor(pair.orig.descriptor)
    return list(params) if pair.orig.is_static else [f"L{pair.orig_class.name};", *params]


_DEFAULT_RULES: dict[tuple, list] = {}


def _default_rules() -> list:
    """The default axioms' active rewrites with the optimizer's safe groups on too (so that every rule its
    self-check proves with is among them), parsed and compiled once per process for the same axiom files (their
    names, sizes and modification times): loading them took 1.5-3 s of every ``validate_inputs`` call, more than
    a small input's proofs (a run of the EqBench bench, or a test that validates a few classes)."""
    from ..rules.library import axiom_files, default_axiom_dir, default_rules
    from ..rules.policy import with_safe_groups
    files = axiom_files(default_axiom_dir())
    key = tuple((str(f), f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.exists())
    if key not in _DEFAULT_RULES:
        _DEFAULT_RULES.clear()
        _DEFAULT_RULES[key] = with_safe_groups(default_rules()).active()
    return _DEFAULT_RULES[key]


def _confirm(report: ValidationReport, pending: list[_Pending], orig_raw: dict, opt_raw: dict,
             class_map: dict[str, str]) -> None:
    """Run every candidate in one JVM; the first confirmed difference of a pair is its counterexample."""
    calls: list[cx.Call] = []
    owners: list[int] = []
    for k, p in enumerate(pending):
        if p.jvm_budget_ms <= 0:
            continue
        for args in p.screened.candidates:
            calls.append(cx.Call(p.pair.orig_class.name, p.pair.opt_class.name, p.pair.orig.name,
                                 p.pair.orig.descriptor, args, shape=p.shape, group=k, budget_ms=p.jvm_budget_ms,
                                 opt_descriptor=p.pair.opt.descriptor))
            owners.append(k)
    answers: list[cx.JvmOutcomes | None] = [None] * len(calls)
    jvm_problem = ""
    if calls:
        try:
            harness = cx.JvmHarness(orig_raw, opt_raw, class_map)
            try:
                answers = harness.run(calls)
            finally:
                harness.close()
        except cx.JvmUnavailable as e:
            jvm_problem = str(e)
    found: dict[int, tuple[list, cx.JvmOutcomes]] = {}
    late: dict[int, list] = {}  # the first input whose runs did not fit the pair's budget
    unanswered: set[int] = set()
    for k, call, ans in zip(owners, calls, answers):
        if ans is None:
            unanswered.add(k)
            continue
        report.pairs[pending[k].index].time_ms += ans.ms
        if k not in found and (ans.confirms or ans.runs_on):
            found[k] = (call.args, ans)
        elif ans.out_of_time:
            late.setdefault(k, call.args)
    for k, p in enumerate(pending):
        row = report.pairs[p.index]
        if k in found:
            args, ans = found[k]
            params, ret = parse_method_descriptor(p.pair.orig.descriptor)
            row.verdict = Verdict.NOT_EQUIVALENT
            row.reason = "counterexample confirmed on the JVM"
            shown = {"ORIG": cx.describe_outcome(ans.orig, ret, p.shape),
                     "OPT": cx.describe_outcome(ans.opt, ret, p.shape)}
            if slow := ans.runs_on:
                fast, fast_ms, slow_ms = ("ORIG", ans.orig_ms, ans.opt_ms) if slow == "OPT" else \
                    ("OPT", ans.opt_ms, ans.orig_ms)
                shown[slow] = f"still running after {slow_ms} ms (stopped)"
                row.reason += (f" ({slow} was still running after {slow_ms} ms where {fast} finished in {fast_ms} "
                               f"ms: it does not terminate on this input, or takes over {cx.HANG_FACTOR} times "
                               "as long)")
            elif why := cx.why_different(params, args, ans.orig, ans.opt, ret):
                row.reason += f" ({why})"
            row.counterexample = {"args": cx.show_call(params, args, p.shape), "orig": shown["ORIG"],
                                  "opt": shown["OPT"]}
            continue
        s = p.screened
        note = f"no difference found on {s.tried} inputs"
        if s.differing:
            note = f"the interpreter saw {s.differing} differing inputs but the JVM did not confirm them"
        elif s.unsupported:
            note += f" (the interpreter could not model some: {s.unsupported})"
        if jvm_problem:
            note += f"; JVM not run: {jvm_problem}"
        row.reason += f"; {note}{_time_note(p, late.get(k), k in unanswered)}"


def _time_note(p: _Pending, late_args: list | None, unanswered: bool) -> str:
    """Why the JVM runs of an unconfirmed pair were cut short, if they were (the pair's budget, or a JVM slow to
    answer that was killed)."""
    if p.screened.candidates and p.jvm_budget_ms <= 0:
        return "; no time left for the JVM runs within --method-timeout"
    if late_args is not None:
        params, _ret = parse_method_descriptor(p.pair.orig.descriptor)
        shown = ", ".join(cx.show_call(params, late_args, p.shape))
        return (f"; the JVM run on ({shown}) did not finish within the pair's budget "
                f"({p.jvm_budget_ms} ms left for the JVM): stopped")
    if unanswered:
        return "; the JVM did not answer every call (it died, or was killed for taking too long)"
    return ""
