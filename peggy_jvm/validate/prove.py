"""Proof of equivalence of one method pair in one merged e-graph (the E-PEG of both methods).

What this module owns
    :func:`prove_pair`: lift both methods (each with its own side's class hierarchy; branches in one form,
    :mod:`.branchshape`; a switch on an enum through either compiler's table in one form, :mod:`.switchtables`),
    build both PEGs (when the
    first attempt fails, again with the helpers only one side calls inlined, each side's own body,
    ``rules.inline.inline_bodies``), and try,
    cheapest first: bisimilar roots (:mod:`.normalize`: the same graph up to sharing, loops
    included), the same after simplifying conditions known inside branches, the same in every case of the branch
    conditions, each also with the loops' phis on their own exit conditions settled; then add both (in both
    forms, each side's two roots merged) to ONE :class:`~peggy_jvm.epeg.EPeg` (identical subterms,
    parameters and the entry heap ``sigma0`` included, are shared by hash-consing: both methods are run on the
    same arguments and the same heap), saturate with the axioms within the budget, run loop induction from the two roots, and ask
    whether the roots are in one e-class. :class:`ProofResult` says proved or not, and why not (with the calls
    only one side makes, the usual sign of a library rewrite). :func:`by_ranges`: ``validate``'s last resort for
    a pair its proofs left unproved, both lifted methods run on their one int parameter's range
    (:mod:`.ranges`); not part of :func:`prove_pair`, so the optimizer's self-check never uses it.
    :func:`cases_after_saturation`: ``validate``'s very last attempt, the case split on the terms read back from
    the e-graphs its proofs saturated without a proof (:mod:`.aftercases`; ``prove_pair(keep=...)`` keeps them).
    :class:`PegMemo`: what the attempts of one pair have in common before their e-graphs, kept across them.
    :func:`kept_apart_for_good`: whether ORIG's PEG keeps a call of an unproved callee that no attempt can take
    away but a dead branch (``validate`` then proves the pair given its callees first).

Inputs: a :class:`~.pairing.MethodPair`, both sides' hierarchies, the rule set, a :class:`ProofBudget` (time
and work, or work only: then the verdict is a function of the inputs alone), and for ``validate`` a view of
ORIG's PEG in OPT's names (:class:`~.modular.CallView`: ``--map`` applied, calls to unproved pairs kept apart;
the optimizer's self-check compares one method with its own rewrite and passes none). Outputs: a
ProofResult (with the lifted IR of both methods, reused by the counterexample search).

Invariants
    * ``proved`` is True only when the code is byte-identical under byte-identical constant pools, the two PEGs'
      roots are bisimilar (:mod:`.normalize`; also after both are simplified by the conditions
      known in branches or at loop exits, or in every case of their branch conditions), or ``EGraph.equiv``
      holds for the two roots after (or before) saturation, or (:func:`cases_after_saturation`, ``validate``
      only, after every other attempt) the terms of the two roots' e-classes read back after saturation are
      equal in every case of their branch conditions (:mod:`.aftercases`).
    * Lifting or PEG failures are not errors of the validator: they make the answer "not proved" with the reason.
    * Time: the attempts of :func:`prove_pair` share the budget's time (each gets what the earlier ones left),
      counted by :func:`~peggy_jvm.egraph.clock.clock` (CPU time: the same proofs on a loaded machine as on an
      idle one). The optimizer's self-check has no time budget; its safety net stops it at checkpoints
      (:func:`~peggy_jvm.budget.checkpoint`: between attempts and stages, once per saturation iteration, in loop
      induction), which decide nothing.
"""
from __future__ import annotations

import math
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Callable, cast

from ..budget import checkpoint
from ..classfile.errors import ClassFileError
from ..classfile.hierarchy import ClassHierarchy, UnknownClassError
from ..egraph import EGraph, Limits, Runner
from ..egraph.clock import clock, metered
from ..egraph.runner import RunReport
from ..egraph.explain import Reason
from ..epeg import EPeg
from ..ir.lift import LiftError, lift_method
from ..ir.nodes import FieldRef, IRMethod, MethodRef
from ..peg.build import PegUnsupported, build_peg
from ..peg.graph import PEG
from .aftercases import equal_by_cases_after
from .finite import equal_on_values
from .loopshape import top_tested
from .branchshape import drop_default_cases, equal_tests_first, strict_tests_first, thread_constant_switches
from .switchtables import read_switch_tables
from .normalize import (accesses_of_this, bisimilar, equal_by_cases, expand_library_calls, hoist_loop_lengths,
                        merge_repeated_reads, trivial_forms,
                        joint_pegs, pair_of, settle_exit_phis, simplify_known_conditions)
from ..rules.accumulator import LEMMA, LEMMA_NOTE, read_accumulators
from ..rules.arrays import exact_array_fields
from ..rules.induction import prove_by_induction
from .modular import UNPROVED
from ..rules.inline import Body, CalleeSource, choose_bodies, inlinable_calls, inline_bodies, inline_calls
from .pairing import MethodPair
from .ranges import equal_on_ranges


