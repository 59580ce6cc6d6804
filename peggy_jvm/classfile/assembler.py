"""The label-based assembler: symbolic instructions with labels -> bytes, with the shortest encodings.

Owns: :class:`Label`, :class:`Insn` (a symbolic instruction in *canonical* form), :class:`Handler`
(an exception-table row over labels), :class:`Assembled`, and the three entry points
:func:`to_symbolic` (decoded instructions -> canonical symbolic form), :func:`assemble` (symbolic form ->
bytes) and :func:`reassemble` (bytes -> bytes through both, plus an old -> new offset map). The split is the
one ASM makes between an instruction list with labels and the byte layout: later passes edit ``items``
without ever thinking about offsets, padding or operand widths.

Inputs of :func:`assemble`: ``items``, a sequence of :class:`Insn` and :class:`Label` (a label is placed
before the instruction it marks; labels after the last instruction mark ``code_length`` and serve as exclusive
range ends; an :class:`Insn` object may appear more than once, a label only once), and the :class:`Handler`
rows. Canonical form means: loads/stores use ``ILOAD``..``ALOAD`` / ``ISTORE``..``ASTORE`` with the local in
``arg`` (never ``iload_0``), ``RET`` the local in ``arg``, ``IINC`` the local in ``arg`` and the constant in
``arg2``, ``LDC`` any single-slot constant (pool index in ``arg``), ``LDC2_W`` a long/double, ``GOTO``/``JSR``
and the conditional branches a ``target`` label, ``TABLESWITCH`` ``arg2`` = low plus ``default``/``targets``
labels, ``LOOKUPSWITCH`` strictly increasing ``keys`` plus ``default``/``targets``; every other opcode carries
its operands as :class:`~.bytecode.Instruction` does (``arg``, ``arg2``). The assembler also accepts the
non-canonical spellings ``LDC_W``, ``GOTO_W``, ``JSR_W`` (it re-picks the form) and explicit short forms such
as ``iload_0`` (kept as written). ``wide`` is never an :class:`Insn`: the assembler chooses it.

Output: :class:`Assembled`: the code bytes, every placed label's offset, the instructions as
:class:`~.bytecode.Instruction` objects with their offsets (``bytecode.encode(instructions) == code`` and
``bytecode.decode(code) == instructions``, so later passes never decode again) and the resolved exception
table.

Invariants:
- forms are the shortest the JVMS allows: ``xload_n``/``xstore_n`` for locals 0-3, the one-byte-operand form
  up to 255, ``wide`` above (also ``ret``, and ``iinc`` when the local exceeds 255 or the constant leaves
  -128..127); ``ldc`` for pool indices below 256, else ``ldc_w``; branches short unless the displacement
  does not fit in a signed 16-bit value, then ``goto_w``/``jsr_w``, and a far conditional branch becomes
  ``if<!cond> +8; goto_w target`` (the inverted branch jumps to the instruction after the ``goto_w``);
- layout starts with every branch short and grows branch forms (never shrinks them) until no displacement
  overflows; switch padding is recomputed from the offsets on every iteration, so the result is consistent
  whatever the alignment shifts are, and the iteration terminates because the set of long branches only
  grows. Forms are chosen per :class:`Insn` object: a branch object placed twice is long at both places if
  either needs it;
- cost: one encoding pass over ``items`` normally; only when some branch overflows are the forms iterated
  over plain lists of sizes (no per-instruction objects per iteration), followed by one more encoding pass;
- a label placed before a symbolic instruction that expands to two instructions gets the offset of the first;
- exception-table rows whose range becomes empty are dropped; a label used but never placed, a label placed
  twice, a branch to the end of the code, a bad operand or code longer than 65535 bytes raise
  :class:`~.errors.ClassFileError`.
"""
from __future__ import annotations

import struct
from bisect import bisect_left
from dataclasses import dataclass
from itertools import accumulate
from typing import Iterable, NamedTuple, Sequence

from .bytecode import Instruction, decode
from .errors import ClassFileError
from .opcodes import (
    GOTO, GOTO_W, INVERTED_BRANCH, JSR, JSR_W, LDC, LDC_W, NAME_OF, OPERAND_OF, RET, SHORT_FORM_OF, SHORT_FORMS,
    WIDE, Operand,
)
from .model import ExceptionEntry

