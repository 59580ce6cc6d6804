"""The per-method driver and the whole-input orchestration of ``peggy-jvm optimize``.

Owns: :class:`Stage`, :class:`MethodReport`, :class:`RunReport`, :func:`optimize_class` (one class, every
method through the chosen stage, each with its own fallback) and :func:`optimize_input` (a class, jar or
directory, optionally on several processes).

Inputs: class-file bytes, the class-hierarchy sources (the input's own classes, ``--classpath``, the JDK), the
stage, the work budget, the per-method safety net and the goal. Outputs: new class bytes and one report row per
method.

The full stage's decision (``_check_emitted``, docs/cost-model.md): after lowering, the original and the
emitted code are priced by :mod:`peggy_jvm.codecost`; ``--goal speed`` keeps the rewrite only if its emitted
cost is strictly lower and its size grows by no more than its relative cost gain (``size_allowance``), ``--goal size`` only if its
size is strictly smaller and its emitted cost no higher; otherwise the method is ``unchanged`` with both
figures in the reason (before the self-check, which is then not needed).

Budgets (peggy_jvm/budget.py): the full stage's sub-stages are bounded by work (:class:`WorkBudget`), never by
the clock, so the output depends on the input and options only. ``--method-timeout`` is a wall-clock safety net
per method (:class:`SafetyNet`, default :data:`DEFAULT_METHOD_TIMEOUT`): checked between the sub-stages and at
the end, and interrupting saturation + extraction by an alarm; when it fires the method keeps its original bytes
(status ``fallback``, reason ``timeout: ...``), even one that was to stay unchanged.

Worker processes (``--jobs N``): a :class:`concurrent.futures.ProcessPoolExecutor` over ``fork``, whose workers
are not daemonic (a ``multiprocessing.Pool``'s are), so a stage may still start processes of its own there. A
worker that dies (killed, out of memory) leaves its classes as they were: every method of them ``fallback``.
Which worker takes which class changes nothing in the output: each method's result is a function of its class,
the hierarchy and the options.

Stopping (:mod:`peggy_jvm.interrupt`): each worker leads its own process group, which any process it
starts joins, ignores SIGINT (a Ctrl-C at the terminal reaches the main process alone, which decides) and takes its
group down with it on SIGTERM, which it also gets when the main process dies (Linux: parent-death signal), so
no worker outlives the run. Any exception in the main process while the pool runs (an
:class:`~peggy_jvm.interrupt.Interrupted`, a KeyboardInterrupt) kills every worker's group at once instead of
waiting for the classes in flight; the caller's ``finally`` blocks then remove temporaries and nothing is
written. Ctrl-Z (SIGTSTP to the main process) stops the workers' groups too, and they go on when the main
process does (:class:`_JobControl`).

Progress: the caller's ``progress`` gets a :class:`Progress` when a class finishes and, with worker processes,
about every :data:`PROGRESS_TICK` seconds while classes run (so a time-paced display never waits for a slow
class).

Invariants (the safety net of DESIGN section 6):
- a method whose stage raises, or overruns its safety net, keeps its original bytes (status ``fallback`` with the
  reason); a method without code is ``unchanged``;
- a class none of whose methods changed is written back byte-identical;
- bad input (a malformed class) is an :class:`~peggy_jvm.archive.InputError`, never a partial output.
"""
from __future__ import annotations

import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from . import interrupt
from .archive import (Entry, InputError, InputSet, Output, check_outputs, output_form, read_input, resolve_output,
                      write_output)
from .classfile.errors import ClassFileError
from .classfile.hierarchy import ClassHierarchy
from .classfile.model import CodeAttribute
from .classfile.reader import read_class
from .classfile.attributes import LineNumberTable, LocalVariableTable
from .classfile.bytecode import Instruction
from .classfile.model import Attribute, ClassFile, MethodInfo
from .classfile.recode import RecodeResult, recode_method
from .ir.lift import lift_method
from .ir.lower import lower_method
from .peg.build import PegUnsupported, build_peg
from .peg.check import check_peg
from .peg.graph import PEG as PegGraph  # Stage.PEG is the stage's name here
from .revert.revert import RevertUnsupported, revert_peg
from .rules.inline import CalleeSource, inlinable_call_count
from .budget import DEFAULT_METHOD_TIMEOUT, DEFAULT_WORK_BUDGET, MethodTimeout, SafetyNet, WorkBudget, alarm
from .classfile.writer import write_class
from .codecost import EmittedCost, Goal, price_code