SATURATION_SHARE = 0.8  # of the proof budget; loop induction from the roots gets the rest
EXPLAIN_DEPTH = 200  # congruence steps expanded: a sigma chain is one level per effect
# loose induction searches from the roots after ruling out a witness's unordered cycles; once per proof, so it
# can afford them (the theta-bisimulation rule, which tries hundreds of theta pairs per iteration, does not)
ROOT_INDUCTION_RETRIES = 3
CASES_SHARE = 0.2  # of the proof budget, at most, for the normal forms (known conditions, case split)
MIN_ATTEMPT_S = 0.01  # the least time an attempt of prove_pair is given (one is started only before the end)
#: ``validate``'s :attr:`ProofBudget.shaped_share` for its default rules: either form can be the one that proves,
#: and the one that does not can saturate for the whole budget (jsoup's ``nextIndexOf``: the top-tested form runs
#: to its iteration limit in 8.6 s of CPU, the code as lifted proves in 0.8 s)
SHAPED_SHARE = 0.6


@dataclass(slots=True)
class ProofResult:
    proved: bool
    reason: str
    axioms: list[str] = field(default_factory=list)
    orig_ir: IRMethod | None = None
    opt_ir: IRMethod | None = None


@dataclass(frozen=True, slots=True)
class Saturated:
    """An attempt's e-graph saturated (and loop induction run) without meeting the roots, kept for
    :func:`cases_after_saturation`: the roots' classes, each side's PEG as saturated (the template of its
    extraction), the axioms that changed the e-graph (with ``--explain``), both lifted methods."""

    eg: EPeg
    ra: int
    rb: int
    pa: PEG
    pb: PEG
    fired: tuple[str, ...]
    a: IRMethod
    b: IRMethod


@dataclass(frozen=True, slots=True)
class ProofBudget:
    """The proof's limits. ``time_s`` None: work limits only (the optimizer's self-check, whose verdict decides
    the output and so must not depend on the machine's speed): saturation by nodes and iterations, the normal
    forms by their own size limits and case count, loop induction by ``induction_steps``."""

    time_s: float | None = 5.0  # of the whole proof: prove_pair's attempts share it
    max_nodes: int = 50_000
    max_iterations: int = 60
    #: matching steps of each loop-induction search from the roots (:func:`prove_by_induction`'s budget)
    induction_steps: int = 20_000
    #: when the first attempt fails, try again with the helpers only one side calls inlined (validate); off in the
    #: optimizer's self-check, whose two sides are one class (its inlining is replayed in the e-graph) and where
    #: a second saturation to the node limit doubled a refused method's time (JAMA's Matrix.read: 168 s)
    retry_inlined: bool = True
    #: of an attempt's time, the most its proof of the loops seen top-tested takes when the code as lifted is
    #: proved next (:data:`SHAPED_SHARE`; 1.0: the code as lifted only gets what is left, as in the self-check)
    shaped_share: float = 1.0

    def deadline(self, start: float, share: float = 1.0) -> float:
        """``start`` plus ``share`` of the time budget; infinite without one."""
        return math.inf if self.time_s is None else start + share * self.time_s


def _rest(budget: ProofBudget, end: float) -> ProofBudget:
    """``budget`` with the time left until ``end`` (``perf_counter``); itself when it has no time limit."""
    if budget.time_s is None:
        return budget
    return replace(budget, time_s=max(MIN_ATTEMPT_S, end - clock()))


def _identical(pair: MethodPair, same_pool: bool) -> bool:
    a, b = pair.orig.code_attribute(), pair.opt.code_attribute()
    return same_pool and a is not None and b is not None and a.data == b.data


@dataclass
class _ViewedCallees(CalleeSource):
    """ORIG's callees as ORIG's viewed PEG names its calls: a call the view kept apart (its name marked
    :data:`~.modular.UNPROVED`) or renamed by ``--map`` is still a call of ORIG's own method, so it may be inlined
    with ORIG's body (found under ORIG's names: ``view.original``), and the body is read through the same view
    (its own calls and fields in OPT's names, its unproved calls kept apart). Inlining ORIG's own callee into ORIG
    is exact whether or not its pair is proved: nothing about OPT's method is assumed."""

    view: Callable[[PEG], PEG] | None = None
    #: OPT's callees: a call the view reads as OPT's (its pair proved, or assumed by the recursive component's
    #: hypothesis) is OPT's call, so OPT's body is inlined for it first (a recursive ORIG method against a loop:
    #: its recursive call, assumed equal, is OPT's loop on the call's arguments)
    opt: CalleeSource | None = None

    def body(self, kind: str, ref: MethodRef, nested: bool = True) -> Body | str:
        if self.opt is not None and not ref.name.endswith(UNPROVED) and self.view is not None:
            got = self.opt.body(kind, ref, nested)
            if isinstance(got, Body):
                return got
        original = getattr(self.view, "original", None)
        if original is not None:
            ref = original(ref)
        elif ref.name.endswith(UNPROVED):
            ref = replace(ref, name=ref.name[:-len(UNPROVED)])
        got = super().body(kind, ref, nested)
        if isinstance(got, Body) and self.view is not None:
            return Body(self.view(got.peg), got.is_static, got.has_loop, got.throws)  # loops: outside loops only
        return got


#: ORIG's PEG as OPT's references name things (:class:`~.modular.CallView`: ``--map``'s renames, and calls
#: whose callees are not proved kept apart); None: both sides' references are compared as they are
OrigView = Callable[[PEG], PEG]