__all__ = ["Label", "Insn", "Handler", "Assembled", "Symbolic", "to_symbolic", "assemble", "reassemble"]


@dataclass(eq=False, slots=True)
class Label:
    """A position in a method body; compared and hashed by identity. ``name`` is for debugging only."""

    name: str | None = None

    def __repr__(self) -> str:
        return f"Label({self.name})" if self.name is not None else f"Label(@{id(self):x})"


@dataclass(slots=True)
class Insn:
    """A symbolic instruction in canonical form (see the module docstring for each opcode's operands)."""

    opcode: int
    arg: int = 0
    arg2: int = 0
    target: Label | None = None
    default: Label | None = None
    targets: list[Label] | None = None
    keys: list[int] | None = None

    def __repr__(self) -> str:
        name = NAME_OF[self.opcode] if 0 <= self.opcode < 256 else None
        parts = [name or f"opcode {self.opcode}"]
        if self.target is not None:
            parts.append(repr(self.target))
        elif self.targets is not None:
            parts.append(f"default={self.default!r}")
            if self.keys is not None:
                parts.append(f"cases={dict(zip(self.keys, self.targets))!r}")
            else:
                parts.append(f"low={self.arg2} targets={self.targets!r}")
        else:
            parts.append(str(self.arg))
            if self.arg2:
                parts.append(str(self.arg2))
        return f"Insn({' '.join(parts)})"


@dataclass(slots=True)
class Handler:
    """An exception-table row over labels: ``[start, end)`` is protected, ``catch_type`` 0 catches anything."""

    start: Label
    end: Label
    handler: Label
    catch_type: int


@dataclass(slots=True)
class Assembled:
    """The result of :func:`assemble`."""

    code: bytes
    offsets: dict[Label, int]
    instructions: list[Instruction]
    exception_table: list[ExceptionEntry]


class Symbolic(NamedTuple):
    """The result of :func:`to_symbolic`: the body and the labels created, by original offset."""

    items: list[Insn | Label]
    labels: dict[int, Label]


# --------------------------------------------------------------------------------------------------------
# Opcode classification tables (dense lists indexed by opcode; built once from the opcode table).

# Assembler categories, numbered by decreasing frequency in JDK code; the hot loop of _emit tests them as
# literals in this order (a literal compares faster than a global), so keep the numbers and the chain in step.
_A_NONE, _A_LOCAL, _A_CP2, _A_LDC, _A_COND, _A_S1, _A_BRANCH, _A_IFACE, _A_S2, _A_IINC, _A_INDY, _A_NEWARRAY, \
    _A_TABLE, _A_LOOKUP, _A_RET, _A_MULTI, _A_BAD = range(17)
# to_symbolic categories (likewise tested as literals)
_S_PLAIN, _S_SHORT, _S_BRANCH, _S_SWITCH, _S_LDC_W = range(5)

_ACAT: list[int] = [_A_BAD] * 256
_SCAT: list[int] = [_S_PLAIN] * 256
_CANON: list[int] = list(range(256))  # opcode -> canonical opcode (short form -> base, ldc_w -> ldc, ...)
_SHORT_K: list[int] = [0] * 256  # short form -> its implicit local
_FIRST_SHORT: list[int] = [0] * 256  # load/store base opcode -> its xxx_0 form

_BY_OPERAND = {
    Operand.NONE: _A_NONE, Operand.S1: _A_S1, Operand.S2: _A_S2, Operand.CP1: _A_LDC, Operand.CP2: _A_CP2,
    Operand.IINC: _A_IINC, Operand.BRANCH2: _A_COND, Operand.BRANCH4: _A_BRANCH, Operand.TABLESWITCH: _A_TABLE,
    Operand.LOOKUPSWITCH: _A_LOOKUP, Operand.INVOKEINTERFACE: _A_IFACE, Operand.INVOKEDYNAMIC: _A_INDY,
    Operand.NEWARRAY: _A_NEWARRAY, Operand.MULTIANEWARRAY: _A_MULTI, Operand.LOCAL: _A_LOCAL,
    Operand.WIDE: _A_BAD,
}
for _op in range(256):
    _kind = OPERAND_OF[_op]
    if _kind is None:
        continue
    _ACAT[_op] = _BY_OPERAND[_kind]
    if _kind is Operand.BRANCH2 or _kind is Operand.BRANCH4:
        _SCAT[_op] = _S_BRANCH
    elif _kind is Operand.TABLESWITCH or _kind is Operand.LOOKUPSWITCH:
        _SCAT[_op] = _S_SWITCH
