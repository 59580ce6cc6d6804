"""Inlining's hard cases (issue 16 item 1) on the fixtures of ``fixtures/src/inline/inl``: callees that throw
(implicitly, and explicitly: ``Raise``), callees with loops, class initialization, monitors and null receivers
(peggy_jvm/rules/inline.py).

Each case is checked the same four ways: the shape of the optimized method (no ``invoke*`` left where the callee
is inlined, the call kept where exactness is not reachable), the refusal's reason (``CalleeSource.body``), the
optimized classes verified (``-Xverify:all``) and run against the originals on the JVM (exception types
included), and ``validate`` proving every inlined method. Hand-inlined versions that drop what a refusal keeps
(the null check, a class's initialization, an explicit throw), and wrong inlinings of an explicit throw (dropped,
another message or type, an effect moved across it), are shown not equivalent by ``validate`` and different on
the JVM.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import difftest as dt
from conftest import compile_versions, javac_command, keep_every_rewrite
from support.javac_cache import run_javac
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.ir.nodes import MethodRef
from peggy_jvm.pipeline import Stage, optimize_input
from peggy_jvm.rules.inline import Body, CalleeSource
from peggy_jvm.validate import ValidateOptions, Verdict, validate_inputs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "src" / "inline" / "inl"
_INVOKES = {op.INVOKESTATIC, op.INVOKESPECIAL, op.INVOKEVIRTUAL, op.INVOKEINTERFACE}

#: (class, method) whose calls of the fixtures' callees are inlined: no invoke left
INLINED = [("Throws", "callsDiv"), ("Throws", "callsElem"), ("Throws", "around"), ("Throws", "order"),
           ("Loops", "sqInLoop"), ("Loops", "callsWaste"), ("Init", "staticCaller"), ("Init", "noInit"), ("Init", "otherInit"),
           ("Init", "relaxed"), ("Nulls", "self"), ("Nulls", "runSelf"),  # runSelf: the receiver is the object it constructs, never null
           # explicit throws: the test and the throw in place (passedIn ...); a constant argument folds it away
           ("Raise", "constant"), ("Raise", "passedIn"), ("Raise", "passedNull"), ("Raise", "effects"),
           ("Raise", "inArm")]
#: explicit throws kept in place: (class, method) -> how many athrow the inlined code has
THROWS_IN_PLACE = {("Raise", "passedIn"): 1, ("Raise", "passedNull"): 1, ("Raise", "effects"): 1,
                   ("Raise", "inArm"): 1, ("Raise", "twice"): 2}
#: (class, method) -> (the call it keeps: kind, owner, name, descriptor; why, as CalleeSource.body says it)
KEPT = {
    ("Init", "instanceCaller"): (("static", "Init", "add", "(I)I"),
                                 "class initialization (inl/Init has a static initializer)"),
    ("Init", "divFirst"): (("static", "Div", "get", "(I)I"), "class initialization (inl/Div has a static initializer)"),
    ("Init", "firstUse"): (("static", "Late", "get", "(I)I"),
                           "class initialization (inl/Late has a static initializer)"),
    ("Sync", "callsLocked"): (("static", "Sync", "locked", "(I)I"), "synchronized"),
    ("Sync", "callsLockedThis"): (("special", "Sync", "lockedThis", "(I)I"), "synchronized"),
    ("Sync", "callsBlock"): (("static", "Sync", "block", "(I)I"), "has monitorexit"),
}
#: calls kept for a reason of the call site, not of the callee: a handler of the caller reads the call's
#: exception (Throws.guarded), the receiver may be null (Nulls.other, Nulls.otherConstant)
KEPT_AT_SITE = [("Throws", "guarded"), ("Nulls", "other"), ("Nulls", "otherConstant"),
                # a callee that throws where the caller's results cannot be split at the call: a result after
                # the join of a conditional call (afterJoin), a call in a loop (inLoop)
                ("Raise", "afterJoin"), ("Raise", "inLoop"),
                # a callee with a loop: at a call a loop of the caller varies (inLoop), and where the loop costs
                # more than the call (callsSum: a loop's pass is priced 50, a call 20)
                ("Loops", "inLoop"), ("Loops", "callsSum"),
                # a throw that allocates (new IllegalArgumentException: the cost model prices it as the call)
                ("Throws", "callsCheck")]

INTS = [(0,), (1,), (-3,), (7,), (2147483647,), (-2147483648,)]
ARRAYS = [None, [], [5], [4, 9, -2]]
CALLS = [
    *(dt.Call("inl/Throws", "callsDiv", "(II)I", (a, b)) for a in (7, -9, -2147483648) for b in (0, 2, -1)),
    *(dt.Call("inl/Throws", m, "([II)I", (a, i)) for m in ("callsElem", "around", "observe")
      for a in ARRAYS for i in (0, 2, -1)),
    *(dt.Call("inl/Throws", "order", "([II)I", (a, b)) for a in ARRAYS for b in (0, 3)),
    *(dt.Call("inl/Throws", m, "(I)I", a) for m in ("callsCheck",) for a in INTS),
    *(dt.Call("inl/Throws", "guarded", "(II)I", (a, b)) for a in (5, -8) for b in (0, 2)),
    *(dt.Call("inl/Loops", m, "(I)I", (n,)) for m in ("callsSum", "inLoop", "sqInLoop", "callsWaste")
      for n in (-1, 0, 1, 5, 40)),
    *(dt.Call("inl/Init", m, "(I)I", a) for m in ("staticCaller", "viaInstance", "otherInit", "noInit", "firstUse",
                                                  "relaxed", "divFirst", "probeDiv") for a in INTS),
    *(dt.Call("inl/Sync", m, "(I)I", a) for m in ("callsLocked", "callsBlock", "run") for a in INTS),
    *(dt.Call("inl/Nulls", "runSelf", "(II)I", (v, k)) for v in (0, 5) for k in (-1, 3)),
    *(dt.Call("inl/Nulls", "runOther", "(ZI)I", (none, k)) for none in (True, False) for k in (-1, 3)),
    *(dt.Call("inl/Nulls", "runConstant", "(Z)I", (none,)) for none in (True, False)),
    dt.Call("inl/Raise", "constant", "()I", ()),
    *(dt.Call("inl/Raise", m, "(I)I", a) for m in ("decided", "passedIn", "passedNull", "effects", "inLoop")
      for a in INTS),
    *(dt.Call("inl/Raise", m, "(II)I", (x, y)) for m in ("twice", "inArm", "afterJoin", "observe")
      for x in (-1, 0, 2) for y in (-2, 0, 1, 3, 5)),
]


@pytest.fixture(scope="module")
def built(java_home, tmp_path_factory):
    src = tmp_path_factory.mktemp("inline-cases") / "src"
    run_javac([*javac_command(java_home), "-g", "-d", str(src), *map(str, sorted(FIXTURES.glob("*.java")))],
              check=True)
    out = src.parent / "out"
    with pytest.MonkeyPatch.context() as mp:
        keep_every_rewrite(mp)
        _, report = optimize_input(src, out, Stage.FULL)
    return src, out, {(m.class_name.rpartition("/")[2], m.name): m for m in report.methods}


def _opcodes(classes: Path, cls: str, name: str) -> list[int]:
    cf = read_class((classes / "inl" / f"{cls}.class").read_bytes())
    m = next(x for x in cf.methods if x.name == name)
    return [i.opcode for i in read_instructions(read_code(m.code_attribute().data, cf.pool))]


def _invokes(classes: Path, cls: str, name: str) -> list[str]:
    """The methods ``cls.name`` calls, in code order, as ``owner.name``."""
    cf = read_class((classes / "inl" / f"{cls}.class").read_bytes())
    m = next(x for x in cf.methods if x.name == name)
    code = read_code(m.code_attribute().data, cf.pool)
    refs = [cf.pool.member_ref(i.arg) for i in read_instructions(code) if i.opcode in _INVOKES]
    return [f"{r.owner.rpartition('/')[2]}.{r.name}" for r in refs]


def test_inlined_callees_leave_no_call(built):
    src, out, report = built
    for cls, name in INLINED:
        assert _invokes(src, cls, name), (cls, name)  # the fixture does call
        assert report[(cls, name)].status == "rewritten", (cls, name, report[(cls, name)].reason)
        assert report[(cls, name)].inlined == 1, (cls, name, report[(cls, name)].inlined)
        # the constructor runSelf's receiver comes from stays (new and its <init> are the allocation)
        assert [c for c in _invokes(out, cls, name) if not c.endswith(".<init>")] == [], (cls, name)


def test_explicit_throws_are_inlined_in_place(built):
    """A callee's explicit throw becomes the caller's own test and ``athrow`` (rules/inline.py: an ``athrow``
    effect on the call's heap, which the reverter emits in place), after the effects before the call and before
    those after it: ``effects``' first store comes before the test, its second only on the normal path."""
    src, out, report = built
    for (cls, name), throws in THROWS_IN_PLACE.items():
        assert report[(cls, name)].status == "rewritten", (cls, name, report[(cls, name)].reason)
        assert report[(cls, name)].inlined == throws, (cls, name, report[(cls, name)].inlined)
        assert [c for c in _invokes(out, cls, name) if not c.endswith(".<init>")] == [], (cls, name)
        assert _opcodes(src, cls, name).count(op.ATHROW) == 0 and _opcodes(out, cls, name).count(op.ATHROW) == throws
    code = _opcodes(out, "Raise", "effects")
    first, test, store2, throw = (code.index(op.PUTSTATIC), next(i for i, c in enumerate(code) if 0x99 <= c <= 0xa6),
                                  len(code) - 1 - code[::-1].index(op.PUTSTATIC), code.index(op.ATHROW))
    assert first < test < store2 and code.count(op.PUTSTATIC) == 2, code
    # the normal path returns before the throw's block: the second store is not on the throw's path
    assert code.index(op.IRETURN) < throw and store2 < code.index(op.IRETURN), code

def test_callees_that_cannot_be_inlined_exactly_stay_calls_with_their_reason(built):
    src, out, report = built
    classes = {p.stem: p.read_bytes() for p in (src / "inl").glob("*.class")}
    program = {f"inl/{k}": v for k, v in classes.items()}
    for (cls, name), ((kind, owner, callee, desc), why) in KEPT.items():
        assert f"{owner}.{callee}" in _invokes(out, cls, name), (cls, name, report[(cls, name)].reason)
        caller = read_class(classes[cls])
        static = next(m for m in caller.methods if m.name == name).is_static
        got = CalleeSource(caller, None, program, static).body(kind, MethodRef(f"inl/{owner}", callee, desc))
        assert got == why, (cls, name, got)
    for cls, name in KEPT_AT_SITE:
        assert _invokes(out, cls, name) == _invokes(src, cls, name), (cls, name)


def test_a_static_callers_answer_is_not_an_instance_callers(built):
    """``Init.add`` (its class has a static initializer) is inlined into the static ``staticCaller`` (its class is
    initialized while it runs) and not into ``instanceCaller`` (``this`` may escape ``<clinit>`` to another
    thread). The optimizer asks once per caller: a flattened body cached for one caller of a class must not
    answer for another (the full stage once shared the static caller's body with the instance one)."""
    src, out, report = built
    assert _invokes(out, "Init", "staticCaller") == []
    assert _invokes(out, "Init", "instanceCaller") == ["Init.add"], report[("Init", "instanceCaller")]
    cf = read_class((src / "inl" / "Init.class").read_bytes())
    add = MethodRef("inl/Init", "add", "(I)I")
    pegs: dict = {}
    static = CalleeSource(cf, None, caller_static=True, pegs=pegs)
    instance = CalleeSource(cf, None, caller_static=False, pegs=pegs)  # the built PEGs may be shared
    assert isinstance(static.body("static", add), Body)
    assert instance.body("static", add).startswith("class initialization")


def test_optimized_fixtures_verify_and_behave_identically(built, java_home, verifier):
    src, out, _ = built
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-2000:]
    result = dt.compare(src, out, CALLS, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [], result.report()
    assert result.compared > 0.9 * len(CALLS)
    # the exceptions the inlined bodies raise are among what was compared
    thrown = {r.exception for r in result.rewritten if r.kind == "THROW"}
    assert {"java/lang/ArithmeticException", "java/lang/NullPointerException",
            "java/lang/ArrayIndexOutOfBoundsException", "java/lang/IllegalArgumentException",
            "java/lang/IllegalStateException"} <= thrown, thrown


#: inlined from another class of the input (``NoInit.twice``, and ``Holder.get``/``Rel.get``, whose classes have a
#: static initializer the bodies' first read runs): the self-check proves it given the input's classes,
#: ``validate`` given each side's input (validate/prove.py)
CROSS_CLASS = {("Init", "noInit"), ("Init", "otherInit"), ("Init", "relaxed")}


def test_validate_proves_every_inlined_method(built):
    src, out, _ = built
    rows = {(p.class_name.rpartition("/")[2], p.name): p
            for p in validate_inputs(src, out, ValidateOptions(method_timeout=10.0)).pairs}
    for key in INLINED:  # the cross-class one too: validate finds NoInit.twice's body in ORIG's input
        assert rows[key].verdict is Verdict.EQUIVALENT, (key, rows[key].reason)
    assert all(p.verdict is Verdict.EQUIVALENT for p in rows.values()), \
        [(k, p.reason) for k, p in rows.items() if p.verdict is not Verdict.EQUIVALENT]


def test_the_self_check_proves_a_body_inlined_from_another_class(built):
    from peggy_jvm.budget import DEFAULT_WORK_BUDGET
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.rules.policy import proof_rules
    from peggy_jvm.validate.selfcheck import prove_rewrite
    src, out, _ = built
    program = {f"inl/{p.stem}": p.read_bytes() for p in (src / "inl").glob("*.class")}
    hierarchy = ClassHierarchy([src])
    for cls, name in CROSS_CLASS:
        # both codes against the output's pool: it is the input's, grown at its end only
        orig, cf = read_class(program[f"inl/{cls}"]), read_class((out / "inl" / f"{cls}.class").read_bytes())
        assert cf.pool.entries[:len(orig.pool.entries)] == orig.pool.entries
        m = next(x for x in orig.methods if x.name == name)
        data = next(x for x in cf.methods if x.name == name).code_attribute().data
        callees = CalleeSource(cf, hierarchy, program, m.is_static)
        proof = prove_rewrite(cf, m, data, hierarchy, proof_rules(None), DEFAULT_WORK_BUDGET.proof(), callees)
        assert proof.proved, (cls, name, proof.reason)
        without = prove_rewrite(cf, m, data, hierarchy, proof_rules(None), DEFAULT_WORK_BUDGET.proof(),
                                CalleeSource(cf, hierarchy, None, m.is_static))
        assert not without.proved  # the proof does rest on the other class's body


# hand-inlined versions that drop what the refusals keep: the NPE of a null receiver, the class initialization a
# call triggers, the explicit throw; validate must not call any of them equivalent
DROPPED = {
    "orig": """package inl;
public final class D {
    int v;
    static int log;
    int constant() { return 3; }
    static int otherConstant(D o) { return o.constant() + 1; }
    static int check(int x) { if (x < 0) throw new IllegalArgumentException(); return x; }
    static int callsCheck(int x) { return check(x) + 1; }
    static int firstUse(int x) { return E.get(x) + log; }
}
class E {
    static { D.log = 100; }
    static int get(int x) { return x - 1; }
}
""",
    "opt": """package inl;
public final class D {
    int v;
    static int log;
    int constant() { return 3; }
    static int otherConstant(D o) { return 3 + 1; }
    static int check(int x) { if (x < 0) throw new IllegalArgumentException(); return x; }
    static int callsCheck(int x) { return x + 1; }
    static int firstUse(int x) { return x - 1 + log; }
}
class E {
    static { D.log = 100; }
    static int get(int x) { return x - 1; }
}
""",
}


@pytest.fixture(scope="module")
def dropped(java_home, tmp_path_factory):
    return compile_versions(java_home, tmp_path_factory.mktemp("inline-dropped"), "D.java", DROPPED)


def test_validate_refuses_inlining_that_drops_an_exception_or_an_initialization(dropped, java_home):
    rows = {p.name: p for p in validate_inputs(dropped["orig"], dropped["opt"],
                                               ValidateOptions(method_timeout=10.0)).pairs
            if p.class_name == "inl/D"}
    for name in ("otherConstant", "callsCheck", "firstUse"):
        assert rows[name].verdict is not Verdict.EQUIVALENT, (name, rows[name].reason)
    # and each difference is real: the JVM tells the versions apart
    calls = [dt.Call("inl/D", "otherConstant", "(Linl/D;)I", (None,)), dt.Call("inl/D", "callsCheck", "(I)I", (-1,)),
             dt.Call("inl/D", "firstUse", "(I)I", (5,))]
    result = dt.compare(dropped["orig"], dropped["opt"], calls, java_home=java_home, timeout_ms=5000)
    assert len(result.mismatches) == 3, result.report()


# inlining across the classes of one input, by hand: ``validate`` finds the callee's body in ORIG's other classes
# (under the optimizer's conditions), so the right inlining is proved; the wrong ones (a wrong constant, a class's
# initialization dropped, a possibly null receiver's NPE dropped, a callee changed on one side) are not
_ACROSS_CLASSES = """
class Y { static int twice(int x) { return x * 2; } }
class Z { static { X.log = 100; } static int get(int x) { return x - 1; } }
final class W { int three() { return 3; } }
class V { static int scale(int x) { return x * %d; } }
class Q { static { X.log = 7; } static int k = 3; static int get(int x) { return 100 / x + k; } }
class R { static { X.log = 50; } static int k = 1; static int get(int x) { return k + x; } }
class P { static int pk = 1; }
class S extends P { static { X.log = 9; } static int get(int x) { return pk + x; } static int pure(int x) { return x; } }
"""
_ACROSS_SIGNATURES = """
    static int right(int x) { %s }
    static int wrongConstant(int x) { %s }
    static int dropsInit(int x) { %s }
    static int dropsNull(W w) { %s }
    static int changed(int x) { return V.scale(x) + 1; }
    static int dividesFirst(int x) { %s }
    static int probe(int x) { try { return dividesFirst(x); } catch (ArithmeticException e) { return log; } }
    static int initFirst(int x) { %s }
"""
ACROSS = {
    "orig": "package inl;\npublic final class X {\n    static int log;" + _ACROSS_SIGNATURES % (
        "return Y.twice(x) + 1;", "return Y.twice(x) + 1;", "return Z.get(x) + log;", "return w.three() + 1;",
        "return Q.get(x) + 1;", "return R.get(x) + log;")
    + "}\n" + _ACROSS_CLASSES % 2,
    "opt": "package inl;\npublic final class X {\n    static int log;" + _ACROSS_SIGNATURES % (
        "return x * 2 + 1;", "return x * 2 + 2;", "return x - 1 + log;", "return 3 + 1;",
        "return 100 / x + Q.k + 1;", "return R.k + x + log;")
    + "}\n" + _ACROSS_CLASSES % 3,
}


@pytest.fixture(scope="module")
def across(java_home, tmp_path_factory):
    trees = compile_versions(java_home, tmp_path_factory.mktemp("inline-across"), "X.java", ACROSS)
    rows = {p.name: p for p in validate_inputs(trees["orig"], trees["opt"],
                                               ValidateOptions(method_timeout=10.0, explain=True)).pairs
            if p.class_name == "inl/X"}
    return trees, rows


def test_validate_proves_a_body_inlined_by_hand_from_another_class(across, java_home):
    trees, rows = across
    assert rows["right"].verdict is Verdict.EQUIVALENT, rows["right"].reason
    # R has a static initializer (it writes X.log), and R.get's first effect reads R.k, which runs it at the
    # same point as the call: the inlined version is proved and the JVM agrees (log read after R's <clinit>)
    assert rows["initFirst"].verdict is Verdict.EQUIVALENT, rows["initFirst"].reason
    calls = [dt.Call("inl/X", "initFirst", "(I)I", (4,)), dt.Call("inl/X", "right", "(I)I", (4,))]
    result = dt.compare(trees["orig"], trees["opt"], calls, java_home=java_home, timeout_ms=5000)
    assert result.mismatches == [] and result.compared == 2, result.report()


def test_validate_refuses_wrong_inlining_from_another_class(across, java_home):
    trees, rows = across
    for name in ("wrongConstant", "dropsInit", "changed"):  # V.scale changed in OPT: ORIG's body is inlined
        assert rows[name].verdict is Verdict.NOT_EQUIVALENT, (name, rows[name].reason)
    # Q.get divides before it reads Q.k: inlined, the ArithmeticException comes before Q's initialization
    assert rows["dividesFirst"].verdict is not Verdict.EQUIVALENT, rows["dividesFirst"].reason
    # a receiver that may be null keeps W.three a call (no W argument is generated to search with); the JVM
    # tells every wrong version apart from the original
    assert rows["dropsNull"].verdict is Verdict.UNKNOWN and "calls only in ORIG: inl/W.three" in \
        rows["dropsNull"].reason, rows["dropsNull"].reason
    calls = [dt.Call("inl/X", "wrongConstant", "(I)I", (4,)), dt.Call("inl/X", "dropsInit", "(I)I", (5,)),
             dt.Call("inl/X", "dropsNull", "(Linl/W;)I", (None,)), dt.Call("inl/X", "changed", "(I)I", (2,)),
             dt.Call("inl/X", "probe", "(I)I", (0,))]  # 7 (Q initialized, then the division) against 0
    result = dt.compare(trees["orig"], trees["opt"], calls, java_home=java_home, timeout_ms=5000)
    assert len(result.mismatches) == 5, result.report()


def test_a_first_static_access_initializes_only_its_declaring_class(across):
    """The class-initialization refusal is lifted only for a body whose first effect on every path is a static
    access of a member the callee's class itself declares: ``R.get`` (reads ``R.k``) is inlined; ``Q.get``
    (divides first), ``S.get`` (reads ``pk``, inherited from ``P``: only ``P`` would be initialized) and
    ``S.pure`` (no effect at all: the initialization would be lost) stay calls."""
    trees, _ = across
    program = {f"inl/{p.stem}": p.read_bytes() for p in (trees["orig"] / "inl").glob("*.class")}
    source = CalleeSource(read_class(program["inl/X"]), None, program, caller_static=True)
    assert isinstance(source.body("static", MethodRef("inl/R", "get", "(I)I")), Body)
    for owner, name in (("Q", "get"), ("S", "get"), ("S", "pure")):
        got = source.body("static", MethodRef(f"inl/{owner}", name, "(I)I"))
        assert got == f"class initialization (inl/{owner} has a static initializer)", (owner, name, got)
    # from an instance method of S itself (no access check: the reference is its own class's), S.get's read of
    # the inherited pk would initialize P, not S: still refused
    own = CalleeSource(read_class(program["inl/S"]), None, program, caller_static=False)
    assert own.body("static", MethodRef("inl/S", "get", "(I)I")) == \
        "class initialization (inl/S has a static initializer)"


# an explicit throw inlined by hand, right and wrong: the right one is proved (validate/prove.py splits ORIG's
# results at the call, rules/inline.py inline_bodies and inline_calls with split_roots); a dropped throw, another
# message, another type, and a store moved across the throw are not, and the JVM tells each apart (probe reads
# the message, the type and the store through a handler)
_RAISE_BODIES = {
    "right": "counter = 1; if (x < 0) throw new IllegalArgumentException(\"negative\"); counter = 2; return x + 1;",
    "dropped": "counter = 1; counter = 2; return x + 1;",
    "message": "counter = 1; if (x < 0) throw new IllegalArgumentException(\"negativ\"); counter = 2; return x + 1;",
    "type": "counter = 1; if (x < 0) throw new IllegalStateException(\"negative\"); counter = 2; return x + 1;",
    "swapped": "counter = 1; counter = 2; if (x < 0) throw new IllegalArgumentException(\"negative\"); "
               "return x + 1;",
}
_RAISE_CLASS = """package inl;
public final class T {
    static int counter;
    static int check(int x) { if (x < 0) throw new IllegalArgumentException("negative"); return x; }
    static int sumChecked(int n) {
        if (n < 0) throw new IllegalArgumentException("negative");
        int s = 0;
        for (int i = 0; i < n; i++) s += i;
        return s;
    }
%s
    static int probe(int which, int x) {
        counter = 0;
        try {
            switch (which) {
                case 0: return right(x);
                case 1: return dropped(x);
                case 2: return message(x);
                case 3: return type(x);
                default: return swapped(x);
            }
        } catch (RuntimeException e) {
            return -counter - 10 * e.getMessage().length() - (e instanceof IllegalArgumentException ? 1000 : 0);
        }
    }
}
"""
# a callee with a throw and a loop (the validator inlines loops at a call no loop varies): split the same way
_LOOP_ORIG = "    static int loopRight(int n) { return sumChecked(n) + 1; }"
_LOOP_OPT = """    static int loopRight(int n) {
        if (n < 0) throw new IllegalArgumentException("negative");
        int s = 0;
        for (int i = 0; i < n; i++) s += i;
        return s + 1;
    }"""
RAISED = {
    "orig": _RAISE_CLASS % "\n".join([*(f"    static int {name}(int x) {{ counter = 1; int v = check(x); counter = 2; "
                                        "return v + 1; }" for name in _RAISE_BODIES), _LOOP_ORIG]),
    "opt": _RAISE_CLASS % "\n".join([*(f"    static int {name}(int x) {{ {body} }}"
                                       for name, body in _RAISE_BODIES.items()), _LOOP_OPT]),
}


@pytest.fixture(scope="module")
def raised(java_home, tmp_path_factory):
    trees = compile_versions(java_home, tmp_path_factory.mktemp("inline-raised"), "T.java", RAISED)
    rows = {p.name: p for p in validate_inputs(trees["orig"], trees["opt"],
                                               ValidateOptions(method_timeout=10.0)).pairs
            if p.class_name == "inl/T"}
    return trees, rows


def test_validate_proves_an_explicit_throw_inlined_by_hand_and_refuses_wrong_ones(raised, java_home):
    trees, rows = raised
    assert rows["right"].verdict is Verdict.EQUIVALENT, rows["right"].reason
    # its loop copied with the split (thetas closed through placeholders: copying one without them never ended)
    assert rows["loopRight"].verdict is Verdict.EQUIVALENT, rows["loopRight"].reason
    for name in ("dropped", "message", "type", "swapped"):
        assert rows[name].verdict is not Verdict.EQUIVALENT, (name, rows[name].reason)
    calls = [dt.Call("inl/T", "probe", "(II)I", (which, x)) for which in range(5) for x in (-1, 3)]
    result = dt.compare(trees["orig"], trees["opt"], calls, java_home=java_home, timeout_ms=5000)
    assert result.compared == len(calls), result.report()
    # the four wrong ones differ where the callee throws (x = -1), nowhere else; the right one nowhere
    assert sorted(m.call.args for m in result.mismatches) == [(1, -1), (2, -1), (3, -1), (4, -1)], result.report()


def test_results_are_split_only_where_every_result_runs_the_call_first(built):
    """``split_points``: a throwing callee is inlined where the caller's results can be split at the call. In
    ``effects`` and ``twice`` the whole tree (the root), in ``inArm`` the arm that makes the call; not in
    ``afterJoin`` (the result after the join of ``y > 0 ? positive(..) : 0`` runs the call on one path only) nor
    in ``inLoop`` (the call runs in the loop, the result after it)."""
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.peg.build import build_peg
    from peggy_jvm.rules.inline import inlinable_calls, split_points
    src, _, _ = built
    cf = read_class((src / "inl" / "Raise.class").read_bytes())

    def points(name: str) -> list[list[int] | None]:
        peg = build_peg(lift_method(cf, next(m for m in cf.methods if m.name == name), None))
        return [split_points(peg, n) for n in inlinable_calls(peg)
                if peg.nodes[n].attr.name == "positive"]  # type: ignore[union-attr]  # calls have a MethodRef

    peg_root = {name: build_peg(lift_method(cf, next(m for m in cf.methods if m.name == name), None)).root
                for name in ("effects", "twice", "inArm")}
    assert points("effects") == [[peg_root["effects"]]]
    assert points("twice") == [[peg_root["twice"]]] * 2
    (arm,), = points("inArm")
    assert arm != peg_root["inArm"]  # the arm's subtree, below the root's test of y
    assert points("afterJoin") == [None] and points("inLoop") == [None]