if TYPE_CHECKING:  # the solver stack is imported only by the stage that needs it
    from .extract.select import ExtractReport, RuleOptions, Saturation


class Stage(str, Enum):
    CLASSFILE = "classfile"
    IR = "ir"
    PEG = "peg"
    FULL = "full"


IMPLEMENTED_STAGES = (Stage.CLASSFILE, Stage.IR, Stage.PEG, Stage.FULL)

class MethodUnchanged(Exception):
    """A stage leaves this method as it is, for a reason that is not a failure (e.g. irreducible control flow,
    exception handlers the reverter does not handle yet)."""


#: ``--goal speed`` keeps a rewrite whose emitted code (codecost.py) is strictly cheaper and grows by at most
#: ``BYTES_PER_COST`` times its relative cost gain, never more than ``MAX_GROWTH`` (docs/cost-model.md): a
#: hoisted invariant needs a local (a store and a load, 2-4 bytes) and pays for it only by running faster, so
#: one percent of emitted cost buys one percent of code; a rewrite that saves nothing buys nothing
BYTES_PER_COST, MAX_GROWTH = 1.0, 0.25


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
    #: the full stage's extraction status ("optimal (proved)", "best found", "greedy", "original"); None when
    #: the method did not get that far or another stage ran
    extraction: str | None = None
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


@dataclass(slots=True)
class RunReport:
    stage: str
    methods: list[MethodReport] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    classes: int = 0
    seconds: float = 0.0
    goal: str = Goal.SPEED.value

    def summary(self) -> dict:
        counts = {"rewritten": 0, "unchanged": 0, "fallback": 0}
        for m in self.methods:
            counts[m.status] += 1
        rewritten = [m for m in self.methods if m.status == "rewritten"]
        return {"classes": self.classes, "methods": len(self.methods), **counts,
                "bytes_before": sum(m.bytes_before for m in self.methods),
                "bytes_after": sum(m.bytes_after for m in self.methods),
                # over the rewritten methods only: what the rewrites changed
                "rewritten_bytes_before": sum(m.bytes_before for m in rewritten),
                "rewritten_bytes_after": sum(m.bytes_after for m in rewritten),
                "emitted_cost_before": sum(m.emitted_cost_before or 0 for m in rewritten),
                "emitted_cost_after": sum(m.emitted_cost_after or 0 for m in rewritten),
                "inlined": sum(m.inlined or 0 for m in rewritten),
                "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        return {"stage": self.stage, "goal": self.goal, "methods": [m.to_json() for m in self.methods],
                "summary": self.summary(), "warnings": self.warnings}


def _code_length(data: bytes) -> int:
    return int.from_bytes(data[4:8], "big")


def revertible(ir) -> Callable[[PegGraph], str | None]:
    """The full stage's acceptance test of a candidate PEG (``extract_peg``'s ``accept``; ``show --extracted``
    uses it too): a selection the reverter cannot schedule is blocked, so the next cheapest is tried instead of
    keeping the original code."""
    def accept(candidate: PegGraph) -> str | None:
        try:
            revert_peg(candidate, ir)
        except (PegUnsupported, RevertUnsupported) as e:
            return str(e)
        return None
    return accept


