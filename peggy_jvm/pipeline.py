"""The per-method driver and the whole-input orchestration of ``peggy-jvm optimize``.

Owns: :class:`Stage`, :class:`MethodReport`, :class:`RunReport`, :func:`optimize_class` (one class, every
method through the chosen stage, each with its own fallback) and :func:`optimize_input` (a class, jar or
directory, optionally on several processes).

Inputs: class-file bytes, the class-hierarchy sources (the input's own classes, ``--classpath``, the JDK), the
stage, the per-method time budget and the goal. Outputs: new class bytes and one report row per method.

The full stage's decision (``_check_emitted``, docs/cost-model.md): after lowering, the original and the
emitted code are priced by :mod:`peggy_jvm.codecost`; ``--goal speed`` keeps the rewrite only if its emitted
cost is strictly lower and its size no larger (``SIZE_ALLOWANCE``, ``SIZE_SLACK``), ``--goal size`` only if its
size is strictly smaller and its emitted cost no higher; otherwise the method is ``unchanged`` with both
figures in the reason (before the self-check, which is then not needed).

Budgets (``--method-timeout``): the full stage splits one method's budget over its sub-stages by what is left
when each starts (:class:`MethodBudget`): saturation a quarter, extraction about half of the rest, the self-check's
proof most of what then remains, after reserving the self-check's own lifting, building and importing (this
method's preparation times a ratio learnt from earlier self-checks). Between sub-stages a spent budget stops the
method at once (status ``fallback``, reason ``timeout: ...`` naming the sub-stage); saturation + extraction are
interrupted by an alarm at their allotment (parts of extraction check no clock); a method that ends over its
budget anyway (lowering and the self-check are not interrupted: they use the shared class hierarchy) falls back
the same way, even one that was to stay unchanged. Without ``--method-timeout`` the full stage splits
:data:`DEFAULT_FULL_BUDGET` the same way but never falls back for time.

Worker processes (``--jobs N``): a :class:`concurrent.futures.ProcessPoolExecutor` over ``fork``, whose workers
are not daemonic, so the MaxSAT extractor can still run RC2 in its own killable child processes there (a
``multiprocessing.Pool``'s daemonic workers cannot have children, and extraction fell back to greedy). A worker
that dies (killed, out of memory) leaves its classes as they were: every method of them ``fallback``.

Invariants (the safety net of DESIGN section 6):
- a method whose stage raises, or overruns its budget, keeps its original bytes (status ``fallback`` with the
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

from .archive import (Entry, InputError, InputSet, Output, check_outputs, output_form, read_input, resolve_output,
                      write_output)
from .classfile.errors import ClassFileError
from .classfile.hierarchy import ClassHierarchy
from .classfile.model import CodeAttribute
from .classfile.reader import read_class
from .classfile.attributes import LineNumberTable
from .classfile.bytecode import Instruction
from .classfile.model import Attribute, ClassFile, MethodInfo
from .classfile.recode import RecodeResult, recode_method
from .ir.lift import lift_method
from .ir.lower import lower_method
from .peg.build import PegUnsupported, build_peg
from .peg.check import check_peg
from .peg.graph import PEG as PegGraph  # Stage.PEG is the stage's name here
from .revert.revert import RevertUnsupported, revert_peg
from .egraph.runner import Limits
from .classfile.writer import write_class
from .codecost import EmittedCost, Goal, price_code

if TYPE_CHECKING:  # the solver stack is imported only by the stage that needs it
    from .extract.select import RuleOptions


class Stage(str, Enum):
    CLASSFILE = "classfile"
    IR = "ir"
    PEG = "peg"
    FULL = "full"


IMPLEMENTED_STAGES = (Stage.CLASSFILE, Stage.IR, Stage.PEG, Stage.FULL)

#: the per-method budget of the full stage when no --method-timeout is given (seconds)
DEFAULT_FULL_BUDGET = 2.0


class MethodUnchanged(Exception):
    """A stage leaves this method as it is, for a reason that is not a failure (e.g. irreducible control flow,
    exception handlers the reverter does not handle yet)."""


class MethodTimeout(BaseException):
    """The method's budget is spent (the method keeps its original bytes; the message says where).

    A BaseException, like KeyboardInterrupt, because it may be raised asynchronously inside library code
    (:class:`_alarm`): the ``except Exception`` fallbacks there (e.g. "solver failed, try greedy") must not
    swallow it and carry on past the deadline; their ``finally`` blocks still run (solver workers are killed)."""


# The full stage's split of a method's budget B: each sub-stage gets at most its nominal part of B (saturation
# B/4, extraction B/2, the self-check's proof B/4, as before budgets were enforced) and at most a share of what
# is left when it starts (after the self-check's reserve), so that time lost earlier (a slow import, a slow
# problem build) is taken from the later sub-stages instead of overrunning B. Saturation is cheap to cut short
# (it stops with a consistent e-graph at its limit); extraction gets the largest share because a proof of
# optimality needs the solver; the self-check's proof gets most of what then remains, since an unproved
# self-check throws the work away.
SATURATE_PART, SATURATE_SHARE = 0.25, 0.25
EXTRACT_PART, EXTRACT_SHARE = 0.5, 0.55
PROOF_PART, PROOF_SHARE = 0.25, 0.7
#: the self-check lifts, builds and simplifies two methods and imports two PEGs before its proof saturates:
#: time that scales with this method's own preparation (lift + build). The reserve kept back for it is that
#: preparation times a ratio learnt from the self-checks seen in this process (starting here), never more
#: than a part of the budget (a slow first preparation, e.g. loading the class hierarchy, must not starve the
#: other sub-stages)
SELF_CHECK_PREPARATIONS = 3.0
MAX_RESERVE_PART = 0.35
_self_check_ratio = SELF_CHECK_PREPARATIONS
#: no sub-stage is given less than this (seconds): below it the sub-stage could not do anything useful, and the
#: final check turns an overrun into a fallback anyway
MIN_SLICE = 0.02
#: ``--goal speed`` keeps a rewrite whose emitted code (codecost.py) is strictly cheaper and at most
#: ``SIZE_ALLOWANCE * old + SIZE_SLACK`` bytes longer (docs/cost-model.md): none, so that the rewritten methods
#: together are never larger than their originals
SIZE_ALLOWANCE, SIZE_SLACK = 0.0, 0


def _learn_self_check(prep_s: float, took_s: float, proof_s: float) -> None:
    """Learn the self-check's cost beyond its proof (per second of preparation) from one self-check that used
    its whole proof time (one that ended early says nothing about it); forgets slowly, like the runner's
    rebuild rate, so one outlier (a pause of the machine) does not stay."""
    global _self_check_ratio
    if prep_s > 0.002 and took_s > proof_s:
        _self_check_ratio = min(30.0, max(_self_check_ratio * 0.95, SELF_CHECK_PREPARATIONS,
                                          (took_s - proof_s) / prep_s))


class MethodBudget:
    """One method's wall-clock budget (``perf_counter``), split over the full stage's sub-stages. ``hard``:
    a spent budget is a :class:`MethodTimeout` (``--method-timeout`` given); otherwise the split is only advice."""

    def __init__(self, total: float, hard: bool, start: float | None = None) -> None:
        self.total = total
        self.hard = hard
        self.start = time.perf_counter() if start is None else start
        self.reserve = 0.0  # seconds kept back for the self-check's preparation

    def spent(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float:
        return self.total - self.spent()

    def share(self, part: float, fraction: float, later: float = 0.0) -> float:
        """A sub-stage's seconds: ``part`` of the whole budget, but no more than ``fraction`` of what is left
        after the reserve and ``later`` seconds already promised to an earlier sub-stage that has not run yet
        (at least :data:`MIN_SLICE`)."""
        return max(MIN_SLICE, min(part * self.total, fraction * (self.left() - self.reserve - later)))

    def check(self, before: str) -> None:
        """Stop the method when the budget is spent (hard budgets only)."""
        if self.hard and self.left() <= 0:
            raise MethodTimeout(f"{self.spent() * 1000:.0f} ms > {self.total:g} s, before {before}")


#: extra time an interrupted sub-stage gets beyond its allotment, as a part of the whole budget (its own limits
#: stop it cleanly at the allotment; the alarm is only for what does not check a clock)
ALARM_GRACE = 0.1


#: forks in progress in this process (see :func:`_alarm`): an alarm is held off while one runs
_forking = 0


def _fork_started() -> None:
    global _forking
    _forking += 1


def _fork_done() -> None:
    global _forking
    _forking = max(0, _forking - 1)


if hasattr(os, "register_at_fork"):
    # the solver forks its workers inside the alarm's reach; the at-fork hooks of other modules (logging's
    # release its module lock) must not be interrupted, or that lock stays taken for good
    os.register_at_fork(before=_fork_started, after_in_parent=_fork_done, after_in_child=_fork_done)


class _alarm:
    """``with _alarm(seconds, budget, what):`` interrupts the block with :class:`MethodTimeout` after ``seconds``
    (a one-shot SIGALRM timer).

    Only around code that touches nothing shared (saturation and extraction work on their own e-graph,
    problem and PEGs; the rules they share reset their state per e-graph), so that an interruption anywhere in
    it loses only this method's work; never around lifting, lowering or the self-check, which consult the
    shared class hierarchy and its caches. While a fork is in progress the alarm is put off by a few
    milliseconds (at-fork hooks hold locks), and it never raises inside ``__exit__`` (which must disarm it and
    give SIGALRM back). A no-op (the end-of-method check still holds) when ``seconds`` is None, off the main
    thread (signals are delivered there only), without ``setitimer``, or when someone else owns SIGALRM."""

    def __init__(self, seconds: float | None, budget: MethodBudget, what: str) -> None:
        self.seconds, self.budget, self.what = seconds, budget, what
        self.armed = False
        self.old: object = None

    def __enter__(self) -> _alarm:
        if (self.seconds is None or not hasattr(signal, "setitimer")
                or threading.current_thread() is not threading.main_thread()
                or signal.getitimer(signal.ITIMER_REAL)[0] != 0):
            return self
        old = signal.getsignal(signal.SIGALRM)
        if old not in (signal.SIG_DFL, signal.SIG_IGN) and not getattr(old, "_peggy_alarm", False):
            return self
        self.old = old
        signal.signal(signal.SIGALRM, self._fire)
        self.armed = True
        signal.setitimer(signal.ITIMER_REAL, max(self.seconds, 1e-3))
        return self

    def _fire(self, _signum: int, frame: object) -> None:
        if not self.armed or getattr(frame, "f_code", None) is _alarm.__exit__.__code__:
            return  # being disarmed: too late to matter
        if _forking:
            signal.setitimer(signal.ITIMER_REAL, 0.005)
            return
        raise MethodTimeout(f"{self.what} interrupted after {self.seconds:.3g} s, its share of the "
                            f"{self.budget.total:g} s budget ({self.budget.spent() * 1000:.0f} ms spent)")

    _fire._peggy_alarm = True  # type: ignore[attr-defined]  # marks our handler, should one be left installed

    def __exit__(self, *exc: object) -> None:
        if self.armed:
            self.armed = False
            # disarm first: a signal already pending when the old handler is back is dropped by Python
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.old)  # type: ignore[arg-type]


def _reap_solver_workers() -> None:
    """Kill the extractor's solver processes an interruption may have left running (normally its ``finally``
    kills them; an alarm inside that ``finally`` could leave some). Only this process's own children, named
    by :mod:`peggy_jvm.extract.maxsat` ``extract-<config>``."""
    for proc in multiprocessing.active_children():
        if proc.name.startswith("extract-"):
            proc.kill()
            proc.join(1)


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
                "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        return {"stage": self.stage, "goal": self.goal, "methods": [m.to_json() for m in self.methods],
                "summary": self.summary(), "warnings": self.warnings}


def _code_length(data: bytes) -> int:
    return int.from_bytes(data[4:8], "big")


def _full(ir, budget: MethodBudget, info: dict, goal: Goal = Goal.SPEED, rules: RuleOptions | None = None):
    """``--stage full`` between lifting and lowering: build, check, saturate and extract (the safe rule groups
    of :mod:`peggy_jvm.extract.select` with the user's ``rules``, within the shares of ``budget``, priced for
    ``goal``), check again, revert. A PEG that is not strictly cheaper leaves the method unchanged."""
    from .extract.select import extract_peg, optimizer_rules  # the solver stack: only for the stage that needs it
    times: dict[str, float] = info.setdefault("time_ms", {})
    # the rules are parsed and compiled once per process (cached): outside the alarm below, so that a budget
    # shorter than that one-time cost does not interrupt it, and every later method with it
    rewrites = optimizer_rules(rules)
    try:
        peg = build_peg(ir)
        check_peg(peg)
        # what lifting and building this method took so far is what the self-check will spend on each side
        info["prepare_s"] = prep = budget.spent()
        budget.reserve = min(_self_check_ratio * prep, MAX_RESERVE_PART * budget.total)
        times["full.prepare"] = round(prep * 1000, 3)
        budget.check("saturation")
        saturate_s = budget.share(SATURATE_PART, SATURATE_SHARE)
        # extraction's share of what will be left once saturation has used its own
        extract_s = budget.share(EXTRACT_PART, EXTRACT_SHARE, later=saturate_s)
        limits = Limits(max_nodes=5_000, max_iterations=20, time_limit_s=saturate_s)
        # a hard budget is enforced inside extraction too: parts of it check no clock (the phi-profile checker
        # can take seconds on one candidate), so an alarm stops it at its allotment plus a grace
        allotted = min(saturate_s + extract_s + ALARM_GRACE * budget.total, max(MIN_SLICE, budget.left()))
        def revertible(candidate: PegGraph) -> str | None:
            # which of several equally cheap selections the solver returns first varies from run to run; one the
            # reverter cannot schedule is blocked, so the next is tried instead of keeping the original code
            try:
                revert_peg(candidate, ir)
            except (PegUnsupported, RevertUnsupported) as e:
                return str(e)
            return None

        try:
            with _alarm(allotted if budget.hard else None, budget, "saturation and extraction"):
                new, rep = extract_peg(peg, rewrites, limits=limits, budget=extract_s, accept=revertible,
                                        goal=goal)
        except MethodTimeout:
            _reap_solver_workers()
            raise
        info.update(cost_before=rep.cost_before, cost_after=rep.cost_after, extraction=rep.status)
        times.update({f"full.{k}": round(v, 3) for k, v in rep.time_ms.items()})
        if new is peg:
            raise MethodUnchanged(f"no cheaper PEG ({rep.notes[-1] if rep.notes else rep.status})")
        budget.check("reverting")
        check_peg(new)
        return revert_peg(new, ir)
    except (PegUnsupported, RevertUnsupported) as e:
        raise MethodUnchanged(str(e)) from None


def _check_emitted(goal: Goal, before: EmittedCost, after: EmittedCost) -> None:
    """Keep the original code unless the emitted rewrite pays by the goal's rule (docs/cost-model.md): ``speed``:
    strictly cheaper and not larger than the allowance; ``size``: strictly smaller and not costlier."""
    figures = f"cost {before.cost} -> {after.cost}, {before.size} -> {after.size} bytes"
    if goal is Goal.SIZE:
        if after.size >= before.size:
            raise MethodUnchanged(f"emitted code not smaller: {figures}")
        if after.cost > before.cost:
            raise MethodUnchanged(f"emitted code costlier: {figures}")
        return
    if after.cost >= before.cost:
        raise MethodUnchanged(f"emitted code not cheaper: {figures}")
    if after.size > before.size * (1 + SIZE_ALLOWANCE) + SIZE_SLACK:
        raise MethodUnchanged(f"emitted code larger: {figures}")


def _self_check(cf: ClassFile, m: MethodInfo, data: bytes, hierarchy: ClassHierarchy, proof_s: float,
                rules: RuleOptions | None = None) -> None:
    """DESIGN section 6, step 2: the emitted bytecode is lifted again and validated against the original method
    (both PEGs in one e-graph, saturated for ``proof_s`` seconds with the default safe rules and only those of
    the user's ``rules`` that the soundness fuzzer finds sound, ``select.proof_rules``; the roots must meet).
    Not proved: the method keeps its original code."""
    from .extract.select import proof_rules
    from .validate.pairing import MethodPair
    from .validate.prove import ProofBudget, prove_pair
    new_m = MethodInfo(m.access, m.name_index, m.descriptor_index,
                       [Attribute(a.name_index, a.name, data) if a.name == "Code" else a for a in m.attributes],
                       m.name, m.descriptor)
    pair = MethodPair(cf, cf, m, new_m)
    proof = prove_pair(pair, hierarchy, hierarchy, proof_rules(rules), ProofBudget(time_s=proof_s))
    if not proof.proved:
        raise MethodUnchanged(f"self-check: the emitted code is {proof.reason}")


def _transform(stage: Stage, cf: ClassFile, m: MethodInfo, code: CodeAttribute, insns: list[Instruction],
               hierarchy: ClassHierarchy, budget: MethodBudget | None = None, info: dict | None = None,
               goal: Goal = Goal.SPEED, rules: RuleOptions | None = None) -> RecodeResult:
    """One method through ``stage``; raises on anything the stage cannot do (the caller falls back), and
    :class:`MethodTimeout` when a hard ``budget`` is spent between the full stage's sub-stages. ``info`` receives
    what the full stage measured (costs, emitted costs, extraction status, time per sub-stage); the full stage
    keeps only a rewrite whose emitted code pays by ``goal``'s rule."""
    if budget is None:
        budget = MethodBudget(DEFAULT_FULL_BUDGET, hard=False)
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
        ir = _full(ir, budget, info, goal, rules)
        t0 = time.perf_counter()
    lnt = next((a for a in code.attributes if a.name == "LineNumberTable"), None)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50_000))  # reverted code can nest expressions deeper than javac's
    try:
        data = lower_method(cf, m, ir, hierarchy, LineNumberTable.parse(lnt.data) if lnt is not None else None)
    finally:
        sys.setrecursionlimit(old)
    if stage is Stage.FULL:
        times = info.setdefault("time_ms", {})
        times["full.lower"] = round((time.perf_counter() - t0) * 1000, 3)
        old_price, new_price = price_code(code), price_code(CodeAttribute.parse(data, cf.pool))
        info.update(emitted_cost_before=old_price.cost, emitted_cost_after=new_price.cost)
        _check_emitted(goal, old_price, new_price)
        budget.check("the self-check")
        # the proof's saturation gets most of what is left once the self-check's preparation is set aside
        proof_s = budget.share(PROOF_PART, PROOF_SHARE)
        t1 = time.perf_counter()
        try:
            _self_check(cf, m, data, hierarchy, proof_s, rules)
        finally:
            took = time.perf_counter() - t1
            times["full.self_check"] = round(took * 1000, 3)
            _learn_self_check(info.get("prepare_s", 0.0), took, proof_s)
    kept = {a.name for a in CodeAttribute.parse(data, cf.pool).attributes}
    return RecodeResult(data, [a.name for a in code.attributes if a.name not in kept and a.name != "StackMapTable"])