def prove_pair(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list, budget: ProofBudget,
               *, same_class_bytes: bool = False, explain: bool = False, view: OrigView | None = None,
               calls_assumed: bool = True, callees: tuple[CalleeSource, CalleeSource] | None = None,
               only_target: tuple[Callable, Callable] | None = None, memo: PegMemo | None = None,
               keep: list[Saturated] | None = None) -> ProofResult:
    """Try to prove the pair equivalent; never raises for a method the stages cannot handle (only
    ``MethodTimeout``, from a :func:`~peggy_jvm.budget.checkpoint` of the optimizer's safety net). ``view`` is
    applied to ORIG's PEG before the two meet; ``calls_assumed`` False (some callee of ORIG's code is not assumed
    equivalent) turns off the byte-identical shortcut. ``callees``: the methods each side's calls may be inlined
    from (rules/inline.py); default: each side's own class (``only_target``: ORIG's and OPT's closed-world
    predicates, ``CalleeSource.only_target``). The attempts share ``budget``'s time: each gets what
    the earlier ones left (:func:`_rest`), and none starts once it is spent; a time budget is in seconds of
    :func:`~peggy_jvm.egraph.clock.clock` (this process's CPU time), counted from this call unless a
    :class:`~peggy_jvm.egraph.clock.metered` block is open. ``memo``: the PEGs of this pair's earlier
    attempts under the same view and ``only_target`` (:class:`PegMemo`; validate/driver.py). ``keep``: where each
    attempt that saturates with ``theta-bisimulation`` among the rules without a proof puts its e-graph, in the
    order of the attempts (for :func:`cases_after_saturation`; the caller drops them)."""
    # the time of a budget counts from here (budget.py), unless the caller's pair's already does (validate/driver.py)
    with metered() if budget.time_s is not None else nullcontext():
        end = budget.deadline(clock())

        def attempt(one_sided: bool) -> tuple[ProofResult, bool]:
            shaped: list[bool] = []
            could: list[bool] = []
            lemmas: list[str] = []
            checkpoint()
            result = _prove(pair, orig_h, opt_h, rules, _rest(budget, end), same_class_bytes and calls_assumed,
                            explain, view, callees, shaped, could, one_sided, lemmas, only_target, memo, keep)
            if not result.proved and any(shaped) and clock() < end:
                # the loops seen top-tested (validate/loopshape.py) made the two sides differ where the code as
                # lifted may still prove (a do-while written against a while): the code as lifted, as before
                checkpoint()
                lemmas.clear()
                result = _prove(pair, orig_h, opt_h, rules, _rest(budget, end), same_class_bytes and calls_assumed,
                                explain, view, callees, None, could, one_sided, lemmas, only_target, memo, keep)
            if result.proved and lemmas:  # partial equivalence, as under the regression-verification rule
                result = replace(result, reason=result.reason + LEMMA_NOTE, axioms=[LEMMA, *result.axioms])
            return result, any(could)

        try:
            result, could = attempt(False)
            if not result.proved and could and budget.retry_inlined and clock() < end:
                # the helpers only one side calls, inlined before the normal forms (each side's own body), so that
                # the conditions around a call decide its body's tests; tried second because the bodies can also
                # grow a pair the calls prove (a rewritten caller whose callees' pairs are proved) past its budget
                result = attempt(True)[0]
                if result.proved and "inline" not in result.axioms:
                    result = replace(result, axioms=["inline", *result.axioms])
            return result
        except RecursionError:
            return ProofResult(False, "not proved: too deep for the stages (RecursionError)")
        except Exception as e:  # a bug in a stage is "not proved" for this pair, never a verdict, never a crash
            return ProofResult(False, f"not proved: {type(e).__name__}: {e}")


def by_ranges(result: ProofResult) -> ProofResult:
    """``validate``'s last resort for a pair its proofs left unproved: both lifted methods run on their one int
    parameter's whole range, split where their branches change (validate/ranges.py); ``result`` itself when
    that does not show them equal. After the e-graph's proofs, so that a pair they prove keeps their axioms."""
    if result.proved or result.orig_ir is None or result.opt_ir is None:
        return result
    intervals = equal_on_ranges(result.orig_ir, result.opt_ir)
    if intervals is None:
        return result
    return ProofResult(True, f"the same int on each of {intervals} intervals of the parameter's range, where the "
                             "branches go one way", ["int-ranges"], result.orig_ir, result.opt_ir)


def _default_callees(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, view: OrigView | None,
                     only_target: tuple[Callable, Callable] | None) -> tuple[CalleeSource, CalleeSource]:
    """ORIG's and OPT's callee sources of an attempt given none (``only_target``: the closed-world predicates)."""
    closed = only_target or (None, None)
    # each side's callees in the other classes of its own input too (validate's view knows them; None: the
    # pair's classes only), under the optimizer's conditions (rules/inline.py): a callee that cannot be
    # overridden, in the caller's package, its class initialization unobservable, is what the call runs
    inputs: tuple[dict | None, dict | None] = getattr(view, "inputs", lambda: (None, None))()
    opt = CalleeSource(pair.opt_class, opt_h, inputs[1], caller_static=pair.opt.is_static, loops=True,
                       constructors=True, synthetic=True, only_target=closed[1])
    return (_ViewedCallees(pair.orig_class, orig_h, inputs[0], caller_static=pair.orig.is_static, loops=True,
                           constructors=True, synthetic=True, only_target=closed[0], view=view, opt=opt), opt)


