"""The per-method driver and the whole-input orchestration of ``peggy-jvm optimize``.

Owns: :class:`Stage`, :class:`MethodReport`, :class:`RunReport`, :func:`optimize_class` (one class, every
method through the chosen stage, each with its own fallback: :func:`optimize_methods` then :func:`merge_class`)
and :func:`optimize_input` (a class, jar or directory, optionally on several processes).

Methods are independent (issue 19): each is optimized against the class as read, with its own copy of the
constant pool (:func:`optimize_methods`; same-class callees are inlined from their original code, a
deterministic choice), and comes back as a :class:`MethodOutcome` (its new code, indices into its private
pool, and the entries it added). :func:`merge_class` adds those entries to the class's pool in method order
and renumbers each rewrite's code to them (``classfile.poolorder``: instructions, catch types, StackMapTable
object types, debug tables; an ``ldc`` pushed past 255 becomes ``ldc_w``). So a class may be split into parts
of its methods computed anywhere, in any order, and merged into the same bytes.

The full stage is one line of stages, each a function of this module taking the previous one's output
(:func:`_full`): build (``peg.build``) -> saturate (:mod:`peggy_jvm.saturate`, the rules of
:mod:`peggy_jvm.rules.policy`; skipped with extraction when the reverter refuses every extraction,
``triage.never_revertible``) -> extract (:mod:`peggy_jvm.pegextract`, with the reverter's acceptance test
:func:`revertible`; skipped by the triage, :mod:`peggy_jvm.triage`, when no extraction can be cheaper) -> revert
(``revert.revert``) -> lower (``ir.lower``) -> the decision on the emitted code (:func:`_check_emitted`) ->
self-check (``validate.selfcheck.prove_rewrite`` with ``rules.policy.proof_rules``).

Inputs: class-file bytes, the class-hierarchy sources (the input's own classes, ``--classpath``, the JDK), the
stage, the work budget, the per-method safety net and the goal. Outputs: new class bytes and one report row per
method.

The full stage's decision (``_check_emitted``, docs/cost-model.md): after lowering, the original and the
emitted code are priced by :mod:`peggy_jvm.codecost`; ``--goal speed`` keeps the rewrite only if its emitted
cost is strictly lower and its size grows by no more than 1.5 times its relative cost gain (``size_allowance``),
``--goal size`` only if its size is strictly smaller and its emitted cost no higher; otherwise the method is
``unchanged`` with both figures in the reason (before the self-check, which is then not needed). Under ``--goal
size`` a method whose extraction finds no cheaper PEG is judged on the round trip of its own PEG (lowered for
size), by the same rule; and the size peepholes on bytecode (``classfile.shrink``) run on the rewrite and on the
original code, the shortest of the three that passes the rule and the self-check being kept (:func:`_smallest`).
Last, ``--goal size`` renumbers each class's constant pool so that ``ldc`` reaches the constants it loads most
(``classfile.poolorder``: ``ldc_w`` becomes ``ldc``; kept only when the class gets smaller, as it was otherwise).

The input size budget (``--goal speed`` with ``size_budget`` ``input``, the default; docs/cost-model.md): once
every method of the run is done, wherever it ran, the rewritten methods' code together must be no larger than
their originals'; :func:`_within_budget` withdraws the rewrites :func:`peggy_jvm.sizebudget.choose` picks (the
least predicted gain, exactly, ties by class, method and descriptor), each then ``unchanged`` with the reason
``input size budget: ...``. To merge classes after that choice every class is then a task of the one part of
all its methods (outcomes, not merged bytes) and merged in the main process at the end.

Each report row carries the method's wall-clock time (``time_ms``) and its CPU time (``cpu_ms``, the optimizing
thread's ``time.thread_time()``; None for a result from the cache).

Budgets (peggy_jvm/budget.py): the full stage's sub-stages are bounded by work (:class:`WorkBudget`), never by
the clock, so the output depends on the input and options only. ``--method-timeout`` is a wall-clock safety net
per method (:class:`SafetyNet`, default :data:`DEFAULT_METHOD_TIMEOUT`): checked between the sub-stages and at
the end, interrupting saturation + extraction by an alarm and the self-check at its checkpoints
(``budget.cooperative``); when it fires the method keeps its original bytes
(status ``fallback``, reason ``timeout: ...``), even one that was to stay unchanged.

Tasks (:func:`_tasks`, the same for ``--jobs 1``, worker processes and Dask): one per class, and a class of
more than :data:`SPLIT_BYTES` bytes in parts (contiguous ranges of its methods of about that many bytes by
code size), so that one huge class does not bound the run; on workers (``--jobs N``, :mod:`peggy_jvm.workers`:
process groups, signals, parent death, Ctrl-Z) or Dask the largest first (``workers.largest_first``: no worker
idles at the end while another runs a large task started last); a split class is merged in the main process
when its last part is in (:class:`_Collector`). Before the tasks the main process imports the stage's modules and
compiles its rules (:func:`_prepare`: local workers, forked, inherit them instead of each doing it again), and
while they run the heap is frozen for the garbage collector (``workers.heap_frozen``). A worker that dies
(killed, out of memory) leaves its class or part as it was: every method of it ``fallback``. Which worker takes which
task changes nothing in the output: each method's result is a function of its class, the hierarchy and the
options. An interruption kills every worker's group at once; the caller's ``finally`` blocks then remove
temporaries and nothing is written.

Result cache (``--cache``, :mod:`peggy_jvm.cache`): each task (a class, or a part of one) is looked up in it
first, in the process that would optimize it (:func:`_work`, the one call); a hit is the stored output (a
class's bytes, a part's outcomes: :func:`encode_part`) and report rows, a miss is optimized with the hierarchy
facts it consults recorded and then stored. The main process evicts at the end of the run.

Progress: the caller's ``progress`` gets a :class:`Progress` when a class finishes and, with worker processes,
about every :data:`PROGRESS_TICK` seconds while classes run (so a time-paced display never waits for a slow
class).

Invariants (the safety net of DESIGN section 6):
- a method whose stage raises, or overruns its safety net, keeps its original bytes (status ``fallback`` with the
  reason); a method without code is ``unchanged``;
- a class none of whose methods changed is written back byte-identical (under ``--goal size``: unless the
  renumbering of its pool for ``ldc`` makes it smaller);
- bad input (a malformed class) is an :class:`~peggy_jvm.archive.InputError`, never a partial output.
"""
from __future__ import annotations

import importlib
import json
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, NamedTuple, Sequence

from .archive import (Entry, InputError, InputSet, Output, check_outputs, output_form, read_input, resolve_output,
                      write_output)
from .classfile.errors import ClassFileError, UnsupportedCodeError
from .classfile.hierarchy import ClassHierarchy
from .classfile.reader import read_class, read_code, read_instructions
from .classfile.attributes import LineNumberTable, LocalVariableTable
from .classfile.bytecode import Instruction
from .classfile.model import ClassFile, CodeAttribute, MethodInfo
from .classfile.poolorder import merge_entries, renumber_code, reorder_for_ldc
from .classfile.recode import RecodeResult, recode_method
from .classfile.shrink import shrink_method
from .ir.lift import lift_method
from .ir.lower import lower_method
from .peg.build import PegUnsupported, build_peg
from .peg.check import check_peg
from .peg.graph import PEG as PegGraph  # Stage.PEG is the stage's name here
from .revert.revert import Generated, RevertUnsupported, check_revertible, revert_peg
from .revert.tidy import ReturnsInPlace
from .rules.inline import CalleeSource, inlinable_call_count
from .budget import (DEFAULT_METHOD_TIMEOUT, DEFAULT_WORK_BUDGET, MethodTimeout, SafetyNet, WorkBudget, alarm,
                     cooperative)
from .classfile.writer import write_class
# the stages are named in choices.py, which the CLI reads without importing this module
from .choices import SizeBudget, Stage
from .codecost import EmittedCost, Goal, price_code
from .cache import ResultCache, optimize_class_cached
from .sizebudget import Rewrite, choose
from .workers import heap_frozen, largest_first, run_pool

if TYPE_CHECKING:  # the rules, the e-graph and the solver stack are imported only by the stage that needs them
    from .pegextract.select import ExtractReport
    from .rules.policy import RuleOptions
    from .saturate import Saturation


class MethodUnchanged(Exception):
    """A stage leaves this method as it is, for a reason that is not a failure (e.g. irreducible control flow,
    exception handlers the reverter does not handle yet)."""


