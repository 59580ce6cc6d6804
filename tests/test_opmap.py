"""The one opcode <-> IR table (``ir/opmap.py``): it covers every IR operator and every opcode lifting accepts,
and each of its rows survives lowering and lifting again (IR -> the row's opcode -> the same IR)."""
from __future__ import annotations


import pytest

from peggy_jvm import semantics as S
from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.hierarchy import ClassHierarchy
from peggy_jvm.classfile.model import Access, Attribute, MethodInfo
from peggy_jvm.classfile.reader import read_class, read_code, read_instructions
from peggy_jvm.ir.lift import LiftError, lift_method
from peggy_jvm.ir.lower import lower_method
from peggy_jvm.ir.nodes import (DOUBLE, FLOAT, INT, LONG, NULL_TYPE, ArrayLoad, ArrayStore, Binary, Block, Cond,
                                Const, Copy, If, Invoke, InvokeKind, IRMethod, IRType, Kind, MethodRef, Return,
                                Unary, Var)
from peggy_jvm.ir.opmap import LIFTED, Form, const_opcode, opcode_of
from peggy_jvm.peg.ops import OPS, T
from conftest import javac_command
from support.javac_cache import run_javac

OBJECT = IRType(Kind.REF, "java/lang/Object")
_IR_TYPE = {T.INT: INT, T.LONG: LONG, T.FLOAT: FLOAT, T.DOUBLE: DOUBLE}
_DESC = {Kind.INT: "I", Kind.LONG: "J", Kind.FLOAT: "F", Kind.DOUBLE: "D"}
_ARRAY_OF = {"I": INT, "J": LONG, "F": FLOAT, "D": DOUBLE, "B": INT, "Z": INT, "C": INT, "S": INT}


def _desc(t: IRType) -> str:
    if t.kind is Kind.REF:
        return t.cls if t.cls and t.cls.startswith("[") else f"L{t.cls or 'java/lang/Object'};"
    return _DESC[t.kind]


def test_every_operator_has_exactly_one_opcode():
    operators = [row.param for row in LIFTED.values() if row.form in (Form.UNARY, Form.BINARY)]
    assert sorted(operators) == sorted(S.OPERATIONS)
    for name in S.OPERATIONS:
        row = LIFTED[opcode_of(Form.UNARY if len(OPS[name].inputs) == 1 else Form.BINARY, name)]
        assert row.param == name and len(OPS[name].inputs) == (1 if row.form is Form.UNARY else 2)
        # semantics names each function after the JVM instruction it models: an independent witness
        assert op.NAME_OF[opcode_of(row.form, name)] == S.OPERATIONS[name].__name__


def test_every_parametrized_form_is_covered():
    for kind in Kind:
        for form in (Form.LOAD, Form.STORE, Form.RETURN):
            assert LIFTED[opcode_of(form, kind)].param is kind
    for cond in Cond:
        assert LIFTED[opcode_of(Form.IF_ZERO, cond)].param is cond
        assert LIFTED[opcode_of(Form.IF_ICMP, cond)].param is cond
    for kind in InvokeKind:
        assert LIFTED[opcode_of(Form.INVOKE, kind)].param is kind
    assert op.NAME_OF[opcode_of(Form.ARRAY_LOAD, "Z")] == "baload"
    assert op.NAME_OF[opcode_of(Form.RETURN, None)] == "return"


def test_every_opcode_is_lifted_or_has_a_reason_not_to_be():
    """Every opcode of the JVM's table is a row, a short form of a row, or one lifting never sees."""
    for opcode, info in op.OPCODES.items():
        base = op.SHORT_FORMS.get(opcode, (opcode, 0))[0]
        assert base in LIFTED or info.name in ("wide", "jsr", "jsr_w", "ret"), info.name


def test_constants_take_their_one_byte_opcode_and_negative_zero_does_not():
    assert op.NAME_OF[const_opcode(Const(INT, -1))] == "iconst_m1"
    assert op.NAME_OF[const_opcode(Const(FLOAT, 2.0))] == "fconst_2"
    assert op.NAME_OF[const_opcode(Const(NULL_TYPE, None))] == "aconst_null"
    assert const_opcode(Const(FLOAT, -0.0)) is None and const_opcode(Const(DOUBLE, -0.0)) is None
    assert const_opcode(Const(INT, 6)) is None and const_opcode(Const(LONG, 2)) is None