def kept_apart_for_good(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, view: OrigView,
                        memo: PegMemo | None = None) -> ProofResult | None:
    """Not proved, when ORIG's PEG read through ``view`` keeps a call the view kept apart
    (:data:`~.modular.UNPROVED`: its callee's pair is not proved) that OPT's PEG makes too and that no attempt of
    :func:`prove_pair` can replace by ORIG's body: a call reachable from the root that is not among
    ``inlinable_calls`` (a receiver that may be null, a call an exception handler reads) or whose body ORIG's
    callees refuse even with recursion unfolded (the most any attempt inlines: the normal forms' and the
    accumulator lemma's callees), or a ``new`` of an unproved constructor (never inlined). Such a call is an
    operator OPT's PEG does not have (OPT's is unmarked), so a proof could only take it out of ORIG's root by
    rewriting alone, as a branch or loop shown dead; the replay (validate/replay.py) inlines nothing. None: no
    such call (or the PEGs cannot be built: the proof says why), so the pair is for :func:`prove_pair` to try.
    ``validate`` asks this of a pair proved once every callee is assumed (validate/driver.py), whose strict
    proof would otherwise saturate for nothing. ``memo``: the strict view's (:class:`PegMemo`), so that the
    proof that may follow does not build the PEGs again."""
    built = memo.built.get(False) if memo is not None else None
    if built is None:
        built = _build(pair, orig_h, opt_h, view, False)
        if memo is not None:
            memo.built[False] = built
    if isinstance(built, ProofResult):
        return None
    pa, pb = built.pa, built.pb
    opt_ops = {(n.op, n.attr) for n in pb.nodes if n.op == "new" or n.op.startswith("invoke.")}
    inlinable = set(inlinable_calls(pa))
    source: CalleeSource | None = None
    for n in pa.reachable([pa.root]):
        node = pa.nodes[n]
        if node.op == "new":
            cls, ctor = cast("tuple[str, MethodRef]", node.attr)
            if ctor.name.endswith(UNPROVED) and \
                    ("new", (cls, replace(ctor, name=ctor.name.removesuffix(UNPROVED)))) in opt_ops:
                break
            continue
        ref = node.attr
        if not node.op.startswith("invoke.") or not isinstance(ref, MethodRef) or not ref.name.endswith(UNPROVED):
            continue
        if (node.op, replace(ref, name=ref.name.removesuffix(UNPROVED))) not in opt_ops:
            continue  # OPT does not make it: a proof may take it away some other way
        if n not in inlinable:
            break
        if source is None:
            source = _unfolding(_default_callees(pair, orig_h, opt_h, view, None))[0]
        if not isinstance(source.body(node.op.split(".")[1], ref), Body):
            break
    else:
        return None
    return ProofResult(False, KEPT_APART + _call_difference(pa, pb), orig_ir=built.a, opt_ir=built.b)


#: the reason of :func:`kept_apart_for_good`'s answer
KEPT_APART = "not proved: a call whose pair is not proved equivalent stays in ORIG's PEG (no body replaces it)"


def _one_sided_bodies(pa: PEG, pb: PEG, callees: tuple[CalleeSource, CalleeSource]
                      ) -> tuple[dict[int, Body], dict[int, Body]]:
    """For each side, the bodies to inline (``rules.inline.inline_bodies``) at each call whose operator the other
    side's PEG does not have (a body with loops only at a call no loop varies, as in the e-graph): ORIG's
    calls the view kept apart (:data:`~.modular.UNPROVED`: a helper whose pair is not proved, or that has no
    partner) with ORIG's body, OPT's calls of the same helpers, or of one of its own, with OPT's. Such a call can
    only meet the other side through its body; a call both sides make as one operator (a proved pair) stays a
    call, which congruence proves cheaper. Each side's body on its own side is exact, whatever the other side
    does."""
    def calls(peg: PEG) -> dict[int, tuple[str, MethodRef]]:
        return {n: (peg.nodes[n].op, cast(MethodRef, peg.nodes[n].attr)) for n in inlinable_calls(peg)}

    ca, cb = calls(pa), calls(pb)
    out: list[dict[int, Body]] = []
    for peg, source, mine, theirs in ((pa, callees[0], ca, cb), (pb, callees[1], cb, ca)):
        other = set(theirs.values())
        bodies: dict[int, Body] = {}
        variance: list | None = None
        for n, (op, ref) in mine.items():
            if (op, ref) in other:
                continue
            got = source.body(op.split(".")[1], ref)
            if isinstance(got, Body) and got.has_loop:
                variance = variance if variance is not None else peg.variance()
                if variance[n]:  # a call some loop varies: the body's loops would need other depths
                    continue
            if isinstance(got, Body):
                bodies[n] = got
        out.append(bodies)
    return out[0], out[1]


def _unfolding(callees: tuple[CalleeSource, CalleeSource]) -> tuple[CalleeSource, CalleeSource]:
    """``callees`` with recursive callees inlinable too (``CalleeSource.recursive``), for the normal forms and the
    cases computed value by value; the e-graph's inlining keeps the callees as they are."""
    def one(c: CalleeSource) -> CalleeSource:
        if isinstance(c, _ViewedCallees) and c.opt is not None:
            return replace(c, recursive=True, pegs={}, opt=one(c.opt))
        return replace(c, recursive=True, pegs={})
    return one(callees[0]), one(callees[1])


def _final_on_both(orig_h: ClassHierarchy, opt_h: ClassHierarchy) -> Callable[[str], bool]:
    """Class name -> final in both versions (ORIG's PEG is read in OPT's names: a class ``--map`` renames is
    not found in ORIG's hierarchy and so is never called final)."""
    def final(name: str) -> bool:
        try:
            return all(h.info(name).is_final for h in (orig_h, opt_h))
        except UnknownClassError:
            return False
    return final


