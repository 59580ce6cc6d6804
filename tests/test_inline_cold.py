"""Paths that end in a throw priced as cold, and inlining offered only where it can pay (issue 16 item 1,
session 18): ``pegextract/cost.py`` (``cold_nodes``, ``COLD_DIVISOR``), ``codecost.py`` (``cold_blocks``),
``rules/inline.py`` (``CalleeSource.dead_loops_only``, ``CalleeSource.max_growth``, ``Body.value_only``).

The fixture is ``fixtures/src/inline/inl/Cold.java``: callees whose check allocates its exception, as
commons-lang3's ``Validate`` does. Each shape is read off the optimizer's output under the default rules (the
emitted-cost rule on; the per-method size allowance, ``SizeBudget.METHOD``, so that a rewrite is judged by its own
allowance rather than by the other methods of this small input), verified (``-Xverify:all``), run against the
original on the JVM, and proved by ``validate``. Session 19: the self-check proves an inlined null check and a
callee's choice returned in each arm (``rules/policy.py`` ``PROOF_GROUPS``), and refuses the null check's mutants
(the wrong exception, the wrong arm), which ``validate`` shows different when written by hand.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

import difftest as dt
from conftest import compile_versions, javac_command, validate_rows
from support.javac_cache import run_javac
from peggy_jvm.choices import SizeBudget
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.bytecode import decode
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.codecost import COLD_DIVISOR, WEIGHTS, TAKEN_EXTRA, Kind, cold_blocks, price_instructions
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.nodes import MethodRef
from peggy_jvm.peg.build import build_peg
from peggy_jvm.peg.ops import OPS
from peggy_jvm.pegextract import cost as pegcost
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.rules.inline import Body, CalleeSource, choose_bodies
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "src" / "inline" / "inl"
_INVOKES = {op.INVOKESTATIC, op.INVOKESPECIAL, op.INVOKEVIRTUAL, op.INVOKEINTERFACE}

#: ``if (x < 0) throw new E(); return x;`` as javac writes it (pool indices arbitrary): the block at 4 ends in an
#: ``athrow`` no handler catches
CHECK = bytes([0x1a, 0x9c, 0x00, 0x0b,  # 0: iload_0; ifge 12
               0xbb, 0x00, 0x02, 0x59, 0xb7, 0x00, 0x03, 0xbf,  # 4: new #2; dup; invokespecial #3; athrow
               0x1a, 0xac])  # 12: iload_0; ireturn


def test_a_block_that_ends_in_an_uncaught_throw_is_priced_cold():
    insns = decode(CHECK)
    assert cold_blocks(insns) == {4}
    W = WEIGHTS
    hot = W[Kind.LOCAL] + W[Kind.BRANCH] + TAKEN_EXTRA // 2 + W[Kind.LOCAL] + W[Kind.RETURN]
    cold = W[Kind.NEW] + W[Kind.STACK] + W[Kind.INVOKE_STATIC] + W[Kind.THROW]
    assert price_instructions(insns).cost == hot + cold // COLD_DIVISOR == 52  # 10 + 42, was 431
    # caught by a handler of the method (which returns): the throw may go on with the method, so it is not cold
    assert cold_blocks(insns, [(4, 12, 12)]) == set()
    assert price_instructions(insns, [(4, 12, 12)]).cost == hot + cold


def _peg(classes: Path, cls: str, name: str):
    cf = read_class((classes / "inl" / f"{cls}.class").read_bytes())
    m = next(x for x in cf.methods if x.name == name)
    return cf, m, build_peg(lift_method(cf, m, None))


@pytest.fixture(scope="module")
def built(java_home, tmp_path_factory):
    src = tmp_path_factory.mktemp("inline-cold") / "src"
    run_javac([*javac_command(java_home), "-g", "-d", str(src), str(FIXTURES / "Cold.java"),
               str(FIXTURES / "Loops.java")], check=True)
    out = src.parent / "out"
    _, report = optimize_input(src, out, Stage.FULL, size_budget=SizeBudget.METHOD)
    return src, out, {(m.class_name.rpartition("/")[2], m.name): m for m in report.methods}


def test_the_peg_model_prices_what_only_a_throw_needs_as_cold(built):
    src, _, _ = built
    _, _, peg = _peg(src, "Cold", "positive")
    cold = pegcost.cold_nodes(peg)
    ops = {peg.nodes[n].op for n in cold}
    assert {"new", "const.a", "throw"} <= ops, ops  # the exception (`new` runs its constructor), its message
    hot = set(peg.reachable()) - cold
    assert {peg.nodes[n].op for n in hot} >= {"phi", "return"}  # the test and the return are not cold
    expected = sum(OPS[peg.nodes[n].op].cost for n in hot) + sum(OPS[peg.nodes[n].op].cost for n in cold) \
        / pegcost.COLD_DIVISOR
    assert pegcost.peg_cost(peg) == pytest.approx(expected)
    assert pegcost.peg_cost(peg) < OPS["invoke.static"].cost  # the check costs less than a call now


def _invokes(classes: Path, cls: str, name: str) -> list[str]:
    cf = read_class((classes / "inl" / f"{cls}.class").read_bytes())
    m = next(x for x in cf.methods if x.name == name)
    code = read_code(m.code_attribute().data, cf.pool)
    return [cf.pool.member_ref(i.arg).name for i in read_instructions(code) if i.opcode in _INVOKES]


def _opcodes(classes: Path, cls: str, name: str) -> list[int]:
    cf = read_class((classes / "inl" / f"{cls}.class").read_bytes())
    m = next(x for x in cf.methods if x.name == name)
    return [i.opcode for i in read_instructions(read_code(m.code_attribute().data, cf.pool))]


def test_a_check_that_allocates_is_inlined_where_its_bytes_fit(built):
    """``scaled`` calls ``positive`` (``throw new IllegalArgumentException(..)``): its test and throw now in place
    under the default rule (the PEG model priced the ``new`` and the constructor as the call before: "cannot
    pay"), the emitted code cheaper (the call's 180 against a test, a jump and the cold block's tenth)."""
    src, out, report = built
    r = report[("Cold", "scaled")]
    assert r.status == "rewritten" and r.inlined == 1, (r.status, r.reason, r.inlined)
    assert _invokes(src, "Cold", "scaled") == ["positive"]
    assert _invokes(out, "Cold", "scaled") == ["<init>"]  # the exception's constructor, on the cold path
    assert _opcodes(out, "Cold", "scaled").count(op.ATHROW) == 1
    assert r.emitted_cost_after < r.emitted_cost_before and r.bytes_after > r.bytes_before


def test_calls_that_cannot_pay_stay_calls(built):
    """``tiny``: the check's bytes exceed what the method may grow by (``CalleeSource.max_growth``); ``pick``:
    ``checkIndex``'s two tests do not fit either, but its value, a function of its arguments, is known at the call
    (``Body.value_only``), so the rewrite that reads ``i`` for ``x`` is made, the call kept; ``sumChecked``: a call
    in a loop (the results cannot be split there); ``Loops.callsSum``: a loop callee whose loop would stay."""
    src, out, report = built
    assert _invokes(out, "Cold", "tiny") == ["positive"]
    pick = report[("Cold", "pick")]
    assert pick.status == "rewritten" and _invokes(out, "Cold", "pick") == ["checkIndex"], pick.reason
    assert pick.bytes_after <= pick.bytes_before
    assert _invokes(out, "Cold", "sumChecked") == ["positive"]
    assert _invokes(out, "Loops", "callsSum") == ["sum"]
    assert _invokes(out, "Loops", "callsWaste") == []  # a dead loop: inlined and deleted


def test_an_inlined_null_check_is_proved_by_the_self_check(built):
    """``weigh`` inlines ``notNull`` (``if (o == null) throw new NullPointerException(what); return o;``). The
    callee's body enters the proof as built, its test ``o != null`` (javac's ``ifnonnull``), while the emitted code
    is lifted with every ``!=`` test as ``==`` with its arms swapped (validate/branchshape.py): the two meet only
    through ``not-eq-ref`` and ``phi-not`` (``compare.ref.identity``, among the self-check's rules since session
    19, rules/policy.py ``PROOF_GROUPS``; before, the method kept its call: "calls only in ORIG:
    inl/Cold.notNull")."""
    _, out, report = built
    r = report[("Cold", "weigh")]
    assert r.status == "rewritten" and r.inlined == 1, (r.status, r.reason)
    assert _invokes(out, "Cold", "weigh") == ["<init>", "length"]  # the NPE's constructor on the cold path
    assert _opcodes(out, "Cold", "weigh").count(op.ATHROW) == 1
    assert r.emitted_cost_after < r.emitted_cost_before


def test_an_inlined_choice_returned_in_each_arm_is_proved_by_the_self_check(built):
    """``onOff`` returns ``choose(b, "on", "off")``: inlined, the original's one return of the callee's choice
    is emitted as a return in each arm, which the self-check proves through ``phi-return`` (``peg.exit``, among
    its rules since session 19; before, "calls only in ORIG: inl/Cold.choose")."""
    src, out, report = built
    r = report[("Cold", "onOff")]
    assert r.status == "rewritten" and r.inlined == 1, (r.status, r.reason)
    assert _invokes(src, "Cold", "onOff") == ["choose"] and _invokes(out, "Cold", "onOff") == []
    assert _opcodes(out, "Cold", "onOff").count(op.ARETURN) == 2


def _mutated(body: Body, mutant: str) -> Body:
    """``notNull``'s body with the wrong exception (``IllegalArgumentException`` built in place of the
    ``NullPointerException``) or the wrong arm (it throws when ``o`` is not null, returns it when it is)."""
    from peggy_jvm.peg.graph import Node
    nodes = list(body.peg.nodes)
    if mutant == "exception":
        (n,) = [k for k, nd in enumerate(nodes) if nd.op == "new"]
        _, ctor = nodes[n].attr
        iae = "java/lang/IllegalArgumentException"
        nodes[n] = Node("new", (iae, MethodRef(iae, "<init>", ctor.descriptor)), nodes[n].children)
    else:
        cond, a, b = nodes[body.peg.root].children
        nodes[body.peg.root] = Node("phi", None, (cond, b, a))
    return replace(body, peg=replace(body.peg, nodes=nodes))


@pytest.mark.parametrize("mutant", ["exception", "arm"])
def test_the_self_check_refuses_a_wrong_inlined_null_check(built, tmp_path, monkeypatch, mutant):
    """A mutant of ``notNull``'s body in the optimizer's saturation only: extraction inlines it into ``weigh`` as it
    inlines the right one, and the self-check, which reads the true body, keeps the original code."""
    import shutil
    import peggy_jvm.saturate as sat
    src, _, _ = built
    real = sat.inline_calls
    seen: list[str] = []

    def wrong(eg, peg, mapping, bodies):
        out = {}
        for n, b in bodies.items():
            if getattr(peg.nodes[n].attr, "name", None) == "notNull":
                seen.append(mutant)
                b = _mutated(b, mutant)
            out[n] = b
        return real(eg, peg, mapping, out)

    monkeypatch.setattr(sat, "inline_calls", wrong)
    (tmp_path / "src" / "inl").mkdir(parents=True)
    shutil.copy(src / "inl" / "Cold.class", tmp_path / "src" / "inl")
    _, report = optimize_input(tmp_path / "src", tmp_path / "out", Stage.FULL, size_budget=SizeBudget.METHOD)
    r = next(m for m in report.methods if m.name == "weigh")
    assert seen and r.inlined == 1, (seen, r.inlined)  # the mutant was extracted, as the right body is
    assert r.status == "unchanged" and r.reason.startswith("self-check"), (r.status, r.reason)
    assert _invokes(tmp_path / "out", "Cold", "weigh") == ["notNull", "length"]


#: ``weigh``'s call of ``notNull`` against the check inlined by hand: right, with the wrong exception, with the
#: wrong arm (``notNull`` of a String, not generic: the generic one's caller casts its result, which the
#: optimizer's code keeps and code written by hand would not)
_NULL_CHECKS = {"right": "if (s == null) throw new NullPointerException(\"s\");",
                "exception": "if (s == null) throw new IllegalArgumentException(\"s\");",
                "arm": "if (s != null) throw new NullPointerException(\"s\");"}
_NULL_CLASS = """package inl;
public final class N {
    static int calls;
    static String notNull(String o, String what) {
        if (o == null) throw new NullPointerException(what);
        return o;
    }
%s
}
"""


def test_validate_proves_a_null_check_inlined_by_hand_and_shows_the_wrong_ones_different(java_home, tmp_path):
    trees = compile_versions(java_home, tmp_path, "N.java", {
        "orig": _NULL_CLASS % "\n".join(f"    static int {name}(String s, int k) {{ String t = notNull(s, \"s\"); "
                                        "calls++; return t.length() * k + calls; }" for name in _NULL_CHECKS),
        "opt": _NULL_CLASS % "\n".join(f"    static int {name}(String s, int k) {{ {check} calls++; "
                                       "return s.length() * k + calls; }" for name, check in _NULL_CHECKS.items())})
    rows = validate_rows(trees, "inl/N", method_timeout=10.0)
    assert rows["right"].verdict is Verdict.EQUIVALENT, rows["right"].reason
    for name in ("exception", "arm"):
        assert rows[name].verdict is Verdict.NOT_EQUIVALENT, (name, rows[name].verdict, rows[name].reason)


def test_loop_callees_are_offered_only_where_their_loops_die(built):
    """The optimizer's callees (``dead_loops_only``) leave out ``sum`` at ``callsSum`` (its value is read: its
    loop would stay, a ``pass`` 50 against the call's 20) and keep ``waste`` at ``callsWaste`` (its loop feeds
    nothing it returns); the validator's (without the flag) offer both."""
    src, _, _ = built
    for name, offered in (("callsSum", False), ("callsWaste", True)):
        cf, m, peg = _peg(src, "Loops", name)
        mine = CalleeSource(cf, None, None, True, loops=True, dead_loops_only=True)
        theirs = CalleeSource(cf, None, None, True, loops=True)
        assert bool(choose_bodies(peg, [peg.root], [(peg, mine)], throws=True)) is offered, name
        assert len(choose_bodies(peg, [peg.root], [(peg, theirs)], throws=True)) == 1, name


def test_growth_bound_offers_only_the_value_of_a_check_that_does_not_fit(built):
    src, _, _ = built
    cf, m, peg = _peg(src, "Cold", "pick")
    ref = MethodRef("inl/Cold", "checkIndex", "(II)I")
    body = CalleeSource(cf, None, None, True).body("static", ref)
    assert isinstance(body, Body) and body.throws and body.growth == 21 - 4 - 2
    small = CalleeSource(cf, None, None, True, max_growth=len(_opcodes(src, "Cold", "pick")) // 4)
    (got,) = choose_bodies(peg, [peg.root], [(peg, small)], throws=True).values()
    assert got.value_only
    (full,) = choose_bodies(peg, [peg.root], [(peg, CalleeSource(cf, None, None, True))], throws=True).values()
    assert not full.value_only


CALLS = [
    *(dt.Call("inl/Cold", "scaled", "(II)I", (x, k)) for x in (-3, 0, 1, 9) for k in (-7, 0, 2, 13)),
    *(dt.Call("inl/Cold", "weigh", "(Ljava/lang/String;I)I", (s, k)) for s in (None, "", "abc") for k in (0, 5)),
    *(dt.Call("inl/Cold", "pick", "([III)I", (a, i, j)) for a in (None, [], [4, -2, 9]) for i in (-1, 0, 2, 3)
      for j in (0, 1)),
    *(dt.Call("inl/Cold", "tiny", "(I)I", (x,)) for x in (-1, 0, 4)),
    *(dt.Call("inl/Cold", "onOff", "(Z)Ljava/lang/String;", (b,)) for b in (False, True)),
    *(dt.Call("inl/Cold", "sumChecked", "([I)I", (a,)) for a in (None, [], [1, 2], [3, -1])),
    *(dt.Call("inl/Loops", m, "(I)I", (n,)) for m in ("callsSum", "callsWaste") for n in (-1, 0, 5)),
]


def test_the_output_verifies_behaves_identically_and_is_proved(built, java_home, verifier):
    src, out, _ = built
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
    result = dt.compare(src, out, CALLS, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [] and result.compared == len(CALLS), result.report()
    thrown = {(c.name, r.exception) for c, r in zip(CALLS, result.rewritten) if r.kind == "THROW"}
    # the inlined throws, compared: positive's in scaled, notNull's in weigh
    assert {("scaled", "java/lang/IllegalArgumentException"), ("weigh", "java/lang/NullPointerException")} <= thrown, \
        thrown
    rows = {(p.class_name, p.name): p for p in validate_inputs(src, out, ValidateOptions(method_timeout=10.0)).pairs}
    assert all(p.verdict is Verdict.EQUIVALENT for p in rows.values()), \
        [(k, p.reason) for k, p in rows.items() if p.verdict is not Verdict.EQUIVALENT]