#: ``--goal speed`` keeps a rewrite whose emitted code (codecost.py) is strictly cheaper and grows by at most
#: ``BYTES_PER_COST`` times its relative cost gain, never more than ``MAX_GROWTH`` (docs/cost-model.md): a
#: hoisted invariant needs a local (a store and a load, 2-4 bytes) and pays for it only by running faster, so
#: one percent of emitted cost buys one and a half percent of code (at 1.0 the rule refused BenchKernels'
#: jacobi1d, +7.7% bytes for 5.6% less cost, and invariantSum, +6.7% for 5.7%, which ran 0.85x and 0.93x under
#: -Xint); a rewrite that saves nothing buys nothing
BYTES_PER_COST, MAX_GROWTH = 1.5, 0.25


def size_allowance(before: EmittedCost, after: EmittedCost) -> int:
    """The bytes ``--goal speed`` lets a rewrite from ``before`` to ``after`` add (0 unless it is cheaper)."""
    if after.cost >= before.cost or before.cost <= 0:
        return 0
    gain = (before.cost - after.cost) / before.cost
    return int(before.size * min(MAX_GROWTH, BYTES_PER_COST * gain))


@dataclass(slots=True)
class MethodReport:
    class_name: str
    name: str
    descriptor: str
    status: str  # rewritten | unchanged | fallback
    reason: str = ""
    cost_before: float | None = None
    cost_after: float | None = None
    bytes_before: int = 0
    bytes_after: int = 0
    time_ms: dict[str, float] = field(default_factory=dict)
    #: the CPU time of the method's work in its worker (``time.thread_time()`` of the thread that optimized it,
    #: from the method's start to its report row; ``time_ms[stage]`` is the wall clock of about the same); None
    #: for a result from the cache (its CPU was spent by the run that stored it) or a method with no code
    cpu_ms: float | None = None
    #: the full stage's extraction status ("optimal (proved)", "best found", "greedy", "original"); None when
    #: the method did not get that far or another stage ran
    extraction: str | None = None
    #: how the full stage's search for the cheapest selection ended, whatever the method then keeps
    #: (``pegextract.select.ExtractReport.search``: "optimal (proved)", "best found", "greedy", "none", or "no
    #: cheaper (bound)" when the triage's bound settled it); None when there was nothing to search
    search: str | None = None
    #: the emitted code's price (codecost.py) before and after; None when the full stage did not lower it
    emitted_cost_before: int | None = None
    emitted_cost_after: int | None = None
    #: the full stage's E-PEG after saturation (e-nodes, e-classes of the whole e-graph: what ``show --epeg``
    #: reports for the method); None when the method was not saturated
    epeg_nodes: int | None = None
    epeg_classes: int | None = None
    #: call sites inlined by the full stage's extraction (rules/inline.py); None when the method was not
    #: extracted
    inlined: int | None = None
    #: a rewritten method's debug information that did not survive (:func:`debug_dropped`); None otherwise
    debug_dropped: dict[str, list] | None = None

    def to_json(self) -> dict:
        d = asdict(self)
        d["class"] = d.pop("class_name")
        return d

    @staticmethod
    def from_json(d: dict, time_ms: dict[str, float]) -> MethodReport:
        """The row :meth:`to_json` wrote, with ``time_ms`` in place of the times it had (the result cache)."""
        fields = dict(d, class_name=d["class"], time_ms=time_ms, cpu_ms=None)
        del fields["class"]
        return MethodReport(**fields)


@dataclass(slots=True)
class RunReport:
    stage: str
    methods: list[MethodReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    classes: int = 0
    seconds: float = 0.0
    goal: str = Goal.SPEED.value
    #: with the result cache: its directory, how many methods came from it, how many entries the run evicted
    #: (``cache.py``); None without
    cache: dict | None = None
    #: peak resident memory in MiB (:func:`peak_memory_mib`): ``main``, the process that ran
    #: :func:`optimize_input`, and ``workers``, the largest worker process (None without workers)
    peak_memory_mib: dict | None = None
    #: the scope of ``--goal speed``'s size budget (``choices.SizeBudget``'s value); None where none applies
    #: (another stage or goal)
    size_budget: str | None = None

    def summary(self) -> dict:
        counts = {"rewritten": 0, "unchanged": 0, "fallback": 0}
        for m in self.methods:
            counts[m.status] += 1
        rewritten = [m for m in self.methods if m.status == "rewritten"]
        return {"classes": self.classes, "methods": len(self.methods), **counts,
                # of the unchanged: rewrites the input size budget withdrew (their original code kept)
                "withdrawn": sum(1 for m in self.methods if m.status == "unchanged"
                                 and m.reason.startswith(BUDGET_REASON)),
                "bytes_before": sum(m.bytes_before for m in self.methods),
                "bytes_after": sum(m.bytes_after for m in self.methods),
                # over the rewritten methods only: what the rewrites changed
                "rewritten_bytes_before": sum(m.bytes_before for m in rewritten),
                "rewritten_bytes_after": sum(m.bytes_after for m in rewritten),
                "emitted_cost_before": sum(m.emitted_cost_before or 0 for m in rewritten),
                "emitted_cost_after": sum(m.emitted_cost_after or 0 for m in rewritten),
                "inlined": sum(m.inlined or 0 for m in rewritten),
                # how the full stage's extraction searches ended (issue 21: the share proved optimal), by name
                "search": dict(sorted(Counter(m.search for m in self.methods if m.search is not None).items())),
                "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        out = {"stage": self.stage, "goal": self.goal, "methods": [m.to_json() for m in self.methods],
               "summary": self.summary(), "warnings": self.warnings}
        if self.cache is not None:
            out["cache"] = self.cache
        if self.peak_memory_mib is not None:
            out["peak_memory_mib"] = self.peak_memory_mib
        if self.size_budget is not None:
            out["size_budget"] = self.size_budget
        return out


def _code_length(data: bytes) -> int:
    return int.from_bytes(data[4:8], "big")


#: how many accepted candidates' generated code a :class:`Revertible` keeps
KEEP_GENERATED = 8


class Revertible:
    """The full stage's acceptance test of a candidate PEG (``extract_peg``'s ``accept``; ``show --extracted``
    uses it too): a selection the reverter cannot schedule is blocked, so the next cheapest is tried instead of
    keeping the original code. Only the verdict is wanted: the code is not tidied (``check_revertible``). The
    code generated for the latest accepted candidates is kept (:meth:`generated`), so that reverting the PEG
    extraction returns tidies it instead of generating it again (one such test per method's extraction)."""

    def __init__(self, ir) -> None:
        self.ir = ir
        self._accepted: list[Generated] = []

    def __call__(self, candidate: PegGraph) -> str | None:
        try:
            generated = check_revertible(candidate, self.ir)
        except (PegUnsupported, RevertUnsupported) as e:
            return str(e)
        if isinstance(generated, Generated):  # (a test's stand-in may return nothing)
            # the latest few: extraction returns the last accepted candidate or one shortly before it (the
            # tie-break's), and each holds its method's generated blocks
            self._accepted = self._accepted[-(KEEP_GENERATED - 1):] + [generated]
        return None

    def generated(self, peg: PegGraph) -> Generated | None:
        """The code generated when ``peg`` (this very PEG) was accepted, if it was."""
        return next((g for g in reversed(self._accepted) if g.peg is peg), None)


def revertible(ir) -> Revertible:
    """The acceptance test of candidate PEGs of the lifted method ``ir`` (:class:`Revertible`)."""
    return Revertible(ir)


# -- the stages of --stage full, in order: build, saturate, extract, revert, lower, self-check ------------------
def _build(ir) -> PegGraph:
    """Build: the lifted method's PEG, checked well-formed. Raises PegUnsupported."""
    peg = build_peg(ir)
    check_peg(peg)
    return peg


def _saturate(peg: PegGraph, rewrites: list, work: WorkBudget, callees: CalleeSource | None = None
              ) -> Saturation | None:
    """Saturate: ``peg``'s E-PEG within ``work``'s saturation limits, the calls ``callees`` allows inlined first
    (:mod:`peggy_jvm.rules.inline`); None (not saturated) when the extraction checker could not judge any
    extraction of it (``pegextract.select.checkable``), so that no work is wasted."""
    from .pegextract.select import checkable
    from .saturate import saturate
    return saturate(peg, rewrites, work.saturation(), callees) if checkable(peg) else None


#: the per-method triage (:mod:`peggy_jvm.triage`) on; off only to compare its output with the full run's (tests)
TRIAGE = True


def _never_revertible(peg: PegGraph, ir, goal: Goal) -> ExtractReport | None:
    """The triage before saturation (:func:`peggy_jvm.triage.never_revertible`): the report of a method whose
    every extraction the reverter refuses, which is then neither saturated nor extracted; else None."""
    if not TRIAGE:
        return None
    from .triage import never_revertible
    return never_revertible(peg, ir, goal)


def _extract(peg: PegGraph, sat: Saturation | None, ir, work: WorkBudget, goal: Goal,
             accept: Revertible | None = None) -> tuple[PegGraph, ExtractReport]:
    """Extract: the cheapest checked PEG of ``sat`` for ``goal`` that the reverter can schedule
    (:func:`revertible`, or the caller's ``accept`` of it, to revert the result with), or ``peg`` itself; one
    place for :func:`_full` and :func:`full_stage_view`, so that what people are shown is what the optimizer
    did."""
    from .pegextract.select import extract_peg
    triage_ms = None
    if TRIAGE and sat is not None:
        from .triage import cannot_pay
        t0 = time.perf_counter()  # for the report only
        skipped = cannot_pay(peg, sat, goal, work.solver_work)
        triage_ms = (time.perf_counter() - t0) * 1000
        if skipped is not None:  # extraction would return the original: its solver and checker are not run
            skipped.time_ms["triage"] = triage_ms
            return peg, skipped
    new, rep = extract_peg(peg, sat, work=work.solver_work, accept=accept if accept is not None else revertible(ir),
                           goal=goal)
    if triage_ms is not None:
        rep.time_ms["triage"] = triage_ms
    return new, rep


def _revert(peg: PegGraph, ir, goal: Goal = Goal.SPEED, generated: Generated | None = None):
    """Revert: ``peg`` checked again and scheduled back into IR (``ir``: the method it came from; returns in
    place of every jump to a return for ``--goal size``, of those to a return no loop reaches for ``speed``,
    loops tested at the bottom only for ``speed``, see ``revert_peg``; ``generated``: the code the acceptance
    test generated for ``peg``, tidied instead of generated again). Raises PegUnsupported, RevertUnsupported."""
    check_peg(peg)
    returns = ReturnsInPlace.ALL if goal is Goal.SIZE else ReturnsInPlace.BEFORE_LOOPS
    return revert_peg(peg, ir, returns=returns, rotate_loops=goal is Goal.SPEED, generated=generated)


def _lower(cf: ClassFile, m: MethodInfo, code: CodeAttribute, ir, hierarchy: ClassHierarchy,
           for_size: bool = False) -> bytes:
    """Lower: the IR as a new Code attribute (the original's line numbers carried where statements keep their
    origins; ``for_size``: slots and peepholes for the fewest bytes, ``--goal size``)."""
    lnt = next((a for a in code.attributes if a.name == "LineNumberTable"), None)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50_000))  # reverted code can nest expressions deeper than javac's
    try:
        return lower_method(cf, m, ir, hierarchy, LineNumberTable.parse(lnt.data) if lnt is not None else None,
                            for_size=for_size)
    finally:
        sys.setrecursionlimit(old)