def _extract(peg: PegGraph, ir, rewrites: list, work: WorkBudget, goal: Goal,
             on_saturated: Callable[[Saturation], None] | None = None, callees: CalleeSource | None = None
             ) -> tuple[PegGraph, ExtractReport]:
    """The full stage's saturation and extraction call: one place for :func:`_full` and
    :func:`full_stage_view`, so that what people are shown is what the optimizer did."""
    from .extract.select import extract_peg
    return extract_peg(peg, rewrites, limits=work.saturation(), work=work.solver_work, accept=revertible(ir),
                       goal=goal, on_saturated=on_saturated, callees=callees)


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
    lifted method ``ir``: the calls :func:`_full` makes, without the safety net (``callees``: as the full
    stage passes them, the methods of the method's own class). Raises PegUnsupported."""
    from .extract.select import optimizer_rules, saturate
    peg = build_peg(ir)
    check_peg(peg)
    rewrites = optimizer_rules(rules)
    if not extract:
        return FullStageView(peg, saturate(peg, rewrites, work.saturation(), callees))
    seen: list[Saturation] = []
    new, rep = _extract(peg, ir, rewrites, work, goal, seen.append, callees)
    return FullStageView(peg, seen[0] if seen else None, rep, None if new is peg else new)


def _full(ir, net: SafetyNet, work: WorkBudget, info: dict, goal: Goal = Goal.SPEED,
          rules: RuleOptions | None = None, callees: CalleeSource | None = None):
    """``--stage full`` between lifting and lowering: build, check, saturate and extract (the safe rule groups
    of :mod:`peggy_jvm.extract.select` with the user's ``rules``, within ``work``, priced for ``goal``), check
    again, revert. A PEG that is not strictly cheaper leaves the method unchanged (no churn for nothing)."""
    from .extract.select import optimizer_rules  # the solver stack: only for the stage that needs it
    times: dict[str, float] = info.setdefault("time_ms", {})
    # the rules are parsed and compiled once per process (cached): outside the alarm below, so that a safety
    # net shorter than that one-time cost does not interrupt it, and every later method with it
    rewrites = optimizer_rules(rules)
    try:
        peg = build_peg(ir)
        check_peg(peg)
        times["full.prepare"] = round(net.spent() * 1000, 3)
        net.check("saturation")

        # parts of extraction read no clock at all (the phi-profile checker can take seconds on one candidate):
        # the safety net interrupts them
        with alarm(net, "saturation and extraction"):
            new, rep = _extract(peg, ir, rewrites, work, goal, callees=callees)
        info.update(cost_before=rep.cost_before, cost_after=rep.cost_after, extraction=rep.status,
                    epeg_nodes=rep.epeg_nodes, epeg_classes=rep.epeg_classes)
        times.update({f"full.{k}": round(v, 3) for k, v in rep.time_ms.items()})
        if new is peg:
            raise MethodUnchanged(f"no cheaper PEG ({rep.notes[-1] if rep.notes else rep.status})")
        if callees is not None:
            info["inlined"] = inlinable_call_count(peg, callees) - inlinable_call_count(new, callees)
        net.check("reverting")
        check_peg(new)
        return revert_peg(new, ir)
    except (PegUnsupported, RevertUnsupported) as e:
        raise MethodUnchanged(str(e)) from None


def _check_emitted(goal: Goal, before: EmittedCost, after: EmittedCost) -> None:
    """Keep the original code unless the emitted rewrite pays by the goal's rule (docs/cost-model.md): ``speed``:
    strictly cheaper and not larger than :func:`size_allowance` lets it be; ``size``: strictly smaller and not
    costlier."""
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


def _self_check(cf: ClassFile, m: MethodInfo, data: bytes, hierarchy: ClassHierarchy, work: WorkBudget,
                rules: RuleOptions | None = None, callees: CalleeSource | None = None) -> None:
    """DESIGN section 6, step 2: the emitted bytecode is lifted again and validated against the original method
    (both PEGs in one e-graph, saturated within ``work``'s proof limits (work, not time, since the verdict
    decides the output) with the default safe rules and only those of the user's ``rules`` that the soundness
    fuzzer finds sound, ``select.proof_rules``; the roots must meet). Not proved: the method keeps its original
    code."""
    from .extract.select import proof_rules
    from .validate.pairing import MethodPair
    from .validate.prove import prove_pair
    new_m = MethodInfo(m.access, m.name_index, m.descriptor_index,
                       [Attribute(a.name_index, a.name, data) if a.name == "Code" else a for a in m.attributes],
                       m.name, m.descriptor)
    pair = MethodPair(cf, cf, m, new_m)
    # the callees the full stage may have inlined, for both sides: the proof sees through the same bodies
    proof = prove_pair(pair, hierarchy, hierarchy, proof_rules(rules), work.proof(),
                       callees=None if callees is None else (callees, callees))
    if not proof.proved:
        raise MethodUnchanged(f"self-check: the emitted code is {proof.reason}")


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
    if stage is Stage.PEG:
        try:
            peg = build_peg(ir)
            check_peg(peg)
            ir = revert_peg(peg, ir)
        except (PegUnsupported, RevertUnsupported) as e:
            raise MethodUnchanged(str(e)) from None
    elif stage is Stage.FULL:
        ir = _full(ir, net, work, info, goal, rules, callees)
        t0 = time.perf_counter()
    lnt = next((a for a in code.attributes if a.name == "LineNumberTable"), None)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50_000))  # reverted code can nest expressions deeper than javac's
    try:
        data = lower_method(cf, m, ir, hierarchy, LineNumberTable.parse(lnt.data) if lnt is not None else None)
    finally:
        sys.setrecursionlimit(old)
    emitted = CodeAttribute.parse(data, cf.pool)
    if stage is Stage.FULL:
        times = info.setdefault("time_ms", {})
        times["full.lower"] = round((time.perf_counter() - t0) * 1000, 3)
        old_price, new_price = price_code(code), price_code(emitted)
        info.update(emitted_cost_before=old_price.cost, emitted_cost_after=new_price.cost)
        _check_emitted(goal, old_price, new_price)
        net.check("the self-check")
        t1 = time.perf_counter()
        try:
            _self_check(cf, m, data, hierarchy, work, rules, callees)
        finally:
            times["full.self_check"] = round((time.perf_counter() - t1) * 1000, 3)
    kept = {a.name for a in emitted.attributes}
    return RecodeResult(data, [a.name for a in code.attributes if a.name not in kept and a.name != "StackMapTable"])


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


