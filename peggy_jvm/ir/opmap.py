"""The one table between opcodes and the IR: what each opcode lifts to, and which opcode emits each IR operation.

Owns: :class:`Form` (the IR construct an instruction becomes) and :data:`LIFTED` (every opcode lifting accepts
-> its :class:`Lifted` form with the IR parameter it carries: the operator name of ``iadd``, the :class:`Kind` of
``lload``, the element of ``baload``, the :class:`Cond` of ``if_icmplt``, the :class:`InvokeKind` of
``invokevirtual``, the :class:`Const` of ``fconst_1``); its inverse :func:`opcode_of` ((form, parameter) ->
opcode), which lowering reads; :func:`const_opcode` (the one-byte constant opcode of a Const, if any), and the
method-handle reference kinds (JVMS 4.4.8) by the names IR constants carry (:data:`REFERENCE_KINDS`).

Inputs: the opcode table (:mod:`peggy_jvm.classfile.opcodes`: numbers by mnemonic) and the typed operators of
:data:`peggy_jvm.semantics.OPERATIONS`. The parametrized rows are derived from the JVM's mnemonic scheme
(``add.i`` is ``iadd``, ``cmpl.f`` is ``fcmpl``, ``Kind.LONG``'s load is ``lload``, ``Cond.LT``'s compare is
``if_icmplt`` ...), so a name that does not exist fails at import.

Invariants: every operator of ``semantics.OPERATIONS`` is the parameter of exactly one opcode; every other
parametrized (form, parameter) has one opcode, save the aliases lowering alone uses (``Z`` arrays take
``baload``/``bastore``, which lift as ``B``); short forms (``iload_1``) are not rows: lifting reads them
through :data:`~peggy_jvm.classfile.opcodes.SHORT_FORMS` and the assembler picks them; ``wide`` is decoded
away, ``jsr``/``ret`` are inlined before lifting (:mod:`.subroutines`) and are not rows either. A form without
a parameter that one opcode computes (``getfield``, ``arraylength`` ...) is lowered by that opcode's name in
:mod:`~peggy_jvm.classfile.opcodes`; the choice among several (``ldc``/``ldc_w``, ``goto``/``goto_w``,
``bipush``/``sipush``, the switches) is the lowering's and the assembler's.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .. import semantics as S
from ..classfile import opcodes as op
from .nodes import DOUBLE, FLOAT, INT, LONG, NULL_TYPE, Cond, Const, ConstKind, InvokeKind, Kind


class Form(Enum):
    """What lifting makes of an instruction (the IR parameter of the row, if any, in brackets)."""

    NOP = "nop"
    CONST = "const"  # [Const] pushed as an operand, no statement
    PUSH = "push"  # bipush, sipush: the int operand
    LDC = "ldc"  # a loadable pool constant
    LOAD = "load"  # [Kind] the local's variable pushed
    STORE = "store"  # [Kind] Copy into the local's variable
    IINC = "iinc"  # Binary add.i on the local's variable
    ARRAY_LOAD = "array_load"  # [element descriptor char] ArrayLoad
    ARRAY_STORE = "array_store"  # [element descriptor char] ArrayStore
    STACK = "stack"  # pop ... swap: the abstract stack rearranged
    UNARY = "unary"  # [operator] Unary
    BINARY = "binary"  # [operator] Binary
    IF_ZERO = "if_zero"  # [Cond] If against int 0
    IF_ICMP = "if_icmp"  # [Cond] If between two ints
    IF_ACMP = "if_acmp"  # [Cond] If between two references
    IF_NULL = "if_null"  # [Cond] If against null
    GOTO = "goto"
    SWITCH = "switch"
    RETURN = "return"  # [Kind, or None for void] Return
    THROW = "throw"
    GETSTATIC = "getstatic"
    PUTSTATIC = "putstatic"
    GETFIELD = "getfield"
    PUTFIELD = "putfield"
    INVOKE = "invoke"  # [InvokeKind] Invoke, or New for invokespecial <init> on a new object
    INVOKEDYNAMIC = "invokedynamic"
    NEW = "new"  # ClassInit, paired with its constructor call into New
    NEWARRAY = "newarray"  # NewArray (newarray, anewarray, multianewarray)
    ARRAYLENGTH = "arraylength"
    CHECKCAST = "checkcast"
    INSTANCEOF = "instanceof"
    MONITORENTER = "monitorenter"
    MONITOREXIT = "monitorexit"


@dataclass(frozen=True, slots=True)
class Lifted:
    """One row: the form, and its IR parameter (of the type the form's comment says; None for the others)."""

    form: Form
    param: Any = None


def _opcode(mnemonic: str) -> int:
    return op.BY_NAME[mnemonic].opcode


def _mnemonic_of_operator(name: str) -> str:
    """``add.i`` -> ``iadd``, ``cmpl.d`` -> ``dcmpl``, ``cmp.l`` -> ``lcmp``; conversions are their mnemonic."""
    if "." not in name:
        return name
    base, suffix = name.split(".")
    return suffix + base


#: element descriptor char -> the type letter of its array instructions (``L``: any reference)
_ELEMENT_LETTER = {"I": "i", "J": "l", "F": "f", "D": "d", "L": "a", "B": "b", "C": "c", "S": "s"}
_CONSTANTS: list[tuple[str, Const]] = [
    ("aconst_null", Const(NULL_TYPE, None)),
    *((f"iconst_{'m1' if n < 0 else n}", Const(INT, n)) for n in range(-1, 6)),
    *((f"lconst_{n}", Const(LONG, n)) for n in (0, 1)),
    *((f"fconst_{n}", Const(FLOAT, float(n))) for n in (0, 1, 2)),
    *((f"dconst_{n}", Const(DOUBLE, float(n))) for n in (0, 1)),
]
_PLAIN: dict[str, Form] = {
    "nop": Form.NOP, "bipush": Form.PUSH, "sipush": Form.PUSH, "ldc": Form.LDC, "ldc_w": Form.LDC,
    "ldc2_w": Form.LDC, "iinc": Form.IINC, "goto": Form.GOTO, "goto_w": Form.GOTO, "tableswitch": Form.SWITCH,
    "lookupswitch": Form.SWITCH, "athrow": Form.THROW, "getstatic": Form.GETSTATIC, "putstatic": Form.PUTSTATIC,
    "getfield": Form.GETFIELD, "putfield": Form.PUTFIELD, "invokedynamic": Form.INVOKEDYNAMIC, "new": Form.NEW,
    "newarray": Form.NEWARRAY, "anewarray": Form.NEWARRAY, "multianewarray": Form.NEWARRAY,
    "arraylength": Form.ARRAYLENGTH, "checkcast": Form.CHECKCAST, "instanceof": Form.INSTANCEOF,
    "monitorenter": Form.MONITORENTER, "monitorexit": Form.MONITOREXIT, "return": Form.RETURN,
    **{m: Form.STACK for m in ("pop", "pop2", "dup", "dup_x1", "dup_x2", "dup2", "dup2_x1", "dup2_x2", "swap")},
}


def _rows() -> list[tuple[str, Lifted]]:
    rows: list[tuple[str, Lifted]] = [(m, Lifted(form)) for m, form in _PLAIN.items()]
    rows += [(m, Lifted(Form.CONST, c)) for m, c in _CONSTANTS]
    for kind in Kind:
        rows += [(kind.suffix + "load", Lifted(Form.LOAD, kind)), (kind.suffix + "store", Lifted(Form.STORE, kind)),
                 (kind.suffix + "return", Lifted(Form.RETURN, kind))]
    for elem, letter in _ELEMENT_LETTER.items():
        rows += [(letter + "aload", Lifted(Form.ARRAY_LOAD, elem)), (letter + "astore", Lifted(Form.ARRAY_STORE, elem))]
    for name in S.OPERATIONS:  # unary: negations and conversions; the rest take two operands
        unary = "." not in name or name.startswith("neg.")
        rows.append((_mnemonic_of_operator(name), Lifted(Form.UNARY if unary else Form.BINARY, name)))
    for cond in Cond:
        rows += [("if" + cond.value, Lifted(Form.IF_ZERO, cond)), ("if_icmp" + cond.value, Lifted(Form.IF_ICMP, cond))]
    for cond in (Cond.EQ, Cond.NE):
        rows.append(("if_acmp" + cond.value, Lifted(Form.IF_ACMP, cond)))
    rows += [("ifnull", Lifted(Form.IF_NULL, Cond.EQ)), ("ifnonnull", Lifted(Form.IF_NULL, Cond.NE))]
    rows += [("invoke" + kind.value, Lifted(Form.INVOKE, kind)) for kind in InvokeKind]
    return rows


#: every opcode lifting accepts (short forms aside) -> what it lifts to
LIFTED: dict[int, Lifted] = {_opcode(m): row for m, row in _rows()}


def _inverse() -> dict[tuple[Form, object], int]:
    """(form, parameter) -> opcode for the rows with a parameter (a Const as its kind and value)."""
    out: dict[tuple[Form, object], int] = {}
    for opcode, row in LIFTED.items():
        if row.param is None and row.form is not Form.RETURN:
            continue
        param = (row.param.type.kind, row.param.value) if isinstance(row.param, Const) else row.param
        assert (row.form, param) not in out, (row.form, param)
        out[(row.form, param)] = opcode
    # the JVM computes boolean arrays with the byte array instructions
    out[(Form.ARRAY_LOAD, "Z")] = out[(Form.ARRAY_LOAD, "B")]
    out[(Form.ARRAY_STORE, "Z")] = out[(Form.ARRAY_STORE, "B")]
    return out


_OPCODE_OF = _inverse()


def opcode_of(form: Form, param: object) -> int:
    """The opcode that computes ``form`` with IR parameter ``param`` (``opcode_of(Form.BINARY, "add.i")`` is
    ``iadd``; ``opcode_of(Form.RETURN, None)`` is ``return``). A KeyError names what has no opcode."""
    try:
        return _OPCODE_OF[(form, param)]
    except KeyError:
        raise KeyError(f"no opcode for {form.value} {param!r}") from None


def const_opcode(c: Const) -> int | None:
    """The one-byte opcode that pushes ``c`` (``iconst_m1`` ... ``dconst_1``, ``aconst_null``), or None.
    ``fconst_0``/``dconst_0`` push +0.0 only, so -0.0 has none."""
    if c.kind is not ConstKind.VALUE:
        return None
    found = _OPCODE_OF.get((Form.CONST, (c.type.kind, c.value)))
    if found is not None and isinstance(c.value, float) and math.copysign(1.0, c.value) < 0:
        return None
    return found


#: method-handle reference kinds (JVMS 4.4.8, the constant's ``reference_kind``) -> the names IR constants carry
REFERENCE_KINDS: dict[int, str] = {1: "getField", 2: "getStatic", 3: "putField", 4: "putStatic", 5: "invokeVirtual",
                                   6: "invokeStatic", 7: "invokeSpecial", 8: "newInvokeSpecial",
                                   9: "invokeInterface"}
REFERENCE_KIND_NUMBERS: dict[str, int] = {name: number for number, name in REFERENCE_KINDS.items()}