def _exact_fields_on_both(pair: MethodPair, view: OrigView | None) -> Callable[[FieldRef], bool]:
    """Static field (OPT's names) -> it holds arrays of exactly its type in both versions (rules/arrays.py
    ``exact_array_fields``; the fields of the pair's own classes, ORIG's read through the view's renames). None
    in the optimizer's self-check, whose one class stands for both versions while its ``<clinit>`` may be
    rewritten too."""
    if pair.opt_class is pair.orig_class:
        return lambda _f: False
    rename = getattr(view, "field", lambda f: f)
    orig = {rename(FieldRef(pair.orig_class.name, n, d)) for n, d in exact_array_fields(pair.orig_class)}
    opt = {FieldRef(pair.opt_class.name, n, d) for n, d in exact_array_fields(pair.opt_class)}
    both = orig & opt
    return lambda f: f in both


@dataclass(frozen=True, slots=True)
class _Built:
    """Both methods lifted and shaped (``shaped``: :func:`top_tested`'s answers) and their PEGs, through the view."""

    a: IRMethod
    b: IRMethod
    shaped: tuple[bool, ...]
    pa: PEG
    pb: PEG


@dataclass(frozen=True, slots=True)
class _Forms:
    """The PEGs an attempt saturates, from :class:`_Built`'s PEGs when no accumulator lemma was read: whether a
    one-sided helper could be inlined, each side's final PEG, the joint PEG of every form and its roots, whether
    the exit-phi and hoisted forms are among them, and whether the case split of every form finished (unproved)
    before its deadline (else a later attempt runs it again)."""

    could_inline: bool
    pa: PEG
    pb: PEG
    every: PEG
    roots: list[int]
    settled: bool
    hoisted: bool
    cases_done: bool
    normalized: bool = False  # the forms as built (before normalize's read and trivial forms) among them too


@dataclass
class PegMemo:
    """What :func:`_prove` makes of one pair before its e-graph, kept across the attempts of the pair's proofs
    (validate/driver.py passes one to the optimizer's rules' proof and the default rules', each with two loop
    shapes and maybe the one-sided inlining: JAMA's ``hqr2`` minimized PEGs 19 times, mostly the same ones). All of
    it is a function of the pair, the view, the loop shape, the one-sided inlining and the closed-world
    predicates (the memo serves ONE pair under ONE view and predicates: its creator's), except two things: the
    accumulator lemma reads the rules (so :class:`_Forms` is kept only when no lemma was read, the PEGs then
    :class:`_Built`'s), and the normal forms stop at a deadline (so they are kept only when they finished before
    it; a later attempt's shorter deadline then gets the finished forms, work already paid for by the pair's
    budget). Never used by the optimizer's self-check (``budget.time_s`` None, no memo)."""

    built: dict[bool, ProofResult | _Built] = field(default_factory=dict)
    forms: dict[tuple[bool, bool], _Forms] = field(default_factory=dict)


def _build(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, view: OrigView | None,
           shape: bool) -> ProofResult | _Built:
    """Both methods lifted, shaped (``shape``: loops top-tested, loopshape.py) and built as PEGs read through
    ``view``; a ProofResult (not proved) when one does not lift or build."""
    try:
        a = lift_method(pair.orig_class, pair.orig, orig_h)
        b = lift_method(pair.opt_class, pair.opt, opt_h)
    except (LiftError, ClassFileError) as e:
        return ProofResult(False, f"cannot lift: {e}")
    # `!=` tests as `==` tests with their targets swapped, a tableswitch's keys that jump to its default as the
    # lookupswitch of the other keys, and javac's second switch of a switch on a String threaded into the first
    # (branchshape.py)
    for m in (a, b):
        equal_tests_first(m)
        strict_tests_first(m)
        drop_default_cases(m)
        thread_constant_switches(m)
    # a switch on an enum through javac's or ecj's table, read by which named constant it is (switchtables.py)
    read_switch_tables(a, pair.orig_tables, b, pair.opt_tables)
    # loops the reverter emitted bottom-tested: the same code with one test (loopshape.py)
    shaped = (top_tested(a), top_tested(b)) if shape else ()
    try:
        pa, pb = build_peg(a), build_peg(b)
        if view is not None:
            pa = view(pa)
            pb = getattr(view, "opt", lambda peg: peg)(pb)  # OPT's calls read as ORIG's are (validate/modular.py)
    except PegUnsupported as e:
        return ProofResult(False, f"no PEG: {e}", orig_ir=a, opt_ir=b)
    except Exception as e:  # a builder bug must not stop the other pairs: not proved, with the reason
        return ProofResult(False, f"no PEG: {type(e).__name__}: {e}", orig_ir=a, opt_ir=b)
    return _Built(a, b, shaped, pa, pb)