def optimize_class(data: bytes, hierarchy: ClassHierarchy, stage: Stage,
                   method_timeout: float | None = DEFAULT_METHOD_TIMEOUT, work: WorkBudget = DEFAULT_WORK_BUDGET,
                   goal: Goal = Goal.SPEED, rules: RuleOptions | None = None, program: dict[str, bytes] | None = None
                   ) -> tuple[bytes, list[MethodReport]]:
    """Run every method of one class through ``stage`` (the full stage for ``goal``, with the user's
    ``rules``; ``program``: the input's classes by name, whose small methods the full stage may inline, the
    class's own always); returns the new class bytes and the reports.
    ``method_timeout``: the safety net per method (seconds; None: none); ``work``: the full stage's limits.

    Raises ClassFileError when the class itself is malformed (the caller reports bad input).
    """
    cf = read_class(data)
    reports: list[MethodReport] = []
    changed = False
    callee_pegs: dict = {}  # the callees' PEGs (rules/inline.py), built once for all the class's callers
    for m in cf.methods:
        attr = m.code_attribute()
        if attr is None:
            reports.append(MethodReport(cf.name, m.name, m.descriptor, "unchanged", "no code (abstract or native)"))
            continue
        before = _code_length(attr.data)
        start = time.perf_counter()
        try:  # a malformed Code attribute is bad input, not a fallback
            code = CodeAttribute.parse(attr.data, cf.pool)
            insns = code.instructions()
        except ClassFileError as e:
            raise ClassFileError(f"method {m.name}{m.descriptor}: {e}") from None
        info: dict = {}  # the full stage's costs, extraction status and sub-stage times
        net = SafetyNet(method_timeout, start=start)

        def row(status: str, reason: str, spent: float, after: int = before, cost_key: str = "cost_before"
                ) -> MethodReport:
            # the time reported is the time the safety net was checked against (never a later reading)
            return MethodReport(cf.name, m.name, m.descriptor, status, reason, bytes_before=before,
                                bytes_after=after, time_ms={stage.value: spent * 1000, **info.get("time_ms", {})},
                                cost_before=info.get("cost_before"), cost_after=info.get(cost_key),
                                extraction=info.get("extraction"),
                                emitted_cost_before=info.get("emitted_cost_before"),
                                emitted_cost_after=info.get(f"emitted_{cost_key}"),
                                epeg_nodes=info.get("epeg_nodes"), epeg_classes=info.get("epeg_classes"),
                                inlined=info.get("inlined"))
        try:
            callees = CalleeSource(cf, hierarchy, program, m.is_static, callee_pegs)
            result = _transform(stage, cf, m, code, insns, hierarchy, net, info, work, goal, rules, callees)
        except MethodTimeout as e:  # the net fired between two sub-stages, or inside saturation + extraction
            reports.append(row("fallback", f"timeout: {e}", time.perf_counter() - start))
            continue
        except MethodUnchanged as e:
            spent = time.perf_counter() - start
            if method_timeout is not None and spent > method_timeout:  # over the net: a timeout all the same
                reports.append(row("fallback", f"timeout: {spent * 1000:.0f} ms > {method_timeout:g} s, at the "
                                               f"end (and the method was to stay unchanged: {e})", spent))
            else:
                reports.append(row("unchanged", str(e), spent))
            continue
        except Exception as e:  # any failure of the stage keeps the original method
            reports.append(row("fallback", f"{type(e).__name__}: {e}", time.perf_counter() - start))
            continue
        spent = time.perf_counter() - start
        if method_timeout is not None and spent > method_timeout:
            # finished, but late (a sub-stage that cannot be interrupted ran long): the net is a promise
            reports.append(row("fallback", f"timeout: {spent * 1000:.0f} ms > {method_timeout:g} s, at the end",
                               spent))
            continue
        debug = debug_dropped(code, CodeAttribute.parse(result.data, cf.pool), cf.pool)
        attr.data = result.data
        changed = True
        reports.append(row("rewritten", _dropped_reason(result.dropped, debug), spent, _code_length(result.data),
                           "cost_after"))
        reports[-1].debug_dropped = debug
    if not changed:
        return data, reports
    try:
        return write_class(cf), reports
    except ClassFileError as e:  # e.g. the pool overflowed with frame classes: keep the class as it was
        for r in reports:
            if r.status == "rewritten":
                r.status, r.reason, r.bytes_after = "fallback", f"class not writable: {e}", r.bytes_before
                r.cost_after, r.emitted_cost_after = r.cost_before, r.emitted_cost_before
                r.debug_dropped = None
        return data, reports


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
    """The running :class:`Progress` of one input."""

    def __init__(self, work: list[tuple[int, str, bytes]]) -> None:
        self.classes, self.bytes_total = len(work), sum(len(item[2]) for item in work)
        self.classes_done = self.methods = self.rewritten = self.bytes_done = 0

    def add(self, data: bytes, reports: list[MethodReport]) -> None:
        self.classes_done += 1
        self.bytes_done += len(data)
        self.methods += len(reports)
        self.rewritten += sum(1 for r in reports if r.status == "rewritten")

    def now(self) -> Progress:
        return Progress(self.classes_done, self.classes, self.methods, self.rewritten, self.bytes_done,
                        self.bytes_total)