for _short, (_base, _k) in SHORT_FORMS.items():
    _SCAT[_short] = _S_SHORT
    _CANON[_short] = _base
    _SHORT_K[_short] = _k
for _base in set(b for b, _ in SHORT_FORMS.values()):
    _FIRST_SHORT[_base] = SHORT_FORM_OF[(_base, 0)]
_ACAT[RET] = _A_RET
_ACAT[LDC_W] = _A_LDC
_SCAT[LDC_W] = _S_LDC_W
_ACAT[GOTO] = _ACAT[JSR] = _ACAT[GOTO_W] = _ACAT[JSR_W] = _A_BRANCH
_CANON[LDC_W] = LDC
_CANON[GOTO_W] = GOTO
_CANON[JSR_W] = JSR
_LONG_OF = {GOTO: GOTO_W, JSR: JSR_W, GOTO_W: GOTO_W, JSR_W: JSR_W}
del _op, _kind, _short, _base, _k

_S2 = struct.Struct(">h")
_S4 = struct.Struct(">i")
_WIDE_LOCAL = struct.Struct(">BBH")
_WIDE_IINC = struct.Struct(">BBHh")
_B_H = struct.Struct(">BH")
_B_H_B_B = struct.Struct(">BHBB")
_B_H_B = struct.Struct(">BHB")
_S2_MIN, _S2_MAX = -32768, 32767
_MAX_CODE = 65535


def _bad(x: Insn, why: str) -> ClassFileError:
    return ClassFileError(f"cannot assemble {x!r}: {why}")


# --------------------------------------------------------------------------------------------------------
# to_symbolic


def to_symbolic(insns: Sequence[Instruction], code_length: int, extra_offsets: Iterable[int] = ()) -> Symbolic:
    """Convert decoded instructions (absolute targets) to canonical symbolic form.

    One :class:`Label` is created per branch/switch target offset and per offset of ``extra_offsets`` (for
    exception-table bounds, LineNumberTable, LocalVariableTable, ...; ``code_length`` itself is allowed and
    gives a label after the last instruction). The result's ``items`` hold exactly one :class:`Insn` per
    input instruction, in order, with the labels placed before the instruction at their offset.
    """
    n = len(insns)
    if n:
        last = insns[-1]
        if last.offset + last.length != code_length:
            raise ClassFileError(f"code_length {code_length} does not match the last instruction "
                                 f"({last.name} at {last.offset}, {last.length} bytes)")
    elif code_length:
        raise ClassFileError(f"no instructions for code of {code_length} bytes")
    labels: dict[int, Label] = {}
    get = labels.get
    syms: list[Insn | Label] = []
    app = syms.append
    scat = _SCAT
    canon = _CANON
    short_k = _SHORT_K
    Insn_ = Insn
    for i in insns:
        op = i.opcode
        c = scat[op]
        if c == 0:  # _S_PLAIN
            app(Insn_(op, i.arg, i.arg2))
        elif c == 1:  # _S_SHORT
            app(Insn_(canon[op], short_k[op]))
        elif c == 2:  # _S_BRANCH
            t = i.arg
            lab = get(t)
            if lab is None:
                lab = labels[t] = Label()
            app(Insn_(canon[op], 0, 0, lab))
        elif c == 4:  # _S_LDC_W
            app(Insn_(LDC, i.arg))
        else:  # _S_SWITCH
            t = i.arg
            dflt = get(t)
            if dflt is None:
                dflt = labels[t] = Label()
            tl = []
            for t in i.targets:  # type: ignore[union-attr]
                lab = get(t)
                if lab is None:
                    lab = labels[t] = Label()
                tl.append(lab)
            keys = i.keys
            app(Insn_(op, 0, i.arg2, None, dflt, tl, None if keys is None else list(keys)))
    if code_length in labels:
        raise ClassFileError(f"a branch targets offset {code_length}, the end of the code")
    for o in extra_offsets:
        if o not in labels:
            labels[o] = Label()
    if not labels:
        return Symbolic(syms, labels)
    # place the labels: one bisection per label over the (sorted) instruction offsets
    offs = [i.offset for i in insns]
    items: list[Insn | Label] = []
    prev = 0
    for o in sorted(labels):
        k = bisect_left(offs, o, prev)
        if k == n:
            if o != code_length:
                raise ClassFileError(f"offset {o} is outside the code ({code_length} bytes)")
        elif offs[k] != o:
            raise ClassFileError(f"offset {o} is not the start of an instruction")
        items += syms[prev:k]
        items.append(labels[o])
        prev = k
    items += syms[prev:]
    return Symbolic(items, labels)


