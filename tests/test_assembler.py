"""Tests for peggy_jvm.classfile.assembler: form selection, switch padding, far branches, handlers, and the
byte-for-byte round trip of real JDK code (which needs a JDK: without one these tests fail, not skip).
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from peggy_jvm.classfile import opcodes as op
from peggy_jvm.classfile.assembler import (
    Assembled, Handler, Insn, Label, assemble, reassemble, to_symbolic,
)
from peggy_jvm.classfile.bytecode import Instruction, decode, encode
from peggy_jvm.classfile.errors import ClassFileError
from peggy_jvm.classfile.model import CodeAttribute, ExceptionEntry
from peggy_jvm.classfile.reader import read_class, read_code


def asm(items: list, handlers: list | None = None) -> Assembled:
    """Assemble and check the invariants every result must satisfy."""
    a = assemble(items, handlers or [])
    assert isinstance(a.code, bytes)
    assert decode(a.code) == a.instructions
    assert encode(a.instructions) == a.code
    for item in items:
        if isinstance(item, Label):
            assert item in a.offsets
    return a


def nops(n: int) -> list[Insn | Label]:
    return [Insn(op.NOP) for _ in range(n)]


# ------------------------------------------------------------------------------------------ loads, stores

LOADS_STORES = [op.ILOAD, op.LLOAD, op.FLOAD, op.DLOAD, op.ALOAD,
                op.ISTORE, op.LSTORE, op.FSTORE, op.DSTORE, op.ASTORE]
FIRST_SHORT = {op.ILOAD: 0x1a, op.LLOAD: 0x1e, op.FLOAD: 0x22, op.DLOAD: 0x26, op.ALOAD: 0x2a,
               op.ISTORE: 0x3b, op.LSTORE: 0x3f, op.FSTORE: 0x43, op.DSTORE: 0x47, op.ASTORE: 0x4b}


@pytest.mark.parametrize("base", LOADS_STORES, ids=lambda b: op.NAME_OF[b])
@pytest.mark.parametrize("local", [0, 1, 2, 3])
def test_short_load_store(base: int, local: int) -> None:
    a = asm([Insn(base, local)])
    assert a.code == bytes([FIRST_SHORT[base] + local])
    assert a.instructions[0].name == f"{op.NAME_OF[base]}_{local}"


@pytest.mark.parametrize("base", LOADS_STORES, ids=lambda b: op.NAME_OF[b])
@pytest.mark.parametrize("local", [4, 5, 127, 128, 255])
def test_one_byte_load_store(base: int, local: int) -> None:
    a = asm([Insn(base, local)])
    assert a.code == bytes([base, local])
    ins = a.instructions[0]
    assert (ins.opcode, ins.arg, ins.wide, ins.length) == (base, local, False, 2)


@pytest.mark.parametrize("base", LOADS_STORES, ids=lambda b: op.NAME_OF[b])
@pytest.mark.parametrize("local", [256, 300, 65535])
def test_wide_load_store(base: int, local: int) -> None:
    a = asm([Insn(base, local)])
    assert a.code == bytes([0xC4, base, local >> 8, local & 0xFF])
    ins = a.instructions[0]
    assert (ins.opcode, ins.arg, ins.wide, ins.length) == (base, local, True, 4)


def test_load_examples_from_the_brief() -> None:
    assert asm([Insn(op.ILOAD, 0)]).instructions[0].name == "iload_0"
    assert asm([Insn(op.ILOAD, 4)]).code == b"\x15\x04"
    assert asm([Insn(op.ILOAD, 300)]).code == b"\xc4\x15\x01\x2c"


@pytest.mark.parametrize("bad", [-1, 65536])
def test_load_local_out_of_range(bad: int) -> None:
    with pytest.raises(ClassFileError):
        assemble([Insn(op.ILOAD, bad)], [])


def test_explicit_short_form_is_kept() -> None:
    assert asm([Insn(0x2b)]).code == b"\x2b"  # aload_1 as written


# ------------------------------------------------------------------------------------------ iinc, ret

@pytest.mark.parametrize(("local", "const", "expected"), [
    (2, -1, "84 02 ff"),
    (2, 127, "84 02 7f"),
    (2, -128, "84 02 80"),
    (0, 0, "84 00 00"),
    (255, 1, "84 ff 01"),
    (2, 128, "c4 84 00 02 00 80"),
    (2, -129, "c4 84 00 02 ff 7f"),
    (2, 200, "c4 84 00 02 00 c8"),
    (300, 1, "c4 84 01 2c 00 01"),
    (256, -1, "c4 84 01 00 ff ff"),
    (65535, 32767, "c4 84 ff ff 7f ff"),
    (3, -32768, "c4 84 00 03 80 00"),
])
def test_iinc(local: int, const: int, expected: str) -> None:
    a = asm([Insn(op.IINC, local, const)])
    assert a.code == bytes.fromhex(expected)
    ins = a.instructions[0]
    assert (ins.opcode, ins.arg, ins.arg2, ins.wide) == (op.IINC, local, const, len(a.code) == 6)


@pytest.mark.parametrize(("local", "const"), [(-1, 0), (65536, 0), (1, 32768), (1, -32769)])
def test_iinc_out_of_range(local: int, const: int) -> None:
    with pytest.raises(ClassFileError):
        assemble([Insn(op.IINC, local, const)], [])


@pytest.mark.parametrize(("local", "expected"), [(0, "a9 00"), (3, "a9 03"), (255, "a9 ff"),
                                                 (256, "c4 a9 01 00"), (300, "c4 a9 01 2c")])
def test_ret(local: int, expected: str) -> None:
    assert asm([Insn(op.RET, local)]).code == bytes.fromhex(expected)


# ------------------------------------------------------------------------------------------ constants

@pytest.mark.parametrize(("index", "expected"), [(1, "12 01"), (255, "12 ff"), (256, "13 01 00"),
                                                 (65535, "13 ff ff")])
def test_ldc_picks_the_width(index: int, expected: str) -> None:
    a = asm([Insn(op.LDC, index)])
    assert a.code == bytes.fromhex(expected)
    assert a.instructions[0].arg == index
    # an explicit ldc_w is re-decided by the assembler too
    assert asm([Insn(op.LDC_W, index)]).code == bytes.fromhex(expected)


@pytest.mark.parametrize("index", [0, -1, 65536])
def test_ldc_bad_index(index: int) -> None:
    with pytest.raises(ClassFileError):
        assemble([Insn(op.LDC, index)], [])


def test_ldc2_w_stays_wide() -> None:
    assert asm([Insn(op.LDC2_W, 5)]).code == b"\x14\x00\x05"


@pytest.mark.parametrize(("opcode", "value", "expected"), [
    (op.BIPUSH, -128, "10 80"), (op.BIPUSH, 127, "10 7f"), (op.BIPUSH, 0, "10 00"), (op.BIPUSH, -1, "10 ff"),
    (op.SIPUSH, -32768, "11 80 00"), (op.SIPUSH, 32767, "11 7f ff"), (op.SIPUSH, -2, "11 ff fe"),
])
def test_push(opcode: int, value: int, expected: str) -> None:
    a = asm([Insn(opcode, value)])
    assert a.code == bytes.fromhex(expected)
    assert a.instructions[0].arg == value


@pytest.mark.parametrize(("opcode", "value"), [(op.BIPUSH, 128), (op.BIPUSH, -129), (op.SIPUSH, 32768),
                                               (op.SIPUSH, -32769)])
def test_push_out_of_range(opcode: int, value: int) -> None:
    with pytest.raises(ClassFileError):
        assemble([Insn(opcode, value)], [])


# ------------------------------------------------------------------------------------------ other operands

CP2_OPCODES = [op.GETSTATIC, op.PUTSTATIC, op.GETFIELD, op.PUTFIELD, op.INVOKEVIRTUAL, op.INVOKESPECIAL,
               op.INVOKESTATIC, op.NEW, op.ANEWARRAY, op.CHECKCAST, op.INSTANCEOF, op.LDC2_W]


@pytest.mark.parametrize("opcode", CP2_OPCODES, ids=lambda o: op.NAME_OF[o])
def test_pool_index_operand(opcode: int) -> None:
    a = asm([Insn(opcode, 0x1234)])
    assert a.code == bytes([opcode, 0x12, 0x34])
    assert (a.instructions[0].opcode, a.instructions[0].arg) == (opcode, 0x1234)
    with pytest.raises(ClassFileError):
        assemble([Insn(opcode, 0)], [])


@pytest.mark.parametrize("atype", range(4, 12))
def test_newarray(atype: int) -> None:
    assert asm([Insn(op.NEWARRAY, atype)]).code == bytes([0xBC, atype])


@pytest.mark.parametrize("atype", [0, 3, 12])
def test_newarray_bad_type(atype: int) -> None:
    with pytest.raises(ClassFileError):
        assemble([Insn(op.NEWARRAY, atype)], [])


def test_multianewarray() -> None:
    a = asm([Insn(op.MULTIANEWARRAY, 0x0107, 3)])
    assert a.code == bytes.fromhex("c5 01 07 03")
    assert (a.instructions[0].arg, a.instructions[0].arg2) == (0x0107, 3)
    with pytest.raises(ClassFileError):
        assemble([Insn(op.MULTIANEWARRAY, 7, 0)], [])


def test_invokeinterface_count_byte() -> None:
    a = asm([Insn(op.INVOKEINTERFACE, 0x0209, 4)])
    assert a.code == bytes.fromhex("b9 02 09 04 00")
    assert (a.instructions[0].arg, a.instructions[0].arg2) == (0x0209, 4)
    with pytest.raises(ClassFileError):
        assemble([Insn(op.INVOKEINTERFACE, 9, 0)], [])


def test_invokedynamic_zero_bytes() -> None:
    assert asm([Insn(op.INVOKEDYNAMIC, 0x0c0d)]).code == bytes.fromhex("ba 0c 0d 00 00")


def test_wide_and_invalid_opcodes_are_refused() -> None:
    for bad in (op.WIDE, 0xCA, 0xFE, 0xFF, 256, 1000, -1):
        with pytest.raises(ClassFileError):
            assemble([Insn(bad)], [])


NONE_OPCODES = [o for o, info in op.OPCODES.items() if info.operand is op.Operand.NONE]


@pytest.mark.parametrize("opcode", NONE_OPCODES, ids=lambda o: op.NAME_OF[o])
def test_no_operand_opcodes(opcode: int) -> None:
    a = asm([Insn(opcode)])
    assert a.code == bytes([opcode])


def test_every_opcode_assembles_and_decodes_back() -> None:
    near, far_fwd, far_back = Label("near"), Label("far_fwd"), Label("far_back")
    items: list = [far_back]
    expected: dict[int, set[tuple]] = {}

    def add(insn: Insn, opcode: int, arg: int = 0, arg2: int = 0, wide: bool = False) -> None:
        items.append(insn)
        expected.setdefault(opcode, set()).add((op.NAME_OF[opcode], arg, arg2, wide))

    for o in NONE_OPCODES:
        add(Insn(*op.SHORT_FORMS[o]) if o in op.SHORT_FORMS else Insn(o), o)
    for base in LOADS_STORES:
        add(Insn(base, 9), base, 9)
        add(Insn(base, 300), base, 300, wide=True)
    for o in CP2_OPCODES:
        add(Insn(o, 77), o, 77)
    add(Insn(op.BIPUSH, -5), op.BIPUSH, -5)
    add(Insn(op.SIPUSH, -300), op.SIPUSH, -300)
    add(Insn(op.LDC, 3), op.LDC, 3)
    add(Insn(op.LDC, 3000), op.LDC_W, 3000)
    add(Insn(op.IINC, 1, -7), op.IINC, 1, -7)
    add(Insn(op.IINC, 1, 700), op.IINC, 1, 700, wide=True)
    add(Insn(op.RET, 6), op.RET, 6)
    add(Insn(op.RET, 600), op.RET, 600, wide=True)
    add(Insn(op.INVOKEINTERFACE, 8, 2), op.INVOKEINTERFACE, 8, 2)
    add(Insn(op.INVOKEDYNAMIC, 9), op.INVOKEDYNAMIC, 9)
    add(Insn(op.NEWARRAY, 10), op.NEWARRAY, 10)
    add(Insn(op.MULTIANEWARRAY, 11, 2), op.MULTIANEWARRAY, 11, 2)
    for o in sorted(op.CONDITIONAL_BRANCHES) + [op.GOTO, op.JSR]:
        items.append(Insn(o, target=near))
    items.append(Insn(op.TABLESWITCH, arg2=-1, default=near, targets=[far_back, near]))
    items.append(Insn(op.LOOKUPSWITCH, keys=[-9, 9], default=far_back, targets=[near, near]))
    items += [near, Insn(op.NOP), Insn(op.JSR, target=far_fwd), Insn(op.GOTO, target=far_fwd)]
    items += [Insn(op.NOP)] * 33000
    items += [far_fwd, Insn(op.IFEQ, target=far_back), Insn(op.GOTO, target=far_back), Insn(op.RETURN)]
    a = asm(items)
    assert {i.opcode for i in a.instructions} == set(op.OPCODES) - {op.WIDE}
    seen: dict[int, set[tuple]] = {}
    for ins in a.instructions:
        if ins.opcode in expected:
            seen.setdefault(ins.opcode, set()).add((ins.name, ins.arg, ins.arg2, ins.wide))
    assert seen == expected
    at = a.offsets
    jumps = [(i.name, i.arg) for i in a.instructions
             if op.OPERAND_OF[i.opcode] in (op.Operand.BRANCH2, op.Operand.BRANCH4)]
    expanded = next(i for i in a.instructions if i.offset > at[far_fwd] - 1 and i.name == "ifne")
    assert jumps == [(op.NAME_OF[o], at[near]) for o in sorted(op.CONDITIONAL_BRANCHES)] + [
        ("goto", at[near]), ("jsr", at[near]), ("jsr_w", at[far_fwd]), ("goto_w", at[far_fwd]),
        ("ifne", expanded.offset + 8), ("goto_w", 0), ("goto_w", 0)]
    assert expanded.offset == at[far_fwd]
    switches = [(i.arg, i.targets) for i in a.instructions if i.targets is not None]
    assert switches == [(at[near], [0, at[near]]), (0, [at[near], at[near]])]


# ------------------------------------------------------------------------------------------ switches

EXPECTED_PAD = {0: 3, 1: 2, 2: 1, 3: 0}  # bytes of padding after a switch opcode at offset 4k + n


@pytest.mark.parametrize("nops", [0, 1, 2, 3, 4, 5, 6, 7])
def test_tableswitch_padding(nops: int) -> None:
    back, dflt = Label("back"), Label("default")
    cases = [Label(f"c{k}") for k in range(4)]
    items: list = [back] + [Insn(op.NOP)] * nops
    items.append(Insn(op.TABLESWITCH, arg2=-2, default=dflt, targets=[cases[0], back, cases[2], cases[3]]))
    for k, lab in enumerate(cases):
        if k != 1:
            items += [lab, Insn(op.ICONST_0 + k), Insn(op.IRETURN)]
    items += [dflt, Insn(op.ICONST_M1), Insn(op.IRETURN)]
    a = asm(items)
    pad = EXPECTED_PAD[nops % 4]
    sw = a.code[nops:]
    assert sw[0] == 0xAA
    assert sw[1:1 + pad] == bytes(pad)
    d, low, high = struct.unpack_from(">iii", sw, 1 + pad)
    disps = struct.unpack_from(">4i", sw, 1 + pad + 12)
    assert (low, high) == (-2, 1)
    assert d == a.offsets[dflt] - nops
    assert list(disps) == [a.offsets[cases[0]] - nops, -nops, a.offsets[cases[2]] - nops,
                           a.offsets[cases[3]] - nops]
    assert a.offsets[cases[0]] == nops + 1 + pad + 12 + 16
    ins = a.instructions[nops]
    assert ins.arg == a.offsets[dflt] and ins.arg2 == -2
    assert ins.targets == [a.offsets[cases[0]], 0, a.offsets[cases[2]], a.offsets[cases[3]]]


@pytest.mark.parametrize("nops", [0, 1, 2, 3, 4, 5, 6, 7])
def test_lookupswitch_padding(nops: int) -> None:
    dflt = Label("default")
    keys = [-2147483648, -100, -1, 0, 7, 2147483647]
    cases = [Label(f"k{k}") for k in keys]
    items: list = [Insn(op.NOP)] * nops
    items.append(Insn(op.LOOKUPSWITCH, keys=list(keys), default=dflt, targets=cases))
    for k, lab in enumerate(cases):
        items += [lab, Insn(op.SIPUSH, k), Insn(op.IRETURN)]
    items += [dflt, Insn(op.ICONST_M1), Insn(op.IRETURN)]
    a = asm(items)
    pad = EXPECTED_PAD[nops % 4]
    sw = a.code[nops:]
    assert sw[0] == 0xAB
    assert sw[1:1 + pad] == bytes(pad)
    d, npairs = struct.unpack_from(">ii", sw, 1 + pad)
    pairs = struct.unpack_from(f">{2 * len(keys)}i", sw, 1 + pad + 8)
    assert npairs == len(keys)
    assert list(pairs[0::2]) == keys
    assert list(pairs[1::2]) == [a.offsets[lab] - nops for lab in cases]
    assert d == a.offsets[dflt] - nops
    assert a.offsets[cases[0]] == nops + 1 + pad + 8 + 8 * len(keys)
    ins = a.instructions[nops]
    assert ins.keys == keys and ins.targets == [a.offsets[lab] for lab in cases]


def test_empty_lookupswitch() -> None:
    dflt = Label()
    a = asm([Insn(op.ICONST_0), Insn(op.LOOKUPSWITCH, keys=[], default=dflt, targets=[]), dflt,
             Insn(op.RETURN)])
    assert a.code == bytes.fromhex("03 ab 00 00 00 00 00 0b 00 00 00 00 b1")


def test_bad_switches() -> None:
    lab = Label()
    for bad in (Insn(op.TABLESWITCH, arg2=0, default=lab, targets=[]),
                Insn(op.TABLESWITCH, arg2=2147483647, default=lab, targets=[lab, lab]),
                Insn(op.LOOKUPSWITCH, keys=[2, 1], default=lab, targets=[lab, lab]),
                Insn(op.LOOKUPSWITCH, keys=[1, 1], default=lab, targets=[lab, lab]),
                Insn(op.LOOKUPSWITCH, keys=[1], default=lab, targets=[lab, lab]),
                Insn(op.LOOKUPSWITCH, keys=[1], default=None, targets=[lab])):
        with pytest.raises(ClassFileError):
            assemble([bad, lab, Insn(op.RETURN)], [])


# ------------------------------------------------------------------------------------------ branches

def test_short_branches_and_label_offsets() -> None:
    top, out = Label("top"), Label("out")
    items = [top, Insn(op.ILOAD, 0), Insn(op.IFEQ, target=out), Insn(op.IINC, 0, -1),
             Insn(op.GOTO, target=top), out, Insn(op.RETURN)]
    a = asm(items)
    assert a.code == bytes.fromhex("1a 99 00 09 84 00 ff a7 ff f9 b1")
    assert a.offsets == {top: 0, out: 10}
    assert [i.arg for i in a.instructions if i.opcode in (op.IFEQ, op.GOTO)] == [10, 0]


@pytest.mark.parametrize(("gap", "long"), [(32764, False), (32765, True)])
def test_forward_goto_boundary(gap: int, long: bool) -> None:
    # goto at 0, target at 3 + gap: displacement 32767 still fits, 32768 does not
    target = Label()
    a = asm([Insn(op.GOTO, target=target)] + [Insn(op.NOP)] * gap + [target, Insn(op.RETURN)])
    first = a.instructions[0]
    assert first.opcode == (op.GOTO_W if long else op.GOTO)
    assert first.arg == a.offsets[target] == (5 if long else 3) + gap


@pytest.mark.parametrize(("gap", "long"), [(32768, False), (32769, True)])
def test_backward_goto_boundary(gap: int, long: bool) -> None:
    # label at 0, goto at `gap`: displacement -32768 still fits, -32769 does not
    top = Label()
    a = asm([top] + [Insn(op.NOP)] * gap + [Insn(op.GOTO, target=top)])
    last = a.instructions[-1]
    assert last.offset == gap
    assert last.opcode == (op.GOTO_W if long else op.GOTO)
    assert last.arg == 0


def test_far_jsr_becomes_jsr_w() -> None:
    sub = Label("sub")
    a = asm([Insn(op.JSR, target=sub), Insn(op.RETURN)] + [Insn(op.NOP)] * 40000
            + [sub, Insn(op.ASTORE, 1), Insn(op.RET, 1)])
    assert a.instructions[0].opcode == op.JSR_W
    assert a.instructions[0].arg == a.offsets[sub] == 6 + 40000
    assert a.code[:5] == bytes([op.JSR_W]) + struct.pack(">i", 40006)


def test_explicit_goto_w_is_shortened_when_it_fits() -> None:
    lab = Label()
    a = asm([Insn(op.GOTO_W, target=lab), lab, Insn(op.RETURN)])
    assert a.code == bytes.fromhex("a7 00 03 b1")


def test_far_branches_grow_and_switch_padding_follows() -> None:
    top, before_if, far, dflt, case0 = Label("top"), Label("before_if"), Label("far"), Label("d"), Label("c0")
    items = [top, Insn(op.ILOAD, 0), before_if, Insn(op.IFEQ, target=far),
             Insn(op.ILOAD, 1),
             Insn(op.TABLESWITCH, arg2=0, default=dflt, targets=[case0, far, before_if]),
             case0] + [Insn(op.NOP)] * 33000 + [
             dflt, Insn(op.GOTO, target=before_if),
             far, Insn(op.IINC, 0, 1), Insn(op.GOTO, target=top)]
    # with short forms the switch would be at offset 5 (2 bytes of padding); after the ifeq grows by five
    # bytes it is at 10 (1 byte of padding)
    a = asm(items)
    ins = a.instructions
    names = [i.name for i in ins[:6]]
    assert names == ["iload_0", "ifne", "goto_w", "iload_1", "tableswitch", "nop"]
    assert ins[1].offset == 1 and ins[1].arg == 9  # inverted branch skips the goto_w
    assert ins[2].offset == 4 and ins[2].arg == a.offsets[far]
    assert a.offsets[before_if] == 1  # a label before an expanded instruction marks its first part
    sw = ins[4]
    assert sw.offset == 10 and sw.length == 1 + 1 + 12 + 12
    assert sw.targets == [a.offsets[case0], a.offsets[far], 1] and sw.arg == a.offsets[dflt]
    assert a.offsets[case0] == 36
    # the goto to before_if is 33000 bytes back: goto_w; the final goto to top as well
    gotos = [i for i in ins if i.opcode in (op.GOTO, op.GOTO_W)]
    assert [(g.opcode, g.arg) for g in gotos] == [(op.GOTO_W, a.offsets[far]), (op.GOTO_W, 1),
                                                  (op.GOTO_W, 0)]
    # every decoded branch target is the offset of the intended label
    decoded = decode(a.code)
    assert [i.successors_targets() for i in decoded if i.successors_targets()] == [
        [9], [a.offsets[far]], [a.offsets[dflt], a.offsets[case0], a.offsets[far], 1], [1], [0]]


@pytest.mark.parametrize("nops_before", [0, 1, 2, 3])
def test_growth_shifts_switch_alignment(nops_before: int) -> None:
    # an inverted conditional grows by 5: the switch after it moves by 5 and its padding changes
    far, dflt = Label("far"), Label("dflt")
    items = [Insn(op.NOP)] * nops_before + [Insn(op.ILOAD, 0), Insn(op.IFNULL, target=far), Insn(op.ILOAD, 1),
             Insn(op.LOOKUPSWITCH, keys=[-5, 5], default=dflt, targets=[far, dflt]),
             dflt] + [Insn(op.NOP)] * 32770 + [far, Insn(op.RETURN)]
    a = asm(items)
    sw = next(i for i in a.instructions if i.opcode == op.LOOKUPSWITCH)
    expected_at = nops_before + 1 + 8 + 1
    assert sw.offset == expected_at
    assert sw.length == 1 + EXPECTED_PAD[expected_at % 4] + 8 + 16
    assert a.instructions[nops_before + 1].name == "ifnonnull"
    assert a.instructions[nops_before + 2].arg == a.offsets[far]
    assert sw.targets == [a.offsets[far], a.offsets[dflt]]


def test_growth_cascades() -> None:
    # the goto fits (32767) until the conditional inside its range has to grow; then it must grow too
    end, far = Label("end"), Label("far")
    items: list[Insn | Label] = [Insn(op.GOTO, target=end), Insn(op.ILOAD, 0), Insn(op.IFEQ, target=far)]
    items += nops(32760) + [end, Insn(op.RETURN)] + nops(10) + [far, Insn(op.RETURN)]
    # short layout: end at 7 + 32760 = 32767 -> goto would fit; ifeq at 4 -> far at 32778, +32774: too far
    a = asm(items)
    assert [i.name for i in a.instructions[:4]] == ["goto_w", "iload_0", "ifne", "goto_w"]
    assert a.offsets[end] == 5 + 1 + 8 + 32760
    assert a.instructions[0].arg == a.offsets[end]
    assert a.instructions[3].arg == a.offsets[far] == a.offsets[end] + 1 + 10


@pytest.mark.parametrize(("gap", "long"), [(32755, False), (32756, True)])
def test_growth_up_to_the_exact_boundary(gap: int, long: bool) -> None:
    # the far ifeq grows by 5 first; the goto over it then needs exactly 32767 (still short) or 32768 bytes
    end, far = Label("end"), Label("far")
    items: list[Insn | Label] = [Insn(op.GOTO, target=end), Insn(op.ILOAD, 0), Insn(op.IFEQ, target=far)]
    items += nops(gap) + [end, Insn(op.RETURN)] + nops(10) + [far, Insn(op.RETURN)]
    a = asm(items)
    assert [i.name for i in a.instructions[:4]] == ["goto_w" if long else "goto", "iload_0", "ifne", "goto_w"]
    assert a.instructions[0].arg == a.offsets[end] == (14 if long else 12) + gap
    assert a.offsets[end] - a.instructions[0].offset == (32770 if long else 32767)


@pytest.mark.parametrize(("gap", "long"), [(32759, False), (32760, True)])
def test_backward_growth_up_to_the_exact_boundary(gap: int, long: bool) -> None:
    # the goto back to `top` spans a conditional that grows: -32768 still fits, -32769 does not
    top, far = Label("top"), Label("far")
    items = [Insn(op.NOP), top, Insn(op.ILOAD, 0), Insn(op.IFNONNULL, target=far)] + [Insn(op.NOP)] * gap
    items += [Insn(op.GOTO, target=top)] + [Insn(op.NOP)] * 100 + [far, Insn(op.RETURN)]
    a = asm(items)
    back = next(i for i in a.instructions if i.arg == 1 and i.opcode in (op.GOTO, op.GOTO_W))
    assert back.opcode == (op.GOTO_W if long else op.GOTO)
    assert back.offset - 1 == 1 + 8 + gap
    assert [i.name for i in a.instructions[1:4]] == ["iload_0", "ifnull", "goto_w"]


def test_a_branch_insn_placed_twice_is_laid_out_consistently() -> None:
    # the same Insn object at two places, only the first of which is far: the layout chooses forms per Insn
    # object, so both become long -- and the goto spanning the second one must see it long (+32769)
    far, after = Label("far"), Label("after")
    shared = Insn(op.IFEQ, target=far)
    items: list[Insn | Label] = [Insn(op.ILOAD, 0), shared, Insn(op.GOTO, target=after)]
    items += nops(32757) + [Insn(op.ILOAD, 0), shared, after, Insn(op.NOP), far, Insn(op.RETURN)]
    a = asm(items)
    names = [i.name for i in a.instructions if i.name != "nop"]
    assert names == ["iload_0", "ifne", "goto_w", "goto_w", "iload_0", "ifne", "goto_w", "return"]
    assert [i.arg for i in a.instructions if i.name == "goto_w"] == [a.offsets[far], a.offsets[after],
                                                                      a.offsets[far]]
    assert a.offsets[after] - 9 == 32757 + 5 + 1 + 8


def test_code_too_large() -> None:
    with pytest.raises(ClassFileError, match="method code too large: 65536 bytes"):
        assemble([Insn(op.NOP)] * 65535 + [Insn(op.RETURN)], [])
    assemble([Insn(op.NOP)] * 65534 + [Insn(op.RETURN)], [])  # 65535 is fine
    # too large only once a far branch grows
    far = Label()
    items: list[Insn | Label] = [Insn(op.ILOAD, 0), Insn(op.IFEQ, target=far)]
    items += [Insn(op.NOP)] * 65528 + [far, Insn(op.RETURN)]
    with pytest.raises(ClassFileError, match="method code too large: 65538 bytes"):
        assemble(items, [])


def test_label_errors() -> None:
    lab = Label("x")
    with pytest.raises(ClassFileError, match="not placed"):
        assemble([Insn(op.GOTO, target=lab)], [])
    with pytest.raises(ClassFileError, match="placed twice"):
        assemble([lab, Insn(op.NOP), lab, Insn(op.RETURN)], [])
    with pytest.raises(ClassFileError, match="end of the code"):
        assemble([Insn(op.GOTO, target=lab), lab], [])
    with pytest.raises(ClassFileError, match="neither"):
        assemble([Insn(op.NOP), "nop"], [])  # type: ignore[list-item]


def test_labels_at_the_end_and_shared_offsets() -> None:
    a1, a2, e1, e2 = Label(), Label(), Label(), Label()
    a = asm([a1, a2, Insn(op.ILOAD, 5), Insn(op.RETURN), e1, e2])
    assert a.offsets == {a1: 0, a2: 0, e1: 3, e2: 3}


# ------------------------------------------------------------------------------------------ handlers

def test_handlers_resolved_and_empty_ranges_dropped() -> None:
    s, e, h, s2, e2 = Label("s"), Label("e"), Label("h"), Label("s2"), Label("e2")
    items: list[Insn | Label] = [s, Insn(op.ALOAD, 0), Insn(op.INVOKEVIRTUAL, 3), e, Insn(op.RETURN),
             s2, e2, h, Insn(op.ASTORE, 1), Insn(op.ALOAD, 1), Insn(op.ATHROW)]
    handlers = [Handler(s, e, h, 5), Handler(s2, e2, h, 0), Handler(s, e2, h, 0)]
    a = asm(items, handlers)
    assert a.exception_table == [ExceptionEntry(0, 4, 5, 5), ExceptionEntry(0, 5, 5, 0)]
    with pytest.raises(ClassFileError):
        assemble(items, [Handler(s, Label(), h, 0)])
    with pytest.raises(ClassFileError):
        assemble(items, [Handler(e, s, h, 0)])


def test_handler_offsets_follow_growth() -> None:
    s, e, h, far = Label(), Label(), Label(), Label()
    items = [Insn(op.ILOAD, 0), s, Insn(op.IFEQ, target=far), e, Insn(op.RETURN)] + [Insn(op.NOP)] * 33000 + [
        far, h, Insn(op.RETURN)]
    a = asm(items, [Handler(s, e, h, 0)])
    assert a.exception_table == [ExceptionEntry(1, 9, 10 + 33000, 0)]


# ------------------------------------------------------------------------------------------ to_symbolic

def test_to_symbolic_canonicalises() -> None:
    code = bytes.fromhex(
        "1a"            # 0 iload_0
        "c4 15 00 05"   # 1 wide iload 5
        "13 00 07"      # 5 ldc_w 7
        "c4 84 00 01 00 02"  # 8 wide iinc 1 2
        "99 00 08"      # 14 ifeq +8 -> 22
        "c8 00 00 00 05"  # 17 goto_w +5 -> 22
        "4d"            # 22 astore_2
        "b1")           # 23 return
    insns = decode(code)
    items, labels = to_symbolic(insns, len(code), [0, 24])
    assert sorted(labels) == [0, 22, 24]
    assert items[0] is labels[0] and items[-1] is labels[24]
    body = [x for x in items if isinstance(x, Insn)]
    assert body == [Insn(op.ILOAD, 0), Insn(op.ILOAD, 5), Insn(op.LDC, 7), Insn(op.IINC, 1, 2),
                    Insn(op.IFEQ, target=labels[22]), Insn(op.GOTO, target=labels[22]), Insn(op.ASTORE, 2),
                    Insn(op.RETURN)]
    assert items.index(labels[22]) == items.index(body[6]) - 1
    a = asm(items)
    assert a.code == bytes.fromhex("1a 15 05 12 07 84 01 02 99 00 06 a7 00 03 4d b1")
    assert a.offsets[labels[22]] == 14 and a.offsets[labels[24]] == 16


def test_to_symbolic_switch_labels() -> None:
    dflt, c0 = Label(), Label()
    a = asm([Insn(op.ILOAD, 0), Insn(op.LOOKUPSWITCH, keys=[-3, 4], default=dflt, targets=[c0, dflt]),
             c0, Insn(op.RETURN), dflt, Insn(op.RETURN)])
    items, labels = to_symbolic(a.instructions, len(a.code))
    sw = items[1]
    assert isinstance(sw, Insn) and sw.keys == [-3, 4]
    assert sw.default is labels[a.offsets[dflt]] and sw.targets == [labels[a.offsets[c0]], sw.default]
    assert assemble(items, []).code == a.code


@pytest.mark.parametrize("bad", [-1, 1, 3, 6, 100])
def test_to_symbolic_rejects_offsets_inside_instructions(bad: int) -> None:
    code = bytes.fromhex("15 05 10 07 b1")  # iload 5; bipush 7; return (length 5)
    with pytest.raises(ClassFileError):
        to_symbolic(decode(code), len(code), [bad])
    with pytest.raises(ClassFileError):
        reassemble(code, [], [bad])


def test_to_symbolic_checks_code_length() -> None:
    code = bytes.fromhex("15 05 b1")
    with pytest.raises(ClassFileError):
        to_symbolic(decode(code), 4)


# ------------------------------------------------------------------------------------------ reassemble

def test_reassemble_shrinks_and_maps_offsets() -> None:
    code = bytes.fromhex(
        "c4 19 00 00"   # 0 wide aload 0
        "13 00 07"      # 4 ldc_w 7
        "57"            # 7 pop
        "c8 00 00 00 09"  # 8 goto_w +9 -> 17
        "c4 a9 00 02"   # 13 wide ret 2 (dead)
        "b1"            # 17 return
        "4c"            # 18 astore_1 (handler)
        "2b"            # 19 aload_1
        "bf")           # 20 athrow
    table = [ExceptionEntry(4, 17, 18, 9)]
    a, omap = reassemble(code, table, [19])
    assert a.code == bytes.fromhex("2a 12 07 57 a7 00 05 a9 02 b1 4c 2b bf")
    assert omap == {0: 0, 4: 1, 7: 3, 8: 4, 13: 7, 17: 9, 18: 10, 19: 11, 20: 12, 21: 13}
    assert a.exception_table == [ExceptionEntry(1, 9, 10, 9)]
    assert sorted(a.offsets.values()) == [1, 9, 10, 11]
    assert a.instructions == decode(a.code)
    # a caller that already decoded the code can pass the instructions (and keeps them unchanged)
    insns = decode(code)
    a2, omap2 = reassemble(code, table, [19], insns)
    assert (a2.code, a2.exception_table, omap2) == (a.code, a.exception_table, omap)
    assert insns == decode(code)


def test_reassemble_keeps_a_needed_goto_w() -> None:
    # re-encoding never lengthens decoded code, except that a goto_w that is really needed stays one: the
    # layout has to grow it back from the short form it starts with
    far = Label()
    a0 = asm([Insn(op.ILOAD, 0), Insn(op.IFEQ, target=far)] + [Insn(op.NOP)] * 40000 + [far, Insn(op.RETURN)])
    assert [i.name for i in a0.instructions[:3]] == ["iload_0", "ifne", "goto_w"]
    a, omap = reassemble(a0.code, [ExceptionEntry(1, 9, len(a0.code) - 1, 0)])
    assert a.code == a0.code
    assert omap == {**{i.offset: i.offset for i in a0.instructions}, len(a0.code): len(a0.code)}
    assert a.exception_table == [ExceptionEntry(1, 9, len(a0.code) - 1, 0)]


def test_reassemble_expands_a_branch_that_a_realigned_switch_pushes_out_of_range() -> None:
    # wide iload 0 shrinks by 3 bytes, which moves the tableswitch from 4k+3 (no padding) to 4k (3 bytes):
    # the ifeq spanning it, at exactly +32767 before, no longer fits and becomes ifne +8; goto_w. The
    # switch then sits at 9 (2 bytes of padding).
    nops = 32747
    code = (bytes.fromhex("c4 15 00 00" "99 7f ff" "aa")  # 0 wide iload 0; 4 ifeq +32767; 7 tableswitch
            + struct.pack(">iiii", 17, 0, 0, 17) + bytes(nops) + b"\xb1")  # -> 24; nops; 32771 return
    assert decode(code)[1].arg == 32771
    a, omap = reassemble(code, [ExceptionEntry(7, 32771, 32771, 0)], [24])
    assert [i.name for i in a.instructions[:5]] == ["iload_0", "ifne", "goto_w", "tableswitch", "nop"]
    assert a.code[:9] == bytes.fromhex("1a 9a 00 08 c8 00 00 80 03")  # goto_w at 4 -> 28 + nops
    sw = a.instructions[3]
    assert (sw.offset, sw.length, sw.arg, sw.targets) == (9, 19, 28, [28])
    assert omap[0] == 0 and omap[4] == 1 and omap[7] == 9 and omap[24] == 28
    assert omap[32771] == 28 + nops and omap[len(code)] == len(a.code) == 29 + nops
    assert all(omap[24 + k] == 28 + k for k in range(nops))
    assert len(omap) == 4 + nops + 1
    assert a.exception_table == [ExceptionEntry(9, 28 + nops, 28 + nops, 0)]


# ------------------------------------------------------------------------------------------ real JDK code

@pytest.fixture(scope="session")
def jdk_classes(java_home: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """java.base's java/lang and java/util classes, extracted by the JDK's own jimage tool."""
    tool = java_home / "bin" / "jimage"
    if not tool.is_file():
        found = shutil.which("jimage")
        if found is None:
            pytest.fail(f"no jimage tool in {java_home / 'bin'} or on PATH")
        assert found is not None
        tool = Path(found)
    modules = java_home / "lib" / "modules"
    if not modules.is_file():
        pytest.fail(f"{modules} not found: not a JDK with a runtime image")
    out = tmp_path_factory.mktemp("jdk-assembler")
    subprocess.run([str(tool), "extract", "--dir", str(out), "--include",
                    "regex:/java.base/java/(lang|util)/.*", str(modules)],
                   check=True, capture_output=True, timeout=600)
    classes = sorted(out.rglob("*.class"))
    if len(classes) < 300:
        pytest.fail(f"jimage extracted only {len(classes)} classes from {modules}")
    return classes


@pytest.fixture(scope="session")
def jdk_methods(jdk_classes: list[Path]) -> list[tuple[str, CodeAttribute]]:
    methods = []
    for path in jdk_classes:
        cf = read_class(path.read_bytes())
        for m in cf.methods:
            attr = m.code_attribute()
            if attr is not None:
                methods.append((f"{cf.name}.{m.name}{m.descriptor}", read_code(attr.data, cf.pool)))
    return methods


NON_CANONICAL = set(op.SHORT_FORMS) | {op.LDC_W, op.GOTO_W, op.JSR_W, op.WIDE}


@pytest.mark.slow  # the slow tier: 5 s of CPU, over the fast tier's share (docs/ci.md, session 16)
def test_jdk_round_trip_is_byte_identical(jdk_methods: list[tuple[str, CodeAttribute]]) -> None:
    assert len(jdk_methods) > 5000
    mismatches = []
    for where, ca in jdk_methods:
        old = decode(ca.code)
        items, _ = to_symbolic(old, len(ca.code))
        assert not any(isinstance(x, Insn) and x.opcode in NON_CANONICAL for x in items), where
        a, omap = reassemble(ca.code, ca.exception_table)
        if a.code != ca.code or a.exception_table != ca.exception_table:
            mismatches.append(where)
            continue
        assert a.instructions == old, where
        assert omap == {**{i.offset: i.offset for i in old}, len(ca.code): len(ca.code)}, where
    assert mismatches == []


def _pessimise(insns: list[Instruction], table: list[ExceptionEntry]
               ) -> tuple[bytes, list[ExceptionEntry], dict[int, int]] | None:
    """Re-encode with the longest forms (wide locals, ldc_w, goto_w, jsr_w); None if a short branch overflows."""
    new: list[Instruction] = []
    where: dict[int, int] = {}
    pos = 0
    for i in insns:
        opcode, arg, wide = i.opcode, i.arg, i.wide
        if opcode in op.SHORT_FORMS:
            opcode, arg = op.SHORT_FORMS[opcode]
            wide = True
        elif op.OPERAND_OF[opcode] is op.Operand.LOCAL or opcode == op.IINC:
            wide = True
        elif opcode == op.LDC:
            opcode = op.LDC_W
        elif opcode in (op.GOTO, op.JSR):
            opcode = op.GOTO_W if opcode == op.GOTO else op.JSR_W
        n = Instruction(pos, opcode, arg, i.arg2, wide, i.keys, i.targets)
        ncases = 0 if i.targets is None else len(i.targets)
        if wide:
            n.length = 6 if opcode == op.IINC else 4
        elif opcode == op.TABLESWITCH:
            n.length = 1 + (-(pos + 1)) % 4 + 12 + 4 * ncases
        elif opcode == op.LOOKUPSWITCH:
            n.length = 1 + (-(pos + 1)) % 4 + 8 + 8 * ncases
        else:
            n.length = op.OPCODES[opcode].size
        where[i.offset] = pos
        pos += n.length
        new.append(n)
    end = insns[-1].offset + insns[-1].length
    where[end] = pos
    for n in new:
        if op.OPERAND_OF[n.opcode] in (op.Operand.BRANCH2, op.Operand.BRANCH4):
            n.arg = where[n.arg]
            if op.OPERAND_OF[n.opcode] is op.Operand.BRANCH2 and not -32768 <= n.arg - n.offset <= 32767:
                return None
        elif n.targets is not None:
            n.arg = where[n.arg]
            n.targets = [where[t] for t in n.targets]
    if pos > 65535:
        return None
    return encode(new), [ExceptionEntry(where[e.start], where[e.end], where[e.handler], e.catch_type)
                         for e in table], where


def test_jdk_code_in_long_forms_reassembles_to_the_original(
        jdk_methods: list[tuple[str, CodeAttribute]]) -> None:
    tested = 0
    for where, ca in jdk_methods[::3]:
        old = decode(ca.code)
        p = _pessimise(old, ca.exception_table)
        if p is None:
            continue
        long_code, long_table, orig_to_long = p
        if long_code == ca.code:
            continue
        a, omap = reassemble(long_code, long_table, orig_to_long.values())
        assert a.code == ca.code, where
        assert a.exception_table == ca.exception_table, where
        assert omap == {long: orig for orig, long in orig_to_long.items()}, where
        tested += 1
    assert tested > 1000