def _self_check(cf: ClassFile, m: MethodInfo, data: bytes, hierarchy: ClassHierarchy, work: WorkBudget,
                net: SafetyNet | None = None, rules: RuleOptions | None = None,
                callees: CalleeSource | None = None, sat: Saturation | None = None) -> None:
    """Self-check (DESIGN section 6, step 2): the emitted bytecode ``data`` is lifted again and validated
    against the original method (``validate.selfcheck.prove_rewrite``: both PEGs in one e-graph, saturated within
    ``work``'s proof limits (work, not time, since the verdict decides the output) with the default safe rules
    and only those of the user's ``rules`` that the soundness fuzzer finds sound, ``rules.policy.proof_rules``;
    the roots must meet; the calls ``callees`` allows inlined in both, as the full stage did). Not proved: the
    method keeps its original code. The safety net ``net`` stops it at its checkpoints (``budget.cooperative``:
    no alarm, since it reads the shared class hierarchy), raising :class:`MethodTimeout`. ``sat``: the optimizer's
    saturated E-PEG of the original, where the proof is tried first (``validate.selfcheck``)."""
    from .rules.policy import optimizer_rules, proof_rules
    from .validate.selfcheck import prove_rewrite
    with cooperative(net if net is not None else SafetyNet(None), "the self-check"):
        proof = prove_rewrite(cf, m, data, hierarchy, proof_rules(rules), work.proof(), callees,
                              sat, optimizer_rules(rules) if sat is not None else ())
    if not proof.proved:
        raise MethodUnchanged(f"self-check: the emitted code is {proof.reason}")


@dataclass
class FullStageView:
    """What the full stage sees of one method, for people (``show --epeg``, ``--html``): its PEG, the E-PEG as
    the full stage saturates it and, when asked, the extraction's choice. Work budgets, not time, bound every
    part, so this is what the optimizer saw in a run with the same options."""
    peg: PegGraph
    saturation: Saturation | None  # None when extraction gave up before saturating (report.notes say why)
    report: ExtractReport | None = None  # with ``extract``
    chosen: PegGraph | None = None  # the extracted PEG when it is cheaper than ``peg``


def full_stage_view(ir, rules: RuleOptions | None, goal: Goal = Goal.SPEED, extract: bool = False,
                    work: WorkBudget = DEFAULT_WORK_BUDGET, callees: CalleeSource | None = None) -> FullStageView:
    """The full stage's saturation (and with ``extract`` its extraction, with the same reverter test) of the
    lifted method ``ir``: the calls :func:`_full` makes, without the safety net (``callees``: what it may
    inline, as :func:`_full` is given it). Raises PegUnsupported."""
    from .rules.policy import optimizer_rules
    from .saturate import saturate
    peg = _build(ir)
    rewrites = optimizer_rules(rules)
    if not extract:
        return FullStageView(peg, saturate(peg, rewrites, work.saturation(), callees))
    refused = _never_revertible(peg, ir, goal)
    if refused is not None:
        return FullStageView(peg, None, refused)
    sat = _saturate(peg, rewrites, work, callees)
    new, rep = _extract(peg, sat, ir, work, goal)
    return FullStageView(peg, sat, rep, None if new is peg else new)


def _full(cf: ClassFile, m: MethodInfo, code: CodeAttribute, ir, hierarchy: ClassHierarchy, net: SafetyNet,
          work: WorkBudget, info: dict, goal: Goal = Goal.SPEED, rules: RuleOptions | None = None,
          callees: CalleeSource | None = None) -> tuple[bytes, CodeAttribute]:
    """``--stage full`` after lifting, one stage after the other: build, saturate (the rule policy of
    :mod:`peggy_jvm.rules.policy` with the user's ``rules``, within ``work``), extract (priced for ``goal``),
    revert, lower, then the decision on the emitted code (:func:`_check_emitted`) and the self-check; the
    safety net ``net`` checked between them. A PEG that is not strictly cheaper, emitted code that does not pay
    or a rewrite the self-check cannot prove leaves the method unchanged (:class:`MethodUnchanged`). Returns
    the new Code attribute's bytes and the attribute parsed. ``callees``: the methods whose calls saturation may
    inline (:mod:`peggy_jvm.rules.inline`), and the self-check with it."""
    from .rules.policy import optimizer_rules  # the rules and the solver stack: only for the stage that needs them
    times: dict[str, float] = info.setdefault("time_ms", {})
    clock = time.perf_counter  # for the report only
    # the rules are parsed and compiled once per process (cached): outside the alarm below, so that a safety
    # net shorter than that one-time cost does not interrupt it, and every later method with it
    rewrites = optimizer_rules(rules)
    try:
        peg = _build(ir)
        times["full.prepare"] = round(net.spent() * 1000, 3)
        net.check("saturation")
        # parts of extraction read no clock at all (the phi-profile checker can take seconds on one candidate):
        # the safety net interrupts them
        with alarm(net, "saturation and extraction"):
            t0 = clock()
            refused = _never_revertible(peg, ir, goal)
            sat = None if refused is not None else _saturate(peg, rewrites, work, callees)
            times["full.saturate"] = round((clock() - t0) * 1000, 3)
            accept = revertible(ir)
            new, rep = (peg, refused) if refused is not None else _extract(peg, sat, ir, work, goal, accept)
        info.update(cost_before=rep.cost_before, cost_after=rep.cost_after, extraction=rep.status,
                    search=rep.search, epeg_nodes=rep.epeg_nodes, epeg_classes=rep.epeg_classes)
        times.update({f"full.{k}": round(v, 3) for k, v in rep.time_ms.items()})
        if new is peg:
            why = f"no cheaper PEG ({rep.notes[-1] if rep.notes else rep.status})"
            if goal is not Goal.SIZE:
                raise MethodUnchanged(why)
            # --goal size: the round trip alone can be shorter than javac's code (a repeated value computed
            # once, dead code, tails merged, returns in place of gotos); the emitted-code rule and the
            # self-check then decide as for any rewrite
            info["round_trip"] = why
        if callees is not None:
            info["inlined"] = inlinable_call_count(peg, callees) - inlinable_call_count(new, callees)
        net.check("reverting")
        reverted = _revert(new, ir, goal, accept.generated(new) if isinstance(accept, Revertible) else None)
    except (PegUnsupported, RevertUnsupported) as e:
        raise MethodUnchanged(str(e)) from None
    t1 = clock()
    data = _lower(cf, m, code, reverted, hierarchy, for_size=goal is Goal.SIZE)
    emitted = read_code(data, cf.pool)
    times["full.lower"] = round((clock() - t1) * 1000, 3)
    old_price, new_price = price_code(code, cf.pool), price_code(emitted, cf.pool)
    info.update(emitted_cost_before=old_price.cost, emitted_cost_after=new_price.cost)
    try:
        _check_emitted(goal, old_price, new_price)
    except MethodUnchanged as e:
        if "round_trip" in info:
            raise MethodUnchanged(f"{info['round_trip']}; its round trip: {e}") from None
        if goal is not Goal.SPEED or not e.args[0].startswith("emitted code larger"):
            raise
        # loops tested at the bottom copy their tests: the same PEG with javac's loop shape may fit the allowance
        net.check("reverting")
        plain = _lower(cf, m, code, revert_peg(new, ir, returns=ReturnsInPlace.NONE), hierarchy)
        plain_emitted = read_code(plain, cf.pool)
        plain_price = price_code(plain_emitted, cf.pool)
        try:
            _check_emitted(goal, old_price, plain_price)
        except MethodUnchanged:
            raise e from None
        data, emitted = plain, plain_emitted
        info.update(emitted_cost_after=plain_price.cost)
        retry_jumps = False
    else:
        retry_jumps = goal is Goal.SPEED
    net.check("the self-check")
    t2 = clock()
    try:
        try:
            _self_check(cf, m, data, hierarchy, work, net, rules, callees, sat)
        except MethodUnchanged:
            jumps = _returns_by_jumps(cf, m, code, new, ir, hierarchy, old_price, data) if retry_jumps else None
            if jumps is None:
                raise
            # the self-check does not yet prove every method returning in several places (the lowering's own
            # loop exits, Fraction.equals): the same PEG with one shared return, as before returns in place
            net.check("the self-check")
            data, emitted, cost = jumps
            _self_check(cf, m, data, hierarchy, work, net, rules, callees, sat)
            info.update(emitted_cost_after=cost)
    finally:
        times["full.self_check"] = round((clock() - t2) * 1000, 3)
    return data, emitted