def _init_worker(classpath: list[Path], input_classes: dict[str, bytes], stage: Stage, timeout: float | None,
                 goal: Goal = Goal.SPEED, rules: RuleOptions | None = None) -> None:
    h = ClassHierarchy(classpath)
    h.add_lazy_classes(input_classes)
    _worker_state.update(hierarchy=h, stage=stage, timeout=timeout, goal=goal, rules=rules, program=input_classes)
    if stage is Stage.FULL:
        # parse and compile the rules now, once per process, rather than within the first method's safety net
        from .extract.select import optimizer_rules, proof_rules
        optimizer_rules(rules)
        proof_rules(rules)  # the self-check's


def _init_pool_worker(parent: int, *args: object) -> None:
    """A pool worker's start: its own process group and signal handling (module docstring, Stopping), then
    :func:`_init_worker`. The worker was forked with the signals blocked (:func:`interrupt.blocked`); they are
    taken again only once its own handlers are in place."""
    try:
        os.setpgid(0, 0)
    except OSError:  # the parent made it the leader already (both try: whichever comes first)
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    # outside the terminal's foreground group a write to the terminal (a warning) would stop the worker when
    # the terminal has `tostop` set; ignoring SIGTTOU lets the write through
    signal.signal(signal.SIGTTOU, signal.SIG_IGN)
    interrupt.die_with_parent(signal.SIGTERM, parent)  # a SIGTERM still blocked here comes at the unblock
    interrupt.unblock()
    _init_worker(*args)  # type: ignore[arg-type]


def _end_worker(*_: object) -> None:
    """SIGTERM in a worker: end its process group (itself and any process it started) at once."""
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpid(), signal.SIGKILL)
    os._exit(128 + signal.SIGTERM)


