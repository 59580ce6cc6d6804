"""``optimize --stage ir`` (lift to the IR and lower back) on the fixtures: every method goes through the IR
except what the lifter reports it cannot do yet, every class verifies, every program prints what it printed."""
from __future__ import annotations

from pathlib import Path

import pytest

from peggy_jvm.classfile.reader import read_class, read_code
from peggy_jvm.pipeline import Stage, optimize_input
from test_stage_classfile import runnable
from conftest import javac_command
from support.javac_cache import run_javac

TREES = ["release17", "release8", "old"]


@pytest.fixture(scope="module")
def lowered(fixture_classes, tmp_path_factory):
    out = {}
    for tree in TREES:
        target = tmp_path_factory.mktemp(f"ir-{tree}") / "out"
        _, report = optimize_input(fixture_classes[tree], target, Stage.IR, jobs=2)
        out[tree] = (target, report)
    return out


@pytest.mark.parametrize("tree", TREES)
def test_every_method_goes_through_the_ir(lowered, tree):
    _, report = lowered[tree]
    fallbacks = {f"{m.class_name}.{m.name}{m.descriptor}": m.reason for m in report.methods
                 if m.status == "fallback"}
    assert fallbacks == {}  # the old tree's jsr/ret subroutines are inlined
    assert all(m.status != "unchanged" for m in report.methods if m.bytes_before)


@pytest.mark.parametrize("tree", TREES)
def test_lowered_fixtures_verify_and_print_the_same(lowered, fixture_classes, verifier, run_mains, tree):
    target, _ = lowered[tree]
    proc = verifier(target)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "verify_errors=0" in proc.stdout
    names = runnable(fixture_classes[tree])
    before = run_mains(fixture_classes[tree], names)
    assert before.count(" end: ok\n") == len(names)
    assert run_mains(target, names) == before


def test_expression_trees_lower_to_exactly_what_javac_emits(java_home, tmp_path):
    """Stack scheduling: leaves first, temporaries on the stack, locals in their slots, short forms. For
    straight-line expression code the result is javac's own bytecode, byte for byte."""

    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.ir.lower import lower_method
    from test_lift import SHAPES

    (tmp_path / "Shapes.java").write_text(SHAPES)
    run_javac([*javac_command(java_home), "-d", str(tmp_path), str(tmp_path / "Shapes.java")],
              check=True)
    cf = read_class((tmp_path / "Shapes.class").read_bytes())
    h = ClassHierarchy([tmp_path])
    same = set()
    for m in cf.methods:
        javac = read_code(m.code_attribute().data, cf.pool)
        ours = read_code(lower_method(cf, m, lift_method(cf, m, h), h), cf.pool)
        assert len(ours.code) <= len(javac.code) + 4, m.name
        if ours.code == javac.code:
            same.add(m.name)
    assert {"<init>", "addTwice", "widen", "iinc", "fresh", "keepOld"} <= same


def test_lowered_fixture_code_stays_close_to_javac_in_size(lowered):
    for tree in ("release17", "release8"):
        _, report = lowered[tree]
        ratio = sum(m.bytes_after for m in report.methods) / sum(m.bytes_before for m in report.methods)
        assert ratio < 1.15, (tree, ratio)


NEW_SHAPES = """
public class NewShapes {
    int base = 3;
    static int calls;
    static int next() { return ++calls; }
    static class Box { final int v; Box(int v) { this.v = v; calls += 10; } int twice() { return 2 * v; } }
    int use(int x) { return x + base; }
    // the receiver is pushed before `new`: the object must not be left under it (a bug once)
    int receiverFirst() { return use(new Box(next()).twice()); }
    // arguments with calls between `new` and the constructor: class initialization stays first
    static String message(int x) { return new IllegalArgumentException("bad " + x + next()).getMessage(); }
    static int acrossBlocks(boolean c) { return new Box(c ? next() : -1).v; }
    static Object nested() { return new Box(new Box(next()).twice()); }
    static NewShapes make() { return new NewShapes(); }
    // the receiver comes from a call without arguments, made before `new` (java.awt.EventQueue.invokeLater)
    static int receiverFromACall() { return make().use(new Box(next()).v); }
    public static void main(String[] args) {
        NewShapes s = new NewShapes();
        System.out.println(s.receiverFirst() + " " + receiverFromACall() + " " + message(7) + " " + acrossBlocks(true) + " "
                           + acrossBlocks(false) + " " + ((Box) nested()).v + " " + calls);
        try { throw new IllegalStateException("x" + next()); } catch (IllegalStateException e) {
            System.out.println(e.getMessage()); }
    }
}
"""