# --------------------------------------------------------------------------------------------------------
# assemble


class _Emitted(NamedTuple):
    """One emission pass: everything :func:`assemble` needs, plus the data for a re-layout."""

    code: bytearray
    instructions: list[Instruction]
    offsets: dict[Label, int]
    label_index: dict[Label, int]  # label -> index of the symbolic instruction it marks (first pass only)
    branches: list[tuple[Instruction, Label, int, Insn]]  # short branches: (emitted, target, index, insn)
    switches: list[tuple[Instruction, Insn, int]]  # (emitted, insn, symbolic index in the first pass)
    overflow: list[int]  # indices (into branches) of short branches whose displacement does not fit


def _emit(items: Sequence[Insn | Label], long_ids: set[int] | frozenset[int]) -> _Emitted:
    """Lay out and encode ``items`` with the branches whose ``id`` is in ``long_ids`` in long form.

    Offsets follow from the forms, so one pass suffices to encode; short branches whose displacement
    overflows are reported in ``overflow`` (with their bytes left as placeholders) for :func:`assemble`
    to grow them and emit again.
    """
    code = bytearray()
    put = code.append
    instrs: list[Instruction] = []
    app = instrs.append
    offsets: dict[Label, int] = {}
    label_index: dict[Label, int] = {}
    branches: list[tuple[Instruction, Label, int, Insn]] = []
    long_branches: list[tuple[Instruction, Label, Insn]] = []
    switches: list[tuple[Instruction, Insn, int]] = []
    acat = _ACAT
    Ins = Instruction
    Insn_ = Insn
    first_short = _FIRST_SHORT
    pos = 0
    try:
        for x in items:
            if type(x) is not Insn_:
                if type(x) is not Label:
                    raise ClassFileError(f"method body item {x!r} is neither an Insn nor a Label")
                if x in offsets:
                    raise ClassFileError(f"{x!r} is placed twice")
                offsets[x] = pos
                label_index[x] = len(instrs)
                continue
            op = x.opcode
            c = acat[op]
            if c == 0:  # _A_NONE
                put(op)
                app(Ins(pos, op, 0, 0, False, None, None, 1))
                pos += 1
            elif c == 1:  # _A_LOCAL
                a = x.arg
                if a < 4:
                    if a < 0:
                        raise _bad(x, "negative local index")
                    op = first_short[op] + a
                    put(op)
                    app(Ins(pos, op, 0, 0, False, None, None, 1))
                    pos += 1
                elif a < 256:
                    put(op)
                    put(a)
                    app(Ins(pos, op, a, 0, False, None, None, 2))
                    pos += 2
                elif a < 65536:
                    code += _WIDE_LOCAL.pack(WIDE, op, a)
                    app(Ins(pos, op, a, 0, True, None, None, 4))
                    pos += 4
                else:
                    raise _bad(x, "local index above 65535")
            elif c == 2:  # _A_CP2
                a = x.arg
                if not 0 < a < 65536:
                    raise _bad(x, "constant pool index outside 1..65535")
                code += _B_H.pack(op, a)
                app(Ins(pos, op, a, 0, False, None, None, 3))
                pos += 3
            elif c == 3:  # _A_LDC
                a = x.arg
                if a < 256:
                    if a <= 0:
                        raise _bad(x, "constant pool index outside 1..65535")
                    put(LDC)
                    put(a)
                    app(Ins(pos, LDC, a, 0, False, None, None, 2))
                    pos += 2
                elif a < 65536:
                    code += _B_H.pack(LDC_W, a)
                    app(Ins(pos, LDC_W, a, 0, False, None, None, 3))
                    pos += 3
                else:
                    raise _bad(x, "constant pool index outside 1..65535")
            elif c == 4:  # _A_COND
                if long_ids and id(x) in long_ids:
                    inv = INVERTED_BRANCH[op]
                    code += b"\0\0\0\0\0\0\0\0"
                    code[pos] = inv
                    code[pos + 2] = 8
                    code[pos + 3] = GOTO_W
                    app(Ins(pos, inv, pos + 8, 0, False, None, None, 3))
                    gw = Ins(pos + 3, GOTO_W, 0, 0, False, None, None, 5)
                    app(gw)
                    long_branches.append((gw, x.target, x))  # type: ignore[arg-type]
                    pos += 8
                else:
                    code += b"\0\0\0"
                    code[pos] = op
                    ins = Ins(pos, op, 0, 0, False, None, None, 3)
                    branches.append((ins, x.target, len(instrs), x))  # type: ignore[arg-type]
                    app(ins)
                    pos += 3
            elif c == 5:  # _A_S1
                a = x.arg
                if not -128 <= a < 128:
                    raise _bad(x, "bipush operand outside -128..127")
                put(op)
                put(a & 0xFF)
                app(Ins(pos, op, a, 0, False, None, None, 2))
                pos += 2
            elif c == 6:  # _A_BRANCH
                # goto/jsr (an explicit goto_w/jsr_w is canonicalised back: the layout decides)
                op = _LONG_OF[op] if long_ids and id(x) in long_ids else _CANON[op]
                if op > JSR:  # goto_w / jsr_w
                    code += b"\0\0\0\0\0"
                    code[pos] = op
                    ins = Ins(pos, op, 0, 0, False, None, None, 5)
                    long_branches.append((ins, x.target, x))  # type: ignore[arg-type]
                    app(ins)
                    pos += 5
                else:
                    code += b"\0\0\0"
                    code[pos] = op
                    ins = Ins(pos, op, 0, 0, False, None, None, 3)
                    branches.append((ins, x.target, len(instrs), x))  # type: ignore[arg-type]
                    app(ins)
                    pos += 3
            elif c == 7:  # _A_IFACE
                a = x.arg
                k = x.arg2
                if not (0 < a < 65536 and 0 < k < 256):
                    raise _bad(x, "pool index outside 1..65535 or count outside 1..255")
                code += _B_H_B_B.pack(op, a, k, 0)
                app(Ins(pos, op, a, k, False, None, None, 5))
                pos += 5
            elif c == 8:  # _A_S2
                a = x.arg
                if not -32768 <= a < 32768:
                    raise _bad(x, "sipush operand outside -32768..32767")
                put(op)
                code += _S2.pack(a)
                app(Ins(pos, op, a, 0, False, None, None, 3))
                pos += 3
            elif c == 9:  # _A_IINC
                a = x.arg
                k = x.arg2
                if 0 <= a < 256 and -128 <= k < 128:
                    put(op)
                    put(a)
                    put(k & 0xFF)
                    app(Ins(pos, op, a, k, False, None, None, 3))
                    pos += 3
                elif 0 <= a < 65536 and -32768 <= k < 32768:
                    code += _WIDE_IINC.pack(WIDE, op, a, k)
                    app(Ins(pos, op, a, k, True, None, None, 6))
                    pos += 6
                else:
                    raise _bad(x, "iinc local outside 0..65535 or constant outside -32768..32767")
            elif c == 10:  # _A_INDY
                a = x.arg
                if not 0 < a < 65536:
                    raise _bad(x, "constant pool index outside 1..65535")
                code += _B_H_B_B.pack(op, a, 0, 0)
                app(Ins(pos, op, a, 0, False, None, None, 5))
                pos += 5
            elif c == 11:  # _A_NEWARRAY
                a = x.arg
                if not 4 <= a <= 11:
                    raise _bad(x, "newarray type code outside 4..11")
                put(op)
                put(a)
                app(Ins(pos, op, a, 0, False, None, None, 2))
                pos += 2
            elif c == 12 or c == 13:  # _A_TABLE, _A_LOOKUP
                tl = x.targets
                if tl is None or x.default is None:
                    raise _bad(x, "a switch needs default and targets")
                ncases = len(tl)
                pad = 3 - (pos & 3)
                if c == 12:  # _A_TABLE
                    low = x.arg2
                    if not ncases or low + ncases - 1 > 2147483647 or low < -2147483648:
                        raise _bad(x, "tableswitch needs 1.. targets and low..high within 32 bits")
                    size = 1 + pad + 12 + 4 * ncases
                    ins = Ins(pos, op, 0, low, False, None, [], size)
                else:
                    keys = x.keys
                    if keys is None or len(keys) != ncases:
                        raise _bad(x, "lookupswitch needs as many keys as targets")
                    for j in range(1, ncases):
                        if keys[j - 1] >= keys[j]:
                            raise _bad(x, "lookupswitch keys must be strictly increasing")
                    if ncases and not (-2147483648 <= keys[0] and keys[-1] <= 2147483647):
                        raise _bad(x, "lookupswitch key outside 32 bits")
                    size = 1 + pad + 8 + 8 * ncases
                    ins = Ins(pos, op, 0, 0, False, list(keys), [], size)
                code += bytes(size)
                code[pos] = op
                switches.append((ins, x, len(instrs)))
                app(ins)
                pos += size
            elif c == 14:  # _A_RET
                a = x.arg
                if 0 <= a < 256:
                    put(op)
                    put(a)
                    app(Ins(pos, op, a, 0, False, None, None, 2))
                    pos += 2
                elif 0 <= a < 65536:
                    code += _WIDE_LOCAL.pack(WIDE, op, a)
                    app(Ins(pos, op, a, 0, True, None, None, 4))
                    pos += 4
                else:
                    raise _bad(x, "local index outside 0..65535")
            elif c == 15:  # _A_MULTI
                a = x.arg
                k = x.arg2
                if not (0 < a < 65536 and 0 < k < 256):
                    raise _bad(x, "pool index outside 1..65535 or dimensions outside 1..255")
                code += _B_H_B.pack(op, a, k)
                app(Ins(pos, op, a, k, False, None, None, 4))
                pos += 4
            else:
                raise _bad(x, "not an instruction opcode (wide is chosen by the assembler)")
    except IndexError:  # an opcode beyond 255 indexes past the opcode tables
        bad = next((x for x in items if isinstance(x, Insn) and not 0 <= x.opcode < 256), None)
        if bad is None:
            raise
        raise _bad(bad, "not an instruction opcode") from None

    if pos > _MAX_CODE:
        raise ClassFileError(f"method code too large: {pos} bytes")

    def resolve(lab: Label | None, x: Insn) -> int:
        t = offsets.get(lab)  # type: ignore[arg-type]
        if t is None:
            raise _bad(x, f"target {lab!r} is not placed in the method body")
        if t >= pos:
            raise _bad(x, f"target {lab!r} is the end of the code, not an instruction")
        return t

    overflow: list[int] = []
    pack2 = _S2.pack_into
    for j, (ins, lab, _, x) in enumerate(branches):
        t = offsets.get(lab)
        if t is None or t >= pos:
            t = resolve(lab, x)
        ins.arg = t
        d = t - ins.offset
        if _S2_MIN <= d <= _S2_MAX:
            pack2(code, ins.offset + 1, d)
        else:
            overflow.append(j)
    pack4 = _S4.pack_into
    for ins, lab, x in long_branches:
        t = resolve(lab, x)
        ins.arg = t
        pack4(code, ins.offset + 1, t - ins.offset)
    for ins, x, _ in switches:
        s = ins.offset
        dflt = resolve(x.default, x)
        ins.arg = dflt
        abs_targets = [resolve(lab, x) for lab in x.targets]  # type: ignore[union-attr]
        ins.targets = abs_targets
        p = s + 4 - (s & 3)
        if ins.keys is None:
            struct.pack_into(f">{3 + len(abs_targets)}i", code, p, dflt - s, ins.arg2,
                             ins.arg2 + len(abs_targets) - 1, *[t - s for t in abs_targets])
        else:
            pairs: list[int] = [len(abs_targets)]
            for key, t in zip(ins.keys, abs_targets):
                pairs.append(key)
                pairs.append(t - s)
            struct.pack_into(f">{2 + 2 * len(abs_targets)}i", code, p, dflt - s, *pairs)
    return _Emitted(code, instrs, offsets, label_index, branches, switches, overflow)