def _prove(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list, budget: ProofBudget,
           same_class_bytes: bool, explain: bool, view: OrigView | None,
           callees: tuple[CalleeSource, CalleeSource] | None = None, shaped: list[bool] | None = None,
           could_inline: list[bool] | None = None, one_sided: bool = False,
           lemmas: list[str] | None = None, only_target: tuple[Callable, Callable] | None = None,
           memo: PegMemo | None = None, keep: list[Saturated] | None = None) -> ProofResult:
    """One attempt of :func:`prove_pair`; ``could_inline`` gets whether some helper only one side calls has a
    body to inline, ``one_sided`` inlines them (:func:`_one_sided_bodies`); ``lemmas`` the helpers read by the
    accumulator lemma; ``memo`` keeps what the pair's attempts have in common (:class:`PegMemo`); ``keep`` gets the
    e-graph saturated without a proof (:func:`prove_pair`)."""
    if pair.orig.code_attribute() is None or pair.opt.code_attribute() is None:
        side = "ORIG" if pair.orig.code_attribute() is None else "OPT"
        return ProofResult(False, f"no code in {side} only (abstract/native on one side)")
    if pair.orig.access != pair.opt.access and (pair.orig.access ^ pair.opt.access) & 0x0008:
        return ProofResult(False, "static in one version only")
    if _identical(pair, same_class_bytes):
        return ProofResult(True, "byte-identical code", ["identical"])
    if callees is not None:
        memo = None  # the memo's forms are of the default callees
    built = memo.built.get(shaped is not None) if memo is not None else None
    if built is None:
        built = _build(pair, orig_h, opt_h, view, shaped is not None)
        if memo is not None:
            memo.built[shaped is not None] = built
    if isinstance(built, ProofResult):
        return replace(built, axioms=list(built.axioms))  # a copy: the caller may change its reason
    a, b, pa, pb = built.a, built.b, built.pa, built.pb
    if shaped is not None:
        shaped += built.shaped
        if any(shaped) and budget.time_s is not None:
            # the code as lifted is tried next (prove_pair): it gets the rest of the time
            budget = replace(budget, time_s=budget.shaped_share * budget.time_s)
    if callees is None:
        callees = _default_callees(pair, orig_h, opt_h, view, only_target)
    # calls of helpers whose pair is not proved, each side's own body inlined before the normal forms, so that
    # the conditions around the call decide the body's tests; pure library calls (Math.max, Integer.signum ...)
    # as their java.lang definitions, for the same reason
    # (a recursive helper too, unfolded once: its own calls of itself stay calls)
    unfolding = _unfolding(callees)
    # a helper with an accumulator read as the other side's recursion plus its start, where that lemma is proved
    # by induction (rules/accumulator.py; its calls are then both sides' and are not inlined below)
    pa, pb, read = read_accumulators(pa, pb, unfolding, rules, budget.deadline(clock(), CASES_SHARE))
    if lemmas is not None:
        lemmas += read
    key = (shaped is not None, one_sided)
    known = memo.forms.get(key) if memo is not None and not read else None
    if known is not None:
        if could_inline is not None:
            could_inline.append(known.could_inline)
        return _saturate(pair, orig_h, opt_h, rules, budget, explain, view, callees, unfolding, a, b, known,
                         budget.deadline(clock(), CASES_SHARE), kept=keep)
    bodies = _one_sided_bodies(pa, pb, unfolding)
    if could_inline is not None:
        could_inline.append(bool(bodies[0] or bodies[1]))
    if one_sided:
        pa = inline_bodies(pa, bodies[0]) if bodies[0] else pa
        pb = inline_bodies(pb, bodies[1]) if bodies[1] else pb
    pa, pb = expand_library_calls(pa), expand_library_calls(pb)
    # field accesses of `this` that cannot throw, a read made again right after the same read as that read
    # (javac's second H[i] where ProGuard keeps the row with dup2), then choices that are no choice (an eval of an
    # invariant value, a phi of one value twice or of a constant condition) and constants in one place: both
    # sides in one form before they are compared (validate/normalize.py)
    as_built = [pa, pb]
    pa, pb = (trivial_forms(merge_repeated_reads(accesses_of_this(g))) for g in (pa, pb))
    # the forms as built stay too (into the e-graph below, each side's two roots merged): a callee's body inlined
    # there is spliced in as built, so a side that inlined it by hand (the optimizer's output) meets it only in
    # that form
    normalized = pa is not as_built[0] or pb is not as_built[1]
    # and loops that read an array's length at each iteration as the for-each loop that reads it once; the
    # forms as built stay too (into the e-graph below, each side's two roots merged): hoisting can also part two
    # loops that were alike, such as a loop and its first iteration peeled in front of it
    unhoisted = [pa, pb]
    pa, pb = hoist_loop_lengths(pa), hoist_loop_lengths(pb)
    hoisted = pa is not unhoisted[0] or pb is not unhoisted[1]
    if bisimilar(pa, pb):  # e.g. the same loops: congruence closure would not merge their cycles
        return ProofResult(True, "same PEG", ["bisimulation"], a, b)
    normal_forms_until = budget.deadline(clock(), CASES_SHARE)
    pa = simplify_known_conditions(pa, deadline=normal_forms_until)
    pb = simplify_known_conditions(pb, deadline=normal_forms_until)
    simplified = clock() <= normal_forms_until  # (the clock only grows: no check inside saw the deadline pass)
    # loops left where their exit flag is set: the settled PEGs mean the same (validate/normalize.py), but settling
    # can also part two loops that were alike (one side's theta observed through one pass, the other's not), so
    # both forms are compared, and both go into the e-graph with each side's two roots merged
    sa, sb = settle_exit_phis(pa), settle_exit_phis(pb)
    settled = sa is not pa or sb is not pb
    # every form in one PEG, minimized once (2 s of a 12 s JAMA proof): the case split works on each pair of
    # roots, and the loops the forms have in common enter the e-graph once, so saturation works on what differs
    # (JAMA's tql2: twelve loops, one of them changed)
    every, roots = joint_pegs([pa, pb] + ([sa, sb] if settled else []) + (as_built if normalized else [])
                              + (unhoisted if hoisted else []))
    forms = _Forms(bool(bodies[0] or bodies[1]), pa, pb, every, roots, settled, hoisted, False, normalized)
    if memo is not None and not read and simplified:
        memo.forms[key] = forms
    return _saturate(pair, orig_h, opt_h, rules, budget, explain, view, callees, unfolding, a, b, forms,
                     normal_forms_until, memo.forms if memo is not None and not read and simplified else None, key,
                     keep)


