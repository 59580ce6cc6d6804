"""The validate run: pair, prove, search for counterexamples, collect verdicts.

What this module owns
    :class:`ValidateOptions` (the command line's knobs as data) and :func:`validate_inputs` (ORIG, OPT ->
    :class:`~.report.ValidationReport`).

How
    Pairs are proved callees first (:func:`~.modular.proof_order`), each through a :class:`~.modular.CallView`
    that reads ORIG's PEG in OPT's names and keeps a call one operator only when its callees' pairs are proved
    (or, in a recursive component, assumed by the regression-verification rule: :meth:`_Run.prove_component`);
    a pair not proved so is proved again with every callee given, for the reason (``GIVEN_CALLEES``), and that
    proof comes first when the strict one could only fail (:meth:`_Run._prove_strictly`).
    Every pair goes to :func:`~.prove.prove_pair` with most of its budget (``method_timeout``; the proofs of
    a recursive component proved again share it). The budget counts :func:`~peggy_jvm.egraph.clock.clock` seconds:
    this process's CPU time and the wall-clock time it waits for its JVM, within a wall-clock cap of
    :data:`~peggy_jvm.egraph.clock.WALL_FACTOR` times the budget per stretch of a pair's work (each a
    :class:`~peggy_jvm.egraph.clock.metered` block), so a verdict does not depend on the machine's load. Pairs not
    proved that :func:`~.counterexample.eligible` accepts are searched for the rest of their budget
    (:func:`~.counterexample.search`: the IR interpreter's screen, each input it finds different confirmed on
    the JVM at once, the first confirmed one ending the search; a quick one of the first inputs before the
    proof: :class:`_Searcher`); one JVM serves the whole run (:class:`_Jvm`: a JVM start costs more than most
    proofs), started as the run begins. A pair with a confirmed
    difference (or one side still running far longer than the other took:
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
    proof. Rules given by the caller (``--axioms``, ``--rules``) are the only ones tried. The attempts of one
    pair under one view share a :class:`~.prove.PegMemo`: the same code lifted, the same PEGs built and minimized
    once per loop shape (JAMA's ``hqr2``: 19 minimizations in four attempts), the rule sets differing only in
    saturation. A pair still unproved after these and :func:`~.prove.by_ranges` gets one last attempt in what its
    proof budget has left: the case split on the terms read back from the e-graphs the default rules saturated
    (:func:`~.prove.cases_after_saturation`), last so that it costs nothing on a pair proved otherwise; and
    after that, the optimizer's self-check's shortcut replayed (:mod:`.replay`: ORIG's PEG saturated as ``optimize``
    saturates it, OPT's method met there), in what is left and at least :data:`REPLAY_SHARE` of the proof budget:
    the self-check proves some rewrites only so (commons-math3's ``Dfp.sqrt``).

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
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator

from ..archive import InputError
from ..classfile.descriptors import parse_method_descriptor
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy, UnknownClassError
from ..egraph.clock import clock, metered
from ..ir.lift import LiftError, lift_method
from ..ir.printer import format_method
from ..rules.strings import ASSUMPTIONS, CLOSED_WORLD, assumption_rules
from . import counterexample as cx
from .modular import CallView, Component, Key, Program, Proved, proof_order
from .pairing import MethodPair, Side, load_side, nothing_paired, pair_methods, split_map
from .prove import SHAPED_SHARE, PegMemo, ProofBudget, ProofResult, Saturated, by_ranges, cases_after_saturation, \
    kept_apart_for_good, prove_pair
from .replay import prove_in_optimizer_saturation
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
    same_bytes = {name for name, data in orig.raw.items()
                  if opt.raw.get(class_map.get(name, name)) == data and not any(c == name for c, _ in members)}
    program = Program(pairing.pairs, orig.classes, orig.hierarchy, opt.classes, opt.hierarchy, class_map,
                      pairing.members)
    run = _Run(options, orig.hierarchy, opt.hierarchy, rules, assumptions, program, same_bytes)
    rows: list[PairResult | None] = [None] * len(pairing.pairs)
    done = proved = 0
    searcher = _Searcher(orig, opt, class_map)
    run.searcher = searcher if options.counterexamples else None
    try:
        if options.counterexamples and any(not run.same(p, CallView(program, None)) for p in pairing.pairs):
            searcher.jvm.start()  # it boots while the first proofs run: its first answer is what a search waits for
        for component in proof_order(pairing.pairs, program):
            proofs = run.prove_component(pairing.pairs, component)
            for i in component.pairs:
                pair = pairing.pairs[i]
                proof, relied, view = proofs[i]
                with metered():  # the rest of the pair's budget counts from here (egraph/clock.py)
                    row = run.finish(i, pair, proof, relied, view)
                rows[i] = row
                done += 1
                proved += proof.proved
                if progress is not None:
                    progress(done, len(pairing.pairs), proved)
    finally:
        searcher.jvm.close()
    report.pairs = [r for r in rows if r is not None]
    report.seconds = time.perf_counter() - start
    return report


#: the reason of an unknown pair proved once its unproved callees are taken as equivalent (they follow)
GIVEN_CALLEES = "not proved: equivalent if its callees are: "
#: appended to the reason of a pair proved under the regression-verification rule (docs/validation.md)
RECURSIVE_NOTE = "; its recursive calls assumed equal: partial equivalence (equal whenever both return or throw)"


class _Run:
    """The proofs of one run, callees first: what is proved so far (``proved``: pair keys a caller may assume),
    and each pair's time spent proving (``spent``, :func:`~peggy_jvm.egraph.clock.clock` seconds: its screen and JVM
    runs get the rest of its budget)."""

    def __init__(self, options: ValidateOptions, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list,
                 assumptions: tuple[str, ...], program: Program, same_bytes: set[str]) -> None:
        self.options, self.orig_h, self.opt_h, self.rules = options, orig_h, opt_h, rules
        self.assumptions, self.program, self.same_bytes = assumptions, program, same_bytes
        self.proved = Proved()  # grow-only: each pair's view is a snapshot of it, not a copy
        self.spent: dict[int, float] = {}
        self.waits: dict[int, set[Key]] = {}  # a pair proved given its callees -> the unproved pairs it waits for
        self.differing: dict[Key, int] = {}  # pair -> inputs its interpreter screen saw behave differently
        self.searcher: _Searcher | None = None  # None: no counterexample search (--no-counterexamples)
        self.searches: dict[int, cx.Search] = {}  # pair -> its search so far (the quick one before its proof)
        self.given: dict[int, ProofResult] = {}  # pair -> its proof with every callee taken as given (_given)

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
                view = CallView(self.program, self.proved.snapshot(hypothesis))
                with metered():  # the pair's budget counts from here (egraph/clock.py): its own work, its JVM waits
                    with self._charged(i):
                        shown = self._shown_first(pairs[i], i)
                    if shown:
                        out[i] = (ProofResult(False, SHOWN_FIRST), [], view)
                    else:
                        out[i] = (*self._prove_strictly(pairs[i], i, view), view)
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
            elif proof.reason != SHOWN_FIRST and (callees := view.unassumed(pairs[i])):
                self._given_callees(pairs[i], i, proof, callees)
        return out

    def _shown_first(self, pair: MethodPair, i: int) -> bool:
        """Whether pair ``i`` is shown different by the quick search before its proof (run once per pair)."""
        if i not in self.searches and self.searcher is not None and not self.same(pair, CallView(self.program, None)):
            found = self.searcher.quick(pair, self.options.method_timeout)
            if found is not None:
                self.searches[i] = found
                self.differing[pair.key] = found.screened.differing
        return i in self.searches and self.searches[i].found is not None

    @contextmanager
    def _charged(self, i: int) -> Iterator[None]:
        """The block's :func:`~peggy_jvm.egraph.clock.clock` seconds added to pair ``i``'s ``spent`` (inside a
        :class:`~peggy_jvm.egraph.clock.metered` block; never nested for one pair)."""
        t0 = clock()
        try:
            yield
        finally:
            self.spent[i] = self.spent.get(i, 0.0) + clock() - t0

    def _prove_strictly(self, pair: MethodPair, i: int, view: CallView) -> tuple[ProofResult, list[str]]:
        """Pair ``i``'s proof under ``view`` (the pairs proved so far, and a recursive component's hypothesis).
        When some callee is not assumed and ORIG's PEG keeps a call of one that no body replaces
        (:func:`~.prove.kept_apart_for_good`: only a branch shown dead could take it out of ORIG's root), the
        proof with every callee assumed comes first, the one :meth:`_given_callees` asks for anyway: when it
        proves the pair, the pair is not proved here (its own code is proved given its callees: the reason will
        say so), without the strict attempts, which saturated for nothing (two thirds of the ProGuard runs' pairs
        that wait for a callee: jsoup's 336 took 79 s of CPU so, their proofs given their callees 6 s). When it
        does not, the strict proof is tried as for any pair, in what the budget has left. Other pairs are proved
        strictly first, as :meth:`_prove_one` does."""
        memo = PegMemo()  # the strict view's PEGs, built once for the check and the proof
        if not view.calls_assumed(pair):
            with self._charged(i):
                stays = kept_apart_for_good(pair, self.orig_h, self.opt_h, view, memo)
                if stays is not None and self._given(pair, i).proved:
                    return stays, []
        with self._charged(i):
            return self._prove_one(pair, i, view, memo)

    def _given(self, pair: MethodPair, i: int) -> ProofResult:
        """Pair ``i``'s proof with every call of the input's own methods taken as given (once per pair: the view
        does not depend on what is proved)."""
        if i not in self.given:
            self.given[i] = self._prove_one(pair, i, CallView(self.program, None))[0]
        return self.given[i]

    def _given_callees(self, pair: MethodPair, i: int, proof: ProofResult, callees: dict[str, set[Key]]) -> None:
        """For a pair not proved while some callees are unproved: whether it is proved once they are taken as
        equivalent (the verdict stays unknown; the reason says so, and which callees it waits for)."""
        with metered(), self._charged(i):
            given = self._given(pair, i)
        if given.proved:
            names = sorted(callees)
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
            proof.reason = f"{GIVEN_CALLEES}{shown} (not proved equivalent)"
            self.waits[i] = set().union(*callees.values())

    def finish(self, i: int, pair: MethodPair, proof: ProofResult, relied: list[str], view: CallView) -> PairResult:
        """Pair ``i``'s row after its proof: the verdict, and for a pair not proved the counterexample search in
        what its budget has left (``spent``: its proofs' time)."""
        options, searcher = self.options, self.searcher
        t0 = clock()
        deadline = t0 + options.method_timeout - self.spent[i]
        row = PairResult(pair.key[0], pair.orig.name, pair.orig.descriptor,
                         Verdict.EQUIVALENT if proof.proved else Verdict.UNKNOWN, proof.reason,
                         axioms=proof.axioms if proof.proved else None,
                         assumptions=relied if self.assumptions else None)
        if relied:
            row.reason += assumption_note(relied)
        first = self.searches.get(i)
        if searcher is not None and first is not None and first.found is not None:
            _settle(row, pair, searcher.setup(pair)[0], first, "")
        elif not proof.proved and not self.assumptions:
            row.reason += _assumption_hint(pair, self.orig_h, self.opt_h, self.rules, self.budget(i),
                                           self.same(pair, view), proof, view)
        if row.verdict is Verdict.UNKNOWN and searcher is not None:
            if not self.worth_searching(i):
                row.reason += "; not searched: no callee it waits for behaved differently in the interpreter"
            elif (why_not := searcher.setup(pair)[2]) is not None:
                row.reason += f"; {why_not}"
            elif first is None and (proof.orig_ir is None or proof.opt_ir is None):
                row.reason += "; no IR to search for a counterexample"
            else:
                s = searcher.full(pair, proof, deadline, options.method_timeout, first)
                self.differing[pair.key] = s.screened.differing
                _settle(row, pair, searcher.setup(pair)[0], s, searcher.jvm.problem)
        row.time_ms = (self.spent[i] + clock() - t0) * 1000
        return row

    def worth_searching(self, i: int) -> bool:
        """Whether to search pair ``i`` for a counterexample: always, unless it is proved given its callees;
        then only when the interpreter saw some callee it waits for behave differently (its difference is a
        callee's, and a search of every caller of an unproved method costs their whole budgets: jsoup's
        ProGuard output took 14 times as long)."""
        return i not in self.waits or any(self.differing.get(k, 0) for k in self.waits[i])

    def _prove_one(self, pair: MethodPair, i: int, view: CallView,
                   memo: PegMemo | None = None) -> tuple[ProofResult, list[str]]:
        """The pair's proof the optimizer's way first (its safe rules and work limits, :func:`_optimizer_proof`)
        within :data:`OPTIMIZER_SHARE` of its budget, then with the default (or given) rules in what is left.
        The optimizer's rules are a subset of the default ones, so their saturation is the cheaper, and on the
        optimizer's own output it is the proof its self-check found: commons-math3's
        ``AdamsMoultonIntegrator.integrate`` takes 1.1 s of CPU so, and the default rules 2.5 s (without
        ``peg.distrib.phi.const`` they did not prove it). With rules given (``--rules``, ``--axioms``), only
        those. Last, when nothing else proved it, the case split on the terms read back from the e-graphs its
        default (or given) rules saturated (:func:`~.prove.cases_after_saturation`), in what the budget has left."""
        budget = self.budget(i)
        end = clock() + (budget.time_s or 0.0)
        same = self.same(pair, view)
        if not same and _same_code(pair, view):  # (byte-identical classes are said so by the proof)
            return ProofResult(True, SAME_CODE, ["identical"]), []
        # both rule sets' attempts build the same PEGs from the same code (prove.py); ``memo``: one of this view
        memo = memo if memo is not None else PegMemo()
        if self.options.rules is None and budget.time_s is not None:
            start = clock()
            first = _optimizer_proof(pair, self.orig_h, self.opt_h, same, self.options.explain,
                                     budget.time_s * OPTIMIZER_SHARE, view, memo)
            if first is not None and first.proved:
                return first, []
            budget = replace(budget, time_s=max(MIN_OPTIMIZER_PROOF_S,
                                                budget.time_s - (clock() - start)))
        closed = _closed_world(self.program) if CLOSED_WORLD in self.assumptions else None
        kept: list[Saturated] = []  # the e-graphs the strict rules saturated without a proof, dropped below
        proof, relied = _prove(pair, self.orig_h, self.opt_h, self.rules, budget, same, self.options.explain,
                               self.assumptions, view, closed, memo, kept)
        ranges = by_ranges(proof)  # for a pair of one int parameter (validate/ranges.py)
        if ranges is not proof:
            return ranges, []
        if not proof.proved and (after := cases_after_saturation(kept, end)) is not None:
            return after, []
        if not proof.proved and self.options.rules is None and budget.time_s is not None:
            # the optimizer's self-check proves some rewrites only in its own saturated E-PEG of the original
            # (validate/replay.py): last, so that a pair proved otherwise never pays for it, and with at least
            # REPLAY_SHARE of the proof budget, taken from the search's share when the proofs above used it all
            seconds = max(end - clock(), REPLAY_SHARE * (self.options.method_timeout * PROOF_SHARE))
            if (replayed := prove_in_optimizer_saturation(pair, self.orig_h, self.opt_h, view, seconds)) is not None:
                return replayed, []
        return proof, relied


#: the reason of a pair proved by :func:`_same_code`
SAME_CODE = "the same code bytes, every constant the same (OPT's constant pool extends ORIG's)"


def _same_code(pair: MethodPair, view: CallView) -> bool:
    """The two methods run the same instructions on the same constants: the same Code attribute's bytes (its
    exception table and attributes included), the same access flags, classes of the same name and superclass, and
    ORIG's constant pool a prefix of OPT's (every index the code holds names the same constant on both sides:
    ``optimize`` and other tools that append to a pool leave a method they did not rewrite so), holding no method
    handle, dynamic constant or ``invokedynamic`` (their bootstrap methods are the class's, outside the pool); and
    every call of the input's own methods is assumed (the view's modular rule, as for byte-identical classes). So an
    unrewritten method of a rewritten class is proved even where its PEG cannot be built (commons-math3's
    ``BOBYQAOptimizer.bobyqb``: irreducible control flow, unknown, and its callers with it)."""
    a, b = pair.orig.code_attribute(), pair.opt.code_attribute()
    if a is None or b is None or a.data != b.data or pair.orig.access != pair.opt.access or pair.inherited:
        return False
    oc, nc = pair.orig_class, pair.opt_class
    if oc.name != nc.name or oc.super_name != nc.super_name:
        return False
    old, new = oc.pool.entries, nc.pool.entries
    if len(old) > len(new) or new[:len(old)] != old:
        return False
    # method handles, dynamic constants and invokedynamic reach code through the class's BootstrapMethods or
    # without an invoke the view sees: such classes are left to the proof
    if any(e is not None and e[0] in (15, 17, 18) for e in old):
        return False
    return view.calls_assumed(pair)


#: of a pair's proof budget (``PROOF_SHARE`` of its time), the most the optimizer's proof takes before the
#: default rules get the rest (which were held to 60% when they came first: no pair they proved in that time is
#: lost)
OPTIMIZER_SHARE = 0.4
#: below this many seconds the optimizer's proof is not tried
MIN_OPTIMIZER_PROOF_S = 0.05
#: of a pair's whole proof budget, the least the replay of the optimizer's saturation (validate/replay.py) gets
#: after every other proof failed (more when they left more)
REPLAY_SHARE = 0.1


def _optimizer_proof(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, same_bytes: bool,
                     explain: bool, seconds: float, view: CallView, memo: PegMemo | None = None
                     ) -> ProofResult | None:
    """The pair proved the way the optimizer's self-check proves a rewrite (its rules, ``proof_rules``, and its
    work limits), within ``seconds`` as well; None when there is no time for it."""
    if seconds < MIN_OPTIMIZER_PROOF_S:
        return None
    from ..budget import DEFAULT_WORK_BUDGET
    from ..rules.policy import proof_rules  # the optimizer's rule policy
    limits = DEFAULT_WORK_BUDGET.proof()
    budget = ProofBudget(time_s=seconds, max_nodes=limits.max_nodes, max_iterations=limits.max_iterations,
                         induction_steps=limits.induction_steps)
    return prove_pair(pair, orig_h, opt_h, proof_rules(), budget, same_class_bytes=same_bytes, explain=explain,
                      view=view, memo=memo)


def _prove(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list, budget: ProofBudget,
           same_bytes: bool, explain: bool, assumptions: tuple[str, ...],
           view: CallView, closed: tuple[Callable, Callable] | None = None,
           memo: PegMemo | None = None, keep: list[Saturated] | None = None) -> tuple[ProofResult, list[str]]:
    """The proof of one pair and the assumptions it relied on (see the module docstring). ``closed``: the
    closed-world predicates (:func:`_closed_world`, given only under ``--assume closed-world``), tried only once
    the pair is not proved without them, so a pair marked ``closed-world`` needed it. ``keep``: the e-graphs
    saturated without a proof by the strict rules and no closed-world predicate (``prove_pair``'s)."""
    start = clock()
    proof, relied = _prove_by_rules(pair, orig_h, opt_h, rules, budget, same_bytes, explain,
                                    tuple(a for a in assumptions if a != CLOSED_WORLD), view, memo, keep)
    if proof.proved or closed is None:
        return proof, relied
    left = None if budget.time_s is None else budget.time_s - (clock() - start)
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
                    view: CallView, memo: PegMemo | None = None,
                    keep: list[Saturated] | None = None) -> tuple[ProofResult, list[str]]:
    """The proof with the rules of the named assumptions (see the module docstring). ``keep`` gets only the
    e-graphs of the rules without the assumptions' (an e-graph an assumption's rule changed relies on it)."""
    if not assumptions:
        return prove_pair(pair, orig_h, opt_h, rules, budget, same_class_bytes=same_bytes, explain=explain,
                          view=view, memo=memo, keep=keep), []
    extra = assumption_rules(assumptions, pair_param_types(pair))
    proof = prove_pair(pair, orig_h, opt_h, list(rules) + extra, budget, same_class_bytes=same_bytes,
                       explain=explain, view=view, memo=memo)
    if not any(r.applied for r in extra):
        return proof, []
    if not proof.proved and not _stopped_early(proof.reason):
        return proof, []  # saturated with every strict rule among them: the strict rules alone prove no more
    strict = prove_pair(pair, orig_h, opt_h, rules, budget, same_class_bytes=same_bytes, explain=explain,
                        view=view, memo=memo, keep=keep)
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


class _Jvm:
    """The run's JVM (:class:`~.counterexample.JvmHarness`), started when the run begins if some pair may be
    searched (it boots while the first proofs run), else when a pair first needs it; ``problem``: why there is
    none (no ``java``, no harness)."""

    def __init__(self, orig_raw: dict, opt_raw: dict, class_map: dict[str, str]) -> None:
        self.raw, self.class_map = (orig_raw, opt_raw), class_map
        self.harness: cx.JvmHarness | None = None
        self.problem = ""

    def start(self) -> None:
        """Make the harness and start its JVM, if not done yet (``problem`` says why not when it cannot)."""
        if self.harness is None and not self.problem:
            try:
                self.harness = cx.JvmHarness(*self.raw, self.class_map)
                self.harness.warm()
            except (cx.JvmUnavailable, OSError) as e:
                self.problem = str(e)

    def confirmer(self, pair: MethodPair, shape: cx.Shape, deadline: float) -> cx.Confirm | None:
        """Asks the JVM about one input of ``pair`` within its ``deadline``; None without a JVM."""
        self.start()
        harness = self.harness
        if harness is None:
            return None

        def confirm(args: list) -> tuple[cx.JvmOutcomes | None, str]:
            call = cx.Call(pair.orig_class.name, pair.opt_class.name, pair.orig.name, pair.orig.descriptor, args,
                           shape=shape, opt_descriptor=pair.opt.descriptor)
            return harness.ask(call, deadline)
        return confirm

    def close(self) -> None:
        if self.harness is not None:
            self.harness.close()


#: the proof reason of a pair the quick search showed different before any proof was tried
SHOWN_FIRST = "not proved: shown different before the proof"
#: of a pair's budget, what the quick search before its proof may take: screen, and JVM runs
QUICK_SCREEN_SHARE, QUICK_JVM_SHARE = 0.05, 0.2


class _Searcher:
    """The run's counterexample searches: a pair's call shape and whether it can be searched (``setup``), the
    quick search before its proof on both methods as lifted (``quick``), the full one after a failed proof
    (``full``: resuming the quick one), all asking the one JVM (``jvm``)."""

    def __init__(self, orig: Side, opt: Side, class_map: dict[str, str]) -> None:
        self.orig, self.opt = orig, opt
        self.jvm = _Jvm(orig.raw, opt.raw, class_map)
        self.handlers = cx.call_handlers(orig.classes, opt.classes)  # every screen of the run shares them
        self._setups: dict[Key, tuple[cx.Shape, frozenset[str], str | None]] = {}

    def setup(self, pair: MethodPair) -> tuple[cx.Shape, frozenset[str], str | None]:
        """The pair's call shape, its interface parameters, and why it cannot be searched (None: it can)."""
        if pair.key not in self._setups:
            interfaces = _interface_params(pair, self.orig.hierarchy)
            shape = cx.shape_of(pair.orig_class, pair.orig, pair.opt)
            why_not = cx.eligible(shape, pair.orig.descriptor, interfaces)
            if pair.inherited:  # the harness calls a method its class declares
                why_not = "not searched: one side's class inherits it"
            self._setups[pair.key] = (shape, interfaces, why_not)
        return self._setups[pair.key]

    def quick(self, pair: MethodPair, budget_s: float) -> cx.Search | None:
        """The search of the first :data:`~.counterexample.QUICK_INPUTS` inputs, before the pair's proof (None:
        the pair cannot be searched, its methods do not lift, or they lift to the same statements)."""
        shape, interfaces, why_not = self.setup(pair)
        if why_not is not None or pair.orig.code_attribute() is None or pair.opt.code_attribute() is None:
            return None
        try:
            a = lift_method(pair.orig_class, pair.orig, self.orig.hierarchy)
            b = lift_method(pair.opt_class, pair.opt, self.opt.hierarchy)
        except (LiftError, ClassFileError, UnknownClassError):
            return None
        if list(format_method(a))[1:] == list(format_method(b))[1:]:
            return None  # the same code as lifted (a shrinker renumbered its pool): the proof is quick, no search
        now = clock()
        return cx.search(a, b, pair.orig.descriptor, self.orig.classes, self.opt.classes,
                         now + QUICK_SCREEN_SHARE * budget_s, interfaces, shape,
                         self.jvm.confirmer(pair, shape, now + QUICK_JVM_SHARE * budget_s), quick=cx.QUICK_INPUTS,
                         handlers=self.handlers)

    def full(self, pair: MethodPair, proof: ProofResult, deadline: float, budget_s: float,
             first: cx.Search | None) -> cx.Search:
        """The search of an unproved pair within its ``deadline`` (the screen stops :data:`~.counterexample.
        JVM_SHARE` of its budget early), going on from the quick one when there was one."""
        shape, interfaces, _why_not = self.setup(pair)
        if first is not None:
            first.no_time, first.unanswered = False, ""  # the quick one's limits were its own
            a, b = first.orig_ir, first.opt_ir
        else:
            a, b = proof.orig_ir, proof.opt_ir
        assert a is not None and b is not None
        return cx.search(a, b, pair.orig.descriptor, self.orig.classes, self.opt.classes,
                         deadline - cx.JVM_SHARE * budget_s, interfaces, shape,
                         self.jvm.confirmer(pair, shape, deadline), resume=first, handlers=self.handlers)


def _settle(row: PairResult, pair: MethodPair, shape: cx.Shape, s: cx.Search, jvm_problem: str) -> None:
    """The row of an unproved pair after its counterexample search: ``not-equivalent`` with the confirmed
    input (or the non-termination evidence), else its reason completed with why none was confirmed."""
    if s.found is not None:
        args, ans = s.found
        params, ret = parse_method_descriptor(pair.orig.descriptor)
        row.verdict = Verdict.NOT_EQUIVALENT
        row.reason = "counterexample confirmed on the JVM"
        shown = {"ORIG": cx.describe_outcome(ans.orig, ret, shape), "OPT": cx.describe_outcome(ans.opt, ret, shape)}
        if slow := ans.runs_on:
            fast, fast_ms, slow_ms = ("ORIG", ans.orig_ms, ans.opt_ms) if slow == "OPT" else \
                ("OPT", ans.opt_ms, ans.orig_ms)
            shown[slow] = f"still running after {slow_ms} ms (stopped)"
            row.reason += (f" ({slow} was still running after {slow_ms} ms where {fast} finished in {fast_ms} "
                           f"ms: it does not terminate on this input, or takes over {cx.HANG_FACTOR} times "
                           "as long)")
        elif why := cx.why_different(params, args, ans.orig, ans.opt, ret):
            row.reason += f" ({why})"
        row.counterexample = {"args": cx.show_call(params, args, shape), "orig": shown["ORIG"], "opt": shown["OPT"]}
        return
    sc = s.screened
    note = f"no difference found on {sc.tried} inputs"
    if sc.differing:
        note = f"the interpreter saw {sc.differing} differing inputs but the JVM did not confirm them"
    elif sc.unsupported:
        note += f" (the interpreter could not model some: {sc.unsupported})"
    if jvm_problem and sc.candidates:
        note += f"; JVM not run: {jvm_problem}"
    row.reason += f"; {note}{_time_note(pair, shape, s)}"


def _time_note(pair: MethodPair, shape: cx.Shape, s: cx.Search) -> str:
    """Why the JVM runs of an unconfirmed pair were cut short, if they were (the pair's budget, or a JVM slow to
    answer that was killed)."""
    if s.no_time:
        return "; no time left for the JVM runs within --method-timeout"
    if s.late is not None:
        params, _ret = parse_method_descriptor(pair.orig.descriptor)
        shown = ", ".join(cx.show_call(params, s.late, shape))
        n = s.stopped_runs - 1
        more = f" (and on {n} more input{'s' if n > 1 else ''})" if n else ""
        return f"; the JVM run on ({shown}) did not finish within the pair's budget: stopped{more}"
    if s.unanswered:
        return f"; {s.unanswered}"
    return ""
