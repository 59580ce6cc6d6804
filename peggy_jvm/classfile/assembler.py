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

# Assembler categories: each indexes its encoder in _ENCODERS (keep the two in step).
_A_NONE, _A_LOCAL, _A_CP2, _A_LDC, _A_COND, _A_S1, _A_BRANCH, _A_IFACE, _A_S2, _A_IINC, _A_INDY, _A_NEWARRAY, \
    _A_TABLE, _A_LOOKUP, _A_RET, _A_MULTI, _A_BAD = range(17)
# to_symbolic categories, tested as literals in its loop (a literal compares faster than a global)
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
_B_S2 = struct.Struct(">Bh")
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
            assert i.targets is not None  # a decoded switch has targets
            for t in i.targets:
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


class _Pass:
    """The state of one emission pass, which the encoders below append to.

    ``code`` grows by exactly the bytes of each emitted instruction, so ``len(code)`` is always the offset of
    the next one. Branch and switch operands are left as zero placeholders, recorded in ``branches`` (short
    forms), ``long_branches`` (``goto_w``/``jsr_w``, including the second half of a far conditional) and
    ``switches``, and filled in by the ``_patch_*`` functions once every label is placed.
    """

    __slots__ = ("code", "instrs", "long_ids", "branches", "long_branches", "switches")

    def __init__(self, long_ids: set[int] | frozenset[int]) -> None:
        self.code = bytearray()
        self.instrs: list[Instruction] = []
        self.long_ids = long_ids
        self.branches: list[tuple[Instruction, Label, int, Insn]] = []
        self.long_branches: list[tuple[Instruction, Label, Insn]] = []
        self.switches: list[tuple[Instruction, Insn, int]] = []


# -- encoders, one per assembler category (see _ENCODERS); each checks its operands, chooses the form and
# appends the bytes and Instruction(s) to the pass. They run once per instruction, so they stay small.

_ONE_BYTE = [bytes((op,)) for op in range(256)]


def _put(em: _Pass, encoded: bytes, op: int, a: int, k: int, wide: bool) -> None:
    """Append one instruction whose bytes do not depend on where labels land: ``encoded``, operands ``a``, ``k``."""
    code = em.code
    em.instrs.append(Instruction(len(code), op, a, k, wide, None, None, len(encoded)))
    code += encoded


def _plain(em: _Pass, x: Insn, op: int) -> None:
    """An opcode without operands (the most frequent kind: :func:`_put` spelt out, one call fewer)."""
    code = em.code
    em.instrs.append(Instruction(len(code), op, 0, 0, False, None, None, 1))
    code.append(op)


def _local_index(em: _Pass, x: Insn, op: int, a: int, why: str) -> None:
    """``op`` with local ``a`` as a one-byte operand up to 255, else ``wide`` and two bytes (``why`` names the
    valid range when ``a`` is outside 0..65535)."""
    if 0 <= a < 256:
        _put(em, bytes((op, a)), op, a, 0, False)
    elif 0 <= a < 65536:
        _put(em, _WIDE_LOCAL.pack(WIDE, op, a), op, a, 0, True)
    else:
        raise _bad(x, why)


def _load_store(em: _Pass, x: Insn, op: int) -> None:
    """A load or store of a local: ``xload_n``/``xstore_n`` for locals 0-3, else :func:`_local_index`."""
    a = x.arg
    if 0 <= a < 4:
        op = _FIRST_SHORT[op] + a
        _put(em, _ONE_BYTE[op], op, 0, 0, False)
    elif a < 0:
        raise _bad(x, "negative local index")
    else:
        _local_index(em, x, op, a, "local index above 65535")


def _ret(em: _Pass, x: Insn, op: int) -> None:
    """``ret`` has no short forms."""
    _local_index(em, x, op, x.arg, "local index outside 0..65535")


def _iinc(em: _Pass, x: Insn, op: int) -> None:
    """``iinc``: byte operands when the local fits in 0..255 and the constant in -128..127, else ``wide``."""
    a = x.arg
    k = x.arg2
    if 0 <= a < 256 and -128 <= k < 128:
        _put(em, bytes((op, a, k & 0xFF)), op, a, k, False)
    elif 0 <= a < 65536 and -32768 <= k < 32768:
        _put(em, _WIDE_IINC.pack(WIDE, op, a, k), op, a, k, True)
    else:
        raise _bad(x, "iinc local outside 0..65535 or constant outside -32768..32767")


def _ldc(em: _Pass, x: Insn, op: int) -> None:
    """A single-slot constant (``ldc`` or ``ldc_w`` as written): ``ldc`` for pool indices below 256."""
    a = x.arg
    if 0 < a < 256:
        _put(em, bytes((LDC, a)), LDC, a, 0, False)
    elif 0 < a < 65536:
        _put(em, _B_H.pack(LDC_W, a), LDC_W, a, 0, False)
    else:
        raise _bad(x, "constant pool index outside 1..65535")


def _bipush(em: _Pass, x: Insn, op: int) -> None:
    a = x.arg
    if not -128 <= a < 128:
        raise _bad(x, "bipush operand outside -128..127")
    _put(em, bytes((op, a & 0xFF)), op, a, 0, False)


