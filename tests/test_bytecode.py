"""Instruction decoding/encoding per opcode family, and the constant pool's tags, interning and text codec."""
from __future__ import annotations

import struct

import pytest

from peggy_jvm.classfile import bytecode
from peggy_jvm.classfile import opcodes
from peggy_jvm.classfile.bytecode import Instruction, decode, encode
from peggy_jvm.classfile.constpool import ConstantPool, decode_mutf8, encode_entry, encode_mutf8
from peggy_jvm.classfile.errors import ClassFileError
from peggy_jvm.classfile.opcodes import OPCODES, OPERAND_OF, Operand


def one(code: bytes) -> Instruction:
    insns = decode(code)
    assert len(insns) == 1
    assert encode(insns) == code
    return insns[0]


@pytest.mark.parametrize("opcode", sorted(o for o, i in OPCODES.items() if i.operand is Operand.NONE))
def test_every_operandless_opcode_round_trips(opcode):
    i = one(bytes([opcode]))
    assert (i.opcode, i.length) == (opcode, 1)


def test_named_opcode_constants_agree_with_the_table():
    """opcodes.py spells some constants out (for the type checker) after setting all of them from the table: a
    wrong number there would silently win."""
    named = {n: v for n, v in vars(opcodes).items()
             if n.isupper() and isinstance(v, int) and n.lower() in opcodes.BY_NAME}
    assert len(named) == len(opcodes.BY_NAME)
    for name, value in named.items():
        assert value == opcodes.BY_NAME[name.lower()].opcode, name


def test_signed_immediates():
    assert one(b"\x10\x80").arg == -128
    assert one(b"\x10\x7f").arg == 127
    assert one(b"\x11\x80\x00").arg == -32768
    assert one(b"\x11\x7f\xff").arg == 32767


def test_locals_and_iinc_plain_and_wide():
    assert (one(b"\x15\xff").arg, one(b"\x15\xff").wide) == (255, False)
    w = one(b"\xc4\x15\x01\x2c")  # wide iload 300
    assert (w.opcode, w.arg, w.wide, w.length) == (0x15, 300, True, 4)
    i = one(b"\x84\x02\xff")  # iinc 2 -1: the constant is signed
    assert (i.arg, i.arg2) == (2, -1)
    wi = one(b"\xc4\x84\x01\x2c\x80\x00")  # wide iinc 300 -32768
    assert (wi.arg, wi.arg2, wi.wide, wi.length) == (300, -32768, True, 6)
    r = one(b"\xc4\xa9\x01\x00")  # wide ret 256
    assert (r.opcode, r.arg, r.wide) == (0xA9, 256, True)


def test_wide_of_a_non_local_opcode_is_rejected():
    with pytest.raises(ClassFileError, match="wide at offset 0"):
        decode(b"\xc4\x60")


def test_pool_operands():
    assert one(b"\x12\x07").arg == 7  # ldc
    assert one(b"\x13\x01\x00").arg == 256  # ldc_w
    assert one(b"\xb6\xab\xcd").arg == 0xABCD  # invokevirtual
    ii = one(b"\xb9\x00\x05\x03\x00")  # invokeinterface #5 count 3
    assert (ii.arg, ii.arg2) == (5, 3)
    assert one(b"\xba\x00\x09\x00\x00").arg == 9  # invokedynamic
    m = one(b"\xc5\x00\x04\x03")  # multianewarray #4 dims 3
    assert (m.arg, m.arg2) == (4, 3)
    assert one(b"\xbc\x0a").arg == 10  # newarray int


def test_invokedynamic_and_invokeinterface_reserved_bytes_must_be_zero():
    with pytest.raises(ClassFileError, match="invokedynamic"):
        decode(b"\xba\x00\x09\x00\x01")
    with pytest.raises(ClassFileError, match="invokeinterface"):
        decode(b"\xb9\x00\x05\x03\x01")


def test_branches_are_absolute_and_signed():
    code = b"\x00" * 5 + b"\xa7\xff\xfb"  # goto -5 at offset 5 -> 0
    insns = decode(code)
    assert insns[-1].arg == 0 and encode(insns) == code
    gw = decode(b"\xc8\x00\x00\x00\x05" + b"\x00")  # goto_w +5 -> offset 5
    assert gw[0].arg == 5 and gw[0].length == 5


def test_branch_into_the_middle_of_an_instruction_is_rejected():
    with pytest.raises(ClassFileError, match="not an instruction start"):
        decode(b"\xa7\x00\x04\x11\x00\x01\xb1")  # goto 4, but 4 is inside sipush


@pytest.mark.parametrize("pad", range(4))
def test_switch_padding_at_every_alignment(pad):
    pos = pad  # nops before the switch
    body_t = struct.pack(">iii", 0, -1, 1) + struct.pack(">3i", 0, 0, 0)
    tswitch = bytes([0xAA]) + bytes(3 - (pos & 3)) + body_t
    insns = decode(b"\x00" * pad + tswitch)
    t = insns[-1]
    assert (t.arg, t.arg2, t.targets) == (pos, -1, [pos, pos, pos])
    assert encode(insns) == b"\x00" * pad + tswitch
    assert t.length == bytecode.instruction_length(0xAA, pos, ncases=3)
    body_l = struct.pack(">ii", 0, 2) + struct.pack(">iiii", -5, 0, 1 << 30, 0)
    lswitch = bytes([0xAB]) + bytes(3 - (pos & 3)) + body_l
    insns = decode(b"\x00" * pad + lswitch)
    lk = insns[-1]
    assert lk.keys == [-5, 1 << 30] and lk.targets == [pos, pos]
    assert encode(insns) == b"\x00" * pad + lswitch