@pytest.mark.parametrize("release", ["8", "17"])
def test_new_with_effects_between_new_and_the_constructor(java_home, tmp_path, verifier, run_mains, release):

    src = tmp_path / "NewShapes.java"
    src.write_text(NEW_SHAPES)
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "--release", release, "-Xlint:-options", "-d", str(orig),
                    str(src)], check=True)
    out = tmp_path / "out"
    _, report = optimize_input(orig, out, Stage.IR)
    assert [(m.name, m.reason) for m in report.methods if m.status == "fallback"] == []
    proc = verifier(out)
    assert proc.returncode == 0 and "verify_errors=0" in proc.stdout, proc.stdout[-3000:]
    assert run_mains(out, ["NewShapes"]) == run_mains(orig, ["NewShapes"])


ACROSS = """
public class Across {
    static int plus(boolean c, int a, int b) { return a + (c ? b : 1); }
    static String pick(boolean c, String s) { return s.concat(c ? "x" : "y"); }
    static int nested(int a, int b) { return a > 0 ? (b > 0 ? 1 : 2) : 3; }
    static boolean both(int a, int b) { return a > 0 && b > 0; }
    public static void main(String[] args) {
        for (int i = -1; i <= 1; i++) System.out.println(plus(i > 0, i, 5) + " " + pick(i == 0, "s") + " "
            + nested(i, -i) + " " + both(i, 1));
    }
}
"""


def test_values_crossing_branches_stay_on_the_stack(java_home, tmp_path, verifier, run_mains):
    """Conditional expressions: javac keeps the operands below a branch on the JVM stack, and so does
    lowering (no store/load through slots), giving javac's exact code."""

    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.ir.lower import lower_method

    (tmp_path / "Across.java").write_text(ACROSS)
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(tmp_path / "Across.java")], check=True)
    cf = read_class((orig / "Across.class").read_bytes())
    h = ClassHierarchy([orig])
    for name in ("plus", "pick", "nested", "both"):
        m = next(m for m in cf.methods if m.name == name)
        ir = lift_method(cf, m, h)
        assert any(b.entry_stack for b in ir.blocks.values()) or name == "both", name
        javac = read_code(m.code_attribute().data, cf.pool)
        ours = read_code(lower_method(cf, m, ir, h), cf.pool)
        assert ours.code == javac.code, name
    out = tmp_path / "out"
    _, report = optimize_input(orig, out, Stage.IR)
    assert all(m.status == "rewritten" for m in report.methods)
    assert verifier(out).returncode == 0
    assert run_mains(out, ["Across"]) == run_mains(orig, ["Across"])


def test_variables_never_live_together_share_a_slot():
    from peggy_jvm.classfile.constpool import ConstantPool
    from peggy_jvm.classfile.model import Access, ClassFile
    from peggy_jvm.ir.lower import _Lowerer
    from peggy_jvm.ir.nodes import INT, Binary, Block, Const, Copy, Goto, IRMethod, Return, Var

    x, y, z, p = Var(1, INT, "x"), Var(2, INT, "y"), Var(3, INT, "z"), Var(0, INT, "p", slot=0)
    # block-level liveness: x lives in B0-B1, y in B2-B3, so they can share; z lives from B0 to B3
    blocks = {
        0: Block(0, [Copy(x, Const(INT, 1)), Copy(z, p)], Goto(1)),
        1: Block(1, [Binary(p, "add.i", x, z)], Goto(2)),
        2: Block(2, [Copy(y, p)], Goto(3)),
        3: Block(3, [Binary(p, "add.i", y, z)], Return(p)),
    }
    ir = IRMethod("C", "m", "(I)I", True, [p], blocks, 0, variables=[p, x, y, z])
    pool = ConstantPool()
    lw = _Lowerer(ClassFile(0, 61, pool, Access.PUBLIC, pool.add_class("C"), 0, [], [], [], []), ir)
    lw.assign_slots()
    assert lw.slots[x.id] == lw.slots[y.id]
    assert lw.slots[z.id] not in (lw.slots[x.id], lw.slots[p.id])
    assert sorted({lw.slots[v.id] for v in (p, x, y, z)}) == [0, 1, 2]


TRACES = """
public class Traces {
    static int depth(int n) {
        if (n == 0) {
            int[] a = new int[1];
            return a[n + 1];
        }
        return depth(n - 1) + 1;
    }
    static String where(Throwable t) {
        StringBuilder b = new StringBuilder();
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals("Traces")) b.append(e.getMethodName()).append(':').append(e.getLineNumber()).append(' ');
        }
        return b.toString();
    }
    public static void main(String[] args) {
        try { depth(3); } catch (RuntimeException e) { System.out.println(where(e)); }
        try {
            Object o = args.length > 5 ? "x" : null;
            System.out.println(
                o.toString());
        } catch (NullPointerException e) { System.out.println(where(e)); }
    }
}
"""


def test_stack_traces_keep_their_line_numbers(java_home, tmp_path, run_mains):

    (tmp_path / "Traces.java").write_text(TRACES)
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(tmp_path / "Traces.java")], check=True)
    out = tmp_path / "out"
    _, report = optimize_input(orig, out, Stage.IR)
    assert all(m.status == "rewritten" for m in report.methods)
    before = run_mains(orig, ["Traces"])
    assert "depth:6 depth:8 depth:8 depth:8 main:18" in before  # the trace really names lines
    assert run_mains(out, ["Traces"]) == before