def _by_cases(forms: _Forms, unfolding: tuple[CalleeSource, CalleeSource], until: float, a: IRMethod,
              b: IRMethod) -> ProofResult | None:
    """The pair proved by the case split of one of its forms (validate/normalize.py), else None."""
    every, roots = forms.every, forms.roots
    cases_of: list[tuple[int, int, list[str]]] = [(roots[0], roots[1], [])]
    if forms.settled:
        cases_of.append((roots[2], roots[3], ["exit-phis"]))
    for x, y, form_rules in cases_of:
        by_values: list[bool] = []  # cases shown by their few parameter values (validate/finite.py)

        def leaf(u: PEG, known: frozenset, until: float) -> bool:
            by_values.append(equal_on_values(u, known, until, unfolding))
            return by_values[-1]

        cases = equal_by_cases(pair_of(every, x, y), deadline=until, leaf=leaf)
        if cases == 0:
            return ProofResult(True, "same PEG once conditions known in branches are used",
                               ["known-conditions"] + form_rules, a, b)
        if cases is not None and any(by_values):
            return ProofResult(True, "same PEG in every case of the branch conditions, computed for each value a "
                                     "parameter has in some", ["case-split", "finite-values"] + form_rules, a, b)
        if cases is not None:
            return ProofResult(True, "same PEG in every case of the branch conditions", ["case-split"] + form_rules,
                               a, b)
    return None


def _saturate(pair: MethodPair, orig_h: ClassHierarchy, opt_h: ClassHierarchy, rules: list, budget: ProofBudget,
              explain: bool, view: OrigView | None, callees: tuple[CalleeSource, CalleeSource],
              unfolding: tuple[CalleeSource, CalleeSource], a: IRMethod, b: IRMethod, forms: _Forms,
              cases_until: float, keep: dict[tuple[bool, bool], _Forms] | None = None,
              key: tuple[bool, bool] = (False, False), kept: list[Saturated] | None = None) -> ProofResult:
    """The rest of an attempt of :func:`_prove` from its forms: their case split until ``cases_until`` (unless
    an earlier attempt's finished unproved), then one e-graph of every form, saturated, and loop induction from
    the roots. ``keep``: where the forms are memoized (:class:`PegMemo`), marked when the case split finishes
    unproved in time; ``kept``: where the e-graph goes when it does not meet the roots (:func:`prove_pair`'s
    ``keep``)."""
    pa, pb, every, roots, settled, hoisted = forms.pa, forms.pb, forms.every, forms.roots, forms.settled, \
        forms.hoisted
    if not forms.cases_done:
        proved = _by_cases(forms, unfolding, cases_until, a, b)
        if proved is not None:
            return proved
        if keep is not None and clock() <= cases_until:
            keep[key] = replace(forms, cases_done=True)
    eg = EPeg()
    eg.info.final_class = _final_on_both(orig_h, opt_h)
    eg.info.exact_array_field = _exact_fields_on_both(pair, view)
    got = eg.add_peg(every, roots=roots)
    ra, rb = got[roots[0]], got[roots[1]]
    if eg.equiv(ra, rb):  # same PEG after hash-consing (copies, dead stores, slots and block order differ)
        return ProofResult(True, "same PEG", ["hash-consing"], a, b)
    if settled:
        for plain, other in ((ra, got[roots[2]]), (rb, got[roots[3]])):
            eg.union(plain, other, Reason("exit-phis", ("peg", "settled"), (plain, other)))
        eg.rebuild()
        if eg.equiv(ra, rb):
            return ProofResult(True, "same PEG once loops' exit phis are settled", ["exit-phis"], a, b)
    if forms.normalized:
        k = 4 if settled else 2
        for plain, other in ((ra, got[roots[k]]), (rb, got[roots[k + 1]])):
            eg.union(plain, other, Reason("normal-forms", ("peg", "as built"), (plain, other)))
        eg.rebuild()
    if hoisted:
        for plain, other in ((ra, got[roots[-2]]), (rb, got[roots[-1]])):
            eg.union(plain, other, Reason("hoisted-reads", ("peg", "as built"), (plain, other)))
        eg.rebuild()
    # the calls of each side's own small methods, inlined in the shared e-graph (rules/inline.py): a side that
    # inlined a helper by hand, or the optimizer's inlining, meets the other through the callee's body
    sides = [(pa, callees[0]), (pb, callees[1])]
    inline_calls(eg, every, got, choose_bodies(every, roots, sides, throws=True), split_roots=roots)
    checkpoint()
    start = clock()
    saturate_s = None if budget.time_s is None else max(0.05, SATURATION_SHARE * budget.time_s)
    report = _CheckedRunner(rules, Limits(max_nodes=budget.max_nodes, max_iterations=budget.max_iterations,
                                          time_limit_s=saturate_s)).run(eg)
    if eg.conflicts:  # two different constants in one class: some rule was unsound here, so prove nothing
        return ProofResult(False, f"not proved: the e-graph contradicts itself ({len(eg.conflicts)} analysis "
                                  "conflicts: an axiom is unsound on this method)", orig_ir=a, opt_ir=b)
    induction = any(r.name == "theta-bisimulation" for r in rules)  # the same principle, from the roots
    checkpoint()
    if induction and not eg.equiv(ra, rb) and clock() < budget.deadline(start):
        _close_by_bisimulation(eg, ra, rb, budget.deadline(start), budget.induction_steps)
    # kept for the case split on terms read back from it (cases_after_saturation, validate's last attempt), whose
    # bisimilarity of the read-back loops is loop induction's principle: only with theta-bisimulation on
    if kept is not None and induction and not eg.equiv(ra, rb):
        kept.append(Saturated(eg, ra, rb, pa, pb, tuple(sorted(report.fired())) if explain else (), a, b))
    if eg.equiv(ra, rb):
        used: list[str] = []
        if explain:
            ex = eg.explain(ra, rb, depth=EXPLAIN_DEPTH)
            # "import" only closes the thetas of the PEGs as they were built: not an axiom
            used = sorted(set(ex.rules()) - {"import"}) if ex is not None else []
        return ProofResult(True, f"proved in {report.iterations} iterations "
                                 f"({(clock() - start) * 1000:.0f} ms)", used, a, b)
    why = f"not proved: saturation {report.stop_reason.value} after {report.iterations} iterations, " \
          f"{report.nodes} nodes"
    return ProofResult(False, why + _call_difference(pa, pb), orig_ir=a, opt_ir=b)