def _grow(first: _Emitted) -> tuple[set[int], list[int]]:
    """Iterate the layout over plain lists until no short branch overflows.

    Returns the ids of the :class:`Insn` that must be long and the final start offset of every symbolic
    instruction (plus the code length). Sizes only grow, so this terminates.
    """
    sizes = [i.length for i in first.instructions]  # first pass: one instruction per Insn
    label_index = first.label_index
    # (symbolic index, target index, long size, insn) of every short branch of the first pass
    pending = []
    for ins, lab, k, x in first.branches:
        pending.append((k, label_index[lab], 8 if x.opcode in INVERTED_BRANCH else 5, x))
    # switches: (symbolic index, size without padding)
    switches = [(k, ins.length - (3 - (ins.offset & 3))) for ins, _, k in first.switches]
    long_ids: set[int] = set()
    overflowing = {first.branches[j][2] for j in first.overflow}
    while True:
        for k, _, _, x in pending:
            if k in overflowing:
                long_ids.add(id(x))
        # the long forms are chosen per Insn object: one placed twice (allowed) grows at both places
        still = []
        for entry in pending:
            if id(entry[3]) in long_ids:
                sizes[entry[0]] = entry[2]
            else:
                still.append(entry)
        pending = still
        if switches:
            off = 0
            prev = 0
            for k, base in switches:
                off += sum(sizes[prev:k])
                sizes[k] = base + 3 - (off & 3)
                off += sizes[k]
                prev = k + 1
        offs = list(accumulate(sizes, initial=0))
        if offs[-1] > _MAX_CODE:
            raise ClassFileError(f"method code too large: {offs[-1]} bytes")
        overflowing = set()
        for k, tk, _, _ in pending:
            d = offs[tk] - offs[k]
            if d < _S2_MIN or d > _S2_MAX:
                overflowing.add(k)
        if not overflowing:
            return long_ids, offs


