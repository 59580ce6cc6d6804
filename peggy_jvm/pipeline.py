"""The per-method driver and the whole-input orchestration of ``peggy-jvm optimize``.

Owns: :class:`Stage`, :class:`MethodReport`, :class:`RunReport`, :func:`optimize_class` (one class, every
method through the chosen stage, each with its own fallback) and :func:`optimize_input` (a class, jar or
directory, optionally on several processes).

Inputs: class-file bytes, the class-hierarchy sources (the input's own classes, ``--classpath``, the JDK), the
stage and the per-method time budget. Outputs: new class bytes and one report row per method.

Invariants (the safety net of DESIGN section 6):
- a method whose stage raises, or overruns its budget, keeps its original bytes (status ``fallback`` with the
  reason); a method without code is ``unchanged``;
- a class none of whose methods changed is written back byte-identical;
- bad input (a malformed class) is an :class:`~peggy_jvm.archive.InputError`, never a partial output.
"""
from __future__ import annotations

import multiprocessing
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from enum import Enum
from pathlib import Path
from typing import Callable

from .archive import Entry, InputError, InputSet, read_input, resolve_output, write_output
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
from .revert.revert import HANDLERS_NOT_REVERTED, RevertUnsupported, revert_peg, uses_handlers
from .egraph.runner import Limits
from .classfile.writer import write_class


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

    def summary(self) -> dict:
        counts = {"rewritten": 0, "unchanged": 0, "fallback": 0}
        for m in self.methods:
            counts[m.status] += 1
        return {"classes": self.classes, "methods": len(self.methods), **counts,
                "bytes_before": sum(m.bytes_before for m in self.methods),
                "bytes_after": sum(m.bytes_after for m in self.methods),
                "seconds": round(self.seconds, 3)}

    def to_json(self) -> dict:
        return {"stage": self.stage, "methods": [m.to_json() for m in self.methods], "summary": self.summary(),
                "warnings": self.warnings}


def _code_length(data: bytes) -> int:
    return int.from_bytes(data[4:8], "big")


def _full(ir, budget: float, info: dict):
    """``--stage full`` between lifting and lowering: build, check, saturate and extract (the safe rule groups
    of :mod:`peggy_jvm.extract.select`, within ``budget`` seconds), check again, revert. A PEG that is not
    strictly cheaper leaves the method unchanged (no churn for nothing)."""
    from .extract.select import extract_peg  # the solver stack is only imported by the stage that needs it
    try:
        peg = build_peg(ir)
        check_peg(peg)
        if uses_handlers(peg):  # the reverter refuses them: no saturation for nothing
            raise MethodUnchanged(HANDLERS_NOT_REVERTED)
        # a quarter of the budget for saturation, half for extraction, the rest for reverting and lowering
        limits = Limits(max_nodes=5_000, max_iterations=20, time_limit_s=budget / 4)
        new, rep = extract_peg(peg, limits=limits, budget=budget / 2)
        info.update(cost_before=rep.cost_before, cost_after=rep.cost_after,
                    time_ms={f"full.{k}": round(v, 3) for k, v in rep.time_ms.items()})
        if new is peg:
            raise MethodUnchanged(f"no cheaper PEG ({rep.notes[-1] if rep.notes else rep.status})")
        check_peg(new)
        return revert_peg(new, ir)
    except (PegUnsupported, RevertUnsupported) as e:
        raise MethodUnchanged(str(e)) from None


def _self_check(cf: ClassFile, m: MethodInfo, data: bytes, hierarchy: ClassHierarchy, budget: float) -> None:
    """DESIGN section 6, step 2: the emitted bytecode is lifted again and validated against the original method
    (both PEGs in one e-graph, saturated with the same safe rules the optimizer used; the roots must meet).
    Not proved: the method keeps its original code."""
    from .extract.select import safe_rules
    from .validate.pairing import MethodPair
    from .validate.prove import ProofBudget, prove_pair
    new_m = MethodInfo(m.access, m.name_index, m.descriptor_index,
                       [Attribute(a.name_index, a.name, data) if a.name == "Code" else a for a in m.attributes],
                       m.name, m.descriptor)
    pair = MethodPair(cf, cf, m, new_m)
    proof = prove_pair(pair, hierarchy, hierarchy, safe_rules(), ProofBudget(time_s=max(0.2, budget / 4)))
    if not proof.proved:
        raise MethodUnchanged(f"self-check: the emitted code is {proof.reason}")


def _transform(stage: Stage, cf: ClassFile, m: MethodInfo, code: CodeAttribute, insns: list[Instruction],
               hierarchy: ClassHierarchy, budget: float | None = None, info: dict | None = None) -> RecodeResult:
    """One method through ``stage``; raises on anything the stage cannot do (the caller falls back). ``info``
    receives what the full stage measured (costs, time per sub-stage)."""
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
        ir = _full(ir, DEFAULT_FULL_BUDGET if budget is None else budget, info if info is not None else {})
    lnt = next((a for a in code.attributes if a.name == "LineNumberTable"), None)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50_000))  # reverted code can nest expressions deeper than javac's
    try:
        data = lower_method(cf, m, ir, hierarchy, LineNumberTable.parse(lnt.data) if lnt is not None else None)
    finally:
        sys.setrecursionlimit(old)
    if stage is Stage.FULL:
        _self_check(cf, m, data, hierarchy, DEFAULT_FULL_BUDGET if budget is None else budget)
    kept = {a.name for a in CodeAttribute.parse(data, cf.pool).attributes}
    return RecodeResult(data, [a.name for a in code.attributes if a.name not in kept and a.name != "StackMapTable"])