def optimize_class(data: bytes, hierarchy: ClassHierarchy, stage: Stage, method_timeout: float | None = None,
                   goal: Goal = Goal.SPEED, rules: RuleOptions | None = None) -> tuple[bytes, list[MethodReport]]:
    """Run every method of one class through ``stage`` (the full stage for ``goal``, with the user's
    ``rules``); returns the new class bytes and the reports.

    Raises ClassFileError when the class itself is malformed (the caller reports bad input).
    """
    cf = read_class(data)
    reports: list[MethodReport] = []
    changed = False
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
        budget = MethodBudget(DEFAULT_FULL_BUDGET if method_timeout is None else method_timeout,
                              hard=method_timeout is not None, start=start)

        def row(status: str, reason: str, spent: float, after: int = before, cost_key: str = "cost_before"
                ) -> MethodReport:
            # the time reported is the time the budget was checked against (never a later reading)
            return MethodReport(cf.name, m.name, m.descriptor, status, reason, bytes_before=before,
                                bytes_after=after, time_ms={stage.value: spent * 1000, **info.get("time_ms", {})},
                                cost_before=info.get("cost_before"), cost_after=info.get(cost_key),
                                extraction=info.get("extraction"),
                                emitted_cost_before=info.get("emitted_cost_before"),
                                emitted_cost_after=info.get(f"emitted_{cost_key}"))
        try:
            result = _transform(stage, cf, m, code, insns, hierarchy, budget, info, goal, rules)
        except MethodTimeout as e:  # the budget ran out between two sub-stages, or extraction was interrupted
            reports.append(row("fallback", f"timeout: {e}", time.perf_counter() - start))
            continue
        except MethodUnchanged as e:
            spent = time.perf_counter() - start
            if method_timeout is not None and spent > method_timeout:  # over budget: a timeout all the same
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
            # finished, but late (a sub-stage that cannot be interrupted ran long): the budget is a promise
            reports.append(row("fallback", f"timeout: {spent * 1000:.0f} ms > {method_timeout:g} s, at the end",
                               spent))
            continue
        reason = f"dropped {', '.join(result.dropped)}" if result.dropped else ""
        attr.data = result.data
        changed = True
        reports.append(row("rewritten", reason, spent, _code_length(result.data), "cost_after"))
    if not changed:
        return data, reports
    try:
        return write_class(cf), reports
    except ClassFileError as e:  # e.g. the pool overflowed with frame classes: keep the class as it was
        for r in reports:
            if r.status == "rewritten":
                r.status, r.reason, r.bytes_after = "fallback", f"class not writable: {e}", r.bytes_before
                r.cost_after, r.emitted_cost_after = r.cost_before, r.emitted_cost_before
        return data, reports