@pytest.fixture(scope="module")
def host(java_home, tmp_path_factory):
    d = tmp_path_factory.mktemp("opmap")
    (d / "Host.java").write_text("public class Host {}\n")
    run_javac([*javac_command(java_home), "-d", str(d), str(d / "Host.java")], check=True)
    return read_class((d / "Host.class").read_bytes()), ClassHierarchy([d])


class _Method:
    """A static method of IR built by hand: parameters in slots 0.., blocks added in order."""

    def __init__(self, *param_types: IRType) -> None:
        self.vars: list[Var] = []
        self.params = [self.var(t) for t in param_types]
        slot = 0
        for p in self.params:
            p.slot, slot = slot, slot + (2 if p.type.kind.wide else 1)
        self.blocks: dict[int, Block] = {}

    def var(self, t: IRType) -> Var:
        v = Var(len(self.vars), t, f"v{len(self.vars)}")
        self.vars.append(v)
        return v

    def block(self, *stmts, terminator) -> None:
        self.blocks[len(self.blocks)] = Block(len(self.blocks), list(stmts), terminator)

    def round_trip(self, host, ret: IRType | None) -> tuple[list[int], IRMethod]:
        """Lower the method into the host class, then lift it again: the opcodes emitted (short forms as their
        base) and the lifted IR."""
        cf, h = host
        desc = "(" + "".join(_desc(p.type) for p in self.params) + ")" + ("V" if ret is None else _desc(ret))
        m = MethodInfo(Access.PUBLIC | Access.STATIC, cf.pool.add_utf8("m"), cf.pool.add_utf8(desc), [], "m", desc)
        ir = IRMethod(cf.name, "m", desc, True, self.params, self.blocks, 0, variables=self.vars)
        body = lower_method(cf, m, ir, h)
        m.attributes = [Attribute(cf.pool.add_utf8("Code"), "Code", body)]
        opcodes = [op.SHORT_FORMS.get(i.opcode, (i.opcode, 0))[0]
                   for i in read_instructions(read_code(body, cf.pool))]
        return opcodes, lift_method(cf, m, h)


def _statements(ir: IRMethod) -> list:
    return [s for b in ir.block_order() for s in [*b.stmts, b.terminator]]


@pytest.mark.parametrize("name", sorted(S.OPERATIONS))
def test_each_operator_round_trips(host, name):
    spec = OPS[name]
    m = _Method(*(_IR_TYPE[t] for t in spec.inputs))
    dst = m.var(_IR_TYPE[spec.output])
    st = Unary(dst, name, *m.params) if len(m.params) == 1 else Binary(dst, name, *m.params)
    m.block(st, terminator=Return(dst))
    opcodes, ir = m.round_trip(host, dst.type)
    form = Form.UNARY if isinstance(st, Unary) else Form.BINARY
    assert opcode_of(form, name) in opcodes
    (lifted,) = [s for s in _statements(ir) if isinstance(s, (Unary, Binary))]
    assert type(lifted) is type(st) and lifted.op == name and lifted.dst.type == dst.type


@pytest.mark.parametrize("form, cond", [*((Form.IF_ZERO, c) for c in Cond), *((Form.IF_ICMP, c) for c in Cond),
                                        (Form.IF_ACMP, Cond.EQ), (Form.IF_ACMP, Cond.NE),
                                        (Form.IF_NULL, Cond.EQ), (Form.IF_NULL, Cond.NE)])
def test_each_branch_round_trips(host, form, cond):
    ref = form in (Form.IF_ACMP, Form.IF_NULL)
    m = _Method(*([OBJECT] if ref else [INT]) * (1 if form in (Form.IF_ZERO, Form.IF_NULL) else 2))
    b = {Form.IF_ZERO: Const(INT, 0), Form.IF_NULL: Const(NULL_TYPE, None)}.get(form) or m.params[1]
    m.block(terminator=If(cond, m.params[0], b, 2, 1))  # the false arm next: no negation to fall through
    m.block(terminator=Return(Const(INT, 0)))
    m.block(terminator=Return(Const(INT, 1)))
    opcodes, ir = m.round_trip(host, INT)
    assert opcode_of(form, cond) in opcodes
    (lifted,) = [s for s in _statements(ir) if isinstance(s, If)]
    assert lifted.cond is cond and lifted.a is ir.params[0]
    assert lifted.b == b if isinstance(b, Const) else lifted.b is ir.params[1]


@pytest.mark.parametrize("opcode", sorted(o for o, row in LIFTED.items() if row.form is Form.CONST))
def test_each_constant_round_trips(host, opcode):
    c = LIFTED[opcode].param
    m = _Method()
    m.block(terminator=Return(c))
    opcodes, ir = m.round_trip(host, OBJECT if c.type.kind is Kind.REF else c.type)
    assert opcodes[0] == opcode and const_opcode(c) == opcode
    (ret,) = [s for s in _statements(ir) if isinstance(s, Return)]
    assert ret.value == c and ret.value.type.kind is c.type.kind