def _sipush(em: _Pass, x: Insn, op: int) -> None:
    a = x.arg
    if not -32768 <= a < 32768:
        raise _bad(x, "sipush operand outside -32768..32767")
    _put(em, _B_S2.pack(op, a), op, a, 0, False)


def _pool_ref(em: _Pass, x: Insn, op: int) -> None:
    """A two-byte pool index (fields, invokes but invokeinterface/invokedynamic, new, checkcast, ...)."""
    a = x.arg
    if not 0 < a < 65536:
        raise _bad(x, "constant pool index outside 1..65535")
    _put(em, _B_H.pack(op, a), op, a, 0, False)


def _invokeinterface(em: _Pass, x: Insn, op: int) -> None:
    a = x.arg
    k = x.arg2
    if not (0 < a < 65536 and 0 < k < 256):
        raise _bad(x, "pool index outside 1..65535 or count outside 1..255")
    _put(em, _B_H_B_B.pack(op, a, k, 0), op, a, k, False)


def _invokedynamic(em: _Pass, x: Insn, op: int) -> None:
    a = x.arg
    if not 0 < a < 65536:
        raise _bad(x, "constant pool index outside 1..65535")
    _put(em, _B_H_B_B.pack(op, a, 0, 0), op, a, 0, False)


def _newarray(em: _Pass, x: Insn, op: int) -> None:
    a = x.arg
    if not 4 <= a <= 11:
        raise _bad(x, "newarray type code outside 4..11")
    _put(em, bytes((op, a)), op, a, 0, False)


def _multianewarray(em: _Pass, x: Insn, op: int) -> None:
    a = x.arg
    k = x.arg2
    if not (0 < a < 65536 and 0 < k < 256):
        raise _bad(x, "pool index outside 1..65535 or dimensions outside 1..255")
    _put(em, _B_H_B.pack(op, a, k), op, a, k, False)


def _reserve(em: _Pass, ins: Instruction) -> None:
    """Append ``ins``, whose operands depend on where labels land: its opcode, then zeros until a
    ``_patch_*`` function fills them in."""
    code = em.code
    code += bytes(ins.length)
    code[ins.offset] = ins.opcode
    em.instrs.append(ins)


def _short_branch(em: _Pass, x: Insn, op: int) -> None:
    """A branch with a 16-bit displacement, patched by :func:`_patch_branches` (which reports overflow)."""
    ins = Instruction(len(em.code), op, 0, 0, False, None, None, 3)
    em.branches.append((ins, _branch_target(x), len(em.instrs), x))
    _reserve(em, ins)


def _long_goto(em: _Pass, x: Insn, op: int) -> None:
    """``goto_w``/``jsr_w``: a 32-bit displacement, patched by :func:`_patch_long_branches`."""
    ins = Instruction(len(em.code), op, 0, 0, False, None, None, 5)
    em.long_branches.append((ins, _branch_target(x), x))
    _reserve(em, ins)


def _conditional(em: _Pass, x: Insn, op: int) -> None:
    """A conditional branch: short, or when far (its Insn in ``long_ids``) ``if<!cond> +8; goto_w target``."""
    if not (em.long_ids and id(x) in em.long_ids):
        _short_branch(em, x, op)
        return
    inv = INVERTED_BRANCH[op]
    code = em.code
    pos = len(code)
    code.append(inv)
    code += b"\0\x08"  # over itself and the goto_w: to the instruction after the pair
    em.instrs.append(Instruction(pos, inv, pos + 8, 0, False, None, None, 3))
    _long_goto(em, x, GOTO_W)


def _goto(em: _Pass, x: Insn, op: int) -> None:
    """``goto``/``jsr``, long when its Insn is in ``long_ids`` (an explicit ``goto_w``/``jsr_w`` is
    canonicalised back: the layout decides)."""
    if em.long_ids and id(x) in em.long_ids:
        _long_goto(em, x, _LONG_OF[op])
    else:
        _short_branch(em, x, _CANON[op])


def _branch_target(x: Insn) -> Label:
    lab = x.target
    if lab is None:
        raise _bad(x, "a branch needs a target")
    return lab


def _switch_targets(x: Insn) -> list[Label]:
    tl = x.targets
    if tl is None or x.default is None:
        raise _bad(x, "a switch needs default and targets")
    return tl


def _add_switch(em: _Pass, x: Insn, ins: Instruction) -> None:
    """The switch's padding and table, zeros until :func:`_patch_switches`."""
    em.switches.append((ins, x, len(em.instrs)))
    _reserve(em, ins)


def _tableswitch(em: _Pass, x: Insn, op: int) -> None:
    """``tableswitch``: padding to a 4-byte boundary, default, low, high, one offset per target."""
    ncases = len(_switch_targets(x))
    low = x.arg2
    if not ncases or low + ncases - 1 > 2147483647 or low < -2147483648:
        raise _bad(x, "tableswitch needs 1.. targets and low..high within 32 bits")
    pos = len(em.code)
    _add_switch(em, x, Instruction(pos, op, 0, low, False, None, [], 1 + 3 - (pos & 3) + 12 + 4 * ncases))