def _returns_by_jumps(cf: ClassFile, m: MethodInfo, code: CodeAttribute, new: PegGraph, ir,
                      hierarchy: ClassHierarchy, old_price: EmittedCost, data: bytes
                      ) -> tuple[bytes, CodeAttribute, int] | None:
    """``--goal speed``'s rewrite ``new`` lowered with every path jumping to a shared return
    (:attr:`ReturnsInPlace.NONE`, loops still rotated) as (bytes, parsed, emitted cost); None when that is the
    code ``data`` already is or when it does not pay (:func:`_check_emitted`)."""
    jumps = _lower(cf, m, code, revert_peg(new, ir, returns=ReturnsInPlace.NONE, rotate_loops=True), hierarchy)
    if jumps == data:
        return None
    emitted = read_code(jumps, cf.pool)
    price = price_code(emitted, cf.pool)
    try:
        _check_emitted(Goal.SPEED, old_price, price)
    except MethodUnchanged:
        return None
    return jumps, emitted, price.cost


def _check_emitted(goal: Goal, before: EmittedCost, after: EmittedCost) -> None:
    """Keep the original code unless the emitted rewrite pays by the goal's rule (docs/cost-model.md): ``speed``:
    strictly cheaper, not larger than :func:`size_allowance` lets it be, and no more innermost loops the JIT
    cannot count (:func:`~peggy_jvm.codecost.uncounted_loops`); ``size``: strictly smaller and not costlier."""
    figures = f"cost {before.cost} -> {after.cost}, {before.size} -> {after.size} bytes"
    if goal is Goal.SIZE:
        if after.size >= before.size:
            raise MethodUnchanged(f"emitted code not smaller: {figures}")
        if after.cost > before.cost:
            raise MethodUnchanged(f"emitted code costlier: {figures}")
        return
    if after.cost >= before.cost:
        raise MethodUnchanged(f"emitted code not cheaper: {figures}")
    allowed = size_allowance(before, after)
    if after.size > before.size + allowed:
        raise MethodUnchanged(f"emitted code larger: {figures} (+{allowed} allowed)")
    if after.uncounted > before.uncounted:
        # no interpreter gain buys it: C2 compiles such a loop without range-check elimination or unrolling
        # (BenchKernels.lcs: emitted cost -0.4%, -Xint 0.99, JIT 1.08-1.16x; docs/cost-model.md)
        raise MethodUnchanged(f"emitted code has loops the JIT cannot count: {figures}, innermost loops "
                              f"without an induction variable test {before.uncounted} -> {after.uncounted}")


def optimizer_callees(cf: ClassFile, m: MethodInfo, hierarchy: ClassHierarchy, program: Mapping[str, bytes] | None,
                      goal: Goal, pegs: dict | None = None, classes: dict | None = None) -> CalleeSource:
    """The callees the full stage may inline into ``m`` (one definition, so that ``show --epeg`` and the HTML
    report picture what the optimizer offers): callees with loops too, at a call no loop of the caller varies and
    whose use leaves the loops dead (rules/inline.py, choose_bodies: a loop that stays cannot pay), and callees
    that throw only when their check fits the bytes the caller may grow by (none under ``--goal size``)."""
    attr = m.code_attribute()
    code_bytes = 0 if attr is None else _code_length(attr.data)
    return CalleeSource(cf, hierarchy, program, m.is_static, pegs={} if pegs is None else pegs,
                        classes={} if classes is None else classes, loops=True, dead_loops_only=True,
                        max_growth=int(code_bytes * MAX_GROWTH) if goal is Goal.SPEED else 0)


def _transform(stage: Stage, cf: ClassFile, m: MethodInfo, code: CodeAttribute, insns: list[Instruction],
               hierarchy: ClassHierarchy, net: SafetyNet | None = None, info: dict | None = None,
               work: WorkBudget = DEFAULT_WORK_BUDGET, goal: Goal = Goal.SPEED, rules: RuleOptions | None = None,
               callees: CalleeSource | None = None) -> RecodeResult:
    """One method through ``stage``; raises on anything the stage cannot do (the caller falls back), and
    :class:`MethodTimeout` when the safety net ``net`` fires between (or inside) the full stage's sub-stages.
    ``info`` receives what the full stage measured (costs, emitted costs, extraction status, time per
    sub-stage); the full stage keeps only a rewrite whose emitted code pays by ``goal``'s rule."""
    net = net if net is not None else SafetyNet(None)
    info = info if info is not None else {}
    if stage is Stage.CLASSFILE:
        return recode_method(cf, m, code, insns, hierarchy)
    ir = lift_method(cf, m, hierarchy, code, insns)
    if stage is Stage.FULL and goal is Goal.SIZE:
        return _smallest(cf, m, code, insns, ir, hierarchy, net, work, info, rules, callees)
    if stage is Stage.FULL:
        data, emitted = _full(cf, m, code, ir, hierarchy, net, work, info, goal, rules, callees)
    else:
        if stage is Stage.PEG:
            try:
                ir = revert_peg(_build(ir), ir)
            except (PegUnsupported, RevertUnsupported) as e:
                raise MethodUnchanged(str(e)) from None
        data = _lower(cf, m, code, ir, hierarchy)
        emitted = read_code(data, cf.pool)
    return RecodeResult(data, _lost_attributes(code, emitted))


def _lost_attributes(code: CodeAttribute, emitted: CodeAttribute) -> list[str]:
    kept = {a.name for a in emitted.attributes}
    return [a.name for a in code.attributes if a.name not in kept and a.name != "StackMapTable"]