def optimize_class(data: bytes, hierarchy: ClassHierarchy, stage: Stage, method_timeout: float | None = None
                   ) -> tuple[bytes, list[MethodReport]]:
    """Run every method of one class through ``stage``; returns the new class bytes and the reports.

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
        info: dict = {}  # the full stage's costs and sub-stage times
        try:
            result = _transform(stage, cf, m, code, insns, hierarchy, method_timeout, info)
        except MethodUnchanged as e:
            ms = (time.perf_counter() - start) * 1000
            reports.append(MethodReport(cf.name, m.name, m.descriptor, "unchanged", str(e), bytes_before=before,
                                        bytes_after=before, time_ms={stage.value: ms, **info.get("time_ms", {})},
                                        cost_before=info.get("cost_before"), cost_after=info.get("cost_before")))
            continue
        except Exception as e:  # any failure of the stage keeps the original method
            ms = (time.perf_counter() - start) * 1000
            reports.append(MethodReport(cf.name, m.name, m.descriptor, "fallback", f"{type(e).__name__}: {e}",
                                        bytes_before=before, bytes_after=before,
                                        time_ms={stage.value: ms, **info.get("time_ms", {})},
                                        cost_before=info.get("cost_before"), cost_after=info.get("cost_before")))
            continue
        ms = (time.perf_counter() - start) * 1000
        if method_timeout is not None and ms > method_timeout * 1000:
            reports.append(MethodReport(cf.name, m.name, m.descriptor, "fallback",
                                        f"timeout: {ms:.0f} ms > {method_timeout} s", bytes_before=before,
                                        bytes_after=before, time_ms={stage.value: ms},
                                        cost_before=info.get("cost_before"), cost_after=info.get("cost_before")))
            continue
        reason = f"dropped {', '.join(result.dropped)}" if result.dropped else ""
        attr.data = result.data
        changed = True
        reports.append(MethodReport(cf.name, m.name, m.descriptor, "rewritten", reason, bytes_before=before,
                                    bytes_after=_code_length(result.data),
                                    time_ms={stage.value: ms, **info.get("time_ms", {})},
                                    cost_before=info.get("cost_before"), cost_after=info.get("cost_after")))
    if not changed:
        return data, reports
    try:
        return write_class(cf), reports
    except ClassFileError as e:  # e.g. the pool overflowed with frame classes: keep the class as it was
        for r in reports:
            if r.status == "rewritten":
                r.status, r.reason, r.bytes_after = "fallback", f"class not writable: {e}", r.bytes_before
                r.cost_after = r.cost_before
        return data, reports


# -- whole inputs -------------------------------------------------------------------------------------------
_worker_state: dict = {}


def _init_worker(classpath: list[Path], input_classes: dict[str, bytes], stage: Stage, timeout: float | None
                 ) -> None:
    h = ClassHierarchy(classpath)
    h.add_lazy_classes(input_classes)
    _worker_state.update(hierarchy=h, stage=stage, timeout=timeout)


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
                                      _worker_state["timeout"])
    except ClassFileError as e:
        return index, None, (where, str(e))
    return index, out, reports


def optimize_input(input_path: Path, output: Path | None, stage: Stage, classpath: list[Path] | None = None,
                   jobs: int = 1, method_timeout: float | None = None,
                   progress: Callable[[int, int], None] | None = None) -> tuple[Path, RunReport]:
    """Optimize a class, jar or directory and write the result; returns the output path and the report."""
    started = time.perf_counter()
    inp: InputSet = read_input(input_path)
    target = resolve_output(inp, output)
    class_entries = [k for k, e in enumerate(inp.entries) if e.is_class]
    input_classes = classes_by_name(inp)
    work = [(k, inp.describe(inp.entries[k]), inp.entries[k].data) for k in class_entries]
    report = RunReport(stage.value, classes=len(work))
    results: dict[int, tuple[bytes | None, list[MethodReport] | tuple[str, str]]] = {}
    cp = list(classpath or [])
    if jobs > 1 and len(work) > 1:
        ctx = multiprocessing.get_context("fork" if os.name == "posix" else "spawn")
        with ctx.Pool(jobs, _init_worker, (cp, input_classes, stage, method_timeout)) as pool:
            for done, (k, out, reps) in enumerate(pool.imap_unordered(_work, work, chunksize=8), 1):
                results[k] = (out, reps)
                if isinstance(reps, tuple):
                    pool.terminate()
                    break
                if progress:
                    progress(done, len(work))
    else:
        _init_worker(cp, input_classes, stage, method_timeout)
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