def _lookupswitch(em: _Pass, x: Insn, op: int) -> None:
    """``lookupswitch``: padding to a 4-byte boundary, default, count, (key, offset) pairs by key."""
    ncases = len(_switch_targets(x))
    keys = x.keys
    if keys is None or len(keys) != ncases:
        raise _bad(x, "lookupswitch needs as many keys as targets")
    for j in range(1, ncases):
        if keys[j - 1] >= keys[j]:
            raise _bad(x, "lookupswitch keys must be strictly increasing")
    if ncases and not (-2147483648 <= keys[0] and keys[-1] <= 2147483647):
        raise _bad(x, "lookupswitch key outside 32 bits")
    pos = len(em.code)
    _add_switch(em, x, Instruction(pos, op, 0, 0, False, list(keys), [], 1 + 3 - (pos & 3) + 8 + 8 * ncases))


def _not_an_instruction(em: _Pass, x: Insn, op: int) -> None:
    raise _bad(x, "not an instruction opcode (wide is chosen by the assembler)")


#: Encoder per assembler category (indexed by the _A_* numbers).
_ENCODERS = (_plain, _load_store, _pool_ref, _ldc, _conditional, _bipush, _goto, _invokeinterface, _sipush, _iinc,
             _invokedynamic, _newarray, _tableswitch, _lookupswitch, _ret, _multianewarray, _not_an_instruction)


# -- patching: operands that depend on where the labels landed

def _resolve(offsets: dict[Label, int], end: int, lab: Label | None, x: Insn) -> int:
    t = None if lab is None else offsets.get(lab)
    if t is None:
        raise _bad(x, f"target {lab!r} is not placed in the method body")
    if t >= end:
        raise _bad(x, f"target {lab!r} is the end of the code, not an instruction")
    return t


def _patch_branches(em: _Pass, offsets: dict[Label, int]) -> list[int]:
    """Fill in the short branches' displacements; returns the indices of those that do not fit 16 bits."""
    code = em.code
    end = len(code)
    overflow: list[int] = []
    pack2 = _S2.pack_into
    for j, (ins, lab, _, x) in enumerate(em.branches):
        t = offsets.get(lab)
        if t is None or t >= end:
            t = _resolve(offsets, end, lab, x)
        ins.arg = t
        d = t - ins.offset
        if _S2_MIN <= d <= _S2_MAX:
            pack2(code, ins.offset + 1, d)
        else:
            overflow.append(j)
    return overflow


def _patch_long_branches(em: _Pass, offsets: dict[Label, int]) -> None:
    code = em.code
    end = len(code)
    pack4 = _S4.pack_into
    for ins, lab, x in em.long_branches:
        t = _resolve(offsets, end, lab, x)
        ins.arg = t
        pack4(code, ins.offset + 1, t - ins.offset)


def _patch_switches(em: _Pass, offsets: dict[Label, int]) -> None:
    """Fill in each switch's default and targets, relative to the switch, after its padding."""
    code = em.code
    end = len(code)
    for ins, x, _ in em.switches:
        s = ins.offset
        dflt = _resolve(offsets, end, x.default, x)
        ins.arg = dflt
        abs_targets = [_resolve(offsets, end, lab, x) for lab in _switch_targets(x)]
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


def _emit(items: Sequence[Insn | Label], long_ids: set[int] | frozenset[int]) -> _Emitted:
    """Lay out and encode ``items`` with the branches whose ``id`` is in ``long_ids`` in long form.

    Offsets follow from the forms, so one pass suffices to encode; short branches whose displacement
    overflows are reported in ``overflow`` (with their bytes left as placeholders) for :func:`assemble`
    to grow them and emit again.
    """
    em = _Pass(long_ids)
    code = em.code
    instrs = em.instrs
    offsets: dict[Label, int] = {}
    label_index: dict[Label, int] = {}
    encoders = _ENCODERS
    acat = _ACAT
    Insn_ = Insn
    try:
        for x in items:
            if type(x) is Insn_:
                op = x.opcode
                encoders[acat[op]](em, x, op)
            elif type(x) is Label:
                if x in offsets:
                    raise ClassFileError(f"{x!r} is placed twice")
                offsets[x] = len(code)
                label_index[x] = len(instrs)
            else:
                raise ClassFileError(f"method body item {x!r} is neither an Insn nor a Label")
    except IndexError:  # an opcode beyond 255 indexes past the opcode tables
        bad = next((x for x in items if isinstance(x, Insn) and not 0 <= x.opcode < 256), None)
        if bad is None:
            raise
        raise _bad(bad, "not an instruction opcode") from None
    if len(code) > _MAX_CODE:
        raise ClassFileError(f"method code too large: {len(code)} bytes")
    overflow = _patch_branches(em, offsets)
    _patch_long_branches(em, offsets)
    _patch_switches(em, offsets)
    return _Emitted(code, instrs, offsets, label_index, em.branches, em.switches, overflow)


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