def _assemble(items: Sequence[Insn | Label], handlers: Sequence[Handler]) -> tuple[Assembled, list[int] | None]:
    """:func:`assemble`, also returning each symbolic instruction's start when the layout had to grow."""
    em = _emit(items, frozenset())
    starts = None
    if em.overflow:
        long_ids, starts = _grow(em)
        em = _emit(items, long_ids)
        if em.overflow:  # pragma: no cover - _grow reached a fixed point, the emission must agree
            raise AssertionError("assembler layout did not converge")
    offsets = em.offsets
    end = len(em.code)
    table = []
    for h in handlers:
        try:
            s = offsets[h.start]
            e = offsets[h.end]
            hp = offsets[h.handler]
        except KeyError as err:
            raise ClassFileError(f"exception handler {h!r} uses a label that is not placed: {err}") from None
        if s == e:
            continue
        if s > e:
            raise ClassFileError(f"exception handler range [{s}, {e}) is reversed ({h!r})")
        if hp >= end:
            raise ClassFileError(f"exception handler at {hp} is the end of the code ({h!r})")
        table.append(ExceptionEntry(s, e, hp, h.catch_type))
    return Assembled(bytes(em.code), offsets, em.instructions, table), starts


def assemble(items: Sequence[Insn | Label], handlers: Sequence[Handler] = ()) -> Assembled:
    """Lay out and encode a symbolic method body with the shortest encodings (see the module docstring)."""
    return _assemble(items, handlers)[0]


