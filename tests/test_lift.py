"""Lifting bytecode to the IR: every fixture method lifts (or fails with a precise reason), and the IR of
purpose-written methods has exactly the expected shape."""
from __future__ import annotations


import pytest

from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.reader import read_class
from peggy_jvm.ir.lift import lift_method
from peggy_jvm.ir.nodes import Catch, ClassInit, If, New
from peggy_jvm.ir.printer import format_method
from conftest import javac_command
from support.javac_cache import run_javac

SHAPES = """
public class Shapes {
    static int addTwice(int a, int b) { int c = a + b; return c * 2; }
    static long widen(int a, long b) { return a + b; }
    static int iinc(int i) { i += 3; return i; }
    static Object fresh() { return new StringBuilder("x"); }
    static Object freshAfterCall() { return new StringBuilder(String.valueOf(fresh())); }
    static int pick(boolean c, int a, int b) { return c ? a : b; }
    static int caught(int a, int b) { try { return a / b; } catch (ArithmeticException e) { return -1; } }
    static int postIncrement(int[] a, int i) { return a[i]++; }
    static int keepOld(int i) { int j = i; i = i + 1; return j * i; }
}
"""


@pytest.fixture(scope="module")
def shapes(java_home, tmp_path_factory):
    d = tmp_path_factory.mktemp("shapes")
    (d / "Shapes.java").write_text(SHAPES)
    run_javac([*javac_command(java_home), "-d", str(d), str(d / "Shapes.java")], check=True)
    cf = read_class((d / "Shapes.class").read_bytes())
    h = ClassHierarchy([d])
    return {m.name: lift_method(cf, m, h) for m in cf.methods if m.name != "<init>"}


def body(ir) -> list[str]:
    return [line.strip() for line in format_method(ir)][1:]


def test_straight_line_code_is_three_address(shapes):
    assert body(shapes["addTwice"]) == [
        "B0:  // offset 0", "t2 = add.i l0i, l1i", "l2i = t2", "t4 = mul.i l2i, 2", "return t4"]
    assert body(shapes["widen"]) == ["B0:  // offset 0", "t2 = i2l l0i", "t3 = add.l t2, l1l", "return t3"]
    assert body(shapes["iinc"]) == ["B0:  // offset 0", "l0i = add.i l0i, 3", "return l0i"]


def test_params_are_typed_slot_variables(shapes):
    ir = shapes["widen"]
    assert [repr(p) for p in ir.params] == ["l0i", "l1l"]
    assert [str(p.type) for p in ir.params] == ["int", "long"]


def test_new_is_paired_with_its_constructor(shapes):
    stmts = shapes["fresh"].blocks[0].stmts
    news = [s for s in stmts if isinstance(s, New)]
    assert len(news) == 1 and news[0].cls == "java/lang/StringBuilder"
    assert news[0].constructor.descriptor == "(Ljava/lang/String;)V"
    assert not any(isinstance(s, ClassInit) for s in stmts)  # nothing observable between new and <init>


def test_class_initialization_stays_before_intervening_calls(shapes):
    stmts = shapes["freshAfterCall"].blocks[0].stmts
    kinds = [type(s).__name__ for s in stmts]
    assert kinds.index("ClassInit") < kinds.index("Invoke") < kinds.index("New")


def test_values_crossing_blocks_go_through_stack_variables(shapes):
    ir = shapes["pick"]
    assert isinstance(ir.blocks[0].terminator, If)
    assert body(ir) == ["B0:  // offset 0", "if l0i eq 0 goto B4 else B2",
                        "B2:  // offset 4", "s0i = l1i", "goto B5",
                        "B4:  // offset 8", "s0i = l2i", "goto B5",
                        "B5:  // offset 9", "return s0i"]


def test_handlers_are_block_level_and_start_with_catch(shapes):
    ir = shapes["caught"]
    protected = [b for b in ir.blocks.values() if b.handlers]
    assert protected and all(h.catch_type == "java/lang/ArithmeticException" for b in protected for h in b.handlers)
    handler = ir.blocks[protected[0].handlers[0].target]
    assert isinstance(handler.stmts[0], Catch) and handler.stmts[0].dst.type.cls == "java/lang/ArithmeticException"


def test_a_local_overwritten_while_on_the_stack_is_saved_first(shapes):
    # a[i]++ : the old element value is the result even though the array slot is rewritten
    assert body(shapes["postIncrement"]) == [
        "B0:  // offset 0", "t2 = l0a[l1i]  // I", "t3 = add.i t2, 1", "l0a[l1i] = t3  // I", "return t2"]
    assert body(shapes["keepOld"]) == [
        "B0:  // offset 0", "l1i = l0i", "t2 = add.i l0i, 1", "l0i = t2", "t3 = mul.i l1i, l0i", "return t3"]


@pytest.mark.parametrize("tree", ["release17", "release8"])
def test_every_fixture_method_lifts(fixture_classes, tree):
    h = ClassHierarchy([fixture_classes[tree]])
    count = 0
    for p in sorted(fixture_classes[tree].glob("*.class")):
        cf = read_class(p.read_bytes())
        for m in cf.methods:
            if m.code_attribute() is not None:
                ir = lift_method(cf, m, h)
                assert all(b.terminator is not None for b in ir.blocks.values())
                assert all(t in ir.blocks for b in ir.blocks.values() for t in b.successors())
                count += 1
    assert count > 400


def test_jsr_subroutines_are_inlined_once_per_call_site(fixture_classes):
    cf = read_class((fixture_classes["old"] / "JsrFinally.class").read_bytes())
    h = ClassHierarchy([fixture_classes["old"]])
    compute = next(m for m in cf.methods if m.name == "compute")
    ir = lift_method(cf, compute, h)
    text = "\n".join(format_method(ir))
    # three jsr sites (two returns and the catch-any path): three copies of `counter++`, each followed by the
    # code after its own site
    assert text.count("add.i t") == 3 + 1  # the three copies plus `counter += x` in the try block
    assert "jsr" not in text and "ret" not in text.replace("return", "")
    handler = next(b for b in ir.blocks.values() if b.stmts and isinstance(b.stmts[0], Catch))
    assert all(h.catch_type is None and h.target == handler.id
               for b in ir.blocks.values() for h in b.handlers)


def test_a_subroutine_that_does_not_store_its_return_address_is_refused(tmp_path):
    """Inlining needs the retaddr stored first (javac's shape); anything else is reported, not guessed."""
    from peggy_jvm.classfile import opcodes as op
    from peggy_jvm.classfile.assembler import Insn, Label, assemble
    from peggy_jvm.ir.subroutines import SubroutineError, inline_subroutines

    sub = Label()
    asm = assemble([Insn(op.JSR, target=sub), Insn(op.RETURN), sub, Insn(0x57), Insn(op.RETURN)])
    with pytest.raises(SubroutineError, match="return address"):
        inline_subroutines(asm.instructions, len(asm.code), [])