# -- whole inputs -------------------------------------------------------------------------------------------
_worker_state: dict = {}


def _init_worker(classpath: list[Path], input_classes: dict[str, bytes], stage: Stage, timeout: float | None,
                 goal: Goal = Goal.SPEED, rules: RuleOptions | None = None) -> None:
    h = ClassHierarchy(classpath)
    h.add_lazy_classes(input_classes)
    _worker_state.update(hierarchy=h, stage=stage, timeout=timeout, goal=goal, rules=rules)
    if stage is Stage.FULL:
        # parse and compile the rules now, once per process, rather than within the first method's budget
        from .extract.select import optimizer_rules, proof_rules
        optimizer_rules(rules)
        proof_rules(rules)  # the self-check's


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
                                      _worker_state["timeout"], _worker_state["goal"], _worker_state["rules"])
    except ClassFileError as e:
        return index, None, (where, str(e))
    return index, out, reports


def _run_pool(work: list[tuple[int, str, bytes]], jobs: int, init_args: tuple,
              results: dict[int, tuple[bytes | None, list[MethodReport] | tuple[str, str]]],
              progress: Callable[[int, int], None] | None) -> None:
    """The classes of ``work`` on ``jobs`` worker processes; fills ``results`` (stops at the first bad class).

    A ProcessPoolExecutor's workers are not daemonic (Python >= 3.9), unlike a multiprocessing.Pool's, so the
    extractor can fork its solver processes inside them. One task per class (a class's methods take
    milliseconds to seconds, far more than sending its bytes), at most ``2 * jobs`` in flight, so that bad
    input stops the run after the classes already started rather than after the whole input."""
    ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
    pending = iter(work)
    done = 0

    def record(res: _Result) -> bool:
        """Keep one class's result; True when it was bad input (the run ends)."""
        nonlocal done
        k, out, reps = res
        results[k] = (out, reps)
        done += 1
        if isinstance(reps, tuple):
            return True
        if progress:
            progress(done, len(work))
        return False

    with ProcessPoolExecutor(jobs, mp_context=ctx, initializer=_init_worker, initargs=init_args) as pool:
        running: dict[Future, tuple[int, str, bytes]] = {}

        def refill() -> bool:
            for item in pending:
                try:
                    running[pool.submit(_work, item)] = item
                except BrokenProcessPool as e:  # no worker left to take it
                    if record(_unprocessed(item, f"worker process died ({e})")):
                        return True
                    continue
                if len(running) >= 2 * jobs:
                    break
            return False

        stop = refill()
        while running and not stop:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in finished:
                item = running.pop(fut)
                try:
                    res = fut.result()
                except BrokenProcessPool as e:  # a worker died (killed, out of memory): keep its classes
                    res = _unprocessed(item, f"worker process died ({e})")
                if record(res):
                    stop = True
                    break
            stop = stop or refill()
        for fut in running:  # bad input: the classes not started yet are never run
            fut.cancel()


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
                   jobs: int = 1, method_timeout: float | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   reports: Sequence[Output] = (), goal: Goal = Goal.SPEED,
                   rules: RuleOptions | None = None) -> tuple[Path, RunReport]:
    """Optimize a class, jar or directory and write the result (the full stage aiming at ``goal``, with the
    user's ``rules``, already checked by the caller: a loading error here is raised in a worker); returns the
    output path and the report.

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
        for done, item in enumerate(work, 1):
            k, out, reps = _work(item)
            results[k] = (out, reps)
            if isinstance(reps, tuple):
                break
            if progress:
                progress(done, len(work))
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