# --------------------------------------------------------------------------------------------------------
# reassemble


def reassemble(code: bytes, exception_table: list[ExceptionEntry], extra_offsets: Iterable[int] = (),
               insns: list[Instruction] | None = None) -> tuple[Assembled, dict[int, int]]:
    """Decode ``code``, convert it to symbolic form and assemble it again.

    Returns the result and ``offset_map``: old offset -> new offset for every old instruction start and for
    the old code length, so callers can rewrite LineNumberTable, LocalVariableTable and other offset-bearing
    attributes. ``extra_offsets`` are checked to be instruction starts (or the code length). ``insns`` is
    ``decode(code)`` when the caller already has it.
    """
    if insns is None:
        insns = decode(code)
    n = len(code)
    extra = set(extra_offsets)
    for e in exception_table:
        extra.add(e.start)
        extra.add(e.end)
        extra.add(e.handler)
    items, labels = to_symbolic(insns, n, extra)
    old_offsets = [i.offset for i in insns]
    del insns  # free the decoded instructions before assembling (fewer live objects, less GC work)
    handlers = [Handler(labels[e.start], labels[e.end], labels[e.handler], e.catch_type)
                for e in exception_table]
    asm, starts = _assemble(items, handlers)
    if starts is None:  # no branch grew: one instruction per Insn
        starts = [i.offset for i in asm.instructions]
    offset_map = dict(zip(old_offsets, starts))
    offset_map[n] = len(asm.code)
    return asm, offset_map