def assert_static_methods_agree(original: Path, rewritten: Path, java_home: Path, seed: int) -> None:
    """The differential runner: every static method whose parameters it can generate (primitives, strings,
    arrays) is called with generated arguments on the original and on the rewritten classes; return values,
    exception classes and printed output must agree. Shared by the stage tests."""
    import difftest as dt
    from peggy_jvm.classfile.model import Access

    calls = []
    for p in sorted(original.glob("*.class")):
        cf = read_class(p.read_bytes())
        for m in cf.methods:
            if not m.access & Access.STATIC or m.code_attribute() is None or m.name in ("main", "<clinit>"):
                continue
            if (cf.name, m.name) == ("Exceptions", "deep"):
                continue  # recurses (printing) until StackOverflowError for most inputs: slow and says nothing
            params, _ = dt.parse_descriptor(m.descriptor)
            if not all(d[0] in "ZBCSIJFD" or d in ("Ljava/lang/String;",) or
                       (d[0] == "[" and d.lstrip("[")[0] in "ZBCSIJFD") for d in params):
                continue
            calls.extend(dt.Call(cf.name, m.name, m.descriptor, args)
                         for args in dt.generate_args(m.descriptor, count=4, seed=seed))
    assert len(calls) > 400
    result = dt.compare(original, rewritten, calls, java_home=java_home, timeout_ms=2000)
    # how deep a runaway recursion gets before StackOverflowError depends on frame sizes, which the JVM
    # leaves open: those calls say nothing about equivalence
    real = [m for m in result.mismatches
            if "java/lang/StackOverflowError" not in (m.original.exception, m.rewritten.exception)]
    assert real == [], result.report()
    assert result.compared > 0.9 * len(calls)


@pytest.mark.slow  # the slow tier: every static fixture method against the JVM (140 s of a loaded run's 3,200)
@pytest.mark.parametrize("tree", ["release17", "release8"])
def test_lowered_static_methods_agree_with_the_originals(lowered, fixture_classes, java_home, tree):
    target, _ = lowered[tree]
    assert_static_methods_agree(fixture_classes[tree], target, java_home, seed=1)


def test_a_local_loaded_twice_in_a_row_is_duplicated_when_that_is_shorter(java_home, tmp_path, run_mains):

    from peggy_jvm.classfile.bytecode import decode

    (tmp_path / "Dups.java").write_text("""
public class Dups {
    static int square(int a, int b, int c, int d, int e) { return e * e; }
    static long lsquare(int a, int b, int c, int d, long e) { return e * e; }
    public static void main(String[] args) { System.out.println(square(0, 0, 0, 0, 7) + " " + lsquare(0, 0, 0, 0, -3L)); }
}
""")
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(tmp_path / "Dups.java")], check=True)
    out = tmp_path / "out"
    optimize_input(orig, out, Stage.IR)
    cf = read_class((out / "Dups.class").read_bytes())
    names = {m.name: [i.name for i in decode(read_code(m.code_attribute().data, cf.pool).code)]
             for m in cf.methods}
    assert names["square"] == ["iload", "dup", "imul", "ireturn"]
    assert names["lsquare"] == ["lload", "dup2", "lmul", "lreturn"]
    assert run_mains(out, ["Dups"]) == run_mains(orig, ["Dups"])


def test_compound_array_assignment_lowers_like_javac_with_dup2(java_home, tmp_path, run_mains):

    from peggy_jvm.classfile.bytecode import decode
    from peggy_jvm.classfile.hierarchy import ClassHierarchy
    from peggy_jvm.ir.lift import lift_method
    from peggy_jvm.ir.lower import lower_method

    (tmp_path / "Compound.java").write_text("""
public class Compound {
    static void add(int[] a, int i, int j, int k, int v) { a[k] += v; }
    public static void main(String[] args) { int[] a = {1, 2, 3, 4}; add(a, 0, 0, 2, 5); System.out.println(a[2]); }
}
""")
    orig = tmp_path / "orig"
    run_javac([*javac_command(java_home), "-d", str(orig), str(tmp_path / "Compound.java")], check=True)
    cf = read_class((orig / "Compound.class").read_bytes())
    m = next(m for m in cf.methods if m.name == "add")
    h = ClassHierarchy([orig])
    javac = read_code(m.code_attribute().data, cf.pool)
    ours = read_code(lower_method(cf, m, lift_method(cf, m, h), h), cf.pool)
    assert "dup2" in [i.name for i in decode(ours.code)]
    assert ours.code == javac.code
    out = tmp_path / "out"
    optimize_input(orig, out, Stage.IR)
    assert run_mains(out, ["Compound"]) == run_mains(orig, ["Compound"])