def _workers(pool: ProcessPoolExecutor) -> list[multiprocessing.process.BaseProcess]:
    """The pool's worker processes (``_processes``, pid -> Process: private, but stable since Python 3.2; with
    ``fork`` all of them are started by the first submit)."""
    return list((getattr(pool, "_processes", None) or {}).values())


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """Kill every worker's process group (the worker and any process it started) and reap the workers. A group
    id is the pid of the worker that leads it, which cannot be reused while the group has a member; a worker
    not yet leading its group is killed by its pid while it is known to be alive (not reaped)."""
    procs = _workers(pool)
    for proc in procs:
        alive = proc.exitcode is None
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        if alive:
            try:
                os.kill(proc.pid, signal.SIGKILL)
            except OSError:
                pass
    for proc in procs:
        proc.join(2)


class _JobControl:
    """While the pool runs: Ctrl-Z (SIGTSTP, which the terminal sends to the main process's group only) stops
    the workers' groups too, and they continue when the main process does (``fg``, ``bg``), as they would in
    one process group. Main thread only (signal handlers are set there); restores the old handler."""

    def __init__(self, pool: ProcessPoolExecutor) -> None:
        self.pool = pool
        self.old: object = None

    def __enter__(self) -> _JobControl:
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTSTP"):
            self.old = signal.signal(signal.SIGTSTP, self._stop)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.old is not None:
            signal.signal(signal.SIGTSTP, self.old)  # type: ignore[arg-type]

    def _signal_groups(self, signum: int) -> None:
        for proc in self._alive():
            try:
                os.killpg(proc.pid, signum)
            except OSError:
                pass

    def _alive(self) -> list[multiprocessing.process.BaseProcess]:
        return [p for p in _workers(self.pool) if p.exitcode is None]

    def _stop(self, _signum: int, _frame: object) -> None:
        self._signal_groups(signal.SIGSTOP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        try:
            os.kill(os.getpid(), signal.SIGTSTP)  # stops here until SIGCONT
        finally:
            signal.signal(signal.SIGTSTP, self._stop)
            self._signal_groups(signal.SIGCONT)


def classes_by_name(inp: InputSet) -> dict[str, bytes]:
    """The input's classes by the name their paths imply (what the class hierarchy looks up lazily)."""
    return {_implied_class_name(e.name): e.data for e in inp.entries if e.is_class}


def _implied_class_name(entry_name: str) -> str:
    """``a/b/C.class`` -> ``a/b/C``; multi-release ``META-INF/versions/N/a/b/C.class`` -> ``a/b/C``."""
    name = entry_name[:-len(".class")]
    if name.startswith("META-INF/versions/"):
        name = name.split("/", 3)[3] if name.count("/") >= 3 else name
    return name


_Result = tuple[int, bytes | None, "list[MethodReport] | tuple[str, str]"]


def _work(item: tuple[int, str, bytes]) -> _Result:
    """One class in a worker; a malformed class comes back as ``(where, message)`` instead of reports."""
    index, where, data = item
    try:
        out, reports = optimize_class(data, _worker_state["hierarchy"], _worker_state["stage"],
                                      _worker_state["timeout"], goal=_worker_state["goal"],
                                      rules=_worker_state["rules"], program=_worker_state["program"])
    except ClassFileError as e:
        return index, None, (where, str(e))
    return index, out, reports


def _run_pool(work: list[tuple[int, str, bytes]], jobs: int, init_args: tuple,
              results: dict[int, tuple[bytes | None, list[MethodReport] | tuple[str, str]]],
              progress: Callable[[Progress], None] | None) -> None:
    """The classes of ``work`` on ``jobs`` worker processes; fills ``results`` (stops at the first bad class).

    A ProcessPoolExecutor's workers are not daemonic (Python >= 3.9), unlike a multiprocessing.Pool's, so a
    stage may still start processes of its own there. One task per class (a class's methods take
    milliseconds to seconds, far more than sending its bytes), at most ``2 * jobs`` in flight, so that bad
    input stops the run after the classes already started rather than after the whole input. An exception
    here (an interruption) kills the workers' process groups instead of waiting for the classes in flight."""
    ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    pending = iter(work)
    tally = _Tally(work)

    def record(item: tuple[int, str, bytes], res: _Result) -> bool:
        """Keep one class's result; True when it was bad input (the run ends)."""
        k, out, reps = res
        results[k] = (out, reps)
        if isinstance(reps, tuple):
            return True
        tally.add(item[2], reps)
        if progress:
            progress(tally.now())
        return False

    pool = ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_pool_worker,
                               initargs=(os.getpid(), *init_args))
    running: dict[Future, tuple[int, str, bytes]] = {}

    def refill() -> bool:
        for item in pending:
            try:
                running[pool.submit(_work, item)] = item
            except BrokenProcessPool as e:  # no worker left to take it
                if record(item, _unprocessed(item, f"worker process died ({e})")):
                    return True
                continue
            if len(running) >= 2 * jobs:
                break
        return False

    try:
        with interrupt.blocked():  # the first submit forks the workers: none may run the parent's handlers
            stop = refill()
            for proc in _workers(pool):
                try:
                    os.setpgid(proc.pid, proc.pid)  # as the worker does itself: whichever runs first, no window
                except OSError:
                    pass
        with _JobControl(pool):
            while running and not stop:
                finished, _ = wait(running, timeout=PROGRESS_TICK, return_when=FIRST_COMPLETED)
                if not finished and progress:
                    progress(tally.now())
                for fut in finished:
                    item = running.pop(fut)
                    try:
                        res = fut.result()
                    except BrokenProcessPool as e:  # a worker died (killed, out of memory): keep its classes
                        res = _unprocessed(item, f"worker process died ({e})")
                    if record(item, res):
                        stop = True
                        break
                stop = stop or refill()
        for fut in running:  # bad input: the classes not started yet are never run
            fut.cancel()
    except BaseException:
        _kill_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _unprocessed(item: tuple[int, str, bytes], why: str) -> _Result:
    """A class no worker could finish: written back as it was, every method with code a ``fallback``."""
    index, where, data = item
    try:
        cf = read_class(data)
    except ClassFileError as e:
        return index, None, (where, str(e))
    return index, data, [MethodReport(cf.name, m.name, m.descriptor, "fallback", why,
                                      bytes_before=_code_length(a.data), bytes_after=_code_length(a.data))
                         if (a := m.code_attribute()) is not None else
                         MethodReport(cf.name, m.name, m.descriptor, "unchanged", "no code (abstract or native)")
                         for m in cf.methods]


