"""Decoding and encoding of a method's bytecode, instruction by instruction, exactly as written.

Inputs: the ``code`` bytes of a Code attribute. Output: a list of :class:`Instruction` (offset, opcode as
written, operands with branch targets made absolute), and back. This layer keeps the encoding choices the
file made (``iload_0`` vs ``iload 0``, ``wide``, ``ldc_w``, ``goto_w``) so that decode -> encode is the
identity; choosing forms is the assembler's job (:mod:`.assembler`).

Invariants: ``encode(decode(code)) == code`` for all valid code (switch padding is written as zeros, as the
JVM requires); every branch target of a decoded instruction is the offset of an instruction; an invalid opcode,
a truncated operand or a branch into the middle of an instruction raises :class:`ClassFileError` with the
offset.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

from .errors import ClassFileError
from .opcodes import NAME_OF, OPERAND_OF, Operand

_S2 = struct.Struct(">h")
_U2 = struct.Struct(">H")
_S4 = struct.Struct(">i")


@dataclass(slots=True)
class Instruction:
    """One decoded instruction.

    ``arg`` is the main operand (local index, pool index, pushed constant, absolute branch target, newarray
    type, switch default target); ``arg2`` the second (iinc constant, invokeinterface count, multianewarray
    dimensions, tableswitch low); ``keys``/``targets`` are the switch cases (targets absolute).
    """

    offset: int
    opcode: int
    arg: int = 0
    arg2: int = 0
    wide: bool = False
    keys: list[int] | None = None
    targets: list[int] | None = None
    length: int = 1

    @property
    def name(self) -> str:
        return NAME_OF[self.opcode] or f"opcode {self.opcode}"  # decode refuses opcodes without a name

    def successors_targets(self) -> list[int]:
        """Absolute branch targets (switch default first), empty for non-branches."""
        kind = OPERAND_OF[self.opcode]
        if kind is Operand.BRANCH2 or kind is Operand.BRANCH4:
            return [self.arg]
        if self.targets is not None:
            return [self.arg, *self.targets]
        return []


def decode(code: bytes) -> list[Instruction]:
    """Decode ``code`` into instructions; raises ClassFileError on malformed code."""
    out: list[Instruction] = []
    append = out.append
    n = len(code)
    pos = 0
    try:
        while pos < n:
            op = code[pos]
            kind = OPERAND_OF[op]
            if kind is Operand.NONE:
                append(Instruction(pos, op))
                pos += 1
            elif kind is Operand.LOCAL or kind is Operand.CP1 or kind is Operand.NEWARRAY:
                append(Instruction(pos, op, code[pos + 1], length=2))
                pos += 2
            elif kind is Operand.CP2:
                append(Instruction(pos, op, (code[pos + 1] << 8) | code[pos + 2], length=3))
                pos += 3
            elif kind is Operand.BRANCH2:
                append(Instruction(pos, op, pos + _S2.unpack_from(code, pos + 1)[0], length=3))
                pos += 3
            elif kind is Operand.S1:
                b = code[pos + 1]
                append(Instruction(pos, op, b - 256 if b > 127 else b, length=2))
                pos += 2
            elif kind is Operand.S2:
                append(Instruction(pos, op, _S2.unpack_from(code, pos + 1)[0], length=3))
                pos += 3
            elif kind is Operand.IINC:
                c = code[pos + 2]
                append(Instruction(pos, op, code[pos + 1], c - 256 if c > 127 else c, length=3))
                pos += 3
            elif kind is Operand.INVOKEINTERFACE:
                if code[pos + 4] != 0:
                    raise ClassFileError(f"invokeinterface at offset {pos}: fourth operand byte is not zero")
                append(Instruction(pos, op, _U2.unpack_from(code, pos + 1)[0], code[pos + 3], length=5))
                pos += 5
            elif kind is Operand.INVOKEDYNAMIC:
                if code[pos + 3] != 0 or code[pos + 4] != 0:
                    raise ClassFileError(f"invokedynamic at offset {pos}: operand bytes 3-4 are not zero")
                append(Instruction(pos, op, _U2.unpack_from(code, pos + 1)[0], length=5))
                pos += 5
            elif kind is Operand.MULTIANEWARRAY:
                append(Instruction(pos, op, _U2.unpack_from(code, pos + 1)[0], code[pos + 3], length=4))
                pos += 4
            elif kind is Operand.BRANCH4:
                append(Instruction(pos, op, pos + _S4.unpack_from(code, pos + 1)[0], length=5))
                pos += 5
            elif kind is Operand.TABLESWITCH:
                p = (pos + 4) & ~3
                default, low, high = struct.unpack_from(">iii", code, p)
                if high < low or high - low >= 65536:
                    raise ClassFileError(f"tableswitch at offset {pos}: bad range [{low}, {high}]")
                count = high - low + 1
                offs = struct.unpack_from(f">{count}i", code, p + 12)
                end = p + 12 + 4 * count
                append(Instruction(pos, op, pos + default, low, targets=[pos + o for o in offs],
                                   length=end - pos))
                pos = end
            elif kind is Operand.LOOKUPSWITCH:
                p = (pos + 4) & ~3
                default, npairs = struct.unpack_from(">ii", code, p)
                if npairs < 0 or npairs >= 65536:
                    raise ClassFileError(f"lookupswitch at offset {pos}: bad npairs {npairs}")
                pairs = struct.unpack_from(f">{2 * npairs}i", code, p + 8)
                keys = list(pairs[0::2])
                if any(a >= b for a, b in zip(keys, keys[1:])):
                    raise ClassFileError(f"lookupswitch at offset {pos}: keys not sorted")
                end = p + 8 + 8 * npairs
                append(Instruction(pos, op, pos + default, keys=keys, targets=[pos + o for o in pairs[1::2]],
                                   length=end - pos))
                pos = end
            elif kind is Operand.WIDE:
                inner = code[pos + 1]
                ik = OPERAND_OF[inner]
                if ik is Operand.IINC:
                    idx, c = struct.unpack_from(">Hh", code, pos + 2)
                    append(Instruction(pos, inner, idx, c, wide=True, length=6))
                    pos += 6
                elif ik is Operand.LOCAL:
                    append(Instruction(pos, inner, _U2.unpack_from(code, pos + 2)[0], wide=True, length=4))
                    pos += 4
                else:
                    raise ClassFileError(f"wide at offset {pos} modifies opcode 0x{inner:02x}, which it cannot")
            else:
                raise ClassFileError(f"invalid opcode 0x{op:02x} at offset {pos}")
    except (struct.error, IndexError):
        raise ClassFileError(f"code truncated in the instruction at offset {pos}") from None
    if pos != n:
        raise ClassFileError(f"last instruction at offset {out[-1].offset} runs past the end of the code")
    _check_targets(out, n)
    return out


def _check_targets(insns: list[Instruction], n: int) -> None:
    starts = {i.offset for i in insns}
    for i in insns:
        kind = OPERAND_OF[i.opcode]
        if kind is Operand.BRANCH2 or kind is Operand.BRANCH4:
            if i.arg not in starts:
                raise ClassFileError(f"{i.name} at offset {i.offset} jumps to {i.arg}, not an instruction start")
        elif i.targets is not None:
            for t in (i.arg, *i.targets):
                if t not in starts:
                    raise ClassFileError(f"{i.name} at offset {i.offset} jumps to {t}, not an instruction start")


def encode(insns: list[Instruction]) -> bytes:
    """Encode instructions at their recorded offsets; offsets must be consistent with the lengths."""
    out = bytearray()
    for i in insns:
        pos = len(out)
        if pos != i.offset:
            raise ClassFileError(f"instruction {i.name} recorded at offset {i.offset} but encoded at {pos}")
        op = i.opcode
        kind = OPERAND_OF[op]
        if i.wide:
            out.append(0xC4)
            out.append(op)
            out += _U2.pack(i.arg)
            if kind is Operand.IINC:
                out += _S2.pack(i.arg2)
            continue
        out.append(op)
        if kind is Operand.NONE:
            pass
        elif kind is Operand.LOCAL or kind is Operand.CP1 or kind is Operand.NEWARRAY:
            out.append(i.arg)
        elif kind is Operand.CP2:
            out += _U2.pack(i.arg)
        elif kind is Operand.BRANCH2:
            out += _S2.pack(i.arg - pos)
        elif kind is Operand.S1:
            out.append(i.arg & 0xFF)
        elif kind is Operand.S2:
            out += _S2.pack(i.arg)
        elif kind is Operand.IINC:
            out.append(i.arg)
            out.append(i.arg2 & 0xFF)
        elif kind is Operand.INVOKEINTERFACE:
            out += _U2.pack(i.arg)
            out.append(i.arg2)
            out.append(0)
        elif kind is Operand.INVOKEDYNAMIC:
            out += _U2.pack(i.arg)
            out += b"\0\0"
        elif kind is Operand.MULTIANEWARRAY:
            out += _U2.pack(i.arg)
            out.append(i.arg2)
        elif kind is Operand.BRANCH4:
            out += _S4.pack(i.arg - pos)
        elif kind is Operand.TABLESWITCH:
            out += bytes(3 - (pos & 3))
            assert i.targets is not None
            out += struct.pack(">iii", i.arg - pos, i.arg2, i.arg2 + len(i.targets) - 1)
            out += struct.pack(f">{len(i.targets)}i", *(t - pos for t in i.targets))
        elif kind is Operand.LOOKUPSWITCH:
            out += bytes(3 - (pos & 3))
            assert i.targets is not None and i.keys is not None
            out += struct.pack(">ii", i.arg - pos, len(i.keys))
            for k, t in zip(i.keys, i.targets):
                out += struct.pack(">ii", k, t - pos)
        else:
            raise ClassFileError(f"cannot encode opcode 0x{op:02x}")
    return bytes(out)


def instruction_length(opcode: int, offset: int, wide: bool = False, ncases: int = 0) -> int:
    """Byte length of an instruction at ``offset`` (switches: ``ncases`` entries; padding depends on offset)."""
    kind = OPERAND_OF[opcode]
    if wide:
        return 6 if kind is Operand.IINC else 4
    if kind is Operand.TABLESWITCH:
        return 1 + (3 - (offset & 3)) + 12 + 4 * ncases
    if kind is Operand.LOOKUPSWITCH:
        return 1 + (3 - (offset & 3)) + 8 + 8 * ncases
    from .opcodes import OPCODES

    return OPCODES[opcode].size