def _smallest(cf: ClassFile, m: MethodInfo, code: CodeAttribute, insns: list[Instruction], ir,
              hierarchy: ClassHierarchy, net: SafetyNet, work: WorkBudget, info: dict,
              rules: RuleOptions | None, callees: CalleeSource | None) -> RecodeResult:
    """``--goal size``'s full stage: the shortest of the full stage's rewrite (:func:`_full`), that rewrite
    after the size peepholes (``classfile.shrink``) and the original code after them, each kept only by the
    size rule (:func:`_check_emitted`) and a proof by the self-check (the full stage's own rewrite is proved
    inside :func:`_full`); none of them: :class:`MethodUnchanged`, with the full stage's reason. When the
    self-check cannot prove the peepholed original, the peepholes that keep its PEG the same graph
    (``same_graph``) are tried in its place."""
    times: dict[str, float] = info.setdefault("time_ms", {})
    old_price = price_code(code, cf.pool)
    candidates: list[tuple[RecodeResult, CodeAttribute, bool]] = []  # (code, parsed, proved already)
    why = ""
    try:
        data, emitted = _full(cf, m, code, ir, hierarchy, net, work, info, Goal.SIZE, rules, callees)
    except MethodUnchanged as e:
        why = str(e)
    else:
        candidates.append((RecodeResult(data, _lost_attributes(code, emitted)), emitted, True))
        full_lost = candidates[0][0].dropped
        shrunk = shrink_method(cf, m, emitted, read_instructions(emitted), hierarchy)
        if shrunk is not None:
            candidates.append((RecodeResult(shrunk.data, sorted(set(full_lost) | set(shrunk.dropped))),
                               read_code(shrunk.data, cf.pool), False))
    t0 = time.perf_counter()
    own = shrink_method(cf, m, code, insns, hierarchy)
    times["size.peepholes"] = round((time.perf_counter() - t0) * 1000, 3)
    if own is not None:
        candidates.append((own, read_code(own.data, cf.pool), False))
    candidates.sort(key=lambda c: len(c[1].code))  # stable: the full stage's rewrite first among equals
    fallback_added = False
    i = 0
    while i < len(candidates):
        result, emitted, proved = candidates[i]
        i += 1
        new_price = price_code(emitted, cf.pool)
        try:
            _check_emitted(Goal.SIZE, old_price, new_price)
            if not proved:
                net.check("the self-check of the peepholes")
                t1 = time.perf_counter()
                try:
                    _self_check(cf, m, result.data, hierarchy, work, net, rules, callees)
                finally:
                    times["size.self_check"] = round((time.perf_counter() - t1) * 1000, 3)
        except MethodUnchanged as e:
            why = f"{why}; peepholes: {e}" if why and not proved else why or str(e)
            if result is own and not fallback_added and "self-check" in str(e):
                # the peepholes that leave the PEG the same graph prove where the others may not
                fallback_added = True
                plain = shrink_method(cf, m, code, insns, hierarchy, same_graph=True)
                if plain is not None and plain.data != own.data:
                    parsed = read_code(plain.data, cf.pool)
                    at = i + sum(1 for c in candidates[i:] if len(c[1].code) <= len(parsed.code))
                    candidates.insert(at, (plain, parsed, False))
            continue
        info.update(emitted_cost_before=old_price.cost, emitted_cost_after=new_price.cost)
        return result
    raise MethodUnchanged(why)


def debug_dropped(before: CodeAttribute, after: CodeAttribute, pool) -> dict[str, list]:
    """What the new code's debug tables lost: ``variables``, the names of the original LocalVariableTable's
    variables (by name and type: a loop's variable may live in another slot now) with no entry left (one kept
    over a shorter range is not counted), and
    ``lines``, the source lines of the original LineNumberTable no instruction of the new code carries."""
    def table(code: CodeAttribute, name: str):
        return next((a for a in code.attributes if a.name == name), None)

    def variables(code: CodeAttribute) -> list[tuple[str, str]]:
        a = table(code, "LocalVariableTable")
        return [] if a is None else [(pool.utf8(e.name_index), pool.utf8(e.descriptor_index))
                                     for e in LocalVariableTable.parse(a.data).entries]

    def lines(code: CodeAttribute) -> set[int]:
        a = table(code, "LineNumberTable")
        return set() if a is None else {e.line_number for e in LineNumberTable.parse(a.data).entries}

    kept = set(variables(after))
    gone = list(dict.fromkeys(name for name, desc in variables(before) if (name, desc) not in kept))
    return {"variables": gone, "lines": sorted(lines(before) - lines(after))}


def _dropped_reason(attributes: list[str], debug: dict[str, list]) -> str:
    """The report's reason for a rewritten method: the attributes and debug entries it lost."""
    parts = [f"dropped {', '.join(attributes)}"] if attributes else []
    if debug["variables"]:
        parts.append(f"dropped LocalVariableTable entries: {', '.join(debug['variables'])}")
    if debug["lines"]:
        parts.append(f"dropped lines: {', '.join(map(str, debug['lines']))}")
    return "; ".join(parts)


@dataclass(slots=True)
class MethodOutcome:
    """One method's result against the ORIGINAL class (:func:`optimize_methods`): its report row and, for a
    rewrite, its new Code attribute body with the pool entries the rewrite added to its private copy of the
    class's pool (``added``: the entries from the original pool's size on, in order; their indices are those
    the code holds until :func:`merge_class` renumbers them)."""
    report: MethodReport
    code: bytes | None = None
    added: list = field(default_factory=list)


def optimize_methods(data: bytes, hierarchy: ClassHierarchy, stage: Stage,
                     method_timeout: float | None = DEFAULT_METHOD_TIMEOUT, work: WorkBudget = DEFAULT_WORK_BUDGET,
                     goal: Goal = Goal.SPEED, rules: RuleOptions | None = None,
                     program: dict[str, bytes] | None = None, methods: range | None = None) -> list[MethodOutcome]:
    """The methods ``methods`` (indices into the class's method list; None: all) of one class through ``stage``,
    each against the class as read (never as rewritten by another method: inlined callees of the class are
    its original code) with its own copy of the constant pool, so that each outcome is a function of the
    class, the method, the hierarchy and the options alone: any grouping of the methods into tasks, in any
    order, on any process, gives the same outcomes, and :func:`merge_class` the same bytes.
    Arguments as :func:`optimize_class`. Raises ClassFileError when the class or a Code attribute is malformed.
    """
    cf = read_class(data)
    start_pool = len(cf.pool.entries)
    outcomes: list[MethodOutcome] = []
    # the callees' PEGs and classes (rules/inline.py), built from the original class and parsed once for all the
    # callers of this call
    callee_pegs: dict = {}
    callee_classes: dict = {}
    for m in (cf.methods if methods is None else [cf.methods[j] for j in methods]):
        attr = m.code_attribute()
        if attr is None:
            outcomes.append(MethodOutcome(MethodReport(cf.name, m.name, m.descriptor, "unchanged",
                                                       "no code (abstract or native)")))
            continue
        before = _code_length(attr.data)
        start = time.perf_counter()
        cpu_start = time.thread_time()  # the report's CPU time: this thread's, not the process's (Dask threads)
        try:  # a malformed Code attribute is bad input, not a fallback
            code = read_code(attr.data, cf.pool)
            insns = read_instructions(code)
        except ClassFileError as e:
            raise ClassFileError(f"method {m.name}{m.descriptor}: {e}") from None
        info: dict = {}  # the full stage's costs, extraction status and sub-stage times
        net = SafetyNet(method_timeout, start=start)
        own = replace(cf, pool=cf.pool.copy())  # what this method's rewrite interns stays its own

        def row(status: str, reason: str, spent: float, after: int = before, cost_key: str = "cost_before"
                ) -> MethodOutcome:
            # the time reported is the time the safety net was checked against (never a later reading)
            return MethodOutcome(MethodReport(
                cf.name, m.name, m.descriptor, status, reason, bytes_before=before, bytes_after=after,
                time_ms={stage.value: spent * 1000, **info.get("time_ms", {})},
                cpu_ms=(time.thread_time() - cpu_start) * 1000,
                cost_before=info.get("cost_before"), cost_after=info.get(cost_key), extraction=info.get("extraction"),
                search=info.get("search"),
                emitted_cost_before=info.get("emitted_cost_before"), emitted_cost_after=info.get(f"emitted_{cost_key}"),
                epeg_nodes=info.get("epeg_nodes"), epeg_classes=info.get("epeg_classes"), inlined=info.get("inlined")))
        try:
            callees = optimizer_callees(cf, m, hierarchy, program, goal, callee_pegs, callee_classes)
            result = _transform(stage, own, m, code, insns, hierarchy, net, info, work, goal, rules, callees)
        except MethodTimeout as e:  # the net fired between two sub-stages, or inside saturation + extraction
            outcomes.append(row("fallback", f"timeout: {e}", time.perf_counter() - start))
            continue
        except MethodUnchanged as e:
            spent = time.perf_counter() - start
            if method_timeout is not None and spent > method_timeout:  # over the net: a timeout all the same
                outcomes.append(row("fallback", f"timeout: {spent * 1000:.0f} ms > {method_timeout:g} s, at the "
                                                f"end (and the method was to stay unchanged: {e})", spent))
            else:
                outcomes.append(row("unchanged", str(e), spent))
            continue
        except Exception as e:  # any failure of the stage keeps the original method
            outcomes.append(row("fallback", f"{type(e).__name__}: {e}", time.perf_counter() - start))
            continue
        spent = time.perf_counter() - start
        if method_timeout is not None and spent > method_timeout:
            # finished, but late (a sub-stage that cannot be interrupted ran long): the net is a promise
            outcomes.append(row("fallback", f"timeout: {spent * 1000:.0f} ms > {method_timeout:g} s, at the end",
                                spent))
            continue
        debug = debug_dropped(code, read_code(result.data, own.pool), own.pool)
        done = row("rewritten", _dropped_reason(result.dropped, debug), spent, _code_length(result.data),
                   "cost_after")
        done.report.debug_dropped = debug
        done.code, done.added = result.data, own.pool.entries[start_pool:]
        outcomes.append(done)
    return outcomes