def optimize_input(input_path: Path, output: Path | None, stage: Stage, classpath: list[Path] | None = None,
                   jobs: int = 1, method_timeout: float | None = DEFAULT_METHOD_TIMEOUT,
                   progress: Callable[[Progress], None] | None = None,
                   reports: Sequence[Output] = (), goal: Goal = Goal.SPEED,
                   rules: RuleOptions | None = None) -> tuple[Path, RunReport]:
    """Optimize a class, jar or directory and write the result (the full stage aiming at ``goal``, with the
    user's ``rules``, already checked by the caller: a loading error here is raised in a worker); returns the
    output path and the report. ``method_timeout``: the wall-clock safety net per method (seconds; None: none).

    ``reports`` are the files the caller writes afterwards: they are checked with the output itself
    (:func:`~peggy_jvm.archive.check_outputs`) before any work, so that a bad one fails the run early."""
    started = time.perf_counter()
    inp: InputSet = read_input(input_path)
    target = resolve_output(inp.kind, inp.path, output)
    check_outputs([inp.path], [Output(target, output_form(inp.kind)), *reports])
    class_entries = [k for k, e in enumerate(inp.entries) if e.is_class]
    input_classes = classes_by_name(inp)
    work = [(k, inp.describe(inp.entries[k]), inp.entries[k].data) for k in class_entries]
    report = RunReport(stage.value, classes=len(work), goal=goal.value)
    results: dict[int, tuple[bytes | None, list[MethodReport] | tuple[str, str]]] = {}
    cp = list(classpath or [])
    if jobs > 1 and len(work) > 1:
        _run_pool(work, jobs, (cp, input_classes, stage, method_timeout, goal, rules), results, progress)
    else:
        _init_worker(cp, input_classes, stage, method_timeout, goal, rules)
        tally = _Tally(work)
        for item in work:
            k, out, reps = _work(item)
            results[k] = (out, reps)
            if isinstance(reps, tuple):
                break
            tally.add(item[2], reps)
            if progress:
                progress(tally.now())
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
    report.seconds = time.perf_counter() - started
    return target, report