def test_lookupswitch_keys_must_be_sorted():
    body = struct.pack(">ii", 0, 2) + struct.pack(">iiii", 5, 0, 1, 0)
    with pytest.raises(ClassFileError, match="not sorted"):
        decode(bytes([0xAB, 0, 0, 0]) + body)


@pytest.mark.parametrize("bad", [0xCB, 0xD0, 0xFE, 0xFF])
def test_invalid_opcodes_are_rejected_with_their_offset(bad):
    with pytest.raises(ClassFileError, match=f"invalid opcode 0x{bad:02x} at offset 1"):
        decode(bytes([0x00, bad]))


@pytest.mark.parametrize("code", [b"\x11\x00", b"\xc4\x15\x01", b"\xb9\x00", b"\xaa\x00\x00", b"\xc8\x00"])
def test_truncated_operands_are_rejected(code):
    with pytest.raises(ClassFileError, match="truncated|past the end"):
        decode(code)


def test_every_opcode_has_a_known_operand_shape():
    assert len(OPCODES) == 202
    assert all(OPERAND_OF[o] is not None for o in range(0xCA))
    assert all(OPERAND_OF[o] is None for o in range(0xCA, 0x100))


# -- constant pool --------------------------------------------------------------------------------------------
def _pool_bytes(entries: list[tuple]) -> bytes:
    count = 1 + sum(2 if e[0] in (5, 6) else 1 for e in entries)
    return count.to_bytes(2, "big") + b"".join(encode_entry(e) for e in entries)


def test_every_constant_tag_parses_and_encodes_identically():
    entries = [(1, "A"), (1, "m"), (1, "()V"), (7, 1), (12, 2, 3), (3, -7), (4, 0x7FC00001), (5, -(1 << 63)),
               (6, 0xFFF8000000000001), (8, 1), (9, 4, 5), (10, 4, 5), (11, 4, 5), (15, 6, 14), (16, 3),
               (17, 0, 5), (18, 0, 5), (19, 1), (20, 1)]
    data = _pool_bytes(entries)
    pool, end = ConstantPool.parse(data, 0)
    assert end == len(data)
    assert pool.to_bytes() == data and pool.encode_all() == data[2:]
    assert pool.entry(7) == (4, 0x7FC00001)  # NaN payload kept bit-exact
    assert pool.entries[9] is None and pool.entries[11] is None  # the second slots of long and double
    assert pool.describe(18) == "Dynamic #0:m:()V" and pool.describe(20) == "Module A"
    assert pool.member_ref(14).name == "m" and pool.describe(16).startswith("MethodHandle kind=6")


@pytest.mark.parametrize("entries,message", [
    ([(7, 9)], "bad index 9"), ([(1, "x"), (8, 2)], "refers to bad index 2"), ([(1, "x"), (12, 1, 3)], "bad index"),
    ([(1, "a"), (15, 1, 1)], "MethodHandle refers to bad index"), ([(1, "a"), (15, 10, 1)], "bad MethodHandle kind")])
def test_bad_constant_references_are_rejected(entries, message):
    with pytest.raises(ClassFileError, match=message):
        ConstantPool.parse(_pool_bytes(entries), 0)


def test_unknown_tag_and_long_overrunning_the_count():
    with pytest.raises(ClassFileError, match="unknown constant tag 2"):
        ConstantPool.parse(b"\x00\x02\x02\x00\x00", 0)
    with pytest.raises(ClassFileError, match="overruns"):
        ConstantPool.parse(b"\x00\x02" + encode_entry((5, 1)), 0)


def test_interning_reuses_entries_and_appends_new_ones_after_the_original_bytes():
    data = _pool_bytes([(1, "java/lang/Object"), (7, 1)])
    pool, _ = ConstantPool.parse(data, 0)
    assert pool.add_class("java/lang/Object") == 2
    assert pool.to_bytes() == data
    idx = pool.add_class("Foo")
    assert idx == 4 and pool.class_name(idx) == "Foo"
    again, _ = ConstantPool.parse(pool.to_bytes(), 0)
    assert again.class_name(4) == "Foo" and again.class_name(2) == "java/lang/Object"
    assert pool.add((5, 9)) == 5 and len(pool) == 7  # a long takes two slots


@pytest.mark.parametrize("text", ["", "plain", "nul\x00inside", "é ü ß", "\u20ac\uffff", "\U0001F600 emoji"])
def test_modified_utf8_round_trips(text):
    data = encode_mutf8(text)
    assert b"\x00" not in data
    back = decode_mutf8(data)
    # characters above U+FFFF come back as the surrogate pair Java stores
    assert back.encode("utf-16-le", "surrogatepass") == text.encode("utf-16-le")
    assert encode_mutf8(back) == data


def test_supplementary_characters_are_six_bytes():
    assert encode_mutf8("\U0001F600") == bytes.fromhex("eda0bdedb880")
    assert encode_mutf8("\x00") == b"\xc0\x80"
