"""Loops that never exit, optimized and proved (issue 16, item 6; the representation is argued in
peggy_jvm/peg/build.py's docstring and docs/axioms.md, "The model the axioms are sound for").

The methods of ``fixtures/src/loops/InfiniteLoops.java`` (built on request: some never return) go through the full
stage with the self-check on, so a rewritten method is a proved one (every rewrite kept whether or not its emitted
code pays: the rewrites are under test, not the cost rule). Their shapes are read off javap (strength reduction
and folding inside a ``while (true)``, invariants computed before it, no exit test), they run against the
originals on the JVM under ``-Xverify:all`` (the loops' effect ``tick`` ends a run after a bounded number of calls;
the loop without effects is watched in a daemon thread), and ``validate`` proves them. Mutants of the emitted code
(the loop's effect dropped, a wrong step or constant) are refused by the self-check and not proved by
``validate`` (shown not equivalent where it sees the difference: a returned value, an array), and a rule that
drops a loop that never ends is refused by the self-check and, without it, not proved by ``validate`` (shown not
equivalent when its run sees the original still running) and no longer spins on the JVM."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import difftest as dt
from conftest import keep_every_rewrite
from support import fixture_build
from support.fullstage import listing
import peggy_jvm.pipeline as pipeline
from peggy_jvm.budget import DEFAULT_WORK_BUDGET
from peggy_jvm.codecost import Goal
from peggy_jvm.classfile.bytecode import decode
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import Attribute, ClassFile, MethodInfo
from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.classfile.writer import write_class, write_code
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.rules.policy import RuleOptions, proof_rules
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs
from peggy_jvm.validate.selfcheck import prove_rewrite

CLASS = "InfiniteLoops"
#: the methods whose loop never exits, or exits only by a return or throw from inside it
REWRITTEN = ("serve", "serveFolded", "fill", "nested", "maybeServe", "enter", "untilReturn", "untilThrow")
INTS = [-2**31, -3, 0, 2, 46341, 2**31 - 1]


def _optimize(orig: Path, out: Path, mp: pytest.MonkeyPatch, rules: RuleOptions | None = None) -> dict:
    keep_every_rewrite(mp)
    _, report = optimize_input(orig / f"{CLASS}.class", out / f"{CLASS}.class", Stage.FULL, jobs=1, rules=rules)
    return {m.name: m for m in report.methods}


@pytest.fixture(scope="module")
def optimized(tmp_path_factory) -> tuple[Path, Path, dict]:
    orig = fixture_build.build_loops()
    out = tmp_path_factory.mktemp("infloop") / "out"
    with pytest.MonkeyPatch.context() as mp:
        rows = _optimize(orig, out, mp)
    return orig, out, rows


def _code(java_home: Path, cp: Path, method: str) -> list[tuple[int, str, str]]:
    return listing(java_home, cp, CLASS, method)


def _loops(code: list[tuple[int, str, str]]) -> list[tuple[int, int]]:
    """The (first, last) offsets of each loop: a backward branch and its target."""
    return [(int(rest), off) for off, op, rest in code
            if (op.startswith("if") or op.startswith("goto")) and rest.isdigit() and int(rest) <= off]


def _inside(code: list[tuple[int, str, str]]) -> list[tuple[int, str, str]]:
    spans = _loops(code)
    return [row for row in code if any(lo <= row[0] <= hi for lo, hi in spans)]


def _ops(rows: list[tuple[int, str, str]]) -> list[str]:
    return [op for _off, op, _rest in rows]


def _steps(rows: list[tuple[int, str, str]]) -> list[int]:
    """The constants the ``iinc`` instructions of ``rows`` add."""
    return [int(rest.split(",")[1]) for _off, op, rest in rows if op == "iinc"]


def test_loops_without_exit_are_rewritten_and_proved(optimized):
    """Before, every extraction of a loop that never exits was refused ("pass[1] is not on the sigma chain"):
    the first six stayed unchanged (the last two, left by a return or throw, were rewritten already). Now each is
    rewritten, which with the self-check on means proved."""
    _orig, _out, rows = optimized
    for name in REWRITTEN:
        assert rows[name].status == "rewritten", (name, rows[name].reason)


def test_a_server_loop_is_strength_reduced_with_its_invariant_before_it(optimized, java_home):
    """``serve``: ``tick(i * 4 + k * k)`` forever. ``k * k`` is computed once before the loop, ``i * 4`` becomes a
    variable stepped by 4, and the loop has no exit test: a call, an add and the step."""
    orig, out, _rows = optimized
    before, after = _code(java_home, orig, "serve"), _code(java_home, out, "serve")
    assert _ops(_inside(before)).count("imul") == 2, before
    assert len(_loops(after)) == 1, after
    body = _inside(after)
    assert "imul" not in _ops(body) and _ops(after).count("imul") == 1, after
    assert _steps(body) == [4], after
    assert not any(op.startswith("if") for op in _ops(after)), after  # never leaves: nothing to test
    assert "invokestatic" in _ops(body), after


def test_folding_inside_a_loop_without_exit(optimized, java_home):
    """``serveFolded``: ``i * 1 + 0 * k`` is ``i``: the loop is the call, the step and the jump back."""
    _orig, out, _rows = optimized
    after = _code(java_home, out, "serveFolded")
    assert [op.split("_")[0] for op in _ops(_inside(after))] == ["iload", "invokestatic", "iinc", "goto"], after
    assert [op.split("_")[0] for op in _ops(after)] == ["iconst", "istore", "iload", "invokestatic", "iinc",
                                                         "goto"], after


def test_invariants_leave_nested_and_value_returning_loops(optimized, java_home):
    """``fill`` (returns an int, never by its loop): ``(k << 2) * k`` before the loop, no multiplication in it.
    ``nested``: ``k * k`` before the outer loop that never exits, none inside either loop. ``maybeServe``,
    ``enter``: the loop on one arm (of a loop that ends, for ``enter``), ``k * k`` before it, no multiplication
    in it. ``untilThrow``: ``i * 12`` stepped by 12, ``c + k * k`` before the loop."""
    _orig, out, _rows = optimized
    fill = _code(java_home, out, "fill")
    assert "imul" not in _ops(_inside(fill)) and _ops(fill).count("imul") == 1, fill
    nested = _code(java_home, out, "nested")
    outer = min(lo for lo, _hi in _loops(nested))
    assert len(_loops(nested)) == 2, nested
    assert [off for off, op, _r in nested if op == "imul"] and \
        all(off < outer for off, op, _r in nested if op == "imul"), nested
    for name in ("maybeServe", "enter"):
        code = _code(java_home, out, name)
        assert "imul" not in _ops(_inside(code)) and _ops(code).count("imul") == 1, (name, code)
    until = _code(java_home, out, "untilThrow")
    assert "imul" not in _ops(_inside(until)) and 12 in _steps(_inside(until)), until


def _calls() -> list[dt.Call]:
    c = CLASS
    calls = [dt.Call(c, "observeServe", "(I)Ljava/lang/String;", (k,)) for k in INTS]
    calls += [dt.Call(c, "observeServeFolded", "(I)Ljava/lang/String;", (k,)) for k in INTS]
    calls += [dt.Call(c, "observeNested", "(II)Ljava/lang/String;", (n, k)) for n in (-1, 0, 3) for k in INTS]
    calls += [dt.Call(c, "observeMaybeServe", "(I)Ljava/lang/String;", (k,)) for k in INTS]
    calls += [dt.Call(c, "observeEnter", "(II)Ljava/lang/String;", (n, k)) for n in (0, 2, 9) for k in (-1, 0, 1, 3)]
    calls += [dt.Call(c, "observeFill", "([II)Ljava/lang/String;", (a, k))
              for a in (None, [], [5], [1, 2, 3, 4]) for k in (-1, 0, 7)]
    # (inputs on which they end soon: with c = MAX_VALUE neither would)
    calls += [dt.Call(c, name, "(II)I", (x, k)) for name in ("untilReturn", "untilThrow")
              for x in (-5, 0, 100, 5000) for k in (0, 3, -7)]
    calls += [dt.Call(c, "meet", "(II)I", (x, c2)) for x, c2 in ((0, 1), (0, 4), (1, 13), (-1, -2))]
    # the loop without effects never ends: still running after 300 ms in its thread, on both sides
    calls += [dt.Call(c, "spinsFor", "(II)Z", (x, 300)) for x in (0, -7)]
    return calls


def test_rewritten_methods_behave_like_the_originals(optimized, java_home):
    orig, out, _rows = optimized
    calls = _calls()
    result = dt.compare(orig, out, calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared == len(calls)
    spins = dt.run_jvm(out, [dt.Call(CLASS, "spinsFor", "(II)Z", (3, 300))], java_home=java_home)
    assert (spins[0].kind, spins[0].value) == ("RET", "1"), spins  # true: still running


def test_a_loop_without_effects_is_its_jump_alone(optimized, java_home, tmp_path):
    """``spin`` computes nothing anyone sees and never ends: the full stage for size (the round trip, proved by
    the self-check) leaves the loop and nothing else, which still spins on the JVM."""
    orig, _out, _rows = optimized
    small = tmp_path / "size"
    _, report = optimize_input(orig / f"{CLASS}.class", small / f"{CLASS}.class", Stage.FULL, goal=Goal.SIZE)
    row = next(m for m in report.methods if m.name == "spin")
    assert row.status == "rewritten", row.reason
    assert [(op, rest) for _o, op, rest in _code(java_home, small, "spin")] == [("goto", "0")]
    spins = dt.run_jvm(small, [dt.Call(CLASS, "spinsFor", "(II)Z", (5, 300))], java_home=java_home)
    assert (spins[0].kind, spins[0].value) == ("RET", "1"), spins


def test_validate_proves_the_rewritten_methods(optimized):
    orig, out, _rows = optimized
    report = validate_inputs(orig, out, ValidateOptions(method_timeout=10.0))
    rows = {p.name: p for p in report.pairs}
    for name in REWRITTEN:
        assert rows[name].verdict is Verdict.EQUIVALENT, (name, rows[name].reason)


# -- mutants of the emitted code -----------------------------------------------------------------------------
def _method(cf: ClassFile, name: str) -> MethodInfo:
    return next(m for m in cf.methods if m.name == name)


def _code_bytes(m: MethodInfo) -> bytes:
    return next(a.data for a in m.attributes if a.name == "Code")


def _with_code(m: MethodInfo, data: bytes) -> MethodInfo:
    return MethodInfo(m.access, m.name_index, m.descriptor_index,
                      [Attribute(a.name_index, a.name, data) if a.name == "Code" else a for a in m.attributes],
                      m.name, m.descriptor)


def _mutate(cf: ClassFile, name: str, mutation: str) -> bytes:
    """Method ``name``'s optimized Code attribute with one change, its layout (and so its frames) kept:
    ``drop-effect``: the loop's ``invokestatic tick`` as ``pop; nop; nop``; ``wrong-step``: the loop's ``iinc``
    steps one more; ``wrong-constant``: ``iconst_3`` (a shift count) as ``iconst_4``."""
    code = read_code(_code_bytes(_method(cf, name)), cf.pool)
    raw = bytearray(code.code)
    insns = decode(bytes(raw))
    if mutation == "drop-effect":
        at = next(i.offset for i in insns if i.opcode == 0xB8)  # invokestatic
        raw[at:at + 3] = bytes([0x57, 0x00, 0x00])  # pop, nop, nop
    elif mutation == "wrong-step":
        at = next(i.offset for i in insns if i.opcode == 0x84 and not i.wide)  # iinc index const
        raw[at + 2] = (raw[at + 2] + 1) & 0xFF
    else:
        at = next(i.offset for i in insns if i.opcode == 0x06)  # iconst_3
        raw[at] = 0x07  # iconst_4
    return write_code(replace(code, code=bytes(raw)))


MUTANTS = [("serve", "drop-effect"), ("serve", "wrong-step"), ("untilReturn", "wrong-step"),
           ("fill", "wrong-constant")]


def _pair(optimized) -> tuple[ClassFile, ClassFile, ClassHierarchy]:
    orig, out, _rows = optimized
    return (read_class((orig / f"{CLASS}.class").read_bytes()), read_class((out / f"{CLASS}.class").read_bytes()),
            ClassHierarchy([orig]))


@pytest.mark.parametrize("method,mutation", MUTANTS, ids=[f"{m}-{x}" for m, x in MUTANTS])
def test_the_self_check_refuses_a_mutant(method, mutation, optimized):
    """The self-check (what the pipeline calls) proves the optimized code of a loop that never exits against the
    original, and refuses the same code with one mutation. (The optimized class's constant pool extends the
    original's, so both codes are read in it.)"""
    orig_cf, opt_cf, hierarchy = _pair(optimized)
    original = _with_code(_method(opt_cf, method), _code_bytes(_method(orig_cf, method)))
    rules = proof_rules()
    good = prove_rewrite(opt_cf, original, _code_bytes(_method(opt_cf, method)), hierarchy, rules,
                         DEFAULT_WORK_BUDGET.proof())
    assert good.proved, good.reason
    bad = prove_rewrite(opt_cf, original, _mutate(opt_cf, method, mutation), hierarchy, rules,
                        DEFAULT_WORK_BUDGET.proof())
    assert not bad.proved, f"the {mutation} mutant of {method} was proved"


def _mutant_tree(optimized, where: Path, mutants: list[tuple[str, str]]) -> Path:
    """The optimized class with ``mutants`` applied (they verify: each keeps the optimized code's layout)."""
    _orig_cf, cf, _h = _pair(optimized)
    for method, mutation in mutants:
        m = _method(cf, method)
        cf.methods[cf.methods.index(m)] = _with_code(m, _mutate(cf, method, mutation))
    where.mkdir()
    (where / f"{CLASS}.class").write_bytes(write_class(cf))
    return where


@pytest.mark.slow  # the slow tier: 6 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_validate_does_not_prove_the_mutants(optimized, java_home, tmp_path):
    """The mutants with a wrong value (one class): ``validate`` proves none and shows the ones whose difference
    it can see (a returned value, an array's contents) not equivalent; each differs from the original on the
    JVM. The dropped call (another class): not proved, and on the JVM the loop spins where the original's
    ``tick`` ended it."""
    orig, _out, _rows = optimized
    values = _mutant_tree(optimized, tmp_path / "values", MUTANTS[1:])
    report = validate_inputs(orig, values, ValidateOptions(method_timeout=10.0))
    rows = {p.name: p for p in report.pairs}
    assert rows["serve"].verdict is not Verdict.EQUIVALENT, rows["serve"].reason  # a static's value: unseen
    for name in ("untilReturn", "fill"):
        assert rows[name].verdict is Verdict.NOT_EQUIVALENT, (name, rows[name].reason)
    wrappers = {"observeServe", "untilReturn", "observeFill"}
    result = dt.compare(orig, values, [c for c in _calls() if c.name in wrappers], java_home=java_home,
                        timeout_ms=5000)
    assert {m.call.name for m in result.mismatches} == wrappers, result.report()

    dropped = _mutant_tree(optimized, tmp_path / "dropped", MUTANTS[:1])
    # it spins: "not proved" is what is asked, no need to wait for the JVM
    report = validate_inputs(orig, dropped, ValidateOptions(method_timeout=3.0))
    row = next(p for p in report.pairs if p.name == "serve")
    assert row.verdict is not Verdict.EQUIVALENT, row.reason
    call = [dt.Call(CLASS, "observeServe", "(I)Ljava/lang/String;", (2,))]
    before = dt.run_jvm(orig, call, java_home=java_home, timeout_ms=1000)
    after = dt.run_jvm(dropped, call, java_home=java_home, timeout_ms=1000)
    assert before[0].kind == "RET" and after[0].kind == "TIMEOUT", (before, after)


#: drops every loop, the heap's too: wrong for a loop that may not end (docs/axioms.md)
EVAL_DROP = "group user.wrong\nrule eval-drop: (eval[$l] ?x ?i) => ?x\n"


@pytest.mark.slow  # the slow tier: 6 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_a_rule_that_drops_a_loop_that_never_ends_is_refused(optimized, java_home, tmp_path, monkeypatch):
    """``spin`` never ends and has no effect: ``eval-drop`` makes it ``return 0``. The self-check refuses that
    code; without the self-check it is emitted, ``validate`` does not prove it (it shows it not equivalent when
    its run sees the original still running where the mutant returned) and on the JVM it no longer spins."""
    orig, _out, _rows = optimized
    ax = tmp_path / "drop.ax"
    ax.write_text(EVAL_DROP)
    rows = _optimize(orig, tmp_path / "checked", monkeypatch, RuleOptions((ax,)))
    assert rows["spin"].status == "unchanged" and rows["spin"].reason.startswith("self-check: "), rows["spin"]
    monkeypatch.setattr(pipeline, "_self_check", lambda *args, **kwargs: None)
    ax2 = tmp_path / "drop-again.ax"  # another value: not the cached rule set
    ax2.write_text(EVAL_DROP)
    wrong = tmp_path / "wrong"
    rows = _optimize(orig, wrong, monkeypatch, RuleOptions((ax2,)))
    assert rows["spin"].status == "rewritten" and not _loops(_code(java_home, wrong, "spin")), rows["spin"]
    monkeypatch.undo()
    report = validate_inputs(orig, wrong, ValidateOptions(method_timeout=4.0))
    row = next(p for p in report.pairs if p.name == "spin")
    # not equivalent when its JVM run sees the original still running where the mutant returned; under load
    # that run may be stopped before it shows it (unknown): never proved either way
    assert row.verdict is not Verdict.EQUIVALENT, row.reason
    if row.verdict is Verdict.NOT_EQUIVALENT:
        assert "still running" in row.reason, row.reason
    spins = dt.run_jvm(wrong, [dt.Call(CLASS, "spinsFor", "(II)Z", (0, 300))], java_home=java_home)
    assert (spins[0].kind, spins[0].value) == ("RET", "0"), spins  # false: it returned