def merge_class(data: bytes, outcomes: list[MethodOutcome], goal: Goal = Goal.SPEED
                ) -> tuple[bytes, list[MethodReport]]:
    """The class ``data`` with the rewrites of ``outcomes`` (one per method, in the class's order, from
    :func:`optimize_methods`) in place: each rewrite's added pool entries are added to the class's pool in
    method order (entries an earlier method added shared) and its code renumbered to them
    (``classfile.poolorder.merge_entries``, ``renumber_code``), so the bytes depend on the outcomes alone,
    never on which process computed which. A rewrite whose code cannot be renumbered safely keeps the method's
    original code (``fallback``). Returns the class bytes and the report rows."""
    cf = read_class(data)
    original = cf.pool.copy()
    start = len(original.entries)
    reports = [o.report for o in outcomes]
    changed = False
    for m, o in zip(cf.methods, outcomes):
        attr = m.code_attribute()
        if o.code is None or attr is None:
            continue
        private = original.copy()
        private.entries.extend(o.added)
        pool = cf.pool.copy()  # committed only when the whole method renumbers: no stray entries otherwise
        try:
            mapping = merge_entries(pool, private, start)
            same = all(mapping[i] == i for i in range(start, len(mapping)))
            code = o.code if same else renumber_code(cf.name, m, o.code, private, mapping, pool)
        except (ClassFileError, UnsupportedCodeError, IndexError, KeyError) as e:
            r = o.report
            r.status, r.reason, r.bytes_after = "fallback", f"constant pool merge: {e}", r.bytes_before
            r.cost_after, r.emitted_cost_after, r.debug_dropped = r.cost_before, r.emitted_cost_before, None
            continue
        cf.pool = pool
        attr.data = code
        o.report.bytes_after = _code_length(code)
        changed = True
    if changed:
        try:
            data = write_class(cf)
        except ClassFileError as e:  # e.g. the pool overflowed with frame classes: keep the class as it was
            for r in reports:
                if r.status == "rewritten":
                    r.status, r.reason, r.bytes_after = "fallback", f"class not writable: {e}", r.bytes_before
                    r.cost_after, r.emitted_cost_after = r.cost_before, r.emitted_cost_before
                    r.debug_dropped = None
    if goal is Goal.SIZE:
        data = _pool_for_ldc(data, reports)
    return data, reports


#: the start of the reason of a rewrite the input size budget withdrew (:func:`_within_budget`)
BUDGET_REASON = "input size budget"


def _within_budget(classes: dict[int, tuple[bytes, list[MethodOutcome]]]
                   ) -> dict[int, tuple[bytes, list[MethodReport]]]:
    """``--goal speed``'s input size budget (``--size-budget input``, docs/cost-model.md): every class of the
    run (entry index -> its bytes and every method's outcome) merged (:func:`merge_class`); while the rewritten
    methods' code together is larger than their originals', the rewrites :func:`peggy_jvm.sizebudget.choose`
    picks (the least predicted gain lost, exactly; ties by class, method and descriptor) keep their original
    code (``unchanged``, reason ``input size budget: ...``) and their classes are merged again without them.
    The figures are the merged code's (an ``ldc`` renumbered past 255 is an ``ldc_w``), so the rule holds of
    the bytes written; a class merged again has fewer pool entries, and should one of its rewrites grow by
    that renumbering the loop withdraws again. Returns entry index -> class bytes and report rows."""
    merged = {k: merge_class(data, outcomes, Goal.SPEED) for k, (data, outcomes) in sorted(classes.items())}
    while True:
        kept = [(k, r) for k in sorted(merged) for r in merged[k][1] if r.status == "rewritten"]
        choice = choose([Rewrite((r.class_name, r.name, r.descriptor), r.bytes_before, r.bytes_after,
                                 (r.emitted_cost_before or 0) - (r.emitted_cost_after or 0)) for _, r in kept])
        if not choice.withdrawn:
            return merged
        again: set[int] = set()
        for i in choice.withdrawn:
            k, r = kept[i]
            gain = (r.emitted_cost_before or 0) - (r.emitted_cost_after or 0)
            r.status = "unchanged"
            r.reason = (f"{BUDGET_REASON}: +{r.bytes_after - r.bytes_before} bytes over, gain {gain} withdrawn "
                        f"(the run's rewrites were {choice.excess} bytes over their originals)")
            r.bytes_after, r.cost_after, r.emitted_cost_after = r.bytes_before, r.cost_before, r.emitted_cost_before
            r.debug_dropped = None
            again.add(k)
        for k in sorted(again):
            data, outcomes = classes[k]
            # a row no longer rewritten (withdrawn, or fallen back in the first merge) keeps its original code
            merged[k] = merge_class(data, [MethodOutcome(o.report, o.code if o.report.status == "rewritten" else None,
                                                         o.added) for o in outcomes], Goal.SPEED)


def optimize_class(data: bytes, hierarchy: ClassHierarchy, stage: Stage,
                   method_timeout: float | None = DEFAULT_METHOD_TIMEOUT, work: WorkBudget = DEFAULT_WORK_BUDGET,
                   goal: Goal = Goal.SPEED, rules: RuleOptions | None = None, program: dict[str, bytes] | None = None
                   ) -> tuple[bytes, list[MethodReport]]:
    """Run every method of one class through ``stage`` (the full stage for ``goal``, with the user's
    ``rules``; ``program``: the input's classes by name, whose small methods the full stage may inline, the
    class's own always); returns the new class bytes and the reports: :func:`optimize_methods` of all its
    methods, then :func:`merge_class`.
    ``method_timeout``: the safety net per method (seconds; None: none); ``work``: the full stage's limits.

    Raises ClassFileError when the class itself is malformed (the caller reports bad input).
    """
    return merge_class(data, optimize_methods(data, hierarchy, stage, method_timeout, work, goal, rules, program),
                       goal)


def _pool_for_ldc(data: bytes, reports: list[MethodReport]) -> bytes:
    """``--goal size``: the class with its constant pool renumbered so that ``ldc`` reaches the constants it
    loads most (classfile/poolorder.py); every row's ``bytes_after`` becomes its method's code as written."""
    new = reorder_for_ldc(data)
    if new is not data:
        lengths = {(m.name, m.descriptor): _code_length(a.data) for m in read_class(new).methods
                   if (a := m.code_attribute()) is not None}
        for r in reports:
            r.bytes_after = lengths.get((r.name, r.descriptor), r.bytes_after)
    return new


# -- whole inputs -------------------------------------------------------------------------------------------
_worker_state: dict = {}