class _CheckedRunner(Runner):
    """The runner with a :func:`~peggy_jvm.budget.checkpoint` of the optimizer's safety net once per iteration
    (before the rebuild that ends it): the self-check may not be interrupted by an alarm (budget.py), and a
    saturation of 20,000 nodes can run long between the other checkpoints. The checkpoint decides nothing."""

    def _rebuild(self, eg: EGraph, report: RunReport) -> None:
        checkpoint()
        super()._rebuild(eg, report)


def cases_after_saturation(kept: list[Saturated], deadline: float) -> ProofResult | None:
    """``validate``'s last attempt at a pair every other attempt left unproved: the case split on the terms read
    back from each e-graph its proofs saturated without meeting the roots (``kept``, in the order of the
    attempts), each while ``deadline`` (:func:`~peggy_jvm.egraph.clock.clock`) is not past; None when none shows
    them equal. Last, so that it costs nothing on a pair another attempt proves, and a proof found by the axioms
    keeps their explanation; the axioms named are every one that changed the e-graph (the two terms' own
    explanations are not computed: a superset)."""
    for s in kept:
        if clock() >= deadline:
            break
        checkpoint()
        if equal_by_cases_after(s.eg, s.ra, s.rb, s.pa, s.pb, deadline):
            return ProofResult(True, "same PEG in every case of the branch conditions, read back after saturation",
                               ["case-split-after-saturation", *s.fired], s.a, s.b)
    return None


def _close_by_bisimulation(eg: EPeg, ra: int, rb: int, deadline: float, steps: int) -> None:
    """Loop induction from the two roots (:mod:`peggy_jvm.rules.induction`): congruence closure never merges two
    cycles, so two loops that only became equal body by body (a branch flipped inside a loop) stay apart until
    their thetas are merged."""
    pairs = prove_by_induction(eg, ra, rb, steps, deadline=deadline, retries=ROOT_INDUCTION_RETRIES)
    if not pairs:
        return
    for x, y, _n, _m in pairs:
        eg.union(x, y, Reason("theta-bisimulation", ("theta", "theta'"), (x, y)))
    eg.rebuild()


def _call_difference(pa: PEG, pb: PEG, shown: int = 3) -> str:
    """Which methods one side calls and the other does not: the commonest reason a pair stays unproved is a
    library rewrite no axiom describes (``new StringBuilder().append(s)`` turned into ``s.concat(...)``)."""
    def calls(p: PEG) -> set[str]:
        refs = [n.attr for n in p.nodes if n.op.startswith("invoke.")]
        # a constructor run by new (class, constructor) only when its pair is not proved: new StringBuilder()
        # against s.concat(...) is said by the calls that differ
        refs += [cast("tuple[str, MethodRef]", n.attr)[1] for n in p.nodes
                 if n.op == "new" and cast("tuple[str, MethodRef]", n.attr)[1].name.endswith(UNPROVED)]
        return {f"{r.owner}.{r.name}" for r in refs if isinstance(r, MethodRef)}
    ca, cb = calls(pa), calls(pb)
    parts = []
    unproved = sorted(c.removesuffix(UNPROVED) for c in ca if c.endswith(UNPROVED))
    if unproved:  # read apart from OPT's (modular.CallView): the callee's pair is not proved
        ca = {c for c in ca if not c.endswith(UNPROVED)}
        cb -= set(unproved)
        more = f" and {len(unproved) - shown} more" if len(unproved) > shown else ""
        parts.append(f"calls whose pair is not proved equivalent: {', '.join(unproved[:shown])}{more}")
    for side, only in (("ORIG", ca - cb), ("OPT", cb - ca)):
        if only:
            names = sorted(only)
            more = f" and {len(names) - shown} more" if len(names) > shown else ""
            parts.append(f"calls only in {side}: {', '.join(names[:shown])}{more}")
    return "; " + "; ".join(parts) if parts else ""