@pytest.mark.parametrize("kind", list(Kind))
def test_each_kind_loads_stores_and_returns(host, kind):
    t = OBJECT if kind is Kind.REF else _IR_TYPE[T(kind.value)]
    m = _Method(t, t)
    m.block(Copy(m.params[1], m.params[0]), terminator=Return(m.params[1]))  # b = a; return b
    opcodes, ir = m.round_trip(host, t)
    assert opcodes[-1] == opcode_of(Form.RETURN, kind)
    if kind in (Kind.INT, Kind.REF):
        # an int or reference stored and loaded straight back, its slot read nowhere after, stays on the stack
        # (ir/lower.py _drop_passing_stores): `iload_0; ireturn`, the parameter returned; `istore`/`astore` are
        # emitted wherever a slot is read again (every lowered fixture)
        assert opcodes == [opcode_of(Form.LOAD, kind), opcode_of(Form.RETURN, kind)], opcodes
        (ret,) = _statements(ir)
        assert isinstance(ret, Return) and ret.value is ir.params[0]
        return
    assert [opcode_of(Form.LOAD, kind), opcode_of(Form.STORE, kind)] == opcodes[:2]
    copy, ret = _statements(ir)
    assert isinstance(copy, Copy) and copy.dst.slot == ir.params[1].slot and copy.src is ir.params[0]
    assert isinstance(ret, Return) and ret.value is copy.dst


@pytest.mark.parametrize("elem", ["I", "J", "F", "D", "L", "B", "Z", "C", "S"])
def test_each_array_element_loads_and_stores(host, elem):
    array = IRType(Kind.REF, "[Ljava/lang/Object;" if elem == "L" else "[" + elem)
    value = OBJECT if elem == "L" else _ARRAY_OF[elem]
    m = _Method(array, INT, value)
    got = m.var(value)
    m.block(ArrayStore(m.params[0], m.params[1], m.params[2], elem),
            ArrayLoad(got, m.params[0], m.params[1], elem), terminator=Return(got))
    opcodes, ir = m.round_trip(host, value)
    assert opcode_of(Form.ARRAY_STORE, elem) in opcodes and opcode_of(Form.ARRAY_LOAD, elem) in opcodes
    lifted = "B" if elem == "Z" else elem  # boolean arrays share the byte instructions, which lift as B
    store, load = [s for s in _statements(ir) if isinstance(s, (ArrayStore, ArrayLoad))]
    assert isinstance(store, ArrayStore) and store.elem == lifted and isinstance(load, ArrayLoad)
    assert load.elem == lifted


@pytest.mark.parametrize("kind, ref", [
    (InvokeKind.STATIC, MethodRef("java/lang/Math", "abs", "(I)I")),
    (InvokeKind.VIRTUAL, MethodRef("java/lang/Object", "hashCode", "()I")),
    (InvokeKind.SPECIAL, MethodRef("java/lang/Object", "hashCode", "()I")),
    (InvokeKind.INTERFACE, MethodRef("java/lang/CharSequence", "length", "()I", interface=True)),
])
def test_each_invoke_kind_round_trips(host, kind, ref):
    receiver = IRType(Kind.REF, ref.owner)
    m = _Method(INT if kind is InvokeKind.STATIC else receiver)
    dst = m.var(INT)
    if kind is InvokeKind.STATIC:
        m.block(Invoke(dst, kind, ref, None, [m.params[0]]), terminator=Return(dst))
    else:
        m.block(Invoke(dst, kind, ref, m.params[0], []), terminator=Return(dst))
    opcodes, ir = m.round_trip(host, INT)
    assert opcode_of(Form.INVOKE, kind) in opcodes
    (call,) = [s for s in _statements(ir) if isinstance(s, Invoke)]
    assert call.kind is kind and call.method == ref


def test_an_opcode_outside_the_table_is_refused(host, monkeypatch):
    """Lifting reads only the table: without its row, ``iadd`` is refused by name."""
    m = _Method(INT, INT)
    dst = m.var(INT)
    m.block(Binary(dst, "add.i", *m.params), terminator=Return(dst))
    monkeypatch.delitem(LIFTED, op.BY_NAME["iadd"].opcode)
    with pytest.raises(LiftError, match="opcode iadd at offset 2 is not lifted"):
        m.round_trip(host, INT)