#: seconds between the pool loop's progress calls while no class finishes
PROGRESS_TICK = 1.0


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a run is: classes finished of all, their methods, how many were rewritten, and the class bytes
    finished of all (the measure of the time still to go: a class's size predicts its work better than one)."""

    classes_done: int
    classes: int
    methods: int
    rewritten: int
    bytes_done: int
    bytes_total: int


class _Tally:
    """The running :class:`Progress` of one input (a split class counts as done when its last part is)."""

    def __init__(self, work: list[tuple[int, str, bytes]]) -> None:
        self.classes, self.bytes_total = len(work), sum(len(item[2]) for item in work)
        self.classes_done = self.methods = self.rewritten = self.bytes_done = 0

    def add(self, weight: int, reports: list[MethodReport], class_done: bool = True) -> None:
        self.classes_done += class_done
        self.bytes_done += weight
        self.methods += len(reports)
        self.rewritten += sum(1 for r in reports if r.status == "rewritten")

    def now(self) -> Progress:
        return Progress(self.classes_done, self.classes, self.methods, self.rewritten, self.bytes_done,
                        self.bytes_total)


#: a class of more bytes than this is split into tasks of parts of about this many bytes (by its methods' code
#: bytes, the predictor of their work): one huge class no longer bounds the parallelism of ``--jobs`` or Dask.
#: The parts change nothing in the output (:func:`optimize_methods`); they are the cache's unit (its keys), and
#: the same for every job count and executor
SPLIT_BYTES = 8192


class Task(NamedTuple):
    """One task of a run on workers: the input entry number ``entry`` (its name ``where``, its bytes ``data``), whole
    (``part`` None) or the methods ``part = (lo, hi)`` of it; ``weight``: its predicted work in class bytes
    (a part's share of its class's by code bytes), the order :func:`~peggy_jvm.workers.largest_first` gives."""
    entry: int
    where: str
    data: bytes
    part: tuple[int, int] | None
    weight: int


def _tasks(work: list[tuple[int, str, bytes]], split_bytes: int | None, outcomes: bool = False) -> list[Task]:
    """``work``'s classes as tasks: each class of more than ``split_bytes`` bytes (None: none) as contiguous
    ranges of its methods of about ``split_bytes`` each by code bytes, the others whole; with ``outcomes`` (the
    input size budget: every class merged in the main process, :class:`_Collector`) a whole class as the one
    part of all its methods (a class that does not parse stays whole: its one task reports it)."""
    tasks: list[Task] = []
    for k, where, data in work:
        ranges = _method_ranges(data, split_bytes) if split_bytes and len(data) > split_bytes else []
        if len(ranges) < 2:
            count = _method_count(data) if outcomes else None
            tasks.append(Task(k, where, data, None if count is None else (0, count), len(data)))
            continue
        total = sum(w for _, _, w in ranges)
        given = 0
        for n, (lo, hi, w) in enumerate(ranges):
            share = len(data) - given if n == len(ranges) - 1 else len(data) * w // total
            given += share
            tasks.append(Task(k, where, data, (lo, hi), share))
    return tasks


def _method_count(data: bytes) -> int | None:
    """How many methods the class has; None when it does not parse."""
    try:
        return len(read_class(data).methods)
    except ClassFileError:
        return None


def _method_ranges(data: bytes, split_bytes: int) -> list[tuple[int, int, int]]:
    """Contiguous ranges ``(lo, hi, code bytes)`` of the class's methods, each about ``split_bytes`` of the
    class's bytes by its share of the code (a method is never cut; a method with no code counts one byte); []
    for a class that does not parse (its one task reports it)."""
    try:
        cf = read_class(data)
    except ClassFileError:
        return []
    sizes = [1 + (_code_length(a.data) if (a := m.code_attribute()) is not None else 0) for m in cf.methods]
    target = sum(sizes) * split_bytes / len(data)
    ranges: list[tuple[int, int, int]] = []
    lo = acc = 0
    for j, size in enumerate(sizes):
        if acc and acc + size / 2 > target:
            ranges.append((lo, j, acc))
            lo, acc = j, 0
        acc += size
    if acc:
        ranges.append((lo, len(sizes), acc))
    return ranges


#: the modules the full stage imports on its first method (the rules, saturation, the triage, extraction and its
#: solver, the self-check): :func:`_prepare` imports them before the tasks
FULL_STAGE_MODULES = ("peggy_jvm.rules.policy", "peggy_jvm.saturate", "peggy_jvm.triage",
                      "peggy_jvm.pegextract.select", "peggy_jvm.extract.maxsat", "peggy_jvm.validate.selfcheck")


def _prepare(stage: Stage, rules: RuleOptions | None) -> None:
    """What every process running ``stage``'s tasks needs, whatever the tasks: the stage's modules imported and
    the rules parsed and compiled (cached per process). Called in the main process before the local workers
    are forked, so that they inherit it instead of each importing and compiling again (about 0.15 CPU-s a
    worker with bytecode files, 0.5 without), and by each worker's initializer, where it then costs nothing (a Dask
    worker, spawned, does it once per process); outside any method's safety net either way."""
    if stage is not Stage.FULL:
        return
    for name in FULL_STAGE_MODULES:
        importlib.import_module(name)
    from .rules.policy import optimizer_rules, proof_rules
    optimizer_rules(rules)
    proof_rules(rules)  # the self-check's


def _init_worker(classpath: list[Path], input_classes: dict[str, bytes], stage: Stage, timeout: float | None,
                 goal: Goal = Goal.SPEED, rules: RuleOptions | None = None, cache: ResultCache | None = None,
                 program: dict[str, bytes] | None = None) -> None:
    """``input_classes``: every class of the input, for the hierarchy; ``program``: those the full stage may
    inline from (:func:`inlinable_classes`; None: all of ``input_classes``)."""
    h = ClassHierarchy(classpath)
    h.add_lazy_classes(input_classes)
    _worker_state.update(hierarchy=h, stage=stage, timeout=timeout, goal=goal, rules=rules,
                         program=input_classes if program is None else program, cache=cache)
    # parse and compile the rules now (nothing when the main process did before forking), rather than within the
    # first method's safety net
    _prepare(stage, rules)


def classes_by_name(inp: InputSet) -> dict[str, bytes]:
    """The input's classes by the name their paths imply (what the class hierarchy looks up lazily)."""
    return {_implied_class_name(e.name): e.data for e in inp.entries if e.is_class}


def inlinable_classes(inp: InputSet) -> dict[str, bytes]:
    """The input's classes whose code one JVM of any version runs, by name: what the full stage may inline from.
    A multi-release jar's class with a ``META-INF/versions/N/`` entry that differs from its base entry, or with
    no base entry, runs different code (or none) depending on the JVM's version, so no body of it may be copied
    into a caller: it is left out (its calls stay calls). The class hierarchy still sees every class
    (:func:`classes_by_name`)."""
    base: dict[str, bytes] = {}
    versioned: dict[str, list[bytes]] = {}
    for e in inp.entries:
        if not e.is_class:
            continue
        name = _implied_class_name(e.name)
        if e.name.startswith("META-INF/versions/"):
            versioned.setdefault(name, []).append(e.data)
        else:
            base[name] = e.data
    return {n: d for n, d in base.items() if all(v == d for v in versioned.get(n, ()))}


def _implied_class_name(entry_name: str) -> str:
    """``a/b/C.class`` -> ``a/b/C``; multi-release ``META-INF/versions/N/a/b/C.class`` -> ``a/b/C``."""
    name = entry_name[:-len(".class")]
    if name.startswith("META-INF/versions/"):
        name = name.split("/", 3)[3] if name.count("/") >= 3 else name
    return name


#: a task's result: its entry's index, the class bytes (a part: its outcomes' code, :func:`encode_part`) and
#: the report rows, or ``(where, message)`` for a malformed class
_Result = tuple[int, bytes | None, "list[MethodReport] | tuple[str, str]"]


def _work(item: Task) -> _Result:
    """One class, or part of one (a :class:`Task` with a ``part``), in a worker; a malformed class comes back as
    ``(where, message)`` instead of reports."""
    index, where, data, part = item[:4]
    st = _worker_state

    def compute(program: dict[str, bytes] | None) -> tuple[bytes, list[MethodReport]]:
        if part is None:
            return optimize_class(data, st["hierarchy"], st["stage"], st["timeout"], goal=st["goal"],
                                  rules=st["rules"], program=program)
        return encode_part(optimize_methods(data, st["hierarchy"], st["stage"], st["timeout"], goal=st["goal"],
                                            rules=st["rules"], program=program, methods=range(*part)))
    try:
        out, reports = optimize_class_cached(
            st["cache"], data, st["hierarchy"], st["stage"], DEFAULT_WORK_BUDGET, st["goal"], st["rules"],
            st["program"], compute, part=part)
    except ClassFileError as e:
        return index, None, (where, str(e))
    return index, out, reports


def encode_part(outcomes: list[MethodOutcome]) -> tuple[bytes, list[MethodReport]]:
    """A part's outcomes as bytes (each method's new code and added pool entries, JSON: what the result cache
    stores and a worker sends) and its report rows; :func:`decode_part` is the inverse."""
    body: list[list[object]] = [[None, []] if o.code is None else [o.code.hex(), o.added] for o in outcomes]
    return json.dumps(body, separators=(",", ":")).encode(), [o.report for o in outcomes]


def decode_part(blob: bytes, reports: list[MethodReport]) -> list[MethodOutcome]:
    """:func:`encode_part`'s outcomes again (JSON lists back to the pool's entry tuples)."""
    body = json.loads(blob)
    if len(body) != len(reports):
        raise ValueError("a part's code and report rows do not match")
    return [MethodOutcome(r, None if code is None else bytes.fromhex(code),
                          [None if e is None else tuple(e) for e in added])
            for r, (code, added) in zip(reports, body)]


class _Collector:
    """The results of one run's tasks as they come, in any order: a whole class's kept, a split class's parts
    held until its last one is in and then merged in method order (:func:`merge_class`), so that the output
    does not depend on which task finished when; the running :class:`Progress` given to ``progress``.

    With ``budget`` (the input size budget, :func:`_within_budget`) every class comes as parts (:func:`_tasks`
    with ``outcomes``) and none is merged before :meth:`finish`, when every method of the run is in: the
    budget then withdraws rewrites, and each class is merged with what it keeps."""

    def __init__(self, work: list[tuple[int, str, bytes]], tasks: list[Task], goal: Goal,
                 results: dict[int, tuple[bytes | None, list[MethodReport] | tuple[str, str]]],
                 progress: Callable[[Progress], None] | None, budget: bool = False) -> None:
        self.tally, self.goal, self.results, self.progress = _Tally(work), goal, results, progress
        self.missing: dict[int, int] = {}
        for t in tasks:
            self.missing[t.entry] = self.missing.get(t.entry, 0) + 1
        self.parts: dict[int, dict[int, tuple[bytes, list[MethodReport]]]] = {}
        self.budget = budget
        #: with ``budget``: each finished class's bytes and outcomes, merged by :meth:`finish`
        self.outcomes: dict[int, tuple[bytes, list[MethodOutcome]]] = {}

    def record(self, item: Task, res: _Result) -> bool:
        """Keep one task's result; True when it was bad input (the run ends)."""
        k, out, reps = res
        if isinstance(reps, tuple):
            self.results[k] = (out, reps)
            return True
        self.missing[k] -= 1
        if item.part is None:
            self.results[k] = (out, reps)
        else:
            assert out is not None  # a part's outcomes (encode_part)
            got = self.parts.setdefault(k, {})
            got[item.part[0]] = (out, reps)
            if not self.missing[k]:
                outcomes = [o for lo in sorted(got) for o in decode_part(*got[lo])]
                if self.budget:
                    self.outcomes[k] = (item.data, outcomes)
                else:
                    self.results[k] = merge_class(item.data, outcomes, self.goal)
                del self.parts[k]
        self.tally.add(item.weight, reps, class_done=not self.missing[k])
        self.tick()
        return False

    def tick(self) -> None:
        if self.progress:
            self.progress(self.tally.now())

    def finish(self) -> None:
        """With ``budget``, once every task is in: the classes merged within the input size budget
        (:func:`_within_budget`) into ``results``. Nothing after bad input (the run ends with its error)."""
        if self.budget and not any(isinstance(r[1], tuple) for r in self.results.values()):
            self.results.update(_within_budget(self.outcomes))


def _run_pool(tasks: list[Task], jobs: int, init_args: tuple, collector: _Collector,
              scheduler: str | None = None) -> None:
    """``tasks`` (:func:`_tasks`: a class each, or a part of its methods for a class of more than
    :data:`SPLIT_BYTES`; a task takes milliseconds to seconds, far more than sending its bytes) on ``jobs`` worker
    processes (:func:`peggy_jvm.workers.run_pool`) or on the Dask cluster at ``scheduler``
    (:func:`peggy_jvm.dask_executor.run_dask`), the largest first, each result to ``collector`` (which stops
    the run at the first bad class); a class or part whose worker died is kept as it was
    (:func:`_unprocessed`)."""
    # the largest tasks first (a class's bytes predict its work): no worker idles at the end
    ordered = largest_first(tasks, lambda t: t.weight)
    if scheduler is not None:
        from .dask_executor import run_dask  # Dask is an optional extra: imported only when asked for
        run_dask(ordered, scheduler, _work, _init_worker, init_args, collector.record, _unprocessed,
                 collector.tick, PROGRESS_TICK)
    else:
        run_pool(ordered, jobs, _work, _init_worker, init_args, collector.record, _unprocessed, collector.tick,
                 PROGRESS_TICK)


def _unprocessed(item: Task, why: str) -> _Result:
    """A class (or part) no worker could finish: written back as it was, every method with code a ``fallback``."""
    index, where, data, part = item[:4]
    try:
        cf = read_class(data)
    except ClassFileError as e:
        return index, None, (where, str(e))
    methods = cf.methods if part is None else cf.methods[part[0]:part[1]]
    reports = [MethodReport(cf.name, m.name, m.descriptor, "fallback", why, bytes_before=_code_length(a.data),
                            bytes_after=_code_length(a.data))
               if (a := m.code_attribute()) is not None else
               MethodReport(cf.name, m.name, m.descriptor, "unchanged", "no code (abstract or native)")
               for m in methods]
    if part is not None:
        return (index, *encode_part([MethodOutcome(r) for r in reports]))
    return index, data, reports


def optimize_input(input_path: Path, output: Path | None, stage: Stage, classpath: list[Path] | None = None,
                   jobs: int = 1, method_timeout: float | None = DEFAULT_METHOD_TIMEOUT,
                   progress: Callable[[Progress], None] | None = None,
                   reports: Sequence[Output] = (), goal: Goal = Goal.SPEED,
                   rules: RuleOptions | None = None, cache: ResultCache | None = None,
                   scheduler: str | None = None, split_bytes: int | None = SPLIT_BYTES,
                   size_budget: SizeBudget = SizeBudget.INPUT) -> tuple[Path, RunReport]:
    """Optimize a class, jar or directory and write the result (the full stage aiming at ``goal``, with the
    user's ``rules``, already checked by the caller: a loading error here is raised in a worker); returns the
    output path and the report. ``method_timeout``: the wall-clock safety net per method (seconds; None: none).

    ``reports`` are the files the caller writes afterwards: they are checked with the output itself
    (:func:`~peggy_jvm.archive.check_outputs`) before any work, so that a bad one fails the run early.
    ``cache``: the result cache (:mod:`peggy_jvm.cache`) each class is looked up in first; None: none.
    ``scheduler``: a Dask scheduler's address: the classes run on that cluster instead (``jobs`` is then
    unused; :mod:`peggy_jvm.dask_executor`), with the same output. ``split_bytes``: a class of more bytes is
    split into tasks of parts of its methods (:data:`SPLIT_BYTES`; None: never), with the same output.
    ``size_budget``: the full stage under ``--goal speed`` holds the rewritten methods of the whole input
    (``input``: :func:`_within_budget`, after every method is done) or each method alone (``method``) to their
    originals' bytes."""
    started = time.perf_counter()
    inp: InputSet = read_input(input_path)
    target = resolve_output(inp.kind, inp.path, output)
    check_outputs([inp.path], [Output(target, output_form(inp.kind)), *reports])
    class_entries = [k for k, e in enumerate(inp.entries) if e.is_class]
    input_classes = classes_by_name(inp)
    program = inlinable_classes(inp)
    work = [(k, inp.describe(inp.entries[k]), inp.entries[k].data) for k in class_entries]
    budgeted = stage is Stage.FULL and goal is Goal.SPEED
    report = RunReport(stage.value, classes=len(work), goal=goal.value,
                       size_budget=size_budget.value if budgeted else None)
    budgeted = budgeted and size_budget is SizeBudget.INPUT
    results: dict[int, tuple[bytes | None, list[MethodReport] | tuple[str, str]]] = {}
    cp = list(classpath or [])
    # the same tasks whatever runs them (so the cache's entries are shared by every --jobs and executor)
    tasks = _tasks(work, split_bytes, outcomes=budgeted)
    collector = _Collector(work, tasks, goal, results, progress, budget=budgeted)
    pooled = scheduler is not None or (jobs > 1 and len(tasks) > 1)
    if scheduler is None:  # the local workers are forked from this process: they inherit what it prepared
        _prepare(stage, rules)
    with heap_frozen():
        if pooled:
            _run_pool(tasks, jobs, (cp, input_classes, stage, method_timeout, goal, rules, cache, program),
                      collector, scheduler)
        else:
            _init_worker(cp, input_classes, stage, method_timeout, goal, rules, cache, program)
            for task in tasks:
                if collector.record(task, _work(task)):
                    break
    collector.finish()
    new_entries: list[Entry] = []
    for k, e in enumerate(inp.entries):
        if k in results:
            out, reps = results[k]
            if isinstance(reps, tuple):
                raise InputError(*reps)
            report.methods.extend(reps)
            new_entries.append(Entry(e.name, out if out is not None else e.data, e.zinfo))
        else:
            new_entries.append(e)
    report.warnings.extend(write_output(inp, target, new_entries))
    if cache is not None:
        hits = sum(1 for m in report.methods if "cache" in m.time_ms)  # the workers' hits are seen only here
        report.cache = {"dir": str(cache.root), "methods_cached": hits, "evicted": cache.evict()}
    report.seconds = time.perf_counter() - started
    report.peak_memory_mib = peak_memory_mib(workers=pooled and scheduler is None)
    return target, report


def peak_memory_mib(workers: bool) -> dict[str, float | None]:
    """The peak resident set of this process and (``workers``) of the largest child process it has waited for,
    in MiB: the pool's workers are all reaped when :func:`~peggy_jvm.workers.run_pool` returns. (A child of
    an earlier run in the same process counts too: the kernel keeps one maximum.)"""
    import resource
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB on Linux

    def mib(who: int) -> float:
        return round(resource.getrusage(who).ru_maxrss * unit / 2**20, 1)
    return {"main": mib(resource.RUSAGE_SELF), "workers": mib(resource.RUSAGE_CHILDREN) if workers else None}
